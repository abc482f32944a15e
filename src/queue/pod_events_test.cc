// Mirrors upstream's TestPodSchedulingPropertiesChange and TestNodeSchedulingPropertiesChange
// (pkg/scheduler/framework/events_test.go).

#include "queue/pod_events.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::queue {
namespace {

using framework::ClusterEvent;
using framework::EventResource;
namespace action = framework::action;
using kubesched::testing::MakeNode;
using kubesched::testing::MakePod;

// (resource, action) pairs, labels ignored.
std::vector<std::pair<EventResource, framework::ActionType>> Kinds(const std::vector<ClusterEvent>& events) {
  std::vector<std::pair<EventResource, framework::ActionType>> out;
  for (const auto& e : events) out.emplace_back(e.resource, e.action);
  return out;
}

TEST(PodEventsTest, PodSchedulingPropertiesChange) {
  auto base = MakePod().Name("p").Req({{"cpu", "2"}, {"memory", "2Gi"}}).Obj();
  auto with = [&](const std::function<void(api::Pod&)>& fn) {
    api::Pod p = *base;
    fn(p);
    return p;
  };
  const auto U = EventResource::kUnscheduledPod;
  struct Case {
    std::string name;
    api::Pod old_pod, new_pod;
    std::vector<std::pair<EventResource, framework::ActionType>> want;
  };
  std::vector<Case> cases = {
      {"only label is updated",
       *base,
       with([](api::Pod& p) { p.metadata.labels.Set("foo", "bar"); }),
       {{U, action::kUpdatePodLabel}}},
      {"pod's resource request is scaled down",
       *base,
       with([](api::Pod& p) {
         p.spec.containers[0].resources.requests = kubesched::testing::Resources({{"cpu", "1"}, {"memory", "2Gi"}});
       }),
       {{U, action::kUpdatePodScaleDown}}},
      {"a resource request is removed",
       *base,
       with([](api::Pod& p) { p.spec.containers[0].resources.requests.erase("memory"); }),
       {{U, action::kUpdatePodScaleDown}}},
      {"pod's resource request is scaled up",
       *base,
       with([](api::Pod& p) {
         p.spec.containers[0].resources.requests = kubesched::testing::Resources({{"cpu", "3"}, {"memory", "2Gi"}});
       }),
       {{U, action::kUpdatePodOther}}},
      {"both pod's resource request and label are updated",
       *base,
       with([](api::Pod& p) {
         p.metadata.labels.Set("foo", "bar");
         p.spec.containers[0].resources.requests = kubesched::testing::Resources({{"cpu", "1"}});
       }),
       {{U, action::kUpdatePodLabel}, {U, action::kUpdatePodScaleDown}}},
      {"untracked properties of pod are updated",
       *base,
       with([](api::Pod& p) { p.metadata.annotations.Set("foo", "bar"); }),
       {{U, action::kUpdatePodOther}}},
      {"scheduling gates are eliminated",
       with([](api::Pod& p) { p.spec.scheduling_gates = {"foo"}; }),
       *base,
       {{U, action::kUpdatePodSchedulingGatesEliminated}}},
      {"scheduling gates are removed but some remain",
       with([](api::Pod& p) {
         p.spec.scheduling_gates = {"foo", "bar"};
       }),
       with([](api::Pod& p) { p.spec.scheduling_gates = {"foo"}; }),
       {{U, action::kUpdatePodOther}}},
      {"a toleration is added",
       *base,
       with([](api::Pod& p) {
         api::Toleration t;
         t.key = "foo";
         p.spec.tolerations.push_back(t);
       }),
       {{U, action::kUpdatePodTolerations}}},
      {"an assigned pod's label is updated",
       with([](api::Pod& p) { p.spec.node_name = "n1"; }),
       with([](api::Pod& p) {
         p.spec.node_name = "n1";
         p.metadata.labels.Set("foo", "bar");
       }),
       {{EventResource::kAssignedPod, action::kUpdatePodLabel}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto events = PodSchedulingPropertiesChange(c.new_pod, c.old_pod);
    EXPECT_EQ(Kinds(events), c.want);
    for (const auto& e : events) EXPECT_FALSE(e.label.empty());
  }
}

TEST(PodEventsTest, NodeSchedulingPropertiesChange) {
  auto base = MakeNode().Name("n").Capacity({{"cpu", "4"}}).Obj();
  auto with = [&](const std::function<void(api::Node&)>& fn) {
    api::Node n = *base;
    fn(n);
    return n;
  };
  const auto N = EventResource::kNode;
  struct Case {
    std::string name;
    api::Node old_node, new_node;
    std::vector<std::pair<EventResource, framework::ActionType>> want;
  };
  std::vector<Case> cases = {
      {"no specific changed applied", *base, *base, {}},
      {"only node spec unavailable changed",
       with([](api::Node& n) { n.spec.unschedulable = true; }),
       *base,
       {{N, action::kUpdateNodeTaint}}},
      {"node became unschedulable: nothing to wake",
       *base,
       with([](api::Node& n) { n.spec.unschedulable = true; }),
       {}},
      {"only node allocatable changed",
       *base,
       with([](api::Node& n) {
         n.status.allocatable = kubesched::testing::Resources({{"cpu", "8"}, {"pods", "110"}});
       }),
       {{N, action::kUpdateNodeAllocatable}}},
      {"only node label changed",
       *base,
       with([](api::Node& n) { n.metadata.labels.Set("foo", "bar"); }),
       {{N, action::kUpdateNodeLabel}}},
      {"only node taint changed",
       *base,
       with([](api::Node& n) {
         n.spec.taints.push_back({"k", "v", api::TaintEffect::kNoSchedule});
       }),
       {{N, action::kUpdateNodeTaint}}},
      {"only node annotation changed",
       *base,
       with([](api::Node& n) { n.metadata.annotations.Set("foo", "bar"); }),
       {{N, action::kUpdateNodeAnnotation}}},
      {"only node condition changed",
       with([](api::Node& n) {
         n.status.conditions = {{"Ready", "False"}};
       }),
       with([](api::Node& n) {
         n.status.conditions = {{"Ready", "True"}};
       }),
       {{N, action::kUpdateNodeCondition}}},
      {"both label and allocatable changed",
       *base,
       with([](api::Node& n) {
         n.metadata.labels.Set("foo", "bar");
         n.status.allocatable = kubesched::testing::Resources({{"cpu", "8"}, {"pods", "110"}});
       }),
       {{N, action::kUpdateNodeAllocatable}, {N, action::kUpdateNodeLabel}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Kinds(NodeSchedulingPropertiesChange(c.new_node, c.old_node)), c.want);
  }
}

}  // namespace
}  // namespace kubesched::queue
