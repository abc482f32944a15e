// Fuzz target for the JSON codec: bytes → DOM → typed decode of each kind (and encode → decode of
// what decodes). Never crash, hang, throw or leak; what parses encodes to JSON that parses to the
// same text.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "codec_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  api::json::Document doc;
  auto parsed = api::json::Parse(text, doc);
  if (!parsed) {
    fuzz::Check(!parsed.error().message.empty());
    return 0;
  }
  const std::string encoded = api::json::Encode(doc);
  api::json::Document again;
  fuzz::Check(api::json::Parse(encoded, again).has_value());
  fuzz::Check(api::json::Encode(again) == encoded);
  fuzz::DecodeEveryKind(doc, nullptr);
  return 0;
}
