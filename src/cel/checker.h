#pragma once
// The type checker of the DRA selector environment: resolves identifiers (the `device` variable,
// macro and cel.bind variables), field selections, operators and library functions, giving every
// node its type and the operation the evaluator runs. Errors use cel-go's wording ("undeclared
// reference to 'foo' (in container '')", "found no matching overload for '_+_' applied to
// '(int, string)'", "undefined field 'foo'").

#include <optional>
#include <string>

#include "cel/ast.h"

namespace kubesched::cel {

struct CheckError {
  std::string message;
  size_t offset = 0;
};

struct CheckResult {
  std::optional<CheckError> error;
  //! How many variable slots evaluation needs (the deepest nesting of macros and binds).
  int slots = 0;
};

//! Checks `root` in place (types, operations, folded constants, compiled regular expressions).
CheckResult Check(Node& root);

}  // namespace kubesched::cel
