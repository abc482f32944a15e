#pragma once
// VolumeRestrictions: in-tree disks that cannot be mounted twice on one node (GCE PD, AWS EBS,
// iSCSI, Ceph RBD) and ReadWriteOncePod claims that only one pod in the cluster may use (upstream's
// volumerestrictions plugin).

#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::volume_restrictions {

inline constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
inline constexpr std::string_view kErrReasonReadWriteOncePodConflict =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

class VolumeRestrictions final : public framework::PreFilterPlugin,
                                 public framework::PreFilterExtensions,
                                 public framework::FilterPlugin,
                                 public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeRestrictions";

  //! Reads claims through handle.Storage() at each PreFilter; the handle outlives the plugin.
  explicit VolumeRestrictions(framework::Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  //! Collects the pod's in-tree disks that need a conflict check and its ReadWriteOncePod claims,
  //! and counts the claims some pod of the snapshot (`nodes`) already uses. Skip when the pod has
  //! no such disk and none of its claims is in use. UnschedulableAndUnresolvable
  //! `persistentvolumeclaim "<name>" not found` when a claim the pod names does not exist.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  framework::PreFilterExtensions* GetPreFilterExtensions() override { return this; }
  //! Count the ReadWriteOncePod claims of the pod that `pod_to_add` (removed: `pod_to_remove`)
  //! uses, so that preemption sees a claim freed by its victims. Error when PreFilter did not run.
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfo& pod_to_add, const framework::NodeInfo& node_info) override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfo& pod_to_remove, const framework::NodeInfo& node_info) override;
  //! Unschedulable kErrReasonDiskConflict when a pod on the node mounts one of the pod's disks in
  //! a conflicting way; Unschedulable kErrReasonReadWriteOncePodConflict when a ReadWriteOncePod
  //! claim of the pod is in use anywhere (preemption can free both). Error when PreFilter did not
  //! run. Not node-local: the claim check depends on every node's pods.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Assigned pod deletions (queued when the deleted pod held a conflicting disk or one of the
  //! pod's claims), node additions, and claim additions (queued when the pod names the claim).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  framework::Handle& handle_;
};

//! Whether mounting `disk` conflicts with `existing`, mounted by another pod on the same node:
//! GCE PD and iSCSI: the same disk unless both are read-only; AWS EBS: the same volume, always;
//! RBD: a shared monitor, the same pool and image, unless both are read-only. Other types never
//! conflict here.
bool IsDiskConflict(const api::InlineDisk& disk, const api::InlineDisk& existing);

framework::QueueingHint IsSchedulableAfterPodDeleted(const api::Pod& pod, const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterPersistentVolumeClaimAdded(const api::Pod& pod,
                                                                     const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::volume_restrictions
