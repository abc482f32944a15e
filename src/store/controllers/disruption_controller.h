#pragma once
// The disruption controller (pkg/controller/disruption): keeps each PodDisruptionBudget's status
// current so the eviction subresource can decide: expectedPods, currentHealthy (ready, not
// terminating, not recently evicted), desiredHealthy (from minAvailable or maxUnavailable, integer
// or percentage, rounded up as upstream does), disruptionsAllowed, the DisruptionAllowed
// condition, observedGeneration, and disruptedPods (an eviction's entry is dropped once the pod
// is terminating or gone, or after two minutes). The expected count is the number of selected
// pods rather than the sum of their controllers' scales.
//
// Each budget's selected pods are kept as a set updated from pod events (a pod event costs one
// selector match per budget in its namespace), and statuses are written at Flush, once per
// budget however many of its pods changed.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/controllers/controller.h"
#include "store/selectors.h"

namespace kubesched::store::controllers {

class DisruptionController final : public Controller {
 public:
  explicit DisruptionController(const ControllerContext& ctx);
  std::string_view Name() const override { return "disruption"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  void Flush() override;

 private:
  struct Budget {
    ObjectPtr object;
    std::optional<LabelSelectorExpr> selector;  //!< null when malformed: the budget is left alone
    std::string min_available;                  //!< encoded JSON value, "" when absent
    std::string max_unavailable;
    int64_t generation = 1;
    std::string spec_json;  //!< a change of spec selects the pods anew
    std::string status_json;
    std::set<std::string> members;  //!< uids of the pods it selects
  };
  void OnBudget(const WatchEvent& event);
  void OnPod();
  void Sync(const Budget& budget);

  ControllerContext ctx_;
  const ResourceType& pods_;
  const ResourceType& pdbs_;
  std::unordered_map<std::string, Budget> by_uid_;
  std::unordered_map<std::string, std::set<std::string>> by_namespace_;  //!< budget uids
  std::vector<std::string> dirty_;
};

}  // namespace kubesched::store::controllers
