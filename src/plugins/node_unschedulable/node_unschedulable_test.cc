#include "plugins/node_unschedulable/node_unschedulable.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::node_unschedulable {
namespace {

using testing::MakeNode;
using testing::MakePod;

api::Toleration UnschedulableToleration() {
  api::Toleration t;
  t.key = "node.kubernetes.io/unschedulable";
  t.op = api::TolerationOperator::kExists;
  t.effect = api::TaintEffect::kNoSchedule;
  return t;
}

// Mirrors upstream's nodeunschedulable TestNodeUnschedulable.
TEST(NodeUnschedulableTest, Filter) {
  api::Toleration wildcard;  // key "", Exists: tolerates everything
  wildcard.op = api::TolerationOperator::kExists;
  api::Toleration wrong_effect = UnschedulableToleration();
  wrong_effect.effect = api::TaintEffect::kNoExecute;
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Node> node;
    framework::Status want;
  };
  const std::vector<Case> cases = {
      {"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", MakePod().Obj(),
       MakeNode().Unschedulable().Obj(), framework::Status::UnschedulableAndUnresolvable("node(s) were unschedulable")},
      {"Schedule pod to normal node", MakePod().Obj(), MakeNode().Unschedulable(false).Obj(),
       framework::Status::Success()},
      {"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
       MakePod().Toleration(UnschedulableToleration()).Obj(), MakeNode().Unschedulable().Obj(),
       framework::Status::Success()},
      {"Wildcard toleration also tolerates the cordon", MakePod().Toleration(wildcard).Obj(),
       MakeNode().Unschedulable().Obj(), framework::Status::Success()},
      {"A NoExecute toleration does not tolerate the NoSchedule cordon", MakePod().Toleration(wrong_effect).Obj(),
       MakeNode().Unschedulable().Obj(), framework::Status::UnschedulableAndUnresolvable("node(s) were unschedulable")},
  };
  testing::FakeHandle handle;
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value());
  auto* filter = dynamic_cast<framework::FilterPlugin*>(plugin->get());
  ASSERT_NE(filter, nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    EXPECT_EQ(filter->Filter(state, *framework::PodInfo::Create(c.pod), *testing::MakeNodeInfo(c.node)), c.want);
  }
}

TEST(NodeUnschedulableTest, EventsToRegister) {
  NodeUnschedulable plugin;
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
TEST(NodeUnschedulableTest, IsSchedulableAfterNodeChange) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Node> old_node;
    std::shared_ptr<api::Node> new_node;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"skip-queue-on-unschedulable-node-added", nullptr, MakeNode().Unschedulable().Obj(),
       framework::QueueingHint::kSkip},
      {"queue-on-schedulable-node-added", nullptr, MakeNode().Obj(), framework::QueueingHint::kQueue},
      {"skip-unrelated-change", MakeNode().Unschedulable().Obj(),
       MakeNode().Unschedulable().Taint("node.kubernetes.io/not-ready", "", api::TaintEffect::kNoExecute).Obj(),
       framework::QueueingHint::kSkip},
      {"queue-on-unschedulable-field-change", MakeNode().Unschedulable().Obj(), MakeNode().Obj(),
       framework::QueueingHint::kQueue},
      {"skip-on-schedulable-node-update", MakeNode().Obj(), MakeNode().Label("a", "b").Obj(),
       framework::QueueingHint::kSkip},
  };
  auto pod = MakePod().Obj();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_node = c.old_node.get(), .new_node = c.new_node.get()};
    EXPECT_EQ(IsSchedulableAfterNodeChange(*pod, event), c.want);
  }
}

// Mirrors upstream's TestIsSchedulableAfterPodTolerationChange.
TEST(NodeUnschedulableTest, IsSchedulableAfterPodTolerationChange) {
  api::Toleration unrelated;
  unrelated.key = "foo";
  unrelated.op = api::TolerationOperator::kExists;
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Pod> old_pod;
    std::shared_ptr<api::Pod> new_pod;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"queue-when-the-unschedulable-toleration-is-added", MakePod().Name("p").Obj(), MakePod().Name("p").Obj(),
       MakePod().Name("p").Toleration(UnschedulableToleration()).Obj(), framework::QueueingHint::kQueue},
      {"skip-when-an-unrelated-toleration-is-added", MakePod().Name("p").Obj(), MakePod().Name("p").Obj(),
       MakePod().Name("p").Toleration(unrelated).Obj(), framework::QueueingHint::kSkip},
      {"skip-when-another-pod-is-updated", MakePod().Name("p").Obj(), MakePod().Name("other").Obj(),
       MakePod().Name("other").Toleration(UnschedulableToleration()).Obj(), framework::QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_pod = c.old_pod.get(), .new_pod = c.new_pod.get()};
    EXPECT_EQ(IsSchedulableAfterPodTolerationChange(*c.pod, event), c.want);
  }
}

}  // namespace
}  // namespace kubesched::plugins::node_unschedulable
