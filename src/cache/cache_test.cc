// Tests of the scheduler cache: assume / forget / confirm, and incremental snapshots.

#include "cache/cache.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::cache {
namespace {

using framework::PodInfo;
using testing::MakeNode;
using testing::MakePod;

std::shared_ptr<const api::Pod> Bound(std::shared_ptr<api::Pod> pod, const std::string& node) {
  pod->spec.node_name = node;
  return pod;
}

TEST(Cache, AssumedPodIsCountedOnItsNodeBeforeBinding) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj());
  auto pod = Bound(MakePod().Name("p").Req({{"cpu", "1"}, {"memory", "1Gi"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AssumePod(PodInfo::Create(pod)).IsSuccess());
  EXPECT_TRUE(cache.IsAssumedPod(*pod));
  EXPECT_EQ(cache.AssumedPodCount(), 1u);

  Snapshot snap;
  cache.UpdateSnapshot(snap);
  const framework::NodeInfo* n1 = snap.Get("n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->requested().milli_cpu, 1000);
  EXPECT_EQ(n1->requested().memory, 1LL << 30);
  EXPECT_EQ(n1->pods().size(), 1u);
}

TEST(Cache, AssumingTwiceFails) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj());
  auto pod = Bound(MakePod().Name("p").Req({{"cpu", "1"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AssumePod(PodInfo::Create(pod)).IsSuccess());
  EXPECT_TRUE(cache.AssumePod(PodInfo::Create(pod)).IsError());
}

TEST(Cache, ForgetReleasesTheResources) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj());
  auto pod = Bound(MakePod().Name("p").Req({{"cpu", "1"}}).HostPort(8080).Obj(), "n1");
  ASSERT_TRUE(cache.AssumePod(PodInfo::Create(pod)).IsSuccess());
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.Get("n1")->used_ports().size(), 1u);
  ASSERT_TRUE(cache.ForgetPod(*pod).IsSuccess());
  EXPECT_FALSE(cache.IsAssumedPod(*pod));
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.Get("n1")->requested().milli_cpu, 0);
  EXPECT_EQ(snap.Get("n1")->used_ports().size(), 0u);
  EXPECT_TRUE(snap.Get("n1")->pods().empty());
}

TEST(Cache, AddConfirmsAnAssumedPodAndMovesItWhenBoundElsewhere) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj());
  cache.AddNode(MakeNode().Name("n2").Capacity({{"cpu", "4"}}).Obj());
  auto base = MakePod().Name("p").Req({{"cpu", "1"}}).Obj();
  auto assumed = Bound(std::make_shared<api::Pod>(*base), "n1");
  ASSERT_TRUE(cache.AssumePod(PodInfo::Create(assumed)).IsSuccess());
  auto bound = Bound(std::make_shared<api::Pod>(*base), "n2");
  ASSERT_TRUE(cache.AddPod(PodInfo::Create(bound)).IsSuccess());
  EXPECT_FALSE(cache.IsAssumedPod(*bound));
  EXPECT_EQ(cache.AssumedPodCount(), 0u);
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.Get("n1")->requested().milli_cpu, 0);
  EXPECT_EQ(snap.Get("n2")->requested().milli_cpu, 1000);
  // An added (confirmed) pod cannot be forgotten.
  EXPECT_TRUE(cache.ForgetPod(*bound).IsError());
}

TEST(Cache, UpdateAndRemovePod) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj());
  auto old_pod = Bound(MakePod().Name("p").Req({{"cpu", "1"}}).Label("v", "1").Obj(), "n1");
  ASSERT_TRUE(cache.AddPod(PodInfo::Create(old_pod)).IsSuccess());
  auto new_pod = std::make_shared<api::Pod>(*old_pod);
  new_pod->metadata.labels.Set("v", "2");
  ASSERT_TRUE(cache.UpdatePod(*old_pod, PodInfo::Create(new_pod)).IsSuccess());
  EXPECT_EQ(*cache.GetPod(old_pod->metadata.uid)->pod().metadata.labels.Find("v"), "2");
  ASSERT_TRUE(cache.RemovePod(*new_pod).IsSuccess());
  EXPECT_EQ(cache.PodCount(), 0u);
  EXPECT_TRUE(cache.RemovePod(*new_pod).IsError());
}

TEST(Snapshot, OnlyChangedNodesAreCopied) {
  Cache cache;
  for (int i = 0; i < 5; ++i) {
    cache.AddNode(MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", "4"}}).Obj());
  }
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  ASSERT_EQ(snap.NumNodes(), 5u);
  std::vector<const framework::NodeInfo*> before(snap.List().begin(), snap.List().end());
  int64_t gen_n0 = snap.Get("n0")->generation();
  int64_t gen_n1 = snap.Get("n1")->generation();

  auto pod = Bound(MakePod().Name("p").Req({{"cpu", "1"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AddPod(PodInfo::Create(pod)).IsSuccess());
  cache.UpdateSnapshot(snap);
  // Addresses are stable, n1 was refreshed, n0 untouched.
  std::vector<const framework::NodeInfo*> after(snap.List().begin(), snap.List().end());
  EXPECT_EQ(before, after);
  EXPECT_EQ(snap.Get("n0")->generation(), gen_n0);
  EXPECT_GT(snap.Get("n1")->generation(), gen_n1);
  EXPECT_EQ(snap.Get("n1")->requested().milli_cpu, 1000);
}

TEST(Snapshot, NodeRemovalAndAffinityListsAreTracked) {
  Cache cache;
  cache.AddNode(MakeNode().Name("a").Capacity({{"cpu", "4"}}).Obj());
  cache.AddNode(MakeNode().Name("b").Capacity({{"cpu", "4"}}).Obj());
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  EXPECT_TRUE(snap.HavePodsWithAffinityList().empty());

  auto with_anti =
      Bound(MakePod().Name("x").Label("app", "x").PodAntiAffinityIn("app", {"x"}, "kubernetes.io/hostname").Obj(), "a");
  ASSERT_TRUE(cache.AddPod(PodInfo::Create(with_anti)).IsSuccess());
  cache.UpdateSnapshot(snap);
  ASSERT_EQ(snap.HavePodsWithAffinityList().size(), 1u);
  EXPECT_EQ(snap.HavePodsWithAffinityList()[0]->name(), "a");
  ASSERT_EQ(snap.HavePodsWithRequiredAntiAffinityList().size(), 1u);

  cache.RemoveNode("b");
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.NumNodes(), 1u);
  EXPECT_EQ(snap.Get("b"), nullptr);

  ASSERT_TRUE(cache.RemovePod(*with_anti).IsSuccess());
  cache.UpdateSnapshot(snap);
  EXPECT_TRUE(snap.HavePodsWithAffinityList().empty());
}

TEST(Snapshot, NodesAreInterleavedByZone) {
  Cache cache;
  cache.AddNode(MakeNode().Name("a1").Label("topology.kubernetes.io/zone", "a").Obj());
  cache.AddNode(MakeNode().Name("a2").Label("topology.kubernetes.io/zone", "a").Obj());
  cache.AddNode(MakeNode().Name("b1").Label("topology.kubernetes.io/zone", "b").Obj());
  cache.AddNode(MakeNode().Name("a3").Label("topology.kubernetes.io/zone", "a").Obj());
  cache.AddNode(MakeNode().Name("b2").Label("topology.kubernetes.io/zone", "b").Obj());
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  std::vector<std::string> names;
  for (const auto* n : snap.List()) names.push_back(n->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3"}));
}

TEST(Snapshot, ImageStatesCountNodesHavingTheImage) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Image("nginx:1.25", 100).Obj());
  cache.AddNode(MakeNode().Name("n2").Image("nginx:1.25", 100).Image("redis", 50).Obj());
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  const auto* n1 = snap.Get("n1")->FindImage("nginx:1.25");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->num_nodes, 2);  // n1 was refreshed when n2 brought the same image
  const auto* redis = snap.Get("n2")->FindImage("redis:latest");
  ASSERT_NE(redis, nullptr);
  EXPECT_EQ(redis->num_nodes, 1);
  EXPECT_EQ(redis->size, 50);
}

TEST(Cache, PodsOfADeletedNodeKeepItsInfoUntilTheyGo) {
  Cache cache;
  cache.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj());
  auto pod = Bound(MakePod().Name("p").Req({{"cpu", "1"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AddPod(PodInfo::Create(pod)).IsSuccess());
  cache.RemoveNode("n1");
  EXPECT_EQ(cache.NodeCount(), 0u);
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.NumNodes(), 0u);
  ASSERT_TRUE(cache.RemovePod(*pod).IsSuccess());
  EXPECT_EQ(cache.PodCount(), 0u);
}

}  // namespace
}  // namespace kubesched::cache
