#include "plugins/scheduling_gates/scheduling_gates.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::scheduling_gates {
namespace {

using testing::MakePod;

// Mirrors upstream's schedulinggates TestPreEnqueue.
TEST(SchedulingGatesTest, PreEnqueue) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    framework::Status want;
  };
  const std::vector<Case> cases = {
      {"pod does not carry scheduling gates", MakePod().Name("p").Obj(), framework::Status::Success()},
      {"pod carries scheduling gates", MakePod().Name("p").SchedulingGates({"foo", "bar"}).Obj(),
       framework::Status::UnschedulableAndUnresolvable("waiting for scheduling gates: [foo bar]")},
      {"one gate", MakePod().Name("p").SchedulingGates({"only"}).Obj(),
       framework::Status::UnschedulableAndUnresolvable("waiting for scheduling gates: [only]")},
  };
  testing::FakeHandle handle;
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value());
  auto* pre_enqueue = dynamic_cast<framework::PreEnqueuePlugin*>(plugin->get());
  ASSERT_NE(pre_enqueue, nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::Status got = pre_enqueue->PreEnqueue(*c.pod);
    EXPECT_EQ(got.code(), c.want.code());
    EXPECT_EQ(got.reasons(), c.want.reasons());
  }
}

TEST(SchedulingGatesTest, EventsToRegister) {
  SchedulingGates plugin;
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, framework::action::kUpdatePodSchedulingGatesEliminated);
  ASSERT_TRUE(events[0].hint);
}

// Mirrors upstream's Test_isSchedulableAfterUpdatePodSchedulingGatesEliminated.
TEST(SchedulingGatesTest, QueueingHint) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Pod> old_pod;
    std::shared_ptr<api::Pod> new_pod;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"queue-on-the-unschedulable-pod-updated", MakePod().Name("p").SchedulingGates({"foo"}).Obj(),
       MakePod().Name("p").SchedulingGates({"foo"}).Obj(), MakePod().Name("p").Obj(), framework::QueueingHint::kQueue},
      {"skip-queue-on-other-pod-updated", MakePod().Name("p").SchedulingGates({"foo"}).Obj(),
       MakePod().Name("p1").SchedulingGates({"foo"}).Obj(), MakePod().Name("p1").Obj(), framework::QueueingHint::kSkip},
      {"skip-while-gates-remain", MakePod().Name("p").SchedulingGates({"foo", "bar"}).Obj(),
       MakePod().Name("p").SchedulingGates({"foo", "bar"}).Obj(), MakePod().Name("p").SchedulingGates({"bar"}).Obj(),
       framework::QueueingHint::kSkip},
  };
  SchedulingGates plugin;
  auto hint = plugin.EventsToRegister()[0].hint;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_pod = c.old_pod.get(), .new_pod = c.new_pod.get()};
    EXPECT_EQ(hint(*c.pod, event), c.want);
  }
}

}  // namespace
}  // namespace kubesched::plugins::scheduling_gates
