// End-to-end tests of `kubesched apiserver` with the real kubectl: the server runs as a process
// (`--listen 127.0.0.1:0 --write-kubeconfig FILE`), the test reads the address it prints, and
// drives it with `kubectl --kubeconfig FILE` and kubectl's default flags (client-side apply,
// --validate=strict, server-side printing). Skipped when kubectl is not installed.

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "e2e/apiserver_process.h"
#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kNodes = R"(apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels:
    kubernetes.io/hostname: node-1
    node-role.kubernetes.io/worker: ""
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  addresses:
  - {type: InternalIP, address: 10.0.0.1}
  nodeInfo: {kubeletVersion: v1.32.0, osImage: Ubuntu 24.04, kernelVersion: 6.8.0, containerRuntimeVersion: containerd://1.7.0}
---
apiVersion: v1
kind: Node
metadata:
  name: node-2
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  addresses:
  - {type: InternalIP, address: 10.0.0.2}
)";

constexpr const char* kApp = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
description: important
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    team: blue
spec:
  replicas: REPLICAS
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      priorityClassName: high
      containers:
      - name: nginx
        image: nginx:1.27
        env:
        - {name: MODE, value: prod}
        readinessProbe:
          httpGet: {path: /healthz, port: 80}
        volumeMounts:
        - {name: data, mountPath: /data}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
      volumes:
      - name: data
        emptyDir: {}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
)";

// A pod as JSON, for requests made without kubectl.
std::string PodJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"("},"spec":{"containers":[{"name":"c","image":"busybox"}]}})";
}

std::string Pod(const std::string& name, const std::string& labels = "{app: solo}") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  labels: " + labels +
         "\nspec:\n  containers:\n  - name: c\n    image: busybox\n    env: [{name: A, value: b}]\n";
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t pos = text.find(from);
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

class ApiserverE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  }
};

#define ASSERT_OK(r) ASSERT_EQ((r).exit_code, 0) << "stdout:\n" << (r).out << "\nstderr:\n" << (r).err

TEST_F(ApiserverE2E, CreateApplyAndGetWithKubectl) {
  ApiServer server;
  ASSERT_TRUE(server.Url().starts_with("http://127.0.0.1:")) << server.ServerLog();

  RunResult created = server.Kubectl({"create", "-f", server.WriteFile("nodes.yaml", kNodes)});
  ASSERT_OK(created);
  EXPECT_EQ(created.out, "node/node-1 created\nnode/node-2 created\n");

  const std::string app = server.WriteFile("app.yaml", Replace(kApp, "REPLICAS", "2"));
  RunResult applied = server.Kubectl({"apply", "-f", app});
  ASSERT_OK(applied);
  EXPECT_NE(applied.out.find("priorityclass.scheduling.k8s.io/high created"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("deployment.apps/web created"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("poddisruptionbudget.policy/web created"), std::string::npos) << applied.out;

  // Applied again with a change: a strategic merge patch of what changed.
  server.WriteFile("app.yaml", Replace(kApp, "REPLICAS", "3"));
  RunResult reapplied = server.Kubectl({"apply", "-f", app});
  ASSERT_OK(reapplied);
  EXPECT_NE(reapplied.out.find("priorityclass.scheduling.k8s.io/high unchanged"), std::string::npos) << reapplied.out;
  EXPECT_NE(reapplied.out.find("deployment.apps/web configured"), std::string::npos) << reapplied.out;

  RunResult nodes = server.Kubectl({"get", "nodes", "-o", "wide"});
  ASSERT_OK(nodes);
  EXPECT_TRUE(nodes.out.starts_with("NAME     STATUS")) << nodes.out;
  for (const char* column :
       {"ROLES", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"}) {
    EXPECT_NE(nodes.out.find(column), std::string::npos) << column << "\n" << nodes.out;
  }
  EXPECT_NE(nodes.out.find("worker"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("10.0.0.1"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("Ubuntu 24.04"), std::string::npos) << nodes.out;

  // The deployment as stored: the change applied, every field kubesched does not model kept.
  RunResult yaml = server.Kubectl({"get", "deployment", "web", "-o", "yaml"});
  ASSERT_OK(yaml);
  for (const char* text :
       {"replicas: 3", "team: blue", "name: MODE", "value: prod", "readinessProbe:", "path: /healthz", "emptyDir: {}",
        "mountPath: /data", "kubectl.kubernetes.io/last-applied-configuration"}) {
    EXPECT_NE(yaml.out.find(text), std::string::npos) << text << "\n" << yaml.out;
  }
  RunResult js = server.Kubectl({"get", "deployment", "web", "-o", "json"});
  ASSERT_OK(js);
  json d = json::parse(js.out);
  EXPECT_EQ(d["spec"]["template"]["spec"]["volumes"][0]["name"], "data");
  EXPECT_EQ(d["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"], "prod");
  EXPECT_EQ(d["spec"]["replicas"], 3);

  // The Deployment controller makes a ReplicaSet and its pods.
  RunResult pods;
  for (int i = 0; i < 50; ++i) {
    pods = server.Kubectl({"get", "pods", "-l", "app=web", "-o", "name"});
    if (std::count(pods.out.begin(), pods.out.end(), '\n') == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(std::count(pods.out.begin(), pods.out.end(), '\n'), 3) << pods.out << pods.err;

  RunResult wide = server.Kubectl({"get", "deploy,rs,pdb,priorityclass", "-o", "wide"});
  ASSERT_OK(wide);
  for (const char* text : {"deployment.apps/web", "UP-TO-DATE", "nginx:1.27", "app=web", "replicaset.apps/web-",
                           "DESIRED", "poddisruptionbudget.policy/web", "MIN AVAILABLE", "ALLOWED DISRUPTIONS",
                           "priorityclass.scheduling.k8s.io/high", "1000", "GLOBAL-DEFAULT"}) {
    EXPECT_NE(wide.out.find(text), std::string::npos) << text << "\n" << wide.out;
  }
}

TEST_F(ApiserverE2E, SelectorsDescribeAndEvents) {
  ApiServer server;
  ASSERT_OK(server.Kubectl({"create", "-f", server.WriteFile("nodes.yaml", kNodes)}));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("a") + "---\n" + Pod("b", "{app: other}")));
  ASSERT_OK(server.Bind("a", "node-1"));

  RunResult by_label = server.Kubectl({"get", "pods", "-l", "app=other", "-o", "name"});
  ASSERT_OK(by_label);
  EXPECT_EQ(by_label.out, "pod/b\n");
  RunResult by_node = server.Kubectl({"get", "pods", "--field-selector", "spec.nodeName=node-1", "-o", "wide"});
  ASSERT_OK(by_node);
  EXPECT_NE(by_node.out.find("node-1"), std::string::npos) << by_node.out;
  EXPECT_EQ(by_node.out.find("\nb "), std::string::npos) << by_node.out;
  EXPECT_NE(by_node.out.find("\na "), std::string::npos) << by_node.out;

  // An event about the pod, as the scheduler records it (describe finds events by the pod's uid).
  RunResult uid = server.Kubectl({"get", "pod", "a", "-o", "jsonpath={.metadata.uid}"});
  ASSERT_OK(uid);
  const std::string event = R"(apiVersion: v1
kind: Event
metadata:
  name: a.1
involvedObject: {kind: Pod, name: a, namespace: default, apiVersion: v1, uid: )" +
                            uid.out + R"(}
reason: Scheduled
type: Normal
message: Successfully assigned default/a to node-1
source: {component: default-scheduler}
firstTimestamp: "2024-01-01T00:00:00Z"
lastTimestamp: "2024-01-01T00:00:00Z"
count: 1
)";
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, event));
  RunResult events = server.Kubectl({"get", "events"});
  ASSERT_OK(events);
  EXPECT_TRUE(events.out.starts_with("LAST SEEN   TYPE     REASON      OBJECT   MESSAGE")) << events.out;
  EXPECT_NE(events.out.find("Normal   Scheduled   pod/a    Successfully assigned default/a to node-1"),
            std::string::npos)
      << events.out;

  RunResult describe = server.Kubectl({"describe", "pod", "a"});
  ASSERT_OK(describe);
  for (const char* text : {"Name:         a", "Namespace:    default", "Node:         node-1", "app=solo",
                           "Environment:", "Scheduled", "Successfully assigned default/a to node-1"}) {
    EXPECT_NE(describe.out.find(text), std::string::npos) << text << "\n" << describe.out;
  }
}

// scheduling.k8s.io/v1alpha2 PodGroups (workload-aware scheduling): created, listed, validated
// as upstream's ValidatePodGroup, their scheduling policy immutable, and pods naming them.
TEST_F(ApiserverE2E, PodGroupsWithKubectl) {
  ApiServer server;
  const std::string group = R"(apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata:
  name: train
spec:
  schedulingPolicy:
    gang:
      minCount: 2
  schedulingConstraints:
    topology:
    - key: topology.example.com/rack
)";
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, group));
  RunResult listed = server.Kubectl({"get", "podgroups", "-o", "name"});
  ASSERT_OK(listed);
  EXPECT_EQ(listed.out, "podgroup.scheduling.k8s.io/train\n");
  RunResult min_count =
      server.Kubectl({"get", "podgroup", "train", "-o", "jsonpath={.spec.schedulingPolicy.gang.minCount}"});
  ASSERT_OK(min_count);
  EXPECT_EQ(min_count.out, "2");

  RunResult changed = server.Kubectl({"apply", "-f", "-"}, Replace(group, "minCount: 2", "minCount: 3"));
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.err.find("spec.schedulingPolicy: Invalid value"), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find("field is immutable"), std::string::npos) << changed.err;

  RunResult invalid =
      server.Kubectl({"create", "-f", "-"}, Replace(Replace(group, "train", "bad"), "minCount: 2", "minCount: -1"));
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_NE(invalid.err.find("The PodGroup \"bad\" is invalid"), std::string::npos) << invalid.err;
  EXPECT_NE(invalid.err.find("spec.schedulingPolicy.gang.minCount"), std::string::npos) << invalid.err;

  ASSERT_OK(server.Kubectl({"create", "-f", "-"},
                           Replace(Pod("member"), "spec:\n", "spec:\n  schedulingGroup:\n    podGroupName: train\n")));
  RunResult member = server.Kubectl({"get", "pod", "member", "-o", "jsonpath={.spec.schedulingGroup.podGroupName}"});
  ASSERT_OK(member);
  EXPECT_EQ(member.out, "train");
}

TEST_F(ApiserverE2E, RefusalsAsKubectlReportsThem) {
  ApiServer server;
  // A field kubectl's strict validation (done by the server) rejects.
  RunResult unknown = server.Kubectl({"create", "-f", "-"}, Replace(Pod("u"), "spec:\n", "spec:\n  foo: 1\n"));
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("Error from server (BadRequest)"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("strict decoding error: unknown field \"spec.foo\""), std::string::npos) << unknown.err;

  // What needs a kubelet says there is none.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("k")));
  for (const auto& [args, what] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"logs", "k"}, "read logs from"}, {{"exec", "k", "--", "ls"}, "exec"}}) {
    RunResult r = server.Kubectl(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_EQ(r.err,
              "Error from server (BadRequest): pods \"k\": kubesched's API test bed has no kubelet and runs no "
              "containers, so there is nothing to " +
                  what + " (logs, exec, attach, port-forward and proxy are not available)\n")
        << args[0];
  }

  // An invalid object: 422 with causes, printed as kubectl prints them.
  const std::string bad = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
spec:
  replicas: -1
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: x}]
)";
  RunResult invalid = server.Kubectl({"apply", "-f", "-"}, bad);
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_NE(invalid.err.find("The Deployment \"bad\" is invalid"), std::string::npos) << invalid.err;
  EXPECT_NE(invalid.err.find("spec.replicas"), std::string::npos) << invalid.err;
  EXPECT_EQ(server.Kubectl({"get", "deployment", "bad"}).exit_code, 1) << "nothing stored";

  // A stale replace: 409.
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("p")));
  RunResult old = server.Kubectl({"get", "pod", "p", "-o", "yaml"});
  ASSERT_OK(old);
  ASSERT_OK(server.Kubectl({"label", "pod", "p", "x=y"}));
  RunResult stale = server.Kubectl({"replace", "-f", server.WriteFile("old.yaml", old.out)});
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.err.find("Error from server (Conflict)"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find("the object has been modified"), std::string::npos) << stale.err;

  RunResult exists = server.Kubectl({"create", "-f", "-"}, Pod("p"));
  EXPECT_NE(exists.err.find("Error from server (AlreadyExists)"), std::string::npos) << exists.err;
  RunResult missing = server.Kubectl({"get", "pod", "nope"});
  EXPECT_NE(missing.err.find("Error from server (NotFound): pods \"nope\" not found"), std::string::npos)
      << missing.err;

  RunResult ssa = server.Kubectl({"apply", "--server-side", "-f", "-"}, Pod("s"));
  EXPECT_NE(ssa.exit_code, 0);
  EXPECT_NE(ssa.err.find("server-side apply is not supported"), std::string::npos) << ssa.err;
}

// Values of the wrong type are refused as upstream's decoder refuses them, whatever kubectl's
// --validate says; a patch's unknown field is reported and dropped, not stored (the next dump
// of the cluster would not load).
TEST_F(ApiserverE2E, WrongTypesRefusedAndUnknownFieldsDroppedOnPatches) {
  ApiServer server;
  const std::string deployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: "6"
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: x}]
)";
  for (const char* validate : {"--validate=strict", "--validate=false"}) {
    RunResult r = server.Kubectl({"apply", validate, "-f", "-"}, deployment);
    EXPECT_EQ(r.exit_code, 1) << validate;
    EXPECT_NE(r.err.find("Deployment in version \"v1\" cannot be handled as a Deployment: spec.replicas: expected an "
                         "integer, got the string \"6\""),
              std::string::npos)
        << r.err;
  }
  const std::string pod = Replace(Pod("t"), "spec:\n", "spec:\n  terminationGracePeriodSeconds: \"1800\"\n");
  RunResult typed = server.Kubectl({"create", "-f", "-"}, pod);
  EXPECT_NE(typed.err.find("spec.terminationGracePeriodSeconds: expected an integer, got the string \"1800\""),
            std::string::npos)
      << typed.err;
  EXPECT_EQ(server.Kubectl({"get", "pod", "t"}).exit_code, 1) << "nothing stored";

  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("p")));
  RunResult patched =
      server.Kubectl({"patch", "pod", "p", "--type=merge", "-p", R"({"spec":{"nodeSelectr":{"a":"b"}}})"});
  ASSERT_OK(patched);
  EXPECT_NE(patched.err.find("unknown field \"spec.nodeSelectr\""), std::string::npos) << patched.err;
  RunResult got = server.Kubectl({"get", "pod", "p", "-o", "json"});
  ASSERT_OK(got);
  EXPECT_EQ(got.out.find("nodeSelectr"), std::string::npos) << got.out;
  RunResult command =
      server.Kubectl({"patch", "pod", "p", "-p", R"({"spec":{"containers":[{"name":"c","command":["sleep",10]}]}})"});
  EXPECT_EQ(command.exit_code, 1);
  EXPECT_NE(command.err.find("spec.containers[0].command[1]: expected a string, got the number 10"), std::string::npos)
      << command.err;
}

// `kubectl rollout history` and `rollout undo` read the ReplicaSets' revisions: an undo goes back
// to the previous template, whose ReplicaSet becomes current again with the next revision.
TEST_F(ApiserverE2E, RolloutUndoGoesBackToThePreviousReplicaSet) {
  ApiServer server;
  ASSERT_OK(server.Kubectl({"apply", "-f", SourcePath("tests/data/third_party/guestbook/guestbook-all-in-one.yaml")}));
  ASSERT_OK(server.Kubectl({"set", "image", "deployment/frontend", "php-redis=example/gb-frontend:v6"}));
  RunResult undo = server.Kubectl({"rollout", "undo", "deployment/frontend"});
  ASSERT_OK(undo);
  EXPECT_EQ(undo.out, "deployment.apps/frontend rolled back\n");
  RunResult history = server.Kubectl({"rollout", "history", "deployment/frontend"});
  ASSERT_OK(history);
  EXPECT_NE(history.out.find("REVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n"), std::string::npos)
      << history.out;
  RunResult sets = server.Kubectl({"get", "rs", "-l", "tier=frontend", "-o",
                                   "custom-columns=REV:.metadata.annotations.deployment\\.kubernetes\\.io/"
                                   "revision,REPLICAS:.spec.replicas,IMAGE:.spec.template.spec.containers[0].image",
                                   "--sort-by=.metadata.annotations.deployment\\.kubernetes\\.io/revision"});
  ASSERT_OK(sets);
  EXPECT_EQ(sets.out,
            "REV   REPLICAS   IMAGE\n"
            "2     0          example/gb-frontend:v6\n"
            "3     3          gcr.io/google-samples/gb-frontend:v4\n");
}

TEST_F(ApiserverE2E, WatchSeesAnotherClientsPodAndGracefulDelete) {
  ApiServer server;
  ASSERT_OK(server.Kubectl({"create", "-f", server.WriteFile("nodes.yaml", kNodes)}));
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("first")));
  size_t w = server.StartKubectl({"get", "pods", "-w"});
  std::string seen = server.WatchOutputUntil(w, "first", std::chrono::seconds(20));
  ASSERT_NE(seen.find("first"), std::string::npos) << seen;

  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("second")));
  seen = server.WatchOutputUntil(w, "second", std::chrono::seconds(20));
  EXPECT_NE(seen.find("second"), std::string::npos) << seen;
  EXPECT_TRUE(seen.starts_with("NAME    READY   STATUS    RESTARTS   AGE\n")) << seen;

  // A bound pod deleted with a grace period: Terminating, then gone; kubectl waits for it.
  ASSERT_OK(server.Bind("first", "node-1"));
  const auto start = std::chrono::steady_clock::now();
  RunResult deleted = server.Kubectl({"delete", "pod", "first", "--grace-period=1", "--timeout=30s"});
  ASSERT_OK(deleted);
  EXPECT_EQ(deleted.out, "pod \"first\" deleted\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  seen = server.WatchOutputUntil(w, "Terminating", std::chrono::seconds(10));
  EXPECT_NE(seen.find("Terminating"), std::string::npos) << seen;
  EXPECT_EQ(server.Kubectl({"get", "pod", "first"}).exit_code, 1);
}

TEST_F(ApiserverE2E, TlsWithTheKubeconfigItWrites) {
  ApiServer server({"--tls"});
  ASSERT_TRUE(server.Url().starts_with("https://127.0.0.1:")) << server.Url() << server.ServerLog();
  RunResult ns = server.Kubectl({"get", "namespaces"});
  ASSERT_OK(ns);
  EXPECT_NE(ns.out.find("default"), std::string::npos) << ns.out;
  EXPECT_NE(ns.out.find("Active"), std::string::npos) << ns.out;
  ASSERT_OK(server.Kubectl({"create", "-f", "-"}, Pod("p")));
}

TEST_F(ApiserverE2E, StateSurvivesARestartAndSigtermExitsCleanly) {
  fs::path dir = fs::temp_directory_path() / ("kubesched-apiserver-e2e-state-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string state = (dir / "state.json").string();
  {
    ApiServer server({"--state", state}, dir);
    ASSERT_OK(server.Kubectl({"create", "-f", server.WriteFile("nodes.yaml", kNodes)}));
    ASSERT_OK(server.Kubectl({"apply", "-f", server.WriteFile("app.yaml", Replace(kApp, "REPLICAS", "1"))}));
    EXPECT_EQ(server.Terminate(), 0) << server.ServerLog();
  }
  ASSERT_TRUE(fs::exists(state));
  ApiServer restarted({"--state", state}, dir);
  RunResult nodes = restarted.Kubectl({"get", "nodes", "-o", "name"});
  ASSERT_OK(nodes);
  EXPECT_EQ(nodes.out, "node/node-1\nnode/node-2\n");
  RunResult pc = restarted.Kubectl({"get", "priorityclass", "high", "-o", "jsonpath={.value}"});
  ASSERT_OK(pc);
  EXPECT_EQ(pc.out, "1000");
  // The last-applied configuration came back too: apply again finds nothing to change.
  RunResult again = restarted.Kubectl({"apply", "-f", restarted.WriteFile("app.yaml", Replace(kApp, "REPLICAS", "1"))});
  ASSERT_OK(again);
  EXPECT_NE(again.out.find("deployment.apps/web unchanged"), std::string::npos) << again.out;
  EXPECT_EQ(restarted.Terminate(), 0) << restarted.ServerLog();
  fs::remove_all(dir);
}

// SIGTERM with a slow client (half a request header) and an open watch: the server ends the
// watch, cuts the slow client and exits at once (it waited 79 s for such a client once). The
// bound below is generous; the time is printed.
TEST_F(ApiserverE2E, SigtermDoesNotWaitForASlowClientOrAWatch) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  const int port = std::stoi(server.Url().substr(server.Url().rfind(':') + 1));
  auto connect_and_send = [&](const std::string& bytes) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    return fd;
  };
  const int slow = connect_and_send("GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nAcc");
  const int watch = connect_and_send("GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  // The watch is open once its response header has come.
  std::string got;
  char buf[4096];
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (got.find("\r\n\r\n") == std::string::npos && std::chrono::steady_clock::now() < give_up) {
    pollfd p{watch, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(watch, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ASSERT_NE(got.find("200 OK"), std::string::npos) << got;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(server.Terminate(), 0) << server.ServerLog();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("SIGTERM to exit with a slow client and a watch open: %.3f s\n", seconds);
  EXPECT_LT(seconds, 30.0);
  ::close(slow);
  ::close(watch);
}

// kill -9 in the middle of a burst of writes: every write the server acknowledged is there after
// the restart from the same --state, and the resourceVersion is never lower than one a client saw.
TEST_F(ApiserverE2E, KillNineInABurstLosesNoAcknowledgedWrite) {
  fs::path dir = fs::temp_directory_path() / ("kubesched-apiserver-e2e-crash-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string state = (dir / "state.json").string();
  std::mutex mu;
  std::set<std::string> acknowledged;
  uint64_t highest_rv = 0;
  constexpr int kBurst = 10'000;
  const auto started = std::chrono::steady_clock::now();
  {
    ApiServer server({"--state", state}, dir);
    ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
    std::atomic<bool> killed{false};
    std::atomic<int> acks{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] {
        httplib::Client client(server.Url());
        client.set_keep_alive(true);
        client.set_tcp_nodelay(true);  // as Go's clients: the body is not held back by Nagle
        for (int i = 0; !killed.load(); ++i) {
          const std::string name = "w" + std::to_string(w) + "-" + std::to_string(i);
          auto res = client.Post("/api/v1/namespaces/default/pods", PodJson(name), "application/json");
          if (!res || res->status != 201) continue;  // not acknowledged (the server is going)
          const auto body = nlohmann::json::parse(res->body);
          const uint64_t rv = std::stoull(body["metadata"]["resourceVersion"].get<std::string>());
          std::lock_guard lock(mu);
          acknowledged.insert(name);
          highest_rv = std::max(highest_rv, rv);
          acks.fetch_add(1);
        }
      });
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (acks.load() < kBurst && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    server.Kill();  // the writers are still writing
    killed = true;
    for (auto& t : writers) t.join();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_GE(acknowledged.size(), static_cast<size_t>(kBurst));
  std::printf("%zu writes acknowledged in %.1f s before kill -9 (%.0f/s)\n", acknowledged.size(), seconds,
              static_cast<double>(acknowledged.size()) / seconds);

  ApiServer restarted({"--state", state}, dir);
  ASSERT_FALSE(restarted.Url().empty()) << restarted.ServerLog();
  httplib::Client client(restarted.Url());
  auto res = client.Get("/api/v1/namespaces/default/pods");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const auto list = nlohmann::json::parse(res->body);
  std::set<std::string> present;
  for (const auto& item : list["items"]) present.insert(item["metadata"]["name"].get<std::string>());
  size_t lost = 0;
  for (const std::string& name : acknowledged) lost += present.contains(name) ? 0 : 1;
  EXPECT_EQ(lost, 0u) << "of " << acknowledged.size() << " acknowledged";
  EXPECT_GE(std::stoull(list["metadata"]["resourceVersion"].get<std::string>()), highest_rv);
  auto next = client.Post("/api/v1/namespaces/default/pods", PodJson("after"), "application/json");
  ASSERT_TRUE(next);
  ASSERT_EQ(next->status, 201) << next->body;
  EXPECT_GT(std::stoull(nlohmann::json::parse(next->body)["metadata"]["resourceVersion"].get<std::string>()),
            highest_rv);
  EXPECT_EQ(restarted.Terminate(), 0) << restarted.ServerLog();
  fs::remove_all(dir);
}

TEST_F(ApiserverE2E, ManifestsAtStart) {
  const fs::path dir = fs::temp_directory_path() / ("kubesched-apiserver-e2e-f-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "nodes.yaml") << kNodes;
  ApiServer server({"-f", (dir / "nodes.yaml").string()});
  RunResult nodes = server.Kubectl({"get", "nodes", "-o", "name"});
  ASSERT_OK(nodes);
  EXPECT_EQ(nodes.out, "node/node-1\nnode/node-2\n");
  fs::remove_all(dir);
}

// `apiserver -f` creates every kind it serves, a CRD's custom resources after the CRD included,
// and says nothing of kinds "not simulated" (that is simulate's warning).
TEST_F(ApiserverE2E, ManifestsAtStartCreateCustomResources) {
  const fs::path dir = fs::temp_directory_path() / ("kubesched-apiserver-e2e-crd-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "m.yaml")
      << Slurp(SourcePath("tests/data/third_party/scheduler-plugins/scheduling.x-k8s.io_elasticquotas.yaml"))
      << "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: q1}\nspec:\n  max: "
         "{cpu: 4}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n";
  ApiServer server({"-f", (dir / "m.yaml").string()});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  RunResult quotas = server.Kubectl({"get", "eq,svc", "-o", "name"});
  ASSERT_OK(quotas);
  EXPECT_EQ(quotas.out, "elasticquota.scheduling.x-k8s.io/q1\nservice/web\n");
  EXPECT_EQ(server.ServerLog().find("does not simulate"), std::string::npos) << server.ServerLog();
  fs::remove_all(dir);
}

// The review resources are in discovery, create only, as upstream lists them. (`kubectl auth
// can-i` and `auth whoami` post them as protobuf, which the test bed does not decode yet: the
// self reviews are tested over JSON in access_review_test.cc.)
TEST_F(ApiserverE2E, ReviewResourcesAreDiscovered) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  RunResult resources = server.Kubectl({"api-resources", "--api-group", "authorization.k8s.io", "-o", "wide"});
  ASSERT_OK(resources);
  for (const char* name :
       {"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"}) {
    EXPECT_NE(resources.out.find(name), std::string::npos) << resources.out;
  }
  EXPECT_NE(resources.out.find("SubjectAccessReview        create   "), std::string::npos) << resources.out;
  EXPECT_EQ(resources.out.find("create,delete"), std::string::npos) << resources.out;
  RunResult authn = server.Kubectl({"api-resources", "--api-group", "authentication.k8s.io", "-o", "name"});
  ASSERT_OK(authn);
  EXPECT_EQ(authn.out, "selfsubjectreviews.authentication.k8s.io\ntokenreviews.authentication.k8s.io\n");
}

// CustomResourceDefinitions as a project ships them (scheduler-plugins' PodGroup and
// ElasticQuota, tests/data/third_party/README.md): applied with kubectl's default validation, they
// are established and their custom resources are created, listed with the CRD's printer columns,
// reached by short name, watched, validated against the CRD's schema (unknown fields refused under
// kubectl's Strict, wrong types a 422) and deleted with the CRD.
TEST_F(ApiserverE2E, CustomResourcesOfRealCrds) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  const std::string dir = SourcePath("tests/data/third_party/scheduler-plugins/");
  for (const char* file : {"scheduling.x-k8s.io_podgroups.yaml", "scheduling.x-k8s.io_elasticquotas.yaml"}) {
    RunResult applied = server.Kubectl({"apply", "-f", dir + file});
    ASSERT_OK(applied);
    EXPECT_EQ(applied.err, "");
  }
  ASSERT_OK(server.Kubectl({"wait", "--for", "condition=established", "--timeout=10s",
                            "crd/podgroups.scheduling.x-k8s.io", "crd/elasticquotas.scheduling.x-k8s.io"}));
  ASSERT_OK(server.Kubectl({"apply", "-f", "-"}, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: test\n"));
  ASSERT_OK(server.Kubectl({"apply", "-f", dir + "elasticquota-example.yaml"}));
  RunResult quotas = server.Kubectl({"get", "eq", "-n", "test"});
  ASSERT_OK(quotas);
  EXPECT_NE(quotas.out.find("NAME   USED   MAX"), std::string::npos) << quotas.out;
  EXPECT_NE(quotas.out.find("test"), std::string::npos) << quotas.out;
  RunResult max = server.Kubectl({"get", "elasticquota", "test", "-n", "test", "-o", "jsonpath={.spec.max.cpu}"});
  ASSERT_OK(max);
  EXPECT_EQ(max.out, "20");

  // Qualified: the API server also serves scheduling.k8s.io's own PodGroups, which kubectl
  // prefers for the plain name (a built-in group), as it does against a 1.36 cluster.
  const size_t watch = server.StartKubectl({"get", "podgroups.scheduling.x-k8s.io", "-w", "--output-watch-events"});
  const std::string group = R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: gang
spec:
  minMember: MIN
  scheduleTimeoutSeconds: 10
)";
  RunResult created = server.Kubectl({"apply", "-f", "-"}, Replace(group, "MIN", "3"));
  ASSERT_OK(created);
  EXPECT_NE(server.WatchOutputUntil(watch, "gang", std::chrono::seconds(10)).find("ADDED"), std::string::npos);
  RunResult table = server.Kubectl({"get", "pg"});
  ASSERT_OK(table);
  EXPECT_NE(table.out.find("NAME   PHASE   MINMEMBER   RUNNING   SUCCEEDED   FAILED   AGE"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("\ngang           3                                          "), std::string::npos)
      << table.out;

  RunResult unknown = server.Kubectl({"apply", "-f", "-"}, Replace(group, "MIN", "3\n  minMembers: 4"));
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("unknown field \"spec.minMembers\""), std::string::npos) << unknown.err;
  RunResult wrong_type = server.Kubectl({"apply", "-f", "-"}, Replace(group, "MIN", "\"three\""));
  EXPECT_NE(wrong_type.exit_code, 0);
  EXPECT_NE(wrong_type.err.find("spec.minMember: Invalid value: \"string\": spec.minMember in body must be of type "
                                "integer: \"string\""),
            std::string::npos)
      << wrong_type.err;

  ASSERT_OK(server.Kubectl({"delete", "crd", "podgroups.scheduling.x-k8s.io"}));
  EXPECT_NE(server.WatchOutputUntil(watch, "DELETED", std::chrono::seconds(10)).find("DELETED"), std::string::npos);
  RunResult gone = server.Kubectl({"get", "podgroups.scheduling.x-k8s.io"});
  EXPECT_NE(gone.exit_code, 0);
  // kubectl names the qualified resource it no longer finds in discovery.
  EXPECT_NE(gone.err.find("the server doesn't have a resource type \"podgroups\""), std::string::npos) << gone.err;
  RunResult crds = server.Kubectl({"get", "crds", "-o", "name"});
  ASSERT_OK(crds);
  EXPECT_EQ(crds.out, "customresourcedefinition.apiextensions.k8s.io/elasticquotas.scheduling.x-k8s.io\n");
}

}  // namespace
}  // namespace kubesched::e2e
