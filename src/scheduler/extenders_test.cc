// The scheduler calling extenders (upstream's findNodesThatPassExtenders, prioritizeNodes,
// extendersBinding and preemption's callExtenders), with in-process extenders so that each
// semantic is checked on its own; the HTTP client and a real extender process are tested in
// src/extender/ and tests/e2e/extender_e2e_test.cc.

#include <functional>
#include <mutex>

#include <gtest/gtest.h>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "testing/builders.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::scheduler {
namespace {

using framework::ExtenderFilterResult;
using framework::ExtenderPrioritizeResult;
using framework::NodeInfo;
using framework::NodeToVictims;
using framework::Status;

// An extender whose verbs are the test's functions; it records what it was asked.
class FakeExtender final : public framework::Extender {
 public:
  explicit FakeExtender(std::string name) : name_(std::move(name)) {}
  const std::string& Name() const override { return name_; }
  bool IsIgnorable() const override { return ignorable; }
  bool IsBinder() const override { return static_cast<bool>(bind); }
  bool SupportsPreemption() const override { return static_cast<bool>(preempt); }
  bool IsInterested(const api::Pod& pod) const override { return !interested || interested(pod); }
  std::expected<ExtenderFilterResult, std::string> Filter(const api::Pod& pod,
                                                          std::span<const NodeInfo* const> nodes) override {
    std::lock_guard lock(mu);
    std::vector<std::string> names;
    for (const NodeInfo* n : nodes) names.push_back(n->name());
    filter_calls.push_back(names);
    if (!filter) return ExtenderFilterResult{{nodes.begin(), nodes.end()}, {}, {}};
    return filter(pod, nodes);
  }
  std::expected<ExtenderPrioritizeResult, std::string> Prioritize(const api::Pod& pod,
                                                                  std::span<const NodeInfo* const> nodes) override {
    std::lock_guard lock(mu);
    ++prioritize_calls;
    if (!prioritize) return ExtenderPrioritizeResult{};
    return prioritize(pod, nodes);
  }
  std::expected<NodeToVictims, std::string> ProcessPreemption(const api::Pod& pod, const NodeToVictims& candidates,
                                                              const framework::NodeInfoLister&) override {
    std::lock_guard lock(mu);
    for (const auto& [node, v] : candidates) preempt_offered.push_back(node);
    return preempt(pod, candidates);
  }
  std::expected<void, std::string> Bind(const api::Pod& pod, const std::string& node) override {
    std::lock_guard lock(mu);
    binds.push_back(pod.metadata.name + "->" + node);
    return bind(pod, node);
  }

  bool ignorable = false;
  std::function<bool(const api::Pod&)> interested;
  std::function<std::expected<ExtenderFilterResult, std::string>(const api::Pod&, std::span<const NodeInfo* const>)>
      filter;
  std::function<std::expected<ExtenderPrioritizeResult, std::string>(const api::Pod&, std::span<const NodeInfo* const>)>
      prioritize;
  std::function<std::expected<NodeToVictims, std::string>(const api::Pod&, const NodeToVictims&)> preempt;
  std::function<std::expected<void, std::string>(const api::Pod&, const std::string&)> bind;

  std::mutex mu;
  std::vector<std::vector<std::string>> filter_calls;
  int prioritize_calls = 0;
  std::vector<std::string> preempt_offered;
  std::vector<std::string> binds;

 private:
  std::string name_;
};

// Keeps the nodes whose names are not in `reject` (reason "rejected by <extender>"), or in
// `unresolvable` (reason "cannot ever run here").
auto Rejecting(std::set<std::string> reject, std::set<std::string> unresolvable = {}) {
  return
      [reject, unresolvable](
          const api::Pod&, std::span<const NodeInfo* const> nodes) -> std::expected<ExtenderFilterResult, std::string> {
        ExtenderFilterResult r;
        for (const NodeInfo* n : nodes) {
          if (reject.contains(n->name())) {
            r.failed[n->name()] = "rejected by extender";
          } else if (unresolvable.contains(n->name())) {
            r.failed_and_unresolvable[n->name()] = "cannot ever run here";
          } else {
            r.feasible.push_back(n);
          }
        }
        return r;
      };
}

api::ClusterObjects Load(const std::string& yaml) {
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  return std::move(*objects);
}

std::string Nodes(int n, const std::string& cpu = "2") { return testing::NumberedNodes(n, cpu); }

std::string PodYaml(const std::string& name, const std::string& cpu, const std::string& extra_spec = "",
                    const std::string& resources_extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"" + resources_extra +
         "}}}]\n" + extra_spec + "---\n";
}

struct Harness {
  framework::Registry registry;
  util::VirtualClock clock{1'700'000'000LL * util::kNanosPerSecond};
  std::unique_ptr<sim::SimulatedCluster> cluster;
  std::unique_ptr<Scheduler> sched;

  Harness(const std::string& yaml, std::vector<std::shared_ptr<framework::Extender>> extenders) {
    plugins::RegisterInTreePlugins(registry);
    cluster = std::make_unique<sim::SimulatedCluster>(Load(yaml), clock, 1);
    SchedulerOptions opts;
    opts.config = config::DefaultConfiguration(registry);
    opts.extenders = std::move(extenders);
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
  void RunAll() {
    while (sched->ScheduleOne()) sched->RunPendingBindings();
    sched->RunPendingBindings();
  }
  std::string Message(const std::string& pod) const { return testing::UnschedulableMessage(*Pod(pod)); }
};

TEST(ExtenderFilter, RunsAfterTheFilterPluginsOnTheNodesTheyLeft) {
  auto ext = std::make_shared<FakeExtender>("ext");
  ext->filter = Rejecting({"n1"});
  // n0 is full: NodeResourcesFit rejects it before the extender is asked.
  Harness h(Nodes(3) + PodYaml("busy", "2", "  nodeName: n0\n") + PodYaml("p", "1"), {ext});
  h.RunAll();
  EXPECT_EQ(h.Pod("p")->spec.node_name, "n2");
  ASSERT_EQ(ext->filter_calls.size(), 1u);
  EXPECT_EQ(ext->filter_calls[0], (std::vector<std::string>{"n1", "n2"}));
}

TEST(ExtenderFilter, ChainsExtendersAndReportsTheirReasonsInTheFitError) {
  auto first = std::make_shared<FakeExtender>("first");
  first->filter = Rejecting({"n0"});
  auto second = std::make_shared<FakeExtender>("second");
  second->filter = Rejecting({}, {"n1"});
  Harness h(Nodes(2) + PodYaml("p", "1"), {first, second});
  ASSERT_TRUE(h.sched->ScheduleOne());
  // The second extender saw only what the first left.
  ASSERT_EQ(second->filter_calls.size(), 1u);
  EXPECT_EQ(second->filter_calls[0], std::vector<std::string>{"n1"});
  EXPECT_TRUE(h.Pod("p")->spec.node_name.empty());
  // Preemption then finds nothing to do on either node (no victims; not helpful where unresolvable).
  EXPECT_EQ(h.Message("p"),
            "0/2 nodes are available: 1 cannot ever run here, 1 rejected by extender. preemption: 0/2 nodes are "
            "available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.");
  // The pod waits with the extender as its rejector: any event may make it schedulable.
  auto where = h.sched->queue().Get(h.Pod("p")->metadata.uid);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->queue, queue::SubQueue::kUnschedulable);
  EXPECT_NE(std::find(where->info.unschedulable_plugins.begin(), where->info.unschedulable_plugins.end(),
                      std::string(framework::kExtenderName)),
            where->info.unschedulable_plugins.end());
  // An event no plugin registered for (a node's label change) still moves it out of the pool.
  api::Node updated = *h.cluster->Nodes()[0];
  updated.metadata.labels.Set("touched", "yes");
  h.sched->OnNodeUpdate(h.cluster->Nodes()[0], std::make_shared<const api::Node>(updated));
  where = h.sched->queue().Get(h.Pod("p")->metadata.uid);
  ASSERT_TRUE(where.has_value());
  EXPECT_NE(where->queue, queue::SubQueue::kUnschedulable);
}

TEST(ExtenderFilter, AnErrorFailsTheCycleUnlessIgnorable) {
  auto failing = [](const api::Pod&,
                    std::span<const NodeInfo* const>) -> std::expected<ExtenderFilterResult, std::string> {
    return std::unexpected("connection refused");
  };
  {
    auto ext = std::make_shared<FakeExtender>("down");
    ext->filter = failing;
    Harness h(Nodes(2) + PodYaml("p", "1"), {ext});
    ASSERT_TRUE(h.sched->ScheduleOne());
    EXPECT_TRUE(h.Pod("p")->spec.node_name.empty());
    EXPECT_EQ(h.Message("p"), "connection refused");
  }
  {
    auto ext = std::make_shared<FakeExtender>("down");
    ext->filter = failing;
    ext->ignorable = true;
    auto after = std::make_shared<FakeExtender>("after");
    after->filter = Rejecting({"n0"});
    // Listed first, the ignorable one is still called last (upstream's order), and skipped.
    Harness h(Nodes(2) + PodYaml("p", "1"), {ext, after});
    h.RunAll();
    EXPECT_EQ(h.Pod("p")->spec.node_name, "n1");
    EXPECT_EQ(after->filter_calls.size(), 1u);
  }
}

TEST(ExtenderFilter, PodsItIsNotInterestedInAreNotSent) {
  auto ext = std::make_shared<FakeExtender>("gpu");
  ext->filter = Rejecting({"n0", "n1"});
  ext->interested = [](const api::Pod& p) { return p.metadata.name == "gpu-pod"; };
  Harness h(Nodes(2) + PodYaml("plain", "1") + PodYaml("gpu-pod", "1"), {ext});
  h.RunAll();
  EXPECT_FALSE(h.Pod("plain")->spec.node_name.empty());
  EXPECT_TRUE(h.Pod("gpu-pod")->spec.node_name.empty());
  EXPECT_EQ(ext->filter_calls.size(), 1u);
}

TEST(ExtenderPrioritize, ScoresAreScaledByWeightAndAddedToThePlugins) {
  // Two equal nodes; n1 busier (NodeResourcesFit's LeastAllocated and BalancedAllocation prefer
  // n0). The extender's 10 × weight 5 × 10 = 500 outweighs the plugins' difference.
  auto ext = std::make_shared<FakeExtender>("ranker");
  ext->prioritize = [](const api::Pod&,
                       std::span<const NodeInfo* const> nodes) -> std::expected<ExtenderPrioritizeResult, std::string> {
    ExtenderPrioritizeResult r;
    r.weight = 5;
    for (const NodeInfo* n : nodes) r.priorities.push_back({n->name(), n->name() == "n1" ? 10 : 0});
    return r;
  };
  Harness h(Nodes(2, "4") + PodYaml("busy", "2", "  nodeName: n1\n") + PodYaml("p", "1"), {ext});
  h.RunAll();
  EXPECT_EQ(h.Pod("p")->spec.node_name, "n1");
  EXPECT_EQ(ext->prioritize_calls, 1);
}

TEST(ExtenderPrioritize, AFailureGivesNoScoreAndSchedulingGoesOn) {
  auto ext = std::make_shared<FakeExtender>("ranker");
  ext->prioritize = [](const api::Pod&,
                       std::span<const NodeInfo* const>) -> std::expected<ExtenderPrioritizeResult, std::string> {
    return std::unexpected("timeout");
  };
  Harness h(Nodes(2, "4") + PodYaml("busy", "2", "  nodeName: n1\n") + PodYaml("p", "1"), {ext});
  h.RunAll();
  EXPECT_EQ(h.Pod("p")->spec.node_name, "n0");
}

TEST(ExtenderBind, TheBindingExtenderBindsInsteadOfTheBindPlugins) {
  auto ext = std::make_shared<FakeExtender>("binder");
  ext->bind = [](const api::Pod&, const std::string&) -> std::expected<void, std::string> { return {}; };
  Harness h(Nodes(1) + PodYaml("p", "1"), {ext});
  h.RunAll();
  EXPECT_EQ(ext->binds, std::vector<std::string>{"p->n0"});
  // The simulated cluster records the extender's binding (a real cluster's watch would).
  EXPECT_EQ(h.Pod("p")->spec.node_name, "n0");
}

TEST(ExtenderBind, AFailedBindIsRetriedAndAnIgnorableBinderIsSkipped) {
  {
    auto ext = std::make_shared<FakeExtender>("binder");
    ext->bind = [](const api::Pod&, const std::string&) -> std::expected<void, std::string> {
      return std::unexpected("binder unavailable");
    };
    Harness h(Nodes(1) + PodYaml("p", "1"), {ext});
    ASSERT_TRUE(h.sched->ScheduleOne());
    h.sched->RunPendingBindings();
    EXPECT_TRUE(h.Pod("p")->spec.node_name.empty());
    EXPECT_EQ(h.Message("p"), "binding rejected: binder unavailable");
    EXPECT_FALSE(h.sched->cache().IsAssumedPod(*h.Pod("p")));
  }
  {
    auto ext = std::make_shared<FakeExtender>("binder");
    ext->ignorable = true;
    ext->bind = [](const api::Pod&, const std::string&) -> std::expected<void, std::string> {
      return std::unexpected("binder unavailable");
    };
    Harness h(Nodes(1) + PodYaml("p", "1"), {ext});
    h.RunAll();
    EXPECT_EQ(ext->binds.size(), 1u);
    EXPECT_EQ(h.Pod("p")->spec.node_name, "n0");  // DefaultBinder bound it
  }
}

std::string PreemptionScene() {
  // Two full nodes, each with one low-priority pod; the high-priority pod needs one of them.
  return Nodes(2) +
         "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n" +
         PodYaml("low0", "2", "  nodeName: n0\n") + PodYaml("low1", "2", "  nodeName: n1\n") +
         PodYaml("p", "2", "  priorityClassName: high\n");
}

TEST(ExtenderPreempt, TheExtenderNarrowsTheCandidates) {
  auto ext = std::make_shared<FakeExtender>("preempter");
  ext->preempt = [](const api::Pod&, const NodeToVictims& c) -> std::expected<NodeToVictims, std::string> {
    NodeToVictims kept;
    if (auto it = c.find("n1"); it != c.end()) kept.emplace("n1", it->second);
    return kept;
  };
  Harness h(PreemptionScene(), {ext});
  ASSERT_TRUE(h.sched->ScheduleOne());
  EXPECT_EQ(ext->preempt_offered, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(h.Pod("p")->status.nominated_node_name, "n1");
  ASSERT_EQ(h.cluster->Evictions().size(), 1u);
  EXPECT_EQ(h.cluster->Evictions()[0].pod->metadata.name, "low1");
}

TEST(ExtenderPreempt, NoVictimsOnANodeIsAnErrorUnlessIgnorable) {
  auto empty_victims = [](const api::Pod&, const NodeToVictims& c) -> std::expected<NodeToVictims, std::string> {
    NodeToVictims out;
    for (const auto& [node, v] : c) out.emplace(node, framework::NodeVictims{});
    return out;
  };
  {
    auto ext = std::make_shared<FakeExtender>("preempter");
    ext->preempt = empty_victims;
    Harness h(PreemptionScene(), {ext});
    ASSERT_TRUE(h.sched->ScheduleOne());
    EXPECT_TRUE(h.cluster->Evictions().empty());
    EXPECT_NE(h.Message("p").find("expected at least one victim pod on node \"n0\""), std::string::npos)
        << h.Message("p");
  }
  {
    auto ext = std::make_shared<FakeExtender>("preempter");
    ext->preempt = empty_victims;
    ext->ignorable = true;
    Harness h(PreemptionScene(), {ext});
    ASSERT_TRUE(h.sched->ScheduleOne());
    // Every node dropped: no candidate is left, nothing is evicted.
    EXPECT_TRUE(h.cluster->Evictions().empty());
    EXPECT_EQ(h.Pod("p")->status.nominated_node_name, "");
  }
}

}  // namespace
}  // namespace kubesched::scheduler
