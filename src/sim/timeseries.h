#pragma once
// A simulation's run over time (`simulate --timeseries`, the report's charts): the cluster's
// state sampled as the virtual clock advances. Without an interval, a sample is taken whenever
// the run has done everything due at a time point (before the clock jumps to the next one); with
// one, at the multiples of the interval (the state at each is the one the last time point before
// it left, so samples do not all fall on arrivals), and always at the end: allocation per resource (what the bound pods
// request against what the nodes offer: cpu, memory, pods, each extended resource, and Dynamic Resource Allocation's
// devices and their consumable capacities), pods running and pending (by where the queue holds them, and the
// unschedulable ones by the plugin that rejected them), nodes used, the scheduler's evictions and moves and the batch
// optimizer's batches so far.
//
// Computed from the scheduler's cache (a snapshot of its own, refreshed incrementally), the
// queue's gauges and, with devices, the store's ResourceSlices and ResourceClaims: a sample
// costs O(nodes) (+ O(claims) with devices), independent of the pods on the nodes.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kubesched::scheduler {
class Scheduler;
}

namespace kubesched::sim {

class SimulatedCluster;

struct TimeSample {
  int64_t at_ns = 0;  //!< since the start of the simulation
  //! Per TimeSeries::resources (a later sample may know more resources: missing ones are 0).
  std::vector<int64_t> requested;
  std::vector<int64_t> allocatable;
  int64_t nodes = 0;
  int64_t nodes_used = 0;    //!< nodes with at least one pod
  int64_t pods_running = 0;  //!< bound (or assumed) pods, terminating ones included
  int64_t pending_active = 0;
  int64_t pending_backoff = 0;
  int64_t pending_unschedulable = 0;
  int64_t pending_gated = 0;
  //! The unschedulable pods by the plugin that rejected them (upstream's unschedulable_pods gauge).
  std::map<std::string, int64_t> unschedulable_by_plugin;
  int64_t evictions = 0;  //!< pods the scheduler evicted so far (moves included)
  int64_t moves = 0;      //!< of them, moved by cross-node preemption
  int64_t optimizer_batches = 0;
  double optimizer_gap = 0;  //!< the largest batch gap so far
  //! With DRA devices: FGD's fragmentation rate, the share of the devices' capacity that a pod
  //! drawn from the workload so far could not use where it is free (timeseries.cc); -1 without.
  double device_fragmentation = -1;

  int64_t Pending() const { return pending_active + pending_backoff + pending_unschedulable + pending_gated; }
};

struct TimeSeries {
  int64_t start_ns = 0;  //!< Unix time of the simulation's start
  int64_t interval_ns = 0;
  //! Resource names in column order: cpu (millicores), memory (bytes), pods, extended resources
  //! as nodes first offered them, then `devices` (DRA devices, whole) and each consumable device
  //! capacity as `devices/<capacity name>`.
  std::vector<std::string> resources;
  std::vector<TimeSample> samples;
  //! When each eviction was made (since the start), for the charts' marks.
  std::vector<int64_t> eviction_ns;
  std::vector<int64_t> move_ns;
};

//! Takes the samples while a simulation runs.
class TimeSeriesRecorder {
 public:
  //! `interval_ns` 0: a sample at every time point the run stops at. `profiles`: the scheduler's
  //! profile names (whose batch optimizer is followed).
  TimeSeriesRecorder(int64_t start_ns, int64_t interval_ns, std::vector<std::string> profiles);
  ~TimeSeriesRecorder();

  //! Called once everything due now is done, the state holding until `next_ns` (the clock's
  //! next jump; nullopt: the run ends). Without an interval, samples now; with one, samples at
  //! the first multiple of the interval (from the start) in [now, next) if there is one: the
  //! state there is this one.
  void Observe(int64_t now_ns, std::optional<int64_t> next_ns, scheduler::Scheduler& sched, SimulatedCluster& cluster);
  //! The final sample (always taken) and the series.
  TimeSeries Finish(int64_t now_ns, scheduler::Scheduler& sched, SimulatedCluster& cluster);

 private:
  void Sample(int64_t at_ns, scheduler::Scheduler& sched, SimulatedCluster& cluster);
  size_t Column(const std::string& resource);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> profiles_;
  TimeSeries series_;
  bool sampled_ = false;
};

//! A run's series under the name of its configuration (`simulate --compare` writes several).
struct NamedTimeSeries {
  std::string configuration;
  const TimeSeries* series = nullptr;
};

//! CSV: a header row, then one row per sample of each run: the configuration, the time in
//! seconds since the start, for each resource (over every run) `<r>_requested,<r>_allocatable`,
//! then the counts.
void WriteTimeSeriesCsv(std::span<const NamedTimeSeries> runs, std::ostream& out);
//! JSON Lines: one object per sample (unschedulable pods by plugin included).
void WriteTimeSeriesJsonLines(std::span<const NamedTimeSeries> runs, std::ostream& out);

}  // namespace kubesched::sim
