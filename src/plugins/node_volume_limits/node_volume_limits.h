#pragma once
// NodeVolumeLimits: a node must be able to attach the pod's CSI volumes within each driver's
// limit, CSINode.spec.drivers[].allocatable.count (upstream's nodevolumelimits CSILimits plugin).
// Volumes are counted per driver by unique handle, the new pod's and those of the pods already on
// the node, so a volume shared by several pods counts once. In-tree disks (gcePersistentDisk,
// awsElasticBlockStore, azureDisk, cinder) count for the CSI driver they migrated to.

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

namespace kubesched::plugins::node_volume_limits {

//! Upstream's ErrReasonMaxVolumeCountExceeded.
inline constexpr std::string_view kErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count";

class NodeVolumeLimits final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeVolumeLimits";

  //! `random_volume_id_prefix` makes the placeholder handles of unbound claims (counted by their
  //! StorageClass's provisioner) unlike any real volume handle.
  NodeVolumeLimits(framework::Handle& handle, std::string random_volume_id_prefix);

  std::string_view Name() const override { return kName; }
  //! Skip when the pod has no claim, generic ephemeral volume or migratable in-tree inline disk
  //! (nothing it mounts is counted). Otherwise resolves each volume to its CSI driver and handle
  //! once for all nodes (claims, volumes and classes do not depend on the node). Never rejects:
  //! a missing claim is reported by Filter, as upstream does.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! Unschedulable kErrReasonMaxVolumeCountExceeded when, for a driver with an allocatable count
  //! on the node's CSINode, the volumes already used on the node plus the pod's new ones exceed
  //! it. Success on a node without CSINode or without counts. UnschedulableAndUnresolvable when
  //! the pod's claim does not exist; Error when an ephemeral claim is not the pod's or an inline
  //! disk's id cannot be translated. Works without PreFilter's state too (resolves the volumes).
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! CSINode added (no hint) or updated (a driver's count grew), an assigned pod with counted
  //! volumes deleted, a claim the pod uses added.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  framework::Handle& handle_;
  const std::string random_volume_id_prefix_;
};

//! Queue when the deleted pod was bound (or nominated) and had a claim, an ephemeral volume or a
//! migratable in-tree inline disk (upstream's isSchedulableAfterAssignedPodDeleted).
framework::QueueingHint IsSchedulableAfterAssignedPodDeleted(const api::Pod& pod, const framework::EventObjects& event);
//! Queue when the added claim is one the pod uses, directly or as an ephemeral volume's claim.
framework::QueueingHint IsSchedulableAfterPVCAdded(const api::Pod& pod, const framework::EventObjects& event);
//! Queue when some driver's allocatable count grew (an absent count reads as 0, as upstream).
framework::QueueingHint IsSchedulableAfterCSINodeUpdated(const api::Pod& pod, const framework::EventObjects& event);

//! The CSI volume handle csi-translation-lib gives an in-tree disk: EBS "aws://zone/vol-x" ->
//! "vol-x"; GCE PD "projects/UNSPECIFIED/zones/<zone>/disks/<name>" (zone from the PV's zone
//! label: `volume_labels`, null for an inline volume; several zones give the regional form);
//! Azure disk URI and Cinder id as they are. The translation's error message when the id has no
//! CSI form.
std::expected<std::string, std::string> TranslateInTreeHandle(const api::InlineDisk& disk,
                                                              const api::Labels* volume_labels);

//! Takes no args (ignored). The plugin reads claims, volumes, classes and CSINodes through
//! handle.Storage() at each call.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_volume_limits
