#pragma once
// The decode and complete_view hooks of a kind whose typed view the codec reads (api::Decode<Kind>),
// shared by the storage and resource.k8s.io kinds: a write is validated by decoding it (its field
// errors become the 422's causes), and a stored object's view gets its resourceVersion and JSON.

#include <memory>
#include <string>
#include <vector>

#include "api/decode.h"
#include "store/store.h"

namespace kubesched::store {

inline std::vector<Cause> CausesOf(const api::FieldErrors& errors) {
  std::vector<Cause> causes;
  causes.reserve(errors.size());
  for (const auto& e : errors) causes.push_back(Cause{e.reason, e.message, e.field});
  return causes;
}

template <typename T, api::Decoded<T> (*Decode)(const api::json::Value&, const api::DecodeOptions&)>
void SetTypedView(ResourceType& t) {
  t.decode = [](const api::json::Value& object, const Object*) {
    auto decoded = Decode(object, api::DecodeOptions{.texts = nullptr, .keep_json = false});
    if (!decoded) return DecodeResult{CausesOf(decoded.error()), nullptr};
    return DecodeResult{{}, std::shared_ptr<T>(std::move(*decoded))};
  };
  t.complete_view = [](void* view, const Object& stored) {
    auto* object = static_cast<T*>(view);
    object->metadata.resource_version = std::to_string(stored.resource_version);
    object->json = stored.json.shared();
  };
}

}  // namespace kubesched::store
