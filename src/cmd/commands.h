#pragma once
// The kubesched command line: `kubesched simulate`, `kubesched version`, ...

namespace kubesched::cmd {

//! Runs the CLI; returns the process exit code (0 ok, 1 runtime failure, 2 bad input or usage).
int Main(int argc, char** argv);

}  // namespace kubesched::cmd
