#pragma once
// SimulatedCluster: the cluster `kubesched simulate` schedules, built on the same object store,
// controllers and codec as `kubesched apiserver` (one cluster implementation). It loads the
// objects read from manifests into an in-memory store on the simulation's virtual clock, runs
// the store's controllers beside it (node lifecycle, Deployment, ReplicaSet,
// ReplicationController, StatefulSet, Job, DaemonSet, disruption) and the scenario timeline
// (sim/timeline.h), answers the scheduler's writes through cluster::StoreClient and tells the
// scheduler about every change through cluster::StoreInformer.
//
// What that gives, as on a real cluster: deletion is graceful (metadata.deletionTimestamp = now +
// the pod's terminationGracePeriodSeconds, removal by the node lifecycle when it comes; an
// unbound pod, or a grace period of 0, goes at once); preemption marks its victims with the
// DisruptionTarget condition; a ReplicaSet's, ReplicationController's or Job's deleted pod is
// recreated (new name, pending) as soon as its deletion starts, a StatefulSet's (same name) or
// DaemonSet's once the old pod is gone; a bound pod starts running. Pods a workload's
// controller would have created already are in the input (the loader expanded them), so the
// controllers adopt them and create nothing more at the start.
//
// What only a simulation needs: the order in which pending pods are created (creation_order,
// drawn from the seed), the evictions the scheduler made and what replaced each evicted pod, and
// the pods and nodes in manifest order at the end.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/manifest.h"
#include "api/types.h"
#include "cluster/creation_order.h"
#include "cluster/event_handler.h"
#include "cluster/store_client.h"
#include "cluster/store_informer.h"
#include "store/controllers/controller.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::sim {

//! A pod deleted by the scheduler (preemption), and what its controller made of it.
struct Eviction {
  std::shared_ptr<const api::Pod> pod;          //!< as it was when deleted
  std::string reason;                           //!< as the scheduler gave it ("Preempted by pod ns/p on node n")
  std::shared_ptr<const api::Pod> replacement;  //!< the pod its controller created instead, or null (yet)
  //! DeletePodForMove's destination node: where cross-node preemption places the replacement;
  //! empty for a plain eviction.
  std::string moved_to;
  int64_t at_ns = 0;  //!< when the eviction was made (the deletion started)
};

namespace detail {
//! Holds the store so that it exists before the cluster::StoreClient base that uses it (a base is built
//! before members).
struct OwnedStore {
  std::unique_ptr<store::Store> owned_store;
};
}  // namespace detail

class SimulatedCluster final : private detail::OwnedStore, public cluster::StoreClient {
 public:
  //! Loads `objects` (their timeline objects onto the timeline) and starts the controllers.
  //! Pending pods are created in `creation_order`, drawn from `seed`, which also seeds the names
  //! of the pods controllers create. Throws std::runtime_error naming the object when the store
  //! refuses one (the loader checked them, so this means the two disagree).
  SimulatedCluster(api::ClusterObjects objects, const util::Clock& clock, uint64_t seed,
                   cluster::CreationOrder creation_order = cluster::CreationOrder::kManifest);
  ~SimulatedCluster() override;

  //! Registers the handler and replays the current objects to it as adds: nodes, then pods in
  //! the order they were created (bound pods in manifest order, then pending pods in creation
  //! order). Pods in phase Succeeded or Failed are left out (cluster::StoreInformer).
  void Subscribe(cluster::EventHandler* handler);

  //! Records the eviction (Evictions()), then cluster::StoreClient::DeletePod.
  framework::Status DeletePod(const api::Pod& pod, std::string_view reason) override;
  //! No one else writes to the simulated cluster: a pod an extender bound is bound here.
  framework::Status BoundByExtender(const api::Pod& pod, const std::string& node_name) override {
    return Bind(pod, node_name);
  }
  //! DeletePod, with the eviction's moved_to set to destination_node.
  framework::Status DeletePodForMove(const api::Pod& pod, const std::string& destination_node,
                                     std::string_view reason) override;

  // --- Virtual time ---------------------------------------------------------------------------
  //! When the next controller or timeline event is due (a terminating pod's removal, a timeline
  //! creation or deletion), on the clock given at construction; nullopt when none is pending.
  std::optional<int64_t> NextEventNs() const;
  //! When the timeline's last creation or deletion is due, as loaded; nullopt without a timeline.
  std::optional<int64_t> LastTimelineEventNs() const { return last_timeline_event_ns_; }
  //! Carries out every event due by now (and any they make due at once). Whether any was due.
  bool FireEvents();

  // --- Inspection ---------------------------------------------------------------------------
  //! Pods in manifest order; pods created later (by controllers, by the timeline) follow in the
  //! order they were created.
  std::vector<std::shared_ptr<const api::Pod>> Pods() const;
  //! Nodes in manifest order, then those the timeline created.
  std::vector<std::shared_ptr<const api::Node>> Nodes() const;
  //! The claims and volumes at the end, by namespace and name.
  std::vector<std::shared_ptr<const api::PersistentVolumeClaim>> Claims() const;
  std::vector<std::shared_ptr<const api::PersistentVolume>> Volumes() const;
  //! The ResourceClaims at the end (allocations and reservations), by namespace and name.
  std::vector<std::shared_ptr<const api::ResourceClaim>> ResourceClaims() const;
  //! Pods evicted (deleted by preemption), in eviction order, each recorded when its deletion
  //! started; `replacement` is filled in once the controller creates it.
  std::vector<Eviction> Evictions() const;
  //! The evictions from the `first`-th on (those made since a caller last looked).
  std::vector<Eviction> EvictionsFrom(size_t first) const;

  store::Store& Store() { return *owned_store; }

 private:
  framework::Status Evict(const api::Pod& pod, std::string_view reason, const std::string& moved_to);
  void Load(api::ClusterObjects& objects, uint64_t seed, cluster::CreationOrder creation_order);
  void OnStoreEvent(const store::WatchEvent& event);
  //! The resource's views, ordered by `order` (keyed by uid or name; unknown ones last).
  template <typename T>
  std::vector<std::shared_ptr<const T>> InOrder(std::string_view resource,
                                                const std::unordered_map<std::string, uint64_t>& order, bool by_uid,
                                                std::string_view group = "") const;

  const util::Clock& clock_;
  std::unique_ptr<store::controllers::ControllerManager> controllers_;
  std::unique_ptr<cluster::StoreInformer> informer_;
  std::optional<uint64_t> observer_;
  std::optional<int64_t> last_timeline_event_ns_;

  mutable std::mutex mu_;  // guards what follows
  //! The order Pods() and Nodes() list objects in, by pod uid and node name.
  std::unordered_map<std::string, uint64_t> pod_order_;
  std::unordered_map<std::string, uint64_t> node_order_;
  uint64_t next_order_ = 0;
  std::vector<Eviction> evictions_;
  //! Evictions still waiting for a replacement, by the uid of the evicted pod's controller.
  std::unordered_map<std::string, std::vector<size_t>> awaiting_replacement_;
};

}  // namespace kubesched::sim
