#include "plugins/taint_toleration/taint_toleration.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::taint_toleration {
namespace {

using api::TaintEffect;
using api::TolerationOperator;

std::shared_ptr<api::Node> NodeWithTaints(std::string name, std::vector<api::Taint> taints) {
  auto node = std::make_shared<api::Node>();
  node->metadata.name = std::move(name);
  node->spec.taints = std::move(taints);
  return node;
}

std::shared_ptr<api::Pod> PodWithTolerations(std::string name, std::vector<api::Toleration> tolerations) {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = name;
  pod->metadata.uid = "uid-" + name;
  pod->spec.tolerations = std::move(tolerations);
  return pod;
}

api::Toleration Tol(std::string key, TolerationOperator op, std::string value, std::optional<TaintEffect> effect) {
  return {std::move(key), op, std::move(value), effect, std::nullopt};
}

std::unique_ptr<framework::Plugin> MakePlugin(testing::FakeHandle& handle) {
  auto plugin = New({}, handle);
  EXPECT_TRUE(plugin.has_value());
  return std::move(*plugin);
}

// Mirrors upstream's TestTaintTolerationScore (cases without the alpha comparison operators).
TEST(TaintTolerationTest, Score) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Node>> nodes;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
       PodWithTolerations("pod1", {Tol("foo", TolerationOperator::kEqual, "bar", TaintEffect::kPreferNoSchedule)}),
       {NodeWithTaints("nodeA", {{"foo", "bar", TaintEffect::kPreferNoSchedule}}),
        NodeWithTaints("nodeB", {{"foo", "blah", TaintEffect::kPreferNoSchedule}})},
       {100, 0}},
      {"the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many "
       "tolerable taints a node has",
       PodWithTolerations("pod1",
                          {Tol("cpu-type", TolerationOperator::kEqual, "arm64", TaintEffect::kPreferNoSchedule),
                           Tol("disk-type", TolerationOperator::kEqual, "ssd", TaintEffect::kPreferNoSchedule)}),
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule},
                                 {"disk-type", "ssd", TaintEffect::kPreferNoSchedule}})},
       {100, 100, 100}},
      {"the more intolerable taints a node has, the lower score it gets.",
       PodWithTolerations("pod1", {Tol("foo", TolerationOperator::kEqual, "bar", TaintEffect::kPreferNoSchedule)}),
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule},
                                 {"disk-type", "ssd", TaintEffect::kPreferNoSchedule}})},
       {100, 50, 0}},
      {"only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
       "priority "
       "function",
       PodWithTolerations("pod1", {Tol("cpu-type", TolerationOperator::kEqual, "arm64", TaintEffect::kNoSchedule),
                                   Tol("disk-type", TolerationOperator::kEqual, "ssd", TaintEffect::kNoSchedule)}),
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", TaintEffect::kNoSchedule}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule},
                                 {"disk-type", "ssd", TaintEffect::kPreferNoSchedule}})},
       {100, 100, 0}},
      {"Default behaviour No taints and tolerations, lands on node with no taints",
       PodWithTolerations("pod1", {}),
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule}})},
       {100, 0}},
      {"a toleration without effect tolerates PreferNoSchedule taints",
       PodWithTolerations("pod1", {Tol("cpu-type", TolerationOperator::kExists, "", std::nullopt)}),
       {NodeWithTaints("nodeA", {{"cpu-type", "arm64", TaintEffect::kPreferNoSchedule}}),
        NodeWithTaints("nodeB", {{"other", "x", TaintEffect::kPreferNoSchedule}})},
       {100, 0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    testing::FakeHandle handle(c.nodes, {});
    auto plugin = MakePlugin(handle);
    auto* pre_score = dynamic_cast<framework::PreScorePlugin*>(plugin.get());
    auto* score = dynamic_cast<framework::ScorePlugin*>(plugin.get());
    ASSERT_NE(pre_score, nullptr);
    ASSERT_NE(score, nullptr);
    auto pod_info = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    auto nodes = handle.snapshot().List();
    ASSERT_TRUE(pre_score->PreScore(state, *pod_info, nodes).IsSuccess());
    framework::NodeScoreList scores;
    for (const auto* n : nodes) {
      auto [s, status] = score->Score(state, *pod_info, *n);
      ASSERT_TRUE(status.IsSuccess()) << status.Message();
      scores.push_back({n->name(), s});
    }
    ASSERT_NE(score->GetScoreExtensions(), nullptr);
    ASSERT_TRUE(score->GetScoreExtensions()->NormalizeScore(state, *pod_info, scores).IsSuccess());
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want);
  }
}

TEST(TaintTolerationTest, ScoreWithoutPreScoreIsAnError) {
  testing::FakeHandle handle;
  auto plugin = MakePlugin(handle);
  auto* score = dynamic_cast<framework::ScorePlugin*>(plugin.get());
  framework::CycleState state;
  auto node = testing::MakeNodeInfo(NodeWithTaints("n", {}));
  auto [s, status] = score->Score(state, *framework::PodInfo::Create(PodWithTolerations("p", {})), *node);
  EXPECT_TRUE(status.IsError());
  EXPECT_EQ(status.Message(), "failed to read \"PreScoreTaintToleration\" from cycleState: not found");
}

// Mirrors upstream's TestTaintTolerationFilter (cases without the alpha comparison operators).
TEST(TaintTolerationTest, Filter) {
  const framework::Status untolerated =
      framework::Status::UnschedulableAndUnresolvable("node(s) had untolerated taint(s)");
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Node> node;
    framework::Status want;
  };
  const std::vector<Case> cases = {
      {"A pod having no tolerations can't be scheduled onto a node with nonempty taints",
       PodWithTolerations("pod1", {}), NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule}}),
       untolerated},
      {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
       PodWithTolerations("pod1", {Tol("dedicated", TolerationOperator::kEqual, "user1", TaintEffect::kNoSchedule)}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule}}), framework::Status::Success()},
      {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
       PodWithTolerations("pod1", {Tol("dedicated", TolerationOperator::kEqual, "user2", TaintEffect::kNoSchedule)}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule}}), untolerated},
      {"A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the "
       "taints on the "
       "node",
       PodWithTolerations("pod1", {Tol("foo", TolerationOperator::kExists, "", TaintEffect::kNoSchedule)}),
       NodeWithTaints("nodeA", {{"foo", "bar", TaintEffect::kNoSchedule}}), framework::Status::Success()},
      {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
       "scheduled "
       "onto the node",
       PodWithTolerations("pod1", {Tol("dedicated", TolerationOperator::kEqual, "user2", TaintEffect::kNoSchedule),
                                   Tol("foo", TolerationOperator::kExists, "", TaintEffect::kNoSchedule)}),
       NodeWithTaints("nodeA",
                      {{"dedicated", "user2", TaintEffect::kNoSchedule}, {"foo", "bar", TaintEffect::kNoSchedule}}),
       framework::Status::Success()},
      {"A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
       "doesn't "
       "match, can't be scheduled onto the node",
       PodWithTolerations("pod1", {Tol("foo", TolerationOperator::kEqual, "bar", TaintEffect::kPreferNoSchedule)}),
       NodeWithTaints("nodeA", {{"foo", "bar", TaintEffect::kNoSchedule}}), untolerated},
      {"The pod has a toleration that keys and values match the taint on the node, the effect of toleration "
       "is empty, "
       "and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
       PodWithTolerations("pod1", {Tol("foo", TolerationOperator::kEqual, "bar", std::nullopt)}),
       NodeWithTaints("nodeA", {{"foo", "bar", TaintEffect::kNoSchedule}}), framework::Status::Success()},
      {"The pod has a toleration that key and value don't match the taint on the node, but the effect of "
       "taint on "
       "node is PreferNoSchedule. Pod can be scheduled onto the node",
       PodWithTolerations("pod1", {Tol("dedicated", TolerationOperator::kEqual, "user2", TaintEffect::kNoSchedule)}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kPreferNoSchedule}}), framework::Status::Success()},
      {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled "
       "onto the "
       "node",
       PodWithTolerations("pod1", {}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kPreferNoSchedule}}), framework::Status::Success()},
      {"A NoExecute taint must be tolerated too", PodWithTolerations("pod1", {}),
       NodeWithTaints("nodeA", {{"node.kubernetes.io/not-ready", "", TaintEffect::kNoExecute}}), untolerated},
  };
  testing::FakeHandle handle;
  auto plugin = MakePlugin(handle);
  auto* filter = dynamic_cast<framework::FilterPlugin*>(plugin.get());
  ASSERT_NE(filter, nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    EXPECT_EQ(filter->Filter(state, *framework::PodInfo::Create(c.pod), *testing::MakeNodeInfo(c.node)), c.want);
  }
}

TEST(TaintTolerationTest, EventsToRegister) {
  TaintToleration plugin;
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::action::kAdd | framework::action::kUpdateNodeTaint);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[1].event.action, framework::action::kUpdatePodTolerations);
  EXPECT_TRUE(events[1].hint);
}

// Mirrors upstream's TestIsSchedulableAfterNodeChange.
TEST(TaintTolerationTest, IsSchedulableAfterNodeChange) {
  auto pod =
      PodWithTolerations("pod1", {Tol("dedicated", TolerationOperator::kEqual, "user2", TaintEffect::kNoSchedule)});
  struct Case {
    std::string name;
    std::shared_ptr<api::Node> old_node;
    std::shared_ptr<api::Node> new_node;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"skip-queue-on-untoleratedtaint-node-added", nullptr,
       NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule}}), framework::QueueingHint::kSkip},
      {"queue-on-toleratedtaint-node-added", nullptr,
       NodeWithTaints("nodeA", {{"dedicated", "user2", TaintEffect::kNoSchedule}}), framework::QueueingHint::kQueue},
      {"skip-unrelated-change", NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule}}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule},
                                {"dedicated", "user3", TaintEffect::kNoSchedule}}),
       framework::QueueingHint::kSkip},
      {"queue-on-taint-change", NodeWithTaints("nodeA", {{"dedicated", "user1", TaintEffect::kNoSchedule}}),
       NodeWithTaints("nodeA", {{"dedicated", "user2", TaintEffect::kNoSchedule}}), framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_node = c.old_node.get(), .new_node = c.new_node.get()};
    EXPECT_EQ(IsSchedulableAfterNodeChange(*pod, event), c.want);
  }
}

// Mirrors upstream's Test_isSchedulableAfterPodTolerationChange.
TEST(TaintTolerationTest, IsSchedulableAfterPodTolerationChange) {
  auto pod = PodWithTolerations("pod-1", {});
  auto updated = PodWithTolerations("pod-1", {Tol("foo", TolerationOperator::kEqual, "", TaintEffect::kNoSchedule)});
  auto other = PodWithTolerations("pod-2", {Tol("foo", TolerationOperator::kEqual, "", TaintEffect::kNoSchedule)});
  framework::EventObjects target{.old_pod = pod.get(), .new_pod = updated.get()};
  EXPECT_EQ(IsSchedulableAfterPodTolerationChange(*pod, target), framework::QueueingHint::kQueue);
  framework::EventObjects unrelated{.old_pod = other.get(), .new_pod = other.get()};
  EXPECT_EQ(IsSchedulableAfterPodTolerationChange(*pod, unrelated), framework::QueueingHint::kSkip);
}

}  // namespace
}  // namespace kubesched::plugins::taint_toleration
