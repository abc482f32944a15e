#include "metrics/scheduler_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <sstream>

namespace kubesched::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::Labels;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Upstream's help texts (component-base prefixes them with the stability level).
constexpr const char* kPendingPodsHelp =
    "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
    "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler "
    "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted "
    "to schedule because they are gated.";
constexpr const char* kUnschedulablePodsHelp =
    "[ALPHA] The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all "
    "plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.";
constexpr const char* kCacheSizeHelp =
    "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.";

ClientMetric GaugeMetric(std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  return m;
}

// The gauges read at scrape time, as families of their own (the set of label values changes
// from one scrape to the next: a plugin no pod waits for any more disappears, as upstream's
// gauge would read 0).
std::vector<MetricFamily> StateFamilies(const SchedulerState& s) {
  std::vector<MetricFamily> out;
  MetricFamily pending{"scheduler_pending_pods", kPendingPodsHelp, MetricType::Gauge, {}};
  for (const auto& [queue, n] : {std::pair<const char*, size_t>{"active", s.active},
                                 {"backoff", s.backoff},
                                 {"gated", s.gated},
                                 {"unschedulable", s.unschedulable}}) {
    pending.metric.push_back(GaugeMetric({{"queue", queue}}, static_cast<double>(n)));
  }
  out.push_back(std::move(pending));
  MetricFamily unschedulable{"scheduler_unschedulable_pods", kUnschedulablePodsHelp, MetricType::Gauge, {}};
  for (const auto& [key, n] : s.unschedulable_by_plugin) {
    unschedulable.metric.push_back(
        GaugeMetric({{"plugin", key.first}, {"profile", key.second}}, static_cast<double>(n)));
  }
  out.push_back(std::move(unschedulable));
  // Upstream names it in subsystem "scheduler" as "scheduler_cache_size": the doubled prefix is theirs.
  MetricFamily cache{"scheduler_scheduler_cache_size", kCacheSizeHelp, MetricType::Gauge, {}};
  cache.metric.push_back(GaugeMetric({{"type", "assumed_pods"}}, static_cast<double>(s.cache_assumed_pods)));
  cache.metric.push_back(GaugeMetric({{"type", "nodes"}}, static_cast<double>(s.cache_nodes)));
  cache.metric.push_back(GaugeMetric({{"type", "pods"}}, static_cast<double>(s.cache_pods)));
  out.push_back(std::move(cache));
  return out;
}

// Buckets as upstream declares them.
const std::vector<double>& AttemptBuckets() {
  static const std::vector<double> b = ExponentialBuckets(0.001, 2, 15);
  return b;
}
const std::vector<double>& SliBuckets() {
  static const std::vector<double> b = ExponentialBuckets(0.01, 2, 20);
  return b;
}
const std::vector<double>& ExtensionPointBuckets() {
  static const std::vector<double> b = ExponentialBuckets(0.0001, 2, 12);
  return b;
}
const std::vector<double>& PluginBuckets() {
  static const std::vector<double> b = ExponentialBuckets(0.00001, 1.5, 20);
  return b;
}

// The attempts label of pod_scheduling_sli_duration_seconds (upstream's getAttemptsLabel).
std::string AttemptsLabel(int attempts) { return attempts >= 15 ? "15+" : std::to_string(attempts); }

}  // namespace

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(count));
  for (double b = start; count-- > 0; b *= factor) out.push_back(b);
  return out;
}

SchedulerMetrics::SchedulerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  // Every family is declared, so that a scrape names it before its first series exists (a
  // label vector has none until observed; the plugin durations only in sampled cycles).
  auto counter = [&](std::string name, std::string help) -> prometheus::Family<prometheus::Counter>& {
    declared_.push_back(MetricFamily{name, help, MetricType::Counter, {}});
    return prometheus::BuildCounter().Name(name).Help(help).Register(r);
  };
  auto histogram = [&](std::string name, std::string help) -> prometheus::Family<prometheus::Histogram>& {
    declared_.push_back(MetricFamily{name, help, MetricType::Histogram, {}});
    return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
  };
  schedule_attempts_ = &counter("scheduler_schedule_attempts_total",
                                "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a "
                                "pod could not be scheduled, while 'error' means an internal scheduler problem.");
  attempt_duration_ = &histogram("scheduler_scheduling_attempt_duration_seconds",
                                 "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)");
  algorithm_duration_ =
      &histogram("scheduler_scheduling_algorithm_duration_seconds", "[ALPHA] Scheduling algorithm latency in seconds")
           .Add({}, AttemptBuckets());
  // Upstream: "#victims>64 is pretty rare, therefore [64, +Inf) is considered a single bucket".
  preemption_victims_ = &histogram("scheduler_preemption_victims", "[STABLE] Number of selected preemption victims")
                             .Add({}, ExponentialBuckets(1, 2, 7));
  preemption_attempts_ =
      &counter("scheduler_preemption_attempts_total", "[STABLE] Total preemption attempts in the cluster till now")
           .Add({});
  sli_duration_ = &histogram("scheduler_pod_scheduling_sli_duration_seconds",
                             "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the "
                             "scheduling queue an d might involve multiple scheduling attempts.");
  pod_scheduling_attempts_ =
      &histogram("scheduler_pod_scheduling_attempts", "[STABLE] Number of attempts to successfully schedule a pod.")
           .Add({}, ExponentialBuckets(1, 2, 5));
  extension_point_duration_ = &histogram("scheduler_framework_extension_point_duration_seconds",
                                         "[STABLE] Latency for running all plugins of a specific extension point.");
  plugin_duration_ = &histogram("scheduler_plugin_execution_duration_seconds",
                                "[ALPHA] Duration for running a plugin at a specific extension point.");
  queue_incoming_ = &counter("scheduler_queue_incoming_pods_total",
                             "[STABLE] Number of pods added to scheduling queues by event and queue type.");
}

SchedulerMetrics::~SchedulerMetrics() = default;

void SchedulerMetrics::SetStateSource(std::function<SchedulerState()> source) {
  std::lock_guard lock(source_mu_);
  source_ = std::move(source);
}

std::string SchedulerMetrics::Serialize() const {
  std::vector<MetricFamily> collected = registry_->Collect();
  std::vector<MetricFamily> families;
  families.reserve(declared_.size() + 3);
  for (const MetricFamily& d : declared_) {
    auto it = std::ranges::find(collected, d.name, &MetricFamily::name);
    families.push_back(it != collected.end() ? std::move(*it) : d);
  }
  {
    std::lock_guard lock(source_mu_);
    auto state = source_ ? source_() : SchedulerState{};
    for (auto& f : StateFamilies(state)) families.push_back(std::move(f));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

void SchedulerMetrics::ObserveAttempt(std::string_view result, std::string_view profile, double seconds) {
  const Labels labels{{"result", std::string(result)}, {"profile", std::string(profile)}};
  schedule_attempts_->Add(labels).Increment();
  attempt_duration_->Add(labels, AttemptBuckets()).Observe(seconds);
}

void SchedulerMetrics::ObserveAlgorithm(double seconds) { algorithm_duration_->Observe(seconds); }

void SchedulerMetrics::ObservePodScheduled(int attempts, double sli_seconds) {
  pod_scheduling_attempts_->Observe(attempts);
  sli_duration_->Add({{"attempts", AttemptsLabel(attempts)}}, SliBuckets()).Observe(sli_seconds);
}

void SchedulerMetrics::ObserveExtensionPoint(std::string_view extension_point, framework::Code code,
                                             std::string_view profile, double seconds) {
  extension_point_duration_
      ->Add({{"extension_point", std::string(extension_point)},
             {"status", std::string(framework::ToString(code))},
             {"profile", std::string(profile)}},
            ExtensionPointBuckets())
      .Observe(seconds);
}

void SchedulerMetrics::ObservePlugin(std::string_view plugin, std::string_view extension_point, framework::Code code,
                                     double seconds) {
  plugin_duration_
      ->Add({{"plugin", std::string(plugin)},
             {"extension_point", std::string(extension_point)},
             {"status", std::string(framework::ToString(code))}},
            PluginBuckets())
      .Observe(seconds);
}

void SchedulerMetrics::ObserveIncomingPod(std::string_view queue, std::string_view event) {
  queue_incoming_->Add({{"queue", std::string(queue)}, {"event", std::string(event)}}).Increment();
}

void SchedulerMetrics::ObservePreemptionAttempt() { preemption_attempts_->Increment(); }

void SchedulerMetrics::ObservePreemptionVictims(size_t victims) {
  preemption_victims_->Observe(static_cast<double>(victims));
}

}  // namespace kubesched::metrics
