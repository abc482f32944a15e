#pragma once
// The CEL parser: a recursive-descent parser over the grammar of cel-spec langdef.md, building the
// syntax tree with byte offsets and expanding the macros (has, all, exists, exists_one, map,
// filter, cel.bind) as cel-go does. Errors use cel-go's wording ("Syntax error: mismatched input
// ...", "argument must be a simple name", "max recursion depth exceeded").

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cel/ast.h"

namespace kubesched::cel {

//! cel-go's default parser limit on the nesting of expressions.
inline constexpr int kMaxRecursionDepth = 250;

struct SyntaxError {
  std::string message;
  size_t offset = 0;
};

struct ParseResult {
  std::unique_ptr<Node> root;  // null when error is set
  std::optional<SyntaxError> error;
};

ParseResult Parse(std::string_view expression);

}  // namespace kubesched::cel
