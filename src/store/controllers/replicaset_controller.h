#pragma once
// The ReplicaSet controller (pkg/controller/replicaset), which also runs ReplicationControllers
// (upstream wraps the same code for them): keeps spec.replicas active pods from the template
// (named `<owner>-<5 chars>` through generateName, drawn from the manager's Rng, with a
// controller ownerReference), deletes the surplus (unscheduled, then pending, then not-ready, then
// the newest first), does not count terminating or finished pods (so a pod whose deletion starts
// is replaced at once), and keeps status (replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas, observedGeneration) current. A deleted owner's pods are deleted, as the
// garbage collector's background propagation does. Orphans are not adopted.
//
// Per owner it keeps tallies of its pods (active, ready, fully labeled) updated from each pod
// event's before and after, so an event costs O(1) unless pods must be created or deleted, and
// Expectations keep it from acting twice on pods whose events have not arrived yet.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/controllers/controller.h"
#include "store/controllers/expectations.h"
#include "store/controllers/workload_info.h"

namespace kubesched::store::controllers {

//! What differs between the kinds the controller runs.
struct ReplicaKind {
  std::string_view group;        //!< "apps" or ""
  std::string_view resource;     //!< "replicasets" or "replicationcontrollers"
  std::string_view api_version;  //!< of the ownerReference: "apps/v1" or "v1"
  std::string_view kind;         //!< "ReplicaSet" or "ReplicationController"
  std::string_view name;         //!< the controller's Name()
  SelectorForm selector_form;
};

inline constexpr ReplicaKind kReplicaSetKind{"apps",       "replicasets", "apps/v1",
                                             "ReplicaSet", "replicaset",  SelectorForm::kLabelSelector};

class ReplicaSetController : public Controller {
 public:
  explicit ReplicaSetController(const ControllerContext& ctx, const ReplicaKind& kind = kReplicaSetKind);
  std::string_view Name() const override { return kind_.name; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  void Flush() override;

 private:
  struct Tally {
    int64_t active = 0;
    int64_t ready = 0;
    int64_t fully_labeled = 0;
  };
  struct Owner {
    WorkloadInfo info;
    Tally tally;
  };

  void OnOwner(const WatchEvent& event);
  void OnPod(const WatchEvent& event);
  void Count(Owner& owner, const PodFacts& pod, int sign) const;
  void Recount(Owner& owner) const;
  //! Creates or deletes pods to reach spec.replicas (when expectations allow).
  void Manage(Owner& owner);
  void WriteStatus(const Owner& owner);

  ControllerContext ctx_;
  const ReplicaKind kind_;
  const ResourceType& pods_;
  const ResourceType& owners_;
  std::unordered_map<std::string, Owner> by_uid_;
  Expectations expectations_;
  std::vector<std::string> dirty_;  //!< owners whose status to write at Flush, in order
};

//! Deletes `pods` (the garbage collector's background propagation of an owner's deletion).
void DeletePods(Store& store, const ResourceType& pod_type, const std::vector<PodFactsPtr>& pods);

}  // namespace kubesched::store::controllers
