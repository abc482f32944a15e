#include "plugins/scheduling_gates/scheduling_gates.h"

namespace kubesched::plugins::scheduling_gates {

framework::Status SchedulingGates::PreEnqueue(const api::Pod& pod) {
  const auto& gates = pod.spec.scheduling_gates;
  if (gates.empty()) return framework::Status::Success();
  // Go's %v of a []string: space-separated inside brackets.
  std::string message = "waiting for scheduling gates: [";
  for (size_t i = 0; i < gates.size(); ++i) {
    if (i > 0) message += ' ';
    message += gates[i];
  }
  message += ']';
  return framework::Status::UnschedulableAndUnresolvable(std::move(message));
}

framework::QueueingHint IsSchedulableAfterUpdatePodSchedulingGatesEliminated(const api::Pod& pod,
                                                                             const framework::EventObjects& event) {
  const api::Pod* modified = event.new_pod;
  if (modified == nullptr) return framework::QueueingHint::kQueue;  // malformed event: be safe
  // Another pod losing its gates cannot make this one schedulable.
  if (modified->metadata.uid != pod.metadata.uid) return framework::QueueingHint::kSkip;
  return modified->spec.scheduling_gates.empty() ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> SchedulingGates::EventsToRegister() const {
  return {{{framework::EventResource::kPod, framework::action::kUpdatePodSchedulingGatesEliminated,
            "PodUpdateSchedulingGatesEliminated"},
           IsSchedulableAfterUpdatePodSchedulingGatesEliminated}};
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& /*handle*/) {
  return std::make_unique<SchedulingGates>();
}

}  // namespace kubesched::plugins::scheduling_gates
