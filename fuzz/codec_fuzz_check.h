#pragma once
// What the JSON and YAML fuzz targets check once bytes became a DOM: every decoder of every kind
// returns a value or field errors (never a crash or an exception), decoded objects encode, and
// whatever encodes decodes again.

#include <string>

#include "api/decode.h"
#include "api/encode.h"
#include "api/json.h"
#include "api/yaml.h"

namespace kubesched::fuzz {

inline void Check(bool ok) {
  if (!ok) __builtin_trap();
}

inline void DecodeEveryKind(const api::json::Value& value, const api::yaml::ScalarTexts* texts) {
  const api::DecodeOptions options{.texts = texts, .keep_json = true};
  if (auto pod = api::DecodePod(value, options)) {
    Check((*pod)->json != nullptr);
    // The typed encoding of a decoded pod decodes again.
    api::Pod copy = **pod;
    copy.json = nullptr;
    api::json::Document again;
    Check(api::json::Parse(api::EncodePod(copy), again).has_value());
    auto round = api::DecodePod(again);
    Check(round.has_value());
    Check((*round)->spec.containers.size() == copy.spec.containers.size());
  } else {
    Check(!pod.error().empty());
  }
  if (auto node = api::DecodeNode(value, options)) {
    api::Node copy = **node;
    copy.json = nullptr;
    api::json::Document again;
    Check(api::json::Parse(api::EncodeNode(copy), again).has_value());
    Check(api::DecodeNode(again).has_value());
  }
  (void)api::DecodeNamespace(value, options);
  (void)api::DecodePriorityClass(value, options);
  (void)api::DecodePodDisruptionBudget(value, options);
  (void)api::DecodeWorkload(value, options);
  for (const auto& item : api::DecodeList(value, options)) {
    if (!item) Check(!item.error().empty());
  }
}

}  // namespace kubesched::fuzz
