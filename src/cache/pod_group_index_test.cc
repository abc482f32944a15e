#include "cache/pod_group_index.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::cache {
namespace {

using testing::MakePod;

std::shared_ptr<api::PodGroup> Group(api::PodGroupApi api, std::string name, int32_t min_count) {
  auto g = std::make_shared<api::PodGroup>();
  g->api = api;
  g->policy = api::PodGroupPolicy::kGang;
  g->metadata.namespace_ = "ns";
  g->metadata.name = std::move(name);
  g->min_count = min_count;
  return g;
}

TEST(PodGroupIndex, CountsMembersByState) {
  PodGroupIndex index;
  index.SetGroup(Group(api::PodGroupApi::kScheduling, "g", 3));
  auto a = MakePod().Name("a").Namespace("ns").UID("a").PodGroup("g").Obj();
  auto b = MakePod().Name("b").Namespace("ns").UID("b").PodGroup("g").Obj();
  auto c = MakePod().Name("c").Namespace("ns").UID("c").PodGroup("g").Node("n1").Obj();
  for (const auto& p : {a, b, c}) index.SetPod(p);
  index.Assume(*a);
  auto m = index.Members("ns", "g");
  EXPECT_EQ(m.all, 3u);
  EXPECT_EQ(m.assumed, 1u);
  EXPECT_EQ(m.assigned, 1u);
  ASSERT_EQ(index.UnscheduledMembers("ns", "g").size(), 1u);
  EXPECT_EQ(index.UnscheduledMembers("ns", "g")[0]->metadata.name, "b");
  index.Forget(*a);
  EXPECT_EQ(index.Members("ns", "g").assumed, 0u);
  index.DeletePod(*c);
  EXPECT_EQ(index.Members("ns", "g").all, 2u);
  EXPECT_EQ(index.Members("ns", "g").assigned, 0u);
}

// Each index keeps the groups and members of its API: a pod may name a scheduling.k8s.io group in
// its spec and carry a scheduler-plugins group label, each counted by its own index.
TEST(PodGroupIndex, OneIndexPerApi) {
  PodGroupIndex upstream(api::PodGroupApi::kScheduling), crd(api::PodGroupApi::kCoscheduling);
  for (PodGroupIndex* index : {&upstream, &crd}) {
    index->SetGroup(Group(api::PodGroupApi::kScheduling, "g", 2));
    index->SetGroup(Group(api::PodGroupApi::kCoscheduling, "g", 5));
  }
  EXPECT_EQ(upstream.Group("ns", "g")->min_count, 2);
  EXPECT_EQ(crd.Group("ns", "g")->min_count, 5);
  auto pod = MakePod().Name("p").Namespace("ns").UID("p").PodGroup("g").Obj();
  upstream.SetPod(pod);
  crd.SetPod(pod);
  EXPECT_EQ(upstream.Members("ns", "g").all, 1u);
  EXPECT_EQ(crd.Members("ns", "g").all, 0u);
  auto labelled =
      MakePod().Name("q").Namespace("ns").UID("q").Label(std::string(api::kLabelCoschedulingPodGroup), "g").Obj();
  upstream.SetPod(labelled);
  crd.SetPod(labelled);
  EXPECT_EQ(upstream.Members("ns", "g").all, 1u);
  EXPECT_EQ(crd.Members("ns", "g").all, 1u);
}

// A scheduler-plugins member's group is a label, which may change: the pod moves.
TEST(PodGroupIndex, APodWhoseGroupLabelChangesMoves) {
  PodGroupIndex index(api::PodGroupApi::kCoscheduling);
  const std::string label(api::kLabelCoschedulingPodGroup);
  auto in_a = MakePod().Name("p").Namespace("ns").UID("p").Label(label, "a").Obj();
  index.SetPod(in_a);
  index.Assume(*in_a);
  EXPECT_EQ(index.Members("ns", "a").all, 1u);
  auto in_b = MakePod().Name("p").Namespace("ns").UID("p").Label(label, "b").Obj();
  index.SetPod(in_b);
  EXPECT_EQ(index.Members("ns", "a").all, 0u);
  EXPECT_EQ(index.Members("ns", "a").assumed, 0u);
  EXPECT_EQ(index.Members("ns", "b").all, 1u);
  auto in_none = MakePod().Name("p").Namespace("ns").UID("p").Obj();
  index.SetPod(in_none);
  EXPECT_EQ(index.Members("ns", "b").all, 0u);
  index.DeletePod(*in_none);  // no longer a member of anything: nothing to do
  index.SetPod(in_b);
  index.DeletePod(*in_b);
  EXPECT_EQ(index.Members("ns", "b").all, 0u);
}

}  // namespace
}  // namespace kubesched::cache
