// Tests of the scheduling loop with test plugins: Permit wait / allow / reject / timeout, Reserve
// and Unreserve order, binding cycles running concurrently with later scheduling cycles, and the
// failure message format.

#include "scheduler/scheduler.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "cluster/store_client.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/run_loop.h"
#include "sim/simulated_cluster.h"
#include "sim/simulation.h"
#include "store/resources.h"
#include "testing/builders.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::scheduler {

// The simulation (src/sim) is these tests' harness.
using sim::RunSimulation;
using sim::SimulationOptions;
using sim::SimulationResult;
namespace {

using framework::CycleState;
using framework::PodInfo;
using framework::Status;
using testing::MakeNode;
using testing::MakePod;

// Pods labelled gang=<name> wait at Permit until gang-size pods of the gang wait, then all are
// allowed. A pod labelled veto=<name> rejects every waiting pod of that gang.
class GangPermit final : public framework::PermitPlugin, public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "GangPermit";
  explicit GangPermit(framework::Handle& h) : handle_(h) {}
  std::string_view Name() const override { return kName; }

  std::pair<Status, std::chrono::nanoseconds> Permit(CycleState&, const PodInfo& pod, const std::string&) override {
    const auto& labels = pod.pod().metadata.labels;
    if (const std::string* veto = labels.Find("veto")) {
      handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
        const std::string* g = wp.pod().metadata.labels.Find("gang");
        if (g && *g == *veto) wp.Reject(kName, "vetoed by " + pod.pod().metadata.name);
      });
      return {Status::Success(), std::chrono::nanoseconds(0)};
    }
    const std::string* gang = labels.Find("gang");
    if (!gang) return {Status::Success(), std::chrono::nanoseconds(0)};
    int size = std::stoi(*labels.Find("gang-size"));
    int waiting = 0;
    handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
      const std::string* g = wp.pod().metadata.labels.Find("gang");
      if (g && *g == *gang) ++waiting;
    });
    if (waiting + 1 >= size) {
      handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
        const std::string* g = wp.pod().metadata.labels.Find("gang");
        if (g && *g == *gang) wp.Allow(kName);
      });
      return {Status::Success(), std::chrono::nanoseconds(0)};
    }
    return {Status::Wait(), std::chrono::seconds(10)};
  }

  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{framework::events::NodeAdd(), nullptr}};
  }

 private:
  framework::Handle& handle_;
};

std::vector<std::string>& ReserveLog() {
  static std::vector<std::string> log;
  return log;
}

// Records Reserve/Unreserve calls; fails Reserve for pods labelled fail-reserve=<its name>.
class RecordingReserve final : public framework::ReservePlugin {
 public:
  explicit RecordingReserve(std::string_view name) : name_(name) {}
  std::string_view Name() const override { return name_; }
  Status Reserve(CycleState&, const PodInfo& pod, const std::string&) override {
    ReserveLog().push_back(std::string(name_) + ".Reserve");
    const std::string* f = pod.pod().metadata.labels.Find("fail-reserve");
    if (f && *f == name_) return Status::Unschedulable("reserve failed in " + std::string(name_));
    return {};
  }
  void Unreserve(CycleState&, const PodInfo&, const std::string&) override {
    ReserveLog().push_back(std::string(name_) + ".Unreserve");
  }

 private:
  std::string_view name_;
};

framework::Registry TestRegistry() {
  framework::Registry r;
  plugins::RegisterInTreePlugins(r);
  (void)r.Register("GangPermit",
                   [](const framework::ArgsView&,
                      framework::Handle& h) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                     return std::make_unique<GangPermit>(h);
                   });
  (void)r.Register("ReserveA",
                   [](const framework::ArgsView&,
                      framework::Handle&) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                     return std::make_unique<RecordingReserve>("ReserveA");
                   });
  (void)r.Register("ReserveB",
                   [](const framework::ArgsView&,
                      framework::Handle&) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                     return std::make_unique<RecordingReserve>("ReserveB");
                   });
  return r;
}

config::Configuration ConfigWith(const framework::Registry& registry, std::vector<std::string> permit,
                                 std::vector<std::string> reserve) {
  config::Configuration cfg = config::DefaultConfiguration(registry);
  for (auto& p : permit) cfg.profiles[0].plugins.permit.enabled.push_back({p, 0});
  for (auto& p : reserve) cfg.profiles[0].plugins.reserve.enabled.push_back({p, 0});
  return cfg;
}

api::ClusterObjects Cluster(int nodes, std::vector<std::shared_ptr<api::Pod>> pods) {
  api::ClusterObjects objects;
  for (int i = 0; i < nodes; ++i) {
    objects.nodes.push_back(MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj());
  }
  objects.pods = std::move(pods);
  return objects;
}

std::shared_ptr<api::Pod> GangPod(const std::string& name, const std::string& gang, int size) {
  return MakePod().Name(name).Label("gang", gang).Label("gang-size", std::to_string(size)).Req({{"cpu", "100m"}}).Obj();
}

const api::Pod* Find(const SimulationResult& r, const std::string& name) { return testing::FindPod(r.pods, name); }

std::string MessageOf(const api::Pod& pod) { return testing::UnschedulableMessage(pod); }

TEST(SchedulerPermit, WaitingPodsAreBoundOnceAllowed) {
  auto registry = TestRegistry();
  SimulationOptions opts;
  opts.scheduler.config = ConfigWith(registry, {"GangPermit"}, {});
  auto r =
      RunSimulation(Cluster(2, {GangPod("a", "g", 3), GangPod("b", "g", 3), GangPod("c", "g", 3)}), opts, registry);
  ASSERT_TRUE(r.has_value()) << r.error();
  for (auto name : {"a", "b", "c"}) {
    const api::Pod* p = Find(*r, name);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(p->spec.node_name.empty()) << name;
  }
  EXPECT_EQ(r->virtual_time_ns - r->start_time_ns, 0) << "allowed before any timeout";
}

TEST(SchedulerPermit, WaitTimesOutAndRejects) {
  auto registry = TestRegistry();
  SimulationOptions opts;
  opts.scheduler.config = ConfigWith(registry, {"GangPermit"}, {});
  auto r = RunSimulation(Cluster(2, {GangPod("a", "g", 3), GangPod("b", "g", 3)}), opts, registry);
  ASSERT_TRUE(r.has_value()) << r.error();
  for (auto name : {"a", "b"}) {
    const api::Pod* p = Find(*r, name);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->spec.node_name.empty()) << name;
    EXPECT_EQ(MessageOf(*p),
              "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin GangPermit.")
        << name;
  }
  // The timeout costs virtual, not wall, time; the pods are retried once by the final flush of the
  // unschedulable pool (5 minutes) and time out again.
  EXPECT_EQ(r->virtual_time_ns - r->start_time_ns,
            20LL * util::kNanosPerSecond + queue::kDefaultPodMaxInUnschedulablePodsNs + 1);
}

TEST(SchedulerPermit, WaitingPodsCanBeRejectedThroughTheHandle) {
  auto registry = TestRegistry();
  SimulationOptions opts;
  opts.scheduler.config = ConfigWith(registry, {"GangPermit"}, {});
  opts.max_virtual_time_ns = 60LL * util::kNanosPerSecond;  // ends before the pool's flush
  auto veto = MakePod().Name("v").Label("veto", "g").Req({{"cpu", "100m"}}).Obj();
  auto r = RunSimulation(Cluster(2, {GangPod("a", "g", 3), GangPod("b", "g", 3), veto}), opts, registry);
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_FALSE(Find(*r, "v")->spec.node_name.empty());
  for (auto name : {"a", "b"}) {
    const api::Pod* p = Find(*r, name);
    EXPECT_TRUE(p->spec.node_name.empty()) << name;
    EXPECT_EQ(MessageOf(*p), "0/1 nodes are available: 1 vetoed by v.") << name;
  }
}

TEST(SchedulerReserve, FailedReserveUnreservesEveryPluginInReverseOrder) {
  auto registry = TestRegistry();
  SimulationOptions opts;
  opts.scheduler.config = ConfigWith(registry, {}, {"ReserveA", "ReserveB"});
  ReserveLog().clear();
  auto pod = MakePod().Name("p").Label("fail-reserve", "ReserveB").Req({{"cpu", "100m"}}).Obj();
  auto r = RunSimulation(Cluster(1, {pod}), opts, registry);
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_TRUE(Find(*r, "p")->spec.node_name.empty());
  EXPECT_EQ(MessageOf(*Find(*r, "p")), "0/1 nodes are available: 1 reserve failed in ReserveB.");
  ASSERT_GE(ReserveLog().size(), 4u);
  EXPECT_EQ(
      std::vector<std::string>(ReserveLog().begin(), ReserveLog().begin() + 4),
      (std::vector<std::string>{"ReserveA.Reserve", "ReserveB.Reserve", "ReserveB.Unreserve", "ReserveA.Unreserve"}));
}

TEST(SchedulerFitError, MessageMatchesUpstreamFormat) {
  Diagnosis d;
  d.node_to_status.Set("n1", Status(framework::Code::kUnschedulable,
                                    std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
  d.node_to_status.Set("n2", Status(framework::Code::kUnschedulable, "Insufficient cpu"));
  d.node_to_status.Set("n3",
                       Status(framework::Code::kUnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"));
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 Insufficient cpu.");
  d.post_filter_msg = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.");
  Diagnosis pre;
  pre.pre_filter_msg = "node(s) didn't satisfy plugin NodeAffinity";
  EXPECT_EQ(FitErrorMessage(5, pre), "0/5 nodes are available: node(s) didn't satisfy plugin NodeAffinity.");
}

TEST(SchedulerFitError, ReasonsAreTheMessagesHistogramInItsOrder) {
  Diagnosis d;
  d.node_to_status.Set("n1", Status(framework::Code::kUnschedulable,
                                    std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
  d.node_to_status.Set("n2", Status(framework::Code::kUnschedulable, "Insufficient cpu"));
  // Nodes without a status of their own count with the absent status (here 10 of 12).
  d.node_to_status.set_absent_status(Status(framework::Code::kUnschedulableAndUnresolvable, "taint {a, b}"));
  const std::vector<FilterReasonCount> reasons = FitErrorReasons(12, d);
  // Ordered as strings, as the message lists them: "1 Insufficient memory" < "10 taint" < "2 Insufficient cpu".
  EXPECT_EQ(reasons, (std::vector<FilterReasonCount>{
                         {"Insufficient memory", 1}, {"taint {a, b}", 10}, {"Insufficient cpu", 2}}));
  EXPECT_EQ(FitErrorMessage(12, d, reasons), FitErrorMessage(12, d));
  EXPECT_EQ(FitErrorMessage(12, d),
            "0/12 nodes are available: 1 Insufficient memory, 10 taint {a, b}, 2 Insufficient cpu.");
  Diagnosis pre;
  pre.pre_filter_msg = "node(s) didn't satisfy plugin NodeAffinity";
  EXPECT_TRUE(FitErrorReasons(5, pre).empty()) << "PreFilter's rejection counts no node";
  EXPECT_EQ(FitErrorMessage(0, Diagnosis{}), "0/0 nodes are available:");
}

TEST(SchedulerFitError, SimulationKeepsEachPodsLastFailedAttempt) {
  auto registry = TestRegistry();
  SimulationOptions opts;
  opts.scheduler.config = ConfigWith(registry, {}, {"ReserveA", "ReserveB"});
  auto pod = MakePod().Name("p").Label("fail-reserve", "ReserveB").Req({{"cpu", "100m"}}).Obj();
  auto big = MakePod().Name("big").Req({{"cpu", "1000"}}).Obj();
  auto r = RunSimulation(Cluster(1, {pod, big}), opts, registry);
  ASSERT_TRUE(r.has_value()) << r.error();
  // The simulation asks for them: a Reserve rejection is a FitError on its one node.
  ASSERT_TRUE(r->failed_attempts.contains(Find(*r, "p")->metadata.uid));
  EXPECT_EQ(r->failed_attempts.at(Find(*r, "p")->metadata.uid).filter_reasons,
            (std::vector<FilterReasonCount>{{"reserve failed in ReserveB", 1}}));
  ASSERT_TRUE(r->failed_attempts.contains(Find(*r, "big")->metadata.uid));
  EXPECT_EQ(r->failed_attempts.at(Find(*r, "big")->metadata.uid).filter_reasons,
            (std::vector<FilterReasonCount>{{"Insufficient cpu", 1}}));
}

TEST(SchedulerSampling, NumFeasibleNodesToFindFollowsUpstream) {
  EXPECT_EQ(NumFeasibleNodesToFind(std::nullopt, 10), 10);
  EXPECT_EQ(NumFeasibleNodesToFind(std::nullopt, 99), 99);
  EXPECT_EQ(NumFeasibleNodesToFind(std::nullopt, 100), 100);   // 49% of 100 < 100 → 100
  EXPECT_EQ(NumFeasibleNodesToFind(std::nullopt, 1000), 420);  // 50 - 8 = 42%
  EXPECT_EQ(NumFeasibleNodesToFind(std::nullopt, 5000), 500);  // 50 - 40 = 10%
  EXPECT_EQ(NumFeasibleNodesToFind(std::nullopt, 6000), 300);  // floor at 5%
  EXPECT_EQ(NumFeasibleNodesToFind(50, 1000), 500);
  EXPECT_EQ(NumFeasibleNodesToFind(1, 1000), 100);  // never fewer than 100
  EXPECT_EQ(NumFeasibleNodesToFind(100, 1000), 1000);
}

// A PreBind plugin that holds the first pod's binding until the next pod's Reserve ran. With
// binding cycles concurrent with scheduling cycles this completes; run serially it would time out.
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  bool timed_out = false;
};
Latch& GlobalLatch() {
  static Latch l;
  return l;
}

class HoldingPreBind final : public framework::PreBindPlugin, public framework::ReservePlugin {
 public:
  std::string_view Name() const override { return "HoldingPreBind"; }
  Status PreBind(CycleState&, const PodInfo& pod, const std::string&) override {
    if (pod.pod().metadata.name != "first") return {};
    auto& l = GlobalLatch();
    std::unique_lock lock(l.mu);
    if (!l.cv.wait_for(lock, std::chrono::seconds(20), [&] { return l.released; })) l.timed_out = true;
    return {};
  }
  Status Reserve(CycleState&, const PodInfo& pod, const std::string&) override {
    if (pod.pod().metadata.name == "second") {
      auto& l = GlobalLatch();
      std::lock_guard lock(l.mu);
      l.released = true;
      l.cv.notify_all();
    }
    return {};
  }
  void Unreserve(CycleState&, const PodInfo&, const std::string&) override {}
};

TEST(SchedulerBinding, BindingCyclesRunConcurrentlyWithLaterSchedulingCycles) {
  framework::Registry registry;
  plugins::RegisterInTreePlugins(registry);
  (void)registry.Register("HoldingPreBind",
                          [](const framework::ArgsView&,
                             framework::Handle&) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                            return std::make_unique<HoldingPreBind>();
                          });
  SchedulerOptions opts;
  opts.config = config::DefaultConfiguration(registry);
  opts.config.profiles[0].plugins.pre_bind.enabled.push_back({"HoldingPreBind", 0});
  opts.config.profiles[0].plugins.reserve.enabled.push_back({"HoldingPreBind", 0});
  opts.async_binding = true;
  util::RealClock clock;
  auto objects = Cluster(
      2, {MakePod().Name("first").Req({{"cpu", "1"}}).Obj(), MakePod().Name("second").Req({{"cpu", "1"}}).Obj()});
  sim::SimulatedCluster cluster(std::move(objects), clock, 1);
  auto sched = Scheduler::Create(opts, cluster, clock, registry);
  ASSERT_TRUE(sched.has_value()) << sched.error();
  cluster.Subscribe(sched->get());
  ASSERT_TRUE((*sched)->ScheduleOne());  // "first": its binding cycle blocks in PreBind
  ASSERT_TRUE((*sched)->ScheduleOne());  // "second": runs while "first" is still binding
  (*sched)->WaitForBindings();
  EXPECT_FALSE(GlobalLatch().timed_out);
  for (const auto& p : cluster.Pods()) EXPECT_FALSE(p->spec.node_name.empty()) << p->metadata.name;
}

// `run` on real time: stopping ends the loop and rejects pods waiting at Permit (their 10 s
// timeout is not waited for), which undoes their reservations.
TEST(SchedulerRealTime, StoppingRejectsPodsWaitingAtPermit) {
  auto registry = TestRegistry();
  SchedulerOptions opts;
  opts.config = ConfigWith(registry, {"GangPermit"}, {});
  opts.async_binding = true;
  util::RealClock clock;
  sim::SimulatedCluster cluster(Cluster(1, {GangPod("a", "g", 3)}), clock, 1);
  auto sched = Scheduler::Create(opts, cluster, clock, registry);
  ASSERT_TRUE(sched.has_value()) << sched.error();
  cluster.Subscribe(sched->get());
  std::stop_source stop;
  std::thread loop([&] { RunOnRealTime(**sched, clock, stop.get_token()); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((*sched)->cache().AssumedPodCount() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ((*sched)->cache().AssumedPodCount(), 1u) << "the pod waits at Permit, assumed";
  const auto stopped = std::chrono::steady_clock::now();
  stop.request_stop();
  loop.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, std::chrono::seconds(9)) << "not the Permit timeout";
  EXPECT_EQ((*sched)->cache().AssumedPodCount(), 0u);
  EXPECT_TRUE(cluster.Pods()[0]->spec.node_name.empty());
}

// A bind the view showed and then took back (a relist after the test bed crashed with the bind on a
// watch but not on disk): the pod leaves the cache, its room is free, and it is pending again, as
// client-go's filtering handlers deliver it to upstream's scheduler (a delete of the assigned pod,
// an add of the unscheduled one). Before, the cache kept it on the node and the queue could not
// place it: a pod lost for good.
TEST(SchedulerEventHandlers, APodSeenBoundAndThenUnboundIsPendingAgainAndItsRoomFree) {
  util::VirtualClock clock(testing::kSchedulerTestStart);
  auto store = store::NewBuiltinStore(clock);
  cluster::StoreClient client(*store, clock);
  SchedulerOptions options;
  options.config = config::DefaultConfiguration(testing::InTreeRegistry());
  auto created = Scheduler::Create(options, client, clock, testing::InTreeRegistry());
  ASSERT_TRUE(created.has_value()) << created.error();
  Scheduler& sched = **created;
  sched.OnNodeAdd(MakeNode().Name("n1").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj());
  std::shared_ptr<const api::Pod> pending = MakePod().Name("p").UID("p").Req({{"cpu", "4"}}).Obj();
  std::shared_ptr<const api::Pod> bound = MakePod().Name("p").UID("p").Node("n1").Req({{"cpu", "4"}}).Obj();
  sched.OnPodAdd(pending);
  ASSERT_TRUE(sched.queue().Get("p").has_value());
  sched.OnPodUpdate(pending, bound);
  EXPECT_FALSE(sched.queue().Get("p").has_value());
  EXPECT_EQ(sched.cache().PodCount(), 1u);

  sched.OnPodUpdate(bound, pending);
  EXPECT_EQ(sched.cache().PodCount(), 0u) << "the node still counts the pod's 4 cpus";
  ASSERT_TRUE(sched.queue().Get("p").has_value()) << "the pod is in no queue: nothing would place it";
  // And it fits again: a node of 4 cpus with nothing on it.
  const std::vector<std::string> names{"n1"};
  auto fits = sched.ExtenderFilter("default-scheduler", *pending, names);
  ASSERT_TRUE(fits.has_value()) << fits.error();
  EXPECT_EQ(fits->passed, names);
}

}  // namespace
}  // namespace kubesched::scheduler
