// End-to-end tests of what `kubesched simulate` shows the operator: kubectl's STATUS values,
// preempted pods with their fate in every format, the JSON fields and summary, and --explain
// inside -o json.

#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

const char* kCluster = R"(apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: batch}
spec:
  replicas: 1
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 1500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: node-a
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
status: {phase: Succeeded}
---
apiVersion: v1
kind: Pod
metadata: {name: leaving, deletionTimestamp: "2024-05-01T12:00:00Z"}
spec:
  nodeName: node-a
  containers: [{name: c, image: busybox}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere}
spec:
  schedulerName: my-scheduler
  containers: [{name: c, image: busybox}]
)";

std::map<std::string, json> ByName(const json& list) {
  std::map<std::string, json> out;
  for (const auto& p : list) out[p["name"].get<std::string>()] = p;
  return out;
}

// "urgent" (higher priority, popped first) takes 1 of node-a's 2 cpus; the ReplicaSet's pod (1.5
// cpu) then fits nowhere and cannot preempt it. "done" has finished and holds nothing; "leaving"
// is being deleted and still holds its node.
TEST(OutputE2E, StatusColumnShowsEachPodsRealState) {
  std::string path = WriteTempFile("status.yaml", kCluster);
  RunResult r = RunKubesched({"simulate", "-f", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto has_row = [&](const std::string& name, const std::string& status) {
    for (size_t pos = r.out.find("\n" + name + " "); pos != std::string::npos;
         pos = r.out.find("\n" + name + " ", pos + 1)) {
      std::string line = r.out.substr(pos + 1, r.out.find('\n', pos + 1) - pos - 1);
      if (line.find(" " + status + " ") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_row("done", "Succeeded")) << r.out;
  EXPECT_TRUE(has_row("leaving", "Terminating")) << r.out;
  EXPECT_TRUE(has_row("gated", "SchedulingGated")) << r.out;
  EXPECT_TRUE(has_row("urgent", "Running")) << r.out;
  EXPECT_NE(r.out.find("default/gated: SchedulingGated: waiting for scheduling gates to be removed: "
                       "[example.com/quota]"),
            std::string::npos)
      << r.out;
  // Another scheduler's pod: Pending, and the table says why kubesched left it.
  EXPECT_TRUE(has_row("elsewhere", "Pending")) << r.out;
  EXPECT_NE(r.out.find("default/elsewhere: not scheduled: schedulerName \"my-scheduler\" is not a profile of this "
                       "scheduler\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 scheduled, 3 pending, 1 already running, 1 finished, 1 nodes used (of 1)"), std::string::npos)
      << r.out;
}

TEST(OutputE2E, JsonCarriesPhasePriorityNominationAndOrigin) {
  std::string path = WriteTempFile("status.yaml", kCluster);
  RunResult r = RunKubesched({"simulate", "-f", path, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  auto pods = ByName(j["pods"]);
  EXPECT_EQ(pods["done"]["phase"], "Succeeded");
  EXPECT_EQ(pods["done"]["boundInInput"], true);
  EXPECT_EQ(pods["leaving"]["status"], "Terminating");
  EXPECT_EQ(pods["urgent"]["priority"], 1000);
  EXPECT_EQ(pods["urgent"]["boundInInput"], false);
  EXPECT_EQ(pods["urgent"]["phase"], "Running");
  EXPECT_TRUE(pods["urgent"]["nominatedNodeName"].is_null());
  EXPECT_EQ(pods["gated"]["status"], "SchedulingGated");
  EXPECT_EQ(pods["elsewhere"]["message"], "schedulerName \"my-scheduler\" is not a profile of this scheduler");
  EXPECT_EQ(j["summary"]["scheduled"], 1);
  EXPECT_EQ(j["summary"]["alreadyRunning"], 1);
  EXPECT_EQ(j["summary"]["pending"], 3);
  EXPECT_EQ(j["summary"]["gated"], 1);
  EXPECT_EQ(j["summary"]["finished"], 1);
  EXPECT_EQ(j["summary"]["evicted"], 0);
}

const char* kPreemption = R"(apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: batch, uid: rs-1}
spec:
  replicas: 1
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 1500m}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: batch-x7k2p
  labels: {app: batch}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: batch, uid: rs-1, controller: true}]
spec:
  nodeName: node-a
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 1500m}}}]
status: {phase: Running, startTime: "2024-05-01T12:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
)";

TEST(OutputE2E, PreemptedPodsStayVisibleWithTheirFate) {
  std::string path = WriteTempFile("preempt.yaml", kPreemption);
  RunResult table = RunKubesched({"simulate", "-f", path});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("batch-x7k2p   Preempted"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("default/batch-x7k2p: Preempted: Preempted by pod default/urgent on node node-a; "
                           "recreated as default/batch-"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find(", 1 preempted, "), std::string::npos) << table.out;

  RunResult r = RunKubesched({"simulate", "-f", path, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["evicted"].size(), 1u) << j.dump(2);
  const json& e = j["evicted"][0];
  EXPECT_EQ(e["name"], "batch-x7k2p");
  EXPECT_EQ(e["node"], "node-a");
  EXPECT_EQ(e["preemptedBy"], "default/urgent");
  ASSERT_TRUE(e["replacedBy"].is_string());
  std::string replacement = e["replacedBy"];
  EXPECT_TRUE(replacement.starts_with("default/batch-")) << replacement;
  auto pods = ByName(j["pods"]);
  EXPECT_EQ(pods["urgent"]["node"], "node-a");
  EXPECT_TRUE(pods[replacement.substr(8)]["node"].is_null()) << "the recreated pod does not fit";
  EXPECT_EQ(j["summary"]["evicted"], 1);
}

TEST(OutputE2E, ExplainWithJsonIsOneDocument) {
  std::string path = WriteTempFile("status.yaml", kCluster);
  RunResult r = RunKubesched({"simulate", "-f", path, "-o", "json", "--explain", "default/urgent"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);  // throws (fails the test) if anything else was printed
  ASSERT_TRUE(j.contains("explanation")) << r.out;
  const json& e = j["explanation"];
  EXPECT_EQ(e["pod"], "default/urgent");
  EXPECT_EQ(e["selectedNode"], "node-a");
  ASSERT_EQ(e["nodes"].size(), 1u);
  EXPECT_EQ(e["nodes"][0]["feasible"], true);
  EXPECT_EQ(e["nodes"][0]["evaluated"], true);

  // A rejected pod: the resource that did not fit, with its numbers.
  r = RunKubesched({"simulate", "-f", path, "-o", "json", "--explain", "default/" + [&] {
                      json all = json::parse(RunKubesched({"simulate", "-f", path, "-o", "json"}).out);
                      for (const auto& p : all["pods"]) {
                        if (std::string(p["name"]).starts_with("batch-")) return std::string(p["name"]);
                      }
                      return std::string("missing");
                    }()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  const json& filters = j["explanation"]["nodes"][0]["filters"];
  bool found = false;
  for (const auto& f : filters) {
    if (f["plugin"] != "NodeResourcesFit") continue;
    found = true;
    EXPECT_EQ(f["code"], "Unschedulable");
    EXPECT_EQ(f["detail"], "cpu: requested 1500m, free 1000m of 2000m allocatable") << f.dump();
  }
  EXPECT_TRUE(found) << filters.dump(2);
}

}  // namespace
}  // namespace kubesched::e2e
