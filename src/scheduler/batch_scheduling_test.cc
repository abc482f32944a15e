// The scheduler with BatchPlacement: pods held until the window closes, the plan held for them
// against other pods, and a plan invalidated mid-batch (those pods fall back to normal scheduling,
// nothing lost or bound twice).

#include <gtest/gtest.h>

#include <map>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "testing/builders.h"

namespace kubesched::scheduler {
namespace {

const char* kConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preEnqueue: {enabled: [{name: BatchPlacement}]}
    preFilter: {enabled: [{name: BatchPlacement}]}
  pluginConfig:
  - name: BatchPlacement
    args: {batchWindowSeconds: 2}
)";

std::string Nodes(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "apiVersion: v1\nkind: Node\nmetadata: {name: n" + std::to_string(i) +
           "}\nstatus: {capacity: {cpu: \"1\", memory: 8Gi, pods: \"110\"}}\n---\n";
  }
  return out;
}

std::string Pods(int n, const std::string& prefix, const std::string& cpu, const std::string& scheduler = "") {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + prefix + std::to_string(i) + "}\nspec:\n" +
           (scheduler.empty() ? "" : "  schedulerName: " + scheduler + "\n") +
           "  containers: [{name: c, image: x, resources: {requests: {cpu: " + cpu + "}}}]\n---\n";
  }
  return out;
}

struct Harness {
  framework::Registry registry;
  util::VirtualClock clock{1'700'000'000LL * util::kNanosPerSecond};
  std::unique_ptr<sim::SimulatedCluster> cluster;
  std::unique_ptr<Scheduler> sched;

  Harness(const std::string& yaml, const std::string& config_yaml) {
    plugins::RegisterInTreePlugins(registry);
    auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
    EXPECT_TRUE(objects.has_value());
    cluster = std::make_unique<sim::SimulatedCluster>(std::move(*objects), clock, 1);
    auto cfg = config::LoadConfigFromString(config_yaml, "config.yaml", registry);
    EXPECT_TRUE(cfg.has_value()) << cfg.error();
    SchedulerOptions opts;
    opts.config = std::move(*cfg);
    auto s = Scheduler::Create(opts, *cluster, clock, registry);
    EXPECT_TRUE(s.has_value()) << s.error();
    sched = std::move(*s);
    cluster->Subscribe(sched.get());
  }
  void Drain() {
    while (sched->ScheduleOne()) sched->RunPendingBindings();
    sched->RunPendingBindings();
  }
  std::map<std::string, std::string> Placement() const {
    std::map<std::string, std::string> out;
    for (const auto& p : cluster->Pods()) out[p->metadata.name] = p->spec.node_name;
    return out;
  }
};

TEST(BatchScheduling, PodsWaitForTheWindowThenPackJointly) {
  Harness h(Nodes(3) + Pods(6, "p", "300m"), kConfig);
  EXPECT_FALSE(h.sched->ScheduleOne()) << "the batch holds its pods until the window closes";
  auto next = h.sched->NextTimerNs(false);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, h.clock.NowNs() + 2 * util::kNanosPerSecond);
  h.clock.AdvanceTo(*next);
  h.sched->FireTimers();
  h.Drain();
  std::map<std::string, int> per_node;
  for (const auto& [pod, node] : h.Placement()) {
    ASSERT_FALSE(node.empty()) << pod;
    ++per_node[node];
  }
  EXPECT_EQ(per_node.size(), 2u) << "3 x 300m fit a 1-CPU node: two nodes suffice";
}

TEST(BatchScheduling, PlanInvalidatedByANodeRemovalFallsBackToNormalScheduling) {
  Harness h(Nodes(3) + Pods(6, "p", "300m"), kConfig);
  EXPECT_FALSE(h.sched->ScheduleOne());
  h.clock.AdvanceTo(*h.sched->NextTimerNs(false));
  h.sched->FireTimers();
  // Every pod now has a plan; remove a node that holds some before any of them is scheduled.
  std::map<std::string, int> planned;
  for (const auto& p : h.cluster->Pods()) {
    auto node = h.sched->queue().NominatedNodeOf(*p);
    ASSERT_TRUE(node.has_value()) << p->metadata.name;
    EXPECT_TRUE(h.sched->queue().IsPlanned(*p));
    ++planned[*node];
  }
  const std::string removed = planned.begin()->first;
  for (const auto& n : h.cluster->Nodes()) {
    if (n->metadata.name == removed) h.sched->OnNodeDelete(n);
  }
  h.Drain();
  int bound = 0;
  std::map<std::string, int> per_node;
  for (const auto& [pod, node] : h.Placement()) {
    EXPECT_FALSE(node.empty()) << pod << " lost";
    EXPECT_NE(node, removed) << pod;
    bound += !node.empty();
    ++per_node[node];
  }
  EXPECT_EQ(bound, 6);
  for (const auto& [node, n] : per_node) EXPECT_LE(n, 3) << node << " over capacity";
}

TEST(BatchScheduling, PodsLeftOutSayWhyAndStayPending) {
  // Two 1-CPU nodes; two important 400m pods, then a 1-CPU and a 1100m pod. One by one, the small
  // pods spread over both nodes and only they run; the batch puts them on one node and the 1-CPU
  // pod on the other (three, a plan worth making), and the 1100m pod is told which constraint
  // binds.
  std::string small = Pods(2, "small", "400m");
  for (size_t at = 0; (at = small.find("spec:\n", at)) != std::string::npos; at += 6) {
    small.insert(at + 6, "  priorityClassName: important\n");
  }
  Harness h(
      Nodes(2) +
          "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: important}\nvalue: 100\n---\n" +
          small + Pods(1, "big", "1") + Pods(1, "odd", "1100m"),
      kConfig);
  h.clock.AdvanceTo(*h.sched->NextTimerNs(false));
  h.sched->FireTimers();
  h.Drain();
  const auto placement = h.Placement();
  EXPECT_EQ(placement.at("small0"), placement.at("small1"));
  EXPECT_FALSE(placement.at("big0").empty());
  EXPECT_TRUE(placement.at("odd0").empty());
  for (const auto& p : h.cluster->Pods()) {
    if (p->metadata.name != "odd0") continue;
    const std::string message = testing::UnschedulableMessage(*p);
    EXPECT_NE(message.find("the batch optimizer found no room for this pod"), std::string::npos) << message;
    EXPECT_NE(message.find("2 Insufficient cpu"), std::string::npos) << message;
  }
}

TEST(BatchScheduling, ABatchThePlanCannotImproveGoesThroughItsOwnCycles) {
  // Two 1-CPU nodes, three 600m pods: one by one, two run, and no placement runs more. The batch
  // makes no plan: the pods take their own cycles as without it, and the third fails as the
  // profile alone would have it fail.
  Harness h(Nodes(2) + Pods(3, "p", "600m"), kConfig);
  h.clock.AdvanceTo(*h.sched->NextTimerNs(false));
  h.sched->FireTimers();
  h.Drain();
  int bound = 0;
  std::string message;
  for (const auto& p : h.cluster->Pods()) {
    if (!p->spec.node_name.empty()) {
      ++bound;
      continue;
    }
    message = testing::UnschedulableMessage(*p);
  }
  EXPECT_EQ(bound, 2);
  EXPECT_EQ(message.find("the batch optimizer"), std::string::npos) << message;
  EXPECT_NE(message.find("2 Insufficient cpu"), std::string::npos) << message;
}

TEST(BatchScheduling, ThePlanFollowsTheProfilesScoresBetweenEqualPlacements) {
  // Preferred node affinity (NodeAffinity's score) for the labelled node: the batch uses it,
  // although any one node holds the three pods.
  std::string yaml = Nodes(2) + R"(apiVersion: v1
kind: Node
metadata: {name: fast, labels: {disk: ssd}}
status: {capacity: {cpu: "1", memory: 8Gi, pods: "110"}}
---
)";
  for (int i = 0; i < 3; ++i) {
    yaml += "apiVersion: v1\nkind: Pod\nmetadata: {name: p" + std::to_string(i) +
            "}\nspec:\n  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
            "      - weight: 10\n        preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}\n"
            "  containers: [{name: c, image: x, resources: {requests: {cpu: 300m}}}]\n---\n";
  }
  Harness h(yaml, kConfig);
  h.clock.AdvanceTo(*h.sched->NextTimerNs(false));
  h.sched->FireTimers();
  h.Drain();
  for (const auto& [pod, node] : h.Placement()) EXPECT_EQ(node, "fast") << pod;
}

TEST(BatchScheduling, PlannedRoomIsHeldAgainstOtherPods) {
  // A second profile without the optimizer schedules a 500m pod while the batch's plan holds
  // n0's room: it must go elsewhere although n0 is the emptiest node at that moment.
  std::string cfg = std::string(kConfig) + R"(- schedulerName: plain
)";
  // A DaemonSet's pod on n1 makes n1 the busier node (LeastAllocated prefers n0) without making it
  // a node in use (the optimizer opens n0 first).
  const std::string ds = R"(apiVersion: v1
kind: Pod
metadata:
  name: agent
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-1, controller: true}]
spec:
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
---
)";
  Harness h(Nodes(2) + ds + Pods(3, "b", "300m") + Pods(1, "other", "500m", "plain"), cfg);
  // The plain pod is active at once; the batch pods are held. Close the window first so the plan
  // exists before the plain pod's cycle.
  auto next = h.sched->NextTimerNs(false);
  ASSERT_TRUE(next.has_value());
  h.clock.AdvanceTo(*next);
  h.sched->FireTimers();
  std::string planned_node;
  for (const auto& p : h.cluster->Pods()) {
    if (p->metadata.name == "b0") planned_node = h.sched->queue().NominatedNodeOf(*p).value_or("");
  }
  ASSERT_EQ(planned_node, "n0");
  h.Drain();
  const auto placement = h.Placement();
  EXPECT_NE(placement.at("other0"), planned_node);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(placement.at("b" + std::to_string(i)), planned_node);
}

}  // namespace
}  // namespace kubesched::scheduler
