#pragma once
// VolumeBinding: a pod's PersistentVolumeClaims must be bindable on the node (upstream's
// volumebinding plugin). Bound claims' volumes must be reachable from the node; unbound claims
// of WaitForFirstConsumer classes get the smallest fitting pre-provisioned volume the node can
// reach, or else are provisioned for the node when their class and its CSI capacity allow it.
// Reserve records the choice in the assume cache, PreBind writes it and waits for the PV
// controller. Upstream's SignPlugin (pod signatures for batched scheduling) has no counterpart in
// kubesched's framework and is left out.

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
#include "plugins/volume_binding/args.h"
#include "plugins/volume_binding/binder.h"
#include "plugins/volume_binding/scorer.h"

namespace kubesched::plugins::volume_binding {

//! PreFilter: a claim of an immediate class is not bound yet (the PV controller binds those).
inline constexpr std::string_view kErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims";

class VolumeBinding final : public framework::PreFilterPlugin,
                            public framework::FilterPlugin,
                            public framework::PreScorePlugin,
                            public framework::ScorePlugin,
                            public framework::ReservePlugin,
                            public framework::PreBindPlugin,
                            public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeBinding";

  //! `args` must be valid for `features` (ParseArgs); `handle` outlives the plugin.
  VolumeBinding(VolumeBindingArgs args, Features features, framework::Handle& handle);
  VolumeBinding(const VolumeBinding&) = delete;
  VolumeBinding& operator=(const VolumeBinding&) = delete;

  std::string_view Name() const override { return kName; }

  //! Skip when the pod has no claim (persistentVolumeClaim or ephemeral volume).
  //! UnschedulableAndUnresolvable when a claim is missing (`persistentvolumeclaim "c" not found`,
  //! or for an ephemeral one `waiting for ephemeral volume controller to create the
  //! persistentvolumeclaim "c"`), lost, being deleted, not the pod's own (ephemeral), or unbound
  //! in an immediate class (kErrReasonUnboundImmediate). Otherwise stores the claims, split and
  //! prepared for Filter.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! UnschedulableAndUnresolvable with upstream's conflict reasons (kErrReasonNodeConflict,
  //! kErrReasonBindConflict, kErrReasonNotEnoughSpace, kErrReasonPVNotExist) when the node cannot
  //! host the volumes; remembers what binding them on the node takes. Error without PreFilter.
  //! Not node-local: the verdict depends on claims, volumes and classes.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Skip unless StorageCapacityScoring is on.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;
  //! The shape's score of the storage the pod would use on the node: its static bindings'
  //! requests against the volumes' capacity per class, or without static bindings its
  //! provisioned claims against the node's CSIStorageCapacity.
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;
  //! Assumes the node's bindings and provisionings (AssumePodVolumes). Error when the assume
  //! cache refuses them.
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  //! Reverts what Reserve assumed; idempotent.
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod, const std::string& node_name) override;
  //! Nothing when every claim was bound at Reserve; otherwise BindPodVolumes (writes, then waits
  //! up to bindTimeoutSeconds). Error when a write fails, binding fails or times out.
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  //! StorageClass, PersistentVolumeClaim and CSIStorageCapacity add/update, PersistentVolume
  //! add/update, node add and label update, CSINode add/update and CSIDriver update, with
  //! upstream's queueing hints.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  const VolumeBinder& binder() const { return binder_; }

 private:
  VolumeBindingArgs args_;
  Features features_;
  framework::Handle& handle_;
  VolumeBinder binder_;
  //! Null unless StorageCapacityScoring is on.
  VolumeCapacityScorer scorer_;
};

// Upstream's queueing hints (exposed for tests).
framework::QueueingHint IsSchedulableAfterPersistentVolumeClaimChange(const api::Pod& pod,
                                                                      const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterStorageClassChange(const api::Pod& pod, const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterCSINodeChange(const api::Pod& pod, const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterCSIStorageCapacityChange(const api::Pod& pod,
                                                                   const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterCSIDriverChange(const api::Pod& pod, const framework::EventObjects& event);

//! Parses and validates VolumeBindingArgs with `features`, then builds the plugin.
std::expected<std::unique_ptr<framework::Plugin>, std::string> NewWithFeatures(const framework::ArgsView& args,
                                                                               framework::Handle& handle,
                                                                               const Features& features);
//! NewWithFeatures with the default features (the registered factory).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::volume_binding
