#include "plugins/taint_toleration/taint_toleration.h"

#include "api/taints.h"
#include "plugins/helper/normalize_score.h"

namespace kubesched::plugins::taint_toleration {
namespace {

const framework::StateKey kPreScoreStateKey{"PreScoreTaintToleration"};

struct PreScoreState final : framework::StateData {
  std::vector<api::Toleration> tolerations_prefer_no_schedule;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

}  // namespace

framework::Status TaintToleration::Filter(const framework::CycleState& /*state*/, const framework::PodInfo& pod,
                                          const framework::NodeInfo& node_info) {
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  const api::Taint* taint =
      api::FindMatchingUntoleratedTaint(node->spec.taints, pod.pod().spec.tolerations, api::DoNotScheduleTaintsFilter);
  if (taint == nullptr) return framework::Status::Success();
  static const framework::StaticReasons kReasons{kErrReasonNotMatch};
  return framework::Status(framework::Code::kUnschedulableAndUnresolvable, kReasons);
}

framework::Status TaintToleration::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                            std::span<const framework::NodeInfo* const> /*nodes*/) {
  auto s = std::make_unique<PreScoreState>();
  for (const auto& t : pod.pod().spec.tolerations) {
    // An empty effect matches every effect, PreferNoSchedule included.
    if (!t.effect || *t.effect == api::TaintEffect::kPreferNoSchedule) s->tolerations_prefer_no_schedule.push_back(t);
  }
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status::Success();
}

std::pair<int64_t, framework::Status> TaintToleration::Score(const framework::CycleState& state,
                                                             const framework::PodInfo& /*pod*/,
                                                             const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) {
    return {0, framework::Status::Error("failed to read \"PreScoreTaintToleration\" from cycleState: not found")};
  }
  const api::Node* node = node_info.node();
  if (node == nullptr) return {0, framework::Status::Error("node not found")};
  int64_t intolerable = 0;
  for (const auto& taint : node->spec.taints) {
    if (taint.effect != api::TaintEffect::kPreferNoSchedule) continue;
    if (!api::TolerationsTolerateTaint(s->tolerations_prefer_no_schedule, taint)) ++intolerable;
  }
  return {intolerable, framework::Status::Success()};
}

framework::Status TaintToleration::NormalizeScore(const framework::CycleState& /*state*/,
                                                  const framework::PodInfo& /*pod*/, framework::NodeScoreList& scores) {
  return helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/true, scores);
}

framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event) {
  const api::Node* modified = event.new_node;
  if (modified == nullptr) return framework::QueueingHint::kQueue;
  const auto& tolerations = pod.spec.tolerations;
  bool was_untolerated = true;
  if (event.old_node != nullptr) {
    was_untolerated = api::FindMatchingUntoleratedTaint(event.old_node->spec.taints, tolerations,
                                                        api::DoNotScheduleTaintsFilter) != nullptr;
  }
  bool is_untolerated =
      api::FindMatchingUntoleratedTaint(modified->spec.taints, tolerations, api::DoNotScheduleTaintsFilter) != nullptr;
  return was_untolerated && !is_untolerated ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterPodTolerationChange(const api::Pod& pod,
                                                              const framework::EventObjects& event) {
  const api::Pod* modified = event.new_pod;
  if (modified == nullptr) return framework::QueueingHint::kQueue;
  // Only the rejected pod's own tolerations matter; tolerations are only ever added.
  return modified->metadata.uid == pod.metadata.uid ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> TaintToleration::EventsToRegister() const {
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
  return std::make_unique<TaintToleration>();
}

}  // namespace kubesched::plugins::taint_toleration
