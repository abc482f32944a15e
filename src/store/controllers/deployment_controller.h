#pragma once
// The Deployment controller (pkg/controller/deployment), reduced to what a scheduler's test bed
// needs: one ReplicaSet `<deployment>-<pod-template-hash>` per template, carrying the
// pod-template-hash label and selector, scaled to spec.replicas; ReplicaSets of older templates
// are scaled to 0 at once (a Recreate-like rollout: no surge or unavailability budget), and the
// status (replicas, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas,
// observedGeneration) is summed from the ReplicaSets. A deleted Deployment's ReplicaSets are
// deleted (garbage collection).

#include <string>
#include <string_view>

#include "api/json.h"
#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

//! controller.ComputeHash: FNV-1a (32 bit) of the template, its decimal digits mapped onto
//! upstream's SafeEncodeString alphabet (at most 10 characters).
std::string PodTemplateHash(const api::json::Value& pod_template);

class DeploymentController final : public Controller {
 public:
  explicit DeploymentController(Store& store);
  std::string_view Name() const override { return "deployment"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;

 private:
  void Sync(std::string_view namespace_, std::string_view name);

  Store& store_;
  const ResourceType& deployments_;
  const ResourceType& replica_sets_;
};

}  // namespace kubesched::store::controllers
