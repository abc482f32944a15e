#pragma once
// The cross-node preemption model: where a pending pod (the preemptor) can run once some
// lower-priority pods leave their nodes, either evicted or moved to another node (a controller
// recreates a moved pod and the scheduler steers the new pod there). One mixed-integer program
// over a neighbourhood of the cluster (the nodes the preemptor may take, the nodes a moved pod may
// go to), solved by the same MIP back ends as batch placement. Lexicographic objective: the
// preemptor placed (a constraint); then the most pods running at the end, counted by priority rank
// (one pod of a rank outweighs every pod below it: the pods a plan leaves without a place are then
// ones no preemption could bring back, so no chain follows it); then the fewest pods disrupted
// (evicted or moved); then the fewest moves. The framework side (which pods, which nodes, which
// pass Filter) is the CrossNodePreemption plugin's; this file knows only numbers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/mip.h"

namespace kubesched::optimizer {

struct PreemptionModel {
  //! Per resource dimension (cpu, memory, pods, ...), in the same order everywhere.
  size_t num_resources = 0;

  struct Node {
    std::string name;
    //! allocatable − requested − held (nominations), per dimension; may be negative.
    std::vector<int64_t> free;
    //! Whether the preemptor may be placed here (it fits once the pods the model removes leave).
    bool preemptor_candidate = false;
  };
  std::vector<Node> nodes;

  std::vector<int64_t> preemptor_request;

  //! A pod that may leave its node: evicted, or (movable) moved to one of `destinations`.
  struct Pod {
    int node = -1;  //!< index in nodes
    std::vector<int64_t> request;
    //! Priority class: 0 for the least important priority among the candidates, rising.
    int32_t priority_rank = 0;
    bool movable = false;
    //! On a node offered as a destination only (neither a candidate nor in a candidate's domain):
    //! it moves on only to nodes with room for it as they are (a chain of two moves), to at most
    //! a few of them, which keeps the model small.
    bool on_destination = false;
    std::vector<int> destinations;  //!< node indices (never its own node)
    std::vector<int> pdbs;          //!< indices into pdb_allowed of the budgets that select it
  };
  std::vector<Pod> pods;
  //! Disruptions each PodDisruptionBudget still allows (evictions and moves both count).
  std::vector<int32_t> pdb_allowed;

  //! The preemptor may run on `node` only when `pod` is neither left on a node of `domain` nor
  //! moved into one (required anti-affinity in either direction, over a topology domain).
  struct Conflict {
    int node = -1;
    int pod = -1;
    std::vector<int> domain;  //!< node indices of the domain (including `node`)
  };
  std::vector<Conflict> conflicts;

  //! Cuts learned when a plan failed validation.
  std::vector<int> forbidden_nodes;
  std::vector<std::pair<int, int>> forbidden_moves;  //!< (pod, destination)
};

struct PreemptionPlanResult {
  enum class Status { kPlan, kNoPlan, kError };
  Status status = Status::kNoPlan;
  int node = -1;
  std::vector<int> evicted;                //!< pod indices
  std::vector<std::pair<int, int>> moves;  //!< (pod, destination)
  bool optimal = false;
  double gap = 0;  //!< relative, on the weighted objective; 0 when optimal
  double solver_seconds = 0;
  std::string message;
};

//! A plan found greedily, used as the solver's start and as the answer when the solver gives
//! none: for each candidate node, the least important pods leave (moved when a destination has
//! room, else evicted) until the preemptor fits by resources; the cheapest node wins.
PreemptionPlanResult GreedyPreemptionPlan(const PreemptionModel& model);

//! A lower bound on the pods any plan removes (evicts or moves): over the candidate nodes, the
//! fewest pods whose removal frees the preemptor's request in every dimension (largest first),
//! plus the pods that must leave the node's domains; -1 when no candidate can work.
int64_t MinRemovals(const PreemptionModel& model);

//! The optimal plan (or the best found within the time limit). The solver is skipped when the
//! greedy plan evicts nothing and meets MinRemovals: no plan can do better.
PreemptionPlanResult SolvePreemptionModel(const PreemptionModel& model, MipSolver& solver, const MipOptions& options);

//! A plan's cost as the objective ranks it, lexicographically: pods left without a place (evicted
//! and not moved) per priority rank, the most important rank first; then pods disrupted
//! (evicted or moved); then moves.
struct PlanCost {
  std::vector<int64_t> lost;  //!< [0] counts the highest rank
  int64_t disrupted = 0;
  int64_t moves = 0;
  auto operator<=>(const PlanCost&) const = default;
};
PlanCost CostOf(const PreemptionModel& model, const PreemptionPlanResult& plan);

}  // namespace kubesched::optimizer
