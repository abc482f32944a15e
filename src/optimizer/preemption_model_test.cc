#include "optimizer/preemption_model.h"

#include <gtest/gtest.h>

namespace kubesched::optimizer {
namespace {

using Pod = PreemptionModel::Pod;

// Two dimensions (cpu, pods) keep the cases readable.
PreemptionModel::Node MakeNode(std::string name, int64_t free_cpu, bool candidate) {
  return {std::move(name), {free_cpu, 100}, candidate};
}

Pod MakeModelPod(int node, int64_t cpu, int32_t rank, bool movable, std::vector<int> destinations = {}) {
  Pod p;
  p.node = node;
  p.request = {cpu, 1};
  p.priority_rank = rank;
  p.movable = movable;
  p.destinations = std::move(destinations);
  return p;
}

class PreemptionModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  PreemptionPlanResult Solve(const PreemptionModel& m) {
    auto solver = MakeMipSolver(GetParam());
    MipOptions options;
    options.time_limit_seconds = 10;
    return SolvePreemptionModel(m, *solver, options);
  }
};

// DefaultPreemption's case of a homeless victim: the preemptor fits on node 0 by evicting a pod
// that has nowhere to go, or on node 1 by moving a pod to node 2. The move wins.
TEST_P(PreemptionModelTest, MovePreferredToEviction) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {2, 1};
  m.nodes = {MakeNode("a", 1, true), MakeNode("b", 1, true), MakeNode("c", 4, false)};
  m.pods = {MakeModelPod(0, 3, 0, true, {}), MakeModelPod(1, 3, 1, true, {2})};
  for (const auto& plan : {GreedyPreemptionPlan(m), Solve(m)}) {
    ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan) << plan.message;
    EXPECT_EQ(plan.node, 1);
    EXPECT_TRUE(plan.evicted.empty());
    ASSERT_EQ(plan.moves.size(), 1u);
    EXPECT_EQ(plan.moves[0], std::make_pair(1, 2));
  }
  EXPECT_TRUE(Solve(m).optimal);
}

// Two moves cost less than one eviction (the objective is lexicographic).
TEST_P(PreemptionModelTest, TwoMovesBeforeOneEviction) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {4, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 0, true), MakeNode("spare", 8, false)};
  m.pods = {MakeModelPod(0, 4, 0, false),                                         // a: one pod, not movable
            MakeModelPod(1, 2, 1, true, {2}), MakeModelPod(1, 2, 1, true, {2})};  // b: two movable
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.node, 1);
  EXPECT_TRUE(plan.evicted.empty());
  EXPECT_EQ(plan.moves.size(), 2u);
  EXPECT_TRUE(plan.optimal);
}

// Among plans with as many evictions, the least important pods go.
TEST_P(PreemptionModelTest, EvictsTheLeastImportant) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {2, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 0, true)};
  m.pods = {MakeModelPod(0, 2, 2, false), MakeModelPod(1, 2, 0, false)};
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.node, 1);
  EXPECT_EQ(plan.evicted, std::vector<int>{1});
}

// Only what is needed leaves: one of three small pods on the node.
TEST_P(PreemptionModelTest, RemovesNoMoreThanNeeded) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {1, 1};
  m.nodes = {MakeNode("a", 0, true)};
  m.pods = {MakeModelPod(0, 1, 0, false), MakeModelPod(0, 1, 0, false), MakeModelPod(0, 1, 0, false)};
  for (const auto& plan : {GreedyPreemptionPlan(m), Solve(m)}) {
    ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
    EXPECT_EQ(plan.evicted.size(), 1u);
  }
}

// The blocking pod is on another node of the preemptor's domain (anti-affinity per zone): it
// must leave the domain; a destination inside the domain does not help.
TEST_P(PreemptionModelTest, ConflictAcrossNodesOfADomain) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {2, 1};
  // a1, a2 in zone a; b1 in zone b. The preemptor can only take a2 (a1 is full for it).
  m.nodes = {MakeNode("a1", 0, false), MakeNode("a2", 4, true), MakeNode("b1", 4, false)};
  m.pods = {MakeModelPod(0, 1, 0, true, {1, 2})};
  m.conflicts = {{1, 0, {0, 1}}};
  for (const auto& plan : {GreedyPreemptionPlan(m), Solve(m)}) {
    ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan) << plan.message;
    EXPECT_EQ(plan.node, 1);
    ASSERT_EQ(plan.moves.size(), 1u);
    EXPECT_EQ(plan.moves[0], std::make_pair(0, 2));
  }
  // Without a destination outside the zone the pod is evicted.
  m.pods[0].destinations = {1};
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.evicted, std::vector<int>{0});
  EXPECT_TRUE(plan.moves.empty());
}

// A disruption budget of one: the two covered pods cannot both leave, so the preemptor takes the
// node where one eviction suffices even though it evicts a more important pod.
TEST_P(PreemptionModelTest, DisruptionBudgetsBound) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {4, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 0, true)};
  m.pods = {MakeModelPod(0, 2, 0, false), MakeModelPod(0, 2, 0, false), MakeModelPod(1, 4, 1, false)};
  m.pods[0].pdbs = {0};
  m.pods[1].pdbs = {0};
  m.pdb_allowed = {1};
  for (const auto& plan : {GreedyPreemptionPlan(m), Solve(m)}) {
    ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
    EXPECT_EQ(plan.node, 1);
    EXPECT_EQ(plan.evicted, std::vector<int>{2});
  }
  m.pdb_allowed = {2};
  const auto plan = Solve(m);
  // Once the budget allows it, the two less important pods go rather than the more important one:
  // one pod of a priority outweighs every pod below it (as upstream's victim choice prefers the
  // lowest priorities over the fewest victims).
  EXPECT_EQ(plan.node, 0);
  EXPECT_EQ(plan.evicted, (std::vector<int>{0, 1}));
}

// Moves into a node must fit there, also when several pods go to the same node.
TEST_P(PreemptionModelTest, DestinationCapacityIsShared) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {4, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("spare", 2, false)};
  m.pods = {MakeModelPod(0, 2, 0, true, {1}), MakeModelPod(0, 2, 0, true, {1})};
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.evicted.size(), 1u);
}

TEST_P(PreemptionModelTest, ForbiddenNodesAndNoCandidate) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {2, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 0, true)};
  m.pods = {MakeModelPod(0, 2, 0, false), MakeModelPod(1, 2, 1, false)};
  m.forbidden_nodes = {0};
  auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.node, 1);
  m.forbidden_nodes = {0, 1};
  EXPECT_EQ(Solve(m).status, PreemptionPlanResult::Status::kNoPlan);
  EXPECT_EQ(GreedyPreemptionPlan(m).status, PreemptionPlanResult::Status::kNoPlan);
}

// Removing every removable pod is not enough: no plan.
TEST_P(PreemptionModelTest, InfeasibleWithoutEnoughRoom) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {8, 1};
  m.nodes = {MakeNode("a", 1, true)};
  m.pods = {MakeModelPod(0, 2, 0, false)};
  EXPECT_EQ(Solve(m).status, PreemptionPlanResult::Status::kNoPlan);
  EXPECT_EQ(GreedyPreemptionPlan(m).status, PreemptionPlanResult::Status::kNoPlan);
}

// An overcommitted node (negative free room) is not forced to shed pods when the preemptor goes
// elsewhere.
TEST_P(PreemptionModelTest, OvercommitmentForcesNothing) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {1, 1};
  m.nodes = {MakeNode("over", -3, true), MakeNode("b", 0, true), MakeNode("spare", 4, false)};
  m.pods = {MakeModelPod(0, 2, 0, true, {2}), MakeModelPod(1, 1, 0, true, {2})};
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.node, 1);
  EXPECT_EQ(plan.moves.size(), 1u);
  EXPECT_TRUE(plan.evicted.empty());
}

// The removal lower bound: the fewest pods any plan removes, over the candidate nodes.
// A more important pod that must leave the preemptor's node keeps running on a node that a less
// important pod makes room on by moving on in turn: two moves, nothing lost, rather than evicting
// it (one disruption, but a pod of higher priority left without a place).
TEST_P(PreemptionModelTest, ChainOfMovesKeepsTheMoreImportantPodRunning) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {4, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 0, false), MakeNode("c", 4, false)};
  m.pods = {MakeModelPod(0, 4, 1, true, {1}), MakeModelPod(1, 4, 0, true, {2})};
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.node, 0);
  EXPECT_TRUE(plan.evicted.empty());
  EXPECT_EQ(plan.moves, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
  EXPECT_TRUE(plan.optimal);
}

// Lost pods count by priority before anything else: three pods of the lowest priority go rather
// than one of the next, and with many priorities among many pods (weights that would outgrow a
// double's precision) the most important ranks still decide.
TEST_P(PreemptionModelTest, ManyPrioritiesStayLexicographic) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {6, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 0, true)};
  // Node a: three pods of rank 0 (2 cpu each); node b: one pod of rank 7 (6 cpu) and filler.
  m.pods = {MakeModelPod(0, 2, 0, false), MakeModelPod(0, 2, 0, false), MakeModelPod(0, 2, 0, false),
            MakeModelPod(1, 6, 7, false)};
  for (int r = 1; r <= 6; ++r) {
    for (int k = 0; k < 8; ++k) m.pods.push_back(MakeModelPod(1, 0, r, false));
  }
  const auto plan = Solve(m);
  ASSERT_EQ(plan.status, PreemptionPlanResult::Status::kPlan);
  EXPECT_EQ(plan.node, 0);
  EXPECT_EQ(plan.evicted, (std::vector<int>{0, 1, 2}));
  const PlanCost cost = CostOf(m, plan);
  EXPECT_EQ(cost.lost.front(), 0);  // nothing of the highest rank
  EXPECT_EQ(cost.disrupted, 3);
}

TEST(PreemptionModelBoundTest, MinRemovals) {
  PreemptionModel m;
  m.num_resources = 2;
  m.preemptor_request = {4, 1};
  m.nodes = {MakeNode("a", 0, true), MakeNode("b", 1, true), MakeNode("c", 0, false)};
  // a: one pod of 4 (1 removal); b: pods of 1, 1, 2 (free 1: 3 needed = 2 + 1, 2 removals).
  m.pods = {MakeModelPod(0, 4, 0, false), MakeModelPod(1, 1, 0, true), MakeModelPod(1, 1, 0, true),
            MakeModelPod(1, 2, 0, true)};
  EXPECT_EQ(MinRemovals(m), 1);
  m.forbidden_nodes = {0};
  EXPECT_EQ(MinRemovals(m), 2);
  // A conflict pod elsewhere in b's domain must leave too.
  m.pods.push_back(MakeModelPod(2, 1, 0, true));
  m.conflicts = {{1, 4, {1, 2}}};
  EXPECT_EQ(MinRemovals(m), 3);
  m.forbidden_nodes = {0, 1};
  EXPECT_EQ(MinRemovals(m), -1);
}

INSTANTIATE_TEST_SUITE_P(Solvers, PreemptionModelTest, ::testing::Values("cbc", "glpk"));

}  // namespace
}  // namespace kubesched::optimizer
