#include "scheduler/simulation.h"

#include <algorithm>

namespace kubesched::scheduler {

std::expected<SimulationResult, std::string> RunSimulation(api::ClusterObjects objects,
                                                           const SimulationOptions& options,
                                                           const framework::Registry& registry) {
  util::VirtualClock clock(0);
  cluster::SimulatedCluster cluster(std::move(objects), clock, options.scheduler.seed, options.creation_order);
  SchedulerOptions sopts = options.scheduler;
  sopts.async_binding = false;
  auto created = Scheduler::Create(sopts, cluster, clock, registry);
  if (!created) return std::unexpected(created.error());
  Scheduler& sched = **created;
  cluster.Subscribe(&sched);

  while (true) {
    while (sched.ScheduleOne()) sched.RunPendingBindings();
    sched.RunPendingBindings();
    sched.FireTimers();
    if (sched.queue().NumActive() > 0) continue;
    std::optional<int64_t> next = sched.NextTimerNs(false);
    if (!next) break;
    if (*next > options.max_virtual_time_ns) break;
    clock.AdvanceTo(*next);
    sched.FireTimers();
  }

  SimulationResult result;
  result.pods = cluster.Pods();
  result.nodes = cluster.Nodes();
  result.evictions = cluster.Evictions();
  result.explanation = sched.explanation();
  result.attempts = sched.attempts();
  result.virtual_time_ns = clock.NowNs();
  for (const auto& p : options.scheduler.config.profiles) result.profiles.push_back(p.scheduler_name);
  return result;
}

}  // namespace kubesched::scheduler
