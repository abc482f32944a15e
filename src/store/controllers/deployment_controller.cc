#include "store/controllers/deployment_controller.h"

#include <fmt/format.h>

#include "api/workloads.h"
#include "store/controllers/object_util.h"
#include "store/controllers/replicaset_controller.h"

namespace kubesched::store::controllers {

namespace json = api::json;

std::string PodTemplateHash(const json::Value& pod_template) {
  uint32_t h = 2166136261u;
  for (char c : json::Encode(pod_template)) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  std::string digits = std::to_string(h);
  for (char& c : digits) c = api::kNameSuffixAlphabet[static_cast<uint8_t>(c) % api::kNameSuffixAlphabet.size()];
  return digits;
}

DeploymentController::DeploymentController(Store& store)
    : store_(store),
      deployments_(*store.FindResource("apps", "deployments")),
      replica_sets_(*store.FindResource("apps", "replicasets")) {}

void DeploymentController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &deployments_) {
    if (event.type == EventType::kDeleted) {
      DeleteDependents(store_, replica_sets_, event.object->namespace_, event.object->uid);
    } else {
      Sync(event.object->namespace_, event.object->name);
    }
  } else if (event.object->type == &replica_sets_ && event.type != EventType::kDeleted) {
    json::Document d = Parse(*event.object);
    if (auto owner = ControllerOf(d); owner && owner->kind == "Deployment") Sync(event.object->namespace_, owner->name);
  }
}

void DeploymentController::Resync() {
  for (const ObjectPtr& d : ListAll(store_, deployments_, "")) Sync(d->namespace_, d->name);
}

void DeploymentController::Sync(std::string_view namespace_, std::string_view name) {
  auto got = store_.Get(deployments_, namespace_, name);
  if (!got) return;
  const ObjectPtr deployment = *got;
  json::Document doc = Parse(*deployment);
  if (IsTerminating(doc)) return;
  const json::Value* spec = json::Find(doc, "spec");
  const json::Value* tmpl = spec ? json::Find(*spec, "template") : nullptr;
  if (tmpl == nullptr) return;
  const int64_t replicas = GetInt(*spec, "replicas", 1);
  const std::string hash = PodTemplateHash(*tmpl);
  const std::string rs_name = fmt::format("{}-{}", name, hash);

  std::vector<ObjectPtr> owned;
  ObjectPtr current;
  for (const ObjectPtr& rs : ListAll(store_, replica_sets_, namespace_)) {
    json::Document d = Parse(*rs);
    auto owner = ControllerOf(d);
    if (!owner || owner->uid != deployment->uid) continue;
    owned.push_back(rs);
    if (rs->name == rs_name) current = rs;
  }

  if (!current) {
    json::Document rs;
    rs.SetObject();
    auto& a = rs.GetAllocator();
    json::Set(rs, "apiVersion", json::MakeString("apps/v1", a), a);
    json::Set(rs, "kind", json::MakeString("ReplicaSet", a), a);
    json::Value& meta = json::Child(rs, "metadata", a);
    json::Set(meta, "name", json::MakeString(rs_name, a), a);
    json::Set(meta, "namespace", json::MakeString(namespace_, a), a);
    json::Value tmpl_copy(*tmpl, a);
    json::Value& labels = json::Child(json::Child(tmpl_copy, "metadata", a), "labels", a);
    json::Set(labels, api::kLabelPodTemplateHash, json::MakeString(hash, a), a);
    json::Set(meta, "labels", json::Value(labels, a), a);
    json::Value refs(rapidjson::kArrayType);
    json::Value ref(rapidjson::kObjectType);
    json::Set(ref, "apiVersion", json::MakeString("apps/v1", a), a);
    json::Set(ref, "kind", json::MakeString("Deployment", a), a);
    json::Set(ref, "name", json::MakeString(name, a), a);
    json::Set(ref, "uid", json::MakeString(deployment->uid, a), a);
    json::Set(ref, "controller", json::Value(true), a);
    json::Set(ref, "blockOwnerDeletion", json::Value(true), a);
    refs.PushBack(ref, a);
    json::Set(meta, "ownerReferences", std::move(refs), a);
    json::Value& rs_spec = json::Child(rs, "spec", a);
    json::Set(rs_spec, "replicas", json::Value(replicas), a);
    json::Value selector(rapidjson::kObjectType);
    if (const json::Value* s = json::Find(*spec, "selector")) selector.CopyFrom(*s, a);
    json::Set(json::Child(selector, "matchLabels", a), api::kLabelPodTemplateHash, json::MakeString(hash, a), a);
    json::Set(rs_spec, "selector", std::move(selector), a);
    json::Set(rs_spec, "template", std::move(tmpl_copy), a);
    (void)store_.Create(replica_sets_, namespace_, std::move(rs));
    // Its creation comes back as an event, which syncs the status.
  } else if (json::Document d = Parse(*current); GetInt(*json::Find(d, "spec"), "replicas", 1) != replicas) {
    (void)store_.Patch(replica_sets_, namespace_, current->name, PatchType::kMergePatch,
                       fmt::format(R"({{"spec":{{"replicas":{}}}}})", replicas), "");
  }

  int64_t total = 0, updated = 0, ready = 0, available = 0;
  for (const ObjectPtr& rs : owned) {
    json::Document d = Parse(*rs);
    if (rs != current && GetInt(*json::Find(d, "spec"), "replicas", 1) != 0) {
      (void)store_.Patch(replica_sets_, namespace_, rs->name, PatchType::kMergePatch, R"({"spec":{"replicas":0}})", "");
    }
    const json::Value* status = json::Find(d, "status");
    if (status == nullptr) continue;
    total += GetInt(*status, "replicas");
    ready += GetInt(*status, "readyReplicas");
    available += GetInt(*status, "availableReplicas");
    if (rs == current) updated = GetInt(*status, "replicas");
  }
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value& status = json::Child(patch, "status", a);
  json::Set(status, "replicas", json::Value(total), a);
  json::Set(status, "updatedReplicas", json::Value(updated), a);
  json::Set(status, "readyReplicas", json::Value(ready), a);
  json::Set(status, "availableReplicas", json::Value(available), a);
  json::Set(status, "unavailableReplicas", json::Value(std::max<int64_t>(0, replicas - available)), a);
  json::Set(status, "observedGeneration", json::Value(GetInt(*json::Find(doc, "metadata"), "generation", 1)), a);
  (void)store_.Patch(deployments_, namespace_, name, PatchType::kMergePatch, json::Encode(patch), "status");
}

}  // namespace kubesched::store::controllers
