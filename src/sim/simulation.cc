#include "sim/simulation.h"

#include <algorithm>
#include <any>
#include <chrono>
#include <memory>

#include "extender/http_extender.h"
#include "plugins/coscheduling/coscheduling.h"
#include "queue/scheduling_queue.h"
#include "scheduler/run_loop.h"

namespace kubesched::sim {

int64_t SimulationStartTime(const api::ClusterObjects& objects, int64_t now_ns) {
  int64_t latest = 0;
  auto see = [&](const api::ObjectMeta& m) {
    latest = std::max(latest, m.creation_timestamp_ns);
    if (m.deletion_timestamp_ns) latest = std::max(latest, *m.deletion_timestamp_ns);
  };
  for (const auto& n : objects.nodes) see(n->metadata);
  for (const auto& p : objects.pods) {
    see(p->metadata);
    if (p->status.start_time_ns) latest = std::max(latest, *p->status.start_time_ns);
  }
  for (const auto& w : objects.workloads) see(w->metadata);
  for (const auto& ns : objects.namespaces) see(ns->metadata);
  // A whole second: the API's timestamps (creation, start, deletion) have no finer precision.
  const int64_t start = std::max(now_ns, latest + util::kNanosPerSecond);
  return (start + util::kNanosPerSecond - 1) / util::kNanosPerSecond * util::kNanosPerSecond;
}

namespace {

void AddGangReport(const std::any& statistics, SimulationResult& result) {
  const auto* g = std::any_cast<plugins::gang_scheduling::GangReport>(&statistics);
  if (g == nullptr || g->stats.cycles == 0) return;
  if (!result.gangs) result.gangs.emplace();
  auto& o = *result.gangs;
  o.stats.cycles += g->stats.cycles;
  o.stats.placed += g->stats.placed;
  o.stats.unschedulable += g->stats.unschedulable;
  o.stats.pods_planned += g->stats.pods_planned;
  o.stats.domains_tried += g->stats.domains_tried;
  o.stats.all_optimal = o.stats.all_optimal && g->stats.all_optimal;
  o.stats.max_seconds = std::max(o.stats.max_seconds, g->stats.max_seconds);
  o.stats.seconds += g->stats.seconds;
  o.stats.preemptions += g->stats.preemptions;
  o.stats.preempted_pods += g->stats.preempted_pods;
  o.stats.moved_pods += g->stats.moved_pods;
  o.groups.insert(o.groups.end(), g->groups.begin(), g->groups.end());
}

// Adds what the profile's group cycles (GangScheduling's, Coscheduling's) decided to the result
// (none ran: nothing).
void AddGangReport(const framework::runtime::Framework& fwk, SimulationResult& result) {
  for (const std::string_view plugin :
       {plugins::gang_scheduling::GangScheduling::kName, plugins::coscheduling::Coscheduling::kName}) {
    AddGangReport(fwk.PluginStatistics(plugin), result);
  }
}

// Runs the loop to quiescence, recording the run over time and reporting progress as asked.
void RunRecorded(scheduler::Scheduler& sched, util::VirtualClock& clock, SimulatedCluster& cluster,
                 scheduler::ClusterEvents& events, const SimulationOptions& options, int64_t start_ns,
                 SimulationResult& result) {
  scheduler::RunLoopOptions loop;
  // Counted from the timeline's last event: a pod created late in a long timeline is not lost.
  const int64_t timeline_end_ns = std::max(start_ns, cluster.LastTimelineEventNs().value_or(start_ns));
  loop.deadline_ns = timeline_end_ns + options.max_virtual_time_ns;
  std::unique_ptr<TimeSeriesRecorder> recorder;
  if (options.record_timeseries) {
    std::vector<std::string> profiles;
    for (const auto& p : options.scheduler.config.profiles) profiles.push_back(p.scheduler_name);
    recorder = std::make_unique<TimeSeriesRecorder>(
        start_ns, options.timeseries_interval_ns.value_or((timeline_end_ns - start_ns) / 2000), std::move(profiles));
  }
  auto last_progress = std::chrono::steady_clock::now();
  loop.on_idle = [&](std::optional<int64_t> next_ns) {
    if (recorder) recorder->Observe(clock.NowNs(), next_ns, sched, cluster);
    if (!options.on_progress) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress < std::chrono::milliseconds(200)) return;
    last_progress = now;
    options.on_progress(clock.NowNs() - start_ns, timeline_end_ns - start_ns, sched.attempts());
  };
  scheduler::RunUntilIdle(sched, clock, &events, loop);
  if (recorder) result.timeseries = recorder->Finish(clock.NowNs(), sched, cluster);
}

}  // namespace

std::expected<SimulationResult, std::string> RunSimulation(api::ClusterObjects objects,
                                                           const SimulationOptions& options,
                                                           const framework::Registry& registry) {
  const int64_t wall_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const int64_t start_ns = options.start_time_ns.value_or(SimulationStartTime(objects, wall_ns));
  // Objects the input gives no creationTimestamp were created when the simulation starts, as the
  // API server stamps them when they are applied.
  auto stamp = [&](api::ObjectMeta& m) {
    if (m.creation_timestamp_ns == 0) m.creation_timestamp_ns = start_ns;
  };
  for (auto& n : objects.nodes) stamp(n->metadata);
  for (auto& p : objects.pods) stamp(p->metadata);
  for (auto& w : objects.workloads) stamp(w->metadata);
  for (auto& ns : objects.namespaces) stamp(ns->metadata);

  SimulationResult result;
  for (const auto& p : objects.pods) {
    if (!p->spec.node_name.empty()) result.bound_in_input.insert(p->metadata.uid);
  }

  // Owned together and torn down in reverse order (the scheduler watches the cluster; both read
  // the clock): with the result, or later (SimulationResult::run_state).
  struct RunState {
    std::unique_ptr<util::VirtualClock> clock;
    std::unique_ptr<sim::SimulatedCluster> cluster;
    std::unique_ptr<scheduler::Scheduler> scheduler;
  };
  auto state = std::make_shared<RunState>();
  state->clock = std::make_unique<util::VirtualClock>(start_ns);
  util::VirtualClock& clock = *state->clock;
  std::unique_ptr<sim::SimulatedCluster>& loaded = state->cluster;
  try {
    loaded = std::make_unique<sim::SimulatedCluster>(std::move(objects), clock, options.scheduler.seed,
                                                     options.creation_order);
  } catch (const std::exception& e) {
    return std::unexpected(e.what());  // an object the store refused (named in the message)
  }
  sim::SimulatedCluster& cluster = *loaded;
  scheduler::SchedulerOptions sopts = options.scheduler;
  sopts.async_binding = false;
  sopts.record_failed_attempts = true;  // SimulationResult::failed_attempts
  if (sopts.extenders.empty()) {
    auto extenders = extender::BuildExtenders(sopts.config.extenders);
    if (!extenders) return std::unexpected(extenders.error());
    sopts.extenders = std::move(*extenders);
  }
  auto created = scheduler::Scheduler::Create(sopts, cluster, clock, registry);
  if (!created) return std::unexpected(created.error());
  state->scheduler = std::move(*created);
  scheduler::Scheduler& sched = *state->scheduler;
  cluster.Subscribe(&sched);

  // The simulated cluster's graceful removals and scenario timeline drive the loop's clock too.
  struct Events final : scheduler::ClusterEvents {
    sim::SimulatedCluster& cluster;
    explicit Events(sim::SimulatedCluster& c) : cluster(c) {}
    std::optional<int64_t> NextEventNs() const override { return cluster.NextEventNs(); }
    bool FireEvents() override { return cluster.FireEvents(); }
  } events(cluster);
  RunRecorded(sched, clock, cluster, events, options, start_ns, result);

  result.run_state = state;
  result.pods = cluster.Pods();
  result.nodes = cluster.Nodes();
  result.claims = cluster.Claims();
  result.volumes = cluster.Volumes();
  result.resource_claims = cluster.ResourceClaims();
  result.evictions = cluster.Evictions();
  result.explanation = sched.explanation();
  result.failed_attempts = sched.failed_attempts();
  for (const queue::PendingPod& p : sched.queue().PendingPods()) {
    if (p.info.gated && !p.info.gating_message.empty()) {
      result.held_messages.emplace(p.info.pod().metadata.uid, p.info.gating_message);
    }
  }
  result.attempts = sched.attempts();
  result.start_time_ns = start_ns;
  result.virtual_time_ns = clock.NowNs();
  for (const auto& p : options.scheduler.config.profiles) {
    result.profiles.push_back(p.scheduler_name);
    auto* fwk = sched.FrameworkFor(p.scheduler_name);
    if (fwk) result.profile_configs.push_back(profile::DescribeProfile(*fwk, p, options.scheduler.config));
    const std::any xnode_statistics =
        fwk ? fwk->PluginStatistics(plugins::cross_node_preemption::CrossNodePreemption::kName) : std::any();
    if (const auto* xnode = std::any_cast<plugins::cross_node_preemption::CrossNodeReport>(&xnode_statistics)) {
      if (!result.cross_node) result.cross_node.emplace();
      auto& c = *result.cross_node;
      const auto& s = xnode->stats;
      c.stats.attempts += s.attempts;
      c.stats.plans += s.plans;
      c.stats.no_plan += s.no_plan;
      c.stats.evictions += s.evictions;
      c.stats.moves += s.moves;
      c.stats.optimal += s.optimal;
      c.stats.expired += s.expired;
      c.stats.completed += s.completed;
      c.stats.protected_pods += s.protected_pods;
      for (const auto& [why, n] : s.expired_by) c.stats.expired_by[why] += n;
      c.stats.plan_records.insert(c.stats.plan_records.end(), s.plan_records.begin(), s.plan_records.end());
      c.stats.max_gap = std::max(c.stats.max_gap, s.max_gap);
      c.stats.solver_seconds += s.solver_seconds;
      c.stats.decision_seconds.insert(c.stats.decision_seconds.end(), s.decision_seconds.begin(),
                                      s.decision_seconds.end());
      c.active_plans += xnode->active_plans;
      c.held_moves += xnode->held_moves;
    }
    if (fwk) AddGangReport(*fwk, result);
    const std::any batch_statistics =
        fwk ? fwk->PluginStatistics(plugins::batch_placement::BatchPlacement::kName) : std::any();
    const auto* batch = std::any_cast<plugins::batch_placement::BatchStats>(&batch_statistics);
    if (!batch) continue;
    const auto& s = *batch;
    if (!result.optimizer) {
      result.optimizer = s;
      continue;
    }
    auto& o = *result.optimizer;
    o.batches += s.batches;
    o.plans += s.plans;
    o.pods += s.pods;
    o.placed += s.placed;
    o.planned += s.planned;
    o.run_bound += s.run_bound;
    o.stranded += s.stranded;
    o.all_optimal = o.all_optimal && s.all_optimal;
    o.max_gap = std::max(o.max_gap, s.max_gap);
    o.max_placed_gap = std::max(o.max_placed_gap, s.max_placed_gap);
    o.solver_seconds += s.solver_seconds;
    o.seconds += s.seconds;
    if (o.solver.empty()) o.solver = s.solver;
  }
  return result;
}

}  // namespace kubesched::sim
