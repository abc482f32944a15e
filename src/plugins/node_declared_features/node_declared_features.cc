#include "plugins/node_declared_features/node_declared_features.h"

#include <algorithm>

namespace kubesched::plugins::node_declared_features {
namespace {

using framework::QueueingHint;
using framework::Status;

const framework::StateKey kPreFilterStateKey{"PreFilterNodeDeclaredFeatures"};

struct PreFilterState final : framework::StateData {
  //! The required features, sorted (names owned by the registry).
  std::vector<std::string_view> required;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
};

}  // namespace

std::pair<framework::PreFilterResult, Status> NodeDeclaredFeatures::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    std::span<const framework::NodeInfo* const> /*nodes*/) {
  // Upstream first skips a pod whose in-place resize is deferred, behind the alpha gate
  // InPlacePodVerticalScalingSchedulerPreemption (off by default), which kubesched does not have.
  auto required = InferForPodScheduling(registry_, pod.pod(), version_);
  if (required.empty()) return {{}, Status::Skip()};
  auto s = std::make_unique<PreFilterState>();
  s->required = std::move(required);
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, Status::Success()};
}

Status NodeDeclaredFeatures::Filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                    const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("error reading \"PreFilterNodeDeclaredFeatures\" from cycle-state: not found");
  const api::Node* node = node_info.node();
  // Both lists are sorted: a merge, no allocation. A node without an object declares nothing.
  static const std::vector<std::string> kNone;
  const std::vector<std::string>& declared = node != nullptr ? node->status.declared_features : kNone;
  if (std::ranges::includes(declared, s->required, std::less<>())) return Status::Success();
  static const framework::StaticReasons kReasons{kErrReasonUnsatisfiedRequirements};
  return Status(framework::Code::kUnschedulableAndUnresolvable, kReasons);
}

QueueingHint IsSchedulableAfterNodeChange(const api::Pod& /*pod*/, const framework::EventObjects& event) {
  if (event.new_node == nullptr) return QueueingHint::kQueue;  // not a node: be safe
  if (event.old_node != nullptr &&
      event.old_node->status.declared_features == event.new_node->status.declared_features) {
    return QueueingHint::kSkip;
  }
  return QueueingHint::kQueue;
}

QueueingHint IsSchedulableAfterPodUpdate(std::span<const Feature> registry, Version version, const api::Pod& pod,
                                         const framework::EventObjects& event) {
  if (event.old_pod == nullptr || event.new_pod == nullptr) return QueueingHint::kQueue;
  // Only the pod's own updates (upstream registers them as TargetPod events).
  if (event.new_pod->metadata.uid != pod.metadata.uid) return QueueingHint::kSkip;
  return InferForPodScheduling(registry, *event.old_pod, version) ==
                 InferForPodScheduling(registry, *event.new_pod, version)
             ? QueueingHint::kSkip
             : QueueingHint::kQueue;
}

std::vector<framework::ClusterEventWithHint> NodeDeclaredFeatures::EventsToRegister() const {
  using framework::EventResource;
  namespace action = framework::action;
  // Upstream registers Node/Add|UpdateNodeDeclaredFeature. kubesched's node events have no action
  // for a change of status.declaredFeatures, so every node update is registered and the hint
  // keeps only those that changed the declared features.
  return {
      {{EventResource::kNode, action::kAdd | action::kUpdate, "NodeAdd|Update"}, IsSchedulableAfterNodeChange},
      {{EventResource::kUnscheduledPod, action::kUpdate, "UnscheduledPodUpdate"},
       [registry = registry_, version = version_](const api::Pod& pod, const framework::EventObjects& event) {
         return IsSchedulableAfterPodUpdate(registry, version, pod, event);
       }},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& /*handle*/) {
  return std::make_unique<NodeDeclaredFeatures>();
}

}  // namespace kubesched::plugins::node_declared_features
