#pragma once
// Runs the scheduler against a simulated cluster on a virtual clock until nothing more can
// change: activeQ empty, no pod backing off, no binding cycle queued or waiting at Permit, no
// cluster event pending (a terminating pod's removal after its grace period, the scenario
// timeline's creations and deletions: SimulatedCluster::NextEventNs), and the pods left in the unschedulable pool
// retried once after podMaxInUnschedulablePodsDuration (as upstream's periodic flush would) without any of them getting
// placed for good.
//
// The virtual clock keeps Unix time, like the timestamps in manifests: it starts at the wall
// clock (or just after the latest timestamp in the input, if that is later), so pods bound during
// the simulation are younger than the pods that were running before it.

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/manifest.h"
#include "framework/args_view.h"
#include "framework/registry.h"
#include "plugins/batch_placement/batch_placement.h"
#include "plugins/cross_node_preemption/cross_node_preemption.h"
#include "plugins/gang_scheduling/gang_scheduling.h"
#include "profile/profile_config.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "sim/timeseries.h"

namespace kubesched::sim {

struct SimulationOptions {
  scheduler::SchedulerOptions scheduler;
  //! Stop after this much virtual time past the start, or past the timeline's last creation or
  //! deletion, even if pods are still backing off (pods that fail with errors forever would
  //! otherwise retry forever).
  int64_t max_virtual_time_ns = 3600LL * util::kNanosPerSecond;
  //! Unix time (ns) at which the simulation starts; unset: now (see above). Objects loaded
  //! without a creationTimestamp were created at this time.
  std::optional<int64_t> start_time_ns;
  //! The order in which the pending pods are created (see cluster/creation_order.h).
  cluster::CreationOrder creation_order = cluster::CreationOrder::kControllers;
  //! Record the run over time (SimulationResult::timeseries).
  bool record_timeseries = false;
  //! The least virtual time between two samples; unset: every time point the run stops at, or
  //! with a timeline, a 2,000th of the time to its last event.
  std::optional<int64_t> timeseries_interval_ns;
  //! Called as the virtual clock advances (at most a few times a second of wall time) with the
  //! virtual time since the start and the timeline's span (0 without a timeline): for a progress
  //! line on a terminal.
  std::function<void(int64_t elapsed_ns, int64_t timeline_ns, size_t attempts)> on_progress;
};

//! SimulationResult::cross_node: CrossNodePreemption's statistics summed over the profiles.
using SimulationCrossNode = plugins::cross_node_preemption::CrossNodeReport;

struct SimulationResult {
  std::vector<std::shared_ptr<const api::Pod>> pods;  // final state, creation order
  std::vector<std::shared_ptr<const api::Node>> nodes;
  //! The claims and volumes at the end (the PV controller's bindings and provisioned volumes).
  std::vector<std::shared_ptr<const api::PersistentVolumeClaim>> claims;
  std::vector<std::shared_ptr<const api::PersistentVolume>> volumes;
  //! The ResourceClaims at the end (DynamicResources' allocations and reservations).
  std::vector<std::shared_ptr<const api::ResourceClaim>> resource_claims;
  std::vector<sim::Eviction> evictions;
  std::optional<scheduler::AttemptExplanation> explanation;
  //! By pod uid, each pod's last failed attempt (its Filter reasons with their node counts): the
  //! structured form of the FailedScheduling message a pending pod carries.
  std::unordered_map<std::string, scheduler::FailedAttempt> failed_attempts;
  //! By pod uid, why a PreEnqueue plugin holds a pending pod back from the queue (its message):
  //! no scheduling attempt, and so no PodScheduled condition, explains such a pod.
  std::unordered_map<std::string, std::string> held_messages;
  size_t attempts = 0;
  int64_t start_time_ns = 0;    //!< Unix time the simulation started at
  int64_t virtual_time_ns = 0;  //!< Unix time it ended at
  //! Uids of the pods that were already bound (or had finished) in the input.
  std::unordered_set<std::string> bound_in_input;
  //! Profile names, to tell pods this scheduler is responsible for.
  std::vector<std::string> profiles;
  //! What each profile ran, as its framework was built: the configuration that produced this
  //! placement, for reports.
  using ProfileConfig = profile::ProfileConfig;
  std::vector<ProfileConfig> profile_configs;
  //! What the batch placements of every profile with BatchPlacement reported; unset when no
  //! profile has it.
  std::optional<plugins::batch_placement::BatchStats> optimizer;
  //! What the group cycles of GangScheduling decided, over every profile; unset when no group
  //! cycle ran.
  std::optional<plugins::gang_scheduling::GangReport> gangs;
  //! What CrossNodePreemption decided, over every profile that has it; unset when none has it.
  using CrossNode = SimulationCrossNode;
  std::optional<CrossNode> cross_node;
  //! The run over time, when SimulationOptions::record_timeseries.
  std::optional<TimeSeries> timeseries;
  //! The simulated cluster, scheduler and clock the run used, released with the result. A caller
  //! about to exit may keep them instead (cmd's simulate does): taking a large cluster apart costs
  //! a noticeable share of a run.
  std::shared_ptr<void> run_state;
};

//! The Unix time a simulation of `objects` starts at: `now_ns`, or one second after the latest
//! creation, start or deletion timestamp in the input when that is later, rounded up to a whole
//! second (the precision of the API's timestamps).
int64_t SimulationStartTime(const api::ClusterObjects& objects, int64_t now_ns);

std::expected<SimulationResult, std::string> RunSimulation(api::ClusterObjects objects,
                                                           const SimulationOptions& options,
                                                           const framework::Registry& registry);

}  // namespace kubesched::sim
