// End-to-end tests of `kubesched run` against `kubesched apiserver` (both processes on loopback,
// started and stopped here), with kubectl creating the objects and reading the outcome: every
// pod bound exactly once, none lost, across scheduler and API server restarts and with two
// schedulers electing a leader; the secure port's /healthz, /readyz and /metrics fetched over
// HTTPS. Skipped when kubectl is not installed.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "e2e/apiserver_process.h"
#include "e2e/dra_manifests.h"
#include "e2e/run_kubesched.h"
#include "e2e/volume_manifests.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string Nodes(int count, const std::string& cpu = "4") {
  std::string out;
  for (int i = 1; i <= count; ++i) {
    out += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-" + std::to_string(i) +
           "\n  labels: {kubernetes.io/hostname: node-" + std::to_string(i) + "}\nstatus:\n  capacity: {cpu: \"" + cpu +
           "\", memory: 8Gi, pods: \"110\"}\n  allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}\n";
  }
  return out;
}

std::string Deployment(const std::string& name, int replicas, const std::string& cpu = "100m") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name +
         "\nspec:\n  replicas: " + std::to_string(replicas) + "\n  selector:\n    matchLabels: {app: " + name +
         "}\n  template:\n    metadata:\n      labels: {app: " + name +
         "}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        resources:\n          "
         "requests: {cpu: " +
         cpu + ", memory: 64Mi}\n";
}

std::string BarePod(const std::string& name, const std::string& cpu, const std::string& scheduler = "") {
  std::string out = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n";
  if (!scheduler.empty()) out += "  schedulerName: " + scheduler + "\n";
  out += "  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests: {cpu: \"" + cpu + "\"}\n";
  return out;
}

// A `kubesched run` process against `server`.
class Scheduler {
 public:
  Scheduler(ApiServer& server, std::vector<std::string> extra, const std::string& name) : server_(server) {
    // KUBESCHED_E2E_V raises the schedulers' verbosity when a failure needs the binding cycle's
    // log (bind errors are logged at 4).
    const char* v = std::getenv("KUBESCHED_E2E_V");
    std::vector<std::string> argv = {KubeschedPath(),     "run", "--kubeconfig",
                                     server.Kubeconfig(), "--v", v != nullptr ? v : "2"};
    // The secure port on loopback and a free port (kube-scheduler's 0.0.0.0:10259 would collide
    // between schedulers and tests), unless the test chooses.
    if (std::ranges::find(extra, "--secure-port") == extra.end()) {
      argv.insert(argv.end(), {"--secure-port", "0", "--bind-address", "127.0.0.1"});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    log_ = server.Dir() / (name + ".err");
    child_ = Spawn(argv, log_, server.Dir().string());
  }
  ~Scheduler() {
    if (child_.pid > 0) StopChild(child_, SIGKILL);
  }
  int Stop(int sig) { return StopChild(child_, sig); }
  bool Running() const { return child_.pid > 0 && kill(child_.pid, 0) == 0; }
  std::string Log() const { return Slurp(log_); }

 private:
  ApiServer& server_;
  Child child_;
  fs::path log_;
};

// The pods as the API server has them: name → node ("" while unbound).
std::map<std::string, std::string> PodNodes(ApiServer& server, const std::string& selector = "") {
  std::vector<std::string> args = {"get", "pods", "-o", "json"};
  if (selector == "-A") {
    args.push_back("-A");  // every namespace (names as namespace/name)
  } else if (!selector.empty()) {
    args.insert(args.end(), {"-l", selector});
  }
  RunResult r = server.Kubectl(args);
  std::map<std::string, std::string> out;
  if (r.exit_code != 0) {
    ADD_FAILURE() << "kubectl get pods: " << r.exit_code << " " << r.err;
    return out;
  }
  const json list = json::parse(r.out);
  for (const json& p : list["items"]) {
    std::string name = p["metadata"]["name"].get<std::string>();
    if (selector == "-A") name = p["metadata"].value("namespace", "") + "/" + name;
    out[name] = p["spec"].value("nodeName", "");
  }
  return out;
}

size_t Bound(const std::map<std::string, std::string>& pods) {
  size_t n = 0;
  for (const auto& [name, node] : pods) n += node.empty() ? 0 : 1;
  return n;
}

// Polls until `count` pods (of the selector) are bound, or `timeout`.
std::map<std::string, std::string> WaitForBound(ApiServer& server, size_t count, std::chrono::milliseconds timeout,
                                                const std::string& selector = "") {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::map<std::string, std::string> pods;
  while (std::chrono::steady_clock::now() < deadline) {
    pods = PodNodes(server, selector);
    if (pods.size() >= count && Bound(pods) >= count) break;
    std::this_thread::sleep_for(200ms);
  }
  return pods;
}

// Sums the cpu requests (millicores) of the bound pods per node: a pod bound twice, or one the
// scheduler did not know was bound, would push a node past its allocatable cpu.
std::map<std::string, int64_t> CpuByNode(ApiServer& server) {
  RunResult r = server.Kubectl({"get", "pods", "-o", "json"});
  std::map<std::string, int64_t> out;
  const json list = json::parse(r.out);
  for (const json& p : list["items"]) {
    const std::string node = p["spec"].value("nodeName", "");
    if (node.empty()) continue;
    for (const json& c : p["spec"]["containers"]) {
      std::string cpu = c["resources"]["requests"].value("cpu", "0");
      out[node] += cpu.ends_with("m") ? std::stoll(cpu.substr(0, cpu.size() - 1)) : std::stoll(cpu) * 1000;
    }
  }
  return out;
}

class RunE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  }
};

#define ASSERT_OK(r) ASSERT_EQ((r).exit_code, 0) << "stdout:\n" << (r).out << "\nstderr:\n" << (r).err

TEST_F(RunE2E, BindsEveryPodAndLeavesOtherSchedulersPodsAlone) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(2)));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Deployment("web", 6)));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, BarePod("other", "100m", "someone-else") + BarePod("huge", "64")));

  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  auto pods = WaitForBound(server, 6, 60s, "app=web");
  ASSERT_EQ(Bound(pods), 6u) << sched.Log();

  RunResult wide = server.Kubectl({"get", "pods", "-l", "app=web", "-o", "wide"});
  ASSERT_OK(wide);
  EXPECT_NE(wide.out.find("node-1"), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("node-2"), std::string::npos) << wide.out;  // spread by the default scores

  // The pod too big for any node: PodScheduled=False, Unschedulable, upstream's message.
  std::string condition;
  for (int i = 0; i < 100 && condition.empty(); ++i) {
    RunResult r = server.Kubectl({"get", "pod", "huge", "-o", "json"});
    ASSERT_OK(r);
    for (const json& c : json::parse(r.out)["status"].value("conditions", json::array())) {
      if (c["type"] == "PodScheduled") condition = c.dump();
    }
    if (condition.empty()) std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(condition.find("\"status\":\"False\""), std::string::npos) << condition;
  EXPECT_NE(condition.find("\"reason\":\"Unschedulable\""), std::string::npos) << condition;
  EXPECT_NE(condition.find("0/2 nodes are available: 2 Insufficient cpu."), std::string::npos) << condition;

  // Another scheduler's pod stays unbound and untouched.
  pods = PodNodes(server);
  EXPECT_EQ(pods["other"], "");
  EXPECT_EQ(pods["huge"], "");
  RunResult other = server.Kubectl({"get", "pod", "other", "-o", "json"});
  EXPECT_EQ(json::parse(other.out)["status"].value("conditions", json::array()).size(), 0u) << other.out;

  // A pod created while it runs is scheduled too (the watch).
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, BarePod("late", "100m")));
  pods = WaitForBound(server, 7, 30s);
  EXPECT_NE(pods["late"], "") << sched.Log();

  // Events as upstream records them: Scheduled for each bound pod, one FailedScheduling for the
  // pod that does not fit, none for the other scheduler's pod.
  std::map<std::string, int> scheduled, failed;
  std::string failed_message;
  for (int i = 0; i < 100; ++i) {
    RunResult events = server.Kubectl({"get", "events", "-o", "json"});
    ASSERT_OK(events);
    scheduled.clear();
    failed.clear();
    const json list = json::parse(events.out);
    for (const json& e : list["items"]) {
      const std::string pod = e["involvedObject"].value("name", "");
      if (e.value("reason", "") == "Scheduled") ++scheduled[pod];
      if (e.value("reason", "") == "FailedScheduling") {
        ++failed[pod];
        failed_message = e.value("message", "");
      }
    }
    if (scheduled.size() == 7 && failed.size() == 1) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(scheduled.size(), 7u);
  for (const auto& [pod, count] : scheduled) EXPECT_EQ(count, 1) << pod;
  EXPECT_EQ(failed["huge"], 1);
  EXPECT_EQ(failed.count("other"), 0u);
  EXPECT_NE(failed_message.find("0/2 nodes are available: 2 Insufficient cpu."), std::string::npos) << failed_message;
  RunResult table = server.Kubectl({"get", "events"});
  EXPECT_NE(table.out.find("Successfully assigned default/late to node-"), std::string::npos) << table.out;

  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// Real install files, as their projects publish them (tests/data/third_party/README.md), applied
// whole with kubectl's default validation: every object is created and get-able, Services get
// their cluster IPs and node ports, argo-cd's AppProject CRD serves its custom resources (argo-cd's
// own example project), and `kubesched run` binds the pods of their Deployments, StatefulSet and
// Jobs.
TEST_F(RunE2E, RealInstallFilesApplyWholeAndTheirPodsAreBound) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", SourcePath("tests/data/app-mix/cluster.yaml")}));
  const std::string guestbook = SourcePath("tests/data/third_party/guestbook/guestbook-all-in-one.yaml");
  const std::string ingress_nginx = SourcePath("tests/data/third_party/ingress-nginx/deploy.yaml");
  for (const std::string& file : {guestbook, ingress_nginx}) {
    RunResult applied = server.Kubectl({"apply", "-f", file});
    ASSERT_OK(applied);
    EXPECT_EQ(applied.err, "");
    ASSERT_OK(server.Kubectl({"get", "-f", file}));
  }
  RunResult again = server.Kubectl({"apply", "-f", ingress_nginx});
  ASSERT_OK(again);
  EXPECT_EQ(again.out.find("configured"), std::string::npos) << again.out;  // all unchanged
  RunResult services = server.Kubectl({"get", "services", "-A"});
  ASSERT_OK(services);
  EXPECT_NE(services.out.find("frontend                             NodePort       10.96."), std::string::npos)
      << services.out;
  EXPECT_NE(services.out.find("<pending>     80:30"), std::string::npos) << services.out;
  // argo-cd as its docs install it: `kubectl apply -n argocd -f install.yaml` (here its AppProject
  // CRD and every document after the CRDs), then a project.
  ASSERT_OK(server.Kubectl({"apply", "-f", "-"}, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: argocd\n"));
  const std::string argo_crd = SourcePath("tests/data/third_party/argo-cd/appproject-crd.yaml");
  const std::string argo_install = SourcePath("tests/data/third_party/argo-cd/install-without-crds.yaml");
  const std::string argo_project = SourcePath("tests/data/third_party/argo-cd/project.yaml");
  for (const std::string& file : {argo_crd, argo_install, argo_project}) {
    RunResult applied = server.Kubectl({"apply", "-n", "argocd", "-f", file});
    ASSERT_OK(applied);
    EXPECT_EQ(applied.err, "");
    ASSERT_OK(server.Kubectl({"get", "-n", "argocd", "-f", file}));
  }
  RunResult projects = server.Kubectl({"get", "appprojects", "-n", "argocd"});
  ASSERT_OK(projects);
  EXPECT_NE(projects.out.find("my-project"), std::string::npos) << projects.out;
  RunResult by_short_name =
      server.Kubectl({"get", "appproj", "my-project", "-n", "argocd", "-o", "jsonpath={.spec.description}"});
  ASSERT_OK(by_short_name);
  EXPECT_EQ(by_short_name.out, "Example Project");

  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  // guestbook: 1 + 2 + 3 replicas; ingress-nginx: the controller and the two Jobs' pods; argo-cd:
  // six Deployments and the application controller's StatefulSet, one replica each.
  std::map<std::string, std::string> pods;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    pods = PodNodes(server, "-A");
    if (pods.size() >= 16 && Bound(pods) >= 16) break;
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_EQ(pods.size(), 16u);
  EXPECT_EQ(Bound(pods), 16u) << sched.Log();
  size_t in_ingress_nginx = 0;
  size_t in_argocd = 0;
  for (const auto& [name, node] : pods) {
    in_ingress_nginx += name.starts_with("ingress-nginx/") ? 1 : 0;
    in_argocd += name.starts_with("argocd/") ? 1 : 0;
  }
  EXPECT_EQ(in_ingress_nginx, 3u);
  EXPECT_EQ(in_argocd, 7u);
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// The README's recipe for a cluster dump: apply real Deployments (guestbook, four of
// kube-prometheus), let `kubesched run` bind their 11 pods, dump the cluster with kubectl and
// simulate the dump. Nothing changes: every pod is already running where it was, none is renamed
// or replaced (the simulated Deployment controller adopts the dump's ReplicaSets, as upstream's
// FindNewReplicaSet does, instead of making its own and scaling theirs away).
TEST_F(RunE2E, ClusterDumpSimulatesUnchanged) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", SourcePath("tests/data/app-mix/cluster.yaml")}));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, "apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring}\n"));
  std::vector<std::string> apply = {"apply", "-f",
                                    SourcePath("tests/data/third_party/guestbook/guestbook-all-in-one.yaml")};
  for (const char* d : {"prometheusOperator", "kubeStateMetrics", "blackboxExporter", "prometheusAdapter"}) {
    apply.insert(apply.end(),
                 {"-f", SourcePath("tests/data/third_party/kube-prometheus/" + std::string(d) + "-deployment.yaml")});
  }
  ASSERT_OK(server.Kubectl(apply));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  std::map<std::string, std::string> pods;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    pods = PodNodes(server, "-A");
    if (pods.size() >= 11 && Bound(pods) >= 11) break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(pods.size(), 11u);
  ASSERT_EQ(Bound(pods), 11u) << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();

  RunResult dump = server.Kubectl({"get", "nodes,deploy,rs,sts,ds,jobs,pods", "-A", "-o", "yaml"});
  ASSERT_OK(dump);
  const fs::path file = server.Dir() / "dump.yaml";
  std::ofstream(file) << dump.out;
  RunResult simulated = RunKubesched({"simulate", "-f", file.string(), "-o", "json"});
  ASSERT_OK(simulated);
  const json out = json::parse(simulated.out);
  EXPECT_EQ(out["summary"]["scheduled"], 0) << simulated.out;
  EXPECT_EQ(out["summary"]["alreadyRunning"], 11);
  EXPECT_EQ(out["summary"]["pending"], 0);
  EXPECT_EQ(out["evicted"].size(), 0u);
  std::map<std::string, std::string> after;
  for (const json& p : out["pods"]) {
    after[p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>()] = p["node"].get<std::string>();
  }
  EXPECT_EQ(after, pods);
}

// A Job whose pods are annotated simulate.kubesched.io/run-for completes in the test bed once
// `kubesched run` has bound them: `kubectl wait --for=condition=complete` returns.
TEST_F(RunE2E, AJobWhosePodsRunForASecondCompletes) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(1)));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, R"(apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  completions: 2
  template:
    metadata:
      annotations: {simulate.kubesched.io/run-for: 1s}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
)"));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  RunResult waited = server.Kubectl({"wait", "--for=condition=complete", "job/once", "--timeout=60s"});
  ASSERT_OK(waited);
  EXPECT_EQ(waited.out, "job.batch/once condition met\n");
  RunResult pods = server.Kubectl({"get", "pods", "-l", "job-name=once", "-o", "jsonpath={.items[*].status.phase}"});
  ASSERT_OK(pods);
  EXPECT_EQ(pods.out, "Succeeded Succeeded");
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

TEST_F(RunE2E, PreemptsALowerPriorityPodThroughTheApi) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(1, "1") + R"(---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: victim}
spec:
  priorityClassName: low
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 800m}}}]
)"));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  ASSERT_EQ(Bound(WaitForBound(server, 1, 30s)), 1u) << sched.Log();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, R"(apiVersion: v1
kind: Pod
metadata: {name: preemptor}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 800m}}}]
)"));
  // The victim is marked (DisruptionTarget) and deleted gracefully; once the node lifecycle has
  // removed it, the preemptor is bound to the node it was nominated for.
  std::map<std::string, std::string> pods;
  for (int i = 0; i < 300; ++i) {
    pods = PodNodes(server);
    if (!pods.contains("victim") && pods["preemptor"] == "node-1") break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_FALSE(pods.contains("victim")) << sched.Log();
  EXPECT_EQ(pods["preemptor"], "node-1") << sched.Log();
  RunResult events = server.Kubectl({"get", "events", "-o", "json"});
  ASSERT_OK(events);
  bool preempted = false;
  const json list = json::parse(events.out);
  for (const json& e : list["items"]) {
    if (e.value("reason", "") == "Preempted" && e["involvedObject"].value("name", "") == "victim") {
      preempted = e.value("message", "").starts_with("Preempted by pod ");
    }
  }
  EXPECT_TRUE(preempted) << events.out;
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

std::string PodGroup(const std::string& name, int min_count) {
  return "---\napiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n  name: " + name +
         "\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: " + std::to_string(min_count) + "\n";
}

std::string GangMembers(const std::string& group, int count, const std::string& cpu) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + group + "-" + std::to_string(i) +
           "\nspec:\n  schedulingGroup: {podGroupName: " + group +
           "}\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests: {cpu: \"" + cpu +
           "\"}\n";
  }
  return out;
}

// The PodGroupScheduled condition of a PodGroup as the API server has it: (status, reason,
// message), empty strings when there is none.
std::tuple<std::string, std::string, std::string> GroupScheduled(ApiServer& server, const std::string& name) {
  RunResult r = server.Kubectl({"get", "podgroups.scheduling.k8s.io", name, "-o", "json"});
  if (r.exit_code != 0) return {};
  const json group = json::parse(r.out, nullptr, false);
  if (group.is_discarded() || !group.contains("status")) return {};
  for (const json& c : group["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "PodGroupScheduled") {
      return {c.value("status", ""), c.value("reason", ""), c.value("message", "")};
    }
  }
  return {};
}

// The issue's gang case through the API: a gang of 8 (minCount 8) on room for 7 is not placed at
// all and its PodGroup says why; a node added with kubectl lets all 8 be bound, and the PodGroup
// then reports itself scheduled.
TEST_F(RunE2E, AGangIsBoundWholeOnceANodeIsAdded) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(7, "1") + PodGroup("train", 8) + GangMembers("train", 8, "1")));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  std::tuple<std::string, std::string, std::string> condition;
  for (int i = 0; i < 300 && std::get<0>(condition).empty(); ++i) {
    condition = GroupScheduled(server, "train");
    if (std::get<0>(condition).empty()) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(std::get<0>(condition), "False") << sched.Log();
  EXPECT_EQ(std::get<1>(condition), "Unschedulable");
  EXPECT_NE(std::get<2>(condition).find("needs 8 pods placed together and at most 7 of its 8 pending pods fit"),
            std::string::npos)
      << std::get<2>(condition);
  EXPECT_EQ(Bound(PodNodes(server)), 0u) << "a gang that cannot complete holds nothing";

  // The eighth node of Nodes(8): node-8.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(8, "1").substr(Nodes(7, "1").size())));
  const auto pods = WaitForBound(server, 8, 60s);
  EXPECT_EQ(Bound(pods), 8u) << sched.Log();
  for (int i = 0; i < 100 && std::get<0>(condition) != "True"; ++i) {
    condition = GroupScheduled(server, "train");
    if (std::get<0>(condition) != "True") std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(std::get<0>(condition), "True");
  EXPECT_EQ(std::get<1>(condition), "Scheduled");
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// Two gangs of 6 on room for 6: one is bound whole, the other stays pending whole.
TEST_F(RunE2E, TwoGangsOnRoomForOneBindOneWhole) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(3, "2") + PodGroup("a", 6) + PodGroup("b", 6) +
                                                      GangMembers("a", 6, "1") + GangMembers("b", 6, "1")));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  auto pods = WaitForBound(server, 6, 60s);
  // Both groups' decisions are in once both say how they stand.
  for (int i = 0; i < 300; ++i) {
    if (!std::get<0>(GroupScheduled(server, "a")).empty() && !std::get<0>(GroupScheduled(server, "b")).empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  pods = PodNodes(server);
  int a = 0;
  int b = 0;
  for (const auto& [name, node] : pods) {
    if (node.empty()) continue;
    (name.starts_with("a-") ? a : b) += 1;
  }
  EXPECT_TRUE((a == 6 && b == 0) || (a == 0 && b == 6)) << "a: " << a << ", b: " << b << "\n" << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

const std::string kGangPriorityClasses = R"(---
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

// A gang PodGroup with a priority class (and disruptionMode PodGroup when `whole`).
std::string PriorityGroup(const std::string& name, int min_count, const std::string& priority_class, bool whole) {
  std::string out = PodGroup(name, min_count) + "  priorityClassName: " + priority_class + "\n";
  if (whole) out += "  disruptionMode: PodGroup\n";
  return out;
}

// GangMembers of a priority class that terminate within a second.
std::string PriorityMembers(const std::string& name, int count, const std::string& cpu,
                            const std::string& priority_class) {
  std::string out = GangMembers(name, count, cpu);
  const std::string fields = "  priorityClassName: " + priority_class + "\n  terminationGracePeriodSeconds: 1\n";
  const std::string containers = "  containers:";
  for (size_t at = 0; (at = out.find(containers, at)) != std::string::npos; at += fields.size() + containers.size()) {
    out.insert(at, fields);
  }
  return out;
}

// The names of the pods with upstream's Preempted event naming a PodGroup as the preemptor.
std::set<std::string> PreemptedByPodGroup(ApiServer& server) {
  std::set<std::string> out;
  RunResult events = server.Kubectl({"get", "events", "-o", "json"});
  if (events.exit_code != 0) return out;
  const json list = json::parse(events.out, nullptr, false);
  if (list.is_discarded()) return out;
  for (const json& e : list["items"]) {
    if (e.value("reason", "") == "Preempted" && e.value("message", "").starts_with("Preempted by podgroup ")) {
      out.insert(e["involvedObject"].value("name", ""));
    }
  }
  return out;
}

// Waits until `done` holds of the pods (name -> node), for up to a minute; the pods last seen.
template <typename Done>
std::map<std::string, std::string> WaitForPods(ApiServer& server, Done done) {
  std::map<std::string, std::string> pods;
  for (int i = 0; i < 600; ++i) {
    pods = PodNodes(server);
    if (done(pods)) break;
    std::this_thread::sleep_for(100ms);
  }
  return pods;
}

// Workload-aware preemption through the API (KEP-5710): a gang of 4 pods of priority 10 fills a
// node of 4 cpu; a gang of 3 of priority 100 then preempts. Admission gives each PodGroup its
// class's priority. With the victim's disruptionMode PodGroup all 4 pods go (not just the 3 pods of
// room needed); with the default mode (Pod) exactly 3 go. Each has upstream's Preempted event
// naming the PodGroup, and the 3 are bound.
TEST_F(RunE2E, AGangPreemptsALowerPriorityGangThroughTheApi) {
  for (const bool whole : {true, false}) {
    SCOPED_TRACE(whole ? "disruptionMode: PodGroup" : "disruptionMode: Pod");
    ApiServer server;
    ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
    ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(1, "4") + kGangPriorityClasses +
                                                        PriorityGroup("low", 4, "low", whole) +
                                                        PriorityMembers("low", 4, "1", "low")));
    Scheduler sched(server, {"--leader-elect=false"}, "sched");
    ASSERT_EQ(Bound(WaitForBound(server, 4, 60s)), 4u) << sched.Log();
    RunResult admitted =
        server.Kubectl({"get", "podgroups.scheduling.k8s.io", "low", "-o", "jsonpath={.spec.priority}"});
    ASSERT_OK(admitted);
    EXPECT_EQ(admitted.out, "10");

    ASSERT_OK(server.Kubectl({"create", "-f", "-"},
                             PriorityGroup("high", 3, "high", false) + PriorityMembers("high", 3, "1", "high")));
    const size_t low_left = whole ? 0 : 1;
    const auto pods = WaitForPods(server, [&](const std::map<std::string, std::string>& p) {
      size_t high = 0, low = 0;
      for (const auto& [name, node] : p) (name.starts_with("high-") ? high : low) += !node.empty();
      return high == 3 && low == low_left && p.size() == 3 + low_left;
    });
    size_t high = 0;
    for (const auto& [name, node] : pods) high += name.starts_with("high-") && !node.empty();
    EXPECT_EQ(high, 3u) << ::testing::PrintToString(pods) << sched.Log();
    EXPECT_EQ(pods.size(), 3 + low_left) << ::testing::PrintToString(pods);
    EXPECT_EQ(PreemptedByPodGroup(server).size(), 4 - low_left);
    EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
  }
}

// A Deployment's pods in a gang's way are moved, not lost: four nodes of 4 cpu, a critical pod of 3
// cpu on each of the last two; the Deployment's two pods (one per node) land on the first two. A
// gang of two pods of 4 cpu then needs those two nodes whole: the Deployment's pods are evicted and
// their replacements bound to the nodes of the critical pods, where the plan held room for them.
TEST_F(RunE2E, AGangMovesADeploymentsPodsThroughTheApi) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
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
      terminationGracePeriodSeconds: 1
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
)";
  std::string critical;
  for (int n : {3, 4}) {
    critical += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: db-" + std::to_string(n) +
                "}\nspec:\n  nodeName: node-" + std::to_string(n) +
                "\n  priorityClassName: critical\n  containers: [{name: c, image: db, resources: {requests: {cpu: "
                "\"3\"}}}]\n";
  }
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(4, "4") + kGangPriorityClasses + critical + web));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  const auto before = WaitForBound(server, 4, 60s);
  ASSERT_EQ(Bound(before), 4u) << sched.Log();
  std::set<std::string> first_web;
  for (const auto& [name, node] : before) {
    if (name.starts_with("web-")) {
      EXPECT_TRUE(node == "node-1" || node == "node-2") << name << " on " << node;
      first_web.insert(name);
    }
  }
  ASSERT_OK(server.Kubectl({"create", "-f", "-"},
                           PriorityGroup("train", 2, "high", false) + PriorityMembers("train", 2, "4", "high")));
  const auto pods = WaitForPods(server, [&](const std::map<std::string, std::string>& p) {
    size_t train = 0, web_elsewhere = 0;
    for (const auto& [name, node] : p) {
      train += name.starts_with("train-") && !node.empty();
      web_elsewhere += name.starts_with("web-") && !first_web.contains(name) && (node == "node-3" || node == "node-4");
    }
    return train == 2 && web_elsewhere == 2;
  });
  std::set<std::string> train_nodes, web_nodes;
  for (const auto& [name, node] : pods) {
    if (name.starts_with("train-") && !node.empty()) train_nodes.insert(node);
    if (name.starts_with("web-") && !node.empty()) web_nodes.insert(node);
  }
  EXPECT_EQ(train_nodes, (std::set<std::string>{"node-1", "node-2"})) << ::testing::PrintToString(pods) << sched.Log();
  EXPECT_EQ(web_nodes, (std::set<std::string>{"node-3", "node-4"})) << ::testing::PrintToString(pods);
  EXPECT_EQ(PreemptedByPodGroup(server), first_web);
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// Topology through the API: three racks of four nodes of 4 cpu, the first two partly used; a gang
// of 8 pods of 2 cpu whose PodGroup keeps it in one rack is bound whole to the third.
TEST_F(RunE2E, AGangWithATopologyKeyIsBoundInTheOneRackWithRoom) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  std::string manifests;
  for (int rack = 0; rack < 3; ++rack) {
    for (int i = 0; i < 4; ++i) {
      const std::string name = "r" + std::to_string(rack) + "-n" + std::to_string(i);
      manifests += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
                   "\n  labels: {kubernetes.io/hostname: " + name + ", topology.example.com/rack: rack-" +
                   std::to_string(rack) +
                   "}\nstatus:\n  capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n  allocatable: {cpu: "
                   "\"4\", memory: 8Gi, pods: \"110\"}\n";
    }
  }
  for (const auto& [name, node, cpu] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"busy-0", "r0-n0", "2"}, {"busy-1", "r1-n3", "1"}}) {
    manifests += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  nodeName: " + node +
                 "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n";
  }
  manifests += PodGroup("train", 8) +
               "  schedulingConstraints:\n    topology:\n    - key: topology.example.com/rack\n" +
               GangMembers("train", 8, "2");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, manifests));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  const auto pods = WaitForBound(server, 10, 60s);
  size_t placed = 0;
  for (const auto& [name, node] : pods) {
    if (!name.starts_with("train-")) continue;
    EXPECT_TRUE(node.starts_with("r2-")) << name << " on " << node;
    placed += !node.empty();
  }
  EXPECT_EQ(placed, 8u) << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// The messages of the pods' PodScheduled conditions: name -> message ("" when there is none).
std::map<std::string, std::string> PodScheduledMessages(ApiServer& server) {
  std::map<std::string, std::string> out;
  RunResult r = server.Kubectl({"get", "pods", "-o", "json"});
  if (r.exit_code != 0) return out;
  const json list = json::parse(r.out, nullptr, false);
  if (list.is_discarded()) return out;
  for (const json& p : list["items"]) {
    std::string message;
    for (const json& c : p.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled") message = c.value("message", "");
    }
    out[p["metadata"]["name"].get<std::string>()] = message;
  }
  return out;
}

// scheduler-plugins' Coscheduling through the API: its PodGroup CRD applied as the project ships
// it, the plugin's README demo (a ReplicaSet of 6 pods of 3 cpu labelled into PodGroup nginx, on
// room for 3) created with minMember 4: no pod is bound and each says why; minMember patched to 3
// (the PodGroup update requeues its members): 3 are bound together.
TEST_F(RunE2E, CoschedulingBindsTheReadmeDemoOnceItsPodGroupAllows) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  const std::string dir = SourcePath("tests/data/third_party/scheduler-plugins/");
  ASSERT_OK(server.Kubectl({"apply", "-f", dir + "scheduling.x-k8s.io_podgroups.yaml"}));
  ASSERT_OK(
      server.Kubectl({"wait", "--for", "condition=established", "--timeout=10s", "crd/podgroups.scheduling.x-k8s.io"}));
  std::string demo = Slurp(dir + "coscheduling-demo.yaml");
  const size_t at = demo.find("minMember: 3");
  ASSERT_NE(at, std::string::npos);
  demo.replace(at, std::string("minMember: 3").size(), "minMember: 4");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(3, "4") + "---\n" + demo));
  const fs::path config = server.Dir() / "coscheduling.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                           "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
                           "      enabled:\n      - name: Coscheduling\n    queueSort:\n      enabled:\n"
                           "      - name: Coscheduling\n      disabled:\n      - name: \"*\"\n";
  Scheduler sched(server, {"--leader-elect=false", "--config", config.string()}, "sched");
  std::map<std::string, std::string> messages;
  auto all_say = [&](const std::string& text) {
    if (messages.size() != 6) return false;
    return std::ranges::all_of(messages, [&](const auto& m) { return m.second.find(text) != std::string::npos; });
  };
  const std::string why = "pod group \"nginx\" needs 4 pods placed together and at most 3 of its 6 pending pods fit";
  for (int i = 0; i < 300 && !all_say(why); ++i) {
    messages = PodScheduledMessages(server);
    if (!all_say(why)) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(all_say(why)) << sched.Log();
  EXPECT_EQ(Bound(PodNodes(server)), 0u) << "a group that cannot complete holds nothing";

  ASSERT_OK(server.Kubectl(
      {"patch", "podgroups.scheduling.x-k8s.io", "nginx", "--type=merge", "-p", R"({"spec":{"minMember":3}})"}));
  const auto pods = WaitForBound(server, 3, 60s);
  EXPECT_EQ(Bound(pods), 3u) << sched.Log();
  std::set<std::string> nodes;
  for (const auto& [name, node] : pods) {
    if (!node.empty()) nodes.insert(node);
  }
  EXPECT_EQ(nodes.size(), 3u);
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

TEST_F(RunE2E, KilledAndRestartedMidBurstLosesAndDoubleBindsNothing) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  // 4 nodes of 4 cpus, 60 pods of 250m: exactly full when every pod is placed once.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(4)));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Deployment("burst", 64, "250m")));
  {
    Scheduler first(server, {"--leader-elect=false", "--kube-api-qps", "20", "--kube-api-burst", "1"}, "first");
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    size_t bound = 0;
    while (std::chrono::steady_clock::now() < deadline && bound < 10) {
      bound = Bound(PodNodes(server));
      std::this_thread::sleep_for(50ms);
    }
    ASSERT_GE(bound, 10u) << first.Log();
    first.Stop(SIGKILL);  // mid-burst, binds possibly in flight
  }
  const size_t before = Bound(PodNodes(server));
  EXPECT_LT(before, 64u);
  Scheduler second(server, {"--leader-elect=false"}, "second");
  auto pods = WaitForBound(server, 64, 90s);
  ASSERT_EQ(pods.size(), 64u);
  EXPECT_EQ(Bound(pods), 64u) << second.Log();
  for (const auto& [node, milli] : CpuByNode(server)) EXPECT_EQ(milli, 4000) << node;
  EXPECT_EQ(second.Stop(SIGTERM), 0) << second.Log();
}

TEST_F(RunE2E, ApiServerRestartedWithItsStateAndTheWatchCut) {
  const fs::path dir = fs::temp_directory_path() / ("kubesched-run-e2e-restart-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string state = (dir / "state.json").string();
  auto server = std::make_unique<ApiServer>(std::vector<std::string>{"--state", state}, dir);
  ASSERT_FALSE(server->Url().empty()) << server->ServerLog();
  const std::string listen = server->Url().substr(std::string("http://").size());
  ASSERT_OK(server->Kubectl({"create", "-f", "-"}, Nodes(2)));
  ASSERT_OK(server->Kubectl({"create", "-f", "-"}, BarePod("a", "100m") + BarePod("b", "100m")));
  Scheduler sched(*server, {"--leader-elect=false"}, "sched");
  ASSERT_EQ(Bound(WaitForBound(*server, 2, 30s)), 2u) << sched.Log();

  // The API server goes away (its state saved) and comes back on the same address.
  ASSERT_EQ(server->Terminate(), 0);
  server.reset();
  server = std::make_unique<ApiServer>(std::vector<std::string>{"--state", state}, dir, listen);
  ASSERT_FALSE(server->Url().empty()) << server->ServerLog();
  ASSERT_OK(server->Kubectl({"create", "-f", "-"}, BarePod("c", "100m") + BarePod("d", "100m")));
  auto pods = WaitForBound(*server, 4, 60s);
  EXPECT_EQ(Bound(pods), 4u) << sched.Log();
  EXPECT_TRUE(sched.Running());
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// The API server killed (-9) in the middle of a burst of binds and restarted from its --state:
// every acknowledged write survives, resourceVersions jump past anything the scheduler saw (its
// watches get 410 and relist), and every pod ends bound exactly once: each node ends at exactly
// its 4 cpus.
TEST_F(RunE2E, ApiServerKilledMidBurstEveryPodBoundOnce) {
  const fs::path dir = fs::temp_directory_path() / ("kubesched-run-e2e-crash-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string state = (dir / "state.json").string();
  auto server = std::make_unique<ApiServer>(std::vector<std::string>{"--state", state}, dir);
  ASSERT_FALSE(server->Url().empty()) << server->ServerLog();
  const std::string listen = server->Url().substr(std::string("http://").size());
  ASSERT_OK(server->Kubectl({"create", "-f", "-"}, Nodes(4)));
  ASSERT_OK(server->Kubectl({"create", "-f", "-"}, Deployment("burst", 64, "250m")));
  Scheduler sched(*server, {"--leader-elect=false", "--kube-api-qps", "40", "--kube-api-burst", "1"}, "sched");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  size_t bound = 0;
  while (std::chrono::steady_clock::now() < deadline && bound < 16) {
    bound = Bound(PodNodes(*server));
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_GE(bound, 16u) << sched.Log();
  server->Kill();  // binds in flight
  server.reset();
  server = std::make_unique<ApiServer>(std::vector<std::string>{"--state", state}, dir, listen);
  ASSERT_FALSE(server->Url().empty()) << server->ServerLog();
  auto pods = WaitForBound(*server, 64, 90s);
  ASSERT_EQ(pods.size(), 64u);
  EXPECT_EQ(Bound(pods), 64u) << sched.Log();
  for (const auto& [node, milli] : CpuByNode(*server)) EXPECT_EQ(milli, 4000) << node;
  EXPECT_TRUE(sched.Running());
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
  server.reset();
  fs::remove_all(dir);
}

TEST_F(RunE2E, TwoSchedulersElectOneLeaderAndTheOtherTakesOver) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(2)));
  const std::vector<std::string> election = {"--leader-elect=true",
                                             "--leader-elect-lease-duration",
                                             "4s",
                                             "--leader-elect-renew-deadline",
                                             "3s",
                                             "--leader-elect-retry-period",
                                             "500ms"};
  auto a = std::make_unique<Scheduler>(server, election, "a");
  auto b = std::make_unique<Scheduler>(server, election, "b");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, BarePod("p1", "100m") + BarePod("p2", "100m")));
  ASSERT_EQ(Bound(WaitForBound(server, 2, 30s)), 2u) << a->Log() << b->Log();

  // One holder; only its log shows binds.
  RunResult lease = server.Kubectl({"get", "lease", "-n", "kube-system", "kube-scheduler", "-o", "json"});
  ASSERT_OK(lease);
  const std::string holder = json::parse(lease.out)["spec"].value("holderIdentity", "");
  ASSERT_FALSE(holder.empty()) << lease.out;
  const bool a_leads = a->Log().find("Successfully acquired lease") != std::string::npos;
  const bool b_leads = b->Log().find("Successfully acquired lease") != std::string::npos;
  ASSERT_NE(a_leads, b_leads) << a->Log() << b->Log();
  std::unique_ptr<Scheduler>& leader = a_leads ? a : b;
  std::unique_ptr<Scheduler>& standby = a_leads ? b : a;
  EXPECT_EQ(standby->Log().find("Successfully bound pod"), std::string::npos) << standby->Log();

  // The leader dies without releasing the lease: the standby takes over once it expires.
  const auto killed = std::chrono::steady_clock::now();
  leader->Stop(SIGKILL);
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, BarePod("p3", "100m")));
  auto pods = WaitForBound(server, 3, 30s);
  EXPECT_EQ(Bound(pods), 3u) << standby->Log();
  const auto took = std::chrono::steady_clock::now() - killed;
  EXPECT_LT(took, 15s);  // the lease's 4 s plus retries and the bind, with a wide margin
  EXPECT_NE(standby->Log().find("Successfully acquired lease"), std::string::npos);
  lease = server.Kubectl({"get", "lease", "-n", "kube-system", "kube-scheduler", "-o", "json"});
  EXPECT_NE(json::parse(lease.out)["spec"].value("holderIdentity", ""), holder);
  EXPECT_GE(json::parse(lease.out)["spec"].value("leaseTransitions", 0), 1);

  // A graceful stop releases the lease.
  EXPECT_EQ(standby->Stop(SIGTERM), 0) << standby->Log();
  lease = server.Kubectl({"get", "lease", "-n", "kube-system", "kube-scheduler", "-o", "json"});
  EXPECT_EQ(json::parse(lease.out)["spec"].value("holderIdentity", ""), "") << lease.out;
}

// The secure port of a `kubesched run` process, found in its log ("Serving securely on"
// address="127.0.0.1:PORT", upstream's line), fetched with an HTTPS client that accepts its
// self-signed certificate.
class SecurePort {
 public:
  //! Waits for the log line; 0 when it did not come within `timeout`.
  static int FindPort(const Scheduler& sched, std::chrono::milliseconds timeout) {
    static const std::regex line(R"re("Serving securely on" address="127\.0\.0\.1:(\d+)")re");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string log = sched.Log();
      if (std::regex_search(log, m, line)) return std::stoi(m[1]);
      std::this_thread::sleep_for(50ms);
    }
    return 0;
  }

  //! With `token`, every request carries it as its bearer token.
  explicit SecurePort(int port, const std::string& token = "") : client_("127.0.0.1", port) {
    if (!token.empty()) client_.set_bearer_token_auth(token);
    client_.enable_server_certificate_verification(false);
    client_.set_connection_timeout(5);
    client_.set_read_timeout(10);
  }

  struct Response {
    int status = 0;  // 0: no answer
    std::string body;
  };
  Response Get(const std::string& path) {
    auto r = client_.Get(path);
    if (!r) return {};
    return {r->status, r->body};
  }

  //! Polls `path` until `done` holds for its response, or `timeout`; the last response.
  Response GetUntil(const std::string& path, std::chrono::milliseconds timeout,
                    const std::function<bool(const Response&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    Response r;
    while (std::chrono::steady_clock::now() < deadline) {
      r = Get(path);
      if (done(r)) break;
      std::this_thread::sleep_for(100ms);
    }
    return r;
  }

 private:
  httplib::SSLClient client_;
};

// The value of one series in a Prometheus text exposition, or nullopt.
std::optional<double> Series(const std::string& text, const std::string& series) {
  size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + series.size() + 1));
    at += series.size();
  }
  return std::nullopt;
}

// The RBAC a Prometheus scraping the secure port needs, as upstream documents it.
constexpr const char* kMetricsReader = R"(apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: metrics-reader}
rules:
- nonResourceURLs: ["/metrics"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: prometheus-metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: prometheus}
)";

TEST_F(RunE2E, ServesHealthReadinessAndMetricsOnTheSecurePort) {
  // The test bed reviews the secure port's tokens (a static token file) and authorizes its
  // requests (RBAC), as an API server does for kube-scheduler.
  const fs::path dir = fs::temp_directory_path() / ("kubesched-run-e2e-auth-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string tokens = (dir / "tokens.csv").string();
  std::ofstream(tokens) << "scrape-token,prometheus,uid-1\nother-token,somebody,uid-2,\"viewers,team-a\"\n";
  ApiServer server({"--token-auth-file", tokens}, dir);
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Nodes(2)));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Deployment("web", 5)));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, kMetricsReader));

  Scheduler sched(
      server,
      {"--leader-elect=false", "--secure-port", "0", "--bind-address", "127.0.0.1", "--authentication-kubeconfig",
       server.Kubeconfig(), "--authorization-kubeconfig", server.Kubeconfig()},
      "sched");
  const int port = SecurePort::FindPort(sched, 30s);
  ASSERT_GT(port, 0) << sched.Log();
  SecurePort anonymous(port);
  SecurePort https(port, "scrape-token");

  // /metrics needs a token the API server accepts for a user RBAC allows; the probes need none.
  SecurePort::Response refused = anonymous.Get("/metrics");
  EXPECT_EQ(refused.status, 403) << refused.body << sched.Log();
  EXPECT_NE(refused.body.find(R"("message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"")"),
            std::string::npos)
      << refused.body;
  EXPECT_NE(refused.body.find(R"("reason":"Forbidden")"), std::string::npos) << refused.body;
  SecurePort::Response bad = SecurePort(port, "no-such-token").Get("/metrics");
  EXPECT_EQ(bad.status, 401) << bad.body;
  EXPECT_NE(bad.body.find(R"("reason":"Unauthorized")"), std::string::npos) << bad.body;
  SecurePort::Response other = SecurePort(port, "other-token").Get("/metrics");
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_NE(other.body.find(R"(User \"somebody\" cannot get path \"/metrics\")"), std::string::npos) << other.body;
  EXPECT_EQ(anonymous.Get("/healthz").status, 200);
  EXPECT_EQ(anonymous.Get("/nothing-here").status, 403);

  SecurePort::Response healthz = https.Get("/healthz");
  EXPECT_EQ(healthz.status, 200) << sched.Log();
  EXPECT_EQ(healthz.body, "ok");
  EXPECT_EQ(https.Get("/livez").body, "ok");
  SecurePort::Response readyz = https.GetUntil("/readyz", 30s, [](const auto& r) { return r.status == 200; });
  EXPECT_EQ(readyz.status, 200) << readyz.body << sched.Log();
  EXPECT_EQ(readyz.body, "ok");
  EXPECT_EQ(https.Get("/readyz?verbose").body, "[+]ping ok\n[+]sched-handler-sync ok\nreadyz check passed\n");
  EXPECT_EQ(https.Get("/nothing-here").status, 403);  // prometheus may read /metrics only

  ASSERT_EQ(Bound(WaitForBound(server, 5, 60s, "app=web")), 5u) << sched.Log();
  const std::string scheduled = R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"})";
  const std::string unschedulable =
      R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"})";
  // A bind is counted once its binding cycle has finished, which may be after the API server has it.
  SecurePort::Response metrics =
      https.GetUntil("/metrics", 30s, [&](const auto& r) { return Series(r.body, scheduled) == 5.0; });
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(Series(metrics.body, scheduled), 5.0) << metrics.body;
  EXPECT_EQ(Series(metrics.body, unschedulable), std::nullopt) << metrics.body;
  for (const char* name : {"scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds",
                           "scheduler_scheduling_algorithm_duration_seconds", "scheduler_pending_pods",
                           "scheduler_preemption_attempts_total", "scheduler_preemption_victims",
                           "scheduler_framework_extension_point_duration_seconds",
                           "scheduler_plugin_execution_duration_seconds", "scheduler_queue_incoming_pods_total",
                           "scheduler_pod_scheduling_attempts", "scheduler_pod_scheduling_sli_duration_seconds",
                           "scheduler_unschedulable_pods", "scheduler_scheduler_cache_size"}) {
    EXPECT_NE(metrics.body.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
  }
  EXPECT_EQ(Series(metrics.body, R"(scheduler_scheduler_cache_size{type="nodes"})"), 2.0) << metrics.body;

  // A pod no node can hold moves the unschedulable series and waits in the unschedulable pool.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, BarePod("huge", "64")));
  metrics = https.GetUntil("/metrics", 30s, [&](const auto& r) { return Series(r.body, unschedulable) == 1.0; });
  EXPECT_EQ(Series(metrics.body, unschedulable), 1.0) << metrics.body;
  EXPECT_EQ(Series(metrics.body, scheduled), 5.0) << metrics.body;
  EXPECT_EQ(Series(metrics.body, R"(scheduler_pending_pods{queue="unschedulable"})"), 1.0) << metrics.body;
  EXPECT_EQ(
      Series(metrics.body, R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"})"),
      1.0)
      << metrics.body;

  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
  fs::remove_all(dir);
}

TEST_F(RunE2E, ReadyWithLeaderElectionOnceTheElectorRuns) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  Scheduler sched(server, {"--secure-port", "0", "--bind-address", "127.0.0.1"}, "sched");
  const int port = SecurePort::FindPort(sched, 30s);
  ASSERT_GT(port, 0) << sched.Log();
  SecurePort https(port);
  SecurePort::Response readyz = https.GetUntil("/readyz?verbose", 30s, [](const auto& r) { return r.status == 200; });
  EXPECT_EQ(readyz.status, 200) << readyz.body << sched.Log();
  EXPECT_EQ(readyz.body, "[+]ping ok\n[+]sched-handler-sync ok\n[+]leaderElection ok\nreadyz check passed\n");
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

TEST_F(RunE2E, BadFlagsAndUnreachableServers) {
  RunResult r = RunKubesched({"run", "--kubeconfig", "/nonexistent/kubeconfig", "--leader-elect=false"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/kubeconfig"), std::string::npos) << r.err;
  r = RunKubesched({"run", "--master", "http://127.0.0.1:1", "--leader-elect-lease-duration", "5s",
                    "--leader-elect-renew-deadline", "10s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("lease duration must be greater than the renew deadline"), std::string::npos) << r.err;
  r = RunKubesched({"run", "--master", "http://127.0.0.1:1", "--leader-elect-resource-lock", "endpoints"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("only \"leases\""), std::string::npos) << r.err;
  r = RunKubesched({"run", "--master", "http://127.0.0.1:1", "--tls-cert-file", "/nonexistent/tls.crt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("must be given together"), std::string::npos) << r.err;
  r = RunKubesched({"run", "--master", "http://127.0.0.1:1", "--leader-elect=false", "--tls-cert-file",
                    "/nonexistent/tls.crt", "--tls-private-key-file", "/nonexistent/tls.key"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot read --tls-cert-file \"/nonexistent/tls.crt\""), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------
// Volumes (issue 35) through the API: the test bed's PV controller and provisioner, `kubesched run`
// informing claims, volumes and the CSI objects, VolumeBinding's PreBind writing through the API.

// The claims as the API server has them: name -> {phase, volumeName, selected-node}.
std::map<std::string, std::tuple<std::string, std::string, std::string>> ClaimStates(ApiServer& server) {
  std::map<std::string, std::tuple<std::string, std::string, std::string>> out;
  RunResult r = server.Kubectl({"get", "pvc", "-o", "json"});
  if (r.exit_code != 0) return out;
  const json list = json::parse(r.out, nullptr, false);
  if (list.is_discarded()) return out;
  for (const json& c : list["items"]) {
    const json annotations = c["metadata"].value("annotations", json::object());
    out[c["metadata"]["name"].get<std::string>()] = {c.value("status", json::object()).value("phase", ""),
                                                     c["spec"].value("volumeName", ""),
                                                     annotations.value("volume.kubernetes.io/selected-node", "")};
  }
  return out;
}

std::string ZoneOfNode(const std::string& node) { return node.substr(0, node.rfind('-')); }

TEST_F(RunE2E, AStatefulSetOnAWaitForFirstConsumerClassRunsWhereItsProvisionerHasCapacity) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, volumes::ThreeZones() + volumes::ZonalStorage()));
  ASSERT_OK(server.Kubectl({"apply", "-f", "-"}, volumes::ZonalStatefulSet()));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  const auto pods = WaitForBound(server, 3, 90s, "app=db");
  ASSERT_EQ(Bound(pods), 3u) << sched.Log();
  // The claims are bound once the provisioner has made their volumes.
  std::map<std::string, std::tuple<std::string, std::string, std::string>> claims;
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(200ms)) {
    claims = ClaimStates(server);
    if (claims.size() == 3 &&
        std::ranges::all_of(claims, [](const auto& c) { return std::get<0>(c.second) == "Bound"; }))
      break;
  }
  for (const auto& [pod, node] : pods) {
    EXPECT_NE(ZoneOfNode(node), "zone-c") << pod << " on " << node;
    const std::string claim = "data-" + pod;
    ASSERT_TRUE(claims.contains(claim)) << claim;
    const auto& [phase, volume, selected] = claims.at(claim);
    EXPECT_EQ(phase, "Bound") << claim;
    EXPECT_EQ(selected, node) << claim;
    RunResult pv =
        server.Kubectl({"get", "pv", volume, "-o",
                        "jsonpath={.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}"});
    EXPECT_EQ(pv.out, ZoneOfNode(node)) << pv.err;
  }
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

TEST_F(RunE2E, VolumeConstraintsKeepPodsPendingWithUpstreamsMessages) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  std::string manifests = volumes::ThreeZones() + volumes::ZonalVolumeAndClaim() +
                          volumes::ReadWriteOncePodClaim("solo") + volumes::ClaimPod("first", "solo", "1", "zone-a-1");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, manifests));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, volumes::ClaimPod("zonal", "data") +
                                                      volumes::ClaimPod("missing", "does-not-exist") +
                                                      volumes::ClaimPod("second", "solo")));
  const auto pods = WaitForBound(server, 2, 60s);
  EXPECT_EQ(ZoneOfNode(pods.at("zonal")), "zone-b") << sched.Log();
  std::map<std::string, std::string> messages;
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(200ms)) {
    messages = PodScheduledMessages(server);
    if (!messages["missing"].empty() && !messages["second"].empty()) break;
  }
  EXPECT_TRUE(pods.at("missing").empty());
  EXPECT_NE(messages["missing"].find("persistentvolumeclaim \"does-not-exist\" not found"), std::string::npos)
      << messages["missing"];
  EXPECT_TRUE(pods.at("second").empty());
  EXPECT_NE(messages["second"].find(
                "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"),
            std::string::npos)
      << messages["second"];
  // The missing claim created: the pod's claim event requeues it, and it is bound.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, volumes::CsiVolumeAndClaim("does-not-exist")));
  const auto after = WaitForBound(server, 3, 60s);
  EXPECT_FALSE(after.at("missing").empty()) << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// A pod whose claim is bound to a zone-b volume while zone-b is full: pending with upstream's
// message; the effective configuration kube-scheduler prints (every default plugin in multiPoint)
// given to `run` unchanged.
TEST_F(RunE2E, AZonalClaimWhoseZoneIsFullKeepsItsPodPendingUnderTheEffectiveConfiguration) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  const std::string manifests =
      volumes::ThreeZones() + volumes::ZonalVolumeAndClaim() + volumes::CsiVolumeAndClaim("other") +
      volumes::ClaimPod("busy-1", "other", "4", "zone-b-1") + volumes::ClaimPod("busy-2", "other", "4", "zone-b-2");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, manifests));
  const std::string config = (server.Dir() / "effective.yaml").string();
  {
    std::ofstream out(config);
    out << volumes::kEffectiveConfig;
  }
  Scheduler sched(server, {"--leader-elect=false", "--config", config}, "sched");
  ASSERT_OK(
      server.Kubectl({"create", "-f", "-"}, volumes::ClaimPod("app", "data") + volumes::ClaimPod("free", "other")));
  const auto pods = WaitForBound(server, 3, 60s);
  EXPECT_FALSE(pods.at("free").empty()) << sched.Log();
  std::string message;
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(200ms)) {
    message = PodScheduledMessages(server)["app"];
    if (!message.empty()) break;
  }
  EXPECT_TRUE(PodNodes(server).at("app").empty());
  EXPECT_NE(message.find("0/6 nodes are available: 2 Insufficient cpu, 4 node(s) had volume node affinity conflict."),
            std::string::npos)
      << message << "\n"
      << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

TEST_F(RunE2E, ANodeAtItsAttachLimitIsFilteredOut) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  const std::string manifests = volumes::ZoneNode("n1", "zone-a", "8") + volumes::ZoneNode("n2", "zone-a", "1") +
                                volumes::AttachLimit("n1", 1) + volumes::AttachLimit("n2", 1) +
                                volumes::CsiVolumeAndClaim("used") + volumes::ClaimPod("running", "used", "0", "n1") +
                                volumes::CsiVolumeAndClaim("fresh");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, manifests));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, volumes::ClaimPod("app", "fresh", "1")));
  const auto pods = WaitForBound(server, 2, 60s);
  EXPECT_EQ(pods.at("app"), "n2") << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

// ---------------------------------------------------------------------------------------------
// Dynamic Resource Allocation (issue 36) through the API: the test bed's resourceclaim controller
// making claims from templates, `kubesched run` informing classes, slices and claims,
// DynamicResources' PreBind writing each claim's allocation and reservation through the API.

// The claim (as the API server has it) reserved for `pod`, or null.
json ClaimReservedFor(ApiServer& server, const std::string& pod) {
  RunResult r = server.Kubectl({"get", "resourceclaims", "-o", "json"});
  if (r.exit_code != 0) return json();
  const json list = json::parse(r.out, nullptr, false);
  if (list.is_discarded()) return json();
  for (const json& c : list["items"]) {
    for (const json& ref : c.value("status", json::object()).value("reservedFor", json::array())) {
      if (ref.value("name", "") == pod) return c;
    }
  }
  return json();
}

TEST_F(RunE2E, DevicesAreAllocatedAndWrittenToTheClaimsStatus) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, dra::DraNode("node-a") + dra::DraNode("node-b") + dra::GpuClass() +
                                                      dra::WholeGpus("node-b", 1) + dra::GpuTemplate("one-gpu")));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, dra::ClaimPod("first", "one-gpu")));
  auto pods = WaitForBound(server, 1, 60s);
  ASSERT_EQ(pods.at("first"), "node-b") << sched.Log();
  json claim;
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(200ms)) {
    claim = ClaimReservedFor(server, "first");
    if (claim.is_object()) break;
  }
  ASSERT_TRUE(claim.is_object()) << sched.Log();
  EXPECT_TRUE(claim["metadata"]["name"].get<std::string>().starts_with("first-gpu-")) << claim.dump();
  const json results = claim["status"]["allocation"]["devices"]["results"];
  ASSERT_EQ(results.size(), 1u) << claim.dump();
  EXPECT_EQ(results[0]["device"], "gpu-0");
  EXPECT_EQ(results[0]["pool"], "node-b");
  EXPECT_EQ(results[0]["driver"], dra::kDriver);
  EXPECT_EQ(claim["metadata"]["ownerReferences"][0]["name"], "first");
  // The only GPU taken: the next pod's claim cannot be allocated anywhere.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, dra::ClaimPod("second", "one-gpu")));
  std::map<std::string, std::string> messages;
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(200ms)) {
    messages = PodScheduledMessages(server);
    if (!messages["second"].empty()) break;
  }
  EXPECT_TRUE(messages["second"].starts_with("0/2 nodes are available: 2 cannot allocate all claims."))
      << messages["second"] << sched.Log();
  // The first pod gone, the resourceclaim controller deletes its claim and the second gets the GPU.
  ASSERT_OK(server.Kubectl({"delete", "pod", "first", "--grace-period=0", "--force"}));
  pods = WaitForBound(server, 1, 60s);
  EXPECT_EQ(pods["second"], "node-b") << sched.Log();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

TEST_F(RunE2E, AGpuShareIsPlacedWhereOneGpuHasRoomAndItsConsumedCapacityWritten) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(
      server.Kubectl({"create", "-f", "-"},
                     dra::DraNode("node-a") + dra::DraNode("node-b") + dra::GpuClass() +
                         dra::SharedGpus("node-a", 2, 0) + dra::SharedGpus("node-b", 1, 2) +
                         dra::GpuTemplate("half-of-0", "device.attributes[\"gpu.example.com\"].index == 0", "500") +
                         dra::GpuTemplate("half-of-1", "device.attributes[\"gpu.example.com\"].index == 1", "500") +
                         dra::GpuTemplate("six-tenths", "", "600")));
  Scheduler sched(server, {"--leader-elect=false"}, "sched");
  ASSERT_OK(server.Kubectl({"create", "-f", "-"},
                           dra::ClaimPod("half-0", "half-of-0") + dra::ClaimPod("half-1", "half-of-1")));
  auto pods = WaitForBound(server, 2, 60s);
  ASSERT_EQ(pods.at("half-0"), "node-a") << sched.Log();
  ASSERT_EQ(pods.at("half-1"), "node-a") << sched.Log();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, dra::ClaimPod("big-share", "six-tenths")));
  pods = WaitForBound(server, 3, 60s);
  EXPECT_EQ(pods.at("big-share"), "node-b") << sched.Log();
  json claim;
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(200ms)) {
    claim = ClaimReservedFor(server, "big-share");
    if (claim.is_object()) break;
  }
  ASSERT_TRUE(claim.is_object()) << sched.Log();
  const json result = claim["status"]["allocation"]["devices"]["results"][0];
  EXPECT_EQ(result["pool"], "node-b") << claim.dump();
  EXPECT_EQ(result["consumedCapacity"]["gpuMilli"], "600") << claim.dump();
  EXPECT_TRUE(result.contains("shareID")) << claim.dump();
  EXPECT_EQ(sched.Stop(SIGTERM), 0) << sched.Log();
}

}  // namespace
}  // namespace kubesched::e2e
