#include "optimizer/pattern_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace kubesched::optimizer {
namespace {

using Shape = PatternBoundInput::Shape;
using NodeClass = PatternBoundInput::NodeClass;

constexpr int32_t kUnlimited = 1000;

// The best integer placement of input, by dynamic programming over the nodes one by one and the
// pods still unplaced: every way of filling each node is enumerated, independently of the pattern
// LP. Only for tiny instances.
double BruteForceOptimum(const PatternBoundInput& input) {
  std::vector<const NodeClass*> nodes;
  for (const NodeClass& node_class : input.classes) {
    for (int64_t i = 0; i < node_class.count; ++i) nodes.push_back(&node_class);
  }
  std::vector<int64_t> left;
  for (const Shape& shape : input.shapes) left.push_back(shape.count);
  std::map<std::pair<size_t, std::vector<int64_t>>, double> memo;
  std::function<double(size_t)> best = [&](size_t node) -> double {
    if (node == nodes.size()) return 0;
    const auto key = std::make_pair(node, left);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    const NodeClass& node_class = *nodes[node];
    std::vector<int64_t> used(input.num_resources, 0);
    double result = 0;
    // Enumerates the counts put on this node, shape by shape.
    std::function<void(size_t, double)> fill = [&](size_t s, double value) {
      if (s == input.shapes.size()) {
        result = std::max(result, value + best(node + 1));
        return;
      }
      const Shape& shape = input.shapes[s];
      const int64_t original = left[s];
      for (int64_t a = 0; a <= original && a <= node_class.max_per_node[s]; ++a) {
        bool fits = true;
        for (size_t d = 0; d < input.num_resources; ++d) {
          fits = fits && used[d] + a * shape.demand[d] <= node_class.capacity[d];
        }
        if (!fits) break;
        for (size_t d = 0; d < input.num_resources; ++d) used[d] += a * shape.demand[d];
        left[s] = original - a;
        fill(s + 1, value + static_cast<double>(a) * shape.weight);
        left[s] = original;
        for (size_t d = 0; d < input.num_resources; ++d) used[d] -= a * shape.demand[d];
      }
    };
    fill(0, 0);
    memo.emplace(key, result);
    return result;
  };
  return best(0);
}

double Trivial(const PatternBoundInput& input) {
  double total = 0;
  for (const Shape& shape : input.shapes) total += shape.weight * static_cast<double>(shape.count);
  return total;
}

PatternBoundInput RandomInstance(std::mt19937_64& rng, bool integral_weights) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  PatternBoundInput input;
  input.num_resources = static_cast<size_t>(uniform(2, 3));
  const int64_t num_shapes = uniform(1, 5);
  for (int64_t s = 0; s < num_shapes; ++s) {
    Shape shape;
    for (size_t d = 0; d < input.num_resources; ++d) shape.demand.push_back(uniform(0, 7));
    shape.count = uniform(1, 4);
    shape.weight = integral_weights ? static_cast<double>(uniform(1, 3)) : 0.5 + static_cast<double>(uniform(0, 9)) / 4;
    input.shapes.push_back(shape);
  }
  const int64_t num_classes = uniform(1, 4);
  for (int64_t k = 0; k < num_classes; ++k) {
    NodeClass node_class;
    for (size_t d = 0; d < input.num_resources; ++d) node_class.capacity.push_back(uniform(3, 14));
    node_class.count = uniform(1, 3);
    for (int64_t s = 0; s < num_shapes; ++s) {
      const int64_t pick = uniform(0, 9);
      node_class.max_per_node.push_back(pick == 0 ? 0 : pick == 1 ? 1 : pick == 2 ? 2 : kUnlimited);
    }
    input.classes.push_back(node_class);
  }
  return input;
}

// What every result must satisfy, whatever stopped it.
void ExpectConsistent(const PatternBoundInput& input, const PatternBoundResult& result) {
  EXPECT_LE(result.bound, Trivial(input) + 1e-9);
  // An integral bound may be floored below the LP value.
  EXPECT_LE(std::floor(result.lp_value + 1e-9), result.bound + 1e-6);
  std::vector<double> nodes(input.classes.size(), 0), pods(input.shapes.size(), 0);
  for (const PatternUse& use : result.patterns) {
    ASSERT_LT(use.node_class, input.classes.size());
    nodes[use.node_class] += use.nodes;
    const NodeClass& node_class = input.classes[use.node_class];
    std::vector<int64_t> used(input.num_resources, 0);
    for (const auto& [s, count] : use.pods) {
      ASSERT_LT(s, input.shapes.size());
      EXPECT_LE(count, node_class.max_per_node[s]);
      pods[s] += use.nodes * static_cast<double>(count);
      for (size_t d = 0; d < input.num_resources; ++d) used[d] += count * input.shapes[s].demand[d];
    }
    for (size_t d = 0; d < input.num_resources; ++d) EXPECT_LE(used[d], node_class.capacity[d]);
  }
  for (size_t k = 0; k < input.classes.size(); ++k) EXPECT_LE(nodes[k], input.classes[k].count + 1e-6);
  for (size_t s = 0; s < input.shapes.size(); ++s) EXPECT_LE(pods[s], input.shapes[s].count + 1e-6);
}

TEST(PatternBound, RandomSmallInstancesBoundTheBruteForceOptimum) {
  std::mt19937_64 rng(20240611);
  int exact_single_shape = 0;
  for (int i = 0; i < 300; ++i) {
    const bool integral = i % 3 != 0;
    const PatternBoundInput input = RandomInstance(rng, integral);
    SCOPED_TRACE("instance " + std::to_string(i));
    const double optimum = BruteForceOptimum(input);
    // No gap allowed: the LP is solved to the end, or until the bound meets the LP value or the
    // floor of an integral bound is the LP value's.
    auto result = ComputePatternBound(input, {.relative_gap = 0});
    ASSERT_TRUE(result.has_value()) << result.error();
    const std::string& stop = result->stopped_by;
    EXPECT_TRUE(stop == "converged" || stop == "gap" || stop == "empty" || (integral && stop == "integral")) << stop;
    EXPECT_GE(result->bound, optimum - 1e-9);
    if (integral) {
      EXPECT_EQ(result->bound, std::floor(result->bound));
    }
    ExpectConsistent(input, *result);
    // With one shape every node simply takes as many as fit: the LP is integral.
    if (input.shapes.size() == 1) {
      EXPECT_NEAR(result->bound, optimum, 1e-5);
      ++exact_single_shape;
    }
  }
  EXPECT_GT(exact_single_shape, 20);
}

PatternBoundInput OneDimension(int64_t capacity, int64_t nodes, const std::vector<std::pair<int64_t, int64_t>>& items,
                               double weight = 1) {
  PatternBoundInput input;
  input.num_resources = 2;  // size, pods
  for (const auto& [size, count] : items)
    input.shapes.push_back({.demand = {size, 1}, .count = count, .weight = weight});
  input.classes.push_back(
      {.capacity = {capacity, 110}, .count = nodes, .max_per_node = std::vector<int32_t>(items.size(), kUnlimited)});
  return input;
}

TEST(PatternBound, ClassicCases) {
  struct Case {
    std::string name;
    PatternBoundInput input;
    double bound;
  };
  const Case cases[] = {
      // 3 of size 3 fit a node of 10: 4 nodes hold 12.
      {"identical items, room for all", OneDimension(10, 4, {{3, 10}}), 10},
      {"identical items, room for 12", OneDimension(10, 4, {{3, 20}}), 12},
      // Volume says 5 nodes hold 50 / 6 = 8.3 items of 0.6; patterns say one per node.
      {"items of 0.6: volume loose, patterns tight", OneDimension(10, 5, {{6, 10}}), 5},
      // 0.6 and 0.4 pair up on a node; four nodes, four of each.
      {"0.6 with 0.4", OneDimension(10, 4, {{6, 6}, {4, 4}}), 8},
      // {0.6, 0.35} per node places all six.
      {"0.6 and 0.35", OneDimension(100, 3, {{60, 3}, {35, 3}}), 6},
      // A node holds one of each at most (6 + 1 in both dimensions), not two of either: volume
      // (8 x 7 of 60) says all 8, the patterns 2 per node.
      {"two dimensions cross",
       PatternBoundInput{
           .num_resources = 2,
           .shapes = {{.demand = {6, 1}, .count = 4, .weight = 1}, {.demand = {1, 6}, .count = 4, .weight = 1}},
           .classes = {{.capacity = {10, 10}, .count = 3, .max_per_node = {kUnlimited, kUnlimited}}}},
       6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto result = ComputePatternBound(c.input);
    ASSERT_TRUE(result.has_value()) << result.error();
    EXPECT_DOUBLE_EQ(result->bound, c.bound);
    EXPECT_DOUBLE_EQ(BruteForceOptimum(c.input), c.bound);
    ExpectConsistent(c.input, *result);
  }
}

TEST(PatternBound, FractionalWeightsAreNotFloored) {
  // One node of 10: the pattern {6, 4} is worth 1.5 + 1 and uses the node whole.
  PatternBoundInput input = OneDimension(10, 1, {{6, 1}, {4, 1}});
  input.shapes[0].weight = 1.5;
  auto result = ComputePatternBound(input, {.relative_gap = 0});
  ASSERT_TRUE(result.has_value());
  EXPECT_NEAR(result->bound, 2.5, 1e-5);
  EXPECT_NEAR(result->lp_value, 2.5, 1e-9);

  // One node for two of each: {0.6, 0.4} is worth 2.25, {0.4, 0.4} only 2.
  input = OneDimension(10, 1, {{6, 2}, {4, 2}});
  input.shapes[0].weight = 1.25;
  result = ComputePatternBound(input, {.relative_gap = 0});
  ASSERT_TRUE(result.has_value());
  EXPECT_NEAR(result->bound, 2.25, 1e-5);
}

TEST(PatternBound, MaxPerNode) {
  struct Case {
    std::string name;
    std::vector<int32_t> max_per_node;
    double bound;
  };
  const Case cases[] = {
      {"self anti-affinity: one per node", {1}, 3},
      {"two per node", {2}, 6},
      {"unlimited: capacity decides", {kUnlimited}, 9},
      {"not allowed", {0}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PatternBoundInput input = OneDimension(30, 3, {{10, 20}});
    input.classes[0].max_per_node = c.max_per_node;
    auto result = ComputePatternBound(input);
    ASSERT_TRUE(result.has_value());
    EXPECT_DOUBLE_EQ(result->bound, c.bound);
    ExpectConsistent(input, *result);
  }
  // Anti-affinity on one shape only: the other fills the rest.
  PatternBoundInput input = OneDimension(30, 3, {{10, 20}, {10, 20}});
  input.classes[0].max_per_node = {1, kUnlimited};
  auto result = ComputePatternBound(input);
  ASSERT_TRUE(result.has_value());
  EXPECT_DOUBLE_EQ(result->bound, 9);
  // ... and two classes, one refusing the shape.
  input.classes.push_back({.capacity = {30, 110}, .count = 2, .max_per_node = {0, 1}});
  result = ComputePatternBound(input);
  ASSERT_TRUE(result.has_value());
  EXPECT_DOUBLE_EQ(result->bound, 11);
  EXPECT_DOUBLE_EQ(BruteForceOptimum(input), 11);
}

TEST(PatternBound, StoppedEarlyTheBoundStillHolds) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; ++i) {
    const PatternBoundInput input = RandomInstance(rng, true);
    SCOPED_TRACE("instance " + std::to_string(i));
    const double optimum = BruteForceOptimum(input);
    struct Limit {
      std::string name;
      PatternBoundOptions options;
    };
    const Limit limits[] = {
        {"no time", {.time_limit_seconds = 0}},
        {"one iteration", {.max_iterations = 1}},
        {"one pricing node", {.pricing_node_limit = 1}},
        {"two pricing nodes, no gap", {.relative_gap = 0, .pricing_node_limit = 2}},
        // A wide gap lets pricing stop within a wide tolerance.
        {"gap of 20%", {.relative_gap = 0.2}},
    };
    for (const Limit& limit : limits) {
      SCOPED_TRACE(limit.name);
      auto result = ComputePatternBound(input, limit.options);
      ASSERT_TRUE(result.has_value());
      EXPECT_GE(result->bound, optimum - 1e-9);
      ExpectConsistent(input, *result);
    }
  }
  // Five nodes of 10 for five pods of 6 and five of 5: one 6 or two 5s per node. Each shape alone
  // could be placed whole (the plain bound, 10), the LP says 7.5: {6} x 2.5 and {5, 5} x 2.5.
  const PatternBoundInput input = OneDimension(10, 5, {{6, 5}, {5, 5}});
  auto result = ComputePatternBound(input, {.time_limit_seconds = 0});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->stopped_by, "time limit");
  EXPECT_EQ(result->iterations, 0);
  EXPECT_DOUBLE_EQ(result->bound, 10);
  result = ComputePatternBound(input);
  ASSERT_TRUE(result.has_value());
  EXPECT_DOUBLE_EQ(result->bound, 7);
  EXPECT_NEAR(result->lp_value, 7.5, 1e-9);
  EXPECT_DOUBLE_EQ(BruteForceOptimum(input), 7);
}

TEST(PatternBound, DegenerateInputs) {
  struct Case {
    std::string name;
    PatternBoundInput input;
    double bound;
  };
  PatternBoundInput nowhere = OneDimension(10, 2, {{3, 4}, {11, 5}});
  const Case cases[] = {
      {"no shapes", OneDimension(10, 2, {}), 0},
      {"no classes",
       PatternBoundInput{.num_resources = 1, .shapes = {{.demand = {1}, .count = 3, .weight = 1}}, .classes = {}}, 0},
      {"no nodes in the class", OneDimension(10, 0, {{3, 4}}), 0},
      {"no pods in the shape", OneDimension(10, 2, {{3, 0}}), 0},
      {"a shape fitting nowhere", nowhere, 4},
      {"no resources",
       PatternBoundInput{.num_resources = 0,
                         .shapes = {{.demand = {}, .count = 5, .weight = 2}},
                         .classes = {{.capacity = {}, .count = 1, .max_per_node = {3}}}},
       6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto result = ComputePatternBound(c.input);
    ASSERT_TRUE(result.has_value()) << result.error();
    EXPECT_DOUBLE_EQ(result->bound, c.bound);
    EXPECT_DOUBLE_EQ(BruteForceOptimum(c.input), c.bound);
    ExpectConsistent(c.input, *result);
  }
}

TEST(PatternBound, MalformedInputIsAnError) {
  struct Case {
    std::string name;
    std::function<void(PatternBoundInput&)> change;
  };
  const Case cases[] = {
      {"demand size", [](PatternBoundInput& in) { in.shapes[0].demand.pop_back(); }},
      {"capacity size", [](PatternBoundInput& in) { in.classes[0].capacity.push_back(1); }},
      {"max_per_node size", [](PatternBoundInput& in) { in.classes[0].max_per_node.clear(); }},
      {"negative demand", [](PatternBoundInput& in) { in.shapes[0].demand[0] = -1; }},
      {"negative count", [](PatternBoundInput& in) { in.classes[0].count = -1; }},
      {"zero weight", [](PatternBoundInput& in) { in.shapes[0].weight = 0; }},
      {"NaN weight", [](PatternBoundInput& in) { in.shapes[0].weight = std::nan(""); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PatternBoundInput input = OneDimension(10, 2, {{3, 4}});
    c.change(input);
    auto result = ComputePatternBound(input);
    ASSERT_FALSE(result.has_value());
    EXPECT_FALSE(result.error().empty());
  }
}

TEST(PatternBound, PrintsNothing) {
  std::mt19937_64 rng(3);
  const PatternBoundInput input = RandomInstance(rng, true);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  auto result = ComputePatternBound(input);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(result.has_value());
}

// The best packing by enumeration.
double BruteForceKnapsack(const PackingKnapsack& problem) {
  const size_t n = problem.profit.size(), dims = problem.num_resources;
  std::vector<int64_t> used(dims, 0);
  double best = 0;
  std::function<void(size_t, double)> go = [&](size_t i, double value) {
    if (i == n) {
      best = std::max(best, value);
      return;
    }
    for (int64_t a = 0; a <= problem.limit[i]; ++a) {
      bool fits = true;
      for (size_t d = 0; d < dims; ++d)
        fits = fits && used[d] + a * problem.demand[i * dims + d] <= problem.capacity[d];
      if (!fits) break;
      for (size_t d = 0; d < dims; ++d) used[d] += a * problem.demand[i * dims + d];
      go(i + 1, value + static_cast<double>(a) * problem.profit[i]);
      for (size_t d = 0; d < dims; ++d) used[d] -= a * problem.demand[i * dims + d];
    }
  };
  go(0, 0);
  return best;
}

TEST(PatternBoundKnapsack, RandomInstancesAgreeWithEnumeration) {
  std::mt19937_64 rng(11);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("instance " + std::to_string(i));
    PackingKnapsack problem;
    problem.num_resources = static_cast<size_t>(uniform(1, 4));
    const int64_t n = uniform(1, 8);
    for (size_t d = 0; d < problem.num_resources; ++d) problem.capacity.push_back(uniform(0, 25));
    for (int64_t j = 0; j < n; ++j) {
      problem.limit.push_back(uniform(0, 4));
      if (j > 0 && uniform(0, 4) == 0) {  // a copy of the item before: dominance ties
        problem.profit.push_back(problem.profit.back());
        for (size_t d = 0; d < problem.num_resources; ++d) {
          problem.demand.push_back(problem.demand[(j - 1) * problem.num_resources + d]);
        }
        continue;
      }
      problem.profit.push_back(static_cast<double>(uniform(-2, 9)) / 3);
      for (size_t d = 0; d < problem.num_resources; ++d)
        problem.demand.push_back(uniform(0, 3) > 0 ? uniform(0, 9) : 0);
    }
    const double optimum = BruteForceKnapsack(problem);
    const PackingKnapsackResult exact = SolvePackingKnapsack(problem);
    EXPECT_TRUE(exact.proved);
    EXPECT_NEAR(exact.value, optimum, 1e-9);
    EXPECT_GE(exact.upper_bound, optimum - 1e-9);
    EXPECT_LE(exact.upper_bound, optimum + 1e-6);
    // The counts are a packing worth value.
    double value = 0;
    std::vector<int64_t> used(problem.num_resources, 0);
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_GE(exact.count[j], 0);
      EXPECT_LE(exact.count[j], problem.limit[j]);
      value += static_cast<double>(exact.count[j]) * problem.profit[j];
      for (size_t d = 0; d < problem.num_resources; ++d) {
        used[d] += exact.count[j] * problem.demand[j * problem.num_resources + d];
      }
    }
    EXPECT_NEAR(value, exact.value, 1e-9);
    for (size_t d = 0; d < problem.num_resources; ++d) EXPECT_LE(used[d], problem.capacity[d]);
    // Cut short or given a threshold, the upper bound still holds.
    const PackingKnapsackResult cut = SolvePackingKnapsack(problem, {.node_limit = 1});
    EXPECT_GE(cut.upper_bound, optimum - 1e-9);
    EXPECT_LE(cut.value, optimum + 1e-9);
    const PackingKnapsackResult late = SolvePackingKnapsack(problem, {.deadline = std::chrono::steady_clock::now()});
    EXPECT_GE(late.upper_bound, optimum - 1e-9);
    // With a tolerance, the packing found is within it of the optimum, and the bound holds.
    const double tolerance = static_cast<double>(uniform(0, 4)) / 4;
    const PackingKnapsackResult loose = SolvePackingKnapsack(problem, {.tolerance = tolerance});
    EXPECT_TRUE(loose.proved);
    EXPECT_GE(loose.value, optimum - tolerance - 1e-9);
    EXPECT_GE(loose.upper_bound, optimum - 1e-9);
    const double threshold = static_cast<double>(uniform(0, 12)) / 2;
    const PackingKnapsackResult above = SolvePackingKnapsack(problem, {.threshold = threshold});
    EXPECT_TRUE(above.proved);
    EXPECT_GE(above.upper_bound, optimum - 1e-9);
    if (optimum > threshold + 1e-6) {
      EXPECT_NEAR(above.value, optimum, 1e-9);
    }
  }
}

}  // namespace
}  // namespace kubesched::optimizer
