#pragma once
// Exact placement of a small batch by trying every placement of its pods, up to symmetry: the
// nodes of a class are identical in everything the model reads (model.h: free capacity, labels,
// taints, running pods, preference), so of a class's nodes that hold no batch pod yet only the
// first is tried; and a group's pods are interchangeable, so their nodes are tried in
// non-decreasing order (left out last). A replay's batches of two to five pods that arrived in the
// same second are proved optimal this way in milliseconds, where a solver's process costs a
// quarter of a second each.
//
// Pods are tried in the batch's group order, each checked as its own cycle would check it then
// (PlacementState::Check). With required pod (anti-)affinity or spread constraints between
// several pods, a placement may pass only in another order, so Enumerable says no: those batches
// are left to the solver.

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "optimizer/model.h"

namespace kubesched::optimizer {

struct Enumerated {
  std::vector<std::vector<int32_t>> counts;  // [group][node]: the best placement found
  double objective = 0;                      // PlacementState::Objective of it
  double tie_break = 0;                      // the profile's preference summed over its pods
  bool found = false;                        // some placement was evaluated
  bool complete = false;                     // every placement was: the answer is optimal
  int64_t steps = 0;                         // pods placed or left out while searching
};

//! Whether enumeration gives `m` an exact answer: one pod (every constraint is then decided by
//! the node alone), or pods without pod (anti-)affinity terms and spread constraints.
bool Enumerable(const BatchModel& m);

//! The placement with the least PlacementState::Objective minus `tie_break_weight` times its
//! preference (what the solver's formulation minimises); stops incomplete after `max_steps` steps
//! or at `deadline`.
Enumerated EnumeratePlacements(const BatchModel& m, std::span<const int32_t> group_order, double tie_break_weight,
                               int64_t max_steps, std::chrono::steady_clock::time_point deadline);

}  // namespace kubesched::optimizer
