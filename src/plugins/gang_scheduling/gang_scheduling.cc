#include "plugins/gang_scheduling/gang_scheduling.h"

#include <fmt/format.h>

#include "util/go_quote.h"

namespace kubesched::plugins::gang_scheduling {

using framework::QueueingHint;
using framework::Status;

Status GangScheduling::PreEnqueue(const api::Pod& pod) {
  const std::string& name = pod.spec.pod_group;
  framework::PodGroupTracker* groups = handle_.PodGroups();
  if (name.empty() || groups == nullptr) return Status::Success();
  const auto group = groups->Group(pod.metadata.namespace_, name);
  if (group == nullptr) {
    // Upstream's wording, "pods's" included.
    return Status::UnschedulableAndUnresolvable(
        fmt::format("waiting for pods's pod group {} to appear in scheduling queue", util::GoQuote(name)));
  }
  if (group->policy != api::PodGroupPolicy::kGang) return Status::Success();
  if (groups->Members(pod.metadata.namespace_, name).all < static_cast<size_t>(group->min_count)) {
    return Status::UnschedulableAndUnresolvable("waiting for minCount pods from a gang to appear in scheduling queue");
  }
  return Status::Success();
}

Status GangScheduling::Reserve(framework::CycleState& /*state*/, const framework::PodInfo& pod,
                               const std::string& /*node_name*/) {
  if (framework::PodGroupTracker* groups = handle_.PodGroups()) groups->Assume(pod.pod());
  return Status::Success();
}

void GangScheduling::Unreserve(framework::CycleState& /*state*/, const framework::PodInfo& pod,
                               const std::string& /*node_name*/) {
  if (framework::PodGroupTracker* groups = handle_.PodGroups()) groups->Forget(pod.pod());
}

std::pair<Status, std::chrono::nanoseconds> GangScheduling::Permit(framework::CycleState& /*state*/,
                                                                   const framework::PodInfo& pod_info,
                                                                   const std::string& /*node_name*/) {
  const api::Pod& pod = pod_info.pod();
  const std::string& name = pod.spec.pod_group;
  framework::PodGroupTracker* groups = handle_.PodGroups();
  if (name.empty() || groups == nullptr) return {Status::Success(), {}};
  const auto group = groups->Group(pod.metadata.namespace_, name);
  if (group == nullptr) {
    return {Status::Error(fmt::format("failed to get podGroup {}/{}: not found", pod.metadata.namespace_, name)), {}};
  }
  if (group->policy != api::PodGroupPolicy::kGang) return {Status::Success(), {}};
  if (groups->Members(pod.metadata.namespace_, name).Scheduled() < static_cast<size_t>(group->min_count)) {
    // The rest of the gang is wanted now, not after its backoff.
    handle_.Activate(groups->UnscheduledMembers(pod.metadata.namespace_, name));
    return {Status::Wait("waiting for minCount pods from a gang to be waiting on permit"), kPermitTimeout};
  }
  // Quorum: every member waiting at Permit goes on to binding with this one. The waiting pods
  // are collected first and allowed after, outside the iteration.
  std::vector<std::string> waiting;
  handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
    const api::Pod& p = wp.pod();
    if (p.spec.pod_group == name && p.metadata.namespace_ == pod.metadata.namespace_) {
      waiting.push_back(p.metadata.uid);
    }
  });
  for (const std::string& uid : waiting) {
    if (auto wp = handle_.GetWaitingPod(uid)) wp->Allow(kName);
  }
  return {Status::Success(), {}};
}

QueueingHint IsSchedulableAfterPodAdded(const api::Pod& pod, const framework::EventObjects& event) {
  const api::Pod* added = event.new_pod;
  if (added == nullptr) return QueueingHint::kQueue;  // malformed event: be safe
  const bool same = !pod.spec.pod_group.empty() && added->spec.pod_group == pod.spec.pod_group &&
                    added->metadata.namespace_ == pod.metadata.namespace_;
  return same ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint IsSchedulableAfterPodGroupAdded(const api::Pod& pod, const framework::EventObjects& event) {
  const api::PodGroup* added = event.new_pod_group;
  if (added == nullptr) return QueueingHint::kQueue;
  const bool same = added->metadata.name == pod.spec.pod_group && added->metadata.namespace_ == pod.metadata.namespace_;
  return same ? QueueingHint::kQueue : QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> GangScheduling::EventsToRegister() const {
  // A PodGroup's policy is immutable: its updates need no requeue.
  return {
      {{framework::EventResource::kUnscheduledPod, framework::action::kAdd, "UnscheduledPodAdd"},
       IsSchedulableAfterPodAdded},
      {{framework::EventResource::kAssignedPod, framework::action::kAdd, "AssignedPodAdd"}, IsSchedulableAfterPodAdded},
      {{framework::EventResource::kPodGroup, framework::action::kAdd, "PodGroupAdd"}, IsSchedulableAfterPodGroupAdded},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& handle) {
  return std::make_unique<GangScheduling>(handle);
}

}  // namespace kubesched::plugins::gang_scheduling
