#pragma once
// A fake framework::Handle for plugin tests: an in-memory snapshot built from nodes and pods, a
// fake cluster client that records what plugins ask of the cluster, a virtual clock, a small
// worker pool, simple waiting-pod and nominator bookkeeping, and PluginsRunner methods that fail
// unless a test installs a std::function for them.
//
//   FakeHandle handle({node1, node2}, {pod1, pod2});
//   handle.fake_client().SetNamespaceLabels("team-a", {{"team", "a"}});
//   auto plugin = my_plugin::New(nullptr, handle);
//   CycleState state;
//   auto [result, status] = pre_filter->PreFilter(state, *pod_info, handle.snapshot().List());

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "framework/handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "util/clock.h"
#include "util/parallelizer.h"

namespace kubesched::testing {

//! An immutable-by-convention snapshot of nodes and the pods bound to them, as upstream's
//! cache.NewSnapshot(pods, nodes): one NodeInfo per node (in the order given), each holding the
//! pods whose spec.nodeName names it. Pods bound to a node that is not listed are dropped (upstream
//! keeps a node-less NodeInfo for them, which no plugin can use). Image states are computed
//! cluster-wide as the real snapshot does.
class FakeSnapshot final : public framework::NodeInfoLister {
 public:
  FakeSnapshot() = default;
  FakeSnapshot(const std::vector<std::shared_ptr<api::Node>>& nodes,
               const std::vector<std::shared_ptr<api::Pod>>& pods);
  FakeSnapshot(const FakeSnapshot&) = delete;
  FakeSnapshot& operator=(const FakeSnapshot&) = delete;

  //! Replaces the whole content.
  void Reset(const std::vector<std::shared_ptr<api::Node>>& nodes, const std::vector<std::shared_ptr<api::Pod>>& pods);
  //! Adds a node (appended to List()).
  void AddNode(std::shared_ptr<const api::Node> node);
  //! Adds a pod to the node its spec.nodeName names. Returns false when that node is absent.
  bool AddPod(std::shared_ptr<const api::Pod> pod);
  //! Removes the pod (by uid) from the node its spec.nodeName names. Returns false when absent.
  bool RemovePod(const api::Pod& pod);
  //! The node's NodeInfo for tests that need to mutate it directly, or nullptr. Call
  //! RebuildLists() afterwards if pods were added or removed.
  framework::NodeInfo* MutableNodeInfo(std::string_view node_name);
  //! Recomputes the affinity lists and image states after direct mutation.
  void RebuildLists();

  std::span<const framework::NodeInfo* const> List() const override { return all_; }
  std::span<const framework::NodeInfo* const> HavePodsWithAffinityList() const override { return with_affinity_; }
  std::span<const framework::NodeInfo* const> HavePodsWithRequiredAntiAffinityList() const override {
    return with_required_anti_affinity_;
  }
  const framework::NodeInfo* Get(std::string_view node_name) const override;
  std::shared_ptr<const framework::TopologyDomains> Domains(std::string_view topology_key) const override {
    return domains_.Get(topology_key, all_);
  }

 private:
  framework::TopologyDomainsCache domains_;
  std::vector<std::unique_ptr<framework::NodeInfo>> node_infos_;
  std::vector<const framework::NodeInfo*> all_;
  std::vector<const framework::NodeInfo*> with_affinity_;
  std::vector<const framework::NodeInfo*> with_required_anti_affinity_;
};

//! A ClusterClient that answers from in-memory maps and records every write. Thread-safe.
class FakeClusterClient final : public framework::ClusterClient {
 public:
  struct BindRecord {
    std::string pod_key;  //!< namespace/name
    std::string node_name;
  };
  struct DeletionRecord {
    std::string pod_key;
    std::string reason;
  };
  struct NominationRecord {
    std::string pod_key;
    std::string node_name;  //!< "" when cleared
  };
  struct ConditionRecord {
    std::string pod_key;
    api::PodCondition condition;
  };

  //! Declares a namespace and its labels (NamespaceLabels returns nullopt for undeclared ones).
  void SetNamespaceLabels(std::string name, api::Labels labels);
  void AddPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb);
  //! When set, Bind returns this status instead of recording (e.g. to simulate API errors).
  void SetBindResult(std::optional<framework::Status> status);
  //! When set, DeletePod returns this status instead of recording.
  void SetDeleteResult(std::optional<framework::Status> status);

  std::vector<BindRecord> binds() const;
  std::vector<DeletionRecord> deletions() const;
  std::vector<NominationRecord> nominations() const;
  std::vector<ConditionRecord> conditions() const;
  //! How many times NamespaceLabels was called (plugins should resolve once per cycle).
  int namespace_lookups() const;

  framework::Status Bind(const api::Pod& pod, const std::string& node_name) override;
  framework::Status DeletePod(const api::Pod& pod, std::string_view reason) override;
  framework::Status SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) override;
  framework::Status SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) override;
  std::optional<api::Labels> NamespaceLabels(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override;

 private:
  mutable std::mutex mu_;
  std::map<std::string, api::Labels, std::less<>> namespaces_;         // guarded by mu_
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs_;  // guarded by mu_
  std::optional<framework::Status> bind_result_;                       // guarded by mu_
  std::optional<framework::Status> delete_result_;                     // guarded by mu_
  std::vector<BindRecord> binds_;                                      // guarded by mu_
  std::vector<DeletionRecord> deletions_;                              // guarded by mu_
  std::vector<NominationRecord> nominations_;                          // guarded by mu_
  std::vector<ConditionRecord> conditions_;                            // guarded by mu_
  mutable int namespace_lookups_ = 0;                                  // guarded by mu_
};

//! A waiting pod that records Allow/Reject calls. Thread-safe.
class FakeWaitingPod final : public framework::WaitingPod {
 public:
  FakeWaitingPod(std::shared_ptr<const api::Pod> pod, std::vector<std::string> pending_plugins);
  const api::Pod& pod() const override { return *pod_; }
  std::vector<std::string> GetPendingPlugins() const override;
  void Allow(std::string_view plugin) override;
  void Reject(std::string_view plugin, std::string message) override;

  //! True once every pending plugin allowed the pod (and it was not rejected).
  bool allowed() const;
  bool rejected() const;
  std::string reject_message() const;

 private:
  std::shared_ptr<const api::Pod> pod_;
  mutable std::mutex mu_;
  std::vector<std::string> pending_;  // guarded by mu_
  bool rejected_ = false;             // guarded by mu_
  std::string reject_message_;        // guarded by mu_
};

//! Nominated pods per node, as upstream's nominator (a pod is nominated to at most one node).
class FakePodNominator final : public framework::PodNominator {
 public:
  void AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name) override;
  void DeleteNominatedPodIfExists(const api::Pod& pod) override;
  std::vector<framework::PodInfoPtr> NominatedPodsForNode(const std::string& node_name) const override;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<framework::PodInfoPtr>> by_node_;  // guarded by mu_
};

class FakeHandle final : public framework::Handle {
 public:
  //! An empty snapshot, a VirtualClock at 0, a Parallelizer(2), profile "default-scheduler".
  FakeHandle();
  FakeHandle(const std::vector<std::shared_ptr<api::Node>>& nodes, const std::vector<std::shared_ptr<api::Pod>>& pods);

  FakeSnapshot& snapshot() { return snapshot_; }
  FakeClusterClient& fake_client() { return client_; }
  FakePodNominator& fake_nominator() { return nominator_; }
  util::VirtualClock& virtual_clock() { return clock_; }
  void set_profile_name(std::string name) { profile_name_ = std::move(name); }
  //! What PodGroups(api) returns (null by default, for either API); the tracker outlives the
  //! handle's use.
  void set_pod_groups(framework::PodGroupTracker* pod_groups, api::PodGroupApi api = api::PodGroupApi::kScheduling) {
    pod_groups_[static_cast<size_t>(api)] = pod_groups;
  }
  //! What Storage() returns (an empty lister by default); the lister outlives the handle's use.
  //! Tests give a cache::StorageCache filled with their claims, volumes and classes.
  void set_storage(framework::StorageLister* storage) { storage_ = storage; }
  void set_dra(framework::DraLister* dra) { dra_ = dra; }
  //! The pods Activate was called with, in order.
  std::vector<std::shared_ptr<const api::Pod>> activated() const {
    std::lock_guard lock(waiting_mu_);
    return activated_;
  }
  //! Registers a waiting pod (as if a Permit plugin returned Wait).
  std::shared_ptr<FakeWaitingPod> AddWaitingPod(std::shared_ptr<const api::Pod> pod,
                                                std::vector<std::string> pending_plugins);

  // PluginsRunner hooks: when unset, the corresponding method returns
  // Error("not supported by FakeHandle").
  std::function<std::pair<framework::PreFilterResult, framework::Status>(framework::CycleState&,
                                                                         const framework::PodInfo&)>
      run_pre_filter_plugins;
  std::function<framework::Status(framework::CycleState&, const framework::PodInfo&, const framework::PodInfo&,
                                  const framework::NodeInfo&)>
      run_pre_filter_extension_add_pod;
  std::function<framework::Status(framework::CycleState&, const framework::PodInfo&, const framework::PodInfo&,
                                  const framework::NodeInfo&)>
      run_pre_filter_extension_remove_pod;
  std::function<framework::Status(const framework::CycleState&, const framework::PodInfo&, const framework::NodeInfo&)>
      run_filter_plugins;
  std::function<framework::Status(framework::CycleState&, const framework::PodInfo&, const framework::NodeInfo&)>
      run_filter_plugins_with_nominated_pods;

  // framework::PluginsRunner
  std::pair<framework::PreFilterResult, framework::Status> RunPreFilterPlugins(framework::CycleState& state,
                                                                               const framework::PodInfo& pod) override;
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                                                const framework::PodInfo& pod_to_add,
                                                const framework::NodeInfo& node_info) override;
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState& state,
                                                   const framework::PodInfo& pod_to_schedule,
                                                   const framework::PodInfo& pod_to_remove,
                                                   const framework::NodeInfo& node_info) override;
  framework::Status RunFilterPlugins(const framework::CycleState& state, const framework::PodInfo& pod,
                                     const framework::NodeInfo& node_info) override;
  framework::Status RunFilterPluginsWithNominatedPods(framework::CycleState& state, const framework::PodInfo& pod,
                                                      const framework::NodeInfo& node_info) override;

  // framework::Handle
  const framework::NodeInfoLister& SnapshotSharedLister() const override { return snapshot_; }
  void IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>& fn) override;
  std::shared_ptr<framework::WaitingPod> GetWaitingPod(std::string_view uid) override;
  //! Rejects the waiting pod (plugin "", message "removed") and forgets it.
  bool RejectWaitingPod(std::string_view uid) override;
  framework::ClusterClient& client() override { return client_; }
  framework::PodNominator& nominator() override { return nominator_; }
  const util::Clock& clock() const override { return clock_; }
  util::Parallelizer& parallelizer() override { return parallelizer_; }
  std::string_view profile_name() const override { return profile_name_; }
  framework::PodGroupTracker* PodGroups(api::PodGroupApi api) const override {
    return pod_groups_[static_cast<size_t>(api)];
  }
  framework::StorageLister& Storage() const override {
    return storage_ != nullptr ? *storage_ : framework::Handle::Storage();
  }
  framework::DraLister& Dra() const override { return dra_ != nullptr ? *dra_ : framework::Handle::Dra(); }
  void Activate(const std::vector<std::shared_ptr<const api::Pod>>& pods) override {
    std::lock_guard lock(waiting_mu_);
    activated_.insert(activated_.end(), pods.begin(), pods.end());
  }

 private:
  FakeSnapshot snapshot_;
  FakeClusterClient client_;
  FakePodNominator nominator_;
  util::VirtualClock clock_;
  util::Parallelizer parallelizer_{2};
  std::string profile_name_ = std::string(api::kDefaultSchedulerName);
  std::array<framework::PodGroupTracker*, 2> pod_groups_{};
  framework::StorageLister* storage_ = nullptr;
  framework::DraLister* dra_ = nullptr;
  mutable std::mutex waiting_mu_;
  std::vector<std::shared_ptr<FakeWaitingPod>> waiting_;    // guarded by waiting_mu_
  std::vector<std::shared_ptr<const api::Pod>> activated_;  // guarded by waiting_mu_
};

}  // namespace kubesched::testing
