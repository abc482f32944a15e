#include "plugins/node_name/node_name.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::node_name {
namespace {

using testing::MakeNode;
using testing::MakePod;

// Mirrors upstream's nodename TestNodeName.
TEST(NodeNameTest, Filter) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Node> node;
    framework::Status want;
  };
  const std::vector<Case> cases = {
      {"no host specified", MakePod().Obj(), MakeNode().Name("foo").Obj(), framework::Status::Success()},
      {"host matches", MakePod().Node("foo").Obj(), MakeNode().Name("foo").Obj(), framework::Status::Success()},
      {"host doesn't match", MakePod().Node("bar").Obj(), MakeNode().Name("foo").Obj(),
       framework::Status::UnschedulableAndUnresolvable("node(s) didn't match the requested node name")},
  };
  testing::FakeHandle handle;
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value());
  auto* filter = dynamic_cast<framework::FilterPlugin*>(plugin->get());
  ASSERT_NE(filter, nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node_info = testing::MakeNodeInfo(c.node);
    auto pod_info = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    EXPECT_EQ(filter->Filter(state, *pod_info, *node_info), c.want);
  }
}

// Mirrors upstream's TestNodeName_PreFilter.
TEST(NodeNameTest, PreFilter) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::optional<std::set<std::string>> want_nodes;
  };
  const std::vector<Case> cases = {
      {"pod with nodeName", MakePod().Node("node-1").Obj(), std::set<std::string>{"node-1"}},
      {"pod without nodeName", MakePod().Obj(), std::nullopt},
  };
  NodeName plugin;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    auto [result, status] = plugin.PreFilter(state, *framework::PodInfo::Create(c.pod), {});
    EXPECT_TRUE(status.IsSuccess());
    EXPECT_EQ(result.node_names, c.want_nodes);
  }
}

TEST(NodeNameTest, EventsAndHint) {
  NodeName plugin;
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::action::kAdd);
  ASSERT_TRUE(events[0].hint);

  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Node> added;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"queue when the named node is added", MakePod().Node("foo").Obj(), MakeNode().Name("foo").Obj(),
       framework::QueueingHint::kQueue},
      {"skip when another node is added", MakePod().Node("foo").Obj(), MakeNode().Name("bar").Obj(),
       framework::QueueingHint::kSkip},
      {"queue for a pod naming no node", MakePod().Obj(), MakeNode().Name("bar").Obj(),
       framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.new_node = c.added.get()};
    EXPECT_EQ(events[0].hint(*c.pod, event), c.want);
  }
}

}  // namespace
}  // namespace kubesched::plugins::node_name
