// Fuzz target for YAML into the JSON DOM: bytes → DOM (scalar resolution, anchors and aliases
// with their budget, nesting limit) → typed decode of each kind; line lookups of every path the
// DOM has. Never crash, hang, throw or leak.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "codec_fuzz_check.h"

namespace {

// The paths to the first few values of the document, for LinesOf.
void CollectPaths(const kubesched::api::json::Value& v, kubesched::api::yaml::SourcePath& at,
                  std::vector<kubesched::api::yaml::SourcePath>& out) {
  using Kind = kubesched::api::yaml::PathStep::Kind;
  if (out.size() >= 64 || at.size() > 16) return;
  out.push_back(at);
  if (v.IsObject()) {
    uint32_t i = 0;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it, ++i) {
      at.push_back({Kind::kValue, i});
      CollectPaths(it->value, at, out);
      at.pop_back();
    }
  } else if (v.IsArray()) {
    for (uint32_t i = 0; i < v.Size(); ++i) {
      at.push_back({Kind::kElement, i});
      CollectPaths(v[i], at, out);
      at.pop_back();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  api::json::Document doc;
  api::yaml::ScalarTexts texts;
  auto parsed = api::yaml::Parse(text, doc, &texts);
  if (!parsed) {
    fuzz::Check(!parsed.error().message.empty());
    return 0;
  }
  // Whatever YAML gives is valid JSON.
  api::json::Document again;
  fuzz::Check(api::json::Parse(api::json::Encode(doc), again).has_value());
  std::vector<api::yaml::SourcePath> paths;
  api::yaml::SourcePath at;
  CollectPaths(doc, at, paths);
  const std::vector<int> lines = api::yaml::LinesOf(text, paths);
  fuzz::Check(lines.size() == paths.size());
  fuzz::DecodeEveryKind(doc, &texts);
  return 0;
}
