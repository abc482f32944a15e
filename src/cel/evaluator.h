#pragma once
// The tree-walking evaluator of checked expressions, with cel-go's runtime cost accounting and
// error semantics (strict calls; && and || absorb an error when the other side decides).

#include "cel/ast.h"
#include "cel/value.h"

namespace kubesched::cel {

//! Evaluates a checked node. Errors are values (ValueKind::kError); once the cost limit is
//! passed every step returns ctx.CancelledError().
Value Eval(const Node& node, EvalContext& ctx);

}  // namespace kubesched::cel
