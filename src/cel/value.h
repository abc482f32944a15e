#pragma once
// Runtime values of the evaluator. A Value is a small tagged union that refers to data it does not
// own: the program's constants, the device being evaluated (DeviceView spans, looked up lazily),
// or the evaluation's arena for what an expression builds (concatenated strings, lists). So the
// common selectors evaluate without a heap allocation.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/resource_types.h"
#include "cel/cel.h"
#include "cel/quantity_value.h"

namespace kubesched::cel {

enum class ValueKind : uint8_t {
  kError,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kQuantity,
  kSemver,
  kDevice,       // the `device` variable
  kAttrDomains,  // device.attributes: domain -> kAttrDomain
  kAttrDomain,   // device.attributes["<domain>"]: id -> value (the domain's slice of the span)
  kCapDomains,   // device.capacity
  kCapDomain,    // device.capacity["<domain>"]
};

struct Value;
struct MapEntry;

struct Value {
  ValueKind kind = ValueKind::kNull;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    __int128 nano;  // kQuantity
    const std::vector<Value>* list;
    const std::vector<MapEntry>* map;
    const api::SemVer* semver;
    const DeviceView* device;
    std::span<const api::DeviceAttribute> attrs;  // kAttrDomains, kAttrDomain
    std::span<const api::DeviceCapacity> caps;    // kCapDomains, kCapDomain
    size_t error;                                 // index into EvalContext::errors
  };
  std::string_view str;  // kString, kBytes

  Value() : nano(0) {}

  static Value Null() { return Value(); }
  static Value Bool(bool v) {
    Value x;
    x.kind = ValueKind::kBool;
    x.b = v;
    return x;
  }
  static Value Int(int64_t v) {
    Value x;
    x.kind = ValueKind::kInt;
    x.i = v;
    return x;
  }
  static Value Uint(uint64_t v) {
    Value x;
    x.kind = ValueKind::kUint;
    x.u = v;
    return x;
  }
  static Value Double(double v) {
    Value x;
    x.kind = ValueKind::kDouble;
    x.d = v;
    return x;
  }
  static Value String(std::string_view v) {
    Value x;
    x.kind = ValueKind::kString;
    x.str = v;
    return x;
  }
  static Value BytesOf(std::string_view v) {
    Value x;
    x.kind = ValueKind::kBytes;
    x.str = v;
    return x;
  }
  static Value Quantity(const QuantityValue& q) {
    Value x;
    x.kind = ValueKind::kQuantity;
    x.nano = q.nano();
    return x;
  }
  static Value Semver(const api::SemVer* v) {
    Value x;
    x.kind = ValueKind::kSemver;
    x.semver = v;
    return x;
  }
  static Value List(const std::vector<Value>* v) {
    Value x;
    x.kind = ValueKind::kList;
    x.list = v;
    return x;
  }
  static Value Map(const std::vector<MapEntry>* v) {
    Value x;
    x.kind = ValueKind::kMap;
    x.map = v;
    return x;
  }

  bool IsError() const { return kind == ValueKind::kError; }
  bool IsMap() const {
    return kind == ValueKind::kMap || kind == ValueKind::kAttrDomains || kind == ValueKind::kAttrDomain ||
           kind == ValueKind::kCapDomains || kind == ValueKind::kCapDomain;
  }
  QuantityValue AsQuantity() const { return QuantityValue::FromNano(nano); }
};

struct MapEntry {
  Value key;
  Value value;
};

//! Everything one evaluation needs: the device, the cost meter, variables, the arena and errors.
class EvalContext {
 public:
  EvalContext(const DeviceView& device, int64_t cost_limit) : device_(&device), cost_limit_(cost_limit) {}

  const DeviceView& device() const { return *device_; }

  //! Adds to the cost; past the limit, evaluation is cancelled (cel-go panics out of the
  //! interpreter at that point, so nothing after it runs).
  bool Charge(int64_t cost) {
    cost_ += cost;
    if (cost_ > cost_limit_) cancelled_ = true;
    return !cancelled_;
  }
  //! Whether work of `units` cost units still fits the limit, asked before building a large
  //! value (cel-go charges size-dependent costs after a call; a selector here is not estimated
  //! statically as the API server does, so without this one call could build gigabytes before
  //! the limit is noticed). Cancels evaluation when it does not fit.
  bool Affordable(int64_t units) {
    if (cost_ + units > cost_limit_) cancelled_ = true;
    return !cancelled_;
  }
  int64_t cost() const { return cost_; }
  bool cancelled() const { return cancelled_; }

  Value Error(std::string message, size_t offset) {
    errors_.push_back(cel::Error{std::move(message), offset, {}});
    Value v;
    v.kind = ValueKind::kError;
    v.error = errors_.size() - 1;
    return v;
  }
  const cel::Error& ErrorOf(const Value& v) const { return errors_[v.error]; }
  //! The error every step returns once the cost limit is passed (cel-go's wording).
  Value CancelledError() {
    if (!cancelled_error_) cancelled_error_ = Error("operation cancelled: actual cost limit exceeded", 0);
    return *cancelled_error_;
  }

  // The arena: values built during evaluation live until it ends.
  std::string_view Keep(std::string s) {
    strings_.push_back(std::make_unique<std::string>(std::move(s)));
    return *strings_.back();
  }
  std::vector<Value>* NewList() {
    lists_.push_back(std::make_unique<std::vector<Value>>());
    return lists_.back().get();
  }
  std::vector<MapEntry>* NewMap() {
    maps_.push_back(std::make_unique<std::vector<MapEntry>>());
    return maps_.back().get();
  }
  const api::SemVer* Keep(api::SemVer v) {
    semvers_.push_back(std::make_unique<api::SemVer>(std::move(v)));
    return semvers_.back().get();
  }

  //! Comprehension and cel.bind variables, by the slot the checker gave them.
  std::vector<Value> slots;

 private:
  const DeviceView* device_;
  int64_t cost_ = 0;
  int64_t cost_limit_;
  bool cancelled_ = false;
  std::vector<cel::Error> errors_;
  std::optional<Value> cancelled_error_;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::unique_ptr<std::vector<Value>>> lists_;
  std::vector<std::unique_ptr<std::vector<MapEntry>>> maps_;
  std::vector<std::unique_ptr<api::SemVer>> semvers_;
};

//! The CEL type name of a value, as messages show it ("int", "string", "map", ...).
std::string_view TypeName(const Value& v);
//! The size cel-go's cost model uses: code points of a string, bytes, elements; 1 otherwise.
int64_t CostSize(const Value& v);
//! Number of Unicode code points in UTF-8 text (as CEL's size() of a string).
int64_t CodePoints(std::string_view s);

// Map access, over literal maps and the device's lazily read maps alike.
int64_t MapSize(const Value& map);
//! The i-th key (0 <= i < MapSize).
Value MapKey(const Value& map, int64_t i);
//! Finds key; `found` is false when absent. device.attributes and device.capacity find every
//! domain (an absent one is an empty map), as upstream's mapper does; `in` uses MapContains.
Value MapFind(const Value& map, const Value& key, bool& found);
bool MapContains(const Value& map, const Value& key);

//! CEL's heterogeneous equality (numbers compare by value across int, uint and double; values of
//! different types are unequal).
bool Equal(const Value& a, const Value& b);

//! The value of one device attribute.
Value AttributeValue(const api::DeviceAttribute& attribute);

}  // namespace kubesched::cel
