#include "plugins/node_unschedulable/node_unschedulable.h"

#include "api/taints.h"

namespace kubesched::plugins::node_unschedulable {
namespace {

bool ToleratesUnschedulable(const api::Pod& pod) {
  static const api::Taint kUnschedulableTaint{std::string(api::kTaintNodeUnschedulable), "",
                                              api::TaintEffect::kNoSchedule};
  return api::TolerationsTolerateTaint(pod.spec.tolerations, kUnschedulableTaint);
}

}  // namespace

framework::Status NodeUnschedulable::Filter(const framework::CycleState& /*state*/, const framework::PodInfo& pod,
                                            const framework::NodeInfo& node_info) {
  const api::Node* node = node_info.node();
  if (node == nullptr || !node->spec.unschedulable) return framework::Status::Success();
  if (ToleratesUnschedulable(pod.pod())) return framework::Status::Success();
  static const framework::StaticReasons kReasons{kErrReasonUnschedulable};
  return framework::Status(framework::Code::kUnschedulableAndUnresolvable, kReasons);
}

framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& /*pod*/, const framework::EventObjects& event) {
  const api::Node* modified = event.new_node;
  if (modified == nullptr) return framework::QueueingHint::kQueue;
  const api::Node* original = event.old_node;
  // Queue when a schedulable node is added or a node is uncordoned.
  if (modified->spec.unschedulable) return framework::QueueingHint::kSkip;
  if (original == nullptr || original->spec.unschedulable) return framework::QueueingHint::kQueue;
  return framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterPodTolerationChange(const api::Pod& pod,
                                                              const framework::EventObjects& event) {
  const api::Pod* modified = event.new_pod;
  if (modified == nullptr) return framework::QueueingHint::kQueue;
  if (modified->metadata.uid != pod.metadata.uid) return framework::QueueingHint::kSkip;
  bool tolerated_before = event.old_pod != nullptr && ToleratesUnschedulable(*event.old_pod);
  if (!tolerated_before && ToleratesUnschedulable(*modified)) return framework::QueueingHint::kQueue;
  return framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> NodeUnschedulable::EventsToRegister() const {
  return {
      {{framework::EventResource::kNode, framework::action::kAdd | framework::action::kUpdateNodeTaint,
        "NodeAdd|UpdateNodeTaint"},
       IsSchedulableAfterNodeChange},
      {{framework::EventResource::kPod, framework::action::kUpdatePodTolerations, "PodUpdateTolerations"},
       IsSchedulableAfterPodTolerationChange},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& /*handle*/) {
  return std::make_unique<NodeUnschedulable>();
}

}  // namespace kubesched::plugins::node_unschedulable
