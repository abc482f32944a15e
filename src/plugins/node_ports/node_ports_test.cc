#include "plugins/node_ports/node_ports.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::node_ports {
namespace {

using testing::MakeNode;
using testing::MakePod;

// A pod on `host` with one container per "PROTOCOL/IP/PORT" host port, as upstream's newPod.
std::shared_ptr<api::Pod> NewPod(std::string host, std::vector<std::string> host_ports) {
  auto pod = MakePod().Node(host).Obj();
  api::Container c;
  c.name = "c";
  for (const auto& spec : host_ports) {
    size_t a = spec.find('/');
    size_t b = spec.find('/', a + 1);
    api::ContainerPort p;
    p.protocol = spec.substr(0, a);
    p.host_ip = spec.substr(a + 1, b - a - 1);
    p.host_port = std::stoi(spec.substr(b + 1));
    c.ports.push_back(p);
  }
  pod->spec.containers.push_back(std::move(c));
  return pod;
}

// Mirrors upstream's nodeports TestNodePorts.
TEST(NodePortsTest, PreFilterAndFilter) {
  const framework::Status conflict =
      framework::Status::Unschedulable("node(s) didn't have free ports for the requested pod ports");
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> existing;
    framework::Status want_pre_filter;
    framework::Status want_filter;
  };
  const auto ok = framework::Status::Success();
  const std::vector<Case> cases = {
      {"skip filter", MakePod().Obj(), {}, framework::Status::Skip(), ok},
      {"other port", NewPod("m1", {"UDP/127.0.0.1/8080"}), {NewPod("m1", {"UDP/127.0.0.1/9090"})}, ok, ok},
      {"same udp port", NewPod("m1", {"UDP/127.0.0.1/8080"}), {NewPod("m1", {"UDP/127.0.0.1/8080"})}, ok, conflict},
      {"same tcp port", NewPod("m1", {"TCP/127.0.0.1/8080"}), {NewPod("m1", {"TCP/127.0.0.1/8080"})}, ok, conflict},
      {"different host ip", NewPod("m1", {"TCP/127.0.0.1/8080"}), {NewPod("m1", {"TCP/127.0.0.2/8080"})}, ok, ok},
      {"different protocol", NewPod("m1", {"UDP/127.0.0.1/8080"}), {NewPod("m1", {"TCP/127.0.0.1/8080"})}, ok, ok},
      {"second udp port conflict",
       NewPod("m1", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"UDP/127.0.0.1/8080"})},
       ok,
       conflict},
      {"first tcp port conflict",
       NewPod("m1", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"})},
       ok,
       conflict},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       NewPod("m1", {"TCP/0.0.0.0/8001"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001"})},
       ok,
       conflict},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       NewPod("m1", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001"})},
       ok,
       conflict},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       NewPod("m1", {"TCP/127.0.0.1/8001"}),
       {NewPod("m1", {"TCP/0.0.0.0/8001"})},
       ok,
       conflict},
      {"second different protocol", NewPod("m1", {"UDP/127.0.0.1/8001"}), {NewPod("m1", {"TCP/0.0.0.0/8001"})}, ok, ok},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       NewPod("m1", {"UDP/127.0.0.1/8001"}),
       {NewPod("m1", {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"})},
       ok,
       conflict},
      {"empty host ip means 0.0.0.0",
       NewPod("m1", {"TCP//8001"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001"})},
       ok,
       conflict},
  };
  testing::FakeHandle handle;
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value());
  auto* pre_filter = dynamic_cast<framework::PreFilterPlugin*>(plugin->get());
  auto* filter = dynamic_cast<framework::FilterPlugin*>(plugin->get());
  ASSERT_NE(pre_filter, nullptr);
  ASSERT_NE(filter, nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node_info = testing::MakeNodeInfo(MakeNode().Name("m1").Obj(), c.existing);
    auto pod_info = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    auto [result, pre_status] = pre_filter->PreFilter(state, *pod_info, {});
    EXPECT_EQ(pre_status, c.want_pre_filter);
    EXPECT_TRUE(result.AllNodes());
    if (pre_status.IsSkip()) continue;
    EXPECT_EQ(filter->Filter(state, *pod_info, *node_info), c.want_filter);
  }
}

// Mirrors upstream's TestPreFilterDisabled.
TEST(NodePortsTest, FilterWithoutPreFilterIsAnError) {
  NodePorts plugin;
  framework::CycleState state;
  auto status = plugin.Filter(state, *MakePod().Info(), *testing::MakeNodeInfo(MakeNode().Obj()));
  EXPECT_TRUE(status.IsError());
  EXPECT_EQ(status.Message(), "reading \"PreFilterNodePorts\" from cycleState: not found");
}

TEST(NodePortsTest, GetHostPorts) {
  auto pod = MakePod().Obj();
  auto port = [](int32_t container, int32_t host) {
    api::ContainerPort p;
    p.container_port = container;
    p.host_port = host;
    return p;
  };
  api::Container c1;
  c1.ports = {port(8001, 8001), port(8002, 8002), port(8005, 0)};
  api::Container init;
  init.ports = {port(9001, 9001)};  // ends before the pod runs: no port held
  api::Container sidecar;
  sidecar.restart_policy = "Always";
  sidecar.ports = {port(9002, 9002), port(9003, 0)};
  pod->spec.containers = {c1};
  pod->spec.init_containers = {init, sidecar};
  std::vector<int32_t> got;
  for (const auto& p : GetHostPorts(*pod)) got.push_back(p.host_port);
  EXPECT_EQ(got, (std::vector<int32_t>{9002, 8001, 8002}));
}

TEST(NodePortsTest, SidecarPortsConflict) {
  auto pod = MakePod().Obj();
  api::Container sidecar;
  sidecar.restart_policy = "Always";
  api::ContainerPort p;
  p.container_port = 80;
  p.host_port = 80;
  sidecar.ports = {p};
  pod->spec.init_containers = {sidecar};
  NodePorts plugin;
  framework::CycleState state;
  auto pod_info = framework::PodInfo::Create(pod);
  ASSERT_TRUE(plugin.PreFilter(state, *pod_info, {}).second.IsSuccess());
  auto node_info = testing::MakeNodeInfo(MakeNode().Name("m1").Obj(), {NewPod("m1", {"TCP/0.0.0.0/80"})});
  EXPECT_EQ(plugin.Filter(state, *pod_info, *node_info).code(), framework::Code::kUnschedulable);
}

TEST(NodePortsTest, EventsToRegister) {
  NodePorts plugin;
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, framework::action::kDelete);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, framework::action::kAdd);
  EXPECT_FALSE(events[1].hint);
}

// Mirrors upstream's Test_isSchedulableAfterPodDeleted.
TEST(NodePortsTest, IsSchedulableAfterPodDeleted) {
  auto pod = MakePod().HostPort(8080).Obj();
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> deleted;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"skip-queue-on-unscheduled", MakePod().Obj(), framework::QueueingHint::kSkip},
      {"skip-queue-on-non-hostport", MakePod().Node("fake-node").Obj(), framework::QueueingHint::kSkip},
      {"skip-queue-on-unrelated-hostport", MakePod().Node("fake-node").HostPort(8081).Obj(),
       framework::QueueingHint::kSkip},
      {"queue-on-released-hostport", MakePod().Node("fake-node").HostPort(8080).Obj(), framework::QueueingHint::kQueue},
      {"queue-on-nominated-pod-released-hostport", MakePod().NominatedNodeName("fake-node").HostPort(8080).Obj(),
       framework::QueueingHint::kQueue},
      {"skip-queue-on-unscheduled-pod-with-hostport", MakePod().HostPort(8080).Obj(), framework::QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_pod = c.deleted.get()};
    EXPECT_EQ(IsSchedulableAfterPodDeleted(*pod, event), c.want);
  }
}

}  // namespace
}  // namespace kubesched::plugins::node_ports
