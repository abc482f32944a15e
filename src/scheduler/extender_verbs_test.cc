// The scheduler's extender verbs (kubesched extender): Filter, Prioritize and Preempt on the nodes
// a request names, against a view fed by cluster events (as the watch feeds it) or by the
// requests' own node objects, with a scheduler that queues no pod itself.

#include <gtest/gtest.h>

#include "cluster/store_client.h"
#include "config/load.h"
#include "scheduler/scheduler.h"
#include "store/resources.h"
#include "testing/builders.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;

constexpr std::string_view kProfile = "default-scheduler";

class ExtenderVerbsTest : public ::testing::Test {
 protected:
  ExtenderVerbsTest()
      : clock_(testing::kSchedulerTestStart), store_(store::NewBuiltinStore(clock_)), client_(*store_, clock_) {
    SchedulerOptions options;
    options.config = config::DefaultConfiguration(testing::InTreeRegistry());
    options.queue_pods = false;
    auto created = Scheduler::Create(options, client_, clock_, testing::InTreeRegistry());
    EXPECT_TRUE(created.has_value()) << created.error();
    sched_ = std::move(*created);
  }

  void AddNode(const std::string& name, const std::string& cpu) {
    sched_->OnNodeAdd(MakeNode().Name(name).Capacity({{"cpu", cpu}, {"memory", "8Gi"}}).Obj());
  }

  util::VirtualClock clock_;
  std::unique_ptr<store::Store> store_;
  cluster::StoreClient client_;
  std::unique_ptr<Scheduler> sched_;
};

TEST_F(ExtenderVerbsTest, FilterSplitsNodesByVerdictAndKeepsTheRequestOrder) {
  // "small" has room but not enough (Unschedulable); a request above a node's allocatable is
  // UnschedulableAndUnresolvable, as upstream's NodeResourcesFit.
  AddNode("small", "4");
  sched_->OnPodAdd(MakePod().Name("x").UID("x").Node("small").Req({{"cpu", "3"}}).Obj());
  AddNode("big-b", "4");
  AddNode("big-a", "4");
  sched_->OnNodeAdd(
      MakeNode().Name("tainted").Capacity({{"cpu", "8"}}).Taint("dedicated", "x", api::TaintEffect::kNoSchedule).Obj());
  auto pod = MakePod().Name("p").UID("p").Req({{"cpu", "2"}}).Obj();
  const std::vector<std::string> names{"big-b", "small", "ghost", "tainted", "big-a"};
  auto verdict = sched_->ExtenderFilter(kProfile, *pod, names);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  EXPECT_EQ(verdict->passed, (std::vector<std::string>{"big-b", "big-a"}));
  ASSERT_EQ(verdict->failed.size(), 2u);
  EXPECT_EQ(verdict->failed.at("small"), "Insufficient cpu");
  EXPECT_EQ(verdict->failed.at("ghost"), UnknownNodeReason("ghost"));
  ASSERT_EQ(verdict->failed_and_unresolvable.size(), 1u);
  EXPECT_EQ(verdict->failed_and_unresolvable.at("tainted"), "node(s) had untolerated taint(s)");
}

TEST_F(ExtenderVerbsTest, FilterSeesThePodsRunningInTheView) {
  AddNode("n1", "4");
  AddNode("n2", "4");
  sched_->OnPodAdd(MakePod().Name("db").UID("db").Label("app", "db").Node("n1").Req({{"cpu", "1"}}).Obj());
  auto pod = MakePod().Name("web").UID("web").PodAntiAffinityIn("app", {"db"}, "kubernetes.io/hostname").Obj();
  const std::vector<std::string> names{"n1", "n2"};
  auto verdict = sched_->ExtenderFilter(kProfile, *pod, names);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  EXPECT_EQ(verdict->passed, (std::vector<std::string>{"n2"}));
  const bool rejected = verdict->failed.contains("n1") || verdict->failed_and_unresolvable.contains("n1");
  EXPECT_TRUE(rejected);

  // Resource fit counts the running pod too.
  sched_->OnPodAdd(MakePod().Name("big").UID("big").Node("n2").Req({{"cpu", "3"}}).Obj());
  auto needs_two = MakePod().Name("two").UID("two").Req({{"cpu", "2"}}).Obj();
  verdict = sched_->ExtenderFilter(kProfile, *needs_two, names);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  EXPECT_EQ(verdict->passed, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(verdict->failed.at("n2"), "Insufficient cpu");
}

TEST_F(ExtenderVerbsTest, FilterOnALargeRequestMatchesTheSerialVerdicts) {
  // Past the parallel threshold: every node is evaluated, odd ones too small.
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    names.push_back("node-" + std::to_string(i));
    AddNode(names.back(), i % 2 ? "1" : "4");
  }
  auto pod = MakePod().Name("p").UID("p").Req({{"cpu", "2"}}).Obj();
  auto verdict = sched_->ExtenderFilter(kProfile, *pod, names);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  ASSERT_EQ(verdict->passed.size(), 150u);
  for (size_t i = 0; i < verdict->passed.size(); ++i) EXPECT_EQ(verdict->passed[i], names[2 * i]);
  EXPECT_EQ(verdict->failed_and_unresolvable.size(), 150u);
}

TEST_F(ExtenderVerbsTest, UnknownProfileIsAnError) {
  AddNode("n1", "4");
  auto pod = MakePod().Name("p").UID("p").Obj();
  const std::vector<std::string> names{"n1"};
  auto verdict = sched_->ExtenderFilter("nope", *pod, names);
  ASSERT_FALSE(verdict.has_value());
  EXPECT_EQ(verdict.error(), "kubesched extender has no profile \"nope\"");
}

TEST_F(ExtenderVerbsTest, PrioritizeMapsTheBestNodeToTenAndTheRestInProportion) {
  AddNode("busy", "4");
  AddNode("idle", "4");
  sched_->OnPodAdd(MakePod().Name("x").UID("x").Node("busy").Req({{"cpu", "3"}, {"memory", "6Gi"}}).Obj());
  auto pod = MakePod().Name("p").UID("p").Req({{"cpu", "500m"}, {"memory", "512Mi"}}).Obj();
  const std::vector<std::string> names{"busy", "ghost", "idle"};
  auto priorities = sched_->ExtenderPrioritize(kProfile, *pod, names);
  ASSERT_TRUE(priorities.has_value()) << priorities.error();
  ASSERT_EQ(priorities->size(), 3u);
  EXPECT_EQ((*priorities)[0].host, "busy");
  EXPECT_EQ((*priorities)[1], (framework::HostPriority{"ghost", 0}));
  EXPECT_EQ((*priorities)[2], (framework::HostPriority{"idle", framework::kMaxExtenderPriority}));
  EXPECT_GE((*priorities)[0].score, 0);
  EXPECT_LT((*priorities)[0].score, framework::kMaxExtenderPriority);
}

TEST_F(ExtenderVerbsTest, PreemptPicksTheMinimalLowerPriorityVictims) {
  AddNode("n1", "2");
  AddNode("n2", "2");
  AddNode("empty", "2");
  sched_->OnPodAdd(MakePod().Name("low-a").UID("low-a").Priority(0).Node("n1").Req({{"cpu", "1"}}).Obj());
  sched_->OnPodAdd(MakePod().Name("low-b").UID("low-b").Priority(0).Node("n1").Req({{"cpu", "1"}}).Obj());
  sched_->OnPodAdd(MakePod().Name("high").UID("high").Priority(1000).Node("n2").Req({{"cpu", "2"}}).Obj());
  auto pod = MakePod().Name("p").UID("p").Priority(100).Req({{"cpu", "1"}}).Obj();
  const std::vector<std::string> names{"n1", "n2", "empty", "ghost"};
  auto victims = sched_->ExtenderPreempt(kProfile, *pod, names);
  ASSERT_TRUE(victims.has_value()) << victims.error();
  // n2's pod outranks the preemptor; "empty" needs no eviction; "ghost" is unknown.
  ASSERT_EQ(victims->size(), 1u);
  const framework::NodeVictims& on_n1 = victims->at("n1");
  ASSERT_EQ(on_n1.pods.size(), 1u);
  EXPECT_EQ(on_n1.num_pdb_violations, 0);
}

TEST_F(ExtenderVerbsTest, LearnedNodesAreAddedAndUpdatedWhenTheyDiffer) {
  auto small = MakeNode().Name("n").Capacity({{"cpu", "1"}}).Obj();
  small->json = std::make_shared<const std::string>(R"({"cpu":"1"})");
  std::vector<std::shared_ptr<const api::Node>> nodes{small};
  sched_->LearnNodes(nodes);
  auto pod = MakePod().Name("p").UID("p").Req({{"cpu", "2"}}).Obj();
  const std::vector<std::string> names{"n"};
  auto verdict = sched_->ExtenderFilter(kProfile, *pod, names);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  EXPECT_TRUE(verdict->passed.empty());

  auto bigger = MakeNode().Name("n").Capacity({{"cpu", "4"}}).Obj();
  bigger->json = std::make_shared<const std::string>(R"({"cpu":"4"})");
  nodes = {bigger};
  sched_->LearnNodes(nodes);
  verdict = sched_->ExtenderFilter(kProfile, *pod, names);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  EXPECT_EQ(verdict->passed, (std::vector<std::string>{"n"}));
}

TEST_F(ExtenderVerbsTest, PendingPodsAreNotQueuedWithoutQueuePods) {
  AddNode("n1", "4");
  sched_->OnPodAdd(MakePod().Name("pending").UID("pending").Obj());
  EXPECT_FALSE(sched_->ScheduleOne());
}

}  // namespace
}  // namespace kubesched::scheduler
