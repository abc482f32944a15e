#pragma once
// Upstream kube-scheduler's metrics (pkg/scheduler/metrics/metrics.go): the same names, labels,
// help texts and buckets, kept in a prometheus-cpp registry and written in Prometheus' text
// format for /metrics. The gauges of the queue and the cache are read from the scheduler when
// scraped (SetStateSource), not updated on every change.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/recorder.h"

namespace prometheus {
class Registry;
class Counter;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace kubesched::metrics {

class SchedulerMetrics final : public Recorder {
 public:
  SchedulerMetrics();
  ~SchedulerMetrics() override;
  SchedulerMetrics(const SchedulerMetrics&) = delete;
  SchedulerMetrics& operator=(const SchedulerMetrics&) = delete;

  //! Where the scrape-time gauges come from (the running scheduler); nullptr to detach before
  //! the scheduler goes away. Thread-safe with Serialize.
  void SetStateSource(std::function<SchedulerState()> source);

  //! Every metric in Prometheus' text exposition format (version 0.0.4).
  std::string Serialize() const;

  // --- Recorder -------------------------------------------------------------------------------
  void ObserveAttempt(std::string_view result, std::string_view profile, double seconds) override;
  void ObserveAlgorithm(double seconds) override;
  void ObservePodScheduled(int attempts, double sli_seconds) override;
  void ObserveExtensionPoint(std::string_view extension_point, framework::Code code, std::string_view profile,
                             double seconds) override;
  void ObservePlugin(std::string_view plugin, std::string_view extension_point, framework::Code code,
                     double seconds) override;
  void ObserveIncomingPod(std::string_view queue, std::string_view event) override;
  void ObservePreemptionAttempt() override;
  void ObservePreemptionVictims(size_t victims) override;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* schedule_attempts_;
  prometheus::Family<prometheus::Histogram>* attempt_duration_;
  prometheus::Histogram* algorithm_duration_;
  prometheus::Histogram* preemption_victims_;
  prometheus::Counter* preemption_attempts_;
  prometheus::Family<prometheus::Histogram>* sli_duration_;
  prometheus::Histogram* pod_scheduling_attempts_;
  prometheus::Family<prometheus::Histogram>* extension_point_duration_;
  prometheus::Family<prometheus::Histogram>* plugin_duration_;
  prometheus::Family<prometheus::Counter>* queue_incoming_;

  // Every registry family's name, help and type, in registration order, without series.
  std::vector<prometheus::MetricFamily> declared_;

  mutable std::mutex source_mu_;
  std::function<SchedulerState()> source_;  // guarded by source_mu_
};

//! upstream's metrics.ExponentialBuckets: `count` bounds from `start`, each `factor` times the last.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace kubesched::metrics
