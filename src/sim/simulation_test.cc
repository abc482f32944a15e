// Tests of the simulation as a cluster: one time epoch for manifests and the clock (victim order),
// terminal and terminating pods, and pod-level resources, each through the whole scheduler.

#include "sim/simulation.h"

#include <gtest/gtest.h>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "testing/builders.h"

namespace kubesched::sim {
namespace {

api::ClusterObjects Load(const std::string& yaml) {
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  return std::move(*objects);
}

SimulationResult Simulate(const std::string& yaml, SimulationOptions opts = {}) {
  static const framework::Registry registry = [] {
    framework::Registry r;
    plugins::RegisterInTreePlugins(r);
    return r;
  }();
  opts.scheduler.config = config::DefaultConfiguration(registry);
  auto r = RunSimulation(Load(yaml), opts, registry);
  EXPECT_TRUE(r.has_value()) << r.error();
  return std::move(*r);
}

const api::Pod* Find(const SimulationResult& r, const std::string& name) { return testing::FindPod(r.pods, name); }

std::string MessageOf(const api::Pod& pod) { return testing::UnschedulableMessage(pod); }

const std::string kNode = R"(apiVersion: v1
kind: Node
metadata: {name: n0, labels: {zone: a}}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
---
)";

std::string Pod(const std::string& name, const std::string& cpu, const std::string& meta = "",
                const std::string& spec = "", const std::string& status = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" + meta +
         "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n" + spec +
         (status.empty() ? "" : "status:\n" + status) + "---\n";
}

const std::string kPriorityClass = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
)";

// --- One time epoch ----------------------------------------------------------------------------

TEST(SimulationEpoch, StartsAfterEveryTimestampOfTheInput) {
  auto objects = Load(kNode + Pod("old", "1", "  creationTimestamp: \"2030-01-01T00:00:00Z\"\n", "  nodeName: n0\n",
                                  "  phase: Running\n  startTime: \"2030-01-01T00:00:05Z\"\n"));
  const int64_t start_2030 = 1893456005LL * util::kNanosPerSecond;
  EXPECT_EQ(SimulationStartTime(objects, 0), start_2030 + util::kNanosPerSecond);
  EXPECT_EQ(SimulationStartTime(objects, start_2030 * 2), start_2030 * 2);
}

TEST(SimulationEpoch, PodsBoundDuringTheRunAreYoungerThanRunningOnes) {
  auto r = Simulate(
      kNode + Pod("old", "1", "", "  nodeName: n0\n", "  phase: Running\n  startTime: \"2024-05-01T12:00:00Z\"\n") +
      Pod("fresh", "500m"));
  const api::Pod* fresh = Find(r, "fresh");
  ASSERT_EQ(fresh->spec.node_name, "n0");
  ASSERT_TRUE(fresh->status.start_time_ns.has_value());
  EXPECT_GT(*fresh->status.start_time_ns, *Find(r, "old")->status.start_time_ns);
  EXPECT_GE(*fresh->status.start_time_ns, r.start_time_ns);
  EXPECT_GT(fresh->metadata.creation_timestamp_ns, 1714564800LL * util::kNanosPerSecond);
}

TEST(SimulationEpoch, PreemptionEvictsTheYoungerOfEqualVictims) {
  // Both running pods have priority 0 and one must go. Upstream keeps the more important one:
  // equal priority, so the one that started first. "recent" has not reported a start time (it is
  // taken as now); "old" started in 2024. With the clock at the Unix epoch, "recent" would look
  // older than 2024 and "old" would be evicted.
  auto r =
      Simulate(kNode + kPriorityClass +
               Pod("old", "1", "", "  nodeName: n0\n", "  phase: Running\n  startTime: \"2024-05-01T12:00:00Z\"\n") +
               Pod("recent", "1", "", "  nodeName: n0\n", "  phase: Running\n") +
               Pod("preemptor", "1", "", "  priorityClassName: high\n"));
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].pod->metadata.name, "recent");
  EXPECT_EQ(Find(r, "old")->spec.node_name, "n0");
  EXPECT_EQ(Find(r, "preemptor")->spec.node_name, "n0");
}

// --- Terminal and terminating pods -------------------------------------------------------------

TEST(TerminalPods, SucceededAndFailedPodsHoldNothingAndAreNeverScheduled) {
  auto r = Simulate(kNode + Pod("done", "2", "", "  nodeName: n0\n", "  phase: Succeeded\n") +
                    Pod("crashed", "2", "", "  nodeName: n0\n", "  phase: Failed\n") +
                    Pod("never-ran", "1", "", "", "  phase: Failed\n") + Pod("p", "2"));
  EXPECT_EQ(Find(r, "p")->spec.node_name, "n0") << MessageOf(*Find(r, "p"));
  EXPECT_TRUE(Find(r, "never-ran")->spec.node_name.empty());
  EXPECT_EQ(MessageOf(*Find(r, "never-ran")), "") << "never attempted";
  EXPECT_EQ(r.attempts, 1u);
}

TEST(TerminatingPods, HoldTheirResourcesAndAreNotScheduled) {
  auto r = Simulate(
      kNode +
      Pod("leaving", "2", "  deletionTimestamp: \"2024-05-01T12:00:00Z\"\n", "  nodeName: n0\n", "  phase: Running\n") +
      Pod("deleted-pending", "100m", "  deletionTimestamp: \"2024-05-01T12:00:00Z\"\n") + Pod("p", "1"));
  EXPECT_TRUE(Find(r, "p")->spec.node_name.empty());
  EXPECT_NE(MessageOf(*Find(r, "p")).find("Insufficient cpu"), std::string::npos) << MessageOf(*Find(r, "p"));
  EXPECT_TRUE(Find(r, "deleted-pending")->spec.node_name.empty());
  EXPECT_EQ(MessageOf(*Find(r, "deleted-pending")), "");
}

TEST(TerminatingPods, DoNotCountForTopologySpread) {
  // n0 runs two terminating app=web pods, n1 one live one. Counted, they would push the new pod to
  // n1; excluded, n0 has none and n1 is at the limit of maxSkew 1.
  std::string nodes;
  for (std::string n : {"n0", "n1"}) {
    nodes += "apiVersion: v1\nkind: Node\nmetadata: {name: " + n +
             "}\nstatus: {capacity: {cpu: \"8\", pods: \"110\"}}\n---\n";
  }
  const std::string terminating = "  labels: {app: web}\n  deletionTimestamp: \"2024-05-01T12:00:00Z\"\n";
  const std::string spread =
      "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: "
      "DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n";
  auto r = Simulate(nodes + Pod("t1", "100m", terminating, "  nodeName: n0\n") +
                    Pod("t2", "100m", terminating, "  nodeName: n0\n") +
                    Pod("live", "100m", "  labels: {app: web}\n", "  nodeName: n1\n") +
                    Pod("new", "100m", "  labels: {app: web}\n", spread));
  EXPECT_EQ(Find(r, "new")->spec.node_name, "n0") << MessageOf(*Find(r, "new"));
}

// --- Graceful deletion of preemption victims ---------------------------------------------------

// n0 has room for one 2-cpu pod: "victim" (priority 0, 20 s grace period) runs there; "preemptor"
// (priority 1000) needs it; "late" (priority 0, 1 cpu) is created 5 s in, while the victim is
// still terminating.
std::string GraceScenario() {
  return kNode + kPriorityClass +
         Pod("victim", "2", "", "  nodeName: n0\n  terminationGracePeriodSeconds: 20\n", "  phase: Running\n") +
         Pod("preemptor", "2", "", "  priorityClassName: high\n") +
         Pod("late", "1", "  annotations: {simulate.kubesched.io/create-after: 5s}\n");
}

TEST(GracefulPreemption, VictimTerminatesDuringItsGracePeriod) {
  // Stopped 10 s in: the victim is still there, marked for deletion by preemption, holding its
  // cpu; the preemptor waits, nominated to n0; "late" does not fit either.
  SimulationOptions opts;
  opts.max_virtual_time_ns = 10 * util::kNanosPerSecond;
  auto r = Simulate(GraceScenario(), opts);
  const api::Pod* victim = Find(r, "victim");
  ASSERT_NE(victim, nullptr);
  EXPECT_EQ(victim->spec.node_name, "n0");
  ASSERT_TRUE(victim->metadata.deletion_timestamp_ns.has_value());
  EXPECT_EQ(*victim->metadata.deletion_timestamp_ns, r.start_time_ns + 20 * util::kNanosPerSecond);
  bool disruption_target = false;
  for (const auto& c : victim->status.conditions) {
    disruption_target |= c.type == "DisruptionTarget" && c.status == "True" && c.reason == "PreemptionByScheduler";
  }
  EXPECT_TRUE(disruption_target);
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].pod->metadata.name, "victim");
  const api::Pod* preemptor = Find(r, "preemptor");
  EXPECT_TRUE(preemptor->spec.node_name.empty());
  EXPECT_EQ(preemptor->status.nominated_node_name, "n0");
  ASSERT_NE(Find(r, "late"), nullptr) << "created 5 s in";
  EXPECT_TRUE(Find(r, "late")->spec.node_name.empty());
}

TEST(GracefulPreemption, PreemptorBindsOnceTheVictimIsGoneAndKeepsItsCapacity) {
  auto r = Simulate(GraceScenario());
  EXPECT_EQ(Find(r, "victim"), nullptr) << "removed after its grace period";
  ASSERT_EQ(r.evictions.size(), 1u);
  const api::Pod* preemptor = Find(r, "preemptor");
  ASSERT_EQ(preemptor->spec.node_name, "n0") << MessageOf(*preemptor);
  ASSERT_TRUE(preemptor->status.start_time_ns.has_value());
  // Bound when the victim's removal requeued it: the virtual clock ran through the grace period.
  EXPECT_GE(*preemptor->status.start_time_ns, r.start_time_ns + 20 * util::kNanosPerSecond);
  EXPECT_LT(*preemptor->status.start_time_ns, r.start_time_ns + 21 * util::kNanosPerSecond);
  EXPECT_GE(r.virtual_time_ns, r.start_time_ns + 20 * util::kNanosPerSecond);
  // The lower-priority pod created during the grace period did not take the nominated
  // preemptor's capacity.
  const api::Pod* late = Find(r, "late");
  ASSERT_NE(late, nullptr);
  EXPECT_TRUE(late->spec.node_name.empty());
  EXPECT_NE(MessageOf(*late).find("Insufficient cpu"), std::string::npos) << MessageOf(*late);
}

// --- Pod-level resources -----------------------------------------------------------------------

// The run's time limit counts from the timeline's last event: pods a long timeline creates (a
// trace replayed over days) are created and scheduled, not dropped past the first hour.
TEST(Timeline, PodsCreatedPastTheTimeLimitAreStillCreatedAndScheduled) {
  SimulationOptions opts;
  opts.max_virtual_time_ns = 60 * util::kNanosPerSecond;
  auto r = Simulate(kNode + Pod("early", "1", "  annotations: {simulate.kubesched.io/create-after: 1s}\n") +
                        Pod("late", "1", "  annotations: {simulate.kubesched.io/create-after: 48h}\n"),
                    opts);
  ASSERT_NE(Find(r, "early"), nullptr);
  EXPECT_EQ(Find(r, "early")->spec.node_name, "n0");
  ASSERT_NE(Find(r, "late"), nullptr) << "created 48 h in";
  EXPECT_EQ(Find(r, "late")->spec.node_name, "n0");
  EXPECT_GE(r.virtual_time_ns - r.start_time_ns, 48 * 3600 * util::kNanosPerSecond);
}

TEST(PodLevelResources, PodRequestsReplaceTheContainersSum) {
  // Each pod's containers ask for 100m, the pod as a whole for 1500m: only one fits on 2 cpus.
  const std::string pod_level = "  resources: {requests: {cpu: 1500m}, limits: {cpu: \"2\"}}\n";
  auto r = Simulate(kNode + Pod("a", "100m", "", pod_level) + Pod("b", "100m", "", pod_level));
  int bound = 0;
  for (const auto& name : {"a", "b"}) bound += Find(r, name)->spec.node_name.empty() ? 0 : 1;
  EXPECT_EQ(bound, 1);
}

TEST(PodLevelResources, LimitDefaultsTheRequestWhenNoContainerRequests) {
  // No container requests memory: the pod-level memory limit is its request (API defaulting).
  const std::string yaml = kNode + R"(apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  resources: {limits: {memory: 6Gi}}
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: big2}
spec:
  resources: {limits: {memory: 6Gi}}
  containers: [{name: c, image: x}]
)";
  auto r = Simulate(yaml);
  int bound = 0;
  for (const auto& name : {"big", "big2"}) bound += Find(r, name)->spec.node_name.empty() ? 0 : 1;
  EXPECT_EQ(bound, 1) << "8Gi fits one pod of 6Gi";
}

// --- Memoised verdicts (framework/runtime/equivalence_cache.h) ----------------------------------

// Pods of one spec share their class's Filter verdicts and scores; each bind changes a node, and
// that node alone is judged again: the third identical pod finds both nodes full.
TEST(SimulationEquivalence, IdenticalPodsSeeTheNodesTheirPredecessorsFilled) {
  const std::string node1 = R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: b}}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
---
)";
  auto r = Simulate(kNode + node1 + Pod("a", "1500m") + Pod("b", "1500m") + Pod("c", "1500m") + Pod("small", "500m"));
  const api::Pod* a = Find(r, "a");
  const api::Pod* b = Find(r, "b");
  ASSERT_FALSE(a->spec.node_name.empty());
  ASSERT_FALSE(b->spec.node_name.empty());
  EXPECT_NE(a->spec.node_name, b->spec.node_name);
  EXPECT_TRUE(Find(r, "c")->spec.node_name.empty());
  EXPECT_EQ(MessageOf(*Find(r, "c")),
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption "
            "victims found for incoming pod.");
  EXPECT_FALSE(Find(r, "small")->spec.node_name.empty());
}

}  // namespace
}  // namespace kubesched::sim
