#pragma once
// DynamicResources: a pod's ResourceClaims (Dynamic Resource Allocation with structured
// parameters, resource.k8s.io/v1) must be allocatable on the node (upstream's dynamicresources
// plugin). PreEnqueue waits for the claims to exist; PreFilter gathers them and prepares the
// structured allocator over the cluster's ResourceSlices, DeviceClasses and allocated devices;
// Filter allocates the pod's unallocated claims on each node (all or nothing) and checks that
// allocated ones are usable there; Reserve assumes the node's allocation in the scheduler's DRA
// cache so the next pods see the devices taken; PreBind writes the allocation and the pod's
// reservation into each claim's status; Unreserve undoes both. Upstream's SignPlugin and the
// extended-resource mapping (DRAExtendedResource) are left out.

#include <expected>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cel/cel.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "plugins/dynamic_resources/allocator.h"
#include "plugins/dynamic_resources/args.h"

namespace kubesched::plugins::dynamic_resources {

//! Filter: the node cannot have devices for all of the pod's unallocated claims.
inline constexpr std::string_view kErrReasonCannotAllocate = "cannot allocate all claims";
//! Filter: an allocated claim's devices are not usable on the node.
inline constexpr std::string_view kErrReasonNotAvailable = "resourceclaim not available on the node";

class DynamicResources final : public framework::PreEnqueuePlugin,
                               public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::PostFilterPlugin,
                               public framework::ReservePlugin,
                               public framework::PreBindPlugin,
                               public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "DynamicResources";

  DynamicResources(DynamicResourcesArgs args, framework::Handle& handle);
  DynamicResources(const DynamicResources&) = delete;
  DynamicResources& operator=(const DynamicResources&) = delete;

  std::string_view Name() const override { return kName; }

  //! UnschedulableAndUnresolvable while a claim is missing (`pod "ns/p": ResourceClaim not created
  //! yet`, `resourceclaim.resource.k8s.io "c" not found`), being deleted (`resourceclaim "c" is
  //! being deleted`) or, made from a template, not the pod's own.
  framework::Status PreEnqueue(const api::Pod& pod) override;
  //! Skip for a pod without claims. UnschedulableAndUnresolvable for PreEnqueue's reasons, a
  //! request whose DeviceClass does not exist (`request r: device class c does not exist`) or a
  //! claim whose reservedFor is full (`resourceclaim in use`).
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! UnschedulableAndUnresolvable kErrReasonNotAvailable (remembering which allocated claims were
  //! not usable, for PostFilter) or kErrReasonCannotAllocate. Error with the allocator's message
  //! for what no node can fix (a CEL error, ...): as upstream, that aborts the pod's cycle rather
  //! than placing the pod on a node where the broken selector happened not to be evaluated.
  //! Remembers the node's allocation for Reserve.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Deallocates one of the pod's allocated claims that Filter found unusable on some node and
  //! that no other pod uses (reservedFor empty or only this pod), so that the next attempt may
  //! allocate it anew: Unschedulable `deallocation of ResourceClaim completed`. Otherwise
  //! Unschedulable `no new claims to deallocate` for a pod without claims (or rejected before
  //! Filter), `still not schedulable` for one with claims. The write is made at the version the
  //! cycle saw: a conflict (someone changed the claim since) is an Error.
  std::pair<framework::PostFilterResult, framework::Status> PostFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      const framework::NodeToStatus& filtered_statuses) override;
  //! Assumes the claims allocated on `node_name` (and the pod's reservation) in the DRA cache.
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  //! Restores what Reserve assumed; removes the pod from the reservedFor PreBind wrote. Idempotent.
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod, const std::string& node_name) override;
  //! Writes each claim's allocation and the pod's reservation (status), at the informer's version
  //! (no retry on conflict: the pod is retried). Error when a claim was deleted, deallocated or
  //! allocated differently elsewhere in the meantime (upstream's wording).
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  //! ResourceClaim add/update/delete, ResourceSlice add/update, DeviceClass add/update, node add
  //! and label update, and the pending pod's own update, with upstream's queueing hints.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  DynamicResourcesArgs args_;
  framework::Handle& handle_;
  cel::Cache cel_cache_;
  //! The allocator's index of the newest slice snapshot seen, reused until a slice changes (the
  //! snapshot is immutable and kept alive here, so pointer equality means the same slices).
  std::mutex slice_index_mu_;
  std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> indexed_slices_;
  std::shared_ptr<const Allocator::Index> slice_index_;
};

// Upstream's queueing hints (exposed for tests), reading the pod's claims from `dra` as upstream's
// read its lister (the scheduler applies a change to its DRA cache before it asks the hints).

//! A claim was added, updated or deleted: Skip unless every claim of the pod exists (else only
//! the pod's own events can help); Queue when an allocation went away (devices freed) or when
//! the pod's own claim was added or its status changed. Deletes are registered in kubesched
//! (upstream registers add and update only): kubesched writes no finalizer, so an allocated
//! claim may be deleted without first being deallocated. An object that is not a claim: Queue
//! (upstream's error path).
framework::QueueingHint IsSchedulableAfterClaimChange(const api::Pod& pod, const framework::EventObjects& event,
                                                      const framework::DraLister& dra);
//! The pending pod's own update (upstream's isSchedulableAfterTargetPodUpdate): Queue when its
//! status.resourceClaimStatuses changed and every claim of the updated pod now exists.
framework::QueueingHint IsSchedulableAfterPodChange(const api::Pod& pod, const framework::EventObjects& event,
                                                    const framework::DraLister& dra);

//! The allocations Filter made in this cycle for the pod's unallocated claims on `node_name` (what
//! Reserve would assume there), in the order of the pod's claims; null when it made none there
//! (no claim to allocate, the node rejected, or DynamicResources not in the profile). For score
//! plugins that weigh a node's devices as the pod would leave them. Read it after Filter (Score,
//! PreScore): Filter is its only writer.
const std::vector<api::AllocationResult>* FilteredAllocations(const framework::CycleState& state,
                                                              std::string_view node_name);

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::dynamic_resources
