#include "framework/runtime/equivalence_cache.h"

#include <limits>

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::framework::runtime {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

std::unique_ptr<NodeInfo> Node(const std::string& name, int32_t index) {
  auto info = MakeNodeInfo(MakeNode().Name(name).Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj());
  info->set_snapshot_index(index);
  return info;
}

TEST(PodClassKeyTest, PodsDifferingOnlyInIdentityShareAClass) {
  auto a = MakePod().Name("a").UID("ua").Label("app", "x").Req({{"cpu", "1"}}).Obj();
  auto b = MakePod().Name("b").UID("ub").Label("app", "y").Req({{"cpu", "1"}}).Obj();
  EXPECT_EQ(PodClassKey(*a), PodClassKey(*b));
}

TEST(PodClassKeyTest, SpecAndNamespaceSeparateClasses) {
  auto base = MakePod().Name("a").Req({{"cpu", "1"}}).Obj();
  EXPECT_NE(PodClassKey(*base), PodClassKey(*MakePod().Name("a").Req({{"cpu", "2"}}).Obj()));
  EXPECT_NE(PodClassKey(*base), PodClassKey(*MakePod().Name("a").Namespace("other").Req({{"cpu", "1"}}).Obj()));
  EXPECT_NE(PodClassKey(*base),
            PodClassKey(*MakePod().Name("a").Req({{"cpu", "1"}}).NodeSelector({{"zone", "a"}}).Obj()));
  EXPECT_NE(PodClassKey(*base), PodClassKey(*MakePod().Name("a").Req({{"cpu", "1"}}).Node("n1").Obj()));
}

TEST(EquivalenceClassTest, VerdictHoldsUntilTheNodeChanges) {
  EquivalenceCache cache;
  auto n0 = Node("n0", 0);
  auto n1 = Node("n1", 1);
  EquivalenceClass* c = cache.ClassFor("k", 2, 1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->FindVerdict(*n0), nullptr);

  Status rejected(Code::kUnschedulable, std::string("Insufficient cpu"));
  rejected.WithPlugin("NodeResourcesFit");
  c->StoreVerdict(*n0, rejected);
  c->StoreVerdict(*n1, Status());
  const Status* v0 = c->FindVerdict(*n0);
  ASSERT_NE(v0, nullptr);
  EXPECT_EQ(v0->code(), Code::kUnschedulable);
  EXPECT_EQ(v0->reasons(), std::vector<std::string>{"Insufficient cpu"});
  EXPECT_EQ(v0->plugin(), "NodeResourcesFit");
  ASSERT_NE(c->FindVerdict(*n1), nullptr);
  EXPECT_TRUE(c->FindVerdict(*n1)->IsSuccess());

  // A snapshot clone is the same node at the same generation; a change moves the generation.
  EXPECT_NE(c->FindVerdict(*n0->Clone()), nullptr);
  n1->AddPod(MakePod().Name("p").Node("n1").Req({{"cpu", "1"}}).Info());
  EXPECT_EQ(c->FindVerdict(*n1), nullptr);
  EXPECT_NE(c->FindVerdict(*n0), nullptr);
}

TEST(EquivalenceClassTest, NodesOutsideTheSnapshotAreNeverMemoised) {
  EquivalenceCache cache;
  EquivalenceClass* c = cache.ClassFor("k", 1, 0);
  auto outside = Node("n5", 5);
  auto unindexed = Node("n", -1);
  c->StoreVerdict(*outside, Status());
  c->StoreVerdict(*unindexed, Status());
  EXPECT_EQ(c->FindVerdict(*outside), nullptr);
  EXPECT_EQ(c->FindVerdict(*unindexed), nullptr);
}

TEST(EquivalenceClassTest, ScoresPerPluginAndGeneration) {
  EquivalenceCache cache;
  auto n0 = Node("n0", 0);
  EquivalenceClass* c = cache.ClassFor("k", 1, 2);
  c->StoreScore(0, *n0, 42);
  EXPECT_EQ(c->FindScore(0, *n0), 42);
  EXPECT_EQ(c->FindScore(1, *n0), std::nullopt);
  EXPECT_EQ(c->FindScore(2, *n0), std::nullopt);  // no such plugin
  n0->Touch();
  EXPECT_EQ(c->FindScore(0, *n0), std::nullopt);
}

// A node's row holds one generation: what was recorded for an older one (verdict and scores) is
// gone once anything is recorded for the new one, and a score outside int32 is not kept.
TEST(EquivalenceClassTest, ARowHoldsOneGenerationAndInt32Scores) {
  EquivalenceCache cache;
  auto n0 = Node("n0", 0);
  EquivalenceClass* c = cache.ClassFor("k", 1, 3);
  c->StoreVerdict(*n0, Status());
  c->StoreScore(0, *n0, -5);
  c->StoreScore(1, *n0, int64_t{1} << 40);
  c->StoreScore(2, *n0, std::numeric_limits<int32_t>::max());
  EXPECT_NE(c->FindVerdict(*n0), nullptr);
  EXPECT_EQ(c->FindScore(0, *n0), -5);
  EXPECT_EQ(c->FindScore(1, *n0), std::nullopt);
  EXPECT_EQ(c->FindScore(2, *n0), std::numeric_limits<int32_t>::max());

  n0->Touch();
  c->StoreScore(1, *n0, 3);
  EXPECT_EQ(c->FindVerdict(*n0), nullptr);
  EXPECT_EQ(c->FindScore(0, *n0), std::nullopt);
  EXPECT_EQ(c->FindScore(1, *n0), 3);
  EXPECT_EQ(c->FindScore(2, *n0), std::nullopt);
}

TEST(EquivalenceCacheTest, ANewNodeCountStartsTheClassOver) {
  EquivalenceCache cache;
  auto n0 = Node("n0", 0);
  EquivalenceClass* c = cache.ClassFor("k", 1, 1);
  c->StoreVerdict(*n0, Status());
  c->StoreScore(0, *n0, 7);
  EXPECT_EQ(cache.ClassFor("k", 1, 1), c);
  EXPECT_NE(c->FindVerdict(*n0), nullptr);
  c = cache.ClassFor("k", 2, 1);
  EXPECT_EQ(c->FindVerdict(*n0), nullptr);
  EXPECT_EQ(c->FindScore(0, *n0), std::nullopt);
}

TEST(EquivalenceCacheTest, LeastRecentlyUsedClassesGoBeyondTheBudget) {
  EquivalenceCache cache(/*budget_entries=*/20);  // two classes of 5 nodes × (1 + 1)
  auto n0 = Node("n0", 0);
  cache.ClassFor("a", 5, 1)->StoreVerdict(*n0, Status());
  cache.ClassFor("b", 5, 1);
  cache.ClassFor("a", 5, 1);  // a is now the most recent
  cache.ClassFor("c", 5, 1);  // b goes
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.ClassFor("a", 5, 1)->FindVerdict(*n0), nullptr);
  EXPECT_EQ(cache.ClassFor("x", 11, 1), nullptr);  // alone above the budget
}

}  // namespace
}  // namespace kubesched::framework::runtime
