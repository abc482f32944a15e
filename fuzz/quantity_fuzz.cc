// Fuzz target for Quantity::Parse: never crashes, and Value and MilliValue agree with each other
// (both are ceilings away from zero, so Value is MilliValue / 1000 rounded the same way).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "api/quantity.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kubesched::api::Quantity;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = Quantity::Parse(text);
  if (!q) {
    Check(!q.error().empty());
    return 0;
  }
  Check(q->text() == text);
  const int64_t value = q->Value();
  const int64_t milli = q->MilliValue();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Check((value > 0) == (milli > 0));
  Check((value < 0) == (milli < 0));
  Check(q->IsZero() == (value == 0));
  Check(q->IsNegative() == (value < 0));
  if (milli != kMax && milli != kMin) {
    const int64_t magnitude = milli < 0 ? -milli : milli;
    const int64_t expected = magnitude / 1000 + (magnitude % 1000 != 0 ? 1 : 0);  // no overflow
    Check(value == (milli < 0 ? -expected : expected));
  }
  // A leading "+" never changes the value; "-" mirrors it.
  if (!text.empty() && text[0] != '+' && text[0] != '-') {
    auto plus = Quantity::Parse("+" + std::string(text));
    Check(plus.has_value() && plus->MilliValue() == milli && plus->Value() == value);
    auto minus = Quantity::Parse("-" + std::string(text));
    Check(minus.has_value());
    if (milli != kMax) Check(minus->MilliValue() == -milli);
  }
  return 0;
}
