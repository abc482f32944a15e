// End-to-end test of `kubesched run --record-plugin-results` against `kubesched apiserver`: each
// pod's last attempt appears as its scheduler.kubesched.io/plugin-results annotation (the node
// chosen, the tainted node's TaintToleration verdict, the feasible nodes' scores; for a pod that
// fits nowhere, the FailedScheduling message and every node's rejection), and the profiles are
// published in ConfigMap kube-system/kubesched-scheduler-config, read back with kubectl. Skipped
// when kubectl is not installed.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/apiserver_process.h"
#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr std::string_view kAnnotation = "scheduler.kubesched.io/plugin-results";

#define ASSERT_OK(r) ASSERT_EQ((r).exit_code, 0) << "stdout:\n" << (r).out << "\nstderr:\n" << (r).err

std::string Node(const std::string& name, const std::string& taints = "") {
  std::string out = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
                    "\n  labels: {kubernetes.io/hostname: " + name + "}\n";
  if (!taints.empty()) out += "spec:\n  taints: " + taints + "\n";
  return out +
         "status:\n  capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n  allocatable: {cpu: \"4\", memory: "
         "8Gi, pods: \"110\"}\n";
}

std::string Pod(const std::string& name, const std::string& cpu) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\nspec:\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests: {cpu: \"" + cpu +
         "\"}\n";
}

// The pod's plugin results, once its annotation is there (and, with `bound`, once it is bound),
// polled for at most 30 seconds.
std::optional<json> WaitForResults(ApiServer& server, const std::string& pod, bool bound, json& object) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    RunResult r = server.Kubectl({"get", "pod", pod, "-o", "json"});
    if (r.exit_code == 0) {
      object = json::parse(r.out);
      const json annotations = object["metadata"].value("annotations", json::object());
      const bool is_bound = !object["spec"].value("nodeName", "").empty();
      if (annotations.contains(kAnnotation) && (!bound || is_bound)) {
        return json::parse(annotations[std::string(kAnnotation)].get<std::string>());
      }
    }
    std::this_thread::sleep_for(200ms);
  }
  return std::nullopt;
}

const json* FindNode(const json& results, const std::string& name) {
  for (const json& n : results["nodes"]) {
    if (n["name"] == name) return &n;
  }
  return nullptr;
}

TEST(PluginResultsE2E, AnnotatesEachAttemptAndPublishesTheProfiles) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Node("node-1") + Node("node-2") +
                                                      Node("node-3",
                                                           "[{key: dedicated, value: gpu, effect: "
                                                           "NoSchedule}]")));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("fits", "500m") + Pod("huge", "64")));
  const std::string config_text =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  leaderElect: "
      "false\n";
  const std::string config = server.WriteFile("config.yaml", config_text);
  Child sched = Spawn({KubeschedPath(), "run", "--kubeconfig", server.Kubeconfig(), "--config", config, "--secure-port",
                       "-1", "--record-plugin-results"},
                      server.Dir() / "sched.err", server.Dir().string());
  struct Stopper {
    Child& c;
    ~Stopper() { StopChild(c, SIGTERM); }
  } stopper{sched};

  json fits_pod;
  std::optional<json> fits = WaitForResults(server, "fits", true, fits_pod);
  ASSERT_TRUE(fits.has_value()) << Slurp(server.Dir() / "sched.err");
  EXPECT_EQ((*fits)["profile"], "default-scheduler");
  EXPECT_EQ((*fits)["result"], "Scheduled");
  EXPECT_EQ((*fits)["selectedNode"], fits_pod["spec"]["nodeName"]);
  EXPECT_NE((*fits)["selectedNode"], "node-3");
  EXPECT_EQ((*fits)["truncatedNodes"], 0);
  EXPECT_TRUE((*fits)["time"].get<std::string>().ends_with("Z"));
  const json& filter_plugins = (*fits)["filterPlugins"];
  EXPECT_NE(std::find(filter_plugins.begin(), filter_plugins.end(), "TaintToleration"), filter_plugins.end());
  EXPECT_FALSE((*fits)["scorePlugins"].empty());
  ASSERT_EQ((*fits)["nodes"].size(), 3u);
  const json* tainted = FindNode(*fits, "node-3");
  ASSERT_NE(tainted, nullptr);
  EXPECT_FALSE((*tainted)["feasible"].get<bool>());
  EXPECT_NE((*tainted)["filter"].value("TaintToleration", "").find("untolerated taint"), std::string::npos)
      << tainted->dump();
  for (const std::string name : {"node-1", "node-2"}) {
    SCOPED_TRACE(name);
    const json* n = FindNode(*fits, name);
    ASSERT_NE(n, nullptr);
    EXPECT_TRUE((*n)["feasible"].get<bool>());
    EXPECT_FALSE(n->contains("filter"));
    ASSERT_TRUE(n->contains("score")) << n->dump();
    EXPECT_TRUE((*n)["score"].contains("NodeResourcesFit")) << n->dump();
    EXPECT_TRUE(n->contains("total"));
  }

  json huge_pod;
  std::optional<json> huge = WaitForResults(server, "huge", false, huge_pod);
  ASSERT_TRUE(huge.has_value()) << Slurp(server.Dir() / "sched.err");
  EXPECT_EQ((*huge)["result"], "Unschedulable");
  EXPECT_FALSE(huge->contains("selectedNode"));
  EXPECT_TRUE((*huge)["message"].get<std::string>().starts_with("0/3 nodes are available")) << huge->dump();
  for (const json& n : (*huge)["nodes"]) {
    EXPECT_FALSE(n["feasible"].get<bool>());
    EXPECT_FALSE(n["filter"].empty()) << n.dump();
  }
  const json* first = FindNode(*huge, "node-1");
  ASSERT_NE(first, nullptr);
  EXPECT_NE((*first)["filter"].value("NodeResourcesFit", "").find("Insufficient cpu"), std::string::npos)
      << first->dump();

  RunResult cm = server.Kubectl({"get", "configmap", "-n", "kube-system", "kubesched-scheduler-config", "-o", "json"});
  ASSERT_OK(cm);
  const json data = json::parse(cm.out)["data"];
  EXPECT_EQ(data["config.yaml"], config_text);
  const json profiles = json::parse(data["profiles.json"].get<std::string>())["profiles"];
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0]["schedulerName"], "default-scheduler");
  const json& filter = profiles[0]["plugins"]["filter"];
  for (const char* plugin : {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit"}) {
    EXPECT_NE(std::find(filter.begin(), filter.end(), plugin), filter.end()) << plugin << " in " << filter.dump();
  }
  EXPECT_EQ(profiles[0]["plugins"]["queueSort"], json::parse(R"(["PrioritySort"])"));
  EXPECT_FALSE(profiles[0]["scorePlugins"].empty());
}

}  // namespace
}  // namespace kubesched::e2e
