// End-to-end tests of cross-node preemption through `kubesched simulate`: the examples in
// examples/preemption against DefaultPreemption, protected namespaces and PodDisruptionBudgets, a
// pod arriving while a plan is applied, and a plan the cluster invalidates. Every run is checked
// for lost and doubly bound pods, and every evicted pod owned by a controller must come back.

#include <map>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

const std::string kConfig = "examples/preemption/config.yaml";

struct SimRun {
  json j;
  std::string err;
  // Final pods by name.
  std::map<std::string, json> pods;
  const json& summary() const { return j["summary"]; }
  std::string NodeOf(const std::string& name) const {
    auto it = pods.find(name);
    if (it == pods.end() || it->second["node"].is_null()) return "";
    return it->second["node"];
  }
  std::string StatusOf(const std::string& name) const {
    auto it = pods.find(name);
    return it == pods.end() ? "" : it->second["status"].get<std::string>();
  }
  // The pod that replaced the evicted `name` (its controller recreated it), or "".
  std::string ReplacementOf(const std::string& name) const {
    for (const auto& e : j["evicted"]) {
      if (e["name"] == name && !e["replacedBy"].is_null()) {
        const std::string key = e["replacedBy"];
        return key.substr(key.find('/') + 1);
      }
    }
    return "";
  }
  std::set<std::string> Evicted() const {
    std::set<std::string> out;
    for (const auto& e : j["evicted"]) out.insert(e["name"].get<std::string>());
    return out;
  }
};

// Runs simulate on the manifest text (and the config when given), then checks what must hold in
// every run: nothing bound twice (the simulated API server refuses a second binding, which the
// scheduler would log), every pod listed once, and every evicted pod that belongs to a
// controller recreated and present.
SimRun Simulate(const std::string& manifests, const std::string& config, const std::string& name) {
  std::vector<std::string> args = {"simulate", "-f", WriteTempFile(name, manifests), "-o", "json"};
  if (!config.empty()) {
    args.insert(args.begin() + 1, config);
    args.insert(args.begin() + 1, "--config");
  }
  RunResult r = RunKubesched(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  SimRun run;
  run.err = r.err;
  run.j = json::parse(r.out);
  EXPECT_EQ(r.err.find("already assigned"), std::string::npos) << r.err;
  for (const auto& p : run.j["pods"]) {
    const std::string key = p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>();
    EXPECT_TRUE(run.pods.emplace(p["name"].get<std::string>(), p).second) << "listed twice: " << key;
  }
  size_t bound_now = 0;
  for (const auto& [n, p] : run.pods) {
    if (!p["node"].is_null() && !p["boundInInput"].get<bool>() && p["status"] != "Terminating") ++bound_now;
  }
  EXPECT_EQ(run.summary()["scheduled"].get<size_t>(), bound_now);
  for (const auto& e : run.j["evicted"]) {
    const std::string name = e["name"];
    EXPECT_FALSE(run.pods.contains(name)) << "evicted yet still listed: " << e.dump();
    // Every pod these tests give a ReplicaSet (alpha, beta, db) comes back under a new name.
    const bool owned = name.starts_with("alpha-") || name.starts_with("beta-") || name.starts_with("db-");
    if (owned) {
      EXPECT_FALSE(e["replacedBy"].is_null()) << "not recreated: " << e.dump();
      if (e["replacedBy"].is_null()) continue;
      const std::string key = e["replacedBy"];
      EXPECT_TRUE(run.pods.contains(key.substr(key.find('/') + 1))) << "replacement missing: " << e.dump();
    }
  }
  return run;
}

SimRun SimulateExample(const std::string& example, const std::string& config) {
  const std::string path = config.empty() || config.front() == '/' ? config : SourcePath(config);
  return Simulate(ReadSource("examples/preemption/" + example), path, example);
}

std::string WithMovesDisallowed() {
  return WriteTempFile("no-moves.yaml",
                       std::regex_replace(ReadSource(kConfig), std::regex("allowMoves: true"), "allowMoves: false"));
}

// --- The blocking pod is on another node of the zone ---------------------------------------------

TEST(CrossNodePreemptionE2E, ZoneAntiAffinityDefaultPreemptionCannotHelp) {
  SimRun d = SimulateExample("zone-anti-affinity.yaml", "");
  EXPECT_EQ(d.StatusOf("payments"), "Pending");
  EXPECT_TRUE(d.j["evicted"].empty());
  EXPECT_EQ(d.NodeOf("db-0"), "a1");
}

TEST(CrossNodePreemptionE2E, ZoneAntiAffinitySolvedWithOneMove) {
  SimRun x = SimulateExample("zone-anti-affinity.yaml", kConfig);
  EXPECT_EQ(x.NodeOf("payments"), "a2");
  EXPECT_EQ(x.summary()["moves"], 1);
  EXPECT_EQ(x.summary()["evictions"], 0);
  EXPECT_EQ(x.summary()["pending"], 0);
  ASSERT_EQ(x.Evicted(), std::set<std::string>{"db-0"});
  EXPECT_EQ(x.j["evicted"][0]["movedTo"], "b1");
  EXPECT_EQ(x.j["evicted"][0]["preemptedBy"], "default/payments");
  // The recreated pod (new name) was steered to its planned node.
  const std::string replacement = x.ReplacementOf("db-0");
  ASSERT_FALSE(replacement.empty());
  EXPECT_NE(replacement, "db-0");
  EXPECT_EQ(x.NodeOf(replacement), "b1");
  const json& c = x.summary()["crossNodePreemption"];
  EXPECT_EQ(c["plans"], 1);
  EXPECT_EQ(c["completed"], 1);
  EXPECT_EQ(c["optimal"], 1);
  EXPECT_EQ(c["activePlans"], 0);
  EXPECT_EQ(c["heldMoves"], 0);
}

// With the batch optimizer in front (the configuration the README recommends), the move's
// replacement goes to its planned node instead of joining a batch that packs it back into the
// preemptor's zone: one move, no expired plan (it used to repeat 117 times).
TEST(CrossNodePreemptionE2E, BatchAndMoveTogetherMoveOnce) {
  SimRun x = SimulateExample("batch-and-move.yaml", "examples/optimizer.yaml");
  EXPECT_EQ(x.NodeOf("payments"), "a1");
  EXPECT_EQ(x.StatusOf("payments"), "Running");
  EXPECT_EQ(x.summary()["moves"], 1);
  EXPECT_EQ(x.summary()["evictions"], 0);
  EXPECT_EQ(x.summary()["pending"], 0);
  const std::string replacement = x.ReplacementOf("db-0");
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(x.NodeOf(replacement), "b1");
  const json& c = x.summary()["crossNodePreemption"];
  EXPECT_EQ(c["plans"], 1);
  EXPECT_EQ(c["completed"], 1);
  EXPECT_EQ(c["expired"], 0);
  EXPECT_EQ(c["activePlans"], 0);
  EXPECT_EQ(c["heldMoves"], 0);
}

TEST(CrossNodePreemptionE2E, ZoneAntiAffinityWithoutMovesEvictsOnce) {
  SimRun x = SimulateExample("zone-anti-affinity.yaml", WithMovesDisallowed());
  EXPECT_EQ(x.NodeOf("payments"), "a2");
  EXPECT_EQ(x.summary()["evictions"], 1);
  EXPECT_EQ(x.summary()["moves"], 0);
  // Its ReplicaSet recreates the evicted pod, which runs outside the zone.
  const std::string replacement = x.ReplacementOf("db-0");
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(x.NodeOf(replacement), "b1");
}

// --- DefaultPreemption leaves a victim homeless -------------------------------------------------

TEST(CrossNodePreemptionE2E, HomelessVictimUnderDefaultPreemption) {
  SimRun d = SimulateExample("homeless.yaml", "");
  EXPECT_EQ(d.NodeOf("urgent"), "node-a");
  const std::string replacement = d.ReplacementOf("alpha-x7k2p");
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(d.StatusOf(replacement), "Pending");
  EXPECT_EQ(d.summary()["pending"], 1);
}

TEST(CrossNodePreemptionE2E, HomelessSolvedWithEveryPodPlaced) {
  SimRun x = SimulateExample("homeless.yaml", kConfig);
  EXPECT_EQ(x.summary()["pending"], 0);
  EXPECT_EQ(x.NodeOf("urgent"), "node-b");
  EXPECT_EQ(x.NodeOf("alpha-x7k2p"), "node-a");
  EXPECT_EQ(x.summary()["evictions"], 0);
  EXPECT_EQ(x.summary()["moves"], 1);
  const std::string replacement = x.ReplacementOf("beta-m4q9z");
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(x.NodeOf(replacement), "node-c");
  EXPECT_EQ(x.StatusOf(replacement), "Running");
}

// --- Protected namespaces and disruption budgets -------------------------------------------------

// beta in kube-system (protected) or under a PDB allowing no disruption: it must not be touched,
// so the only plan left evicts alpha, as DefaultPreemption does.
TEST(CrossNodePreemptionE2E, ProtectedNamespaceIsNeverTouched) {
  std::string m = ReadSource("examples/preemption/homeless.yaml");
  m = std::regex_replace(m, std::regex("metadata: \\{name: beta, namespace: default\\}"),
                         "metadata: {name: beta, namespace: kube-system}");
  m = std::regex_replace(m, std::regex("name: beta-m4q9z\n  namespace: default"),
                         "name: beta-m4q9z\n  namespace: kube-system");
  SimRun x = Simulate(m, SourcePath(kConfig), "protected.yaml");
  EXPECT_EQ(x.NodeOf("beta-m4q9z"), "node-b");
  EXPECT_EQ(x.Evicted(), std::set<std::string>{"alpha-x7k2p"});
  EXPECT_EQ(x.NodeOf("urgent"), "node-a");
  EXPECT_EQ(x.summary()["moves"], 0);
}

TEST(CrossNodePreemptionE2E, DisruptionBudgetIsRespected) {
  std::string m = ReadSource("examples/preemption/homeless.yaml");
  m += R"(---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: beta, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: beta}}
)";
  SimRun x = Simulate(m, SourcePath(kConfig), "pdb.yaml");
  EXPECT_EQ(x.NodeOf("beta-m4q9z"), "node-b");
  EXPECT_EQ(x.Evicted(), std::set<std::string>{"alpha-x7k2p"});
  EXPECT_EQ(x.summary()["moves"], 0);
  // A budget that allows one disruption lets the move happen.
  m = std::regex_replace(m, std::regex("minAvailable: 1"), "maxUnavailable: 1");
  SimRun y = Simulate(m, SourcePath(kConfig), "pdb-allows.yaml");
  EXPECT_EQ(y.summary()["moves"], 1);
  EXPECT_EQ(y.summary()["pending"], 0);
}

// --- A pod arriving while a plan is applied -----------------------------------------------------

// Moving beta to node-c needs gamma (priority 5, no controller) evicted there first, so the
// recreated beta waits 30 s for gamma to terminate. Meanwhile "late" arrives (priority 25: ahead
// of beta's replacement in the queue, behind the preemptor; it never preempts) and would take
// node-c's freed room: the plan holds it for beta, so late stays pending and the plan completes.
TEST(CrossNodePreemptionE2E, ArrivingPodDoesNotTakeHeldRoom) {
  std::string m = ReadSource("examples/preemption/homeless.yaml");
  m += R"(---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: lowest}
value: 5
---
apiVersion: v1
kind: Pod
metadata: {name: gamma, namespace: default}
spec:
  nodeName: node-c
  priorityClassName: lowest
  containers: [{name: c, image: gamma, resources: {requests: {cpu: "2", memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: late
  namespace: default
  annotations: {simulate.kubesched.io/create-after: 10s}
spec:
  priority: 25
  preemptionPolicy: Never
  containers: [{name: c, image: late, resources: {requests: {cpu: "3", memory: 1Gi}}}]
)";
  SimRun x = Simulate(m, SourcePath(kConfig), "arrival.yaml");
  EXPECT_EQ(x.NodeOf("urgent"), "node-b");
  EXPECT_EQ(x.Evicted(), (std::set<std::string>{"beta-m4q9z", "gamma"}));
  EXPECT_EQ(x.summary()["moves"], 1);
  EXPECT_EQ(x.summary()["evictions"], 1);
  const std::string replacement = x.ReplacementOf("beta-m4q9z");
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(x.NodeOf(replacement), "node-c");
  EXPECT_EQ(x.StatusOf("late"), "Pending");
  EXPECT_EQ(x.NodeOf("alpha-x7k2p"), "node-a");
  const json& c = x.summary()["crossNodePreemption"];
  EXPECT_EQ(c["completed"], 1);
  EXPECT_EQ(c["activePlans"], 0);
  EXPECT_EQ(c["heldMoves"], 0);
}

// --- A plan the cluster invalidates --------------------------------------------------------------

// While db-0 terminates, a more important pod takes node a2, where payments was going: once
// db-0 is gone payments still does not fit, its plan expires and a new search finds nothing.
// Nothing stays held, and the move already made stands.
TEST(CrossNodePreemptionE2E, InvalidatedPlanExpiresAndHoldsNothing) {
  std::string m = ReadSource("examples/preemption/zone-anti-affinity.yaml");
  m += R"(---
apiVersion: v1
kind: Pod
metadata:
  name: vip
  namespace: default
  annotations: {simulate.kubesched.io/create-after: 5s}
spec:
  priority: 5000
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
  containers: [{name: c, image: vip, resources: {requests: {cpu: "3", memory: 1Gi}}}]
)";
  SimRun x = Simulate(m, SourcePath(kConfig), "invalidated.yaml");
  EXPECT_EQ(x.NodeOf("vip"), "a2");
  EXPECT_EQ(x.StatusOf("payments"), "Pending");
  const json& c = x.summary()["crossNodePreemption"];
  EXPECT_EQ(c["plans"], 1);
  EXPECT_EQ(c["expired"], 1);
  EXPECT_EQ(c["activePlans"], 0);
  EXPECT_EQ(c["heldMoves"], 0);
  const std::string replacement = x.ReplacementOf("db-0");
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(x.NodeOf(replacement), "b1");

  // The node payments was planned on goes away instead: the plan expires the same way.
  std::string gone = ReadSource("examples/preemption/zone-anti-affinity.yaml");
  gone = std::regex_replace(gone, std::regex("name: a2\n  labels"),
                            "name: a2\n  annotations: {simulate.kubesched.io/delete-after: 5s}\n  labels");
  SimRun y = Simulate(gone, SourcePath(kConfig), "node-gone.yaml");
  EXPECT_EQ(y.StatusOf("payments"), "Pending");
  EXPECT_EQ(y.summary()["crossNodePreemption"]["expired"], 1);
  EXPECT_EQ(y.summary()["crossNodePreemption"]["activePlans"], 0);
  EXPECT_EQ(y.summary()["crossNodePreemption"]["heldMoves"], 0);
}

// --- The thesis's example -------------------------------------------------------------------------

TEST(CrossNodePreemptionE2E, ThesisExampleGivesTheThesisAnswer) {
  // DefaultPreemption evicts the kube-system pod 0 for pod 2: it has no controller and is lost.
  SimRun d = SimulateExample("thesis.yaml", "");
  EXPECT_EQ(d.Evicted(), std::set<std::string>{"pod-0"});
  EXPECT_EQ(d.ReplacementOf("pod-0"), "");
  // Cross-node preemption never touches kube-system: pod 0 stays on node 2, pods 1 and 3 run on
  // node 1 (SSD; not 10Gbps), pod 2 waits, nothing is evicted or moved.
  SimRun x = SimulateExample("thesis.yaml", kConfig);
  EXPECT_TRUE(x.j["evicted"].empty());
  EXPECT_EQ(x.NodeOf("pod-0"), "node-2");
  EXPECT_EQ(x.NodeOf("pod-1"), "node-1");
  EXPECT_EQ(x.NodeOf("pod-3"), "node-1");
  EXPECT_EQ(x.StatusOf("pod-2"), "Pending");
  EXPECT_NE(x.pods["pod-2"]["message"].get<std::string>().find("cross-node preemption found no plan"),
            std::string::npos);
}

// --- Configuration errors --------------------------------------------------------------------------

TEST(CrossNodePreemptionE2E, BadArgsNameTheFileAndField) {
  const std::string cfg =
      WriteTempFile("bad-xnode.yaml",
                    std::regex_replace(ReadSource(kConfig), std::regex("maxCandidatePods: 50"), "maxCandidatePods: 0"));
  RunResult r = RunKubesched({"simulate", "--config", cfg, "-f", SourcePath("examples/preemption/homeless.yaml")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("bad-xnode.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("maxCandidatePods: Invalid value: 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kubesched::e2e
