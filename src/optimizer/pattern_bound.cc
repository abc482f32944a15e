#include "optimizer/pattern_bound.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/lp.h"

namespace kubesched::optimizer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Demands and capacities stay exact in a double, and sums of a few of them fit an int64.
constexpr int64_t kMaxQuantity = int64_t{1} << 52;
// Pricing first runs with this many branch-and-bound nodes per class at most: a good pattern
// turns up early in the search, its proof takes far longer (near-ties among many shapes).
constexpr int64_t kQuickNodeLimit = 1000;
// Starting columns: each shape alone on this many classes at most. Every class would make the
// master LP large when classes are many (500 classes x 151 shapes: its solves then took most of
// the time); too few lengthen the column generation.
constexpr size_t kSingleShapeClasses = 16;
// An iteration stops pricing once it has found this many new columns, or one per shape if more.
constexpr size_t kColumnsPerIteration = 64;

// The LP relaxation of a PackingKnapsack (counts fractional, each at most what fits of it alone),
// kept in GLPK so that new profits re-solve from the last basis: the column generation prices each
// class once per iteration with new profits and the same constraints. Its optimal duals are the
// best multipliers for the search's surrogate bound, which then starts at the LP's value;
// coordinate descent alone stalls at kinks, up to several times further from the optimum.
class KnapsackRelaxation {
 public:
  explicit KnapsackRelaxation(const PackingKnapsack& problem)
      : lp_(std::span<const double>(ToDouble(problem.capacity))) {
    const size_t num_dims = problem.num_resources;
    std::vector<int32_t> rows;
    std::vector<double> values;
    for (size_t i = 0; i < problem.profit.size(); ++i) {
      int64_t fits = std::max<int64_t>(0, problem.limit[i]);
      rows.clear();
      values.clear();
      for (size_t d = 0; d < num_dims; ++d) {
        const int64_t need = problem.demand[i * num_dims + d];
        if (need == 0) continue;
        fits = std::min(fits, problem.capacity[d] / need);
        rows.push_back(static_cast<int32_t>(d));
        values.push_back(static_cast<double>(need));
      }
      lp_.AddColumn(0, rows, values, static_cast<double>(fits));
      fits_.push_back(fits);
    }
  }

  struct Solution {
    //! One per resource, >= 0; empty when GLPK failed.
    std::vector<double> duals;
    //! An upper bound on the knapsack (the LP's value when the duals are optimal).
    double bound = kInf;
  };
  //! The relaxation with problem's profits. Any duals >= 0 give a valid bound (the LP's dual
  //! function at them), so a solve cut short by deadline still counts.
  Solution Solve(const PackingKnapsack& problem, Clock::time_point deadline) {
    for (size_t i = 0; i < problem.profit.size(); ++i) lp_.SetObjective(static_cast<int32_t>(i), problem.profit[i]);
    const double seconds =
        deadline == Clock::time_point::max() ? 1e9 : std::chrono::duration<double>(deadline - Clock::now()).count();
    Solution solution;
    if (lp_.Solve(std::max(seconds, 1e-3)).status == ColumnLp::Status::kFailed) return solution;
    const size_t num_dims = problem.num_resources;
    solution.duals.resize(num_dims);
    solution.bound = 0;
    for (size_t d = 0; d < num_dims; ++d) {
      solution.duals[d] = std::max(0.0, lp_.RowDual(static_cast<int32_t>(d)));
      solution.bound += solution.duals[d] * static_cast<double>(problem.capacity[d]);
    }
    for (size_t i = 0; i < problem.profit.size(); ++i) {
      double reduced = problem.profit[i];
      for (size_t d = 0; d < num_dims; ++d) {
        reduced -= solution.duals[d] * static_cast<double>(problem.demand[i * num_dims + d]);
      }
      if (reduced > 0) solution.bound += reduced * static_cast<double>(fits_[i]);
    }
    // The sum's rounding, as the search allows for its own.
    solution.bound += 1e-9 * (1 + std::abs(solution.bound));
    return solution;
  }

 private:
  static std::vector<double> ToDouble(const std::vector<int64_t>& values) {
    return std::vector<double>(values.begin(), values.end());
  }
  ColumnLp lp_;
  std::vector<int64_t> fits_;  // per item: its column's upper bound
};

// Branch and bound for PackingKnapsack, with buffers kept between calls (the column generation
// prices every class on every iteration).
//
// The bound at a node is a surrogate relaxation: the dimensions are added up with multipliers y
// (one per resource) into one constraint, each item is capped by what fits of it alone in the
// node's residual capacity, and the resulting one-dimensional bounded knapsack is solved
// fractionally (Dantzig). With y the optimal duals of the knapsack's LP relaxation
// (KnapsackRelaxation) the root bound is that LP's value; without them, y comes from coordinate
// descent on the LP's dual function g(y) = y·C + sum_i u_i max(0, p_i - y·d_i). Items are
// branched on in decreasing p_i / (y·d_i), so the fractional bound is a short walk from the
// branching item, and lowering one item's count can only lower the bound that ignores the caps,
// which ends a node's loop early.
//
// Even with the LP's bound at every node, proving a pricing optimum took openb's classes up to
// hundreds of thousands of nodes (many shapes, near-equal prices: the integrality gap is closed
// by enumeration), hence the tolerance, the node limit, and the bound kept valid when they cut.
class KnapsackSearch {
 public:
  // duals are the LP relaxation's (KnapsackRelaxation), one per resource, or empty when unknown.
  PackingKnapsackResult Run(const PackingKnapsack& problem, const PackingKnapsackOptions& options,
                            std::span<const double> duals);

  //! The last few packings the search recorded (the best last), as counts per problem item, each
  //! with its value. Their count is at most kAlternatives.
  static constexpr size_t kAlternatives = 4;
  std::vector<std::pair<double, std::vector<int64_t>>> Alternatives(const PackingKnapsack& problem) const;

 private:
  struct Item {
    size_t index = 0;  // in the problem
    double profit = 0;
    int64_t limit = 0;
    double weight = 0;  // y·demand
    double ratio = 0;   // profit / weight; +inf when weight is 0
  };

  void Prepare(const PackingKnapsack& problem, std::span<const double> duals);
  void ChooseMultipliers(std::span<const double> duals);
  double DualFunction(std::span<const double> y) const;
  // The largest count of item j that fits the residual capacity alone.
  int64_t Fits(size_t j) const;
  // The fractional surrogate bound on what items j.. add to the residual capacity.
  double Bound(size_t j) const;
  void FindDominance();
  void Dfs(size_t i, double profit, double node_bound);
  void Record(double profit);

  // The problem, reduced: items worth taking, dimensions that bind.
  std::vector<Item> items_;
  std::vector<size_t> dims_;         // resources that can bind
  std::vector<int64_t> demand_;      // items_.size() x dims_.size(), in branching order
  std::vector<double> demand_real_;  // the same in double, for Fits
  std::vector<int64_t> capacity_;    // per dims_
  std::vector<double> y_;            // per dims_
  // Items that need nothing of a binding dimension, taken whole: (index, count), and their value.
  std::vector<std::pair<size_t, int64_t>> fixed_;
  double fixed_value_ = 0;

  // Per item, the items before it in branching order that dominate it and that it dominates
  // (FindDominance), as ranges [start[i], start[i + 1]) of the lists.
  std::vector<size_t> dominator_start_, dominated_start_;
  std::vector<uint32_t> dominators_, dominated_;

  // The search.
  std::vector<int64_t> residual_;  // per dims_
  std::vector<int64_t> count_;     // per items_
  std::vector<int64_t> best_count_;
  // The last kAlternatives recorded packings (value, counts per items_), a ring from recorded_.
  std::vector<std::pair<double, std::vector<int64_t>>> recorded_;
  size_t recorded_next_ = 0;
  double best_ = 0;
  double target_ = 0;  // prune nodes whose bound is at most this
  double threshold_ = 0;
  double eps_ = 0;             // rounding errors allowed for, plus the tolerance
  double unexplored_ = -kInf;  // best bound left unexplored when the search stopped
  int64_t nodes_ = 0;
  int64_t node_limit_ = 0;
  Clock::time_point deadline_;
  bool stopped_ = false;

  // Scratch for the multipliers' line searches.
  std::vector<std::pair<double, double>> breakpoints_;
};

void KnapsackSearch::Prepare(const PackingKnapsack& problem, std::span<const double> duals) {
  const size_t num_dims = problem.num_resources;
  const size_t n = problem.profit.size();
  items_.clear();
  dims_.clear();
  fixed_.clear();
  fixed_value_ = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(problem.profit[i] > 0) || problem.limit[i] <= 0) continue;
    int64_t limit = problem.limit[i];
    for (size_t d = 0; d < num_dims && limit > 0; ++d) {
      const int64_t need = problem.demand[i * num_dims + d];
      if (need > 0) limit = std::min(limit, problem.capacity[d] / need);
    }
    if (limit > 0) items_.push_back({.index = i, .profit = problem.profit[i], .limit = limit});
  }
  // A dimension binds only when the items, each at its limit, overflow it.
  for (size_t d = 0; d < num_dims; ++d) {
    int64_t total = 0;
    for (const Item& item : items_) {
      total += item.limit * problem.demand[item.index * num_dims + d];  // each term <= capacity
      if (total > problem.capacity[d]) break;
    }
    if (total > problem.capacity[d]) dims_.push_back(d);
  }
  const size_t m = dims_.size();
  capacity_.resize(m);
  for (size_t e = 0; e < m; ++e) capacity_[e] = problem.capacity[dims_[e]];
  // Items that need nothing of a binding dimension are taken whole.
  std::erase_if(items_, [&](const Item& item) {
    for (size_t d : dims_) {
      if (problem.demand[item.index * num_dims + d] > 0) return false;
    }
    fixed_.emplace_back(item.index, item.limit);
    fixed_value_ += item.profit * static_cast<double>(item.limit);
    return true;
  });
  demand_.resize(items_.size() * m);
  for (size_t j = 0; j < items_.size(); ++j) {
    for (size_t e = 0; e < m; ++e) demand_[j * m + e] = problem.demand[items_[j].index * num_dims + dims_[e]];
  }
  if (items_.empty()) return;

  ChooseMultipliers(duals);
  for (size_t j = 0; j < items_.size(); ++j) {
    double weight = 0;
    for (size_t e = 0; e < m; ++e) weight += y_[e] * static_cast<double>(demand_[j * m + e]);
    items_[j].weight = weight;
    items_[j].ratio = weight > 0 ? items_[j].profit / weight : kInf;
  }
  // Branching order; ties by index, so the search is deterministic.
  std::vector<size_t> order(items_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items_[a].ratio > items_[b].ratio; });
  std::vector<Item> sorted(items_.size());
  std::vector<int64_t> sorted_demand(demand_.size());
  for (size_t j = 0; j < order.size(); ++j) {
    sorted[j] = items_[order[j]];
    std::copy_n(demand_.begin() + static_cast<ptrdiff_t>(order[j] * m), m,
                sorted_demand.begin() + static_cast<ptrdiff_t>(j * m));
  }
  items_ = std::move(sorted);
  demand_ = std::move(sorted_demand);
  demand_real_.assign(demand_.begin(), demand_.end());
  FindDominance();
}

// Item a dominates item b when it is worth as much and needs no more of any binding dimension
// (ties broken by position): some optimal packing then takes b only once a is at its limit, as
// swapping one b for one a keeps it feasible and no worse, and a sequence of such swaps ends. The
// search keeps to such packings, which cuts the many equivalent ones that near-equal prices make.
void KnapsackSearch::FindDominance() {
  const size_t n = items_.size(), m = dims_.size();
  dominator_start_.assign(n + 1, 0);
  dominated_start_.assign(n + 1, 0);
  dominators_.clear();
  dominated_.clear();
  auto dominates = [&](size_t a, size_t b) {
    if (items_[a].profit < items_[b].profit) return false;
    bool equal = items_[a].profit == items_[b].profit;
    for (size_t e = 0; e < m; ++e) {
      if (demand_[a * m + e] > demand_[b * m + e]) return false;
      equal = equal && demand_[a * m + e] == demand_[b * m + e];
    }
    return !equal || a < b;
  };
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (dominates(j, i)) dominators_.push_back(static_cast<uint32_t>(j));
    }
    dominator_start_[i + 1] = dominators_.size();
    for (size_t j = 0; j < i; ++j) {
      if (dominates(i, j)) dominated_.push_back(static_cast<uint32_t>(j));
    }
    dominated_start_[i + 1] = dominated_.size();
  }
}

double KnapsackSearch::DualFunction(std::span<const double> y) const {
  const size_t m = dims_.size();
  double value = 0;
  for (size_t e = 0; e < m; ++e) value += y[e] * static_cast<double>(capacity_[e]);
  for (size_t j = 0; j < items_.size(); ++j) {
    double reduced = items_[j].profit;
    for (size_t e = 0; e < m; ++e) reduced -= y[e] * static_cast<double>(demand_[j * m + e]);
    if (reduced > 0) value += static_cast<double>(items_[j].limit) * reduced;
  }
  return value;
}

// Coordinate descent on the convex, piecewise-linear dual function: along one coordinate its
// minimum is a weighted quantile of the items' breakpoints. Any y >= 0 gives a valid bound, so a
// descent that stalls at a kink costs search nodes, not correctness.
void KnapsackSearch::ChooseMultipliers(std::span<const double> duals) {
  const size_t m = dims_.size();
  y_.assign(m, 0);
  if (!duals.empty()) {
    // The relaxation's duals are optimal unless a dimension left out (it cannot bind) had one.
    bool left_out = false;
    for (size_t d = 0, e = 0; d < duals.size(); ++d) {
      if (e < m && dims_[e] == d) {
        y_[e++] = duals[d];
      } else {
        left_out = left_out || duals[d] > 0;
      }
    }
    if (!left_out) return;
  }
  double value = DualFunction(y_);
  constexpr int kMaxSweeps = 12;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    for (size_t e = 0; e < m; ++e) {
      breakpoints_.clear();
      for (size_t j = 0; j < items_.size(); ++j) {
        const int64_t need = demand_[j * m + e];
        if (need == 0) continue;
        double reduced = items_[j].profit;
        for (size_t f = 0; f < m; ++f) {
          if (f != e) reduced -= y_[f] * static_cast<double>(demand_[j * m + f]);
        }
        if (reduced <= 0) continue;
        breakpoints_.emplace_back(reduced / static_cast<double>(need),
                                  static_cast<double>(items_[j].limit) * static_cast<double>(need));
      }
      std::sort(breakpoints_.begin(), breakpoints_.end(), std::greater<>());
      // The slope at t is capacity - (weight of the items whose breakpoint is above t).
      double weight = 0, best_t = 0;
      for (const auto& [t, w] : breakpoints_) {
        weight += w;
        if (weight > static_cast<double>(capacity_[e])) {
          best_t = t;
          break;
        }
      }
      y_[e] = best_t;
    }
    const double next = DualFunction(y_);
    const bool improved = next < value - 1e-12 * (1 + std::abs(value));
    value = std::min(value, next);
    if (!improved) break;
  }
}

// The hottest loop of the search: the quotients are taken in double, several times faster than
// int64 division and exact here: below 2^52, a quotient that is not an integer lies at least
// 1 / need below the next integer, more than half its rounding step.
int64_t KnapsackSearch::Fits(size_t j) const {
  const size_t m = dims_.size();
  double fits = static_cast<double>(items_[j].limit);
  const double* need = &demand_real_[j * m];
  for (size_t e = 0; e < m; ++e) {
    if (need[e] > 0) fits = std::min(fits, static_cast<double>(residual_[e]) / need[e]);
  }
  return static_cast<int64_t>(fits);  // truncation is the floor: fits >= 0
}

double KnapsackSearch::Bound(size_t j) const {
  double room = 0;
  for (size_t e = 0; e < dims_.size(); ++e) room += y_[e] * static_cast<double>(residual_[e]);
  double bound = 0;
  for (; j < items_.size(); ++j) {
    const int64_t fits = Fits(j);
    if (fits == 0) continue;
    const Item& item = items_[j];
    const double count = static_cast<double>(fits);
    if (item.weight <= 0) {
      bound += count * item.profit;
      continue;
    }
    if (count * item.weight <= room) {
      bound += count * item.profit;
      room -= count * item.weight;
    } else {
      return bound + item.profit * (room / item.weight);  // the items after are worth less per unit
    }
  }
  return bound;
}

void KnapsackSearch::Record(double profit) {
  best_ = profit;
  target_ = std::max(best_, threshold_) + eps_;
  best_count_ = count_;
  if (recorded_.size() < kAlternatives) {
    recorded_.emplace_back(profit, count_);
  } else {
    recorded_[recorded_next_] = {profit, count_};
    recorded_next_ = (recorded_next_ + 1) % kAlternatives;
  }
}

std::vector<std::pair<double, std::vector<int64_t>>> KnapsackSearch::Alternatives(
    const PackingKnapsack& problem) const {
  std::vector<std::pair<double, std::vector<int64_t>>> out;
  for (size_t r = 0; r < recorded_.size(); ++r) {
    const auto& [value, counts] = recorded_[(recorded_next_ + r) % recorded_.size()];
    std::vector<int64_t> full(problem.profit.size(), 0);
    for (size_t j = 0; j < items_.size(); ++j) full[items_[j].index] = counts[j];
    for (const auto& [index, limit] : fixed_) full[index] = limit;
    out.emplace_back(fixed_value_ + value, std::move(full));
  }
  return out;
}

void KnapsackSearch::Dfs(size_t i, double profit, double node_bound) {
  ++nodes_;
  // The clock is read on the first node and every 256th after.
  if (nodes_ > node_limit_ || ((nodes_ & 255) == 1 && Clock::now() >= deadline_)) {
    stopped_ = true;
    unexplored_ = std::max(unexplored_, node_bound);
    return;
  }
  const size_t m = dims_.size();
  const Item& item = items_[i];
  const int64_t* need = &demand_[i * m];
  int64_t most = Fits(i), least = 0;
  for (size_t k = dominator_start_[i]; k < dominator_start_[i + 1] && most > 0; ++k) {
    if (count_[dominators_[k]] < items_[dominators_[k]].limit) most = 0;
  }
  for (size_t k = dominated_start_[i]; k < dominated_start_[i + 1]; ++k) {
    if (count_[dominated_[k]] > 0) least = item.limit;
  }
  if (least > most) return;  // no packing the search keeps to lies below
  const bool last = i + 1 == items_.size();
  // Past this item every item is worth at most next_ratio per unit of surrogate room, so
  // profit + c * profit_i + next_ratio * (room - c * weight_i) bounds the children ignoring the
  // caps, and it only falls as c falls (ratio_i >= next_ratio).
  const double next_ratio = last ? 0 : items_[i + 1].ratio;
  double room = 0;
  for (size_t e = 0; e < m; ++e) room += y_[e] * static_cast<double>(residual_[e]);
  auto loose_bound = [&](int64_t c) {
    if (std::isinf(next_ratio)) return kInf;
    const double cd = static_cast<double>(c);
    return profit + cd * item.profit + next_ratio * std::max(0.0, room - cd * item.weight);
  };
  for (size_t e = 0; e < m; ++e) residual_[e] -= most * need[e];
  int64_t c = most;
  for (;; --c) {
    const double value = profit + static_cast<double>(c) * item.profit;
    count_[i] = c;
    // A packing is recorded where the search goes no deeper: below, the child with nothing more
    // of the next item is worth as much.
    if (last || loose_bound(c) <= target_) {
      if (value > best_ + eps_) Record(value);
      break;
    }
    const double bound = value + Bound(i + 1);
    if (bound > target_) {
      Dfs(i + 1, value, bound);
      if (stopped_) {
        if (c > least) unexplored_ = std::max(unexplored_, std::min(node_bound, loose_bound(c - 1)));
        break;
      }
    } else if (value > best_ + eps_) {
      Record(value);
    }
    if (c == least) break;
    for (size_t e = 0; e < m; ++e) residual_[e] += need[e];
  }
  count_[i] = 0;
  for (size_t e = 0; e < m; ++e) residual_[e] += c * need[e];
}

PackingKnapsackResult KnapsackSearch::Run(const PackingKnapsack& problem, const PackingKnapsackOptions& options,
                                          std::span<const double> duals) {
  const double threshold = options.threshold;
  PackingKnapsackResult result;
  result.count.assign(problem.profit.size(), 0);
  Prepare(problem, duals.size() == problem.num_resources ? duals : std::span<const double>());
  // The sums below are of a few hundred terms at most; rounding absorbs their rounding errors.
  const double rounding = 1e-9 * (1 + std::abs(fixed_value_) + std::abs(threshold));
  eps_ = rounding + std::max(0.0, options.tolerance);
  threshold_ = threshold - fixed_value_;
  recorded_.clear();
  recorded_next_ = 0;
  best_ = 0;
  target_ = std::max(best_, threshold_) + eps_;
  unexplored_ = -kInf;
  nodes_ = 0;
  node_limit_ = options.node_limit;
  deadline_ = options.deadline;
  stopped_ = false;
  residual_ = capacity_;
  count_.assign(items_.size(), 0);
  best_count_ = count_;

  double root_bound = 0;
  if (!items_.empty()) {
    root_bound = Bound(0);
    if (root_bound > target_) Dfs(0, 0, root_bound);
  }
  result.nodes = nodes_;
  result.proved = !stopped_;
  result.value = fixed_value_ + best_;
  for (size_t j = 0; j < items_.size(); ++j) result.count[items_[j].index] = best_count_[j];
  for (const auto& [index, limit] : fixed_) result.count[index] = limit;
  // Whatever was pruned is worth at most target_; what was left unexplored, its nodes' bounds.
  double upper = std::max(best_, threshold_) + eps_;
  if (stopped_) upper = std::max(upper, unexplored_ + rounding);
  upper = std::min(upper, root_bound + rounding);
  result.upper_bound = fixed_value_ + std::max(upper, best_);
  return result;
}

std::string Validate(const PatternBoundInput& input) {
  const size_t num_dims = input.num_resources;
  for (size_t s = 0; s < input.shapes.size(); ++s) {
    const PatternBoundInput::Shape& shape = input.shapes[s];
    const std::string name = "shape " + std::to_string(s);
    if (shape.demand.size() != num_dims) {
      return name + " has " + std::to_string(shape.demand.size()) + " demands, not " + std::to_string(num_dims);
    }
    for (int64_t need : shape.demand) {
      if (need < 0 || need > kMaxQuantity) return name + " has a demand out of range [0, 2^52]";
    }
    if (shape.count < 0 || shape.count > kMaxQuantity) return name + " has a count out of range [0, 2^52]";
    if (!(shape.weight > 0) || !std::isfinite(shape.weight)) return name + " has a weight that is not positive";
  }
  for (size_t k = 0; k < input.classes.size(); ++k) {
    const PatternBoundInput::NodeClass& node_class = input.classes[k];
    const std::string name = "node class " + std::to_string(k);
    if (node_class.capacity.size() != num_dims) {
      return name + " has " + std::to_string(node_class.capacity.size()) + " capacities, not " +
             std::to_string(num_dims);
    }
    for (int64_t room : node_class.capacity) {
      if (room < 0 || room > kMaxQuantity) return name + " has a capacity out of range [0, 2^52]";
    }
    if (node_class.count < 0 || node_class.count > kMaxQuantity) {
      return name + " has a count out of range [0, 2^52]";
    }
    if (node_class.max_per_node.size() != input.shapes.size()) {
      return name + " has " + std::to_string(node_class.max_per_node.size()) + " max_per_node entries, not " +
             std::to_string(input.shapes.size()) + " (one per shape)";
    }
  }
  return "";
}

// The floor of a bound on an integral objective. The bound's own rounding is far below the
// margin, so the floor never drops below the true bound's floor.
double FloorIntegral(double bound) { return std::floor(bound + 1e-7 * std::max(1.0, std::abs(bound))); }

// Column generation on the pattern LP. Rows: one per class that can take anything (at most its
// count of nodes), then one per shape (at most reach pods: its count, or fewer when the nodes
// cannot hold that many). Columns: patterns, each a way of filling one node of a class.
class PatternGeneration {
 public:
  PatternGeneration(const PatternBoundInput& input, const PatternBoundOptions& options, Clock::time_point began);
  PatternBoundResult Run();

 private:
  // One column of the master LP.
  struct Column {
    size_t row = 0;                                // the class's row
    std::vector<std::pair<size_t, int64_t>> pods;  // (shape, count), shapes ascending
  };

  void Reduce();
  void AddStartingColumns();
  // The patterns of a greedy packing filling the classes of rows in that order: pods from the
  // largest share of the node (first-fit decreasing), each pattern repeated on as many nodes as
  // the pods left allow.
  void AddGreedyColumns(std::span<const size_t> rows);
  // Adds the pattern counts (one per shape) for the class of row, unless the LP has it already.
  bool AddColumn(size_t row, std::span<const int64_t> counts);
  // The pricing problems, one per row: constraints fixed, profits set per iteration.
  void SetUpPricing();
  // Prices the class of row at the current prices into priced; adds the improving patterns it
  // finds and returns how many. With node_limit 0, only the relaxation's bound is taken.
  size_t Price(size_t row, double node_price, double tolerance, int64_t node_limit, PackingKnapsackResult& priced);
  struct Pricing {
    //! Every class has an upper bound at the current prices (not so when the deadline came first).
    bool complete = false;
    bool added = false;   //!< some pattern improves the LP (and was added)
    bool proved = false;  //!< every class priced to within the tolerance
    //! sum_k count_k times the class's upper bound.
    double nodes_worth = 0;
  };
  // Prices the classes (quickly, then in full if that found nothing). Once enough patterns turned
  // up, the classes left are bounded by their relaxations alone; at the deadline it just stops.
  Pricing PriceAll(double tolerance);
  // The result, with the LP's final columns and prices.
  PatternBoundResult Finish(std::string stopped_by);

  const PatternBoundInput& input_;
  const PatternBoundOptions& options_;
  const Clock::time_point began_;
  Clock::time_point deadline_;
  size_t num_shapes_ = 0;
  PatternBoundResult result_;

  // Per class and shape, the most pods of the shape one node of the class takes alone.
  std::vector<int64_t> most_;
  std::vector<int64_t> reach_;   // per shape
  std::vector<size_t> classes_;  // the classes with rows, by row
  int64_t nodes_ = 0;            // over classes_
  double trivial_ = 0;           // sum_s weight_s * reach_s
  bool integral_ = true;         // every weight an integer
  double improve_ = 0;

  std::unique_ptr<ColumnLp> lp_;
  std::vector<Column> columns_;
  std::set<std::pair<size_t, std::vector<std::pair<size_t, int64_t>>>> known_;
  std::vector<PackingKnapsack> pricing_;                          // per row; profits change every iteration
  std::vector<std::unique_ptr<KnapsackRelaxation>> relaxations_;  // per row
  std::vector<double> price_;                                     // per shape: the current duals
  std::vector<PackingKnapsackResult> priced_;                     // per row: the last pricing
  size_t next_row_ = 0;                                           // where pricing starts
  KnapsackSearch search_;
};

PatternGeneration::PatternGeneration(const PatternBoundInput& input, const PatternBoundOptions& options,
                                     Clock::time_point began)
    : input_(input), options_(options), began_(began), num_shapes_(input.shapes.size()) {
  const double limit = std::max(0.0, options.time_limit_seconds);
  deadline_ = limit < 1e9 ? began + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit))
                          : Clock::time_point::max();
  result_.shape_prices.assign(num_shapes_, 0);
}

void PatternGeneration::Reduce() {
  const size_t num_dims = input_.num_resources, num_classes = input_.classes.size();
  most_.assign(num_classes * num_shapes_, 0);
  reach_.assign(num_shapes_, 0);
  for (size_t k = 0; k < num_classes; ++k) {
    const PatternBoundInput::NodeClass& node_class = input_.classes[k];
    if (node_class.count == 0) continue;
    bool any = false;
    for (size_t s = 0; s < num_shapes_; ++s) {
      const PatternBoundInput::Shape& shape = input_.shapes[s];
      int64_t fits = std::min<int64_t>(shape.count, std::max(0, node_class.max_per_node[s]));
      for (size_t d = 0; d < num_dims && fits > 0; ++d) {
        if (shape.demand[d] > 0) fits = std::min(fits, node_class.capacity[d] / shape.demand[d]);
      }
      most_[k * num_shapes_ + s] = fits;
      any = any || fits > 0;
      // fits and count are at most 2^52: the product is taken in double and capped at count.
      const double placed = static_cast<double>(reach_[s]) + static_cast<double>(fits) * node_class.count;
      reach_[s] = static_cast<int64_t>(std::min(placed, static_cast<double>(shape.count)));
    }
    if (any) {
      classes_.push_back(k);
      nodes_ += node_class.count;
    }
  }
  double max_weight = 0;
  for (size_t s = 0; s < num_shapes_; ++s) {
    const double weight = input_.shapes[s].weight;
    trivial_ += weight * static_cast<double>(reach_[s]);
    max_weight = std::max(max_weight, weight);
    integral_ = integral_ && weight == std::floor(weight);
  }
  // A pattern improves the LP only if its reduced value exceeds this; below it the LP is optimal
  // within GLPK's own dual tolerance.
  improve_ = 1e-6 * max_weight;
}

bool PatternGeneration::AddColumn(size_t row, std::span<const int64_t> counts) {
  Column column{.row = row, .pods = {}};
  for (size_t s = 0; s < num_shapes_; ++s) {
    if (counts[s] > 0) column.pods.emplace_back(s, counts[s]);
  }
  if (column.pods.empty() || !known_.emplace(row, column.pods).second) return false;
  double value = 0;
  std::vector<int32_t> rows(1, static_cast<int32_t>(row));
  std::vector<double> values(1, 1.0);
  for (const auto& [s, count] : column.pods) {
    value += input_.shapes[s].weight * static_cast<double>(count);
    rows.push_back(static_cast<int32_t>(classes_.size() + s));
    values.push_back(static_cast<double>(count));
  }
  lp_->AddColumn(value, rows, values);
  columns_.push_back(std::move(column));
  return true;
}

// Each shape alone on the kSingleShapeClasses classes that hold most of it, then the patterns of
// two greedy packings, one filling the classes from the largest, one from the smallest. A greedy
// packing gives the LP a value near the optimum from the first iteration, which pricing alone
// takes many iterations to reach (neither order is the better one on every instance; on openb the
// first LP fell 4 pods short of all with the smallest first, 10 with the largest first); the
// single-shape patterns give every shape a price from the start.
void PatternGeneration::AddStartingColumns() {
  const size_t num_dims = input_.num_resources;
  std::vector<int64_t> counts(num_shapes_, 0);
  std::vector<std::pair<double, size_t>> held;  // (-pods the class holds, row)
  for (size_t s = 0; s < num_shapes_; ++s) {
    held.clear();
    for (size_t row = 0; row < classes_.size(); ++row) {
      const double fits = static_cast<double>(most_[classes_[row] * num_shapes_ + s]);
      if (fits > 0) held.emplace_back(-fits * static_cast<double>(input_.classes[classes_[row]].count), row);
    }
    std::sort(held.begin(), held.end());
    for (size_t r = 0; r < held.size() && r < kSingleShapeClasses; ++r) {
      counts.assign(num_shapes_, 0);
      counts[s] = most_[classes_[held[r].second] * num_shapes_ + s];
      AddColumn(held[r].second, counts);
    }
  }
  std::vector<double> largest(num_dims, 0);
  for (size_t k : classes_) {
    for (size_t d = 0; d < num_dims; ++d) {
      largest[d] = std::max(largest[d], static_cast<double>(input_.classes[k].capacity[d]));
    }
  }
  std::vector<double> size(classes_.size(), 0);
  for (size_t row = 0; row < classes_.size(); ++row) {
    for (size_t d = 0; d < num_dims; ++d) {
      if (largest[d] > 0) size[row] += static_cast<double>(input_.classes[classes_[row]].capacity[d]) / largest[d];
    }
  }
  std::vector<size_t> rows(classes_.size());
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return size[a] > size[b]; });
  AddGreedyColumns(rows);
  std::reverse(rows.begin(), rows.end());
  AddGreedyColumns(rows);
}

void PatternGeneration::AddGreedyColumns(std::span<const size_t> rows) {
  const size_t num_dims = input_.num_resources;
  std::vector<int64_t> left = reach_, residual(num_dims), counts(num_shapes_);
  std::vector<size_t> order(num_shapes_);
  std::vector<double> share(num_shapes_);
  for (size_t row : rows) {
    const PatternBoundInput::NodeClass& node_class = input_.classes[classes_[row]];
    const int64_t* most = &most_[classes_[row] * num_shapes_];
    for (size_t s = 0; s < num_shapes_; ++s) {
      share[s] = 0;
      for (size_t d = 0; d < num_dims; ++d) {
        if (node_class.capacity[d] > 0) {
          share[s] = std::max(
              share[s], static_cast<double>(input_.shapes[s].demand[d]) / static_cast<double>(node_class.capacity[d]));
        }
      }
    }
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return share[a] > share[b]; });
    int64_t nodes_left = node_class.count;
    while (nodes_left > 0) {
      residual = node_class.capacity;
      counts.assign(num_shapes_, 0);
      int64_t copies = nodes_left;
      for (size_t s : order) {
        int64_t take = std::min(left[s], most[s]);
        for (size_t d = 0; d < num_dims && take > 0; ++d) {
          if (input_.shapes[s].demand[d] > 0) take = std::min(take, residual[d] / input_.shapes[s].demand[d]);
        }
        if (take == 0) continue;
        counts[s] = take;
        copies = std::min(copies, left[s] / take);
        for (size_t d = 0; d < num_dims; ++d) residual[d] -= take * input_.shapes[s].demand[d];
      }
      if (copies == 0) break;  // nothing fits any more
      AddColumn(row, counts);
      for (size_t s = 0; s < num_shapes_; ++s) left[s] -= copies * counts[s];
      nodes_left -= copies;
    }
  }
}

size_t PatternGeneration::Price(size_t row, double node_price, double tolerance, int64_t node_limit,
                                PackingKnapsackResult& priced) {
  PackingKnapsack& problem = pricing_[row];
  for (size_t s = 0; s < num_shapes_; ++s) problem.profit[s] = input_.shapes[s].weight - price_[s];
  const PackingKnapsackOptions options{
      .threshold = node_price + improve_, .tolerance = tolerance, .node_limit = node_limit, .deadline = deadline_};
  if (relaxations_[row] == nullptr) relaxations_[row] = std::make_unique<KnapsackRelaxation>(problem);
  const KnapsackRelaxation::Solution relaxed = relaxations_[row]->Solve(problem, deadline_);
  const bool proved = relaxed.bound <= options.threshold + options.tolerance;
  if (proved || node_limit == 0) {
    // Either the relaxation proves no pattern improves the LP (late in the column generation,
    // most classes), or only its bound was asked for.
    priced = PackingKnapsackResult{.value = 0, .count = {}, .upper_bound = relaxed.bound, .proved = proved, .nodes = 0};
    return 0;
  }
  priced = search_.Run(problem, options, relaxed.duals);
  priced.upper_bound = std::min(priced.upper_bound, relaxed.bound);
  // The search's last packings, the best among them, are all columns worth adding when they
  // improve the LP: more columns per LP solve, fewer iterations.
  size_t added = 0;
  for (const auto& [value, counts] : search_.Alternatives(problem)) {
    if (value > node_price + improve_ && AddColumn(row, counts)) ++added;
  }
  return added;
}

PatternBoundResult PatternGeneration::Finish(std::string stopped_by) {
  result_.stopped_by = std::move(stopped_by);
  result_.bound = std::min(result_.bound, trivial_);
  if (integral_) result_.bound = FloorIntegral(result_.bound);
  if (lp_ != nullptr) {
    result_.columns = lp_->num_columns();
    if (result_.iterations > 0) {
      for (size_t s = 0; s < num_shapes_; ++s) {
        result_.shape_prices[s] = std::max(0.0, lp_->RowDual(static_cast<int32_t>(classes_.size() + s)));
      }
      for (size_t j = 0; j < columns_.size(); ++j) {
        const double nodes = lp_->ColumnValue(static_cast<int32_t>(j));
        if (nodes > 1e-9) {
          result_.patterns.push_back(
              {.node_class = classes_[columns_[j].row], .pods = columns_[j].pods, .nodes = nodes});
        }
      }
    }
  }
  result_.seconds = std::chrono::duration<double>(Clock::now() - began_).count();
  return std::move(result_);
}

void PatternGeneration::SetUpPricing() {
  const size_t num_dims = input_.num_resources;
  pricing_.resize(classes_.size());
  relaxations_.resize(classes_.size());
  for (size_t row = 0; row < classes_.size(); ++row) {
    PackingKnapsack& problem = pricing_[row];
    problem.num_resources = num_dims;
    problem.capacity = input_.classes[classes_[row]].capacity;
    problem.profit.assign(num_shapes_, 0);
    const auto most = std::span(most_).subspan(classes_[row] * num_shapes_, num_shapes_);
    problem.limit.assign(most.begin(), most.end());
    problem.demand.resize(num_shapes_ * num_dims);
    for (size_t s = 0; s < num_shapes_; ++s) {
      std::copy(input_.shapes[s].demand.begin(), input_.shapes[s].demand.end(),
                problem.demand.begin() + static_cast<ptrdiff_t>(s * num_dims));
    }
  }
  price_.assign(num_shapes_, 0);
  priced_.resize(classes_.size());
}

PatternGeneration::Pricing PatternGeneration::PriceAll(double tolerance) {
  const int64_t quick_limit = std::min(options_.pricing_node_limit, kQuickNodeLimit);
  const size_t num_rows = classes_.size();
  // Many classes: an iteration that has found enough columns stops pricing (the next one goes on
  // from the class after), so that the LP is not re-solved only after hundreds of pricings.
  const size_t enough = std::max<size_t>(kColumnsPerIteration, num_shapes_);
  Pricing pricing;
  size_t added = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int64_t node_limit = pass == 0 ? quick_limit : options_.pricing_node_limit;
    for (size_t i = 0; i < num_rows; ++i) {
      const size_t row = (next_row_ + i) % num_rows;
      if (pass == 1 && priced_[row].proved) continue;
      // Past the deadline this iteration's bound is abandoned (earlier ones stand): pricing every
      // class still, if only its relaxation, could overrun by a millisecond per class.
      if (Clock::now() >= deadline_) return pricing;
      const double node_price = std::max(0.0, lp_->RowDual(static_cast<int32_t>(row)));
      added += Price(row, node_price, tolerance, node_limit, priced_[row]);
      if (pass == 0 && added >= enough && i + 1 < num_rows) {
        // The classes not priced still bound the iteration through their relaxations alone.
        next_row_ = (row + 1) % num_rows;
        for (size_t j = i + 1; j < num_rows; ++j) {
          const size_t other = (next_row_ + j - i - 1) % num_rows;
          if (Clock::now() >= deadline_) return pricing;
          Price(other, std::max(0.0, lp_->RowDual(static_cast<int32_t>(other))), tolerance, 0, priced_[other]);
        }
        break;
      }
    }
    // Quick pricing first; only when it finds nothing are the unproved classes priced in full.
    if (added > 0 || quick_limit >= options_.pricing_node_limit) break;
  }
  pricing.complete = true;
  pricing.added = added > 0;
  pricing.proved = true;
  for (size_t row = 0; row < num_rows; ++row) {
    pricing.proved = pricing.proved && priced_[row].proved;
    pricing.nodes_worth +=
        static_cast<double>(input_.classes[classes_[row]].count) * std::max(0.0, priced_[row].upper_bound);
  }
  return pricing;
}

PatternBoundResult PatternGeneration::Run() {
  Reduce();
  result_.bound = trivial_;
  if (trivial_ == 0) {
    result_.converged = true;
    return Finish("empty");
  }
  std::vector<double> row_upper;
  for (size_t k : classes_) row_upper.push_back(static_cast<double>(input_.classes[k].count));
  for (size_t s = 0; s < num_shapes_; ++s) row_upper.push_back(static_cast<double>(reach_[s]));
  lp_ = std::make_unique<ColumnLp>(row_upper);
  AddStartingColumns();
  SetUpPricing();
  for (;;) {
    if (result_.iterations >= options_.max_iterations) return Finish("iteration limit");
    const double seconds_left = std::chrono::duration<double>(deadline_ - Clock::now()).count();
    if (seconds_left <= 0) return Finish("time limit");
    const ColumnLp::SolveResult solved = lp_->Solve(seconds_left);
    if (solved.status == ColumnLp::Status::kFailed) return Finish("lp failed: " + solved.message);
    ++result_.iterations;
    result_.lp_value = lp_->Objective();
    // The LP cannot exceed the trivial bound: reaching it proves the LP optimal.
    if (result_.lp_value >= trivial_ - 1e-9 * std::max(1.0, trivial_)) {
      result_.converged = true;
      return Finish("converged");
    }
    // Farley's bound: for any prices >= 0 on the shape rows, sum_s reach_s * price_s plus, per
    // class, count_k times the most one node can earn above the prices bounds every placement
    // (the Lagrangian relaxation of the shape rows). It needs no LP optimality, only each pricing
    // problem's upper bound, so it holds whatever stopped the iteration.
    double farley = 0;
    for (size_t s = 0; s < num_shapes_; ++s) {
      price_[s] = std::max(0.0, lp_->RowDual(static_cast<int32_t>(classes_.size() + s)));
      farley += static_cast<double>(reach_[s]) * price_[s];
    }
    // Each node's pricing may miss this much: all nodes together, half the gap allowed.
    const double tolerance =
        0.5 * std::max(0.0, options_.relative_gap) * std::max(1.0, result_.lp_value) / static_cast<double>(nodes_);
    const Pricing pricing = PriceAll(tolerance);
    if (!pricing.complete) return Finish("time limit");
    result_.bound = std::min(result_.bound, farley + pricing.nodes_worth);
    if (solved.status == ColumnLp::Status::kTimeLimit) return Finish("time limit");
    const bool added = pricing.added;
    if (!added && pricing.proved) {
      result_.converged = true;
      return Finish("converged");
    }
    if (result_.bound - result_.lp_value <= options_.relative_gap * std::max(1.0, result_.lp_value)) {
      return Finish("gap");
    }
    // The LP optimum is at least lp_value, so the floored bound can never drop below its floor.
    if (integral_ && FloorIntegral(result_.bound) <= std::floor(result_.lp_value)) return Finish("integral");
    // Every pattern found is in the LP already, yet some pricing stopped short of a proof: more
    // iterations would repeat themselves.
    if (!added) return Finish("pricing limit");
  }
}

}  // namespace

std::expected<PatternBoundResult, std::string> ComputePatternBound(const PatternBoundInput& input,
                                                                   const PatternBoundOptions& options) {
  const Clock::time_point began = Clock::now();
  if (std::string error = Validate(input); !error.empty()) return std::unexpected(std::move(error));
  return PatternGeneration(input, options, began).Run();
}

PackingKnapsackResult SolvePackingKnapsack(const PackingKnapsack& problem, const PackingKnapsackOptions& options) {
  KnapsackSearch search;
  KnapsackRelaxation relaxation(problem);
  const KnapsackRelaxation::Solution relaxed = relaxation.Solve(problem, options.deadline);
  PackingKnapsackResult result = search.Run(problem, options, relaxed.duals);
  result.upper_bound = std::min(result.upper_bound, std::max(result.value, relaxed.bound));
  return result;
}

}  // namespace kubesched::optimizer
