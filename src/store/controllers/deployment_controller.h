#pragma once
// The Deployment controller (pkg/controller/deployment), reduced to what a scheduler's test bed
// needs: one ReplicaSet per template, scaled to spec.replicas; ReplicaSets of older templates are
// scaled to 0 at once (a Recreate-like rollout: no surge or unavailability budget), and the status
// (replicas, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas,
// observedGeneration) is summed from the ReplicaSets. A deleted Deployment's ReplicaSets are
// deleted (garbage collection).
//
// The current ReplicaSet is found as upstream's FindNewReplicaSet does: the oldest owned one whose
// template equals the Deployment's once the pod-template-hash label is ignored (EqualIgnoreHash),
// so one made by someone else (the loader, with its own hash) is adopted rather than duplicated.
// Only when none exists is `<deployment>-<hash>` created, with the pod-template-hash label and
// selector; a name taken by a ReplicaSet that is not this Deployment's bumps
// status.collisionCount, which changes the hash.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/json.h"
#include "store/controllers/controller.h"
#include "store/controllers/workload_info.h"

namespace kubesched::store::controllers {

//! controller.ComputeHash: FNV-1a (32 bit) of the template (and the collision count when set),
//! its decimal digits mapped onto upstream's SafeEncodeString alphabet (at most 10 characters).
std::string PodTemplateHash(const api::json::Value& pod_template, int64_t collision_count = 0);

class DeploymentController final : public Controller {
 public:
  explicit DeploymentController(const ControllerContext& ctx);
  std::string_view Name() const override { return "deployment"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  void Flush() override;

 private:
  struct Deployment {
    WorkloadInfo info;
    int64_t collision_count = 0;  //!< status.collisionCount
  };
  void OnDeployment(const WatchEvent& event);
  void OnReplicaSet(const WatchEvent& event);
  //! Creates or scales the ReplicaSets.
  void Manage(const Deployment& d);
  void WriteStatus(const Deployment& d);
  //! The deployment's current ReplicaSet among `owned`, or null.
  const WorkloadInfo* FindNewReplicaSet(const Deployment& d) const;

  ControllerContext ctx_;
  const ResourceType& deployments_;
  const ResourceType& replica_sets_;
  std::unordered_map<std::string, Deployment> by_uid_;
  //! ReplicaSets by the uid of the Deployment controlling them, then by their uid.
  std::unordered_map<std::string, std::map<std::string, WorkloadInfo>> owned_;
  std::unordered_map<std::string, std::string> owner_of_;  //!< ReplicaSet uid → Deployment uid
  std::vector<std::string> dirty_;
};

}  // namespace kubesched::store::controllers
