#pragma once
// SimulatedCluster: an in-memory API server for `kubesched simulate`. Holds the objects loaded
// from manifests, answers the scheduler's writes (bind, evict, status updates) as the API server
// would, and tells its event handler about every change, as informers do. Workload controllers
// are simulated for evictions: a deleted pod owned by a ReplicaSet, StatefulSet, Job or DaemonSet
// is recreated (new name, pending), as its controller would.

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
  std::shared_ptr<const api::Pod> replacement;  //!< the pod its controller created instead, or null
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
  framework::Status DeletePod(const api::Pod& pod, std::string_view reason) override;
  framework::Status SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) override;
  framework::Status SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) override;
  std::optional<api::Labels> NamespaceLabels(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override;
  std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const override;

  // --- Inspection ---------------------------------------------------------------------------
  //! Pods in manifest order (pods created by controllers after evictions come last).
  std::vector<std::shared_ptr<const api::Pod>> Pods() const;
  std::vector<std::shared_ptr<const api::Node>> Nodes() const;
  //! Pods evicted (deleted by preemption), in eviction order.
  std::vector<Eviction> Evictions() const;

 private:
  struct PodEntry {
    std::shared_ptr<const api::Pod> pod;
    uint64_t order;
  };
  std::shared_ptr<const api::Pod> ReplacePod(const std::string& uid, std::function<void(api::Pod&)> mutate,
                                             std::shared_ptr<const api::Pod>* old_out);
  const api::Workload* OwnerWorkload(const api::Pod& pod) const;

  const util::Clock& clock_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;           // guarded by mu_
  std::mt19937_64 creation_rng_;  // used once, in Subscribe
  CreationOrder creation_order_;
  std::vector<std::shared_ptr<const api::Node>> nodes_;         // guarded by mu_
  std::unordered_set<std::string> node_names_;                  // of nodes_ (set at construction)
  std::unordered_map<std::string, PodEntry> pods_;              // by uid, guarded by mu_
  uint64_t next_order_ = 0;                                     // guarded by mu_
  std::map<std::string, api::Labels, std::less<>> namespaces_;  // guarded by mu_
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs_;
  std::vector<std::shared_ptr<const api::Workload>> workloads_;
  std::vector<Eviction> evictions_;  // guarded by mu_
  EventHandler* handler_ = nullptr;
};

}  // namespace kubesched::cluster
