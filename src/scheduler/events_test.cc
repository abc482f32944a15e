// The Events the scheduler records (Scheduled, FailedScheduling, Preempted), through the whole
// scheduler, the store client and an EventRecorder over the in-process store.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "api/json.h"
#include "api/manifest.h"
#include "cluster/event_recorder.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/run_loop.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "testing/builders.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::scheduler {
namespace {

namespace json = api::json;

constexpr int64_t kStart = testing::kSchedulerTestStart;
const std::string& kNode = testing::kTwoCpuNode;
const std::string& kPriorityClass = testing::kHighPriorityClass;
using testing::InTreeRegistry;

std::string Pod(const std::string& name, const std::string& cpu, const std::string& spec = "") {
  return testing::CpuPod(name, cpu, spec);
}

//! One Event as stored, the fields the tests look at.
struct StoredEvent {
  std::string name;
  std::string type;
  std::string reason;
  std::string action;
  std::string note;
  std::string reporting_controller;
  std::string reporting_instance;
  std::string regarding_name;
  std::string regarding_uid;
  std::string related_name;
  std::string related_uid;
  int count = 1;  //!< series.count, 1 without a series
};

//! The scheduler over a simulated cluster with an EventRecorder attached to its client.
class Harness {
 public:
  explicit Harness(const std::string& yaml) : clock_(kStart) {
    auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
    EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
    cluster_ = std::make_unique<sim::SimulatedCluster>(std::move(*objects), clock_, 1);
    recorder_ = std::make_unique<cluster::EventRecorder>(cluster_->Store(), clock_,
                                                         cluster::EventRecorderOptions{.hostname = "host-a"});
    cluster_->SetEventRecorder(recorder_.get());
    SchedulerOptions options;
    options.config = config::DefaultConfiguration(InTreeRegistry());
    auto created = Scheduler::Create(options, *cluster_, clock_, InTreeRegistry());
    EXPECT_TRUE(created.has_value()) << created.error();
    scheduler_ = std::move(*created);
    cluster_->Subscribe(scheduler_.get());
  }
  ~Harness() {
    recorder_->Stop();
    cluster_->SetEventRecorder(nullptr);
  }

  void RunUntilIdle() {
    struct Events final : ClusterEvents {
      sim::SimulatedCluster& cluster;
      explicit Events(sim::SimulatedCluster& c) : cluster(c) {}
      std::optional<int64_t> NextEventNs() const override { return cluster.NextEventNs(); }
      bool FireEvents() override { return cluster.FireEvents(); }
    } events(*cluster_);
    RunLoopOptions loop;
    loop.deadline_ns = kStart + 3600 * util::kNanosPerSecond;
    loop.flush_unschedulable_once = false;
    scheduler::RunUntilIdle(*scheduler_, clock_, &events, loop);
  }

  //! Every stored Event (after writing what the recorder has queued).
  std::vector<StoredEvent> Events() {
    recorder_->Flush();
    const store::ResourceType& type = *cluster_->Store().FindResource("events.k8s.io", "events");
    auto listed = cluster_->Store().List(type, "", {});
    EXPECT_TRUE(listed.has_value());
    std::vector<StoredEvent> out;
    if (!listed) return out;
    for (const auto& o : listed->items) {
      json::Document d;
      EXPECT_TRUE(json::Parse(o->json.str(), d).has_value());
      auto str = [](const json::Value* v, std::string_view key) {
        return v == nullptr ? std::string() : std::string(json::GetString(*v, key));
      };
      StoredEvent e{.name = str(json::Find(d, "metadata"), "name"),
                    .type = str(&d, "type"),
                    .reason = str(&d, "reason"),
                    .action = str(&d, "action"),
                    .note = str(&d, "note"),
                    .reporting_controller = str(&d, "reportingController"),
                    .reporting_instance = str(&d, "reportingInstance"),
                    .regarding_name = str(json::Find(d, "regarding"), "name"),
                    .regarding_uid = str(json::Find(d, "regarding"), "uid"),
                    .related_name = str(json::Find(d, "related"), "name"),
                    .related_uid = str(json::Find(d, "related"), "uid")};
      if (const json::Value* series = json::Find(d, "series")) {
        if (const json::Value* count = json::Find(*series, "count"); count && count->IsInt()) e.count = count->GetInt();
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  std::vector<StoredEvent> EventsWithReason(const std::string& reason) {
    std::vector<StoredEvent> out;
    for (auto& e : Events()) {
      if (e.reason == reason) out.push_back(std::move(e));
    }
    return out;
  }

  std::shared_ptr<const api::Pod> PodNamed(const std::string& name) const {
    for (const auto& p : cluster_->Pods()) {
      if (p->metadata.name == name) return p;
    }
    return nullptr;
  }

  util::VirtualClock& clock() { return clock_; }
  Scheduler& scheduler() { return *scheduler_; }

 private:
  util::VirtualClock clock_;
  std::unique_ptr<sim::SimulatedCluster> cluster_;
  std::unique_ptr<cluster::EventRecorder> recorder_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST(SchedulerEvents, ScheduledPodGetsOneScheduledEvent) {
  Harness h(kNode + Pod("web", "1"));
  h.RunUntilIdle();
  auto web = h.PodNamed("web");
  ASSERT_NE(web, nullptr);
  ASSERT_EQ(web->spec.node_name, "n0");
  auto events = h.Events();
  ASSERT_EQ(events.size(), 1u);
  const StoredEvent& e = events[0];
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.reason, "Scheduled");
  EXPECT_EQ(e.action, "Binding");
  EXPECT_EQ(e.note, "Successfully assigned default/web to n0");
  EXPECT_EQ(e.reporting_controller, "default-scheduler");
  EXPECT_EQ(e.reporting_instance, "default-scheduler-host-a");
  EXPECT_EQ(e.regarding_name, "web");
  EXPECT_EQ(e.regarding_uid, web->metadata.uid);
  EXPECT_EQ(e.related_name, "");
  EXPECT_EQ(e.count, 1);
  EXPECT_TRUE(e.name.starts_with("web.")) << e.name;
}

TEST(SchedulerEvents, RetriedUnschedulablePodAggregatesItsFailedScheduling) {
  Harness h(kNode + Pod("big", "8"));
  // Three attempts, each after the unschedulable pool's 5-minute flush sends the pod back.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    while (h.scheduler().ScheduleOne()) h.scheduler().RunPendingBindings();
    ASSERT_EQ(h.scheduler().attempts(), static_cast<size_t>(attempt));
    h.clock().Advance(queue::kDefaultPodMaxInUnschedulablePodsNs + util::kNanosPerSecond);
    h.scheduler().FireTimers();
  }
  auto big = h.PodNamed("big");
  ASSERT_NE(big, nullptr);
  std::string condition_message;
  for (const auto& c : big->status.conditions) {
    if (c.type == "PodScheduled") condition_message = c.message;
  }
  ASSERT_TRUE(condition_message.starts_with("0/1 nodes are available: 1 Insufficient cpu.")) << condition_message;

  // As upstream: the first attempt's occurrence is about the pod before its PodScheduled
  // condition was written (another resourceVersion, so another Event); the condition is not
  // written again for the same failure, so the second and third attempts aggregate into one
  // Event with series.count 2.
  auto failed = h.EventsWithReason("FailedScheduling");
  ASSERT_EQ(failed.size(), 2u);
  int occurrences = 0;
  int max_count = 0;
  for (const StoredEvent& e : failed) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(e.type, "Warning");
    EXPECT_EQ(e.action, "Scheduling");
    EXPECT_EQ(e.note, condition_message);
    EXPECT_EQ(e.regarding_uid, big->metadata.uid);
    EXPECT_EQ(e.reporting_controller, "default-scheduler");
    occurrences += e.count;
    max_count = std::max(max_count, e.count);
  }
  EXPECT_EQ(occurrences, 3);
  EXPECT_EQ(max_count, 2);
  EXPECT_TRUE(h.EventsWithReason("Scheduled").empty());
}

TEST(SchedulerEvents, PreemptionRecordsPreemptedOnTheVictim) {
  Harness h(kNode + kPriorityClass + Pod("victim", "2", "  nodeName: n0\n") +
            Pod("preemptor", "2", "  priorityClassName: high\n"));
  auto victim = h.PodNamed("victim");
  ASSERT_NE(victim, nullptr);
  const std::string victim_uid = victim->metadata.uid;
  h.RunUntilIdle();
  auto preemptor = h.PodNamed("preemptor");
  ASSERT_NE(preemptor, nullptr);
  ASSERT_EQ(preemptor->spec.node_name, "n0");

  auto preempted = h.EventsWithReason("Preempted");
  ASSERT_EQ(preempted.size(), 1u);
  const StoredEvent& e = preempted[0];
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.action, "Preempting");
  EXPECT_EQ(e.regarding_name, "victim");
  EXPECT_EQ(e.regarding_uid, victim_uid);
  EXPECT_EQ(e.related_name, "preemptor");
  EXPECT_EQ(e.related_uid, preemptor->metadata.uid);
  EXPECT_EQ(e.note, "Preempted by pod " + preemptor->metadata.uid + " on node n0");
  EXPECT_EQ(e.reporting_controller, "default-scheduler");

  // The preemptor failed once (nominated), then was scheduled.
  auto failed = h.EventsWithReason("FailedScheduling");
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed[0].regarding_name, "preemptor");
  auto scheduled = h.EventsWithReason("Scheduled");
  ASSERT_EQ(scheduled.size(), 1u);
  EXPECT_EQ(scheduled[0].note, "Successfully assigned default/preemptor to n0");
}

TEST(SchedulerEvents, NoRecorderNoEvents) {
  // simulate's client has no recorder: the scheduler builds no Event at all.
  auto objects = api::LoadManifestsFromString(kNode + Pod("web", "1") + Pod("big", "8"), "test.yaml");
  ASSERT_TRUE(objects.has_value());
  util::VirtualClock clock(kStart);
  sim::SimulatedCluster cluster(std::move(*objects), clock, 1);
  EXPECT_FALSE(cluster.RecordsEvents());
  SchedulerOptions options;
  options.config = config::DefaultConfiguration(InTreeRegistry());
  auto created = Scheduler::Create(options, cluster, clock, InTreeRegistry());
  ASSERT_TRUE(created.has_value());
  cluster.Subscribe(created->get());
  while ((*created)->ScheduleOne()) (*created)->RunPendingBindings();
  auto listed = cluster.Store().List(*cluster.Store().FindResource("events.k8s.io", "events"), "", {});
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->items.empty());
}

TEST(SchedulerEvents, TruncateMessageAsUpstream) {
  struct Case {
    std::string name;
    std::string in;
    std::string want;
  };
  const std::string limit(kNoteLengthLimit, 'a');
  const std::vector<Case> cases = {
      {"short stays", "0/3 nodes are available", "0/3 nodes are available"},
      {"exactly the limit stays", limit, limit},
      {"one over is cut with a suffix", limit + "b", std::string(kNoteLengthLimit - 4, 'a') + " ..."},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string got = TruncateMessage(c.in);
    EXPECT_EQ(got, c.want);
    EXPECT_LE(got.size(), kNoteLengthLimit);
  }
}

}  // namespace
}  // namespace kubesched::scheduler
