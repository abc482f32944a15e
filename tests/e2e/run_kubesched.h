#pragma once
// Runs the built kubesched binary and captures its output, for end-to-end tests.

#include <string>
#include <vector>

namespace kubesched::e2e {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

//! Path of a file in the source tree (KUBESCHED_SOURCE_DIR).
std::string SourcePath(const std::string& relative);
//! The contents of a file in the source tree; empty when it cannot be read.
std::string ReadSource(const std::string& relative);
//! Path of the built kubesched binary (in KUBESCHED_BINARY_DIR).
std::string KubeschedPath();
//! Runs `kubesched args...` (the binary in KUBESCHED_BINARY_DIR).
RunResult RunKubesched(const std::vector<std::string>& args);
//! The same, with `stdin_text` on standard input.
RunResult RunKubeschedWithInput(const std::vector<std::string>& args, const std::string& stdin_text);
//! Runs any program (argv[0], looked up in PATH) with `stdin_text` on standard input.
RunResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_text = "");
//! Writes text to a fresh temporary file and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& text);
//! The contents of a gzip file (through gzip -dc); empty when it cannot be read.
std::string Gunzip(const std::string& path);

}  // namespace kubesched::e2e
