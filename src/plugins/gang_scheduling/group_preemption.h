#pragma once
// Workload-aware preemption (KEP-5710): a gang whose group cycle found no room preempts as one
// preemptor, with victims on any nodes. The group's priority (spec.priority, resolved by
// admission from its priorityClassName) stands for its pods' on both sides: a victim is a pod of
// strictly lower priority, or, for a PodGroup whose disruptionMode is PodGroup, the whole group
// at once (its pods on every node). Victims are chosen as upstream chooses them: every candidate
// removed, the group placed; then each candidate, in upstream's order of importance (those whose
// eviction a PodDisruptionBudget forbids first, then higher priority, a group before a pod, a
// pod that started earlier, a larger group), is given back while the group still places as many
// members. Where upstream places the group greedily at each step, the optimizer places it jointly
// (every constraint of every member), so a candidate is kept whenever any placement of the group
// leaves it room. A victim that a controller recreates and that fits elsewhere once the group is
// placed is moved: its destination is held for the replacement.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "framework/handle.h"
#include "framework/pod_info.h"
#include "framework/preemption/evaluator.h"
#include "optimizer/placement.h"

namespace kubesched::plugins::gang_scheduling {

//! What-if copies of the snapshot's nodes a preemption decision changes (group_preemption.cc).
class WhatIfNodes;

//! Upstream's messages.
inline constexpr std::string_view kGroupPreemptionTopology =
    "pod group preemption: not supported with topology constraints";
inline constexpr std::string_view kGroupPreemptionNever =
    "pod group preemption: not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kGroupNoVictims = "No preemption victims found for incoming preemptor";
inline constexpr std::string_view kWaitingForGroupPreemption =
    "waiting for the preemption for this pod group to be finished";

//! What preemption may take at once: one pod, or every running pod of a PodGroup whose
//! disruptionMode is PodGroup.
struct VictimUnit {
  std::string group;  //!< "namespace/name" for a whole group; empty for a single pod
  int32_t priority = 0;
  int64_t start_ns = 0;  //!< the earliest start among its pods
  bool violates_pdb = false;
  std::vector<framework::PodInfoPtr> pods;
  std::vector<std::string> nodes;  //!< the node of each pod
};

//! Upstream's order of importance between two candidates: true when `a` is to be spared before
//! `b` (higher priority; at equal priority a group before a pod; pods that started earlier;
//! groups that are larger, then started earlier).
bool MoreImportant(const VictimUnit& a, const VictimUnit& b);

//! A group preemption's decision.
struct GroupPreemptionResult {
  bool preempted = false;
  std::string message;                                     //!< why not (upstream's wording where it has one)
  optimizer::PlacementResult placement;                    //!< where the members go once the victims are gone
  std::vector<VictimUnit> victims;                         //!< evicted or moved, in importance order
  std::vector<std::pair<std::string, std::string>> moves;  //!< victim uid, destination node
  int32_t candidates = 0;                                  //!< units of lower priority considered
  int32_t solves = 0;                                      //!< placements computed
  bool optimal = true;                                     //!< every placement computed was proved optimal
  int32_t evicted_pods = 0;
  double seconds = 0;  //!< Plan's wall time
  //! Apply: what holds each move's destination until the replacement takes it.
  std::vector<framework::PodInfoPtr> placeholders;
};

//! Chooses the victims for a gang and evicts them (Preempt), or says why there are none.
class GroupPreemptor {
 public:
  GroupPreemptor(framework::Handle& handle, std::string_view plugin_name)
      : handle_(handle), evaluator_(plugin_name, handle) {}

  //! The group's priority: spec.priority, else (a PodGroup no admission saw) its highest member's.
  static int32_t GroupPriority(const api::PodGroup& group, const std::vector<framework::PodInfoPtr>& members);

  //! Chooses victims so that `needed` of `members` (the group's pending members, in queue order)
  //! fit, and where they go. Evicts nothing.
  GroupPreemptionResult Plan(const api::PodGroup& group, const std::vector<framework::PodInfoPtr>& members,
                             int32_t needed);
  //! Evicts the plan's victims (moves hold their destinations) and nominates each placed member
  //! to its node. The first failed eviction stops it.
  framework::Status Apply(const api::PodGroup& group, GroupPreemptionResult& plan);

  //! How long a placement within a preemption decision may take.
  static constexpr double kSolveSeconds = 2;
  //! At most this many placements per decision: once they are spent, a candidate is spared only
  //! when the current placement leaves it room (StillFits), else it stays a victim.
  static constexpr int32_t kMaxSolves = 48;
  //! ... and placements are computed for the reprieve for this long at most (a placement over
  //! 5,000 nodes takes about half a second).
  static constexpr double kReprieveSeconds = 3;

 private:
  //! Plan without the clock.
  GroupPreemptionResult Choose(const api::PodGroup& group, const std::vector<framework::PodInfoPtr>& members,
                               int32_t needed);
  //! The candidates: units of pods of lower priority than `priority` on the snapshot's nodes.
  std::vector<VictimUnit> Candidates(const api::PodGroup& group, int32_t priority) const;
  //! Per node with candidates (in importance order), a score in [0, kMaxNodeScore]: lower the more
  //! and the more important the candidates on it (the placement's tie-break).
  static std::unordered_map<std::string, int64_t> VictimCostScores(const std::vector<VictimUnit>& units);
  //! Whether the placement still holds with `unit` back on its nodes: each member placed on one of
  //! them passes the profile's filters there, beside the unit and the members placed before it.
  bool StillFits(const optimizer::PlacementResult& placed, const VictimUnit& unit, const WhatIfNodes& nodes);

  framework::Handle& handle_;
  framework::preemption::Evaluator evaluator_;
};

}  // namespace kubesched::plugins::gang_scheduling
