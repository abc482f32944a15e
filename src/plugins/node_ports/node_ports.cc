#include "plugins/node_ports/node_ports.h"

namespace kubesched::plugins::node_ports {
namespace {

const framework::StateKey kPreFilterStateKey{"PreFilterNodePorts"};

struct PreFilterState final : framework::StateData {
  std::vector<api::ContainerPort> ports;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
};

bool FitsPorts(std::span<const api::ContainerPort> wanted, const framework::HostPortInfo& in_use) {
  for (const auto& p : wanted) {
    if (in_use.CheckConflict(p.host_ip, p.protocol, p.host_port)) return false;
  }
  return true;
}

void AppendHostPorts(const api::Container& c, std::vector<api::ContainerPort>& out) {
  for (const auto& p : c.ports) {
    if (p.host_port > 0) out.push_back(p);
  }
}

}  // namespace

std::vector<api::ContainerPort> GetHostPorts(const api::Pod& pod) {
  std::vector<api::ContainerPort> ports;
  for (const auto& c : pod.spec.init_containers) {
    // Only init containers that run for the pod's whole life (sidecars) hold their ports.
    if (c.restart_policy && *c.restart_policy == "Always") AppendHostPorts(c, ports);
  }
  for (const auto& c : pod.spec.containers) AppendHostPorts(c, ports);
  return ports;
}

std::pair<framework::PreFilterResult, framework::Status> NodePorts::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    std::span<const framework::NodeInfo* const> /*nodes*/) {
  auto ports = GetHostPorts(pod.pod());
  if (ports.empty()) return {{}, framework::Status::Skip()};
  auto s = std::make_unique<PreFilterState>();
  s->ports = std::move(ports);
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, framework::Status::Success()};
}

framework::Status NodePorts::Filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                    const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return framework::Status::Error("reading \"PreFilterNodePorts\" from cycleState: not found");
  if (!FitsPorts(s->ports, node_info.used_ports())) {
    static const framework::StaticReasons kReasons{kErrReason};
    return framework::Status(framework::Code::kUnschedulable, kReasons);
  }
  return framework::Status::Success();
}

framework::QueueingHint IsSchedulableAfterPodDeleted(const api::Pod& pod, const framework::EventObjects& event) {
  const api::Pod* deleted = event.old_pod;
  if (deleted == nullptr) return framework::QueueingHint::kQueue;
  // A pod that was neither bound nor nominated held no ports anywhere.
  if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty()) {
    return framework::QueueingHint::kSkip;
  }
  auto released = GetHostPorts(*deleted);
  if (released.empty()) return framework::QueueingHint::kSkip;
  framework::HostPortInfo released_ports;
  for (const auto& p : released) released_ports.Add(p.host_ip, p.protocol, p.host_port);
  // Queue only when the pod wants one of the released ports.
  return FitsPorts(GetHostPorts(pod), released_ports) ? framework::QueueingHint::kSkip
                                                      : framework::QueueingHint::kQueue;
}

std::vector<framework::ClusterEventWithHint> NodePorts::EventsToRegister() const {
  return {
      {{framework::EventResource::kPod, framework::action::kDelete, "PodDelete"}, IsSchedulableAfterPodDeleted},
      {framework::events::NodeAdd(), nullptr},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& /*handle*/) {
  return std::make_unique<NodePorts>();
}

}  // namespace kubesched::plugins::node_ports
