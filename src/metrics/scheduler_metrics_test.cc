// Upstream's scheduler metrics as the scheduler records them: the whole scheduler over a
// simulated cluster (the in-process store and its StoreClient), scraped through Serialize.

#include "metrics/scheduler_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/run_loop.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::metrics {
namespace {

constexpr int64_t kStart = testing::kSchedulerTestStart;
const std::string& kNode = testing::kTwoCpuNode;
const std::string& kPriorityClass = testing::kHighPriorityClass;
using testing::InTreeRegistry;

std::string Pod(const std::string& name, const std::string& cpu, const std::string& spec = "") {
  return testing::CpuPod(name, cpu, spec);
}

//! The scheduler over a simulated cluster, recording into its own SchedulerMetrics.
class Harness {
 public:
  explicit Harness(const std::string& yaml) : clock_(kStart) {
    auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
    EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
    cluster_ = std::make_unique<sim::SimulatedCluster>(std::move(*objects), clock_, 1);
    scheduler::SchedulerOptions options;
    options.config = config::DefaultConfiguration(InTreeRegistry());
    options.metrics = &metrics_;
    auto created = scheduler::Scheduler::Create(options, *cluster_, clock_, InTreeRegistry());
    EXPECT_TRUE(created.has_value()) << created.error();
    scheduler_ = std::move(*created);
    cluster_->Subscribe(scheduler_.get());
    metrics_.SetStateSource([s = scheduler_.get()] { return s->MetricsState(); });
  }
  ~Harness() { metrics_.SetStateSource(nullptr); }

  void RunUntilIdle() {
    struct Events final : scheduler::ClusterEvents {
      sim::SimulatedCluster& cluster;
      explicit Events(sim::SimulatedCluster& c) : cluster(c) {}
      std::optional<int64_t> NextEventNs() const override { return cluster.NextEventNs(); }
      bool FireEvents() override { return cluster.FireEvents(); }
    } events(*cluster_);
    scheduler::RunLoopOptions loop;
    loop.deadline_ns = kStart + 3600 * util::kNanosPerSecond;
    loop.flush_unschedulable_once = false;
    scheduler::RunUntilIdle(*scheduler_, clock_, &events, loop);
  }

  //! The value of one series in the text exposition ("name{labels}"), or nullopt when absent.
  std::optional<double> Value(const std::string& series) const {
    std::istringstream in(metrics_.Serialize());
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
    }
    return std::nullopt;
  }
  std::string Text() const { return metrics_.Serialize(); }
  size_t Attempts() const { return scheduler_->attempts(); }

 private:
  util::VirtualClock clock_;
  SchedulerMetrics metrics_;
  std::unique_ptr<sim::SimulatedCluster> cluster_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
};

TEST(SchedulerMetrics, ScheduledAndUnschedulablePodsMoveTheirSeries) {
  Harness h(kNode + Pod("web", "1") + Pod("huge", "64"));
  // Before any attempt the families are declared but have no series.
  EXPECT_EQ(h.Value(R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"})"),
            std::nullopt);
  EXPECT_NE(h.Text().find("# TYPE scheduler_plugin_execution_duration_seconds histogram\n"), std::string::npos)
      << h.Text();
  h.RunUntilIdle();
  const std::string text = h.Text();
  struct Case {
    std::string series;
    double want;
  };
  const Case cases[] = {
      {R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"})", 1},
      {R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"})", 1},
      {R"(scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"})", 1},
      {R"(scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="unschedulable"})", 1},
      // Only the cycle that found a host times the algorithm, as upstream.
      {"scheduler_scheduling_algorithm_duration_seconds_count", 1},
      {"scheduler_pod_scheduling_attempts_count", 1},
      {"scheduler_pod_scheduling_attempts_sum", 1},
      {R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"})", 1},
      // The unschedulable pod ran PostFilter (DefaultPreemption), which found no victims.
      {"scheduler_preemption_attempts_total", 1},
      {"scheduler_preemption_victims_count", 0},
      {R"(scheduler_queue_incoming_pods_total{event="UnschedulablePodAdd",queue="active"})", 2},
      {R"(scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="unschedulable"})", 1},
      {R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",profile="default-scheduler",status="Success"})",
       2},
      {R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",profile="default-scheduler",status="Success"})",
       1},
      {R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="PostFilter",profile="default-scheduler",status="Unschedulable"})",
       1},
      {R"(scheduler_pending_pods{queue="active"})", 0},
      {R"(scheduler_pending_pods{queue="backoff"})", 0},
      {R"(scheduler_pending_pods{queue="unschedulable"})", 1},
      {R"(scheduler_pending_pods{queue="gated"})", 0},
      {R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"})", 1},
      {R"(scheduler_scheduler_cache_size{type="nodes"})", 1},
      {R"(scheduler_scheduler_cache_size{type="pods"})", 1},
      {R"(scheduler_scheduler_cache_size{type="assumed_pods"})", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.series);
    EXPECT_EQ(h.Value(c.series), c.want) << text;
  }
  // Upstream's buckets: attempt durations from 1 ms doubling 15 times, the last finite one 16.384 s.
  EXPECT_NE(
      text.find(
          R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="16.384"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(scheduler_pod_scheduling_attempts_bucket{le="16"} 1)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(scheduler_preemption_victims_bucket{le="64"} 0)"), std::string::npos) << text;
}

TEST(SchedulerMetrics, PreemptionCountsItsVictims) {
  Harness h(kNode + kPriorityClass + Pod("victim", "2", "  nodeName: n0\n") +
            Pod("preemptor", "2", "  priorityClassName: high\n"));
  h.RunUntilIdle();
  EXPECT_EQ(h.Value("scheduler_preemption_attempts_total"), 1) << h.Text();
  EXPECT_EQ(h.Value("scheduler_preemption_victims_count"), 1) << h.Text();
  EXPECT_EQ(h.Value("scheduler_preemption_victims_sum"), 1) << h.Text();
  // The preemptor's second attempt bound it.
  EXPECT_EQ(h.Value(R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"})"), 1)
      << h.Text();
  EXPECT_EQ(h.Value("scheduler_pod_scheduling_attempts_sum"), 2) << h.Text();
  EXPECT_EQ(h.Value(R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="2"})"), 1) << h.Text();
}

TEST(SchedulerMetrics, PluginDurationsAreSampledExtensionPointsAreNot) {
  std::string yaml = kNode;
  // 200 pods of 1m cpu: every one fits.
  for (int i = 0; i < 200; ++i) yaml += Pod("p" + std::to_string(i), "1m");
  Harness h(yaml);
  h.RunUntilIdle();
  ASSERT_EQ(h.Attempts(), 200u);
  EXPECT_EQ(
      h.Value(
          R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",profile="default-scheduler",status="Success"})"),
      200);
  // NodeResourcesFit's PreFilter runs once per cycle: timed in the sampled cycles only (upstream
  // samples 10%; the scheduler's seed fixes which).
  auto sampled = h.Value(
      R"(scheduler_plugin_execution_duration_seconds_count{extension_point="PreFilter",plugin="NodeResourcesFit",status="Success"})");
  ASSERT_TRUE(sampled.has_value()) << h.Text();
  EXPECT_GT(*sampled, 0);
  EXPECT_LT(*sampled, 60);
}

TEST(SchedulerMetrics, ExponentialBucketsAsUpstream) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 5), (std::vector<double>{1, 2, 4, 8, 16}));
  const auto plugin = ExponentialBuckets(0.00001, 1.5, 20);
  ASSERT_EQ(plugin.size(), 20u);
  EXPECT_DOUBLE_EQ(plugin.back(), 0.00001 * std::pow(1.5, 19));
}

}  // namespace
}  // namespace kubesched::metrics
