#pragma once
// What the scheduler, its queue and its framework runtime report for upstream's scheduler
// metrics (pkg/scheduler/metrics). They hold a Recorder pointer that is null unless metrics are
// wanted (`kubesched run`): `simulate` and `bench` pay one pointer check per call site and never
// read a clock for it. The implementation (metrics/scheduler_metrics.h) is the only code that
// knows the Prometheus library.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "framework/status.h"

namespace kubesched::metrics {

using MonotonicClock = std::chrono::steady_clock;

//! Seconds since `start` (upstream's metrics.SinceInSeconds).
inline double SinceInSeconds(MonotonicClock::time_point start) {
  return std::chrono::duration<double>(MonotonicClock::now() - start).count();
}

//! upstream's pluginMetricsSamplePercent: per-plugin durations are recorded for this share of
//! scheduling cycles (timing every plugin on every node would cost more than the plugins).
inline constexpr int kPluginMetricsSamplePercent = 10;

//! Upstream's extension_point label values.
namespace point {
inline constexpr std::string_view kPreFilter = "PreFilter";
inline constexpr std::string_view kFilter = "Filter";
inline constexpr std::string_view kPreFilterExtensionAddPod = "PreFilterExtensionAddPod";
inline constexpr std::string_view kPreFilterExtensionRemovePod = "PreFilterExtensionRemovePod";
inline constexpr std::string_view kPostFilter = "PostFilter";
inline constexpr std::string_view kPreScore = "PreScore";
inline constexpr std::string_view kScore = "Score";
inline constexpr std::string_view kScoreExtensionNormalize = "ScoreExtensionNormalize";
inline constexpr std::string_view kReserve = "Reserve";
inline constexpr std::string_view kUnreserve = "Unreserve";
inline constexpr std::string_view kPermit = "Permit";
inline constexpr std::string_view kPreBind = "PreBind";
inline constexpr std::string_view kBind = "Bind";
inline constexpr std::string_view kPostBind = "PostBind";
}  // namespace point

//! Upstream's schedule_attempts_total result label values.
namespace result {
inline constexpr std::string_view kScheduled = "scheduled";
inline constexpr std::string_view kUnschedulable = "unschedulable";
inline constexpr std::string_view kError = "error";
}  // namespace result

//! The gauges that are read from the queue and the cache when scraped rather than kept up to
//! date on every change.
struct SchedulerState {
  size_t active = 0;         //!< activeQ
  size_t backoff = 0;        //!< backoffQ (both the rejected and the errored pods)
  size_t unschedulable = 0;  //!< the unschedulable pool without the gated pods
  size_t gated = 0;          //!< pods a PreEnqueue plugin holds back
  //! (plugin, profile) → pool pods it rejected or gated (upstream's unschedulable_pods).
  std::map<std::pair<std::string, std::string>, size_t> unschedulable_by_plugin;
  size_t cache_nodes = 0;
  size_t cache_pods = 0;
  size_t cache_assumed_pods = 0;
};

//! Observations, thread-safe (binding cycles and Score run on several threads).
class Recorder {
 public:
  virtual ~Recorder() = default;
  //! One scheduling attempt's outcome (result::k*) and its duration from the start of the
  //! scheduling cycle (through the binding cycle for a scheduled pod).
  virtual void ObserveAttempt(std::string_view result, std::string_view profile, double seconds) = 0;
  //! The scheduling algorithm's part of a cycle (Filter through host selection).
  virtual void ObserveAlgorithm(double seconds) = 0;
  //! A pod bound after `attempts` attempts, `sli_seconds` after it first entered the queue.
  virtual void ObservePodScheduled(int attempts, double sli_seconds) = 0;
  //! One run of a profile's extension point with the status it returned.
  virtual void ObserveExtensionPoint(std::string_view extension_point, framework::Code code, std::string_view profile,
                                     double seconds) = 0;
  //! One plugin's run at one extension point (sampled: only for some cycles, as upstream).
  virtual void ObservePlugin(std::string_view plugin, std::string_view extension_point, framework::Code code,
                             double seconds) = 0;
  //! A pod entered a sub-queue ("active", "backoff", "unschedulable") on `event`.
  virtual void ObserveIncomingPod(std::string_view queue, std::string_view event) = 0;
  //! A PostFilter (preemption) attempt.
  virtual void ObservePreemptionAttempt() = 0;
  //! Victims evicted for one preemption.
  virtual void ObservePreemptionVictims(size_t victims) = 0;
};

}  // namespace kubesched::metrics
