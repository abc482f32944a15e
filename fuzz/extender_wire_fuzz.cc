// Fuzz target for the scheduler-extender wire codec (src/extender/wire.h): one input goes to every
// decoder. Each returns a value or an error naming a field (never a crash, hang, throw or leak),
// and what decodes encodes to a body that decodes and encodes again to the same bytes (the first
// encoding may differ from the second: Go's escapes turn invalid UTF-8 into U+FFFD).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "extender/wire.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// decode(input) → encode → decode → encode → decode → encode: the last two encodings are equal.
template <typename Decode, typename Encode>
void RoundTrip(std::string_view input, Decode decode, Encode encode) {
  auto decoded = decode(input);
  if (!decoded) {
    Check(!decoded.error().empty());
    return;
  }
  const std::string first = encode(*decoded);
  auto again = decode(first);
  Check(again.has_value());
  const std::string second = encode(*again);
  auto third = decode(second);
  Check(third.has_value());
  Check(encode(*third) == second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched::extender;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  RoundTrip(
      input, [](std::string_view s) { return DecodeExtenderArgs(s); }, EncodeExtenderArgs);
  RoundTrip(input, DecodeFilterResult, EncodeFilterResult);
  RoundTrip(input, DecodeHostPriorityList, EncodeHostPriorityList);
  RoundTrip(input, DecodePreemptionArgs, EncodePreemptionArgs);
  RoundTrip(input, DecodePreemptionResult, EncodePreemptionResult);
  RoundTrip(input, DecodeBindingArgs, EncodeBindingArgs);
  RoundTrip(input, DecodeBindingResult, EncodeBindingResult);
  return 0;
}
