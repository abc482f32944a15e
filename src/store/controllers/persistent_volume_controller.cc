#include "store/controllers/persistent_volume_controller.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "store/controllers/object_util.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

template <typename T>
std::shared_ptr<const T> GetView(const Store& store, const ResourceType& type, std::string_view namespace_,
                                 std::string_view name) {
  auto object = store.Get(type, namespace_, name);
  if (!object) return nullptr;
  return (*object)->View<T>();
}

template <typename T>
std::vector<std::shared_ptr<const T>> ListViews(const Store& store, const ResourceType& type) {
  std::vector<std::shared_ptr<const T>> out;
  for (const ObjectPtr& o : ListAll(store, type, "")) {
    if (auto view = o->View<T>()) out.push_back(std::move(view));
  }
  return out;
}

json::Value Str(std::string_view s, json::Allocator& a) { return json::MakeString(s, a); }

json::Value AccessModes(const std::vector<api::PersistentVolumeAccessMode>& modes, json::Allocator& a) {
  json::Value list(rapidjson::kArrayType);
  for (auto m : modes) list.PushBack(Str(api::ToString(m), a), a);
  return list;
}

json::Value StorageList(const api::Quantity& q, json::Allocator& a) {
  json::Value list(rapidjson::kObjectType);
  json::Set(list, api::kResourceStorage, Str(q.text(), a), a);
  return list;
}

// metadata.resourceVersion in a patch: the write fails when the object changed meanwhile.
void Guard(json::Document& patch, const api::ObjectMeta& meta) {
  auto& a = patch.GetAllocator();
  json::Set(json::Child(patch, "metadata", a), "resourceVersion", Str(meta.resource_version, a), a);
}

bool ClaimRefNames(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  return volume.claim_ref && volume.claim_ref->namespace_ == claim.metadata.namespace_ &&
         volume.claim_ref->name == claim.metadata.name &&
         (volume.claim_ref->uid.empty() || volume.claim_ref->uid == claim.metadata.uid);
}

// Whether `volume` could serve `claim` (upstream's checkVolumeSatisfyClaim and the matcher's
// filters, node affinity aside: that is the scheduler's, for WaitForFirstConsumer claims).
bool Satisfies(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  if (volume.metadata.deletion_timestamp_ns) return false;
  if (volume.phase == api::PersistentVolumePhase::kReleased || volume.phase == api::PersistentVolumePhase::kFailed) {
    return false;
  }
  if (volume.claim_ref && !ClaimRefNames(volume, claim)) return false;
  if (volume.storage_class_name != claim.ClassName() || volume.volume_mode != claim.volume_mode) return false;
  for (auto mode : claim.access_modes) {
    if (!volume.HasAccessMode(mode)) return false;
  }
  if (volume.capacity.Value() < claim.request.Value()) return false;
  return !claim.selector || claim.selector->Matches(volume.metadata.labels);
}

api::Labels LabelsOf(const LabelPairs& pairs) { return api::Labels::FromEntries(pairs); }

}  // namespace

PersistentVolumeController::PersistentVolumeController(const ControllerContext& ctx)
    : ctx_(ctx),
      claims_(*ctx.store.FindResource("", "persistentvolumeclaims")),
      volumes_(*ctx.store.FindResource("", "persistentvolumes")),
      classes_(*ctx.store.FindResource("storage.k8s.io", "storageclasses")),
      drivers_(*ctx.store.FindResource("storage.k8s.io", "csidrivers")),
      csi_nodes_(*ctx.store.FindResource("storage.k8s.io", "csinodes")),
      capacities_(*ctx.store.FindResource("storage.k8s.io", "csistoragecapacities")) {}

void PersistentVolumeController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  const ResourceType* type = event.object->type;
  if (type == &claims_) {
    if (event.type == EventType::kDeleted) {
      // Its volume is released (or deleted) by the volume's sync.
      for (const auto& volume : ListViews<api::PersistentVolume>(ctx_.store, volumes_)) {
        if (volume->claim_ref && volume->claim_ref->uid == event.object->uid) SyncVolume(*volume);
      }
      return;
    }
    if (auto claim = event.object->View<api::PersistentVolumeClaim>()) SyncClaim(*claim);
  } else if (type == &volumes_) {
    if (event.type == EventType::kDeleted) return;
    auto volume = event.object->View<api::PersistentVolume>();
    if (!volume) return;
    SyncVolume(*volume);
    if (!volume->claim_ref) SyncPendingClaims();
  } else if (type == &classes_ && event.type == EventType::kAdded) {
    SyncPendingClaims();
  }
}

void PersistentVolumeController::Resync() {
  for (const auto& volume : ListViews<api::PersistentVolume>(ctx_.store, volumes_)) SyncVolume(*volume);
  // Every claim: one pre-bound to a volume (spec.volumeName) is completed too.
  for (const auto& claim : ListViews<api::PersistentVolumeClaim>(ctx_.store, claims_)) SyncClaim(*claim);
}

void PersistentVolumeController::SyncPendingClaims() {
  for (const auto& claim : ListViews<api::PersistentVolumeClaim>(ctx_.store, claims_)) {
    if (claim->volume_name.empty()) SyncClaim(*claim);
  }
}

void PersistentVolumeController::SyncClaim(const api::PersistentVolumeClaim& claim) {
  if (claim.metadata.deletion_timestamp_ns) return;
  if (!claim.volume_name.empty()) {
    // Bound or pre-bound to a volume: complete what is missing.
    auto volume = GetView<api::PersistentVolume>(ctx_.store, volumes_, "", claim.volume_name);
    if (!volume) return;  // a user pre-bound it to a volume that does not exist (yet)
    if (!volume->claim_ref) {
      ClaimVolume(*volume, claim);
    } else if (ClaimRefNames(*volume, claim) && claim.phase != api::PersistentVolumeClaimPhase::kBound) {
      BindClaim(claim, *volume);
    }
    return;
  }
  // A volume already names the claim (the scheduler's static binding, a pre-bound volume).
  for (const auto& volume : ListViews<api::PersistentVolume>(ctx_.store, volumes_)) {
    if (ClaimRefNames(*volume, claim) && !volume->metadata.deletion_timestamp_ns) {
      BindClaim(claim, *volume);
      return;
    }
  }
  std::shared_ptr<const api::StorageClass> sc;
  if (!claim.ClassName().empty()) {
    sc = GetView<api::StorageClass>(ctx_.store, classes_, "", claim.ClassName());
    if (!sc) return;  // upstream: "storageclass.storage.k8s.io \"x\" not found"; waits for it
  }
  if (sc && sc->volume_binding_mode == api::VolumeBindingMode::kWaitForFirstConsumer) {
    // The scheduler picks the volume (a claimRef) or the node (the annotation).
    if (const std::string* node = claim.metadata.annotations.Find(api::kAnnotationSelectedNode)) {
      Provision(claim, *sc, *node);
    }
    return;
  }
  std::shared_ptr<const api::PersistentVolume> best;
  for (const auto& volume : ListViews<api::PersistentVolume>(ctx_.store, volumes_)) {
    if (!Satisfies(*volume, claim)) continue;
    if (!best || volume->capacity.Value() < best->capacity.Value()) best = volume;
  }
  if (best) {
    ClaimVolume(*best, claim);
    return;
  }
  if (sc) Provision(claim, *sc, "");
}

void PersistentVolumeController::SyncVolume(const api::PersistentVolume& volume) {
  if (volume.metadata.deletion_timestamp_ns) return;
  if (!volume.claim_ref) {
    if (volume.phase != api::PersistentVolumePhase::kAvailable) SetVolumePhase(volume, "Available");
    return;
  }
  auto claim =
      GetView<api::PersistentVolumeClaim>(ctx_.store, claims_, volume.claim_ref->namespace_, volume.claim_ref->name);
  if (claim && !volume.claim_ref->uid.empty() && claim->metadata.uid != volume.claim_ref->uid) claim = nullptr;
  if (!claim) {
    // The claim is gone: a volume it was bound to is released; one only pre-bound waits for it.
    if (volume.phase != api::PersistentVolumePhase::kBound) {
      if (volume.phase != api::PersistentVolumePhase::kAvailable) SetVolumePhase(volume, "Available");
      return;
    }
    if (volume.reclaim_policy == "Delete") {
      DeleteOptions options;
      options.precondition_uid = volume.metadata.uid;
      (void)ctx_.store.Delete(volumes_, "", volume.metadata.name, options);
    } else {
      SetVolumePhase(volume, "Released");
    }
    return;
  }
  if (claim->volume_name.empty() || claim->volume_name == volume.metadata.name) {
    if (claim->volume_name.empty() || claim->phase != api::PersistentVolumeClaimPhase::kBound) {
      BindClaim(*claim, volume);
    }
    if (volume.phase != api::PersistentVolumePhase::kBound) SetVolumePhase(volume, "Bound");
  }
}

void PersistentVolumeController::ClaimVolume(const api::PersistentVolume& volume,
                                             const api::PersistentVolumeClaim& claim) {
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  Guard(patch, volume.metadata);
  json::Set(json::Child(json::Child(patch, "metadata", a), "annotations", a), api::kAnnotationBoundByController,
            Str("yes", a), a);
  json::Value& ref = json::Child(json::Child(patch, "spec", a), "claimRef", a);
  json::Set(ref, "kind", Str("PersistentVolumeClaim", a), a);
  json::Set(ref, "apiVersion", Str("v1", a), a);
  json::Set(ref, "namespace", Str(claim.metadata.namespace_, a), a);
  json::Set(ref, "name", Str(claim.metadata.name, a), a);
  json::Set(ref, "uid", Str(claim.metadata.uid, a), a);
  (void)ctx_.store.MergePatch(volumes_, "", volume.metadata.name, patch, "");
  // The volume's event completes the claim's side (SyncVolume).
}

void PersistentVolumeController::BindClaim(const api::PersistentVolumeClaim& claim,
                                           const api::PersistentVolume& volume) {
  if (claim.volume_name != volume.metadata.name) {
    json::Document patch(rapidjson::kObjectType);
    auto& a = patch.GetAllocator();
    Guard(patch, claim.metadata);
    json::Value& annotations = json::Child(json::Child(patch, "metadata", a), "annotations", a);
    json::Set(annotations, api::kAnnotationBindCompleted, Str("yes", a), a);
    json::Set(annotations, api::kAnnotationBoundByController, Str("yes", a), a);
    json::Set(json::Child(patch, "spec", a), "volumeName", Str(volume.metadata.name, a), a);
    if (!ctx_.store.MergePatch(claims_, claim.metadata.namespace_, claim.metadata.name, patch, "")) return;
  }
  json::Document status(rapidjson::kObjectType);
  auto& a = status.GetAllocator();
  json::Value& s = json::Child(status, "status", a);
  json::Set(s, "phase", Str("Bound", a), a);
  json::Set(s, "accessModes", AccessModes(volume.access_modes, a), a);
  json::Set(s, "capacity", StorageList(volume.capacity, a), a);
  (void)ctx_.store.MergePatch(claims_, claim.metadata.namespace_, claim.metadata.name, status, "status");
}

void PersistentVolumeController::SetVolumePhase(const api::PersistentVolume& volume, std::string_view phase) {
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Set(json::Child(patch, "status", a), "phase", Str(phase, a), a);
  (void)ctx_.store.MergePatch(volumes_, "", volume.metadata.name, patch, "status");
}

void PersistentVolumeController::Provision(const api::PersistentVolumeClaim& claim, const api::StorageClass& sc,
                                           const std::string& node_name) {
  if (sc.provisioner == api::kNoProvisioner) return;  // only pre-created volumes serve this class
  const std::string pv_name = "pvc-" + claim.metadata.uid;
  if (GetView<api::PersistentVolume>(ctx_.store, volumes_, "", pv_name)) return;  // already made
  api::Labels node_labels;
  if (!node_name.empty()) {
    NodeFactsPtr node = ctx_.nodes.Get(node_name);
    if (!node) return;
    node_labels = LabelsOf(node->labels());
  }
  // Storage capacity, where the driver publishes it: a CSIStorageCapacity of the class for the
  // node's topology with room for the request.
  std::shared_ptr<const api::CSIStorageCapacity> capacity;
  auto driver = GetView<api::CSIDriver>(ctx_.store, drivers_, "", sc.provisioner);
  if (!node_name.empty() && driver && driver->storage_capacity) {
    for (const auto& c : ListViews<api::CSIStorageCapacity>(ctx_.store, capacities_)) {
      if (c->storage_class_name != sc.metadata.name || !c->node_topology || !c->node_topology->Matches(node_labels) ||
          !c->capacity) {
        continue;
      }
      if (c->capacity->Value() < claim.request.Value()) continue;
      if (c->maximum_volume_size && c->maximum_volume_size->Value() < claim.request.Value()) continue;
      capacity = c;
      break;
    }
    if (!capacity) {
      // The external provisioner gives the claim back to the scheduler.
      json::Document patch(rapidjson::kObjectType);
      auto& a = patch.GetAllocator();
      json::Set(json::Child(json::Child(patch, "metadata", a), "annotations", a), api::kAnnotationSelectedNode,
                json::Value(), a);
      (void)ctx_.store.MergePatch(claims_, claim.metadata.namespace_, claim.metadata.name, patch, "");
      return;
    }
  }
  // The volume's accessible topology: the keys the driver reports on the node's CSINode, else
  // those the class or the capacity constrain.
  std::vector<std::string> keys;
  if (!node_name.empty()) {
    if (auto csi_node = GetView<api::CSINode>(ctx_.store, csi_nodes_, "", node_name)) {
      if (const api::CSINodeDriver* d = csi_node->Driver(sc.provisioner)) keys = d->topology_keys;
    }
    if (keys.empty()) {
      for (const auto& term : sc.allowed_topologies) {
        for (const auto& r : term) keys.push_back(r.key);
      }
    }
    if (keys.empty() && capacity) {
      for (const auto& [k, v] : capacity->node_topology->match_labels) keys.push_back(k);
    }
  }
  json::Document pv(rapidjson::kObjectType);
  auto& a = pv.GetAllocator();
  json::Set(pv, "apiVersion", Str("v1", a), a);
  json::Set(pv, "kind", Str("PersistentVolume", a), a);
  json::Value& meta = json::Child(pv, "metadata", a);
  json::Set(meta, "name", Str(pv_name, a), a);
  json::Set(json::Child(meta, "annotations", a), api::kAnnotationProvisionedBy, Str(sc.provisioner, a), a);
  json::Value& spec = json::Child(pv, "spec", a);
  json::Set(spec, "capacity", StorageList(claim.request, a), a);
  json::Set(spec, "accessModes", AccessModes(claim.access_modes, a), a);
  json::Set(spec, "persistentVolumeReclaimPolicy", Str(sc.reclaim_policy, a), a);
  json::Set(spec, "storageClassName", Str(sc.metadata.name, a), a);
  json::Set(spec, "volumeMode", Str(claim.volume_mode == api::PersistentVolumeMode::kBlock ? "Block" : "Filesystem", a),
            a);
  json::Value& csi = json::Child(spec, "csi", a);
  json::Set(csi, "driver", Str(sc.provisioner, a), a);
  json::Set(csi, "volumeHandle", Str(pv_name, a), a);
  json::Value& ref = json::Child(spec, "claimRef", a);
  json::Set(ref, "kind", Str("PersistentVolumeClaim", a), a);
  json::Set(ref, "apiVersion", Str("v1", a), a);
  json::Set(ref, "namespace", Str(claim.metadata.namespace_, a), a);
  json::Set(ref, "name", Str(claim.metadata.name, a), a);
  json::Set(ref, "uid", Str(claim.metadata.uid, a), a);
  json::Value expressions(rapidjson::kArrayType);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& key : keys) {
    const std::string* value = node_labels.Find(key);
    if (value == nullptr) continue;
    json::Value req(rapidjson::kObjectType);
    json::Set(req, "key", Str(key, a), a);
    json::Set(req, "operator", Str("In", a), a);
    json::Value values(rapidjson::kArrayType);
    values.PushBack(Str(*value, a), a);
    json::Set(req, "values", std::move(values), a);
    expressions.PushBack(std::move(req), a);
  }
  if (!expressions.Empty()) {
    json::Value term(rapidjson::kObjectType);
    json::Set(term, "matchExpressions", std::move(expressions), a);
    json::Value terms(rapidjson::kArrayType);
    terms.PushBack(std::move(term), a);
    json::Set(json::Child(json::Child(spec, "nodeAffinity", a), "required", a), "nodeSelectorTerms", std::move(terms),
              a);
  }
  if (!ctx_.store.Create(volumes_, "", std::move(pv))) return;
  if (capacity) {
    // What the driver would report next: the volume's size taken from the capacity.
    const int64_t left = std::max<int64_t>(0, capacity->capacity->Value() - claim.request.Value());
    json::Document patch(rapidjson::kObjectType);
    auto& pa = patch.GetAllocator();
    json::Set(patch, "capacity", Str(std::to_string(left), pa), pa);
    (void)ctx_.store.MergePatch(capacities_, capacity->metadata.namespace_, capacity->metadata.name, patch, "");
  }
}

}  // namespace kubesched::store::controllers
