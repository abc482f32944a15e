#include "plugins/node_name/node_name.h"

namespace kubesched::plugins::node_name {

bool Fits(const api::Pod& pod, std::string_view node_name) {
  return pod.spec.node_name.empty() || pod.spec.node_name == node_name;
}

std::pair<framework::PreFilterResult, framework::Status> NodeName::PreFilter(
    framework::CycleState& /*state*/, const framework::PodInfo& pod,
    std::span<const framework::NodeInfo* const> /*nodes*/) {
  framework::PreFilterResult result;
  const std::string& wanted = pod.pod().spec.node_name;
  if (!wanted.empty()) result.node_names.emplace(std::set<std::string>{wanted});
  return {std::move(result), framework::Status::Success()};
}

framework::Status NodeName::Filter(const framework::CycleState& /*state*/, const framework::PodInfo& pod,
                                   const framework::NodeInfo& node_info) {
  if (!Fits(pod.pod(), node_info.name())) {
    static const framework::StaticReasons kReasons{kErrReason};
    return framework::Status(framework::Code::kUnschedulableAndUnresolvable, kReasons);
  }
  return framework::Status::Success();
}

framework::QueueingHint IsSchedulableAfterNodeAdd(const api::Pod& pod, const framework::EventObjects& event) {
  if (event.new_node == nullptr) return framework::QueueingHint::kQueue;
  return Fits(pod, event.new_node->metadata.name) ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> NodeName::EventsToRegister() const {
  return {{framework::events::NodeAdd(), IsSchedulableAfterNodeAdd}};
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& /*handle*/) {
  return std::make_unique<NodeName>();
}

}  // namespace kubesched::plugins::node_name
