#pragma once
// SimulatedCluster: an in-memory API server for `kubesched simulate`. Holds the objects loaded
// from manifests, answers the scheduler's writes (bind, evict, status updates) as the API server
// would, and tells its event handler about every change, as informers do.
//
// Deletion is graceful, as the API server and kubelet make it: a bound pod is first marked
// (metadata.deletionTimestamp = now + spec.terminationGracePeriodSeconds; preemption also adds
// the DisruptionTarget condition) and removed when that time comes on the clock; an unbound pod,
// or one with a grace period of 0, is removed at once. Workload controllers are simulated: a
// deleted pod owned by a ReplicaSet (Deployment), ReplicationController or Job is recreated (new
// name, pending) as soon as its deletion starts, since those controllers do not count terminating
// pods; a StatefulSet's (same name) or DaemonSet's only once the old pod is gone.
//
// The scenario timeline: a Pod or Node annotated api::kAnnotationCreateAfter does not exist until
// that long after construction (the start of the simulation); one annotated
// api::kAnnotationDeleteAfter is deleted that long after it (a node's pods go with it, as the pod
// garbage collector removes them, and their controllers recreate them; a DaemonSet's pod is not
// recreated for a node that is gone). NextEventNs and FireEvents let the simulation's clock reach
// these and the graceful removals.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/manifest.h"
#include "api/types.h"
#include "cluster/creation_order.h"
#include "cluster/event_handler.h"
#include "framework/client.h"
#include "util/clock.h"

namespace kubesched::cluster {

//! A pod deleted by the scheduler (preemption), and what its controller made of it.
struct Eviction {
  std::shared_ptr<const api::Pod> pod;          //!< as it was when deleted
  std::string reason;                           //!< as the scheduler gave it ("Preempted by pod ns/p on node n")
  std::shared_ptr<const api::Pod> replacement;  //!< the pod its controller created instead, or null (yet)
  //! DeletePodForMove's destination node: where cross-node preemption places the replacement;
  //! empty for a plain eviction.
  std::string moved_to;
};

class SimulatedCluster final : public framework::ClusterClient {
 public:
  SimulatedCluster(api::ClusterObjects objects, const util::Clock& clock, uint64_t seed,
                   CreationOrder creation_order = CreationOrder::kManifest);

  //! Registers the handler and replays the current objects to it as adds: nodes, then bound
  //! pods in manifest order, then pending pods in the order they are created (creation_order).
  //! Pods in phase Succeeded or Failed are not delivered: upstream's scheduler watches pods with
  //! a field selector that leaves them out, so they hold no resources and are never scheduled.
  void Subscribe(EventHandler* handler);

  // --- framework::ClusterClient ------------------------------------------------------------
  framework::Status Bind(const api::Pod& pod, const std::string& node_name) override;
  //! Starts a graceful deletion (see above) recorded as an eviction, with the DisruptionTarget
  //! condition (reason PreemptionByScheduler, message `reason`) that upstream's preemption adds.
  //! A pod already terminating: success, nothing changes. Error when the pod does not exist.
  framework::Status DeletePod(const api::Pod& pod, std::string_view reason) override;
  //! DeletePod, with the eviction's moved_to set to destination_node.
  framework::Status DeletePodForMove(const api::Pod& pod, const std::string& destination_node,
                                     std::string_view reason) override;
  framework::Status SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) override;
  framework::Status SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) override;
  std::optional<api::Labels> NamespaceLabels(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override;
  std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const override;

  // --- Virtual time ---------------------------------------------------------------------------
  //! When the next pending event is due (a terminating pod's removal, a timeline creation or
  //! deletion), on the clock given at construction; nullopt when none is pending.
  std::optional<int64_t> NextEventNs() const;
  //! Carries out every event due by now (and any they make due at once), telling the handler
  //! about each change outside the lock. Returns whether any event was due.
  bool FireEvents();

  // --- Inspection ---------------------------------------------------------------------------
  //! Pods in manifest order (pods created by controllers after evictions come last).
  std::vector<std::shared_ptr<const api::Pod>> Pods() const;
  std::vector<std::shared_ptr<const api::Node>> Nodes() const;
  //! Pods evicted (deleted by preemption), in eviction order, each recorded when its deletion
  //! started; `replacement` is filled in once the controller creates it.
  std::vector<Eviction> Evictions() const;

 private:
  struct PodEntry {
    std::shared_ptr<const api::Pod> pod;
    uint64_t order;
  };
  //! A change to tell the handler about once the lock is released.
  struct Notice {
    enum class Kind { kNodeAdd, kNodeDelete, kPodAdd, kPodUpdate, kPodDelete } kind;
    std::shared_ptr<const api::Node> node;
    std::shared_ptr<const api::Pod> old_pod;
    std::shared_ptr<const api::Pod> pod;
  };
  //! Something due at a time on the clock.
  struct TimedEvent {
    enum class Kind { kRemovePod, kCreatePod, kDeletePod, kCreateNode, kDeleteNode } kind;
    std::string key;  //!< the pod's uid or the node's name
  };
  //! How a deletion is carried out.
  struct Deletion {
    bool record_eviction = false;  //!< an eviction by the scheduler (Evictions())
    std::string reason;            //!< the eviction's reason, and the DisruptionTarget message
    std::string moved_to;          //!< DeletePodForMove's destination
  };

  std::shared_ptr<const api::Pod> ReplacePod(const std::string& uid, std::function<void(api::Pod&)> mutate,
                                             std::shared_ptr<const api::Pod>* old_out);
  const api::Workload* OwnerWorkload(const api::Pod& pod) const;
  framework::Status Delete(const api::Pod& pod, const Deletion& deletion);
  // The *Locked helpers run with mu_ held and append what the handler must hear to `notices`.
  framework::Status StartDeletionLocked(const std::string& uid, const Deletion& deletion, std::vector<Notice>& notices);
  //! Removes the pod for good; its controller recreates it unless it did when the deletion started
  //! (or it is a DaemonSet's pod and its node is gone).
  void RemovePodLocked(const std::string& uid, bool node_gone, std::vector<Notice>& notices);
  void CreateReplacementLocked(const api::Pod& deleted, const api::Workload& w, std::vector<Notice>& notices);
  void FireLocked(const TimedEvent& event, std::vector<Notice>& notices);
  void Deliver(EventHandler* handler, const std::vector<Notice>& notices) const;

  const util::Clock& clock_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;           // guarded by mu_
  std::mt19937_64 creation_rng_;  // used once, in Subscribe
  CreationOrder creation_order_;
  std::vector<std::shared_ptr<const api::Node>> nodes_;         // guarded by mu_
  std::unordered_set<std::string> node_names_;                  // of nodes_, guarded by mu_
  std::unordered_map<std::string, PodEntry> pods_;              // by uid, guarded by mu_
  uint64_t next_order_ = 0;                                     // guarded by mu_
  std::map<std::string, api::Labels, std::less<>> namespaces_;  // guarded by mu_
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs_;
  std::vector<std::shared_ptr<const api::Workload>> workloads_;
  std::vector<Eviction> evictions_;  // guarded by mu_
  //! Index in evictions_ of each evicted pod's eviction, by the pod's uid; guarded by mu_.
  std::unordered_map<std::string, size_t> eviction_of_;
  //! Uids of deleted pods whose controller has created their replacement; guarded by mu_.
  std::unordered_set<std::string> replaced_;
  //! Due events by time; equal times keep insertion order. Guarded by mu_.
  std::multimap<int64_t, TimedEvent> events_;
  //! Timeline objects not created yet (kAnnotationCreateAfter), by uid and name; guarded by mu_.
  std::unordered_map<std::string, PodEntry> future_pods_;
  std::unordered_map<std::string, std::shared_ptr<const api::Node>> future_nodes_;
  EventHandler* handler_ = nullptr;
};

}  // namespace kubesched::cluster
