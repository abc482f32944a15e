#include "store/controllers/deployment_controller.h"

#include <algorithm>

#include <fmt/format.h>

#include "api/workloads.h"
#include "store/controllers/object_util.h"
#include "store/controllers/replicaset_controller.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

json::Value OwnerReference(std::string_view name, std::string_view uid, json::Allocator& a) {
  json::Value ref(rapidjson::kObjectType);
  json::Set(ref, "apiVersion", json::MakeString("apps/v1", a), a);
  json::Set(ref, "kind", json::MakeString("Deployment", a), a);
  json::Set(ref, "name", json::MakeString(name, a), a);
  json::Set(ref, "uid", json::MakeString(uid, a), a);
  json::Set(ref, "controller", json::Value(true), a);
  json::Set(ref, "blockOwnerDeletion", json::Value(true), a);
  return ref;
}

}  // namespace

std::string PodTemplateHash(const json::Value& pod_template, int64_t collision_count) {
  uint32_t h = 2166136261u;
  auto add = [&](std::string_view bytes) {
    for (char c : bytes) {
      h ^= static_cast<uint8_t>(c);
      h *= 16777619u;
    }
  };
  add(json::Encode(pod_template));
  if (collision_count > 0) add(std::to_string(collision_count));
  std::string digits = std::to_string(h);
  for (char& c : digits) c = api::kNameSuffixAlphabet[static_cast<uint8_t>(c) % api::kNameSuffixAlphabet.size()];
  return digits;
}

DeploymentController::DeploymentController(const ControllerContext& ctx)
    : ctx_(ctx),
      deployments_(*ctx.store.FindResource("apps", "deployments")),
      replica_sets_(*ctx.store.FindResource("apps", "replicasets")) {}

void DeploymentController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &deployments_) {
    OnDeployment(event);
  } else if (event.object->type == &replica_sets_) {
    OnReplicaSet(event);
  }
}

void DeploymentController::Resync() {
  for (const ObjectPtr& rs : ListAll(ctx_.store, replica_sets_, "")) {
    OnReplicaSet(WatchEvent{EventType::kAdded, rs, nullptr});
  }
  for (const ObjectPtr& d : ListAll(ctx_.store, deployments_, "")) {
    OnDeployment(WatchEvent{EventType::kAdded, d, nullptr});
  }
}

void DeploymentController::OnDeployment(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  if (event.type == EventType::kDeleted) {
    by_uid_.erase(uid);
    if (auto it = owned_.find(uid); it != owned_.end()) {
      std::vector<std::pair<std::string, std::string>> sets;
      for (const auto& [rs_uid, rs] : it->second) sets.emplace_back(rs.namespace_(), rs.name());
      for (const auto& [ns, name] : sets) (void)ctx_.store.Delete(replica_sets_, ns, name, {});
    }
    return;
  }
  auto it = by_uid_.find(uid);
  if (it != by_uid_.end() && it->second.info.object->resource_version >= event.object->resource_version) return;
  json::Document scratch;
  const json::Value& doc = ParsedObject(event, scratch);
  Deployment d{ParseWorkload(event.object, doc), 0};
  if (const json::Value* status = json::Find(doc, "status")) d.collision_count = GetInt(*status, "collisionCount");
  Deployment& stored = by_uid_.insert_or_assign(uid, std::move(d)).first->second;
  Manage(stored);
  dirty_.push_back(uid);
}

void DeploymentController::OnReplicaSet(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  std::string previous_owner;
  if (auto it = owner_of_.find(uid); it != owner_of_.end()) previous_owner = it->second;
  std::string owner;
  bool revision_changed = false;
  if (event.type == EventType::kDeleted) {
    if (!previous_owner.empty()) {
      owned_[previous_owner].erase(uid);
      owner_of_.erase(uid);
    }
    owner = previous_owner;
  } else {
    if (!previous_owner.empty()) {
      auto& sets = owned_[previous_owner];
      if (auto it = sets.find(uid);
          it != sets.end() && it->second.object->resource_version >= event.object->resource_version) {
        return;
      }
    }
    json::Document scratch;
    const json::Value& doc = ParsedObject(event, scratch);
    WorkloadInfo rs = ParseWorkload(event.object, doc);
    if (rs.controller && rs.controller->kind == "Deployment") owner = rs.controller->uid;
    if (!previous_owner.empty() && previous_owner != owner) {
      owned_[previous_owner].erase(uid);
      owner_of_.erase(uid);
    }
    if (!owner.empty()) {
      auto& sets = owned_[owner];
      auto known = sets.find(uid);
      revision_changed = known != sets.end() && known->second.revision != rs.revision;
      sets.insert_or_assign(uid, std::move(rs));
      owner_of_[uid] = owner;
    }
  }
  for (const std::string& o : {previous_owner, owner}) {
    if (o.empty()) continue;
    if (auto d = by_uid_.find(o); d != by_uid_.end()) {
      // A new or deleted ReplicaSet may change which one is current, a new revision the
      // Deployment's; a status change only the sums.
      if (event.type != EventType::kModified || revision_changed) Manage(d->second);
      dirty_.push_back(o);
    }
  }
}

const WorkloadInfo* DeploymentController::FindNewReplicaSet(const Deployment& d) const {
  auto it = owned_.find(d.info.uid());
  if (it == owned_.end()) return nullptr;
  std::vector<const WorkloadInfo*> sets;
  for (const auto& [uid, rs] : it->second) {
    if (!rs.deleting) sets.push_back(&rs);
  }
  // Oldest first, as ReplicaSetsByCreationTimestamp sorts them.
  std::sort(sets.begin(), sets.end(), [](const WorkloadInfo* a, const WorkloadInfo* b) {
    if (a->created_ns != b->created_ns) return a->created_ns < b->created_ns;
    return a->name() < b->name();
  });
  for (const WorkloadInfo* rs : sets) {
    if (TemplatesEqualIgnoringHash(rs->template_json, d.info.template_json)) return rs;
  }
  return nullptr;
}

void DeploymentController::Manage(const Deployment& d) {
  const WorkloadInfo& w = d.info;
  if (w.deleting || w.template_json.empty()) return;
  const int64_t replicas = w.replicas.value_or(1);
  const WorkloadInfo* current = FindNewReplicaSet(d);
  // Revisions, as upstream's getNewReplicaSet numbers them: the current ReplicaSet is one past
  // the highest of the others (a rollback makes an old one current again, and the next revision).
  int64_t max_old_revision = 0;
  if (auto owned = owned_.find(w.uid()); owned != owned_.end()) {
    for (const auto& [uid, rs] : owned->second) {
      if (&rs != current) max_old_revision = std::max(max_old_revision, rs.revision);
    }
  }
  const std::string next_revision = std::to_string(max_old_revision + 1);
  if (current == nullptr) {
    json::Document doc = Parse(*w.object);
    const json::Value* spec = json::Find(doc, "spec");
    const json::Value* tmpl = spec ? json::Find(*spec, "template") : nullptr;
    if (tmpl == nullptr) return;
    const std::string hash = PodTemplateHash(*tmpl, d.collision_count);
    const std::string rs_name = fmt::format("{}-{}", w.name(), hash);
    json::Document rs;
    rs.SetObject();
    auto& a = rs.GetAllocator();
    json::Set(rs, "apiVersion", json::MakeString("apps/v1", a), a);
    json::Set(rs, "kind", json::MakeString("ReplicaSet", a), a);
    json::Value& meta = json::Child(rs, "metadata", a);
    json::Set(meta, "name", json::MakeString(rs_name, a), a);
    json::Set(meta, "namespace", json::MakeString(w.namespace_(), a), a);
    json::Value tmpl_copy(*tmpl, a);
    json::Value& labels = json::Child(json::Child(tmpl_copy, "metadata", a), "labels", a);
    json::Set(labels, api::kLabelPodTemplateHash, json::MakeString(hash, a), a);
    json::Set(meta, "labels", json::Value(labels, a), a);
    json::Set(json::Child(meta, "annotations", a), kAnnotationDeploymentRevision, json::MakeString(next_revision, a),
              a);
    json::Value refs(rapidjson::kArrayType);
    refs.PushBack(OwnerReference(w.name(), w.uid(), a), a);
    json::Set(meta, "ownerReferences", std::move(refs), a);
    json::Value& rs_spec = json::Child(rs, "spec", a);
    json::Set(rs_spec, "replicas", json::Value(replicas), a);
    json::Value selector(rapidjson::kObjectType);
    if (const json::Value* s = json::Find(*spec, "selector")) selector.CopyFrom(*s, a);
    json::Set(json::Child(selector, "matchLabels", a), api::kLabelPodTemplateHash, json::MakeString(hash, a), a);
    json::Set(rs_spec, "selector", std::move(selector), a);
    json::Set(rs_spec, "template", std::move(tmpl_copy), a);
    auto created = ctx_.store.Create(replica_sets_, w.namespace_(), std::move(rs));
    if (!created && created.error().reason == Error::Reason::kAlreadyExists) {
      // Ours already (its event is on the way), or someone else's: then the next hash.
      auto existing = ctx_.store.Get(replica_sets_, w.namespace_(), rs_name);
      json::Document e = existing ? Parse(**existing) : json::Document();
      auto owner = existing ? ControllerOf(e) : std::nullopt;
      if (!owner || owner->uid != w.uid()) {
        (void)ctx_.store.Patch(deployments_, w.namespace_(), w.name(), PatchType::kMergePatch,
                               fmt::format(R"({{"status":{{"collisionCount":{}}}}})", d.collision_count + 1), "status");
      }
    }
    // Its creation comes back as an event, which manages the rest.
    return;
  }
  if (current->revision <= max_old_revision) {
    (void)ctx_.store.Patch(
        replica_sets_, current->namespace_(), current->name(), PatchType::kMergePatch,
        fmt::format(R"({{"metadata":{{"annotations":{{"{}":"{}"}}}}}})", kAnnotationDeploymentRevision, next_revision),
        "");
    return;  // its event comes back and manages the rest
  }
  if (w.revision != current->revision) {
    (void)ctx_.store.Patch(deployments_, w.namespace_(), w.name(), PatchType::kMergePatch,
                           fmt::format(R"({{"metadata":{{"annotations":{{"{}":"{}"}}}}}})",
                                       kAnnotationDeploymentRevision, current->revision),
                           "");
  }
  if (current->replicas.value_or(1) != replicas) {
    (void)ctx_.store.Patch(replica_sets_, current->namespace_(), current->name(), PatchType::kMergePatch,
                           fmt::format(R"({{"spec":{{"replicas":{}}}}})", replicas), "");
  }
  std::vector<std::pair<std::string, std::string>> scale_down;
  for (const auto& [uid, rs] : owned_[w.uid()]) {
    if (&rs != current && !rs.deleting && rs.replicas.value_or(1) != 0)
      scale_down.emplace_back(rs.namespace_(), rs.name());
  }
  for (const auto& [ns, name] : scale_down) {
    (void)ctx_.store.Patch(replica_sets_, ns, name, PatchType::kMergePatch, R"({"spec":{"replicas":0}})", "");
  }
}

void DeploymentController::Flush() {
  std::vector<std::string> dirty;
  dirty.swap(dirty_);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const std::string& uid : dirty) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) WriteStatus(it->second);
  }
}

void DeploymentController::WriteStatus(const Deployment& d) {
  if (d.info.deleting) return;
  const WorkloadInfo* current = FindNewReplicaSet(d);
  int64_t total = 0, updated = 0, ready = 0, available = 0;
  for (const auto& [uid, rs] : owned_[d.info.uid()]) {
    json::Document s;
    if (!json::Parse(rs.status_json, s) || !s.IsObject()) continue;
    total += GetInt(s, "replicas");
    ready += GetInt(s, "readyReplicas");
    available += GetInt(s, "availableReplicas");
    if (&rs == current) updated = GetInt(s, "replicas");
  }
  json::Document status;
  status.SetObject();
  auto& a = status.GetAllocator();
  json::Set(status, "replicas", json::Value(total), a);
  json::Set(status, "updatedReplicas", json::Value(updated), a);
  json::Set(status, "readyReplicas", json::Value(ready), a);
  json::Set(status, "availableReplicas", json::Value(available), a);
  json::Set(status, "unavailableReplicas", json::Value(std::max<int64_t>(0, d.info.replicas.value_or(1) - available)),
            a);
  json::Set(status, "observedGeneration", json::Value(d.info.generation), a);
  PatchStatusIfChanged(ctx_.store, deployments_, d.info, status);
}

}  // namespace kubesched::store::controllers
