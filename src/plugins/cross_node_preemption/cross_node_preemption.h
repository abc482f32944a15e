#pragma once
// CrossNodePreemption: a PostFilter plugin (kubesched's own) that makes room for a pod that fits
// nowhere by evicting lower-priority pods on any node and by moving pods that a controller
// recreates. It plans the final state over the neighbourhood that matters (the nodes where the
// preemptor fits once pods leave, including pods on other nodes of a topology domain that block
// it through required anti-affinity, and the nodes with room for moved pods), with the
// optimizer's MIP, lexicographically: the preemptor placed; then the most pods running at the
// end, counted by priority (one pod of a priority outweighs every pod below it, so no pod the
// plan leaves pending could then preempt its way back in: no chain follows a plan); then the
// fewest pods disrupted; then the fewest moves. A plan is validated by the profile's own Filter
// plugins before anything is evicted.
//
// Applying a plan without races or churn: the preemptor is nominated to its node (lower-priority
// pods cannot take the room, as upstream); the destination of each moved pod is held for the
// replacement its controller will create (PodNominator::ExpectReplacement: the nominator hands the
// hold to the new pod as it enters the queue, before a batch could place it elsewhere); victims
// are deleted gracefully; the plan ends when the preemptor and the replacements are reserved, or
// expires for a reason it names (its node gone, its deadline passed, the preemptor no longer
// fitting once its victims left), releasing what it holds. A pod a plan disrupted, and its
// replacements, are not disrupted again for disruptionCooldownSeconds. Victim selection, PDB
// accounting and eviction are the evaluator DefaultPreemption uses (framework/preemption).

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/preemption/evaluator.h"
#include "framework/statistics.h"
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
  //! A pod a plan disrupted (evicted or moved) is not disrupted again by another plan for this
  //! long: neither its replacement nor the pod itself while it terminates. 0 turns it off.
  double disruption_cooldown_seconds = 300;
  //! GLPK by default: a preemption model is small, and GLPK solves it in process in well under a
  //! millisecond, where CBC (isolated in a child process) pays a fork per decision.
  std::string solver = "glpk";
};

std::expected<CrossNodePreemptionArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                         const std::string& path);
std::string EncodeArgs(const CrossNodePreemptionArgs& args);

//! One plan as it went (simulate's summary, --explain, the property tests).
struct PlanRecord {
  std::string preemptor;  //!< namespace/name
  std::string node;
  int64_t evictions = 0;
  int64_t moves = 0;
  bool optimal = false;
  //! "active", "completed", or "expired: <why>".
  std::string outcome = "active";
};

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
  //! Pods left out of a model because a plan disrupted them (or their lineage) within
  //! disruptionCooldownSeconds.
  int64_t protected_pods = 0;
  double max_gap = 0;
  double solver_seconds = 0;
  std::vector<double> decision_seconds;       //!< wall time of each PostFilter that computed a plan
  std::map<std::string, int64_t> expired_by;  //!< why plans expired, by reason
  std::vector<PlanRecord> plan_records;       //!< the first kMaxPlanRecords plans
};

//! What CrossNodePreemption::Statistics() reports: the statistics and what is still in progress.
struct CrossNodeReport {
  CrossNodeStats stats;
  size_t active_plans = 0;  //!< plans still in progress
  size_t held_moves = 0;    //!< room still held for moved pods (0: nothing left held)
};

class CrossNodePreemption final : public framework::PreFilterPlugin,
                                  public framework::PostFilterPlugin,
                                  public framework::ReservePlugin,
                                  public framework::TimedPlugin,
                                  public framework::PodExplainer,
                                  public framework::StatisticsReporter {
 public:
  static constexpr std::string_view kName = "CrossNodePreemption";

  CrossNodePreemption(CrossNodePreemptionArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }

  //! Keeps pods that conflict with a waiting preemptor out of the topology domains its plan
  //! cleared. (A moved pod's replacement is recognised by the nominator when it is created:
  //! PodNominator::ExpectReplacement.)
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  std::pair<framework::PostFilterResult, framework::Status> PostFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      const framework::NodeToStatus& filtered_statuses) override;
  //! Marks the preemptor or a moved pod's replacement as placed; a plan whose pods are all placed
  //! ends.
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  void Unreserve(framework::CycleState&, const framework::PodInfo&, const std::string&) override {}
  std::optional<int64_t> NextTickNs() const override;
  //! Expires plans past their deadline or whose node is gone, releasing what they hold.
  void Tick(const std::vector<framework::PodInfoPtr>& held) override;

  //! The plan the pod was the preemptor of, or the move whose replacement it was.
  std::string ExplainPod(const api::Pod& pod) const override;

  CrossNodeStats stats() const;
  //! A CrossNodeReport.
  std::any Statistics() const override;
  //! Plans in progress (tests: nothing may stay held once they end).
  size_t active_plans() const;
  //! Placeholders and steered replacements the plans hold room for.
  size_t held_moves() const;

  static constexpr size_t kMaxPlanRecords = 10000;

 private:
  struct Move {
    std::shared_ptr<const api::Pod> victim;
    std::string destination;
    std::string template_key;
    framework::PodInfoPtr placeholder;  // holds the destination until the replacement claims it
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
    size_t record = SIZE_MAX;  // index into stats_.plan_records
  };
  //! A pod a plan disrupted: its replacements (same controller and template, created since) are
  //! not disrupted again before `until_ns`.
  struct Disruption {
    std::string template_key;
    int64_t at_ns = 0;
    int64_t until_ns = 0;
  };
  struct Neighbourhood;
  struct PlanWorld;
  using Outcome = std::pair<framework::PostFilterResult, framework::Status>;
  using MovesToApply = std::vector<std::pair<std::shared_ptr<const api::Pod>, std::string>>;  // victim, destination

  std::pair<framework::PostFilterResult, framework::Status> ComputeAndApply(
      framework::CycleState& state, const framework::PodInfo& pod, const framework::NodeToStatus& filtered_statuses);
  // The steps of ComputeAndApply, in order. A step that returns an Outcome ends the decision with it.
  //! Whether the pod may preempt at all, and the nodes where preemption may help (outside the
  //! domains other plans closed).
  std::optional<Outcome> FindPotentialNodes(const framework::PodInfo& pod,
                                            const framework::NodeToStatus& filtered_statuses, Neighbourhood& hood);
  //! The pods that may leave their nodes: lower priority, not protected, not disrupted within the
  //! cooldown, within their PDBs.
  void CollectCandidates(const framework::PodInfo& pod, int64_t now_ns, Neighbourhood& hood);
  //! Where the preemptor fits once every candidate pod is gone (what-if copies of their nodes).
  std::optional<Outcome> FindFeasibleNodes(framework::CycleState& state, const framework::PodInfo& pod,
                                           Neighbourhood& hood);
  //! The feasible nodes where the preemptor fits most cheaply, within maxCandidatePods.
  void SelectCandidateNodes(Neighbourhood& hood) const;
  //! Required anti-affinity in either direction between the preemptor and pods that may leave.
  void FindAntiAffinity(const framework::PodInfo& pod, Neighbourhood& hood) const;
  //! The model: candidate nodes and their pods, blockers, destinations, conflicts, ranks.
  void BuildModel(Neighbourhood& hood);
  //! Adds the nodes with the most room for moved pods, and the pods there that may leave.
  void AddDestinationNodes(Neighbourhood& hood) const;
  //! The model nodes each movable model pod's filters accept.
  void FindMoveDestinations(Neighbourhood& hood);
  //! Logs the model at verbosity 4.
  static void LogModel(const api::Pod& preemptor, const Neighbourhood& hood);
  //! Solves the model until a plan passes validation (a failed check becomes a cut), 4 rounds at most.
  std::optional<Outcome> SolveAndValidate(framework::CycleState& state, const framework::PodInfo& pod,
                                          Neighbourhood& hood);
  //! Whether the profile's filters accept the plan (the preemptor on its node, each moved pod on
  //! its destination); a rejection is cut from the model. An error is a PreFilter extension's.
  std::expected<bool, framework::Status> ValidatePlan(framework::CycleState& state, const framework::PodInfo& pod,
                                                      Neighbourhood& hood);
  //! Whether the filters accept each moved pod on its destination (the first that does not is cut).
  bool ValidateMoves(PlanWorld& world, Neighbourhood& hood);
  //! Counts a decision whose model yielded no valid plan, and says why.
  Outcome NoValidPlan(const Neighbourhood& hood, double decision_seconds);
  //! Counts a decision that found no plan: the pod is unschedulable for `detail`.
  Outcome NoPlan(std::string detail);
  //! Applies the plan: holds destinations, records the plan, evicts, nominates the preemptor.
  Outcome ApplyPlan(const framework::PodInfo& pod, int64_t now_ns, const Neighbourhood& hood, double decision_seconds);
  //! The plan to track, and (into `disrupted`) the disruptions to remember.
  Plan MakePlan(const framework::PodInfo& pod, int64_t now_ns, const Neighbourhood& hood,
                std::vector<Disruption>& disrupted) const;
  //! Holds each move's destination for the victim's replacement.
  MovesToApply HoldDestinations(const Plan& applied);
  //! Counts the plan and keeps it, with its disruptions.
  void RecordPlan(const api::Pod& preemptor, Plan applied, const std::vector<Disruption>& disrupted,
                  const Neighbourhood& hood, double decision_seconds);
  //! Evicts the plan's victims, then its moved pods; the first failure stops it.
  framework::Status EvictVictims(const api::Pod& preemptor, const std::string& node, const Neighbourhood& hood,
                                 const MovesToApply& moves_to_apply);
  //! Whether a plan disrupted this pod, or the pod it replaces, within the cooldown.
  bool RecentlyDisrupted(const framework::PodInfo& pod, int64_t now_ns) const;
  //! Releases what the plan holds (placeholders, replacements' plans).
  void Release(Plan& plan);
  //! Ends a plan: completed, or expired for `why` (logged, counted by reason).
  void EndPlan(const std::string& preemptor_uid, const std::string& why);
  //! Whether the plan still waits for room on its node: its victims, or any pod there, terminating.
  bool VictimsStillPresent(const Plan& plan) const;
  //! Whether a pod on the node is terminating (its room is about to be free).
  static bool RoomBeingFreed(const framework::NodeInfo& node);
  //! The (topology key, value) domains other plans cleared of pods that conflict with `pod`.
  //! Called with mu_ held.
  std::vector<std::pair<std::string, std::string>> ClosedDomains(const framework::PodInfo& pod) const;
  static bool InClosedDomain(const framework::NodeInfo& node,
                             const std::vector<std::pair<std::string, std::string>>& closed);
  //! The replacement that claimed the move's placeholder, or null.
  framework::PodInfoPtr ReplacementOf(const Move& move) const;

  CrossNodePreemptionArgs args_;
  framework::Handle& handle_;
  framework::preemption::Evaluator evaluator_;
  std::unique_ptr<optimizer::MipSolver> solver_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Plan> plans_;  // by preemptor uid; guarded by mu_
  std::vector<Disruption> disruptions_;          // guarded by mu_
  //! Replacements that took a move's hold: pod key → what they replaced, for whom, where.
  std::unordered_map<std::string, std::string> replacement_notes_;  // guarded by mu_
  CrossNodeStats stats_;                                            // guarded by mu_
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::cross_node_preemption
