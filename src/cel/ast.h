#pragma once
// The syntax tree of a CEL expression, as the parser builds it (macros already expanded into
// comprehension nodes) and the checker annotates it (types, resolved operations, overloads).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/semver.h"
#include "cel/quantity_value.h"
#include "cel/types.h"
#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace kubesched::cel {

struct Overload;

enum class NodeKind : uint8_t {
  kConst,          // constant: literal or folded value
  kIdent,          // name
  kSelect,         // children[0].name; test_only for has()
  kIndex,          // children[0][children[1]]
  kCall,           // name(children...) or children[0].name(children[1...]) when member
  kList,           // [children...]
  kMap,            // {children[0]: children[1], ...}
  kComprehension,  // macros: children = {range, predicate or transform, [filter]}
  kBind,           // cel.bind(name, children[0], children[1])
};

enum class ComprehensionKind : uint8_t { kAll, kExists, kExistsOne, kMap, kMapFilter, kFilter };

//! A literal's value. Bytes are kept apart from strings.
struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};
struct NullValue {
  bool operator==(const NullValue&) const = default;
};
using Constant = std::variant<std::monostate, NullValue, bool, int64_t, uint64_t, double, std::string, Bytes>;

//! What a node does once checked; the evaluator switches on this.
enum class Op : uint8_t {
  kNone,
  kAnd,
  kOr,
  kNot,
  kNotStrictlyFalse,
  kConditional,
  kEquals,
  kNotEquals,
  kLess,
  kLessEquals,
  kGreater,
  kGreaterEquals,
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kModulo,
  kNegate,
  kIn,
  kIndex,
  kSize,
  kDyn,
  kFunction,  // a library function: node.overloads
  // Fields of the `device` variable, resolved once rather than compared by name per evaluation.
  kDeviceDriver,
  kDeviceAttributes,
  kDeviceCapacity,
  kDeviceAllowMultipleAllocations,
};

struct Node {
  NodeKind kind = NodeKind::kConst;
  //! Byte offset in the expression, for errors (cel-go reports a call at its operator or '(').
  size_t offset = 0;
  //! Identifier, field, function name, or comprehension/bind variable.
  std::string name;
  std::vector<std::unique_ptr<Node>> children;
  Constant constant;
  bool member = false;     // kCall: children[0] is the receiver
  bool test_only = false;  // kSelect inside has()
  ComprehensionKind comprehension = ComprehensionKind::kAll;
  //! The height of the subtree (1 for a leaf), bounded by the parser's recursion limit.
  int depth = 1;

  // Filled in by the checker.
  Type type;
  //! kConst: the constant as a runtime value (strings view `constant`).
  Value value;
  Op op = Op::kNone;
  std::vector<const Overload*> overloads;
  //! The fixed part of the node's runtime cost (cel-go's units): 1 per identifier and qualifier,
  //! 10 per list literal, 30 per map literal; calls add their size-dependent part at runtime.
  int64_t cost = 0;
  //! Set when the node is a variable of an enclosing comprehension or bind (its slot), -1 else.
  int slot = -1;
  //! A constant regular expression compiled once (matches, find, findAll).
  std::shared_ptr<const re2::RE2> regex;
  //! quantity() or semver() of a constant string, parsed once at compile time.
  std::optional<QuantityValue> folded_quantity;
  std::shared_ptr<const api::SemVer> folded_semver;
};

}  // namespace kubesched::cel
