#pragma once
// An upper bound on how much of a batch of pods can be placed: the Gilmore-Gomory configuration
// LP (one column per way of filling one node of a class, a "pattern"), solved by column
// generation. Counting "every pod placed" says nothing about bin packing; the pattern LP knows
// that three pods of 0.6 of a node need three nodes, and is among the tightest bounds known for
// bin packing (for one dimension the integer optimum is rarely more than a node away from it).
//
// The master LP is GLPK's simplex, kept between iterations (lp.h); the pricing problem, one
// node's multi-dimensional bounded knapsack, is solved by our own branch and bound
// (SolvePackingKnapsack). The bound is a Lagrangian (Farley) bound, valid after every iteration,
// so a time limit or an iteration or node cap yields a weaker number, never a wrong one.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace kubesched::optimizer {

//! A batch as numbers: identical pods grouped into shapes, identical nodes into classes.
struct PatternBoundInput {
  //! Dimensions of every demand and capacity (cpu milli, memory, pods, extended resources ...).
  size_t num_resources = 0;

  //! count identical pods, each asking for demand (one value per resource).
  struct Shape {
    std::vector<int64_t> demand;
    int64_t count = 0;
    //! The objective value of one placed pod (> 0).
    double weight = 1;
  };

  //! count identical nodes with capacity free (one value per resource).
  struct NodeClass {
    std::vector<int64_t> capacity;
    int64_t count = 0;
    //! Per shape: at most this many on one node of the class: 0 = not allowed there (a filter
    //! rejects it), 1 = self anti-affinity per node, a large number = unlimited.
    std::vector<int32_t> max_per_node;
  };

  std::vector<Shape> shapes;
  std::vector<NodeClass> classes;
};

struct PatternBoundOptions {
  //! Wall-clock limit for the whole computation; the bound found so far is returned when it hits.
  double time_limit_seconds = 1;
  //! At most this many column-generation iterations (LP solve, then pricing).
  int max_iterations = 1000;
  //! Stop once bound - lp_value <= relative_gap * max(1, lp_value). Half of it is shared out
  //! among the nodes as the pricing's tolerance: each class's pricing may miss a pattern worth
  //! that little more, which spares its branch and bound most of its proof (0 = exact pricing).
  double relative_gap = 1e-4;
  //! Branch-and-bound nodes one pricing problem may use. Pricing first runs with at most 1,000;
  //! only when no class yields a pattern are the classes not yet proved priced with this many.
  //! A pricing cut short returns the best pattern found and a valid upper bound, so the bound
  //! stays valid, only looser.
  int64_t pricing_node_limit = 20000;
};

//! A pattern the final LP uses: nodes of one class, each holding the same pods.
struct PatternUse {
  size_t node_class = 0;
  //! (shape index, pods of that shape on one node), shapes ascending, counts > 0.
  std::vector<std::pair<size_t, int64_t>> pods;
  //! How many nodes of the class take this pattern in the LP solution (fractional).
  double nodes = 0;
};

struct PatternBoundResult {
  //! An upper bound on sum_s weight_s * placed_s over every integer placement; floored when every
  //! weight is integral. Never above sum_s weight_s * count_s.
  double bound = 0;
  //! The last restricted LP's value: what the patterns found so far achieve fractionally (a lower
  //! bound on the LP optimum; equal to it, within tolerance, when converged).
  double lp_value = 0;
  //! The LP optimum was proved (within the pricing tolerance, see relative_gap): every class
  //! priced and no pattern improves the LP, or the LP reached the trivial bound.
  bool converged = false;
  //! LP solves.
  int iterations = 0;
  //! Columns (patterns) in the LP at the end, the single-shape starting ones included.
  int columns = 0;
  double seconds = 0;
  //! "converged", "gap" (relative_gap reached), "integral" (the floored bound cannot drop
  //! further), "time limit", "iteration limit", "pricing limit" (pricing stopped at its node limit
  //! and found nothing new), "lp failed: ..." or "empty" (nothing can be placed at all).
  std::string stopped_by;
  //! The final LP's positive columns, which a caller may round into a placement.
  std::vector<PatternUse> patterns;
  //! The final LP's price of one more pod per shape (the shape rows' duals, >= 0).
  std::vector<double> shape_prices;
};

//! The pattern-LP bound of input. Silent (GLPK's output is swallowed) and throws nothing;
//! malformed input (sizes disagree, negative counts or demands, a weight that is not positive and
//! finite) is an error message.
std::expected<PatternBoundResult, std::string> ComputePatternBound(const PatternBoundInput& input,
                                                                   const PatternBoundOptions& options = {});

//! One node's packing problem, the pricing problem of the pattern LP:
//! max sum_i profit_i * a_i subject to sum_i demand_i[d] * a_i <= capacity[d] for every d and
//! 0 <= a_i <= limit_i, a integer.
struct PackingKnapsack {
  size_t num_resources = 0;
  std::vector<double> profit;
  //! Item-major: demand[i * num_resources + d]; non-negative.
  std::vector<int64_t> demand;
  std::vector<int64_t> limit;
  std::vector<int64_t> capacity;
};

struct PackingKnapsackResult {
  //! The best packing found (one count per item) and its profit.
  double value = 0;
  std::vector<int64_t> count;
  //! >= the optimum; when proved, at most max(value, threshold) + tolerance (up to rounding).
  double upper_bound = 0;
  //! The search finished within its node and time limits.
  bool proved = false;
  int64_t nodes = 0;
};

struct PackingKnapsackOptions {
  //! Only packings worth more than this are sought: a search that finds none proves the optimum
  //! is at most threshold (plus tolerance).
  double threshold = 0;
  //! A packing worth less than tolerance above the best one found may be missed: the answer is
  //! within tolerance of the optimum, and the search much shorter on near-ties.
  double tolerance = 0;
  //! Past this many branch-and-bound nodes, or the deadline, the search stops with the best packing
  //! found and a valid (looser) upper bound.
  int64_t node_limit = 1'000'000;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

//! Branch and bound on problem, which must be well formed (sizes agree, demands, limits and
//! capacities non-negative and at most 2^52, profits finite). Its bound comes from the LP
//! relaxation, solved first (by GLPK, silently). An item dominated by another (worth no more,
//! needing no less of any resource) is packed only once the other is at its limit.
PackingKnapsackResult SolvePackingKnapsack(const PackingKnapsack& problem, const PackingKnapsackOptions& options = {});

}  // namespace kubesched::optimizer
