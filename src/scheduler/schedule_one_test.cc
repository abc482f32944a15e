// Scheduler-level tests of upstream's schedule_one semantics: the nomination lifecycle, errors
// against rejections, a failed binding cycle, node sampling, --explain leaving decisions alone,
// and the simulation's end (binding work finished, the unschedulable pool flushed once).

#include <atomic>

#include <gtest/gtest.h>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "sim/simulation.h"
#include "testing/builders.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::scheduler {

// The simulation (src/sim) is these tests' harness.
using sim::RunSimulation;
using sim::SimulationOptions;
using sim::SimulationResult;
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;
using testing::MakeNode;
using testing::MakePod;

template <typename T>
framework::PluginFactory Factory() {
  return [](const framework::ArgsView&,
            framework::Handle& h) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
    return std::make_unique<T>(h);
  };
}

// Filter: pods labelled filter-error=<node> get an Error on that node, and pods labelled
// reject-on=<node> are rejected (Unschedulable) there.
class TestFilter final : public framework::FilterPlugin, public framework::EnqueueExtensions {
 public:
  explicit TestFilter(framework::Handle&) {}
  std::string_view Name() const override { return "TestFilter"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) override {
    const auto& labels = pod.pod().metadata.labels;
    if (const std::string* n = labels.Find("filter-error"); n && (*n == node.name() || *n == "all")) {
      return Status::Error("test filter error");
    }
    if (const std::string* n = labels.Find("reject-on"); n && (*n == node.name() || *n == "all")) {
      return Status::Unschedulable("rejected by test filter");
    }
    return {};
  }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{framework::events::NodeAdd(), nullptr}};
  }
};

// Score: an Error for pods labelled score-error.
class TestScore final : public framework::ScorePlugin {
 public:
  explicit TestScore(framework::Handle&) {}
  std::string_view Name() const override { return "TestScore"; }
  std::pair<int64_t, Status> Score(const CycleState&, const PodInfo& pod, const NodeInfo&) override {
    if (pod.pod().metadata.labels.Has("score-error")) return {0, Status::Error("test score error")};
    return {0, {}};
  }
};

// Permit: pods labelled permit-wait wait and time out after the label's seconds (rejected). The
// plugin registers AssignedPodDelete, so a pod it rejected is requeued by any pod deletion.
class TimeoutPermit final : public framework::PermitPlugin, public framework::EnqueueExtensions {
 public:
  explicit TimeoutPermit(framework::Handle&) {}
  std::string_view Name() const override { return "TimeoutPermit"; }
  std::pair<Status, std::chrono::nanoseconds> Permit(CycleState&, const PodInfo& pod, const std::string&) override {
    const std::string* secs = pod.pod().metadata.labels.Find("permit-wait");
    if (!secs) return {Status::Success(), std::chrono::nanoseconds(0)};
    return {Status::Wait(), std::chrono::seconds(std::stoi(*secs))};
  }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{framework::events::AssignedPodDelete(), nullptr}};
  }
};

// Bind (in place of DefaultBinder): fails (Error) the first bind of every pod labelled
// flaky-bind, binds through the cluster client otherwise.
class FlakyBind final : public framework::BindPlugin {
 public:
  explicit FlakyBind(framework::Handle& h) : handle_(h) {}
  std::string_view Name() const override { return "FlakyBind"; }
  Status Bind(CycleState&, const PodInfo& pod, const std::string& node) override {
    if (pod.pod().metadata.labels.Has("flaky-bind") && failed_.insert(pod.pod().metadata.uid).second) {
      return Status::Error("connection reset");
    }
    return handle_.client().Bind(pod.pod(), node);
  }

 private:
  framework::Handle& handle_;
  std::set<std::string> failed_;
};

// Filter that rejects every pod labelled not-before=<seconds> until that much virtual time has
// passed since its first attempt; it registers only NodeAdd, so only a flush retries the pod.
class NotBefore final : public framework::FilterPlugin, public framework::EnqueueExtensions {
 public:
  explicit NotBefore(framework::Handle& h) : handle_(h) {}
  std::string_view Name() const override { return "NotBefore"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo&) override {
    const std::string* secs = pod.pod().metadata.labels.Find("not-before");
    if (!secs) return {};
    const int64_t now = handle_.clock().NowNs();
    std::lock_guard lock(mu_);
    auto [it, inserted] = first_seen_.try_emplace(pod.pod().metadata.uid, now);
    if (now - it->second < std::stoll(*secs) * util::kNanosPerSecond) return Status::Unschedulable("too early");
    return {};
  }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{framework::events::NodeAdd(), nullptr}};
  }

 private:
  framework::Handle& handle_;
  mutable std::mutex mu_;
  mutable std::map<std::string, int64_t> first_seen_;
};

framework::Registry Registry() {
  framework::Registry r;
  plugins::RegisterInTreePlugins(r);
  (void)r.Register("TestFilter", Factory<TestFilter>());
  (void)r.Register("TestScore", Factory<TestScore>());
  (void)r.Register("TimeoutPermit", Factory<TimeoutPermit>());
  (void)r.Register("FlakyBind", Factory<FlakyBind>());
  (void)r.Register("NotBefore", Factory<NotBefore>());
  return r;
}

config::Configuration Config(const framework::Registry& registry) {
  config::Configuration cfg = config::DefaultConfiguration(registry);
  auto& p = cfg.profiles[0].plugins;
  p.filter.enabled.push_back({"TestFilter", 0});
  p.filter.enabled.push_back({"NotBefore", 0});
  p.score.enabled.push_back({"TestScore", 1});
  p.permit.enabled.push_back({"TimeoutPermit", 0});
  std::erase_if(p.bind.enabled, [](const config::PluginRef& r) { return r.name == "DefaultBinder"; });
  p.bind.disabled.push_back({"DefaultBinder", 0});
  p.bind.enabled.push_back({"FlakyBind", 0});
  return cfg;
}

api::ClusterObjects Load(const std::string& yaml) {
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  return std::move(*objects);
}

const api::Pod* Find(const SimulationResult& r, const std::string& name) { return testing::FindPod(r.pods, name); }

std::string MessageOf(const api::Pod& pod) { return testing::UnschedulableMessage(pod); }

SimulationResult Simulate(const std::string& yaml, SimulationOptions opts = {}) {
  static const framework::Registry registry = Registry();
  opts.scheduler.config = Config(registry);
  auto r = RunSimulation(Load(yaml), opts, registry);
  EXPECT_TRUE(r.has_value()) << r.error();
  return std::move(*r);
}

std::string Nodes(int n, const std::string& cpu = "2") { return testing::NumberedNodes(n, cpu); }

std::string PodYaml(const std::string& name, const std::string& cpu, const std::string& extra_meta = "",
                    const std::string& extra_spec = "", const std::string& status = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" + extra_meta +
                  "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n" +
                  extra_spec;
  if (!status.empty()) y += "status:\n" + status;
  return y + "---\n";
}

// --- Nominations -------------------------------------------------------------------------------

TEST(Nomination, ClearedWhenPreemptionFindsNoCandidate) {
  // n0 is full with a pod of the same priority: nothing to preempt, so the stale nomination goes.
  auto r = Simulate(Nodes(1) + PodYaml("running", "2", "", "  nodeName: n0\n") +
                    PodYaml("p", "1", "", "", "  nominatedNodeName: n0\n"));
  const api::Pod* p = Find(r, "p");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->spec.node_name.empty());
  EXPECT_EQ(p->status.nominated_node_name, "");
  EXPECT_NE(MessageOf(*p).find("Insufficient cpu"), std::string::npos) << MessageOf(*p);
}

TEST(Nomination, ClearedOnSchedulingError) {
  SimulationOptions opts;
  opts.max_virtual_time_ns = 60 * util::kNanosPerSecond;
  auto r =
      Simulate(Nodes(2) + PodYaml("p", "1", "  labels: {filter-error: all}\n", "", "  nominatedNodeName: n0\n"), opts);
  const api::Pod* p = Find(r, "p");
  EXPECT_TRUE(p->spec.node_name.empty());
  EXPECT_EQ(p->status.nominated_node_name, "");
  EXPECT_NE(MessageOf(*p).find("test filter error"), std::string::npos) << MessageOf(*p);
}

TEST(Nomination, ClearedWhenPermitRejects) {
  auto r = Simulate(Nodes(1) + PodYaml("p", "1", "  labels: {permit-wait: \"5\"}\n", "", "  nominatedNodeName: n0\n"));
  const api::Pod* p = Find(r, "p");
  EXPECT_TRUE(p->spec.node_name.empty());
  EXPECT_EQ(p->status.nominated_node_name, "");
  EXPECT_EQ(MessageOf(*p),
            "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin TimeoutPermit.");
}

struct Harness {
  framework::Registry registry = Registry();
  util::VirtualClock clock{1'700'000'000LL * util::kNanosPerSecond};
  std::unique_ptr<sim::SimulatedCluster> cluster;
  std::unique_ptr<Scheduler> sched;

  explicit Harness(const std::string& yaml) {
    cluster = std::make_unique<sim::SimulatedCluster>(Load(yaml), clock, 1);
    SchedulerOptions opts;
    opts.config = Config(registry);
    auto s = Scheduler::Create(opts, *cluster, clock, registry);
    EXPECT_TRUE(s.has_value()) << s.error();
    sched = std::move(*s);
    cluster->Subscribe(sched.get());
  }
  std::shared_ptr<const api::Pod> Pod(const std::string& name) const {
    for (const auto& p : cluster->Pods()) {
      if (p->metadata.name == name) return p;
    }
    return nullptr;
  }
};

TEST(Nomination, AssumedPodLeavesTheNominator) {
  Harness h(Nodes(2) + PodYaml("p", "1", "", "", "  nominatedNodeName: n1\n"));
  EXPECT_EQ(h.sched->queue().NominatedPodsForNode("n1").size(), 1u);
  ASSERT_TRUE(h.sched->ScheduleOne());
  // Assumed on n1 (its nominated node passes first); the binding cycle has not run yet.
  EXPECT_TRUE(h.sched->cache().IsAssumedPod(*h.Pod("p")));
  EXPECT_TRUE(h.sched->queue().NominatedPodsForNode("n1").empty()) << "counted twice: nominated and assumed";
  h.sched->RunPendingBindings();
  EXPECT_EQ(h.Pod("p")->spec.node_name, "n1");
}

TEST(Nomination, FastPathUsesTheNominatorsView) {
  // n1 is busier, so scoring alone would choose n0; the nominator (not yet the pod's status)
  // says n1, and the nominated node is tried first.
  Harness h(Nodes(2, "4") + PodYaml("busy", "3", "", "  nodeName: n1\n") + PodYaml("p", "1"));
  auto p = h.Pod("p");
  h.sched->queue().AddNominatedPod(PodInfo::Create(p), "n1");
  ASSERT_TRUE(h.sched->ScheduleOne());
  h.sched->RunPendingBindings();
  EXPECT_EQ(h.Pod("p")->spec.node_name, "n1");
}

// --- Errors and rejections ---------------------------------------------------------------------

TEST(SchedulingFailure, ErrorAfterRejectionsGoesToBackoffNotThePool) {
  // n0 rejects the pod in Filter, then Score fails with an error on the remaining nodes.
  Harness h(Nodes(3) + PodYaml("p", "1", "  labels: {reject-on: n0, score-error: \"yes\"}\n"));
  ASSERT_TRUE(h.sched->ScheduleOne());
  auto where = h.sched->queue().Get(h.Pod("p")->metadata.uid);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->queue, queue::SubQueue::kBackoff);
  EXPECT_TRUE(where->info.unschedulable_plugins.empty());
  EXPECT_NE(MessageOf(*h.Pod("p")).find("test score error"), std::string::npos);
}

TEST(SchedulingFailure, RejectionParksThePodWithItsPlugins) {
  Harness h(Nodes(2) + PodYaml("p", "1", "  labels: {reject-on: all}\n"));
  ASSERT_TRUE(h.sched->ScheduleOne());
  auto where = h.sched->queue().Get(h.Pod("p")->metadata.uid);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->queue, queue::SubQueue::kUnschedulable);
  EXPECT_EQ(where->info.unschedulable_plugins, std::vector<std::string>{"TestFilter"});
}

TEST(SchedulingFailure, NoNodesIsUnresolvableNotAnError) {
  Harness h(PodYaml("p", "1"));
  ASSERT_TRUE(h.sched->ScheduleOne());
  EXPECT_EQ(MessageOf(*h.Pod("p")), "no nodes available to schedule pods");
  for (const auto& c : h.Pod("p")->status.conditions) {
    if (c.type == "PodScheduled") {
      EXPECT_EQ(c.reason, "Unschedulable");
    }
  }
}

// --- A failed binding cycle --------------------------------------------------------------------

TEST(BindingFailure, BindErrorRetriesAfterBackoffAndBindsOnce) {
  auto r = Simulate(Nodes(1) + PodYaml("p", "1", "  labels: {flaky-bind: \"yes\"}\n"));
  EXPECT_EQ(Find(r, "p")->spec.node_name, "n0");
  EXPECT_EQ(r.attempts, 2u);
}

TEST(BindingFailure, RejectedAtPermitIsNotRequeuedByItsOwnForgetting) {
  // The pod waits at Permit and is rejected by the timeout. Forgetting it is an AssignedPodDelete,
  // an event its rejecting plugin registered: were the pod requeued by it, it would be retried
  // after each backoff for the whole virtual hour. It waits in the pool instead, and is retried
  // once by the final flush.
  auto r = Simulate(Nodes(1) + PodYaml("p", "1", "  labels: {permit-wait: \"5\"}\n"));
  EXPECT_TRUE(Find(r, "p")->spec.node_name.empty());
  EXPECT_EQ(r.attempts, 2u);
}

// --- Sampling and explain ----------------------------------------------------------------------

TEST(Sampling, StartIndexAdvancesModuloAllNodes) {
  // 200 nodes; the first pod's node affinity (metadata.name) leaves PreFilter one of them.
  const std::string names = "n7";
  Harness h(
      Nodes(200) +
      PodYaml("narrow", "100m", "",
              "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
              "        nodeSelectorTerms:\n        - matchFields:\n          - {key: metadata.name, operator: In, "
              "values: [" +
                  names + "]}\n"));
  ASSERT_TRUE(h.sched->ScheduleOne());
  EXPECT_EQ(h.sched->next_start_node_index(), 1u) << "1 node processed, modulo 200 (not modulo the 1 left)";
  EXPECT_EQ(h.Pod("narrow")->spec.node_name, "");  // assumed, binding pending
  h.sched->RunPendingBindings();
  EXPECT_EQ(h.Pod("narrow")->spec.node_name, "n7");
}

TEST(Explain, DoesNotChangeAnyPlacement) {
  // 300 nodes: sampling looks at 144 per pod (not all), and ties are broken at random.
  std::string yaml = Nodes(300, "8");
  for (int i = 0; i < 40; ++i) yaml += PodYaml("p" + std::to_string(i), "500m");
  auto plain = Simulate(yaml);
  SimulationOptions opts;
  opts.scheduler.explain_pod = "default/p7";
  auto explained = Simulate(yaml, opts);
  ASSERT_TRUE(explained.explanation.has_value());
  ASSERT_EQ(plain.pods.size(), explained.pods.size());
  for (size_t i = 0; i < plain.pods.size(); ++i) {
    EXPECT_EQ(plain.pods[i]->spec.node_name, explained.pods[i]->spec.node_name) << plain.pods[i]->metadata.name;
  }
  EXPECT_EQ(explained.explanation->selected_node, Find(explained, "p7")->spec.node_name);
  size_t evaluated = 0;
  for (const auto& n : explained.explanation->nodes) evaluated += n.evaluated ? 1 : 0;
  EXPECT_EQ(evaluated, static_cast<size_t>(NumFeasibleNodesToFind(std::nullopt, 300)))
      << "only the sampled nodes were filtered by the cycle";
  for (const auto& n : explained.explanation->nodes) {
    if (n.node != explained.explanation->selected_node) continue;
    ASSERT_FALSE(n.scores.empty());
    for (const auto& s : n.scores) EXPECT_EQ(s.weighted, s.normalized * s.weight) << s.plugin;
  }
}

// --- The end of a simulation -------------------------------------------------------------------

TEST(SimulationEnd, UnschedulablePodsAreRetriedOnceByTheFlush) {
  // Rejected until 60 s have passed, and woken by no event: only the flush retries it.
  auto r = Simulate(Nodes(1) + PodYaml("p", "1", "  labels: {not-before: \"60\"}\n"));
  EXPECT_EQ(Find(r, "p")->spec.node_name, "n0");
  EXPECT_GE(r.virtual_time_ns - r.start_time_ns, queue::kDefaultPodMaxInUnschedulablePodsNs);
}

TEST(SimulationEnd, PermitWaitWithoutTimeoutStillEnds) {
  // A zero timeout expires at once: its binding cycle (a rejection) must still run.
  auto r = Simulate(Nodes(1) + PodYaml("p", "1", "  labels: {permit-wait: \"0\"}\n"));
  const api::Pod* p = Find(r, "p");
  EXPECT_TRUE(p->spec.node_name.empty());
  EXPECT_NE(MessageOf(*p).find("TimeoutPermit"), std::string::npos) << MessageOf(*p);
}

}  // namespace
}  // namespace kubesched::scheduler
