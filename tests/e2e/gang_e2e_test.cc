// End-to-end tests of gang scheduling through `simulate`: PodGroups (scheduling.k8s.io/v1alpha2)
// read from manifests, pods linked by spec.schedulingGroup, and the GangScheduling plugin (in the
// default profile, and enabled explicitly): a gang short of minCount members is held before the
// queue; the group's cycle places a gang whole or not at all, gangs competing for room in order,
// and a gang with a topology key in one domain.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/apiserver_process.h"
#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

const std::string kConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: GangScheduling
)";

// A node; `extra` is more YAML under metadata (labels, annotations), indented two spaces.
std::string Node(const std::string& name, const std::string& cpu, const std::string& extra = "") {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n" + extra +
         "status:\n  allocatable:\n    cpu: \"" + cpu + "\"\n    memory: 8Gi\n    pods: \"110\"\n";
}

std::string Nodes(int count, const std::string& cpu) {
  std::string out;
  for (int i = 0; i < count; ++i) out += Node("node-" + std::to_string(i), cpu);
  return out;
}

std::string Gang(const std::string& name, int min_count, const std::string& topology_key = "") {
  std::string out = "---\napiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n  name: " + name +
                    "\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: " + std::to_string(min_count) + "\n";
  if (!topology_key.empty()) out += "  schedulingConstraints:\n    topology:\n    - key: " + topology_key + "\n";
  return out;
}

std::string Members(const std::string& group, int count, const std::string& cpu,
                    const std::string& priority_class = "") {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + group + "-" + std::to_string(i) +
           "\nspec:\n  schedulingGroup:\n    podGroupName: " + group + "\n";
    if (!priority_class.empty()) out += "  priorityClassName: " + priority_class + "\n";
    out += "  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests:\n        cpu: \"" + cpu +
           "\"\n";
  }
  return out;
}

// A pod already running on `node`.
std::string Running(const std::string& name, const std::string& node, const std::string& cpu) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n  nodeName: " + node +
         "\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests:\n        cpu: \"" + cpu +
         "\"\n";
}

json Simulate(const std::string& manifests, const std::string& name, bool default_profile = false) {
  const std::string file = WriteTempFile(name + ".yaml", manifests);
  std::vector<std::string> args = {"simulate", "-f", file, "-o", "json"};
  if (!default_profile) {
    args.push_back("--config");
    args.push_back(WriteTempFile("gang-config.yaml", kConfig));
  }
  RunResult r = RunKubesched(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

std::map<std::string, std::string> Messages(const json& j) {
  std::map<std::string, std::string> out;
  for (const auto& p : j["pods"]) {
    out[p["name"].get<std::string>()] = p["message"].is_string() ? p["message"].get<std::string>() : "";
  }
  return out;
}

// Pod name -> node ("" when pending).
std::map<std::string, std::string> Placement(const json& j) {
  std::map<std::string, std::string> out;
  for (const auto& p : j["pods"])
    out[p["name"].get<std::string>()] = p["node"].is_string() ? p["node"].get<std::string>() : "";
  return out;
}

// How many of the pods whose name starts with `prefix` are placed.
int PlacedWithPrefix(const json& j, const std::string& prefix) {
  int n = 0;
  for (const auto& [pod, node] : Placement(j)) n += pod.starts_with(prefix) && !node.empty();
  return n;
}

TEST(GangE2E, AGangShortOfMinCountMembersIsHeldBeforeTheQueue) {
  const json j = Simulate(Nodes(2, "4") + Gang("train", 4) + Members("train", 3, "1"), "short");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  EXPECT_EQ(j["summary"]["pending"], 3);
  for (const auto& [pod, message] : Messages(j)) {
    EXPECT_NE(message.find("waiting for minCount pods from a gang to appear in scheduling queue"), std::string::npos)
        << pod << ": " << message;
  }
}

TEST(GangE2E, MembersOfAPodGroupThatDoesNotExistWaitForIt) {
  const json j = Simulate(Nodes(1, "4") + Members("ghost", 2, "1"), "ghost");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  for (const auto& [pod, message] : Messages(j)) {
    EXPECT_NE(message.find("waiting for pods's pod group \"ghost\" to appear in scheduling queue"), std::string::npos)
        << pod << ": " << message;
  }
}

TEST(GangE2E, AGangThatFitsIsPlacedWhole) {
  const json j = Simulate(Nodes(2, "4") + Gang("train", 6) + Members("train", 6, "1"), "fits");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 6);
  EXPECT_EQ(j["summary"]["pending"], 0);
}

// The issue's first case: a gang of 8 with minCount 8 on room for 7. The group's cycle finds room
// for 7 at most: none is placed, none holds room, and every member says why.
TEST(GangE2E, AGangOfEightOnRoomForSevenPlacesNoneAndSaysWhy) {
  const json j = Simulate(Nodes(7, "1") + Gang("train", 8) + Members("train", 8, "1"), "eight");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  EXPECT_EQ(j["summary"]["pending"], 8);
  for (const auto& [pod, message] : Messages(j)) {
    EXPECT_NE(message.find("pod group \"train\" needs 8 pods placed together and at most 7 of its 8 pending pods fit"),
              std::string::npos)
        << pod << ": " << message;
  }
}

// ... and a node added later (ten minutes in) lets all 8 be placed, in one group cycle.
TEST(GangE2E, ANodeAddedLaterLetsTheWholeGangBePlaced) {
  const std::string later = "  annotations:\n    simulate.kubesched.io/create-after: 10m\n";
  const json j = Simulate(Nodes(7, "1") + Node("node-late", "1", later) + Gang("train", 8) + Members("train", 8, "1"),
                          "eight-then-nine");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 8);
  EXPECT_EQ(j["summary"]["pending"], 0);
}

// The default profile has GangScheduling (as upstream's with its GangScheduling gate on).
TEST(GangE2E, TheDefaultProfileSchedulesGangsWhole) {
  const json j = Simulate(Nodes(7, "1") + Gang("train", 8) + Members("train", 8, "1"), "default-profile", true);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  EXPECT_EQ(j["summary"]["pending"], 8);
}

// Two gangs of 6 on room for 6: one is placed whole, the other stays pending whole; no member of
// either holds room for a gang that cannot complete. Equal priority: the first created (then the
// first by name) goes first.
TEST(GangE2E, TwoGangsOnRoomForOneEndWithOnePlacedWhole) {
  const json j =
      Simulate(Nodes(3, "2") + Gang("a", 6) + Gang("b", 6) + Members("a", 6, "1") + Members("b", 6, "1"), "two-gangs");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 6);
  EXPECT_EQ(PlacedWithPrefix(j, "a-"), 6);
  EXPECT_EQ(PlacedWithPrefix(j, "b-"), 0);
  for (const auto& [pod, message] : Messages(j)) {
    if (pod.starts_with("b-")) EXPECT_NE(message.find("pod group \"b\" needs 6 pods"), std::string::npos) << message;
  }
}

// ... and a gang of higher priority goes first, whatever the order of creation.
TEST(GangE2E, TheHigherPriorityGangGoesFirst) {
  const std::string high =
      "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\nvalue: 1000\n";
  const json j =
      Simulate(high + Nodes(3, "2") + Gang("a", 6) + Gang("b", 6) + Members("a", 6, "1") + Members("b", 6, "1", "high"),
               "two-gangs-priority");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "a-"), 0);
  EXPECT_EQ(PlacedWithPrefix(j, "b-"), 6);
}

// Topology: three racks of four nodes; the first two are partly filled, so a gang of 8 pods of 2
// cpu (16 cpu) fits only in the emptiest rack, and lands there entirely.
TEST(GangE2E, AGangWithATopologyKeyLandsInTheOneRackWithRoom) {
  std::string manifests;
  for (int rack = 0; rack < 3; ++rack) {
    for (int i = 0; i < 4; ++i) {
      const std::string name = "r" + std::to_string(rack) + "-n" + std::to_string(i);
      manifests += Node(name, "4", "  labels:\n    topology.example.com/rack: rack-" + std::to_string(rack) + "\n");
    }
  }
  manifests += Running("busy-0", "r0-n0", "2") + Running("busy-1", "r1-n3", "1");
  manifests += Gang("train", 8, "topology.example.com/rack") + Members("train", 8, "2");
  const json j = Simulate(manifests, "racks");
  ASSERT_FALSE(j.is_discarded());
  int placed = 0;
  for (const auto& [pod, node] : Placement(j)) {
    if (!pod.starts_with("train-")) continue;
    EXPECT_TRUE(node.starts_with("r2-")) << pod << " on " << node;
    placed += !node.empty();
  }
  EXPECT_EQ(placed, 8);
}

// ... and among racks that take it whole, upstream's placement score decides (the pods placed,
// then MostAllocated over the rack): the most allocated rack once the gang is in, which leaves
// the emptier racks whole for larger gangs. rack-2 lacks the room in all.
TEST(GangE2E, AGangGoesToTheMostAllocatedRackThatTakesItWhole) {
  std::string manifests;
  for (int rack = 0; rack < 3; ++rack) {
    for (int i = 0; i < 4; ++i) {
      const std::string name = "r" + std::to_string(rack) + "-n" + std::to_string(i);
      manifests += Node(name, "4", "  labels:\n    topology.example.com/rack: rack-" + std::to_string(rack) + "\n");
    }
  }
  manifests += Running("busy-0", "r0-n0", "4") + Running("busy-2a", "r2-n0", "4") + Running("busy-2b", "r2-n1", "4") +
               Running("busy-2c", "r2-n2", "2");
  manifests += Gang("train", 4, "topology.example.com/rack") + Members("train", 4, "2");
  const json j = Simulate(manifests, "most-allocated-rack");
  ASSERT_FALSE(j.is_discarded());
  int placed = 0;
  for (const auto& [pod, node] : Placement(j)) {
    if (!pod.starts_with("train-")) continue;
    EXPECT_TRUE(node.starts_with("r0-")) << pod << " on " << node;
    placed += !node.empty();
  }
  EXPECT_EQ(placed, 4);
  ASSERT_TRUE(j.contains("podGroups")) << j.dump();
  EXPECT_EQ(j["podGroups"]["groups"][0]["domain"], "topology.example.com/rack=rack-0");
}

// ... and when no rack has room, the members say so per rack: rack-0 (three nodes of 2 cpu) has
// the 6 cpu the four 1.5-cpu members need in all but takes only three of them; rack-1 (one node)
// lacks the cpu in all, so it is not even solved.
TEST(GangE2E, AGangThatFitsNoRackSaysSoPerRack) {
  const std::string rack0 = "  labels:\n    topology.example.com/rack: rack-0\n";
  const std::string rack1 = "  labels:\n    topology.example.com/rack: rack-1\n";
  const std::string manifests = Node("r0-n0", "2", rack0) + Node("r0-n1", "2", rack0) + Node("r0-n2", "2", rack0) +
                                Node("r1-n0", "2", rack1) + Gang("train", 4, "topology.example.com/rack") +
                                Members("train", 4, "1500m");
  const json j = Simulate(manifests, "no-rack");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  for (const auto& [pod, message] : Messages(j)) {
    EXPECT_NE(message.find("0/2 placements are available: pod group \"train\" needs 4 pods placed together in one "
                           "domain of \"topology.example.com/rack\" and no domain has room"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("topology.example.com/rack=rack-0: 3 fit, topology.example.com/rack=rack-1: not enough "
                           "free cpu"),
              std::string::npos)
        << message;
  }
}

TEST(GangE2E, AnInvalidPodGroupIsRefusedWithItsFieldPath) {
  const std::string file =
      WriteTempFile("bad-group.yaml",
                    "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n  name: g\n"
                    "spec:\n  schedulingPolicy:\n    gang:\n      minCount: -1\n");
  RunResult r = RunKubesched({"simulate", "-f", file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("spec.schedulingPolicy.gang.minCount"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("must be greater than zero"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------
// Workload-aware preemption (KEP-5710): a gang that fits nowhere preempts as one preemptor, with
// its PodGroup's priority; a victim PodGroup whose disruptionMode is PodGroup goes whole.

const std::string kPriorityClasses = R"(---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: critical}
value: 1000
)";

// A gang PodGroup with a priority class and, unless empty, a disruption mode.
std::string PriorityGang(const std::string& name, int min_count, const std::string& priority_class,
                         const std::string& disruption_mode = "") {
  std::string out = Gang(name, min_count) + "  priorityClassName: " + priority_class + "\n";
  if (!disruption_mode.empty()) out += "  disruptionMode: " + disruption_mode + "\n";
  return out;
}

// `count` members of `group` already running on `node`.
std::string RunningMembers(const std::string& group, int count, const std::string& node, const std::string& cpu,
                           const std::string& priority_class) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + group + "-" + std::to_string(i) +
           "\nspec:\n  nodeName: " + node + "\n  priorityClassName: " + priority_class +
           "\n  schedulingGroup:\n    podGroupName: " + group +
           "\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests:\n        cpu: \"" + cpu +
           "\"\n";
  }
  return out;
}

// Pod name -> status of the pods preemption took ("Preempted" or "Moved").
std::map<std::string, std::string> Evicted(const json& j) {
  std::map<std::string, std::string> out;
  for (const auto& e : j["evicted"]) out[e["name"].get<std::string>()] = e["status"].get<std::string>();
  return out;
}

// Upstream's integration case (test/integration/scheduler/podgroup): a node of 4 cpu full with a
// gang of 4 pods of priority 10; a gang of 3 pods of priority 100 (minCount 3) preempts. With the
// victim group's disruptionMode PodGroup all 4 go, not just the 3 pods of room needed.
TEST(GangE2E, AGangPreemptsAWholeLowerPriorityGroupWhoseDisruptionModeIsPodGroup) {
  const json j = Simulate(kPriorityClasses + Node("node-0", "4") + PriorityGang("low", 4, "low", "PodGroup") +
                              RunningMembers("low", 4, "node-0", "1", "low") + PriorityGang("high", 3, "high") +
                              Members("high", 3, "1"),
                          "preempt-group");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "high-"), 3) << j.dump(2);
  EXPECT_EQ(PlacedWithPrefix(j, "low-"), 0);
  const auto evicted = Evicted(j);
  EXPECT_EQ(evicted.size(), 4u) << j["evicted"].dump(2);
  for (const auto& e : j["evicted"]) {
    EXPECT_EQ(e["preemptedBy"], "default/high") << e.dump();
    EXPECT_NE(e["reason"].get<std::string>().find("preempting to accommodate a higher priority podgroup"),
              std::string::npos)
        << e.dump();
  }
  EXPECT_EQ(j["podGroups"]["preemptions"], 1);
  EXPECT_EQ(j["podGroups"]["preemptedPods"], 4);
}

// ... and with the default disruption mode (Pod) only the 3 pods of room needed go.
TEST(GangE2E, AGangPreemptsOnlyThePodsItNeedsWhenTheDisruptionModeIsPod) {
  const json j = Simulate(kPriorityClasses + Node("node-0", "4") + PriorityGang("low", 4, "low") +
                              RunningMembers("low", 4, "node-0", "1", "low") + PriorityGang("high", 3, "high") +
                              Members("high", 3, "1"),
                          "preempt-pods");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "high-"), 3) << j.dump(2);
  EXPECT_EQ(PlacedWithPrefix(j, "low-"), 1);
  EXPECT_EQ(Evicted(j).size(), 3u) << j["evicted"].dump(2);
}

// Upstream's partial case: a gang of priority 50 (minCount 2, 2 pods of 1 cpu) on a node of 4 cpu
// full with two pods of priority 5 and two of priority 10 takes the two of priority 5 only.
TEST(GangE2E, AGangPreemptsTheLeastImportantPodsFirst) {
  const std::string classes =
      "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: very-low}\nvalue: 5\n"
      "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: mid}\nvalue: 50\n";
  std::string running;
  for (const auto& [name, pc] : std::vector<std::pair<std::string, std::string>>{
           {"very-low-0", "very-low"}, {"very-low-1", "very-low"}, {"low-0", "low"}, {"low-1", "low"}}) {
    running += Running(name, "node-0", "1") + "  priorityClassName: " + pc + "\n";
  }
  const json j = Simulate(kPriorityClasses + classes + Node("node-0", "4") + running + PriorityGang("mid", 2, "mid") +
                              Members("mid", 2, "1"),
                          "preempt-partial");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "mid-"), 2) << j.dump(2);
  const auto evicted = Evicted(j);
  EXPECT_EQ(evicted.size(), 2u) << j["evicted"].dump(2);
  EXPECT_TRUE(evicted.contains("very-low-0") && evicted.contains("very-low-1")) << j["evicted"].dump(2);
}

// A ReplicaSet's pods in the gang's way are moved, not just evicted: three nodes of 4 cpu, a pod
// of the ReplicaSet (1 cpu) on each of the first two, a critical pod of 2 cpu on the third. A gang
// of two pods of 4 cpu needs the first two nodes whole; the ReplicaSet's pods are evicted and their
// replacements placed on the third node, where the plan held room for them.
TEST(GangE2E, AGangMovesAReplicaSetsPodsWhereRoomExists) {
  std::string web = R"(---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, uid: 5c0e6a3e-0000-4000-8000-00000000beef}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
)";
  for (int i = 0; i < 2; ++i) {
    web += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web-" + std::to_string(i) +
           "\n  labels: {app: web}\n  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, name: web, "
           "uid: 5c0e6a3e-0000-4000-8000-00000000beef, controller: true}\nspec:\n  nodeName: node-" +
           std::to_string(i) + "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n";
  }
  const std::string db = Running("db", "node-2", "2") + "  priorityClassName: critical\n";
  const json j = Simulate(
      kPriorityClasses + Nodes(3, "4") + web + db + PriorityGang("train", 2, "high") + Members("train", 2, "4", "high"),
      "preempt-moves");
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(PlacedWithPrefix(j, "train-"), 2) << j.dump(2);
  EXPECT_EQ(placement.at("db"), "node-2");
  const auto evicted = Evicted(j);
  EXPECT_EQ(evicted.size(), 2u) << j["evicted"].dump(2);
  for (const auto& [pod, status] : evicted) EXPECT_EQ(status, "Moved") << pod;
  int web_on_node_2 = 0;
  for (const auto& [pod, node] : placement) {
    if (pod.starts_with("web-") && !evicted.contains(pod)) web_on_node_2 += node == "node-2";
  }
  EXPECT_EQ(web_on_node_2, 2) << j.dump(2);
  EXPECT_EQ(j["podGroups"]["movedPods"], 2);
}

// The same with a Deployment (its ReplicaSet's pods, one per node) placed by the scheduler on the
// two empty nodes of four, the other two each running a critical pod of 3 cpu, and the gang created
// a minute later: the Deployment's two pods are moved to the nodes of the critical pods, not lost.
TEST(GangE2E, AGangMovesADeploymentsPodsWhereRoomExists) {
  const std::string web = R"(---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
)";
  const std::string db = Running("db-0", "node-2", "3") + "  priorityClassName: critical\n" +
                         Running("db-1", "node-3", "3") + "  priorityClassName: critical\n";
  std::string gang = Members("train", 2, "4", "high");
  const std::string later = "\n  annotations:\n    simulate.kubesched.io/create-after: 1m";
  for (size_t at = 0; (at = gang.find("\nspec:", at)) != std::string::npos; at += later.size() + 6) {
    gang.insert(at, later);
  }
  const json j = Simulate(kPriorityClasses + Nodes(4, "4") + web + db + PriorityGang("train", 2, "high") + gang,
                          "preempt-deployment");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "train-"), 2) << j.dump(2);
  const auto evicted = Evicted(j);
  EXPECT_FALSE(evicted.empty()) << j.dump(2);
  for (const auto& [pod, status] : evicted) EXPECT_EQ(status, "Moved") << pod;
  int web_running = 0;
  for (const auto& [pod, node] : Placement(j)) {
    if (pod.starts_with("web-") && !evicted.contains(pod) && !node.empty()) ++web_running;
  }
  EXPECT_EQ(web_running, 2) << j.dump(2);
  EXPECT_EQ(j["podGroups"]["movedPods"], static_cast<int>(evicted.size()));
}

// No member of a gang preempts on its own, and a gang never preempts pods of its own priority.
TEST(GangE2E, AGangOfEqualPriorityPreemptsNothingAndSaysSo) {
  const json j = Simulate(kPriorityClasses + Node("node-0", "4") + PriorityGang("low", 4, "high") +
                              RunningMembers("low", 4, "node-0", "1", "high") + PriorityGang("high", 3, "high") +
                              Members("high", 3, "1"),
                          "preempt-equal");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "high-"), 0);
  EXPECT_TRUE(j["evicted"].empty()) << j["evicted"].dump(2);
  for (const auto& [pod, message] : Messages(j)) {
    if (!pod.starts_with("high-")) continue;
    EXPECT_NE(message.find("pod group preemption: No preemption victims found for incoming preemptor"),
              std::string::npos)
        << message;
  }
}

// The HTML report has a section of pod groups: each placed whole or pending, and what it preempted.
TEST(GangE2E, TheReportShowsThePodGroups) {
  const std::string file = WriteTempFile(
      "report-groups.yaml", kPriorityClasses + Node("node-0", "4") + PriorityGang("low", 4, "low", "PodGroup") +
                                RunningMembers("low", 4, "node-0", "1", "low") + PriorityGang("high", 3, "high") +
                                Members("high", 3, "1") + Gang("big", 2) + Members("big", 2, "8"));
  const std::string html = WriteTempFile("report-groups.html", "");
  RunResult r =
      RunKubesched({"simulate", "-f", file, "--config", WriteTempFile("gang-config.yaml", kConfig), "--report", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = Slurp(html);
  EXPECT_NE(page.find("<section id=\"podgroups\">"), std::string::npos);
  const size_t high = page.find("data-group=\"default/high\"");
  ASSERT_NE(high, std::string::npos);
  const std::string high_row = page.substr(high, page.find("</tr>", high) - high);
  EXPECT_NE(high_row.find("placed whole"), std::string::npos) << high_row;
  EXPECT_NE(high_row.find("4 (0)"), std::string::npos) << high_row;
  const size_t big = page.find("data-group=\"default/big\"");
  ASSERT_NE(big, std::string::npos);
  const std::string big_row = page.substr(big, page.find("</tr>", big) - big);
  EXPECT_NE(big_row.find("pending"), std::string::npos) << big_row;
  EXPECT_NE(big_row.find("needs 2 pods placed together"), std::string::npos) << big_row;
}

TEST(GangE2E, AnUnknownDisruptionModeIsRefusedWithItsFieldPath) {
  const std::string file = WriteTempFile("bad-mode.yaml", PriorityGang("g", 1, "x", "Whole").substr(4));
  RunResult r = RunKubesched({"simulate", "-f", file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("spec.disruptionMode"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("supported values: \"Pod\", \"PodGroup\""), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------
// Coscheduling: scheduler-plugins' PodGroup CRD (scheduling.x-k8s.io/v1alpha1), pods labelled
// scheduling.x-k8s.io/pod-group, with the plugin's README configuration.

const std::string kCoschedulingConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
)";

// The plugin's README demo (tests/data/third_party): a PodGroup of minMember 3 and a ReplicaSet of
// 6 pods of 3 cpu on a cluster that takes 3 of them.
std::string CoschedulingDemo(const std::string& min_member) {
  std::string demo = Slurp(SourcePath("tests/data/third_party/scheduler-plugins/coscheduling-demo.yaml"));
  const std::string from = "minMember: 3";
  const size_t at = demo.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) demo.replace(at, from.size(), "minMember: " + min_member);
  return Nodes(3, "4") + "---\n" + demo;
}

json SimulateCoscheduling(const std::string& manifests, const std::string& name) {
  const std::string file = WriteTempFile(name + ".yaml", manifests);
  RunResult r = RunKubesched({"simulate", "-f", file, "-o", "json", "--config",
                              WriteTempFile("coscheduling-config.yaml", kCoschedulingConfig)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

TEST(CoschedulingE2E, TheReadmeDemoPlacesMinMemberPods) {
  const json j = SimulateCoscheduling(CoschedulingDemo("3"), "cosched-demo");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 3);
  EXPECT_EQ(j["summary"]["pending"], 3);
  std::set<std::string> nodes;
  for (const auto& [pod, node] : Placement(j)) {
    if (!node.empty()) nodes.insert(node);
  }
  EXPECT_EQ(nodes.size(), 3u);
  ASSERT_TRUE(j.contains("podGroups")) << j.dump();
  EXPECT_EQ(j["podGroups"]["groups"][0]["name"], "default/nginx");
  EXPECT_EQ(j["podGroups"]["groups"][0]["placed"], true);
}

TEST(CoschedulingE2E, TheReadmeDemoWithMinMemberFourPlacesNone) {
  const json j = SimulateCoscheduling(CoschedulingDemo("4"), "cosched-demo-4");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  EXPECT_EQ(j["summary"]["pending"], 6);
  for (const auto& [pod, message] : Messages(j)) {
    EXPECT_NE(message.find("pod group \"nginx\" needs 4 pods placed together and at most 3 of its 6 pending pods fit"),
              std::string::npos)
        << pod << ": " << message;
    // Upstream's PostFilter line follows the group's reason.
    EXPECT_NE(message.find("PodGroup default/nginx gets rejected due to Pod " + pod +
                           " is unschedulable even after PostFilter"),
              std::string::npos)
        << pod << ": " << message;
  }
}

TEST(CoschedulingE2E, TooFewSiblingsAreRejectedWithUpstreamsMessage) {
  std::string demo = CoschedulingDemo("8");
  const json j = SimulateCoscheduling(demo, "cosched-few");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["summary"]["scheduled"], 0);
  for (const auto& [pod, message] : Messages(j)) {
    EXPECT_NE(message.find("pre-filter pod " + pod +
                           " cannot find enough sibling pods, current pods number: 6, minMember of group: 8"),
              std::string::npos)
        << pod << ": " << message;
  }
}

// Two groups of 3 (3 cpu each) on room for 3: the group created first is placed whole, the other
// not at all (upstream's README: "the PodGroup created first one has higher precedence").
TEST(CoschedulingE2E, TwoGroupsOnRoomForOnePlaceTheOlderWhole) {
  auto group = [](const std::string& name, const std::string& created) {
    return "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " + name +
           "\n  creationTimestamp: \"" + created + "\"\nspec:\n  minMember: 3\n";
  };
  auto members = [](const std::string& name) {
    std::string out;
    for (int i = 0; i < 3; ++i) {
      out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "-" + std::to_string(i) +
             "\n  labels:\n    scheduling.x-k8s.io/pod-group: " + name +
             "\nspec:\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests:\n"
             "        cpu: \"3\"\n";
    }
    return out;
  };
  // "b" is older, though listed (and named) after "a".
  const json j = SimulateCoscheduling(Nodes(3, "4") + group("a", "2026-01-02T00:00:00Z") +
                                          group("b", "2026-01-01T00:00:00Z") + members("a") + members("b"),
                                      "cosched-two");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(PlacedWithPrefix(j, "b-"), 3);
  EXPECT_EQ(PlacedWithPrefix(j, "a-"), 0);
}

TEST(CoschedulingE2E, AnUnknownFieldOfTheCrdIsRefusedWithItsPath) {
  const std::string file =
      WriteTempFile("bad-cosched.yaml",
                    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n"
                    "spec:\n  minMembers: 3\n");
  RunResult r = RunKubesched({"simulate", "-f", file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("spec.minMembers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean \"minMember\""), std::string::npos) << r.err;
  const std::string version = WriteTempFile("bad-cosched-version.yaml",
                                            "apiVersion: scheduling.x-k8s.io/v1\nkind: PodGroup\nmetadata:\n  name: g\n"
                                            "spec:\n  minMember: 3\n");
  r = RunKubesched({"simulate", "-f", version});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("use \"scheduling.x-k8s.io/v1alpha1\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kubesched::e2e
