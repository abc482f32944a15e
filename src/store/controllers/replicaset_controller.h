#pragma once
// The ReplicaSet controller (pkg/controller/replicaset): keeps spec.replicas active pods from the
// template (named `<rs>-<5 chars>` through generateName, with a controller ownerReference),
// deletes the surplus (unscheduled, then pending, then not-ready, then the newest first), does
// not count terminating or finished pods, and keeps status (replicas, fullyLabeledReplicas,
// readyReplicas, availableReplicas, observedGeneration) current. A deleted ReplicaSet's pods are
// deleted, as the garbage collector's background propagation does. Orphans are not adopted.

#include <string_view>

#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

class ReplicaSetController final : public Controller {
 public:
  explicit ReplicaSetController(Store& store);
  std::string_view Name() const override { return "replicaset"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;

 private:
  void Sync(std::string_view namespace_, std::string_view name);

  Store& store_;
  const ResourceType& pods_;
  const ResourceType& replica_sets_;
};

//! Deletes the objects of `type` in `namespace_` whose controller is `owner_uid` (the garbage
//! collector's background propagation).
void DeleteDependents(Store& store, const ResourceType& type, std::string_view namespace_, std::string_view owner_uid);

}  // namespace kubesched::store::controllers
