#pragma once
// The disruption controller (pkg/controller/disruption): keeps each PodDisruptionBudget's status
// current so the eviction subresource can decide: expectedPods, currentHealthy (ready, not
// terminating, not recently evicted), desiredHealthy (from minAvailable or maxUnavailable, integer
// or percentage, rounded up as upstream does), disruptionsAllowed, the DisruptionAllowed
// condition, observedGeneration, and disruptedPods (an eviction's entry is dropped once the pod
// is terminating or gone, or after two minutes). The expected count is the number of selected
// pods rather than the sum of their controllers' scales.

#include <string_view>

#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

class DisruptionController final : public Controller {
 public:
  DisruptionController(Store& store, const util::Clock& clock);
  std::string_view Name() const override { return "disruption"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;

 private:
  void Sync(const Object& pdb);

  Store& store_;
  const util::Clock& clock_;
  const ResourceType& pods_;
  const ResourceType& pdbs_;
};

}  // namespace kubesched::store::controllers
