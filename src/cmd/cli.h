#pragma once
// Command-line usage errors in kubectl's style: one line
//   error: <flag>: <what was wrong> (<what is expected>)
// then `Run 'kubesched <command> --help' for usage.`, and exit code 2. The validators here word
// their failures for that line; ParseCommandLine turns every CLI11 parse error into it (help
// output is left as CLI11 prints it).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kubesched::cmd {

//! The exit code of a usage error (and of any other bad input).
inline constexpr int kExitUsage = 2;

//! Accepts one of `values`: `unsupported value "yaml" (expected table, wide or json)`. `help` is
//! what --help shows after the option's type ("" for nothing).
CLI::Validator OneOf(std::vector<std::string> values, std::string help = "");
//! Accepts a decimal integer in [min, max]; `expected` describes it for the error, e.g.
//! `invalid value "99" (expected an integer from 0 to 10)`. `help` as for OneOf.
CLI::Validator IntegerInRange(int64_t min, int64_t max, std::string expected, std::string help = "");
//! Accepts a decimal integer in [0, 2^64).
CLI::Validator NonNegativeInteger();

//! Parses the command line into `app`. Returns nullopt when the program should go on, else the
//! exit code to return: 0 after printing help (to `out`), kExitUsage after printing a usage
//! error and the hint (to `err`).
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err);

//! The usage hint for `command` (the subcommand, or null/the root for the program itself):
//! "Run 'kubesched simulate --help' for usage."
std::string UsageHint(const CLI::App* command);

}  // namespace kubesched::cmd
