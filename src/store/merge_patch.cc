// JSON Merge Patch, RFC 7386, and the dispatch over patch types.
#include <fmt/format.h>

#include "store/errors.h"
#include "store/patch.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

// RFC 7386 MergePatch(Target, Patch), section 2.
void MergeInto(json::Value& target, const json::Value& patch, json::Allocator& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    const std::string_view key = json::View(m.name);
    if (m.value.IsNull()) {
      json::Remove(target, key);
      continue;
    }
    json::Value* existing = json::Find(target, key);
    if (existing == nullptr) existing = &json::Set(target, key, json::Value(rapidjson::kNullType), a);
    MergeInto(*existing, m.value, a);
  }
}

}  // namespace

Result<void> ApplyMergePatch(json::Document& doc, std::string_view patch) {
  json::Document p;
  if (auto r = json::Parse(patch, p); !r) return std::unexpected(BadRequest(r.error().ToString()));
  return ApplyMergePatch(doc, p);
}

Result<void> ApplyMergePatch(json::Document& doc, const json::Value& patch) {
  if (!patch.IsObject()) return std::unexpected(BadRequest("a merge patch must be a JSON object"));
  MergeInto(doc, patch, doc.GetAllocator());
  return {};
}

Result<void> ApplyPatch(PatchType type, json::Document& doc, std::string_view patch) {
  switch (type) {
    case PatchType::kJsonPatch:
      return ApplyJsonPatch(doc, patch);
    case PatchType::kMergePatch:
      return ApplyMergePatch(doc, patch);
    case PatchType::kStrategicMergePatch:
      return ApplyStrategicMergePatch(doc, patch);
  }
  return std::unexpected(BadRequest("unknown patch type"));
}

}  // namespace kubesched::store
