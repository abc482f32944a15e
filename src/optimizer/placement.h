#pragma once
// Jointly optimal placement of a batch of pods: a pipeline of named, switchable stages.
//   grouping   identical pods become one group with a count, identical nodes one class (model.h)
//   presolve   bounds per group and node; symmetry breaking between nodes of one class
//   heuristic  greedy constructions (packing and spreading) plus node-emptying local search;
//              the incumbent, and the answer when the deadline hits
//   exact      the integer program, warm-started from the incumbent, under the deadline
//   validation the answer replayed pod by pod through upstream's checks, which gives the order
//              the pods' own cycles must run in; a pod that cannot be ordered is left out
// Objective, lexicographic: most pods placed (weighted by priority), then fewest nodes newly
// used, then the profile's own scores (PlacementInput::scores) as a tie-break worth less than 0.4
// in all, so that an absolute gap of 0.5 still proves the two integral levels.

#include <cstdint>
#include <string>
#include <vector>

#include "optimizer/model.h"

namespace kubesched::optimizer {

struct PlacementOptions {
  double timeout_seconds = 10;
  uint64_t seed = 1;
  std::string solver = "cbc";
  bool presolve = true;   // bounds and symmetry breaking
  bool heuristic = true;  // greedy + local search incumbent
  bool exact = true;      // the solver
  bool bound = true;      // the pattern LP's bound on the pods placed (pattern_bound.h)
  //! Small batches are solved by trying every placement up to symmetry (enumerate.h); one whose
  //! search takes more steps than this (pods placed or left out) goes on to the solver.
  bool enumerate = true;
  int64_t max_enumeration_steps = 1 << 18;
  //! The exact stage is skipped for models with more (group, node) pairs than this: a solver
  //! cannot be stopped inside its root relaxation, and on larger models that alone outlasts any
  //! deadline worth having (openb's 94 groups x 1,523 nodes took CBC over 3 minutes).
  int64_t max_exact_columns = 40000;
  //! Once the pods placed meet the pattern bound, the solver runs only for the lower levels
  //! (stranding, new nodes) of models up to this many pairs.
  int64_t max_exact_columns_when_placed_proved = 5000;
  //! ... and of at most this many (group, node class) combinations: a solver proves the lower
  //! levels quickly on symmetric clusters (a few classes of identical nodes) at any size, and
  //! rarely within its time on heterogeneous ones (a trace's partly filled nodes).
  int64_t max_group_classes_when_placed_proved = 1000;
};

struct PlannedPod {
  framework::PodInfoPtr pod;
  std::string node;  // empty: not placed
  //! How many nodes the profile's filters accept the pod on as the batch found them (its
  //! alternatives, before the batch's own pods and constraints between pods count).
  int32_t fitting_nodes = 0;
};

struct PlacementResult {
  //! Placed pods in the order their cycles must run, then the pods left out (node empty).
  std::vector<PlannedPod> plan;
  //! Per pod left out (by uid): why no room was found for it.
  std::vector<std::pair<std::string, std::string>> unplaced_reasons;
  int32_t placed = 0;
  int32_t unplaced = 0;
  int32_t new_nodes_used = 0;
  int32_t groups = 0;
  int32_t node_classes = 0;
  bool optimal = false;
  //! (objective - bound) / objective of the lexicographic objective; 0 when optimal.
  double gap = 0;
  double seconds = 0;
  double solver_seconds = 0;
  std::string solver;         // which back end ran (empty: none needed)
  std::string stopped_by;     // "optimal", "deadline", "heuristic" (bound met), "no solver"
  int32_t greedy_placed = 0;  // the greedy construction's numbers, for comparison
  int32_t greedy_new_nodes = 0;
  double greedy_stranded = 0;
  //! Accelerator units stranded after the placement (model.h: Accelerator), and how many
  //! accelerator resources the model has.
  double stranded = 0;
  int32_t accelerators = 0;
  //! The pods placed weighted by priority level (the count when all have one priority), the
  //! pattern LP's upper bound on it, and the relative gap between them.
  double placed_weighted = 0;
  double placed_bound = 0;
  double placed_gap = 0;
  double bound_seconds = 0;
  //! Which candidate the placement came from: "greedy" (what the profile does one by one),
  //! "packing" (the heuristic) or the solver's name.
  std::string source;
  //! Whether the placement beats what the profile would do one by one: only then is it worth a
  //! plan. When false, the batch's pods go through their own cycles unplanned.
  bool apply_plan = true;
};

PlacementResult PlaceBatch(const PlacementInput& input, const PlacementOptions& options);

}  // namespace kubesched::optimizer
