#include "plugins/volume_restrictions/volume_restrictions.h"

#include <algorithm>
#include <variant>

#include "api/storage_types.h"
#include "util/go_quote.h"

namespace kubesched::plugins::volume_restrictions {
namespace {

using framework::QueueingHint;

const framework::StateKey kPreFilterStateKey{"PreFilterVolumeRestrictions"};

struct PreFilterState final : framework::StateData {
  //! The pod's in-tree disks that other pods on a node may conflict with (copied: a few strings,
  //! and only pods with such disks carry any).
  std::vector<api::InlineDisk> disks;
  //! The pod's namespace: claims are namespaced, and so are the references counted below.
  std::string namespace_;
  //! The names of the pod's claims with the ReadWriteOncePod access mode, without repeats.
  std::vector<std::string> read_write_once_pod_claims;
  //! How many of those claims pods of the snapshot use (upstream's conflictingPVCRefCount);
  //! AddPod and RemovePod move it by the references of the pod added or removed.
  int conflicting_claim_refs = 0;

  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }

  //! The references `other` makes to the pod's ReadWriteOncePod claims.
  int RefsOf(const api::Pod& other) const {
    // Upstream compares claim names only; a pod of another namespace names another claim.
    if (read_write_once_pod_claims.empty() || other.metadata.namespace_ != namespace_) return 0;
    int refs = 0;
    for (const auto& v : other.spec.volumes) {
      if (!v.claim_name.empty() &&
          std::ranges::find(read_write_once_pod_claims, v.claim_name) != read_write_once_pod_claims.end()) {
        ++refs;
      }
    }
    return refs;
  }
};

std::string MissingStateMessage() {
  return "cannot read " + util::GoQuote(kPreFilterStateKey.name()) + " from cycleState";
}

// Upstream's needsRestrictionsCheck: the in-tree sources whose disks attach to one node at a time.
bool NeedsRestrictionsCheck(const api::Volume& volume) {
  if (!volume.disk) return false;
  switch (volume.disk->type) {
    case api::InlineDiskType::kGCEPersistentDisk:
    case api::InlineDiskType::kAWSElasticBlockStore:
    case api::InlineDiskType::kISCSI:
    case api::InlineDiskType::kRBD:
      return true;
    default:
      return false;
  }
}

std::vector<api::InlineDisk> DisksToCheck(const api::Pod& pod) {
  std::vector<api::InlineDisk> disks;
  for (const auto& v : pod.spec.volumes) {
    if (NeedsRestrictionsCheck(v)) disks.push_back(*v.disk);
  }
  return disks;
}

// Upstream's haveOverlap; monitor lists hold a handful of addresses, so a nested scan beats a set.
bool HaveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& x : a) {
    if (std::ranges::find(b, x) != b.end()) return true;
  }
  return false;
}

bool ConflictsWithPod(std::span<const api::InlineDisk> disks, const api::Pod& existing) {
  for (const auto& ev : existing.spec.volumes) {
    if (!ev.disk) continue;
    for (const auto& d : disks) {
      if (IsDiskConflict(d, *ev.disk)) return true;
    }
  }
  return false;
}

// Upstream's satisfyVolumeConflicts: no pod on the node mounts one of `disks` in a conflicting way.
bool SatisfiesVolumeConflicts(std::span<const api::InlineDisk> disks, const framework::NodeInfo& node_info) {
  if (disks.empty()) return true;
  for (const auto& p : node_info.pods()) {
    if (ConflictsWithPod(disks, p->pod())) return false;
  }
  return true;
}

// How many of the claims `state` lists some pod of the snapshot uses (upstream asks the
// snapshot's PVC reference counts, IsPVCUsedByPods; kubesched's NodeInfo keeps none, so the pods
// are scanned, and only for pods with a ReadWriteOncePod claim, which are rare).
int CountClaimsInUse(const PreFilterState& state, const api::Pod& pod,
                     std::span<const framework::NodeInfo* const> nodes) {
  const auto& claims = state.read_write_once_pod_claims;
  if (claims.empty()) return 0;
  std::vector<bool> used(claims.size(), false);
  size_t remaining = claims.size();
  for (const framework::NodeInfo* node : nodes) {
    for (const auto& info : node->pods()) {
      const api::Pod& other = info->pod();
      if (other.metadata.namespace_ != state.namespace_) continue;
      // A pod never conflicts with itself (were it in the snapshot already).
      if (!pod.metadata.uid.empty() && other.metadata.uid == pod.metadata.uid) continue;
      for (const auto& v : other.spec.volumes) {
        if (v.claim_name.empty()) continue;
        auto it = std::ranges::find(claims, v.claim_name);
        if (it == claims.end()) continue;
        const size_t i = static_cast<size_t>(it - claims.begin());
        if (used[i]) continue;
        used[i] = true;
        if (--remaining == 0) return static_cast<int>(claims.size());
      }
    }
  }
  return static_cast<int>(claims.size() - remaining);
}

framework::Status DiskConflict() {
  static const framework::StaticReasons kReasons{kErrReasonDiskConflict};
  return framework::Status(framework::Code::kUnschedulable, kReasons);
}

framework::Status ReadWriteOncePodConflict() {
  static const framework::StaticReasons kReasons{kErrReasonReadWriteOncePodConflict};
  return framework::Status(framework::Code::kUnschedulable, kReasons);
}

}  // namespace

bool IsDiskConflict(const api::InlineDisk& disk, const api::InlineDisk& existing) {
  if (disk.type != existing.type) return false;
  const bool both_read_only = disk.read_only && existing.read_only;
  switch (disk.type) {
    case api::InlineDiskType::kGCEPersistentDisk:
    case api::InlineDiskType::kISCSI:
      // iSCSI volumes are RWO or ROX: one read-write mount at most.
      return disk.id == existing.id && !both_read_only;
    case api::InlineDiskType::kAWSElasticBlockStore:
      // An EBS volume attaches to one instance, whatever the mode.
      return disk.id == existing.id;
    case api::InlineDiskType::kRBD:
      // The same image: a shared Ceph monitor, the same RADOS pool and image name.
      return HaveOverlap(disk.monitors, existing.monitors) && disk.pool == existing.pool && disk.id == existing.id &&
             !both_read_only;
    default:
      return false;
  }
}

std::pair<framework::PreFilterResult, framework::Status> VolumeRestrictions::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod, std::span<const framework::NodeInfo* const> nodes) {
  const api::Pod& p = pod.pod();
  auto s = std::make_unique<PreFilterState>();
  s->disks = DisksToCheck(p);
  s->namespace_ = p.metadata.namespace_;
  // Every claim the pod names must exist (its access modes decide whether it is checked), as
  // upstream's readWriteOncePodPVCsForPod. Ephemeral volumes' claims are the pod's own.
  const framework::StorageLister& storage = handle_.Storage();
  for (const auto& v : p.spec.volumes) {
    if (v.claim_name.empty()) continue;
    auto claim = storage.Claim(p.metadata.namespace_, v.claim_name);
    if (claim == nullptr) {
      return {{},
              framework::Status::UnschedulableAndUnresolvable("persistentvolumeclaim " + util::GoQuote(v.claim_name) +
                                                              " not found")};
    }
    if (!claim->HasAccessMode(api::PersistentVolumeAccessMode::kReadWriteOncePod)) continue;
    if (std::ranges::find(s->read_write_once_pod_claims, v.claim_name) == s->read_write_once_pod_claims.end()) {
      s->read_write_once_pod_claims.push_back(v.claim_name);
    }
  }
  s->conflicting_claim_refs = CountClaimsInUse(*s, p, nodes);
  if (s->disks.empty() && s->conflicting_claim_refs == 0) return {{}, framework::Status::Skip()};
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, framework::Status::Success()};
}

framework::Status VolumeRestrictions::AddPod(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                             const framework::PodInfo& pod_to_add,
                                             const framework::NodeInfo& /*node_info*/) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return framework::Status::Error(MissingStateMessage());
  s->conflicting_claim_refs += s->RefsOf(pod_to_add.pod());
  return framework::Status::Success();
}

framework::Status VolumeRestrictions::RemovePod(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                                const framework::PodInfo& pod_to_remove,
                                                const framework::NodeInfo& /*node_info*/) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return framework::Status::Error(MissingStateMessage());
  s->conflicting_claim_refs -= s->RefsOf(pod_to_remove.pod());
  return framework::Status::Success();
}

framework::Status VolumeRestrictions::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                             const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) {
    // Upstream checks the disks (from the pod's spec) before it reads the state.
    if (!SatisfiesVolumeConflicts(DisksToCheck(pod.pod()), node_info)) return DiskConflict();
    return framework::Status::Error(MissingStateMessage());
  }
  if (!SatisfiesVolumeConflicts(s->disks, node_info)) return DiskConflict();
  if (s->conflicting_claim_refs > 0) return ReadWriteOncePodConflict();
  return framework::Status::Success();
}

QueueingHint IsSchedulableAfterPodDeleted(const api::Pod& pod, const framework::EventObjects& event) {
  const api::Pod* deleted = event.old_pod;
  if (deleted == nullptr) return QueueingHint::kQueue;
  // In-tree disks are not namespaced: a pod of any namespace may have held the disk (upstream
  // skips other namespaces before this check, which would leave the pod waiting for the flush).
  const auto disks = DisksToCheck(pod);
  if (!disks.empty() && ConflictsWithPod(disks, *deleted)) return QueueingHint::kQueue;
  if (deleted->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  // A deleted pod that used one of the pod's claims may have freed a ReadWriteOncePod claim. As
  // upstream, the claims' access modes are not looked up here: hints must stay cheap.
  for (const auto& dv : deleted->spec.volumes) {
    if (dv.claim_name.empty()) continue;
    for (const auto& v : pod.spec.volumes) {
      if (v.claim_name == dv.claim_name) return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

QueueingHint IsSchedulableAfterPersistentVolumeClaimAdded(const api::Pod& pod, const framework::EventObjects& event) {
  const auto* object =
      event.new_storage ? std::get_if<std::shared_ptr<const api::PersistentVolumeClaim>>(event.new_storage) : nullptr;
  if (object == nullptr || *object == nullptr) return QueueingHint::kQueue;  // not a claim: be safe
  const api::PersistentVolumeClaim& claim = **object;
  if (claim.metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  for (const auto& v : pod.spec.volumes) {
    // The pod was rejected in PreFilter for a missing claim: this may be it.
    if (!v.claim_name.empty() && v.claim_name == claim.metadata.name) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> VolumeRestrictions::EventsToRegister() const {
  using framework::EventResource;
  namespace action = framework::action;
  return {
      // Conflicting disks and claims are released when the pods using them go; spec.volumes is
      // immutable, so pod updates never matter.
      {{EventResource::kAssignedPod, action::kDelete, "AssignedPodDelete"}, IsSchedulableAfterPodDeleted},
      // A new node has no pods, hence no conflicting disk. With queueing hints, upstream
      // registers no node update (it only worked around preCheck dropping NodeAdd).
      {framework::events::NodeAdd(), nullptr},
      // PreFilter rejects a pod whose claim does not exist yet.
      {{EventResource::kPersistentVolumeClaim, action::kAdd, "PersistentVolumeClaimAdd"},
       IsSchedulableAfterPersistentVolumeClaimAdded},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& handle) {
  return std::make_unique<VolumeRestrictions>(handle);
}

}  // namespace kubesched::plugins::volume_restrictions
