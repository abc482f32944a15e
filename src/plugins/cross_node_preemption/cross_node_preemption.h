#pragma once
// CrossNodePreemption: a PostFilter plugin (kubesched's own) that makes room for a pod that fits
// nowhere by evicting lower-priority pods on any node and by moving pods that a controller
// recreates, choosing the least disruptive plan (fewest evictions, then the least important ones,
// then fewest moves) with the optimizer's MIP over the neighbourhood that matters: the nodes where
// the preemptor fits once pods leave (including pods on other nodes of a topology domain that
// block it through required anti-affinity) and the nodes with room for moved pods. A plan is
// validated by the profile's own Filter plugins before anything is evicted.
//
// Applying a plan without races: the preemptor is nominated to its node (lower-priority pods
// cannot take the room, as upstream); the destination of each moved pod is held by a planned
// placeholder that every pod's Filter counts (PodNominator::AddPlannedPod); victims are deleted
// gracefully (they terminate on their nodes); a recreated pod (new name and uid) is recognised at
// PreFilter by its controller and template and steered to its planned node; the plan ends when
// the preemptor and the moved pods are reserved, or expires (deadline, node gone, room taken), and
// then releases everything it holds. Victim selection, PDB accounting and eviction are the
// evaluator DefaultPreemption uses (framework/preemption).

#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/args.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/preemption/evaluator.h"
#include "optimizer/mip.h"
#include "optimizer/preemption_model.h"

namespace kubesched::plugins::cross_node_preemption {

struct CrossNodePreemptionArgs {
  double solver_timeout_seconds = 1;
  //! Pods in these namespaces are never evicted or moved.
  std::vector<std::string> protected_namespaces = {"kube-system"};
  //! Whether pods owned by a controller may be moved (evicted and recreated on a planned node).
  bool allow_moves = true;
  //! At most this many pods that may leave their nodes in one model (nodes are taken in order of
  //! how cheaply the preemptor fits on them until the budget is spent).
  int32_t max_candidate_pods = 50;
  //! At most this many nodes with free room are offered to moved pods (besides the candidates).
  int32_t max_destination_nodes = 16;
  //! How long a plan may take beyond its victims' grace period before it expires.
  double plan_timeout_seconds = 60;
  //! GLPK by default: a preemption model is small, and GLPK solves it in process in well under a
  //! millisecond, where CBC (isolated in a child process) pays a fork per decision.
  std::string solver = "glpk";
};

std::expected<CrossNodePreemptionArgs, framework::ArgsErrors> DecodeArgs(const nlohmann::json& args,
                                                                         const std::string& path);
nlohmann::ordered_json EncodeArgs(const CrossNodePreemptionArgs& args);

//! What the plugin decided so far (simulate's summary, the benchmark).
struct CrossNodeStats {
  int64_t attempts = 0;  //!< PostFilter runs that computed a plan
  int64_t plans = 0;     //!< plans applied
  int64_t no_plan = 0;
  int64_t evictions = 0;
  int64_t moves = 0;
  int64_t optimal = 0;  //!< plans proved optimal over their model
  int64_t expired = 0;
  int64_t completed = 0;
  double max_gap = 0;
  double solver_seconds = 0;
  std::vector<double> decision_seconds;  //!< wall time of each PostFilter that computed a plan
};

class CrossNodePreemption final : public framework::PreFilterPlugin,
                                  public framework::PostFilterPlugin,
                                  public framework::ReservePlugin,
                                  public framework::TimedPlugin {
 public:
  static constexpr std::string_view kName = "CrossNodePreemption";

  CrossNodePreemption(CrossNodePreemptionArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }

  //! Recognises a recreated pod of a planned move and steers it to its planned node; keeps pods
  //! that conflict with a waiting preemptor out of the topology domains its plan cleared.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  std::pair<framework::PostFilterResult, framework::Status> PostFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      const framework::NodeToStatus& filtered_statuses) override;
  //! Marks the preemptor or a moved pod as placed; a plan whose pods are all placed ends.
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  void Unreserve(framework::CycleState&, const framework::PodInfo&, const std::string&) override {}
  std::optional<int64_t> NextTickNs() const override;
  //! Expires plans past their deadline or whose nodes are gone, releasing what they hold.
  void Tick(const std::vector<framework::PodInfoPtr>& held) override;

  CrossNodeStats stats() const;
  //! Plans in progress (tests: nothing may stay held once they end).
  size_t active_plans() const;
  //! Placeholders and steered pods the plans hold room for.
  size_t held_moves() const;

 private:
  struct Move {
    std::shared_ptr<const api::Pod> victim;
    std::string destination;
    std::string template_key;
    framework::PodInfoPtr placeholder;  // holds the destination until claimed
    std::shared_ptr<const api::Pod> claimed_by;
    bool done = false;
  };
  struct Plan {
    std::string preemptor_uid;
    std::shared_ptr<const api::Pod> preemptor;
    framework::PodInfoPtr preemptor_info;
    std::string node;
    std::vector<std::shared_ptr<const api::Pod>> victims;  // evicted and moved, as they were
    std::vector<Move> moves;
    int64_t created_ns = 0;
    int64_t deadline_ns = 0;
    bool preemptor_done = false;
  };

  std::pair<framework::PostFilterResult, framework::Status> ComputeAndApply(
      framework::CycleState& state, const framework::PodInfo& pod, const framework::NodeToStatus& filtered_statuses);
  //! Releases what the plan holds (placeholders, steered pods' plans).
  void Release(Plan& plan);
  void EndPlan(const std::string& preemptor_uid, bool expired);
  bool VictimsStillPresent(const Plan& plan) const;

  CrossNodePreemptionArgs args_;
  framework::Handle& handle_;
  framework::preemption::Evaluator evaluator_;
  std::unique_ptr<optimizer::MipSolver> solver_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Plan> plans_;  // by preemptor uid
  CrossNodeStats stats_;
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::cross_node_preemption
