#pragma once
// Coscheduling: all or nothing for a scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1,
// kubernetes-sigs/scheduler-plugins' coscheduling plugin), whose members carry the label
// scheduling.x-k8s.io/pod-group. Upstream places members one by one and holds them at Permit until
// minMember are; kubesched keeps that contract (its checks, messages, timeouts, queue order) and
// places the group as GangScheduling does: the first member popped places every pending member
// jointly with the optimizer, none when fewer than minMember fit.
//
// Upstream's behaviour, kept:
//   QueueSort   priority, then the PodGroup's creation (the pod's first attempt when it has none),
//               then namespace/name.
//   PreFilter   (as the group check before the group's placement) "podGroup ns/pg failed
//               recently" during a backoff; fewer labelled pods than minMember (and fewer that
//               are not scheduling-gated); the cluster's free resources short of minResources (and
//               minMember pods), counting the group's own pods as free: UnschedulableAndUnresolvable.
//   PostFilter  a member that fits nowhere rejects the group's waiting members unless minMember
//               are placed or the gap is at most podGroupRejectPercentage, and backs the group off.
//   Permit      waits (scheduleTimeoutSeconds, else permitWaitingTimeSeconds) until minMember are
//               reserved or bound, then allows them all; a member of a PodGroup that does not exist
//               is refused ("PodGroup not found").
//   Unreserve   rejects the group's other waiting members.
// A pod without the label passes every point. The plugin writes no PodGroup status: upstream's
// PodGroup controller does.

#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "plugins/gang_scheduling/gang_scheduling.h"

namespace kubesched::plugins::coscheduling {

//! CoschedulingArgs (scheduler-plugins' config, kubescheduler.config.k8s.io/v1).
struct CoschedulingArgs {
  //! How long a member waits at Permit when its PodGroup sets no scheduleTimeoutSeconds.
  int64_t permit_waiting_time_seconds = 60;
  //! How long a group that failed is refused before it is tried again (0: not at all).
  int64_t pod_group_backoff_seconds = 0;
  //! PostFilter leaves the waiting members alone while the unplaced share of minMember is at most
  //! this percentage.
  int32_t pod_group_reject_percentage = 10;
};

std::expected<CoschedulingArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                  const std::string& path);
std::string EncodeArgs(const CoschedulingArgs& args);

class Coscheduling final : public gang_scheduling::GangScheduling,
                           public framework::QueueSortPlugin,
                           public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "Coscheduling";

  Coscheduling(framework::Handle& handle, CoschedulingArgs args);

  std::string_view Name() const override { return kName; }
  //! No gate before the queue: upstream's checks are at PreFilter.
  framework::Status PreEnqueue(const api::Pod& pod) override;
  //! Priority, then the group's creation time (the pod's first attempt without a group), then
  //! namespace/name.
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override;
  std::pair<framework::PostFilterResult, framework::Status> PostFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      const framework::NodeToStatus& filtered_statuses) override;
  std::pair<framework::Status, std::chrono::nanoseconds> Permit(framework::CycleState& state,
                                                                const framework::PodInfo& pod,
                                                                const std::string& node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod, const std::string& node_name) override;
  //! A pod added (a sibling may complete the group) and a PodGroup added or changed.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  //! Upstream's PreFilter checks of a member of `group`, run before the group is placed: the
  //! message the member is rejected with (UnschedulableAndUnresolvable), or empty.
  std::string Precheck(const api::Pod& pod, const api::PodGroup& group) override;
  //! The group's scheduleTimeoutSeconds, else permitWaitingTimeSeconds.
  std::chrono::nanoseconds PermitTimeout(const api::PodGroup& group) const override;

 private:
  //! "resource gap: map[cpu:2 pods:1]" when the snapshot's free room (the group's own pods'
  //! requests counted as free) is short of minResources and minMember pods; empty otherwise.
  std::string ResourceGap(const api::PodGroup& group) const;
  //! Rejects the group's waiting members with `message`.
  void RejectWaiting(const api::Pod& pod, std::string_view name, std::string_view message);

  const CoschedulingArgs args_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> backed_off_until_ns_;  // group key -> end of its backoff
  std::map<std::string, int64_t> permitted_until_ns_;   // group key -> end of its passed resource check
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::coscheduling
