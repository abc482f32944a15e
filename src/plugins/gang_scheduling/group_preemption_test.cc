#include "plugins/gang_scheduling/group_preemption.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/pod_group_index.h"
#include "framework/pod_info.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

// Workload-aware preemption (KEP-5710) as upstream's podgrouppreemption_test.go states it: the
// order of importance between victims, victims by disruption mode, the group's priority standing
// for its pods', PDB-protected victims spared first, and the cases that do not preempt.
namespace kubesched::plugins::gang_scheduling {
namespace {

using framework::PodInfo;
using framework::PodInfoPtr;
using testing::MakeNode;
using testing::MakePod;

VictimUnit Unit(int32_t priority, int64_t start, size_t pods = 1, std::string group = "") {
  VictimUnit u;
  u.priority = priority;
  u.start_ns = start;
  u.group = std::move(group);
  for (size_t i = 0; i < pods; ++i) u.pods.push_back(PodInfo::Create(MakePod().Name("p").Obj()));
  return u;
}

TEST(GroupPreemptionTest, ImportanceOrder) {
  // Higher priority first, whatever else.
  EXPECT_TRUE(MoreImportant(Unit(10, 5), Unit(5, 1, 3, "ns/g")));
  EXPECT_FALSE(MoreImportant(Unit(5, 1, 3, "ns/g"), Unit(10, 5)));
  // At equal priority a group before a pod.
  EXPECT_TRUE(MoreImportant(Unit(5, 9, 2, "ns/g"), Unit(5, 1)));
  EXPECT_FALSE(MoreImportant(Unit(5, 1), Unit(5, 9, 2, "ns/g")));
  // Pods: the one that started earlier.
  EXPECT_TRUE(MoreImportant(Unit(5, 1), Unit(5, 2)));
  EXPECT_FALSE(MoreImportant(Unit(5, 2), Unit(5, 1)));
  // Groups: the larger, then the one that started earlier.
  EXPECT_TRUE(MoreImportant(Unit(5, 9, 3, "ns/a"), Unit(5, 1, 2, "ns/b")));
  EXPECT_TRUE(MoreImportant(Unit(5, 1, 2, "ns/a"), Unit(5, 9, 2, "ns/b")));
  EXPECT_FALSE(MoreImportant(Unit(5, 1, 2, "ns/a"), Unit(5, 1, 2, "ns/b")));  // equals: neither
}

std::shared_ptr<api::PodGroup> Group(std::string name, int32_t min_count, std::optional<int32_t> priority,
                                     api::DisruptionMode mode = api::DisruptionMode::kPod) {
  auto g = std::make_shared<api::PodGroup>();
  g->metadata.name = std::move(name);
  g->metadata.namespace_ = "ns";
  g->metadata.uid = "uid-" + g->metadata.name;
  g->policy = api::PodGroupPolicy::kGang;
  g->min_count = min_count;
  g->priority = priority;
  g->disruption_mode = mode;
  return g;
}

class GroupPreemptorTest : public ::testing::Test {
 protected:
  // One node of `cpu` cpus per entry, named n0, n1, ...; `running` are bound already.
  void Build(std::vector<std::string> cpus, std::vector<std::shared_ptr<api::Pod>> running) {
    std::vector<std::shared_ptr<api::Node>> nodes;
    for (size_t i = 0; i < cpus.size(); ++i) {
      nodes.push_back(MakeNode()
                          .Name("n" + std::to_string(i))
                          .Capacity({{"cpu", cpus[i]}, {"memory", "8Gi"}, {"pods", "110"}})
                          .Obj());
    }
    for (const auto& p : running) index_->SetPod(p);
    handle_ = std::make_unique<testing::FakeHandle>(nodes, running);
    handle_->set_pod_groups(index_.get());
    handle_->run_pre_filter_plugins = [](framework::CycleState&, const PodInfo&) {
      return std::pair{framework::PreFilterResult{}, framework::Status()};
    };
    // NodeResourcesFit's verdict on cpu, the only resource these cases use.
    handle_->run_filter_plugins = [](const framework::CycleState&, const PodInfo& pod,
                                     const framework::NodeInfo& node) {
      if (node.requested().milli_cpu + pod.requests.milli_cpu > node.allocatable().milli_cpu) {
        return framework::Status::Unschedulable("Insufficient cpu");
      }
      return framework::Status();
    };
  }
  std::vector<PodInfoPtr> Pending(const std::string& group, int count, const std::string& cpu, int32_t priority = 0) {
    std::vector<PodInfoPtr> out;
    for (int i = 0; i < count; ++i) {
      auto p = MakePod()
                   .Name(group + "-" + std::to_string(i))
                   .Namespace("ns")
                   .UID(group + "-" + std::to_string(i))
                   .PodGroup(group)
                   .Priority(priority)
                   .Req({{"cpu", cpu}})
                   .Obj();
      index_->SetPod(p);
      out.push_back(PodInfo::Create(p));
    }
    return out;
  }
  static std::shared_ptr<api::Pod> Bound(const std::string& name, const std::string& node, const std::string& cpu,
                                         int32_t priority, const std::string& group = "", int64_t start = 0) {
    auto b = MakePod().Name(name).Namespace("ns").UID(name).Node(node).Priority(priority).Req({{"cpu", cpu}});
    if (!group.empty()) b.PodGroup(group);
    if (start != 0) b.StartTime(start);
    return b.Obj();
  }
  static std::set<std::string> VictimPods(const GroupPreemptionResult& r) {
    std::set<std::string> out;
    for (const auto& u : r.victims) {
      for (const auto& p : u.pods) out.insert(p->pod().metadata.name);
    }
    return out;
  }

  std::unique_ptr<cache::PodGroupIndex> index_ = std::make_unique<cache::PodGroupIndex>();
  std::unique_ptr<testing::FakeHandle> handle_;
};

// The integration case: a node of 4 cpu full with a gang of priority 10; a gang of 3 of priority
// 100 takes the whole group when its mode is PodGroup, 3 of its pods when it is Pod.
TEST_F(GroupPreemptorTest, AVictimGroupGoesWholeOnlyInPodGroupMode) {
  for (const auto mode : {api::DisruptionMode::kPodGroup, api::DisruptionMode::kPod}) {
    index_ = std::make_unique<cache::PodGroupIndex>();
    index_->SetGroup(Group("low", 4, 10, mode));
    const auto preemptor = Group("high", 3, 100);
    index_->SetGroup(preemptor);
    std::vector<std::shared_ptr<api::Pod>> running;
    for (int i = 0; i < 4; ++i) running.push_back(Bound("low-" + std::to_string(i), "n0", "1", 0, "low", 10 + i));
    Build({"4"}, running);
    GroupPreemptor gp(*handle_, "GangScheduling");
    const auto members = Pending("high", 3, "1");
    GroupPreemptionResult r = gp.Plan(*preemptor, members, 3);
    ASSERT_TRUE(r.preempted) << r.message;
    EXPECT_EQ(r.placement.placed, 3);
    if (mode == api::DisruptionMode::kPodGroup) {
      ASSERT_EQ(r.victims.size(), 1u);
      EXPECT_EQ(r.victims[0].group, "ns/low");
      EXPECT_EQ(VictimPods(r).size(), 4u);
    } else {
      // The pod that started first is the most important: it stays.
      EXPECT_EQ(VictimPods(r), (std::set<std::string>{"low-1", "low-2", "low-3"}));
    }
  }
}

// The group's priority stands for its pods': pods of priority 1000 in a group of priority 10 are
// victims of a gang of priority 100, and a gang of pods of priority 0 in a group of priority 100
// preempts them.
TEST_F(GroupPreemptorTest, TheGroupsPriorityStandsForItsPods) {
  index_->SetGroup(Group("low", 2, 10));
  const auto preemptor = Group("high", 2, 100);
  index_->SetGroup(preemptor);
  Build({"2"}, {Bound("low-0", "n0", "1", 1000, "low"), Bound("low-1", "n0", "1", 1000, "low")});
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("high", 2, "1", 0), 2);
  ASSERT_TRUE(r.preempted) << r.message;
  EXPECT_EQ(VictimPods(r).size(), 2u);
}

// Upstream's partial case: two pods of priority 5 and two of priority 10 on a node of 4 cpu; a gang
// of priority 50 needing 2 cpu takes the two of priority 5.
TEST_F(GroupPreemptorTest, TheLeastImportantPodsGo) {
  const auto preemptor = Group("mid", 2, 50);
  index_->SetGroup(preemptor);
  Build({"4"}, {Bound("very-low-0", "n0", "1", 5), Bound("very-low-1", "n0", "1", 5), Bound("low-0", "n0", "1", 10),
                Bound("low-1", "n0", "1", 10)});
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("mid", 2, "1"), 2);
  ASSERT_TRUE(r.preempted) << r.message;
  EXPECT_EQ(VictimPods(r), (std::set<std::string>{"very-low-0", "very-low-1"}));
}

// Victims across nodes: a gang of 2 pods of 2 cpu on two nodes of 2 cpu, each with one victim.
TEST_F(GroupPreemptorTest, VictimsOnManyNodes) {
  const auto preemptor = Group("g", 2, 100);
  index_->SetGroup(preemptor);
  Build({"2", "2", "2"}, {Bound("a", "n0", "2", 10), Bound("b", "n1", "1", 10), Bound("c", "n2", "2", 200)});
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("g", 2, "2"), 2);
  ASSERT_TRUE(r.preempted) << r.message;
  EXPECT_EQ(VictimPods(r), (std::set<std::string>{"a", "b"}));
}

// Many candidates, few needed: twenty full nodes of 2 cpu, each with two pods of 1 cpu; a gang of 3
// pods of 2 cpu takes the two pods of 3 nodes, and those of the nodes whose pods started last (the
// least important), however many candidates there are beyond kMaxSolves.
TEST_F(GroupPreemptorTest, OnlyTheVictimsThePlacementNeedsGo) {
  const auto preemptor = Group("g", 3, 100);
  index_->SetGroup(preemptor);
  std::vector<std::string> cpus(20, "2");
  std::vector<std::shared_ptr<api::Pod>> running;
  for (int n = 0; n < 20; ++n) {
    for (int k = 0; k < 2; ++k) {
      running.push_back(Bound(fmt::format("p-{}-{}", n, k), "n" + std::to_string(n), "1", 10, "", 100 + n));
    }
  }
  Build(cpus, running);
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("g", 3, "2"), 3);
  ASSERT_TRUE(r.preempted) << r.message;
  EXPECT_EQ(VictimPods(r), (std::set<std::string>{"p-17-0", "p-17-1", "p-18-0", "p-18-1", "p-19-0", "p-19-1"}));
  EXPECT_LE(r.solves, GroupPreemptor::kMaxSolves);
}

// A victim whose eviction a PodDisruptionBudget forbids is spared first, even when it is the less
// important one.
TEST_F(GroupPreemptorTest, APdbProtectedVictimIsSparedFirst) {
  const auto preemptor = Group("g", 1, 100);
  index_->SetGroup(preemptor);
  auto guarded = Bound("guarded", "n1", "2", 10, "", 50);
  guarded->metadata.labels.Set("app", "guarded");
  Build({"2", "2"}, {Bound("early", "n0", "2", 10, "", 1), guarded});
  auto pdb = std::make_shared<api::PodDisruptionBudget>();
  pdb->metadata.name = "guard";
  pdb->metadata.namespace_ = "ns";
  pdb->selector = api::LabelSelector{};
  pdb->selector->match_labels.Set("app", "guarded");
  pdb->min_available = "1";
  handle_->fake_client().AddPodDisruptionBudget(pdb);
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("g", 1, "2"), 1);
  ASSERT_TRUE(r.preempted) << r.message;
  EXPECT_EQ(VictimPods(r), (std::set<std::string>{"early"}));
}

TEST_F(GroupPreemptorTest, NoLowerPriorityPodsNoVictims) {
  const auto preemptor = Group("g", 1, 10);
  index_->SetGroup(preemptor);
  Build({"1"}, {Bound("same", "n0", "1", 10)});
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("g", 1, "1"), 1);
  EXPECT_FALSE(r.preempted);
  EXPECT_EQ(r.message, kGroupNoVictims);
}

TEST_F(GroupPreemptorTest, PreemptionThatDoesNotHelpPreemptsNothing) {
  const auto preemptor = Group("g", 2, 100);
  index_->SetGroup(preemptor);
  Build({"2"}, {Bound("low", "n0", "1", 10)});
  GroupPreemptor gp(*handle_, "GangScheduling");
  GroupPreemptionResult r = gp.Plan(*preemptor, Pending("g", 2, "2"), 2);
  EXPECT_FALSE(r.preempted);
  EXPECT_THAT(r.message, ::testing::HasSubstr("preemption does not help: 1 of the 2 pending pods fit"));
}

TEST_F(GroupPreemptorTest, NotWithATopologyConstraintNorAMemberThatNeverPreempts) {
  auto with_topology = Group("g", 1, 100);
  with_topology->topology_key = "rack";
  index_->SetGroup(with_topology);
  Build({"1"}, {Bound("low", "n0", "1", 10)});
  GroupPreemptor gp(*handle_, "GangScheduling");
  EXPECT_EQ(gp.Plan(*with_topology, Pending("g", 1, "1"), 1).message, kGroupPreemptionTopology);

  const auto plain = Group("h", 1, 100);
  auto never = MakePod().Name("h-0").Namespace("ns").UID("h-0").PodGroup("h").Req({{"cpu", "1"}});
  never.PreemptionPolicy(api::PreemptionPolicy::kNever);
  EXPECT_EQ(gp.Plan(*plain, {PodInfo::Create(never.Obj())}, 1).message, kGroupPreemptionNever);
}

// Apply evicts each victim (its DisruptionTarget reason naming the group) and nominates each
// member to its node.
TEST_F(GroupPreemptorTest, ApplyEvictsAndNominates) {
  const auto preemptor = Group("high", 2, 100);
  index_->SetGroup(preemptor);
  Build({"1", "1"}, {Bound("a", "n0", "1", 10), Bound("b", "n1", "1", 10)});
  GroupPreemptor gp(*handle_, "GangScheduling");
  const auto members = Pending("high", 2, "1");
  GroupPreemptionResult r = gp.Plan(*preemptor, members, 2);
  ASSERT_TRUE(r.preempted) << r.message;
  ASSERT_TRUE(gp.Apply(*preemptor, r).IsSuccess());
  EXPECT_EQ(r.evicted_pods, 2);
  const auto deletions = handle_->fake_client().deletions();
  ASSERT_EQ(deletions.size(), 2u);
  for (const auto& d : deletions) {
    EXPECT_THAT(d.reason, ::testing::StartsWith("Preempted by podgroup ns/high ("));
    EXPECT_THAT(d.reason, ::testing::HasSubstr("preempting to accommodate a higher priority podgroup"));
  }
  std::set<std::string> nominated;
  for (const auto& n : handle_->fake_client().nominations()) nominated.insert(n.pod_key + "@" + n.node_name);
  EXPECT_EQ(nominated.size(), 2u);
}

}  // namespace
}  // namespace kubesched::plugins::gang_scheduling
