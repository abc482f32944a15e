#include "scheduler/run_loop.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "queue/scheduling_queue.h"

namespace kubesched::scheduler {

void RunUntilIdle(Scheduler& sched, util::VirtualClock& clock, ClusterEvents* events, const RunLoopOptions& options) {
  using WallClock = std::chrono::steady_clock;
  bool flushed_unschedulable = !options.flush_unschedulable_once;
  // The earlier of the scheduler's next timer and the cluster's next event.
  auto next_due = [&](bool include_unschedulable) {
    std::optional<int64_t> next = sched.NextTimerNs(include_unschedulable);
    if (events) {
      if (auto event = events->NextEventNs(); event && (!next || *event < *next)) next = event;
    }
    return next;
  };
  auto schedule_one = [&] {
    if (!options.on_cycle) return sched.ScheduleOne();
    const auto t0 = WallClock::now();
    const bool did = sched.ScheduleOne();
    const auto t1 = WallClock::now();
    if (did) options.on_cycle(t1 - t0);
    return did;
  };
  while (true) {
    // Cluster events due now (a timeline creation at 0s, removals a deletion made due at once).
    if (events && events->FireEvents()) sched.RunPendingBindings();
    while (schedule_one()) sched.RunPendingBindings();
    sched.FireTimers();
    // Timers may have ended Permit waits: their binding cycles run before anything else.
    sched.RunPendingBindings();
    if (sched.queue().NumActive() > 0) continue;
    std::optional<int64_t> next = next_due(false);
    if (!next && !flushed_unschedulable) {
      // Only pods waiting for an event that will not come are left. Every pod now in the pool
      // has waited podMaxInUnschedulablePodsDuration by then.
      if (sched.NextTimerNs(true)) next = clock.NowNs() + queue::kDefaultPodMaxInUnschedulablePodsNs + 1;
      flushed_unschedulable = true;
    }
    const bool last = !next || *next > options.deadline_ns;
    if (options.on_idle) options.on_idle(last ? std::nullopt : next);
    if (last) break;
    clock.AdvanceTo(std::max(*next, clock.NowNs()));
    // The cluster's events first: a victim's removal is what a pod in backoff may be waiting for.
    if (events) events->FireEvents();
    sched.FireTimers();
  }
}

void RunOnRealTime(Scheduler& sched, const util::Clock& clock, std::stop_token stop) {
  std::jthread timers([&sched, &clock, stop](std::stop_token own) {
    std::mutex mu;
    std::condition_variable_any cv;
    constexpr int64_t kMaxWaitNs = 1'000'000'000;
    constexpr int64_t kMinWaitNs = 1'000'000;
    while (!stop.stop_requested() && !own.stop_requested()) {
      sched.FireTimers();
      int64_t wait = kMaxWaitNs;
      if (auto next = sched.NextTimerNs(true)) wait = std::clamp(*next - clock.NowNs(), kMinWaitNs, kMaxWaitNs);
      std::unique_lock lock(mu);
      cv.wait_for(lock, own, std::chrono::nanoseconds(wait), [&stop] { return stop.stop_requested(); });
    }
  });
  while (sched.ScheduleOne(stop)) {
  }
  timers.request_stop();
  timers.join();
  sched.RejectWaitingPods("scheduler is shutting down");
  sched.WaitForBindings();
}

}  // namespace kubesched::scheduler
