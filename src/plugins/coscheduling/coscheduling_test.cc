#include "plugins/coscheduling/coscheduling.h"

#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/pod_group_index.h"
#include "framework/args_view.h"
#include "framework/cycle_state.h"
#include "framework/pod_info.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

// kubernetes-sigs/scheduler-plugins' coscheduling tests (pkg/coscheduling/coscheduling_test.go:
// TestLess, TestPermit, TestPostFilter, TestPodGroupBackoffTime; pkg/coscheduling/core/core_test.go:
// TestPreFilter, TestPermit, TestCheckClusterResource), as tables over kubesched's plugin.
namespace kubesched::plugins::coscheduling {
namespace {

using framework::Code;
using testing::MakeNode;
using testing::MakePod;

constexpr int64_t kSecond = 1'000'000'000;
constexpr std::string_view kLabel = api::kLabelCoschedulingPodGroup;

std::shared_ptr<api::PodGroup> Group(std::string ns, std::string name, int32_t min_member, int64_t created_ns = 0) {
  auto g = std::make_shared<api::PodGroup>();
  g->api = api::PodGroupApi::kCoscheduling;
  g->policy = api::PodGroupPolicy::kGang;
  g->metadata.namespace_ = std::move(ns);
  g->metadata.name = std::move(name);
  g->metadata.creation_timestamp_ns = created_ns;
  g->min_count = min_member;
  return g;
}

testing::PodBuilder Member(const std::string& ns, const std::string& name, const std::string& group) {
  auto b = MakePod().Name(name).Namespace(ns).UID(ns + "-" + name);
  if (!group.empty()) b.Label(std::string(kLabel), group);
  return b;
}

// Upstream's st.MakeNode().Capacity(...) also gives every node room for 32 pods.
std::shared_ptr<api::Node> Node(const std::string& name, const std::string& cpu) {
  return MakeNode().Name(name).Capacity({{"cpu", cpu}, {"pods", "32"}}).Obj();
}

class CoschedulingTest : public ::testing::Test {
 protected:
  explicit CoschedulingTest(std::vector<std::shared_ptr<api::Node>> nodes = {Node("node", "4")},
                            std::vector<std::shared_ptr<api::Pod>> assigned = {})
      : handle_(nodes, assigned) {
    handle_.set_pod_groups(&index_, api::PodGroupApi::kCoscheduling);
    for (const auto& p : assigned) index_.SetPod(p);
  }
  void SetUpPlugin(CoschedulingArgs args = {}) { plugin_ = std::make_unique<Coscheduling>(handle_, args); }
  std::shared_ptr<testing::FakeWaitingPod> Wait(const std::shared_ptr<api::Pod>& pod) {
    framework::CycleState state;
    auto info = framework::PodInfo::Create(pod);
    EXPECT_TRUE(plugin_->Reserve(state, *info, "node").IsSuccess());
    auto [status, timeout] = plugin_->Permit(state, *info, "node");
    EXPECT_EQ(status.code(), Code::kWait) << pod->metadata.name << ": " << status.Message();
    return handle_.AddWaitingPod(pod, {std::string(Coscheduling::kName)});
  }

  testing::FakeHandle handle_;
  cache::PodGroupIndex index_{api::PodGroupApi::kCoscheduling};
  std::unique_ptr<Coscheduling> plugin_ = std::make_unique<Coscheduling>(handle_, CoschedulingArgs{});
};

// ---------------------------------------------------------------------------------------------
// TestLess

struct LessCase {
  std::string name;
  std::shared_ptr<api::Pod> p1, p2;
  int64_t p1_attempt = 0, p2_attempt = 0;  // InitialAttemptTimestamp, seconds after "now"
  std::vector<std::shared_ptr<api::PodGroup>> groups;
  bool want;
};

TEST_F(CoschedulingTest, LessOrdersByPriorityThenGroupCreationThenName) {
  const int64_t now = 1'000 * kSecond;
  const auto pg1 = Group("ns1", "pg1", 1, now + 1 * kSecond), pg2 = Group("ns2", "pg2", 1, now + 2 * kSecond);
  const std::vector<LessCase> cases = {
      {"p1.priority less than p2.priority",
       Member("ns1", "p1", "").Priority(10).Obj(),
       Member("ns2", "p2", "").Priority(100).Obj(),
       0,
       0,
       {},
       false},
      {"p1.priority greater than p2.priority",
       Member("ns1", "p1", "").Priority(100).Obj(),
       Member("ns2", "p2", "").Priority(10).Obj(),
       0,
       0,
       {},
       true},
      {"equal priority. p1 is added to schedulingQ earlier than p2",
       Member("ns1", "p1", "").Priority(100).Obj(),
       Member("ns2", "p2", "").Priority(100).Obj(),
       1,
       2,
       {},
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1",
       Member("ns1", "p1", "").Priority(100).Obj(),
       Member("ns2", "p2", "").Priority(100).Obj(),
       2,
       1,
       {},
       false},
      {"p1.priority less than p2.priority, p1 belongs to pg1",
       Member("ns1", "p1", "pg1").Priority(10).Obj(),
       Member("ns2", "p2", "").Priority(100).Obj(),
       0,
       0,
       {Group("ns1", "pg1", 1)},
       false},
      {"p1.priority greater than p2.priority, p1 belongs to pg1",
       Member("ns1", "p1", "pg1").Priority(100).Obj(),
       Member("ns2", "p2", "").Priority(10).Obj(),
       0,
       0,
       {Group("ns1", "pg1", 1)},
       true},
      {"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
       Member("ns1", "p1", "pg1").Priority(100).Obj(),
       Member("ns2", "p2", "").Priority(100).Obj(),
       1,
       2,
       {Group("ns1", "pg1", 1, now + 1 * kSecond)},
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
       Member("ns1", "p1", "pg1").Priority(100).Obj(),
       Member("ns2", "p2", "").Priority(100).Obj(),
       2,
       1,
       {Group("ns1", "pg1", 1, now + 2 * kSecond)},
       false},
      {"p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
       Member("ns1", "p1", "pg1").Priority(10).Obj(),
       Member("ns2", "p2", "pg2").Priority(100).Obj(),
       0,
       0,
       {pg1, pg2},
       false},
      {"p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
       Member("ns1", "p1", "pg1").Priority(100).Obj(),
       Member("ns2", "p2", "pg1").Priority(10).Obj(),
       0,
       0,
       {pg1, pg2},
       true},
      {"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
       Member("ns1", "p1", "pg1").Priority(100).Obj(),
       Member("ns2", "p2", "pg2").Priority(100).Obj(),
       1,
       2,
       {pg1, pg2},
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
       Member("ns", "p1", "pg2").Priority(10).Obj(),
       Member("ns", "p2", "pg1").Priority(100).Obj(),
       1,
       2,
       {Group("ns", "pg1", 1, now + 1 * kSecond), Group("ns", "pg2", 1, now + 2 * kSecond)},
       false},
      {"equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
       Member("ns1", "p1", "pg2").Priority(100).Obj(),
       Member("ns2", "p2", "pg2").Priority(100).Obj(),
       1,
       1,
       {pg1, pg2},
       true},
      {"equal priority and creation time, and p2 belong to pg2",
       Member("ns1", "p1", "").Priority(100).Obj(),
       Member("ns2", "p2", "pg2").Priority(100).Obj(),
       1,
       1,
       {pg2},
       true},
  };
  for (const LessCase& c : cases) {
    cache::PodGroupIndex index(api::PodGroupApi::kCoscheduling);
    for (const auto& g : c.groups) index.SetGroup(g);
    handle_.set_pod_groups(&index, api::PodGroupApi::kCoscheduling);
    Coscheduling plugin(handle_, {});
    framework::QueuedPodInfo a, b;
    a.pod_info = framework::PodInfo::Create(c.p1);
    b.pod_info = framework::PodInfo::Create(c.p2);
    a.initial_attempt_timestamp_ns = now + c.p1_attempt * kSecond;
    b.initial_attempt_timestamp_ns = now + c.p2_attempt * kSecond;
    EXPECT_EQ(plugin.Less(a, b), c.want) << c.name;
  }
  handle_.set_pod_groups(&index_, api::PodGroupApi::kCoscheduling);
}

// ---------------------------------------------------------------------------------------------
// core_test.go TestPreFilter: nodes node-a and node-b with 4 cpu each.

struct PreFilterCase {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::vector<std::shared_ptr<api::Pod>> pending;
  std::vector<std::shared_ptr<api::PodGroup>> groups;
  std::string want;  // "" to pass; else the message's start
};

class CoschedulingPreFilterTest : public CoschedulingTest {
 protected:
  CoschedulingPreFilterTest() : CoschedulingTest({Node("node-a", "4"), Node("node-b", "4")}) {}
};

TEST_F(CoschedulingPreFilterTest, UpstreamCases) {
  auto with_min_resources = [](std::string cpu) {
    auto g = Group("ns", "pg1", 2);
    g->min_resources["cpu"] = *api::Quantity::Parse(cpu);
    return g;
  };
  const std::vector<PreFilterCase> cases = {
      {"pod does not belong to any pg",
       Member("ns", "p", "").Obj(),
       {Member("ns", "p1", "pg1").Obj(), Member("ns", "p2", "pg2").Obj()},
       {Group("ns", "pg1", 1), Group("ns", "pg2", 1)},
       ""},
      {"pod belongs to a non-existent pg", Member("ns", "p", "pg-non-existent").Obj(), {}, {Group("ns", "pg1", 1)}, ""},
      {"pod count less than minMember",
       Member("ns", "p", "pg1").Obj(),
       {Member("ns", "pg2-1", "pg2").Obj()},
       {Group("ns", "pg1", 2), Group("ns", "pg2", 2)},
       "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2"},
      {"pod count equal minMember",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").Obj()},
       {Group("ns", "pg1", 2), Group("ns", "pg2", 2)},
       ""},
      {"pod count more than minMember",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").Obj(), Member("ns", "p1c", "pg1").Obj()},
       {Group("ns", "pg1", 2), Group("ns", "pg2", 2)},
       ""},
      {"gated pods but still meeting quorum",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").Obj(), Member("ns", "p1c", "pg1").SchedulingGates({"example-gate"}).Obj()},
       {Group("ns", "pg1", 2)},
       ""},
      {"gated pods push group below quorum",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").SchedulingGates({"example-gate"}).Obj(), Member("ns", "p1c", "pg1").Obj()},
       {Group("ns", "pg1", 3)},
       "pre-filter pod p1a cannot find enough sibling pods that are not scheduling-gated, current pods number: 2, "
       "minMember of group: 3"},
      {"all sibling pods are gated",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").SchedulingGates({"example-gate"}).Obj(),
        Member("ns", "p1c", "pg1").SchedulingGates({"example-gate"}).Obj()},
       {Group("ns", "pg1", 2)},
       "pre-filter pod p1a cannot find enough sibling pods that are not scheduling-gated, current pods number: 1"},
      {"cluster's resource satisfies minResource",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").Obj(), Member("ns", "p1c", "pg1").Obj()},
       {with_min_resources("6")},
       ""},
      {"cluster's resource cannot satisfy minResource",
       Member("ns", "p1a", "pg1").Obj(),
       {Member("ns", "p1b", "pg1").Obj(), Member("ns", "p1c", "pg1").Obj()},
       {with_min_resources("10")},
       "resource gap: map[cpu:2]"},
  };
  for (const PreFilterCase& c : cases) {
    cache::PodGroupIndex index(api::PodGroupApi::kCoscheduling);
    for (const auto& g : c.groups) index.SetGroup(g);
    index.SetPod(c.pod);
    for (const auto& p : c.pending) index.SetPod(p);
    handle_.set_pod_groups(&index, api::PodGroupApi::kCoscheduling);
    Coscheduling plugin(handle_, {});
    const std::string_view name = api::PodGroupOf(*c.pod, api::PodGroupApi::kCoscheduling);
    const auto group = name.empty() ? nullptr : index.Group("ns", name);
    const std::string got = group == nullptr ? "" : plugin.Precheck(*c.pod, *group);
    if (c.want.empty()) {
      EXPECT_EQ(got, "") << c.name;
    } else {
      EXPECT_THAT(got, ::testing::StartsWith(c.want)) << c.name;
    }
  }
  handle_.set_pod_groups(&index_, api::PodGroupApi::kCoscheduling);
}

// core_test.go TestCheckClusterResource: node-a and node-b with 3 cpu each; the group needs 4.
TEST(CoschedulingResourceGapTest, TheGroupsOwnPodsCountAsFree) {
  struct Case {
    std::string name;
    std::vector<std::shared_ptr<api::Pod>> existing;
    bool enough;
  };
  const std::vector<Case> cases = {
      {"Cluster resource enough", {Member("ns", "p1", "").Node("node-a").Req({{"cpu", "2"}}).Obj()}, true},
      {"Cluster resource not enough",
       {Member("ns", "p1", "").Node("node-a").Req({{"cpu", "2"}}).Obj(),
        Member("ns", "p2", "").Node("node-b").Req({{"cpu", "1"}}).Obj()},
       false},
      {"Cluster resource enough as p1's resource needs to be excluded from minResources",
       {Member("ns", "p1", "pg1").Node("node-a").Req({{"cpu", "2"}}).Obj(),
        Member("ns", "p2", "").Node("node-b").Req({{"cpu", "1"}}).Obj()},
       true},
  };
  for (const Case& c : cases) {
    testing::FakeHandle handle({Node("node-a", "3"), Node("node-b", "3")}, c.existing);
    cache::PodGroupIndex index(api::PodGroupApi::kCoscheduling);
    // minMember 0: only minResources is checked (upstream's test leaves the pods out).
    auto group = Group("ns", "pg1", 0);
    group->min_resources["cpu"] = *api::Quantity::Parse("4");
    index.SetGroup(group);
    handle.set_pod_groups(&index, api::PodGroupApi::kCoscheduling);
    Coscheduling plugin(handle, {});
    const std::string got = plugin.Precheck(*Member("ns", "p", "pg1").Obj(), *group);
    if (c.enough) {
      EXPECT_EQ(got, "") << c.name;
    } else {
      EXPECT_EQ(got, "resource gap: map[cpu:1]") << c.name;
    }
  }
}

TEST_F(CoschedulingTest, APassedResourceCheckIsNotRepeatedWithinTheWaitTime) {
  auto group = Group("ns", "pg1", 1);
  group->min_resources["cpu"] = *api::Quantity::Parse("3");
  index_.SetGroup(group);
  auto p = Member("ns", "p", "pg1").Obj();
  index_.SetPod(p);
  EXPECT_EQ(plugin_->Precheck(*p, *group), "");
  auto bigger = std::make_shared<api::PodGroup>(*group);
  bigger->min_resources["cpu"] = *api::Quantity::Parse("5");
  EXPECT_EQ(plugin_->Precheck(*p, *bigger), "");  // cached for permitWaitingTimeSeconds (60)
  handle_.virtual_clock().Advance(61 * kSecond);
  EXPECT_EQ(plugin_->Precheck(*p, *bigger), "resource gap: map[cpu:1]");
}

// ---------------------------------------------------------------------------------------------
// TestPermit (core and plugin): one node with 4 cpu; pg1 minMember 1, pg2 minMember 2.

TEST_F(CoschedulingTest, PermitPassesPodsOfNoGroup) {
  index_.SetGroup(Group("ns", "pg1", 1));
  framework::CycleState state;
  auto [status, timeout] = plugin_->Permit(state, *framework::PodInfo::Create(Member("ns", "p", "").Obj()), "node");
  EXPECT_TRUE(status.IsSuccess());
  EXPECT_EQ(timeout.count(), 0);
}

TEST_F(CoschedulingTest, PermitRefusesAPodOfAGroupThatDoesNotExist) {
  index_.SetGroup(Group("ns", "pg1", 2));
  framework::CycleState state;
  auto pod = framework::PodInfo::Create(Member("ns", "p", "pg-non-existent").Obj());
  auto [status, timeout] = plugin_->Permit(state, *pod, "node");
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "PodGroup not found");
}

TEST_F(CoschedulingTest, PermitWaitsWithoutQuorumForTheGroupsTimeout) {
  index_.SetGroup(Group("ns", "pg1", 1));
  auto pg2 = Group("ns", "pg2", 2);
  index_.SetGroup(pg2);
  auto p = Member("ns", "p", "pg2").Obj();
  auto sibling = Member("ns", "q", "pg2").Obj();
  index_.SetPod(p);
  index_.SetPod(sibling);
  framework::CycleState state;
  auto info = framework::PodInfo::Create(p);
  ASSERT_TRUE(plugin_->Reserve(state, *info, "node").IsSuccess());
  auto [status, timeout] = plugin_->Permit(state, *info, "node");
  EXPECT_EQ(status.code(), Code::kWait);
  EXPECT_EQ(timeout, std::chrono::seconds(60));  // permitWaitingTimeSeconds
  // The sibling is wanted now (upstream's ActivateSiblings).
  ASSERT_FALSE(handle_.activated().empty());
  EXPECT_EQ(handle_.activated().back()->metadata.name, "q");
  // scheduleTimeoutSeconds wins over the plugin's wait.
  auto timed = std::make_shared<api::PodGroup>(*pg2);
  timed->schedule_timeout_seconds = 10;
  EXPECT_EQ(plugin_->PermitTimeout(*timed), std::chrono::seconds(10));
}

TEST_F(CoschedulingTest, PermitWithQuorumAllowsEveryWaitingMember) {
  index_.SetGroup(Group("ns", "pg1", 2));
  auto p1a = Member("ns", "p1a", "pg1").Obj(), p1b = Member("ns", "p1b", "pg1").Obj();
  auto other = Member("ns", "x", "pg2").Obj();
  index_.SetGroup(Group("ns", "pg2", 2));
  for (const auto& p : {p1a, p1b, other}) index_.SetPod(p);
  auto waiting = Wait(p1a);
  auto waiting_other = Wait(other);
  framework::CycleState state;
  auto info = framework::PodInfo::Create(p1b);
  ASSERT_TRUE(plugin_->Reserve(state, *info, "node").IsSuccess());
  auto [status, timeout] = plugin_->Permit(state, *info, "node");
  EXPECT_TRUE(status.IsSuccess());
  EXPECT_TRUE(waiting->allowed());
  EXPECT_FALSE(waiting_other->allowed());
}

TEST_F(CoschedulingTest, PermitCountsBoundMembers) {
  // core_test: p1b already on the node makes quorum for p1a.
  index_.SetGroup(Group("ns", "pg1", 2));
  auto bound = Member("ns", "p1b", "pg1").Node("node").Obj();
  auto p1a = Member("ns", "p1a", "pg1").Obj();
  index_.SetPod(bound);
  index_.SetPod(p1a);
  framework::CycleState state;
  auto info = framework::PodInfo::Create(p1a);
  ASSERT_TRUE(plugin_->Reserve(state, *info, "node").IsSuccess());
  EXPECT_TRUE(plugin_->Permit(state, *info, "node").first.IsSuccess());
}

TEST_F(CoschedulingTest, MinMemberZeroPassesAtOnce) {
  auto g = Group("ns", "pg0", 0);
  index_.SetGroup(g);
  auto p = Member("ns", "p", "pg0").Obj();
  index_.SetPod(p);
  EXPECT_EQ(plugin_->Precheck(*p, *g), "");
  framework::CycleState state;
  auto info = framework::PodInfo::Create(p);
  ASSERT_TRUE(plugin_->Reserve(state, *info, "node").IsSuccess());
  EXPECT_TRUE(plugin_->Permit(state, *info, "node").first.IsSuccess());
}

// ---------------------------------------------------------------------------------------------
// TestPostFilter: one node with 4 cpu.

TEST_F(CoschedulingTest, PostFilterWithoutAGroup) {
  index_.SetGroup(Group("ns", "pg1", 2));
  framework::CycleState state;
  auto [result, status] =
      plugin_->PostFilter(state, *framework::PodInfo::Create(Member("ns", "p", "").Obj()), framework::NodeToStatus());
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "can not find pod group");
}

TEST_F(CoschedulingTest, PostFilterLeavesAGroupWithEnoughPodsAssigned) {
  index_.SetGroup(Group("ns", "pg1", 1));
  index_.SetPod(Member("ns", "p1", "pg1").Node("node").Obj());
  auto p = Member("ns", "p", "pg1").Obj();
  index_.SetPod(p);
  framework::CycleState state;
  auto [result, status] = plugin_->PostFilter(state, *framework::PodInfo::Create(p), framework::NodeToStatus());
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "");
}

TEST_F(CoschedulingTest, PostFilterRejectsTheWholeGroup) {
  index_.SetGroup(Group("ns", "pg1", 2));
  index_.SetPod(Member("ns", "p1", "pg1").Node("node").Obj());
  auto p = Member("ns", "p", "pg1").Obj();
  index_.SetPod(p);
  framework::CycleState state;
  auto [result, status] = plugin_->PostFilter(state, *framework::PodInfo::Create(p), framework::NodeToStatus());
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter");
}

TEST_F(CoschedulingTest, PostFilterSparesAGroupWithinTheRejectPercentage) {
  // minMember 10, 9 placed: 10% unplaced is within the default 10%.
  index_.SetGroup(Group("ns", "pg1", 10));
  for (int i = 0; i < 9; ++i) index_.SetPod(Member("ns", "b" + std::to_string(i), "pg1").Node("node").Obj());
  auto p = Member("ns", "p", "pg1").Obj();
  index_.SetPod(p);
  framework::CycleState state;
  EXPECT_EQ(plugin_->PostFilter(state, *framework::PodInfo::Create(p), framework::NodeToStatus()).second.Message(), "");
  CoschedulingArgs strict;
  strict.pod_group_reject_percentage = 0;
  SetUpPlugin(strict);
  EXPECT_THAT(plugin_->PostFilter(state, *framework::PodInfo::Create(p), framework::NodeToStatus()).second.Message(),
              ::testing::HasSubstr("gets rejected"));
}

// TestPodGroupBackoffTime: pod1 waits, pod2 fails PostFilter, pod3 is refused at PreFilter.
TEST_F(CoschedulingTest, AGroupThatFailedIsBackedOff) {
  CoschedulingArgs args;
  args.pod_group_backoff_seconds = 1;
  SetUpPlugin(args);
  auto pg1 = Group("ns", "pg1", 3);
  index_.SetGroup(pg1);
  auto pod1 = Member("ns", "pod1", "pg1").Obj(), pod2 = Member("ns", "pod2", "pg1").Obj(),
       pod3 = Member("ns", "pod3", "pg1").Obj();
  for (const auto& p : {pod1, pod2, pod3}) index_.SetPod(p);
  auto waiting = Wait(pod1);
  std::vector<std::string> activated;
  for (const auto& p : handle_.activated()) activated.push_back(p->metadata.namespace_ + "/" + p->metadata.name);
  EXPECT_THAT(activated, ::testing::ElementsAre("ns/pod2", "ns/pod3"));

  framework::CycleState state;
  auto [result, status] = plugin_->PostFilter(state, *framework::PodInfo::Create(pod2), framework::NodeToStatus());
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_TRUE(waiting->rejected());
  EXPECT_EQ(waiting->reject_message(), "optimistic rejection in PostFilter");

  EXPECT_EQ(plugin_->Precheck(*pod3, *pg1), "podGroup ns/pg1 failed recently");
  handle_.virtual_clock().Advance(2 * kSecond);
  EXPECT_EQ(plugin_->Precheck(*pod3, *pg1), "");
}

TEST_F(CoschedulingTest, UnreserveRejectsTheOtherWaitingMembers) {
  index_.SetGroup(Group("ns", "pg1", 3));
  auto a = Member("ns", "a", "pg1").Obj(), b = Member("ns", "b", "pg1").Obj(), c = Member("ns", "c", "pg1").Obj();
  for (const auto& p : {a, b, c}) index_.SetPod(p);
  auto waiting = Wait(a);
  framework::CycleState state;
  auto info = framework::PodInfo::Create(b);
  ASSERT_TRUE(plugin_->Reserve(state, *info, "node").IsSuccess());
  EXPECT_EQ(index_.Members("ns", "pg1").assumed, 2u);
  plugin_->Unreserve(state, *info, "node");
  EXPECT_EQ(index_.Members("ns", "pg1").assumed, 1u);
  EXPECT_TRUE(waiting->rejected());
  EXPECT_EQ(waiting->reject_message(), "rejection in Unreserve");
}

TEST_F(CoschedulingTest, PodGroupChangesRequeueItsMembers) {
  auto events = plugin_->EventsToRegister();
  auto pod = Member("ns", "p", "pg1").Obj();
  auto mine = Group("ns", "pg1", 2), other = Group("ns", "pg2", 2);
  bool found = false;
  for (const auto& e : events) {
    if (e.event.resource != framework::EventResource::kPodGroup) continue;
    found = true;
    EXPECT_TRUE(e.event.action & framework::action::kUpdate);
    EXPECT_EQ(e.hint(*pod, {.new_pod_group = mine.get()}), framework::QueueingHint::kQueue);
    EXPECT_EQ(e.hint(*pod, {.new_pod_group = other.get()}), framework::QueueingHint::kSkip);
    // A scheduling.k8s.io PodGroup of the same name is not the pod's.
    auto upstream = std::make_shared<api::PodGroup>(*mine);
    upstream->api = api::PodGroupApi::kScheduling;
    EXPECT_EQ(e.hint(*pod, {.new_pod_group = upstream.get()}), framework::QueueingHint::kSkip);
  }
  EXPECT_TRUE(found);
}

// ---------------------------------------------------------------------------------------------
// CoschedulingArgs

TEST(CoschedulingArgsTest, DefaultsAndValidation) {
  auto parse = [](std::string json) { return DecodeArgs(testing::ArgsJson(std::move(json)).View(), "args"); };
  auto defaults = parse("{}");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->permit_waiting_time_seconds, 60);
  EXPECT_EQ(defaults->pod_group_backoff_seconds, 0);
  EXPECT_EQ(defaults->pod_group_reject_percentage, 10);
  EXPECT_EQ(EncodeArgs(*defaults),
            R"({"permitWaitingTimeSeconds":60,"podGroupBackoffSeconds":0,"podGroupRejectPercentage":10})");
  auto set = parse(R"({"permitWaitingTimeSeconds":10,"podGroupBackoffSeconds":5,"podGroupRejectPercentage":0})");
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->permit_waiting_time_seconds, 10);
  auto negative = parse(R"({"permitWaitingTimeSeconds":-1})");
  ASSERT_FALSE(negative.has_value());
  EXPECT_THAT(negative.error().errors, ::testing::ElementsAre(::testing::HasSubstr("must be greater than 0")));
  auto percent = parse(R"({"podGroupRejectPercentage":101})");
  ASSERT_FALSE(percent.has_value());
  EXPECT_THAT(percent.error().errors, ::testing::ElementsAre(::testing::HasSubstr("must be between 0 and 100")));
  auto unknown = parse(R"({"deniedPGExpirationTimeSeconds":3})");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_TRUE(unknown.error().decoding);
}

}  // namespace
}  // namespace kubesched::plugins::coscheduling
