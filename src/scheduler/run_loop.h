#pragma once
// The one loop that drives a Scheduler on a virtual clock, shared by `simulate` and `bench`:
// schedule while activeQ has pods (running each binding cycle before the next scheduling cycle),
// fire the scheduler's timers, and when nothing is left to do now, jump the clock to the next
// thing due (a backoff ending, a Permit timeout, a cluster event such as a terminating pod's
// removal) until nothing more can change or the deadline passes.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>

#include "scheduler/scheduler.h"
#include "util/clock.h"

namespace kubesched::scheduler {

//! Where time-driven cluster changes come from (the simulated cluster's graceful removals and
//! scenario timeline; later the store's controllers and node lifecycle).
class ClusterEvents {
 public:
  virtual ~ClusterEvents() = default;
  //! When the next event is due on the clock; nullopt when none is pending.
  virtual std::optional<int64_t> NextEventNs() const = 0;
  //! Carries out every event due by now; whether any was.
  virtual bool FireEvents() = 0;
};

struct RunLoopOptions {
  //! Stop once the next thing due is later than this (clock time, ns).
  int64_t deadline_ns = 0;
  //! When only pods waiting in the unschedulable pool for an event that will not come are left,
  //! retry them once after podMaxInUnschedulablePodsDuration, as upstream's periodic flush would.
  bool flush_unschedulable_once = true;
  //! Called after each scheduling cycle with its wall-clock duration (for latency figures).
  std::function<void(std::chrono::nanoseconds)> on_cycle;
  //! Called whenever everything due at the clock's time is done, before the clock jumps to the
  //! next thing due (and once more before the loop ends): the cluster's state at that time point
  //! is final until `next_ns`, the time the clock jumps to (nullopt when the loop ends there):
  //! simulate's time series and progress.
  std::function<void(std::optional<int64_t> next_ns)> on_idle;
};

//! Runs until nothing more can change (see above). `events` may be null.
void RunUntilIdle(Scheduler& sched, util::VirtualClock& clock, ClusterEvents* events, const RunLoopOptions& options);

//! The loop on real time (kubesched run; the Scheduler made with async_binding): scheduling
//! cycles on the calling thread, each waiting for a pod, while a timer thread fires backoff
//! ends, Permit timeouts, the unschedulable flush and TimedPlugins when due (at least every
//! second, as upstream flushes backoffQ). Returns once `stop` is requested: the cycle under way
//! finishes, and binding cycles in flight complete before it returns.
void RunOnRealTime(Scheduler& sched, const util::Clock& clock, std::stop_token stop);

}  // namespace kubesched::scheduler
