#include "plugins/coscheduling/coscheduling.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/field_path.h"
#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"
#include "util/log.h"

namespace kubesched::plugins::coscheduling {

using framework::Code;
using framework::Status;

std::expected<CoschedulingArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                  const std::string& path) {
  CoschedulingArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  const std::string permit_path = api::field_path::Child(path, "permitWaitingTimeSeconds");
  const std::string backoff_path = api::field_path::Child(path, "podGroupBackoffSeconds");
  const std::string reject_path = api::field_path::Child(path, "podGroupRejectPercentage");
  if (d.Object(
          json, path,
          {"permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage", "apiVersion", "kind"})) {
    if (auto v = d.Int64(json.Find("permitWaitingTimeSeconds"), permit_path)) args.permit_waiting_time_seconds = *v;
    if (auto v = d.Int64(json.Find("podGroupBackoffSeconds"), backoff_path)) args.pod_group_backoff_seconds = *v;
    if (auto v = d.Int32(json.Find("podGroupRejectPercentage"), reject_path)) args.pod_group_reject_percentage = *v;
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});
  // scheduler-plugins' ValidateCoschedulingArgs, its words included. A wait longer than a day is
  // refused too: nanoseconds of it must not overflow.
  constexpr int64_t kMaxSeconds = 24 * 3600;
  const auto check_seconds = [&](const std::string& field, int64_t seconds) {
    if (seconds < 0) {
      errors.push_back(config::FieldInvalid(field, std::to_string(seconds), "must be greater than 0"));
    } else if (seconds > kMaxSeconds) {
      errors.push_back(config::FieldInvalid(field, std::to_string(seconds), "must be at most 86400 (a day)"));
    }
  };
  check_seconds(permit_path, args.permit_waiting_time_seconds);
  check_seconds(backoff_path, args.pod_group_backoff_seconds);
  if (args.pod_group_reject_percentage < 0 || args.pod_group_reject_percentage > 100) {
    errors.push_back(config::FieldInvalid(reject_path, std::to_string(args.pod_group_reject_percentage),
                                          "must be between 0 and 100"));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

std::string EncodeArgs(const CoschedulingArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("permitWaitingTimeSeconds").Int64(args.permit_waiting_time_seconds);
  w.Key("podGroupBackoffSeconds").Int64(args.pod_group_backoff_seconds);
  w.Key("podGroupRejectPercentage").Int64(args.pod_group_reject_percentage);
  w.EndObject();
  return std::move(w).Take();
}

namespace {

gang_scheduling::GangOptions OptionsFor(const CoschedulingArgs& args) {
  gang_scheduling::GangOptions o;
  o.name = Coscheduling::kName;
  o.api = api::PodGroupApi::kCoscheduling;
  o.permit_timeout = std::chrono::seconds(args.permit_waiting_time_seconds);
  o.write_conditions = false;
  o.preempt = false;  // its members preempt one by one (DefaultPreemption), as upstream's plugin lets them
  return o;
}

// An amount in a ResourceList's words: cpu in cores or millicores, the rest in units.
std::string FormatAmount(std::string_view resource, int64_t amount) {
  if (resource != api::kResourceCPU) return std::to_string(amount);
  if (amount % 1000 == 0) return std::to_string(amount / 1000);
  return fmt::format("{}m", amount);
}

}  // namespace

Coscheduling::Coscheduling(framework::Handle& handle, CoschedulingArgs args)
    : GangScheduling(handle, OptionsFor(args)), args_(args) {}

Status Coscheduling::PreEnqueue(const api::Pod& /*pod*/) { return Status::Success(); }

bool Coscheduling::Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const {
  const int32_t pa = a.pod().Priority(), pb = b.pod().Priority();
  if (pa != pb) return pa > pb;
  // The group's creation time stands for each member, so a group's members queue together.
  const auto created = [this](const framework::QueuedPodInfo& q) {
    const std::string_view name = GroupName(q.pod());
    if (!name.empty()) {
      if (framework::PodGroupTracker* groups = Groups()) {
        if (auto g = groups->Group(q.pod().metadata.namespace_, name)) return g->metadata.creation_timestamp_ns;
      }
    }
    return q.initial_attempt_timestamp_ns;
  };
  const int64_t ca = created(a), cb = created(b);
  if (ca != cb) return ca < cb;
  const auto& ma = a.pod().metadata;
  const auto& mb = b.pod().metadata;
  if (ma.namespace_ != mb.namespace_) return ma.namespace_ < mb.namespace_;
  return ma.name < mb.name;
}

std::string Coscheduling::Precheck(const api::Pod& pod, const api::PodGroup& group) {
  const std::string key = group.Key();
  const int64_t now = handle_.clock().NowNs();
  {
    std::lock_guard lock(mu_);
    if (auto it = backed_off_until_ns_.find(key); it != backed_off_until_ns_.end()) {
      if (now < it->second) return fmt::format("podGroup {} failed recently", key);
      backed_off_until_ns_.erase(it);
    }
  }
  framework::PodGroupTracker* groups = Groups();
  const std::string_view name = group.metadata.name;
  const size_t all = groups->Members(pod.metadata.namespace_, name).all;
  if (all < static_cast<size_t>(std::max(group.min_count, 0))) {
    return fmt::format(
        "pre-filter pod {} cannot find enough sibling pods, current pods number: {}, minMember of group: {}",
        pod.metadata.name, all, group.min_count);
  }
  // Members held by a scheduling gate cannot be placed yet: they do not make the quorum
  // (scheduler-plugins#952; the wording is kubesched's).
  size_t gated = 0;
  for (const auto& p : groups->UnscheduledMembers(pod.metadata.namespace_, name)) {
    if (!p->spec.scheduling_gates.empty()) ++gated;
  }
  if (all - gated < static_cast<size_t>(std::max(group.min_count, 0))) {
    return fmt::format(
        "pre-filter pod {} cannot find enough sibling pods that are not scheduling-gated, current pods number: {}, "
        "minMember of group: {}",
        pod.metadata.name, all - gated, group.min_count);
  }
  if (group.min_resources.empty()) return "";
  {
    std::lock_guard lock(mu_);
    if (auto it = permitted_until_ns_.find(key); it != permitted_until_ns_.end() && now < it->second) return "";
  }
  std::string gap = ResourceGap(group);
  if (!gap.empty()) return gap;
  // Passed: not checked again for the plugin's wait time (as upstream caches it).
  std::lock_guard lock(mu_);
  permitted_until_ns_[key] = now + std::chrono::nanoseconds(options_.permit_timeout).count();
  return "";
}

std::string Coscheduling::ResourceGap(const api::PodGroup& group) const {
  // What the group needs: minResources, and room for minMember pods.
  std::map<std::string, int64_t, std::less<>> need;
  for (const auto& [resource, quantity] : group.min_resources) {
    need[resource] = resource == api::kResourceCPU ? quantity.MilliValue() : quantity.Value();
  }
  need[std::string(api::kResourcePods)] = std::max(group.min_count, 0);
  // What is free over all nodes, the group's own pods counted as free (they are the group's).
  std::map<std::string, int64_t, std::less<>> free;
  for (const framework::NodeInfo* n : handle_.SnapshotSharedLister().List()) {
    framework::Resource used = n->requested();
    int64_t pods = static_cast<int64_t>(n->pods().size());
    for (const auto& p : n->pods()) {
      if (p->pod().metadata.namespace_ == group.metadata.namespace_ && GroupName(p->pod()) == group.metadata.name) {
        used.Sub(p->requests);
        --pods;
      }
    }
    for (const auto& [resource, amount] : need) {
      const int64_t in_use = resource == api::kResourcePods ? pods : used.Get(resource);
      free[resource] += n->allocatable().Get(resource) - in_use;
    }
  }
  std::vector<std::string> short_of;
  for (const auto& [resource, amount] : need) {
    if (const int64_t missing = amount - free[resource]; missing > 0) {
      short_of.push_back(fmt::format("{}:{}", resource, FormatAmount(resource, missing)));
    }
  }
  if (short_of.empty()) return "";
  return fmt::format("resource gap: map[{}]", fmt::join(short_of, " "));
}

std::chrono::nanoseconds Coscheduling::PermitTimeout(const api::PodGroup& group) const {
  // scheduleTimeoutSeconds when set (and not 0), else the plugin's permitWaitingTimeSeconds.
  if (group.schedule_timeout_seconds && *group.schedule_timeout_seconds > 0) {
    return std::chrono::seconds(*group.schedule_timeout_seconds);
  }
  return options_.permit_timeout;
}

std::pair<framework::PostFilterResult, Status> Coscheduling::PostFilter(framework::CycleState& /*state*/,
                                                                        const framework::PodInfo& pod_info,
                                                                        const framework::NodeToStatus& /*statuses*/) {
  const api::Pod& pod = pod_info.pod();
  const std::string_view name = GroupName(pod);
  framework::PodGroupTracker* groups = Groups();
  const auto group = name.empty() || groups == nullptr ? nullptr : groups->Group(pod.metadata.namespace_, name);
  if (group == nullptr) return {{}, Status(Code::kUnschedulable, "can not find pod group")};
  // A member the group's placement left out fails while the members it placed complete the
  // group: that is no reason to give them up (upstream, placing members one by one, tries the
  // ones that do not fit only after the others).
  if (LeftOutOfPlacedGroup(pod)) return {{}, Status(Code::kUnschedulable)};
  const auto members = groups->Members(pod.metadata.namespace_, name);
  const int64_t min_member = group->min_count;
  const auto assigned = static_cast<int64_t>(members.Scheduled());
  // Enough members placed, or close enough that later members may complete the group.
  if (assigned >= min_member) return {{}, Status(Code::kUnschedulable)};
  if ((min_member - assigned) * 100 <= static_cast<int64_t>(args_.pod_group_reject_percentage) * min_member) {
    return {{}, Status(Code::kUnschedulable)};
  }
  RejectWaiting(pod, name, "optimistic rejection in PostFilter");
  const std::string key = group->Key();
  {
    std::lock_guard lock(mu_);
    if (args_.pod_group_backoff_seconds > 0 && members.all >= static_cast<size_t>(min_member)) {
      backed_off_until_ns_[key] =
          handle_.clock().NowNs() +
          std::chrono::nanoseconds(std::chrono::seconds(args_.pod_group_backoff_seconds)).count();
    }
    permitted_until_ns_.erase(key);
  }
  return {
      {},
      Status(Code::kUnschedulable, fmt::format("PodGroup {} gets rejected due to Pod {} is unschedulable even after "
                                               "PostFilter",
                                               key, pod.metadata.name))};
}

std::pair<Status, std::chrono::nanoseconds> Coscheduling::Permit(framework::CycleState& state,
                                                                 const framework::PodInfo& pod,
                                                                 const std::string& node_name) {
  const std::string_view name = GroupName(pod.pod());
  framework::PodGroupTracker* groups = Groups();
  if (!name.empty() && groups != nullptr && groups->Group(pod.pod().metadata.namespace_, name) == nullptr) {
    // A pod that names a group nobody created is refused (upstream: "denied").
    return {Status(Code::kUnschedulable, "PodGroup not found"), {}};
  }
  return GangScheduling::Permit(state, pod, node_name);
}

void Coscheduling::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::string& node_name) {
  GangScheduling::Unreserve(state, pod, node_name);
  const std::string_view name = GroupName(pod.pod());
  framework::PodGroupTracker* groups = Groups();
  if (name.empty() || groups == nullptr) return;
  const auto group = groups->Group(pod.pod().metadata.namespace_, name);
  if (group == nullptr) return;
  // One member given back (its wait timed out, its bind failed): the rest of the group goes too.
  RejectWaiting(pod.pod(), name, "rejection in Unreserve");
  std::lock_guard lock(mu_);
  permitted_until_ns_.erase(group->Key());
}

void Coscheduling::RejectWaiting(const api::Pod& pod, std::string_view name, std::string_view message) {
  // Collected first, rejected after: a rejection unreserves the pod, which calls back here.
  for (const std::string& uid : WaitingMembers(pod.metadata.namespace_, name)) {
    if (uid == pod.metadata.uid) continue;
    if (auto wp = handle_.GetWaitingPod(uid)) wp->Reject(kName, std::string(message));
  }
}

std::vector<framework::ClusterEventWithHint> Coscheduling::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events = GangScheduling::EventsToRegister();
  // A PodGroup's minMember and minResources may change (upstream registers Add|Update).
  for (auto& e : events) {
    if (e.event.resource == framework::EventResource::kPodGroup) {
      e.event.action = framework::action::kAdd | framework::action::kUpdate;
      e.event.label = "PodGroupAdd|PodGroupUpdate";
    }
  }
  return events;
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return std::make_unique<Coscheduling>(handle, *decoded);
}

}  // namespace kubesched::plugins::coscheduling
