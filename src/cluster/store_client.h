#pragma once
// StoreClient: the scheduler's writes and lookups (framework::ClusterClient) done against the
// object store, as kube-scheduler makes them against the API server: a bind is pods/binding,
// preemption marks its victim with the DisruptionTarget condition (reason PreemptionByScheduler)
// through the status subresource and then deletes it gracefully, nominations and the
// PodScheduled condition are status patches, and namespaces, PodDisruptionBudgets and a pod's
// controller are read from the store. `simulate` runs it over the in-memory store. Events go to
// an EventRecorder when one is attached (`kubesched run`); simulate attaches none.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/event_recorder.h"
#include "framework/client.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::cluster {

class StoreClient : public framework::ClusterClient {
 public:
  StoreClient(store::Store& store, const util::Clock& clock);

  framework::Status Bind(const api::Pod& pod, const std::string& node_name) override;
  //! Marks the pod (DisruptionTarget, reason PreemptionByScheduler, message `reason`) and deletes
  //! it with its own grace period. A pod already terminating: success, nothing changes.
  framework::Status DeletePod(const api::Pod& pod, std::string_view reason) override;
  framework::Status SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) override;
  framework::Status SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) override;
  //! A status patch of the PodGroup; an error when the store has no PodGroups or the group is gone.
  framework::Status SetPodGroupCondition(const api::PodGroup& group, const api::PodCondition& condition) override;
  //! A merge patch of the volume's spec.claimRef and bound-by-controller annotation, made at the
  //! version the scheduler saw (a 409 when it changed meanwhile).
  framework::Status BindVolumeToClaim(const api::PersistentVolume& volume,
                                      const api::PersistentVolumeClaim& claim) override;
  //! A merge patch of the claim's selected-node annotation, at the version the scheduler saw.
  framework::Status SelectNodeForClaim(const api::PersistentVolumeClaim& claim, const std::string& node_name) override;
  framework::Status UpdateResourceClaimStatus(const api::ResourceClaim& claim) override;
  std::optional<api::Labels> NamespaceLabels(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override;
  std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const override;
  //! Whether an EventRecorder is attached.
  bool RecordsEvents() const override { return recorder_ != nullptr; }
  //! Hands the Event to the attached recorder (which queues it); nothing without one.
  void RecordEvent(const framework::EventRecord& event) override;

  //! Attaches the recorder Events go to (null: none, the default). Set before the scheduler runs;
  //! the recorder must outlive the client's use.
  void SetEventRecorder(EventRecorder* recorder) { recorder_ = recorder; }

 protected:
  store::Store& store() { return store_; }

 private:
  //! A status patch (strategic merge, as kube-scheduler's) of the pod, guarded by its uid.
  framework::Status PatchStatus(const api::Pod& pod, std::string_view patch);

  store::Store& store_;
  const util::Clock& clock_;
  const store::ResourceType& pods_;
  const store::ResourceType& namespaces_;
  const store::ResourceType& pdbs_;
  const store::ResourceType* claims_;           // null when the store has no claims
  const store::ResourceType* volumes_;          // null when the store has no volumes
  const store::ResourceType* resource_claims_;  // null when the store has no ResourceClaims
  const store::ResourceType* pod_groups_;       // null when the store has none
  EventRecorder* recorder_ = nullptr;

  //! Decoded objects by uid, kept while their resourceVersion is current (the scheduler asks
  //! for the same PDBs and controllers over and over).
  template <typename T>
  struct Decoded {
    uint64_t resource_version = 0;
    std::shared_ptr<const T> value;
  };
  mutable std::mutex mu_;  // guards the caches
  mutable std::unordered_map<std::string, Decoded<api::PodDisruptionBudget>> pdb_cache_;
  mutable std::unordered_map<std::string, Decoded<std::optional<api::LabelSelector>>> selector_cache_;
};

}  // namespace kubesched::cluster
