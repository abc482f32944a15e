#include "store/controllers/object_util.h"

namespace kubesched::store::controllers {

namespace json = api::json;

json::Document Parse(const Object& object) {
  json::Document doc;
  (void)json::Parse(object.json, doc);
  return doc;
}

const json::Value& ParsedObject(const WatchEvent& event, json::Document& scratch) {
  if (event.parsed) return *event.parsed;
  scratch = Parse(*event.object);
  return scratch;
}

const json::Value* At(const json::Value& root, std::initializer_list<std::string_view> keys) {
  const json::Value* v = &root;
  for (auto k : keys) {
    v = json::Find(*v, k);
    if (v == nullptr) return nullptr;
  }
  return v;
}

std::optional<OwnerRef> ControllerOf(const json::Value& object) {
  const json::Value* refs = At(object, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->IsArray()) return std::nullopt;
  for (const auto& r : refs->GetArray()) {
    const json::Value* c = json::Find(r, "controller");
    if (c && c->IsTrue()) {
      return OwnerRef{std::string(json::GetString(r, "kind")), std::string(json::GetString(r, "name")),
                      std::string(json::GetString(r, "uid"))};
    }
  }
  return std::nullopt;
}

bool IsTerminating(const json::Value& object) { return At(object, {"metadata", "deletionTimestamp"}) != nullptr; }

bool IsPodActive(const json::Value& pod) {
  const json::Value* phase = At(pod, {"status", "phase"});
  const std::string_view p = phase ? json::View(*phase) : std::string_view();
  return p != "Succeeded" && p != "Failed" && !IsTerminating(pod);
}

bool IsPodReady(const json::Value& pod) {
  const json::Value* conds = At(pod, {"status", "conditions"});
  if (conds == nullptr || !conds->IsArray()) return false;
  for (const auto& c : conds->GetArray()) {
    if (json::GetString(c, "type") == "Ready") return json::GetString(c, "status") == "True";
  }
  return false;
}

int64_t GetInt(const json::Value& object, std::string_view key, int64_t fallback) {
  const json::Value* v = json::Find(object, key);
  return v && v->IsInt64() ? v->GetInt64() : fallback;
}

std::vector<ObjectPtr> ListAll(const Store& store, const ResourceType& type, std::string_view namespace_) {
  auto r = store.List(type, namespace_, {});
  return r ? std::move(r->items) : std::vector<ObjectPtr>{};
}

}  // namespace kubesched::store::controllers
