#include "plugins/gang_scheduling/gang_scheduling.h"

#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/pod_group_index.h"
#include "framework/cycle_state.h"
#include "framework/pod_info.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

// Upstream's gangscheduling_test.go (the 1.36 API: PodGroup objects, spec.schedulingGroup):
// TestGangSchedulingFlow's cases and the queueing hints' tables.
namespace kubesched::plugins::gang_scheduling {
namespace {

using framework::Code;
using framework::QueueingHint;
using testing::MakePod;

std::shared_ptr<api::PodGroup> Group(std::string name, api::PodGroupPolicy policy, int32_t min_count = 1) {
  auto g = std::make_shared<api::PodGroup>();
  g->metadata.name = std::move(name);
  g->metadata.namespace_ = "ns1";
  g->policy = policy;
  g->min_count = min_count;
  return g;
}

std::shared_ptr<api::Pod> Member(std::string name, std::string group) {
  return MakePod().Name(name).Namespace("ns1").UID("uid-" + name).PodGroup(std::move(group)).Obj();
}

class GangSchedulingFlowTest : public ::testing::Test {
 protected:
  GangSchedulingFlowTest() { handle_.set_pod_groups(&index_); }

  void AddGroups() {
    index_.SetGroup(Group("pg1", api::PodGroupPolicy::kGang, 3));
    index_.SetGroup(Group("pg2", api::PodGroupPolicy::kGang, 4));
    index_.SetGroup(Group("pg3", api::PodGroupPolicy::kBasic));
  }
  // The pod passes Reserve and asks Permit, as the scheduling cycle would.
  std::pair<framework::Status, std::chrono::nanoseconds> ReserveAndPermit(const std::shared_ptr<api::Pod>& pod) {
    framework::CycleState state;
    auto info = framework::PodInfo::Create(pod);
    EXPECT_TRUE(plugin_.Reserve(state, *info, "n1").IsSuccess());
    return plugin_.Permit(state, *info, "n1");
  }
  // The pod waits at Permit (registered with the handle, as the framework would).
  std::shared_ptr<testing::FakeWaitingPod> Wait(const std::shared_ptr<api::Pod>& pod) {
    auto [status, timeout] = ReserveAndPermit(pod);
    EXPECT_EQ(status.code(), Code::kWait) << pod->metadata.name;
    return handle_.AddWaitingPod(pod, {std::string(GangScheduling::kName)});
  }

  testing::FakeHandle handle_;
  cache::PodGroupIndex index_;
  GangScheduling plugin_{handle_};
  std::shared_ptr<api::Pod> p1_ = Member("p1", "pg1"), p2_ = Member("p2", "pg1"), p3_ = Member("p3", "pg1"),
                            p4_ = Member("p4", "pg2"), p5_ = Member("p5", "pg2"), basic_ = Member("basic-pod", "pg3");
};

TEST_F(GangSchedulingFlowTest, NonGangPodSucceedsImmediately) {
  AddGroups();
  auto pod = MakePod().Name("non-gang").Namespace("ns1").UID("uid-non-gang").Obj();
  EXPECT_TRUE(plugin_.PreEnqueue(*pod).IsSuccess());
  EXPECT_TRUE(ReserveAndPermit(pod).first.IsSuccess());
}

TEST_F(GangSchedulingFlowTest, BasicPolicyPodSucceedsImmediately) {
  AddGroups();
  index_.SetPod(basic_);
  EXPECT_TRUE(plugin_.PreEnqueue(*basic_).IsSuccess());
  EXPECT_TRUE(ReserveAndPermit(basic_).first.IsSuccess());
}

TEST_F(GangSchedulingFlowTest, GangPodFailsPreEnqueueWhenPodGroupIsNotYetCreated) {
  for (const auto& p : {p1_, p2_, p3_, p4_, p5_}) index_.SetPod(p);
  const framework::Status s = plugin_.PreEnqueue(*p1_);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "waiting for pods's pod group \"pg1\" to appear in scheduling queue");
}

TEST_F(GangSchedulingFlowTest, GangPodFailsPreEnqueueWhenQuorumIsNotMet) {
  AddGroups();
  for (const auto& p : {p1_, p2_, p4_, p5_}) index_.SetPod(p);  // pg1 has 2 of 3
  const framework::Status s = plugin_.PreEnqueue(*p1_);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "waiting for minCount pods from a gang to appear in scheduling queue");
}

TEST_F(GangSchedulingFlowTest, GangPodPassesPreEnqueueButWaitsAtPermit) {
  AddGroups();
  for (const auto& p : {p1_, p2_, p3_, p4_, p5_}) index_.SetPod(p);
  EXPECT_TRUE(plugin_.PreEnqueue(*p1_).IsSuccess());
  for (const auto& p : {p2_, p4_, p5_}) Wait(p);
  const size_t before = handle_.activated().size();
  auto [status, timeout] = ReserveAndPermit(p1_);
  EXPECT_EQ(status.code(), Code::kWait);
  EXPECT_EQ(status.Message(), "waiting for minCount pods from a gang to be waiting on permit");
  EXPECT_EQ(timeout, kPermitTimeout);
  // The one member neither reserved nor bound is activated.
  std::vector<std::string> activated;
  const auto all = handle_.activated();
  for (size_t i = before; i < all.size(); ++i) activated.push_back(all[i]->metadata.name);
  EXPECT_THAT(activated, ::testing::ElementsAre("p3"));
}

TEST_F(GangSchedulingFlowTest, FinalGangPodArrivesAtPermitAndAllowsAllWaitingPodsOfItsGang) {
  AddGroups();
  for (const auto& p : {p1_, p2_, p3_, p4_, p5_}) index_.SetPod(p);
  auto w2 = Wait(p2_), w3 = Wait(p3_), w4 = Wait(p4_), w5 = Wait(p5_);
  EXPECT_TRUE(ReserveAndPermit(p1_).first.IsSuccess());
  EXPECT_TRUE(w2->allowed());
  EXPECT_TRUE(w3->allowed());
  EXPECT_FALSE(w4->allowed()) << "another gang";
  EXPECT_FALSE(w5->allowed());
}

TEST_F(GangSchedulingFlowTest, BoundMembersCountTowardTheGangAndUnreserveTakesAMemberBack) {
  AddGroups();
  auto bound = MakePod().Name("p2").Namespace("ns1").UID("uid-p2").PodGroup("pg1").Node("n2").Obj();
  for (const auto& p : {p1_, bound, p3_}) index_.SetPod(p);
  Wait(p3_);
  framework::CycleState state;
  auto info = framework::PodInfo::Create(p3_);
  plugin_.Unreserve(state, *info, "n1");  // p3's wait timed out: it is unscheduled again
  EXPECT_EQ(index_.Members("ns1", "pg1").Scheduled(), 1u);
  EXPECT_EQ(ReserveAndPermit(p1_).first.code(), Code::kWait) << "p1 and the bound p2: 2 of 3";
  EXPECT_TRUE(ReserveAndPermit(p3_).first.IsSuccess()) << "3 of 3";
}

TEST(GangSchedulingHints, PodAdded) {
  auto pod = Member("p", "pg1");
  const struct {
    const char* name;
    std::shared_ptr<api::Pod> added;
    QueueingHint want;
  } cases[] = {
      {"add a newPod which matches the pod's scheduling group", Member("q", "pg1"), QueueingHint::kQueue},
      {"add a newPod which doesn't match the pod's namespace",
       MakePod().Name("q").Namespace("foo").PodGroup("pg1").Obj(), QueueingHint::kSkip},
      {"add a newPod which doesn't match the pod's pod group name", Member("q", "pg2"), QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsSchedulableAfterPodAdded(*pod, {.new_pod = c.added.get()}), c.want) << c.name;
  }
}

TEST(GangSchedulingHints, PodGroupAdded) {
  auto pod = Member("p", "pg1");
  auto other_ns = Group("pg1", api::PodGroupPolicy::kGang, 2);
  other_ns->metadata.namespace_ = "ns2";
  const struct {
    const char* name;
    std::shared_ptr<api::PodGroup> added;
    QueueingHint want;
  } cases[] = {
      {"add a pod group which matches the pod's pod group name", Group("pg1", api::PodGroupPolicy::kGang, 2),
       QueueingHint::kQueue},
      {"add a pod group which doesn't match the pod's scheduling group name",
       Group("pg2", api::PodGroupPolicy::kGang, 2), QueueingHint::kSkip},
      {"add a pod group which doesn't match the pod's scheduling group namespace", other_ns, QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsSchedulableAfterPodGroupAdded(*pod, {.new_pod_group = c.added.get()}), c.want) << c.name;
  }
}

}  // namespace
}  // namespace kubesched::plugins::gang_scheduling
