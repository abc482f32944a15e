#pragma once
// GangScheduling: all or nothing for a gang PodGroup (scheduling.k8s.io, upstream's
// gangscheduling plugin of the 1.36 API). A member waits before the queue until its PodGroup
// exists and minCount members exist (PreEnqueue). When the first member is popped, the group's
// scheduling cycle (PodGroupCycle) places all its pending members jointly with the optimizer:
// every constraint of every member, in one domain of the group's topology key when it has one.
// When fewer than minCount fit, none is placed: every member is rejected at PreFilter with the
// group's reason (nothing is reserved for a gang that cannot complete, and no member preempts
// for itself). Otherwise the placement becomes a plan (the nominator holds its nodes) and the
// members' own cycles follow it, one after the other. A member that passes Reserve waits at
// Permit until minCount members are reserved or bound, and then all of them go to binding
// together; a wait longer than five minutes gives the member back (Unreserve). Gangs are decided
// in the order their members leave the queue (priority, then creation). Pods of a basic PodGroup,
// and pods of none, pass.
//
// The class serves both PodGroup APIs (GangOptions): GangScheduling is upstream's plugin over
// scheduling.k8s.io PodGroups; Coscheduling (plugins/coscheduling) derives from it for
// scheduler-plugins PodGroups, with that plugin's checks, timeouts and messages.

#include <any>
#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/statistics.h"
#include "optimizer/placement.h"

namespace kubesched::plugins::gang_scheduling {

//! How long a reserved member waits at Permit for the rest of its gang (upstream's
//! permitTimeoutDuration).
inline constexpr std::chrono::nanoseconds kPermitTimeout = std::chrono::minutes(5);

//! How long a group's preemption may take beyond its victims' grace period before the group
//! stops waiting for it.
inline constexpr int64_t kPreemptionSlackSeconds = 60;

//! How long the optimizer may take over one group's placement (per topology domain).
inline constexpr double kSolverTimeoutSeconds = 10;

//! What the group cycles decided (simulate's summary).
struct GangStats {
  int64_t cycles = 0;          //!< group scheduling cycles run
  int64_t placed = 0;          //!< of them, placed the group (minCount or more members)
  int64_t unschedulable = 0;   //!< of them, found no room for minCount members
  int64_t pods_planned = 0;    //!< members placed by a group's plan
  int64_t domains_tried = 0;   //!< topology domains solved over all cycles
  bool all_optimal = true;     //!< every solve proved its placement optimal
  double max_seconds = 0;      //!< the longest group cycle
  double seconds = 0;          //!< sum over group cycles
  int64_t preemptions = 0;     //!< group preemptions applied (KEP-5710)
  int64_t preempted_pods = 0;  //!< pods they evicted, moved ones included
  int64_t moved_pods = 0;      //!< of them, moved: room held elsewhere for their replacements
};

//! What the last group cycle decided about a group (simulate's output, --explain).
struct GroupDecision {
  bool placed = false;
  int32_t min_count = 0;
  int32_t members = 0;         //!< pending members the cycle placed jointly
  int32_t needed = 0;          //!< of them, how many had to be placed (minCount less those already placed)
  int32_t best_placed = 0;     //!< the most members any candidate domain takes
  std::string domain;          //!< "key=value" of the chosen domain; empty without a topology key
  int32_t domains = 0;         //!< candidate domains (1 without a topology key)
  int32_t domains_solved = 0;  //!< of them, solved (the others lacked room in total, or one took every member first)
  bool optimal = false;
  double seconds = 0;
  std::string message;         //!< why the group is unschedulable; empty when placed
  int32_t preempted_pods = 0;  //!< the group preempted this many pods to make room (moved ones included)
  int32_t moved_pods = 0;      //!< of them, moved
};

//! One candidate domain's placement of a group.
struct DomainPlacement {
  std::string domain;  //!< "key=value"; empty: the whole cluster
  optimizer::PlacementResult result;
  int64_t free_milli_cpu = 0;  //!< the domain's free cpu before the placement
};

//! Which PodGroups the plugin serves and how (GangScheduling's by default).
struct GangOptions {
  std::string_view name = "GangScheduling";
  api::PodGroupApi api = api::PodGroupApi::kScheduling;
  //! How long a reserved member waits at Permit when its group does not say.
  std::chrono::nanoseconds permit_timeout = kPermitTimeout;
  //! Write the PodGroupScheduled condition (scheduling.k8s.io); a scheduler-plugins PodGroup's
  //! status is its controller's.
  bool write_conditions = true;
  //! Workload-aware preemption (KEP-5710) for a gang the group cycle found no room for
  //! (group_preemption.h): scheduling.k8s.io's; scheduler-plugins' Coscheduling has none.
  bool preempt = true;
};

//! What the plugin reports (Statistics()): its totals and each group's last decision.
struct GangReport {
  GangStats stats;
  std::vector<std::pair<std::string, GroupDecision>> groups;  //!< by group key ("namespace/name")
};

class GangScheduling : public framework::PreEnqueuePlugin,
                       public framework::PreFilterPlugin,
                       public framework::ReservePlugin,
                       public framework::PermitPlugin,
                       public framework::EnqueueExtensions,
                       public framework::PodGroupCyclePlugin,
                       public framework::PodExplainer,
                       public framework::StatisticsReporter {
 public:
  static constexpr std::string_view kName = "GangScheduling";

  explicit GangScheduling(framework::Handle& handle, GangOptions options = {}) : handle_(handle), options_(options) {}

  std::string_view Name() const override { return options_.name; }
  //! UnschedulableAndUnresolvable while the pod's PodGroup is unknown
  //! ("waiting for pods's pod group \"pg\" to appear in scheduling queue") or a gang has fewer
  //! than minCount members ("waiting for minCount pods from a gang to appear in scheduling queue").
  framework::Status PreEnqueue(const api::Pod& pod) override;
  //! The group cycle's verdict on the member: a member of a group the cycle found no room for is
  //! rejected with the group's reason, as unresolvable (preempting for one member of a gang that
  //! cannot complete would be waste); the others pass.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! Counts the member as assumed (Unreserve: no longer).
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod, const std::string& node_name) override;
  //! Wait (up to kPermitTimeout) while fewer than minCount members are assumed or bound, after
  //! activating the unscheduled ones; once minCount are, allows every waiting member.
  std::pair<framework::Status, std::chrono::nanoseconds> Permit(framework::CycleState& state,
                                                                const framework::PodInfo& pod,
                                                                const std::string& node_name) override;
  //! A member added (to the queue or a node) and the PodGroup added; for a group the cycle found
  //! no room for, the events that make room (a node added or changed, a pod gone).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  //! At the start of a member's cycle: unless the last group cycle decided about this member (and
  //! it has not had its cycle since), a new group cycle over the group's pending members, whose
  //! other members are then activated to follow it.
  void PodGroupCycle(const framework::PodInfo& pod) override;
  //! The last group cycle of the pod's group: placed where, or why not.
  std::string ExplainPod(const api::Pod& pod) const override;

  GangStats stats() const;
  //! A GangReport.
  std::any Statistics() const override;
  //! The last decision about the group "namespace/name", if a cycle made one.
  std::optional<GroupDecision> Decision(const std::string& group_key) const;

 protected:
  //! The name of the pod's group in the plugin's API; empty when it is in none.
  std::string_view GroupName(const api::Pod& pod) const { return api::PodGroupOf(pod, options_.api); }
  //! The scheduler's record of the plugin's PodGroups; null when it keeps none.
  framework::PodGroupTracker* Groups() const { return handle_.PodGroups(options_.api); }
  //! Why the member may not be placed this cycle before any placement is tried (a message), or
  //! empty. GangScheduling has none (PreEnqueue holds incomplete gangs).
  virtual std::string Precheck(const api::Pod& /*pod*/, const api::PodGroup& /*group*/) { return ""; }
  //! How long a member of `group` waits at Permit.
  virtual std::chrono::nanoseconds PermitTimeout(const api::PodGroup& /*group*/) const {
    return options_.permit_timeout;
  }
  //! Whether the pod's current cycle rejects it because its group's last cycle placed the group
  //! without it (minCount members are planned: the group completes without this one).
  bool LeftOutOfPlacedGroup(const api::Pod& pod) const;
  //! The waiting pods (uids) of the group `name` in `namespace_`.
  std::vector<std::string> WaitingMembers(std::string_view namespace_, std::string_view name);
  //! Queue the pod when the event's added pod is in its group / the event's PodGroup is its group.
  framework::QueueingHint SameGroupPodAdded(const api::Pod& pod, const framework::EventObjects& event) const;
  framework::QueueingHint SameGroupChanged(const api::Pod& pod, const framework::EventObjects& event) const;

  framework::Handle& handle_;
  const GangOptions options_;

 private:
  //! One group's cycle over its pending members (in queue order). Appends the order the members'
  //! own cycles must run in to `order`.
  void ScheduleGroup(const api::PodGroup& group, const std::vector<framework::PodInfoPtr>& members,
                     std::vector<std::shared_ptr<const api::Pod>>& order);
  //! The group's placement in each candidate domain (one: the whole cluster, without a topology
  //! key) and the best one, if any takes `needed` members.
  struct DomainSearch {
    std::map<std::string, std::vector<const framework::NodeInfo*>> domains;  // by label value
    std::vector<DomainPlacement> tried;                                      // the domains solved
    std::vector<std::string> per_domain;                                     // what each domain offers, for the message
    const DomainPlacement* best = nullptr;
  };
  //! `already`: members placed before this cycle; `needed`: how many more minCount wants.
  DomainSearch PlaceInDomains(const api::PodGroup& group, const std::vector<framework::PodInfoPtr>& members,
                              int32_t already, int32_t needed, GroupDecision& d);
  //! After a group cycle found no room: waits for the group's preemption in progress, or preempts
  //! for the group (group_preemption.h). True when the members are to wait for a preemption (their
  //! verdicts set, the decision recorded); else false, with why preemption does not help added to
  //! the decision's message.
  bool PreemptForGroup(const api::PodGroup& group, const std::vector<framework::PodInfoPtr>& members, GroupDecision& d,
                       size_t domains_solved, std::vector<std::shared_ptr<const api::Pod>>& order);
  //! Ends the group's preemption record, releasing the holds of moves no replacement took.
  void EndPreemptionLocked(const std::string& group_key);
  //! Adds a group cycle's decision to the statistics and keeps it (under mu_).
  void RecordLocked(const api::PodGroup& group, const GroupDecision& d, size_t domains_solved, int64_t planned);
  //! Records the verdict for a member's next cycle (under mu_).
  void SetNextVerdictLocked(const framework::PodInfo& member, const api::PodGroup& group, std::string reject);

  //! Writes the PodGroupScheduled condition when it differs from the last one written.
  void WriteCondition(const api::PodGroup& group, const api::PodCondition& condition);

  mutable std::mutex mu_;
  //! The group cycle's verdict per member (by uid) for its next cycle: empty to go ahead (a plan,
  //! if any, is in the nominator), else why the member is rejected. Taken by PodGroupCycle into
  //! verdict_ when the member's cycle starts.
  struct Verdict {
    std::string group;   // group key
    std::string reject;  // empty: go ahead
  };
  std::unordered_map<std::string, Verdict> next_verdict_;
  //! The verdict of the member's current (or last) cycle, which PreFilter gives.
  std::unordered_map<std::string, Verdict> verdict_;
  bool ticking_ = false;
  std::map<std::string, GroupDecision> decisions_;         // by group key
  std::map<std::string, std::string> conditions_written_;  // by group key: status, reason, message
  //! A group's preemption in progress: its victims (uid, node) and the holds of its moves; the
  //! members wait while a victim is still on its node, until the deadline.
  struct Preemption {
    std::vector<std::pair<std::string, std::string>> victims;
    std::vector<framework::PodInfoPtr> placeholders;
    int64_t deadline_ns = 0;
  };
  std::map<std::string, Preemption> preemptions_;  // by group key
  GangStats stats_;
};

//! Queue when the added pod is in the same group as `pod`.
framework::QueueingHint IsSchedulableAfterPodAdded(const api::Pod& pod, const framework::EventObjects& event);
//! Queue when the added PodGroup is `pod`'s.
framework::QueueingHint IsSchedulableAfterPodGroupAdded(const api::Pod& pod, const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::gang_scheduling
