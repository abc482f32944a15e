#pragma once
// Handle: what the framework gives a plugin for its whole life: the cycle's snapshot, the
// waiting pods, the nominated pods, the cluster client, the clock, the worker pool, and the
// runners preemption needs to re-evaluate Filter plugins.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/client.h"
#include "framework/cycle_state.h"
#include "framework/dra.h"
#include "framework/extender.h"
#include "framework/interface.h"
#include "framework/listers.h"
#include "framework/pod_groups.h"
#include "framework/storage.h"
#include "util/clock.h"
#include "util/parallelizer.h"

namespace kubesched::framework {

//! A pod whose Permit returned Wait. Allow/Reject may be called from any thread.
class WaitingPod {
 public:
  virtual ~WaitingPod() = default;
  virtual const api::Pod& pod() const = 0;
  //! Plugins that have not allowed the pod yet.
  virtual std::vector<std::string> GetPendingPlugins() const = 0;
  //! Marks `plugin` as allowing the pod; when no plugin is pending the pod proceeds to binding.
  virtual void Allow(std::string_view plugin) = 0;
  //! Rejects the pod: it is unreserved and requeued.
  virtual void Reject(std::string_view plugin, std::string message) = 0;
};

//! Pods nominated to a node by preemption, which Filter accounts for (as upstream's PodNominator).
class PodNominator {
 public:
  virtual ~PodNominator() = default;
  virtual void AddNominatedPod(PodInfoPtr pod, const std::string& node_name) = 0;
  virtual void DeleteNominatedPodIfExists(const api::Pod& pod) = 0;
  virtual std::vector<PodInfoPtr> NominatedPodsForNode(const std::string& node_name) const = 0;
  //! False only when no pod is nominated anywhere: lets Filter skip the per-node lookup (and its
  //! lock) in the common case. May be stale by one event; callers re-check through the lookup.
  virtual bool HasNominatedPods() const { return true; }
  //! Holds `node_name` for `pod`, planned there by a batch placement: the pod's cycle tries that
  //! node first (as a nominated pod), and Filter counts the pod on it for every other pod,
  //! whatever its priority, until the pod is assumed or the plan dropped
  //! (DeleteNominatedPodIfExists).
  virtual void AddPlannedPod(PodInfoPtr pod, const std::string& node_name) {
    AddNominatedPod(std::move(pod), node_name);
  }
  //! Whether the pod's nomination is a plan.
  virtual bool IsPlanned(const api::Pod& /*pod*/) const { return false; }
  //! The node held for the pod (a nomination or a plan, which may be ahead of the pod's
  //! status.nominatedNodeName), or nullopt.
  virtual std::optional<std::string> NominatedNodeOf(const api::Pod& /*pod*/) const { return std::nullopt; }
  //! Holds `node_name` for a pod that does not exist yet: the replacement a controller creates
  //! for a pod that a plan moves. `placeholder` stands for it (Filter counts it there like a
  //! planned pod) until the first pending pod the queue receives for which `is_replacement`
  //! holds; that pod then takes over the hold, planned on the node, before any PreEnqueue plugin
  //! sees it. `is_replacement` runs under the queue's lock: it must not call back into the
  //! handle. DeleteNominatedPodIfExists(placeholder) drops the hold and the expectation.
  virtual void ExpectReplacement(PodInfoPtr placeholder, const std::string& node_name,
                                 std::function<bool(const PodInfo&)> /*is_replacement*/) {
    AddPlannedPod(std::move(placeholder), node_name);
  }
  //! The pod that took over `placeholder`'s hold (ExpectReplacement), or null.
  virtual PodInfoPtr ReplacementOf(const api::Pod& /*placeholder*/) const { return nullptr; }
};

//! Runs the profile's plugins on demand (used by preemption's what-if evaluation).
class PluginsRunner {
 public:
  virtual ~PluginsRunner() = default;
  virtual std::pair<PreFilterResult, Status> RunPreFilterPlugins(CycleState& state, const PodInfo& pod) = 0;
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                             const PodInfo& pod_to_add, const NodeInfo& node_info) = 0;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                                const PodInfo& pod_to_remove, const NodeInfo& node_info) = 0;
  virtual Status RunFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node_info) = 0;
  //! Filter with the node's nominated pods of equal or higher priority counted (upstream's
  //! two-pass evaluation).
  virtual Status RunFilterPluginsWithNominatedPods(CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node_info) = 0;
  //! PreScore then Score over `nodes` (after PreFilter ran on `state`): each node's total of
  //! normalized, weighted scores, in the order of `nodes`. Runners without score plugins (tests
  //! of single plugins) return all zeros.
  virtual std::pair<std::vector<int64_t>, Status> RunScoreTotals(CycleState& /*state*/, const PodInfo& /*pod*/,
                                                                 std::span<const NodeInfo* const> nodes) {
    return {std::vector<int64_t>(nodes.size(), 0), Status()};
  }
};

class Handle : public PluginsRunner {
 public:
  //! The snapshot of the current cycle. Valid only during a scheduling cycle.
  virtual const NodeInfoLister& SnapshotSharedLister() const = 0;
  virtual void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) = 0;
  //! The waiting pod with this uid, or nullptr.
  virtual std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) = 0;
  //! Rejects the waiting pod with this uid; false when there is none.
  virtual bool RejectWaitingPod(std::string_view uid) = 0;
  virtual ClusterClient& client() = 0;
  virtual PodNominator& nominator() = 0;
  virtual const util::Clock& clock() const = 0;
  virtual util::Parallelizer& parallelizer() = 0;
  virtual std::string_view profile_name() const = 0;
  //! Moves these pods to activeQ (upstream's Handle.Activate), in this order among equals.
  //! Handles without a queue (tests of single plugins) ignore it.
  virtual void Activate(const std::vector<std::shared_ptr<const api::Pod>>& /*pods*/) {}
  //! A preemption evicted `victims` pods (upstream's scheduler_preemption_victims, which its
  //! preemption code observes directly). Ignored unless the scheduler records metrics.
  virtual void ObservePreemptionVictims(size_t /*victims*/) {}
  //! The configured extenders, in the order they are called (ignorable ones last, as upstream).
  virtual std::span<Extender* const> Extenders() const { return {}; }
  //! The PodGroups of `api` the scheduler has seen and their members; null when it tracks none
  //! (tests of single plugins that give none).
  virtual PodGroupTracker* PodGroups(api::PodGroupApi /*api*/) const { return nullptr; }
  //! Claims, volumes, classes and CSI objects from the scheduler's informers (an empty lister for
  //! handles without storage: tests of other plugins).
  virtual StorageLister& Storage() const {
    static EmptyStorageLister empty;  // stateless
    return empty;
  }
  //! DeviceClasses, ResourceSlices and ResourceClaims from the scheduler's informers, with the
  //! allocated devices (an empty lister for handles without them: tests of other plugins).
  virtual DraLister& Dra() const {
    static EmptyDraLister empty;  // stateless
    return empty;
  }
};

}  // namespace kubesched::framework
