// End-to-end test of `kubesched apiserver` with the official Kubernetes Python client (Debian's
// python3-kubernetes, which scripts/install-deps.sh installs): tests/e2e/python/boreas_scheduler.py
// is a scheduler in the Boreas thesis's style written with it. It lists nodes (the client checks
// every Node's status.nodeInfo), lists pods with limit/continue, binds the unscheduled pods of
// its scheduler name with create_namespaced_binding (POST .../bindings), then watches from the
// list's resourceVersion (the client sends ?watch=True) and binds the pods created meanwhile.

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "e2e/apiserver_process.h"

namespace kubesched::e2e {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

bool HavePythonClient() {
  return std::system((std::string(kPython) + " -c 'import kubernetes' >/dev/null 2>&1").c_str()) == 0;
}

std::string Pod(const std::string& name, const std::string& scheduler, const std::string& cpu) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  schedulerName: " + scheduler +
         "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: " + cpu + "}}}]\n";
}

// Two nodes as a kubelet-less test bed has them: one with part of status.nodeInfo, one without.
constexpr const char* kNodes = R"(apiVersion: v1
kind: Node
metadata: {name: big}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  nodeInfo: {kubeletVersion: v1.32.0, architecture: amd64}
---
apiVersion: v1
kind: Node
metadata: {name: small}
status:
  allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
)";

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(PythonClientE2E, BoreasStyleSchedulerListsPagesWatchesAndBinds) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  ASSERT_TRUE(HavePythonClient()) << "Debian's python3-kubernetes is missing: run scripts/install-deps.sh";
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  std::string objects = kNodes;
  for (int i = 1; i <= 3; ++i) objects += Pod("early-" + std::to_string(i), "boreas", "1");
  for (int i = 1; i <= 2; ++i) objects += Pod("other-" + std::to_string(i), "someone-else", "100m");
  RunResult created = server.Kubectl({"create", "-f", server.WriteFile("objects.yaml", objects)});
  ASSERT_EQ(created.exit_code, 0) << created.err;

  Child py = Spawn({kPython, SourcePath("tests/e2e/python/boreas_scheduler.py"), "--kubeconfig", server.Kubeconfig(),
                    "--scheduler-name", "boreas", "--expect", "5"},
                   server.Dir() / "python.err", server.Dir().string());
  ASSERT_GT(py.pid, 0);
  std::string out = ReadUntil(
      py.out_fd, [](const std::string& t) { return t.find("watching from") != std::string::npos; },
      std::chrono::seconds(60));
  ASSERT_NE(out.find("watching from"), std::string::npos) << out << Slurp(server.Dir() / "python.err");
  EXPECT_NE(out.find("nodes 2\n"), std::string::npos) << out;
  // 5 pods, 2 per page.
  EXPECT_NE(out.find("listed 5 pods in 3 pages\n"), std::string::npos) << out;
  // Most CPU left first: big (4), big (3), then big and small tie at 2.
  EXPECT_NE(out.find("bound default/early-1 big\n"), std::string::npos) << out;
  EXPECT_NE(out.find("bound default/early-2 big\n"), std::string::npos) << out;
  EXPECT_EQ(Count(out, "bound "), 3U) << out;

  // Created after the list: seen only through the watch from its resourceVersion.
  std::string later;
  for (int i = 1; i <= 2; ++i) later += Pod("late-" + std::to_string(i), "boreas", "500m");
  later += Pod("other-3", "someone-else", "100m");
  created = server.Kubectl({"create", "-f", server.WriteFile("later.yaml", later)});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  out += ReadUntil(
      py.out_fd,
      [&](const std::string& t) {
        // The whole line: a read can end between "done " and its count.
        const std::string all = out + t;
        const size_t done = all.find("done ");
        return done != std::string::npos && all.find('\n', done) != std::string::npos;
      },
      std::chrono::seconds(60));
  EXPECT_NE(out.find("bound default/late-1 "), std::string::npos) << out;
  EXPECT_NE(out.find("bound default/late-2 "), std::string::npos) << out;
  EXPECT_NE(out.find("done 5\n"), std::string::npos) << out << Slurp(server.Dir() / "python.err");
  int status = 0;
  waitpid(py.pid, &status, 0);
  close(py.out_fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(server.Dir() / "python.err");

  // What kubectl sees: the scheduler's pods on nodes, the others' still unbound.
  RunResult pods = server.Kubectl(
      {"get", "pods", "-o", "jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{\"\\n\"}{end}"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  for (const char* name : {"early-1", "early-2", "early-3", "late-1", "late-2"}) {
    EXPECT_EQ(pods.out.find(std::string(name) + "=\n"), std::string::npos) << name << " unbound:\n" << pods.out;
    EXPECT_NE(pods.out.find(std::string(name) + "="), std::string::npos) << pods.out;
  }
  for (const char* name : {"other-1", "other-2", "other-3"}) {
    EXPECT_NE(pods.out.find(std::string(name) + "=\n"), std::string::npos) << name << " bound:\n" << pods.out;
  }
}

}  // namespace
}  // namespace kubesched::e2e
