#pragma once
// The subset of the Common Expression Language (CEL) that Dynamic Resource Allocation's device
// selectors use, as upstream's k8s.io/dynamic-resource-allocation/cel environment defines it: the
// variable `device` (driver, attributes, capacity, allowMultipleAllocations), CEL's operators and
// macros, the string extension functions, and Kubernetes' quantity and semver libraries. No C++
// CEL implementation is packaged in Debian, so this is a parser and an evaluator of our own, with
// upstream's runtime cost limit and errors that name the expression and the position.
//
// A Program is immutable once compiled: evaluate it from any number of threads.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "api/resource_types.h"

namespace kubesched::cel {

struct Error {
  //! What went wrong, as cel-go words it where it can ("Syntax error: mismatched input ...",
  //! "no such key: model", "no matching overload for '_>_' applied to '(string, int)'").
  std::string message;
  //! The byte offset into the expression where it went wrong (0 when unknown).
  size_t offset = 0;
  //! The message with line and column, the form cel-go prints:
  //! "ERROR: <input>:1:8: Syntax error: ...\n | device.driver ==\n | .......^".
  std::string text;
};

//! The `device` variable a selector sees: a view of one device of a ResourceSlice. The spans
//! are sorted by name (as api::Device keeps them), their names qualified with the driver.
struct DeviceView {
  std::string_view driver;
  std::span<const api::DeviceAttribute> attributes;
  std::span<const api::DeviceCapacity> capacity;
  bool allow_multiple_allocations = false;
};

class Program;

struct CompileResult {
  std::shared_ptr<const Program> program;  // null when error is set
  std::optional<Error> error;
};

//! Parses and checks a device selector (a boolean expression over `device`). Errors: syntax,
//! unknown variables, functions or macros outside the subset, results that cannot be a bool,
//! expressions longer than api::kCELSelectorExpressionMaxLength.
CompileResult CompileDeviceSelector(std::string_view expression);

struct EvalResult {
  bool matches = false;
  std::optional<Error> error;  // a runtime error (then matches is false)
  //! The cost spent, in cel-go's units (roughly one per operation, strings by length).
  int64_t cost = 0;
};

//! Evaluates `program` for one device. Stops with an error once the cost passes `cost_limit`
//! (upstream's limit for a selector is api::kCELSelectorExpressionMaxCost).
EvalResult Evaluate(const Program& program, const DeviceView& device,
                    int64_t cost_limit = api::kCELSelectorExpressionMaxCost);

//! Compiled selectors by expression text, compiled once each (upstream's cel.Cache). Thread-safe.
class Cache {
 public:
  explicit Cache(size_t max_entries = 10000);
  ~Cache();
  CompileResult Get(std::string_view expression);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kubesched::cel
