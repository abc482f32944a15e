#include "plugins/volume_binding/volume_binding.h"

#include <array>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

namespace kubesched::plugins::volume_binding {
namespace {

const framework::StateKey kStateKey{"VolumeBinding"};

// What Filter found per node, then what Reserve decided. Filter runs concurrently over nodes
// with the cycle state read-only, hence the lock.
struct NodeVolumes {
  std::mutex mu;
  std::unordered_map<std::string, PodVolumes> by_node;  // guarded by mu
  bool has_static_bindings = false;                     // guarded by mu
  // Written by Reserve, read by PreBind (one after the other).
  bool all_bound = false;
  std::shared_ptr<const api::Node> reserved_node;
};

struct StateData final : framework::StateData {
  //! Null when the pod has no claims (PreFilter returned Skip).
  std::shared_ptr<const PodVolumeClaims> claims;
  std::shared_ptr<NodeVolumes> nodes = std::make_shared<NodeVolumes>();
  // Copies share the per-node results, as upstream's Clone returns the state itself: nothing a
  // what-if evaluation does can contradict them.
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<StateData>(*this); }
};

const framework::Status& StateNotFound() {
  static const framework::Status kStatus =
      framework::Status::Error("reading \"VolumeBinding\" from cycleState: not found");
  return kStatus;
}

// The conflict reasons' status for every combination of reasons, built once: Filter reports the
// same few reasons for thousands of nodes.
framework::Status ConflictStatus(ConflictReasons reasons) {
  static const auto kTable = [] {
    std::array<std::unique_ptr<const framework::StaticReasons>, 16> table;
    for (size_t i = 0; i < table.size(); ++i) {
      table[i] = std::make_unique<const framework::StaticReasons>(ReasonMessages(static_cast<ConflictReasons>(i)));
    }
    return table;
  }();
  return framework::Status(framework::Code::kUnschedulableAndUnresolvable, *kTable[reasons & 15]);
}

template <typename T>
std::shared_ptr<const T> StorageAs(const api::StorageObject* object) {
  if (object == nullptr) return nullptr;
  const auto* p = std::get_if<std::shared_ptr<const T>>(object);
  return p == nullptr ? nullptr : *p;
}

}  // namespace

VolumeBinding::VolumeBinding(VolumeBindingArgs args, Features features, framework::Handle& handle)
    : args_(std::move(args)), features_(features), handle_(handle), binder_(handle, args_.bind_timeout_seconds) {
  if (features_.storage_capacity_scoring && args_.shape) scorer_ = BuildScorerFunction(*args_.shape);
}

std::pair<framework::PreFilterResult, framework::Status> VolumeBinding::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod_info, std::span<const framework::NodeInfo* const>) {
  const api::Pod& pod = pod_info.pod();
  framework::StorageLister& storage = handle_.Storage();
  // podHasPVCs: the claims must exist, be alive and, for ephemeral volumes, be the pod's own.
  bool has_claims = false;
  for (const auto& volume : pod.spec.volumes) {
    if (volume.claim_name.empty() && !volume.ephemeral) continue;
    has_claims = true;
    const std::string name = api::ClaimNameOf(pod, volume);
    ClaimPtr claim = storage.ApiClaim(pod.metadata.namespace_, name);
    if (!claim) {
      // Normal for a generic ephemeral volume right after the pod was created.
      return {{},
              framework::Status::UnschedulableAndUnresolvable(
                  volume.ephemeral
                      ? fmt::format(
                            "waiting for ephemeral volume controller to create the persistentvolumeclaim \"{}\"", name)
                      : fmt::format("persistentvolumeclaim \"{}\" not found", name))};
    }
    if (claim->phase == api::PersistentVolumeClaimPhase::kLost) {
      return {{},
              framework::Status::UnschedulableAndUnresolvable(
                  fmt::format("persistentvolumeclaim \"{}\" bound to non-existent persistentvolume \"{}\"",
                              claim->metadata.name, claim->volume_name))};
    }
    if (claim->metadata.deletion_timestamp_ns) {
      return {{},
              framework::Status::UnschedulableAndUnresolvable(
                  fmt::format("persistentvolumeclaim \"{}\" is being deleted", claim->metadata.name))};
    }
    if (volume.ephemeral) {
      if (auto err = VolumeIsForPod(pod, *claim)) return {{}, framework::Status::UnschedulableAndUnresolvable(*err)};
    }
  }
  auto data = std::make_unique<StateData>();
  if (!has_claims) {
    // Reserve and PreBind still run: they find nothing to do.
    state.Write(kStateKey, std::move(data));
    return {{}, framework::Status::Skip()};
  }
  auto claims = binder_.GetPodVolumeClaims(pod);
  if (!claims) return {{}, framework::Status::Error(claims.error())};
  // The PV controller binds claims of immediate classes; the pod waits for it (a claim event).
  if (!claims->unbound_claims_immediate.empty()) {
    static const framework::StaticReasons kReasons{kErrReasonUnboundImmediate};
    return {{}, framework::Status(framework::Code::kUnschedulableAndUnresolvable, kReasons)};
  }
  data->claims = std::make_shared<const PodVolumeClaims>(std::move(*claims));
  state.Write(kStateKey, std::move(data));
  return {{}, framework::Status()};
}

framework::Status VolumeBinding::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::NodeInfo& node_info) {
  auto* s = state.Get<StateData>(kStateKey);
  if (s == nullptr) return StateNotFound();
  if (!s->claims || node_info.node() == nullptr) return framework::Status();
  const api::Node& node = *node_info.node();
  auto found = binder_.FindPodVolumes(pod.pod(), *s->claims, node);
  if (!found) return framework::Status::Error(found.error());
  if (found->reasons != 0) return ConflictStatus(found->reasons);
  std::lock_guard lock(s->nodes->mu);
  s->nodes->has_static_bindings |= !found->volumes.static_bindings.empty();
  s->nodes->by_node[node.metadata.name] = std::move(found->volumes);
  return framework::Status();
}

framework::Status VolumeBinding::PreScore(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                          std::span<const framework::NodeInfo* const> /*nodes*/) {
  if (!scorer_) return framework::Status::Skip();
  if (state.Get<StateData>(kStateKey) == nullptr) return StateNotFound();
  // With StorageCapacityScoring even pods without static bindings are scored (by provisioning).
  return framework::Status();
}

std::pair<int64_t, framework::Status> VolumeBinding::Score(const framework::CycleState& state,
                                                           const framework::PodInfo& /*pod*/,
                                                           const framework::NodeInfo& node_info) {
  if (!scorer_) return {0, framework::Status()};
  auto* s = state.Get<StateData>(kStateKey);
  if (s == nullptr) return {0, StateNotFound()};
  ClassResourceMap classes;
  {
    std::lock_guard lock(s->nodes->mu);
    auto it = s->nodes->by_node.find(node_info.name());
    if (it == s->nodes->by_node.end()) return {0, framework::Status()};
    const PodVolumes& volumes = it->second;
    if (!volumes.static_bindings.empty() || !features_.storage_capacity_scoring) {
      // Pre-provisioned volumes: how much of the chosen volumes' capacity the claims use.
      for (const auto& b : volumes.static_bindings) {
        StorageResource r = b.Resource();
        auto& c = classes[std::string(b.StorageClassName())];
        c.requested += r.requested;
        c.capacity += r.capacity;
      }
    } else {
      // Provisioning: how much of the node's capacity for the class the claims use. The
      // capacity is the node's, not one per claim: set, not summed.
      for (const auto& p : volumes.dynamic_provisions) {
        if (!p.node_capacity) continue;
        auto& c = classes[std::string(ClaimClass(*p.pvc))];
        c.capacity = p.node_capacity->capacity ? p.node_capacity->capacity->Value() : 0;
        c.requested += p.pvc->request.Value();
      }
    }
  }
  return {scorer_(classes), framework::Status()};
}

framework::Status VolumeBinding::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                                         const std::string& node_name) {
  auto* s = state.Get<StateData>(kStateKey);
  if (s == nullptr) return StateNotFound();
  NodeVolumes& nodes = *s->nodes;
  std::lock_guard lock(nodes.mu);
  auto it = nodes.by_node.find(node_name);
  if (it == nodes.by_node.end()) {
    nodes.all_bound = true;  // the pod has no claims
    return framework::Status();
  }
  auto all_bound = binder_.AssumePodVolumes(pod.pod(), node_name, it->second);
  if (!all_bound) return framework::Status::Error(all_bound.error());
  nodes.all_bound = *all_bound;
  // PreBind checks the bound volumes against the node's labels, after this cycle's snapshot.
  if (const framework::NodeInfo* info = handle_.SnapshotSharedLister().Get(node_name)) {
    nodes.reserved_node = info->node_ptr();
  }
  return framework::Status();
}

void VolumeBinding::Unreserve(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                              const std::string& node_name) {
  auto* s = state.Get<StateData>(kStateKey);
  if (s == nullptr) return;
  std::lock_guard lock(s->nodes->mu);
  auto it = s->nodes->by_node.find(node_name);
  if (it == s->nodes->by_node.end()) return;
  binder_.RevertAssumedPodVolumes(it->second);
}

framework::Status VolumeBinding::PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                                         const std::string& node_name) {
  auto* s = state.Get<StateData>(kStateKey);
  if (s == nullptr) return StateNotFound();
  if (s->nodes->all_bound) return framework::Status();
  PodVolumes volumes;
  {
    std::lock_guard lock(s->nodes->mu);
    auto it = s->nodes->by_node.find(node_name);
    if (it == s->nodes->by_node.end()) {
      return framework::Status::Error(fmt::format("no pod volumes found for node \"{}\"", node_name));
    }
    volumes = it->second;
  }
  return binder_.BindPodVolumes(pod.pod(), s->nodes->reserved_node.get(), node_name, volumes);
}

// ---------------------------------------------------------------------------------------------
// Queueing hints.

framework::QueueingHint IsSchedulableAfterPersistentVolumeClaimChange(const api::Pod& pod,
                                                                      const framework::EventObjects& event) {
  auto claim = StorageAs<api::PersistentVolumeClaim>(event.new_storage);
  if (!claim) return framework::QueueingHint::kQueue;
  if (claim->metadata.namespace_ != pod.metadata.namespace_) return framework::QueueingHint::kSkip;
  for (const auto& volume : pod.spec.volumes) {
    if (volume.claim_name.empty() && !volume.ephemeral) continue;
    // Creating the claim, and almost any change to it, may make the pod schedulable.
    if (api::ClaimNameOf(pod, volume) == claim->metadata.name) return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterStorageClassChange(const api::Pod& /*pod*/,
                                                             const framework::EventObjects& event) {
  auto new_class = StorageAs<api::StorageClass>(event.new_storage);
  auto old_class = StorageAs<api::StorageClass>(event.old_storage);
  if (!new_class || !old_class) return framework::QueueingHint::kQueue;  // a new class
  // volumeBindingMode cannot change; allowedTopologies can, and may admit more nodes.
  return new_class->allowed_topologies != old_class->allowed_topologies ? framework::QueueingHint::kQueue
                                                                        : framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterCSINodeChange(const api::Pod& /*pod*/, const framework::EventObjects& event) {
  auto new_node = StorageAs<api::CSINode>(event.new_storage);
  auto old_node = StorageAs<api::CSINode>(event.old_storage);
  if (!new_node || !old_node) return framework::QueueingHint::kQueue;
  // The migrated plugins decide how in-tree volumes' node affinity reads.
  const std::string* before = old_node->metadata.annotations.Find(kAnnotationMigratedPlugins);
  const std::string* after = new_node->metadata.annotations.Find(kAnnotationMigratedPlugins);
  const std::string_view a = before != nullptr ? std::string_view(*before) : std::string_view();
  const std::string_view b = after != nullptr ? std::string_view(*after) : std::string_view();
  return a != b ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterCSIStorageCapacityChange(const api::Pod& /*pod*/,
                                                                   const framework::EventObjects& event) {
  auto new_cap = StorageAs<api::CSIStorageCapacity>(event.new_storage);
  auto old_cap = StorageAs<api::CSIStorageCapacity>(event.old_storage);
  if (!new_cap || !old_cap) return framework::QueueingHint::kQueue;
  // nodeTopology and storageClassName cannot change; a larger volume limit may admit the pod.
  auto limit = [](const api::CSIStorageCapacity& c) -> const api::Quantity* {
    if (c.maximum_volume_size) return &*c.maximum_volume_size;
    return c.capacity ? &*c.capacity : nullptr;
  };
  const api::Quantity* old_limit = limit(*old_cap);
  const api::Quantity* new_limit = limit(*new_cap);
  if (new_limit != nullptr && (old_limit == nullptr || new_limit->Value() > old_limit->Value())) {
    return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterCSIDriverChange(const api::Pod& pod, const framework::EventObjects& event) {
  auto new_driver = StorageAs<api::CSIDriver>(event.new_storage);
  auto old_driver = StorageAs<api::CSIDriver>(event.old_storage);
  if (!new_driver || !old_driver) return framework::QueueingHint::kQueue;
  for (const auto& volume : pod.spec.volumes) {
    if (volume.csi_driver != new_driver->metadata.name) continue;
    // The driver stopped tracking capacity: its capacity no longer limits the pod.
    if (old_driver->storage_capacity && !new_driver->storage_capacity) return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> VolumeBinding::EventsToRegister() const {
  using framework::EventResource;
  namespace action = framework::action;
  constexpr framework::ActionType kAddOrUpdate = action::kAdd | action::kUpdate;
  return {
      // A missing or mis-configured class (allowedTopologies) may be fixed.
      {{EventResource::kStorageClass, kAddOrUpdate, "StorageClassAdd|Update"}, IsSchedulableAfterStorageClassChange},
      // Claims get bound to volumes, so any change to either may help.
      {{EventResource::kPersistentVolumeClaim, kAddOrUpdate, "PersistentVolumeClaimAdd|Update"},
       IsSchedulableAfterPersistentVolumeClaimChange},
      {{EventResource::kPersistentVolume, kAddOrUpdate, "PersistentVolumeAdd|Update"}, nullptr},
      // Node labels decide volume node affinity and allowedTopologies. With queueing hints (on
      // in kubesched) upstream does not register taint updates.
      {{EventResource::kNode, action::kAdd | action::kUpdateNodeLabel, "NodeAdd|UpdateNodeLabel"}, nullptr},
      // CSINode decides how in-tree volumes translate to CSI.
      {{EventResource::kCSINode, kAddOrUpdate, "CSINodeAdd|Update"}, IsSchedulableAfterCSINodeChange},
      // Capacity tracking: a driver that stops it, a capacity that grows.
      {{EventResource::kCSIDriver, action::kUpdate, "CSIDriverUpdate"}, IsSchedulableAfterCSIDriverChange},
      {{EventResource::kCSIStorageCapacity, kAddOrUpdate, "CSIStorageCapacityAdd|Update"},
       IsSchedulableAfterCSIStorageCapacityChange},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> NewWithFeatures(const framework::ArgsView& args,
                                                                               framework::Handle& handle,
                                                                               const Features& features) {
  auto parsed = ParseArgs(args, features);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<VolumeBinding>(std::move(*parsed), features, handle);
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  return NewWithFeatures(args, handle, Features());
}

}  // namespace kubesched::plugins::volume_binding
