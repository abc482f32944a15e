#include "cluster/store_client.h"

#include <fmt/format.h>

#include "api/decode.h"
#include "api/encode.h"
#include "api/json_writer.h"
#include "api/time_format.h"

namespace kubesched::cluster {

using framework::Status;

namespace {

const store::ResourceType& Resource(const store::Store& store, std::string_view group, std::string_view resource) {
  const store::ResourceType* type = store.FindResource(group, resource);
  if (type == nullptr) throw std::logic_error(fmt::format("the store does not serve {}", resource));
  return *type;
}

Status FromError(const store::Error& error) { return Status::Error(error.message); }

// The strategic merge patch of the status that sets one condition (conditions merge by type).
std::string ConditionPatch(const api::PodCondition& condition, int64_t now_ns) {
  std::string out;
  api::json::StringWriter w(out);
  w.StartObject();
  w.Key("status");
  w.StartObject();
  w.Key("conditions");
  w.StartArray();
  w.StartObject();
  w.Key("type");
  w.String(condition.type);
  w.Key("status");
  w.String(condition.status);
  if (!condition.reason.empty()) {
    w.Key("reason");
    w.String(condition.reason);
  }
  if (!condition.message.empty()) {
    w.Key("message");
    w.String(condition.message);
  }
  w.Key("lastTransitionTime");
  w.String(api::FormatRFC3339(now_ns));
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  w.Finish();
  return out;
}

// Upstream's helper.DefaultSelector reads the selectors of these controllers (a Deployment's pods
// through their ReplicaSet).
const store::ResourceType* SelectorControllerResource(const store::Store& store, std::string_view kind) {
  if (kind == "ReplicaSet") return store.FindResource("apps", "replicasets");
  if (kind == "StatefulSet") return store.FindResource("apps", "statefulsets");
  if (kind == "ReplicationController") return store.FindResource("", "replicationcontrollers");
  return nullptr;
}

}  // namespace

StoreClient::StoreClient(store::Store& store, const util::Clock& clock)
    : store_(store),
      clock_(clock),
      pods_(Resource(store, "", "pods")),
      namespaces_(Resource(store, "", "namespaces")),
      pdbs_(Resource(store, "policy", "poddisruptionbudgets")),
      pod_groups_(store.FindResource("scheduling.k8s.io", "podgroups")),
      claims_(store.FindResource("", "persistentvolumeclaims")),
      volumes_(store.FindResource("", "persistentvolumes")),
      resource_claims_(store.FindResource(api::kResourceApiGroup, "resourceclaims")) {}

Status StoreClient::Bind(const api::Pod& pod, const std::string& node_name) {
  auto bound = store_.Bind(pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid, node_name);
  if (!bound) return FromError(bound.error());
  return {};
}

Status StoreClient::PatchStatus(const api::Pod& pod, std::string_view patch) {
  auto patched = store_.Patch(pods_, pod.metadata.namespace_, pod.metadata.name, store::PatchType::kStrategicMergePatch,
                              patch, "status");
  if (!patched) return FromError(patched.error());
  return {};
}

Status StoreClient::DeletePod(const api::Pod& pod, std::string_view reason) {
  auto current = store_.Get(pods_, pod.metadata.namespace_, pod.metadata.name);
  if (!current || (*current)->uid != pod.metadata.uid) {
    return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
  }
  auto view = (*current)->View<api::Pod>();
  // Deleting a pod that is already terminating changes nothing here (the API server keeps the
  // earlier deadline; preemption asks with the pod's own grace period).
  if (view && view->metadata.deletion_timestamp_ns) return {};
  // Upstream's preemption marks its victim before deleting it (PodDisruptionConditions).
  const api::PodCondition target{"DisruptionTarget", "True", "PreemptionByScheduler", std::string(reason)};
  if (Status s = PatchStatus(pod, ConditionPatch(target, clock_.NowNs())); !s.IsSuccess()) return s;
  store::DeleteOptions options;
  options.precondition_uid = pod.metadata.uid;
  auto deleted = store_.Delete(pods_, pod.metadata.namespace_, pod.metadata.name, options);
  if (!deleted) return FromError(deleted.error());
  return {};
}

Status StoreClient::SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) {
  std::string patch;
  api::json::StringWriter w(patch);
  w.StartObject();
  w.Key("status");
  w.StartObject();
  w.Key("nominatedNodeName");
  if (node_name.empty()) {
    w.Null();
  } else {
    w.String(node_name);
  }
  w.EndObject();
  w.EndObject();
  w.Finish();
  return PatchStatus(pod, patch);
}

Status StoreClient::SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) {
  return PatchStatus(pod, ConditionPatch(condition, clock_.NowNs()));
}

Status StoreClient::SetPodGroupCondition(const api::PodGroup& group, const api::PodCondition& condition) {
  if (pod_groups_ == nullptr) return Status::Error("the cluster has no PodGroups (scheduling.k8s.io)");
  auto patched =
      store_.Patch(*pod_groups_, group.metadata.namespace_, group.metadata.name, store::PatchType::kStrategicMergePatch,
                   ConditionPatch(condition, clock_.NowNs()), "status");
  if (!patched) return FromError(patched.error());
  return {};
}

namespace {

// metadata: resourceVersion (when known: the write fails on a newer version) and one annotation.
void WriteMetadata(api::json::StringWriter& w, const api::ObjectMeta& meta, std::string_view annotation,
                   std::string_view value) {
  w.Key("metadata");
  w.StartObject();
  if (!meta.resource_version.empty()) {
    w.Key("resourceVersion");
    w.String(meta.resource_version);
  }
  w.Key("annotations");
  w.StartObject();
  w.Key(annotation);
  w.String(value);
  w.EndObject();
  w.EndObject();
}

}  // namespace

Status StoreClient::BindVolumeToClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  if (volumes_ == nullptr) return Status::Error("the cluster has no PersistentVolumes");
  std::string patch;
  api::json::StringWriter w(patch);
  w.StartObject();
  WriteMetadata(w, volume.metadata, api::kAnnotationBoundByController, "yes");
  w.Key("spec");
  w.StartObject();
  w.Key("claimRef");
  w.StartObject();
  w.Key("kind");
  w.String("PersistentVolumeClaim");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("namespace");
  w.String(claim.metadata.namespace_);
  w.Key("name");
  w.String(claim.metadata.name);
  w.Key("uid");
  w.String(claim.metadata.uid);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.Finish();
  auto patched = store_.Patch(*volumes_, "", volume.metadata.name, store::PatchType::kMergePatch, patch, "");
  if (!patched) return FromError(patched.error());
  return {};
}

Status StoreClient::SelectNodeForClaim(const api::PersistentVolumeClaim& claim, const std::string& node_name) {
  if (claims_ == nullptr) return Status::Error("the cluster has no PersistentVolumeClaims");
  std::string patch;
  api::json::StringWriter w(patch);
  w.StartObject();
  WriteMetadata(w, claim.metadata, api::kAnnotationSelectedNode, node_name);
  w.EndObject();
  w.Finish();
  auto patched =
      store_.Patch(*claims_, claim.metadata.namespace_, claim.metadata.name, store::PatchType::kMergePatch, patch, "");
  if (!patched) return FromError(patched.error());
  return {};
}

Status StoreClient::UpdateResourceClaimStatus(const api::ResourceClaim& claim) {
  if (resource_claims_ == nullptr) return Status::Error("the cluster has no ResourceClaims");
  api::json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  if (!claim.metadata.resource_version.empty()) {
    api::json::Set(api::json::Child(patch, "metadata", a), "resourceVersion",
                   api::json::MakeString(claim.metadata.resource_version, a), a);
  }
  api::json::Set(patch, "status", api::ResourceClaimStatusToValue(claim, a), a);
  auto patched = store_.MergePatch(*resource_claims_, claim.metadata.namespace_, claim.metadata.name, patch, "status");
  if (!patched) return FromError(patched.error());
  return {};
}

void StoreClient::RecordEvent(const framework::EventRecord& event) {
  if (recorder_ != nullptr) (void)recorder_->Record(event);
}

std::optional<api::Labels> StoreClient::NamespaceLabels(std::string_view name) const {
  auto ns = store_.Get(namespaces_, "", name);
  if (!ns) return std::nullopt;
  api::Labels labels;
  for (const auto& [k, v] : (*ns)->labels()) labels.Set(k, v);
  return labels;
}

std::vector<std::shared_ptr<const api::PodDisruptionBudget>> StoreClient::ListPodDisruptionBudgets() const {
  auto listed = store_.List(pdbs_, "", {});
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> out;
  if (!listed) return out;
  std::lock_guard lock(mu_);
  std::unordered_map<std::string, Decoded<api::PodDisruptionBudget>> kept;
  for (const store::ObjectPtr& object : listed->items) {
    auto it = pdb_cache_.find(object->uid);
    if (it == pdb_cache_.end() || it->second.resource_version != object->resource_version) {
      api::json::Document doc;
      if (!api::json::Parse(object->json.str(), doc)) continue;
      auto pdb = api::DecodePodDisruptionBudget(doc, {.texts = nullptr, .keep_json = false});
      if (!pdb) continue;  // the store validated it; a PDB it cannot read selects nothing here
      it = pdb_cache_.insert_or_assign(object->uid, Decoded<api::PodDisruptionBudget>{object->resource_version, *pdb})
               .first;
    }
    out.push_back(it->second.value);
    kept.insert(*it);
  }
  pdb_cache_ = std::move(kept);
  return out;
}

std::optional<api::LabelSelector> StoreClient::ControllerSelector(const api::Pod& pod) const {
  const api::OwnerReference* owner = nullptr;
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) owner = &ref;
  }
  if (owner == nullptr) return std::nullopt;
  const store::ResourceType* type = SelectorControllerResource(store_, owner->kind);
  if (type == nullptr) return std::nullopt;
  auto object = store_.Get(*type, pod.metadata.namespace_, owner->name);
  if (!object || (!owner->uid.empty() && (*object)->uid != owner->uid)) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = selector_cache_.find((*object)->uid);
  if (it == selector_cache_.end() || it->second.resource_version != (*object)->resource_version) {
    std::optional<api::LabelSelector> selector;
    api::json::Document doc;
    if (api::json::Parse((*object)->json.str(), doc)) {
      if (auto w = api::DecodeWorkload(doc, {.texts = nullptr, .keep_json = false}); w) {
        if ((*w)->selector) {
          selector = *(*w)->selector;
        } else {
          selector.emplace();
          selector->match_labels = (*w)->template_.metadata.labels;
        }
      }
    }
    auto value = std::make_shared<const std::optional<api::LabelSelector>>(std::move(selector));
    it = selector_cache_
             .insert_or_assign((*object)->uid, Decoded<std::optional<api::LabelSelector>>{(*object)->resource_version,
                                                                                          std::move(value)})
             .first;
  }
  return *it->second.value;
}

}  // namespace kubesched::cluster
