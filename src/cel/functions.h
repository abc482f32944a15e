#pragma once
// The functions of the DRA selector environment besides CEL's operators: size and the string
// functions of the standard library, type conversions, cel-go's strings extension (version 2, as
// Kubernetes' base environment has it), Kubernetes' regex (find, findAll), quantity and semver
// libraries. Each overload has cel-go's name, signature and runtime cost.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cel/ast.h"
#include "cel/types.h"
#include "cel/value.h"

namespace kubesched::cel {

struct Overload {
  std::string_view id;
  std::string_view function;
  bool member = false;
  //! Parameter types, the receiver first for a member overload.
  std::vector<Type> params;
  Type result;
  //! Runs the overload; arguments are never errors (calls are strict).
  Value (*impl)(EvalContext& ctx, const Node& call, std::span<const Value> args) = nullptr;
  //! The runtime cost (cel-go's CostTracker, Kubernetes' library.CostEstimator); null: 1.
  int64_t (*cost)(std::span<const Value> args, const Value& result) = nullptr;
};

//! Every overload of the library.
std::span<const Overload> Library();
//! Whether any overload has this function name.
bool IsLibraryFunction(std::string_view name);
//! Whether a runtime value can be passed as `param`.
bool MatchesRuntime(const Type& param, const Value& v);

//! Go's fmt %g of a double, which cel-go's string(double) uses ("1e+06", "0.5").
std::string FormatDouble(double d);

//! Compiles a regular expression as cel-go (RE2 syntax); empty message when it is valid.
std::string RegexError(std::string_view pattern);

//! semver(text, normalize): a semantic version or cel-go's message for why not.
std::variant<api::SemVer, std::string> ParseSemver(std::string_view text, bool normalize);

//! quantity(text): the error upstream's resource.ParseQuantity gives.
inline constexpr std::string_view kQuantityFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

}  // namespace kubesched::cel
