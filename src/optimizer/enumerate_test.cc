// Enumeration of small batches: the answer a solver proves optimal, found without one; the
// symmetry that keeps a large cluster of identical nodes cheap; the step budget that hands a
// batch on to the solver.
#include "optimizer/enumerate.h"

#include <gtest/gtest.h>

#include <random>

#include "optimizer/placement.h"
#include "testing/builders.h"

namespace kubesched::optimizer {
namespace {

using testing::MakeNode;
using testing::MakePod;

using Cluster = testing::NodeInfoList;

PlacementInput Input(const Cluster& c, std::vector<framework::PodInfoPtr> pods) {
  PlacementInput in;
  in.pods = std::move(pods);
  in.nodes = c.list;
  in.static_fit = [](const framework::PodInfo&) { return [](const framework::NodeInfo&) { return std::string(); }; };
  return in;
}

framework::PodInfoPtr Pod(const std::string& name, const std::string& cpu, int gpus = 0, int32_t priority = 0,
                          const std::function<void(testing::PodBuilder&)>& more = {}) {
  std::vector<std::pair<std::string, std::string>> req = {{"cpu", cpu}, {"memory", "1Gi"}};
  if (gpus > 0) req.emplace_back("example.com/gpu", std::to_string(gpus));
  auto b = MakePod().Name(name).UID(name).Label("app", name.substr(0, name.find('-'))).Priority(priority).Req(req);
  if (more) more(b);
  return b.Info();
}

// A heterogeneous cluster like a trace's: cpu-only and GPU nodes of a few sizes, some partly
// used by running pods (so that stranding, new nodes and free room all differ between classes).
Cluster Heterogeneous(std::mt19937& rng, int nodes) {
  Cluster c;
  for (int i = 0; i < nodes; ++i) {
    const int cpu = std::vector<int>{2, 4, 8}[rng() % 3];
    const int gpus = std::vector<int>{0, 0, 2, 4}[rng() % 4];
    std::vector<std::pair<std::string, std::string>> cap = {
        {"cpu", std::to_string(cpu)}, {"memory", "16Gi"}, {"pods", "110"}};
    if (gpus > 0) cap.emplace_back("example.com/gpu", std::to_string(gpus));
    std::vector<std::shared_ptr<api::Pod>> running;
    if (rng() % 2 == 0) {
      running.push_back(MakePod()
                            .Name("run-" + std::to_string(i))
                            .UID("run-" + std::to_string(i))
                            .Node("n" + std::to_string(i))
                            .Req({{"cpu", std::to_string(1 + rng() % (cpu - 1))}})
                            .Obj());
    }
    c.Add(MakeNode().Name("n" + std::to_string(i)).Capacity(cap).Obj(), running);
  }
  return c;
}

// On random small batches over heterogeneous clusters, enumeration and CBC (enumeration off)
// prove the same optimum on every level of the objective: pods placed, accelerator units
// stranded, new nodes.
TEST(EnumeratePlacements, AgreesWithTheSolverOnEveryLevel) {
  std::mt19937 rng(7);
  int enumerated = 0;
  for (int round = 0; round < 40; ++round) {
    Cluster c = Heterogeneous(rng, 6 + static_cast<int>(rng() % 10));
    std::vector<framework::PodInfoPtr> pods;
    const int n = 2 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      const std::string name = std::string(1, static_cast<char>('a' + rng() % 3)) + "-" + std::to_string(i);
      pods.push_back(
          Pod(name, std::to_string(1 + rng() % 4), static_cast<int>(rng() % 3), static_cast<int32_t>(rng() % 2)));
    }
    SCOPED_TRACE(::testing::Message() << "round " << round << ": " << n << " pods, " << c.list.size() << " nodes");
    PlacementOptions with;
    with.heuristic = false;  // the greedy construction alone before: the search has something to find
    PlacementOptions without = with;
    without.enumerate = false;
    const PlacementResult a = PlaceBatch(Input(c, pods), with);
    const PlacementResult b = PlaceBatch(Input(c, pods), without);
    ASSERT_TRUE(b.optimal) << b.stopped_by;
    EXPECT_TRUE(a.optimal) << a.stopped_by;
    if (a.stopped_by.starts_with("every placement tried")) ++enumerated;
    EXPECT_EQ(a.placed, b.placed);
    EXPECT_NEAR(a.stranded, b.stranded, 1e-6);
    EXPECT_EQ(a.new_nodes_used, b.new_nodes_used);
    EXPECT_EQ(a.solver, "") << "no solver ran";
  }
  EXPECT_GT(enumerated, 30) << "most batches are not already proved by the heuristics' bound";
}

// 2,000 identical empty nodes and five pods of one group: one class, so each pod tries the nodes
// the batch already uses and one fresh node, and its group's order halves that again.
TEST(EnumeratePlacements, IdenticalNodesAndPodsAreTriedOnce) {
  Cluster c;
  for (int i = 0; i < 2000; ++i) {
    c.Add(MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}}).Obj());
  }
  std::vector<framework::PodInfoPtr> pods;
  for (int i = 0; i < 5; ++i) pods.push_back(Pod("web-" + std::to_string(i), "1500m"));
  const BatchModel m = BuildModel(Input(c, pods));
  ASSERT_EQ(m.num_classes, 1);
  const std::vector<int32_t> order = {0};
  const Enumerated e = EnumeratePlacements(m, order, 0.1, 1 << 20, std::chrono::steady_clock::time_point::max());
  ASSERT_TRUE(e.complete);
  ASSERT_TRUE(e.found);
  EXPECT_LT(e.steps, 200);
  int used = 0, placed = 0;
  for (int32_t k : e.counts[0]) {
    used += k > 0;
    placed += k;
  }
  EXPECT_EQ(placed, 5);
  EXPECT_EQ(used, 3) << "two 1.5-cpu pods per 4-cpu node";
}

// A search longer than its budget stops, and the batch goes on to the solver, which proves it.
TEST(EnumeratePlacements, ABatchOverItsBudgetGoesToTheSolver) {
  std::mt19937 rng(3);
  Cluster c = Heterogeneous(rng, 30);
  std::vector<framework::PodInfoPtr> pods;
  for (int i = 0; i < 5; ++i) pods.push_back(Pod(std::string(1, static_cast<char>('a' + i)) + "-0", "1", i % 2));
  PlacementOptions o;
  o.heuristic = false;
  o.max_enumeration_steps = 10;
  const PlacementResult r = PlaceBatch(Input(c, pods), o);
  EXPECT_FALSE(r.stopped_by.starts_with("every placement tried")) << r.stopped_by;
  EXPECT_FALSE(r.solver.empty()) << "CBC, or GLPK when CBC's process failed: " << r.stopped_by;
  EXPECT_TRUE(r.optimal) << r.stopped_by;
}

// Pods that constrain one another (anti-affinity between several) may pass only in another order
// than the search's: those are the solver's.
TEST(EnumeratePlacements, PodsThatConstrainOneAnotherAreNotEnumerated) {
  Cluster c;
  for (int i = 0; i < 3; ++i) {
    c.Add(MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}}).Obj());
  }
  auto anti = [](testing::PodBuilder& b) { b.PodAntiAffinityIn("app", {"db"}, "kubernetes.io/hostname"); };
  const BatchModel two = BuildModel(Input(c, {Pod("db-0", "1", 0, 0, anti), Pod("db-1", "1", 0, 0, anti)}));
  EXPECT_FALSE(Enumerable(two));
  const BatchModel one = BuildModel(Input(c, {Pod("db-0", "1", 0, 0, anti)}));
  EXPECT_TRUE(Enumerable(one));
  const BatchModel plain = BuildModel(Input(c, {Pod("web-0", "1"), Pod("web-1", "1")}));
  EXPECT_TRUE(Enumerable(plain));
}

}  // namespace
}  // namespace kubesched::optimizer
