// End-to-end tests of the deployment manifests (deploy/): kubectl takes every one of them against
// `kubesched apiserver`, client-side and for real, and `kubectl get` shows what they made; the
// manifests agree with one another (the Deployment mounts the ConfigMap's key, runs as the
// ServiceAccount the bindings name, the ClusterRole renews the Lease the configuration elects on);
// and the configuration the ConfigMap carries loads in kubesched and schedules its profile's pods.
// Skipped when kubectl is not installed.

#include <algorithm>
#include <filesystem>
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

// Every manifest under deploy/, subdirectories included, in name order.
std::vector<std::string> DeployManifests() {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(SourcePath("deploy"))) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::ranges::sort(files);
  return files;
}

// What deploy/ holds, as kubectl's -o name prints it.
const std::set<std::string> kDeployObjects = {
    "serviceaccount/kubesched",
    "clusterrole.rbac.authorization.k8s.io/kubesched",
    "clusterrolebinding.rbac.authorization.k8s.io/kubesched",
    "clusterrolebinding.rbac.authorization.k8s.io/kubesched-as-volume-scheduler",
    "configmap/kubesched-config",
    "deployment.apps/kubesched",
    "pod/kube-scheduler",
    "clusterrole.rbac.authorization.k8s.io/kubesched:priorityclass-reader",
    "clusterrolebinding.rbac.authorization.k8s.io/kubesched:kube-scheduler-priorityclasses",
};

std::set<std::string> Lines(const std::string& text) {
  std::set<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.insert(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

class DeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
    ASSERT_FALSE(server_.Url().empty()) << server_.ServerLog();
  }

  json GetJson(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"get"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"-o", "json"});
    RunResult r = server_.Kubectl(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }

  ApiServer server_;
};

TEST_F(DeployTest, ClientDryRunAcceptsEveryManifest) {
  const std::vector<std::string> files = DeployManifests();
  ASSERT_EQ(files.size(), 5u) << "rbac, config, deployment, static-pod/kube-scheduler, static-pod/rbac";
  std::set<std::string> names;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    RunResult r = server_.Kubectl({"create", "--dry-run=client", "--validate=false", "-f", file, "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& name : Lines(r.out)) names.insert(name);
  }
  EXPECT_EQ(names, kDeployObjects);
  // A client-side dry run writes nothing.
  RunResult sa = server_.Kubectl({"get", "serviceaccount", "kubesched", "-n", "kube-system"});
  EXPECT_NE(sa.exit_code, 0);
  EXPECT_NE(sa.err.find("NotFound"), std::string::npos) << sa.err;
}

TEST_F(DeployTest, CreateDeployDirectoryThenGetShowsTheObjects) {
  // kubectl's defaults: --validate=strict, which asks each group's OpenAPI v3 document.
  RunResult created = server_.Kubectl({"create", "-R", "-f", SourcePath("deploy")});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.err, "");
  RunResult listed = server_.Kubectl({"get", "-R", "-f", SourcePath("deploy"), "-o", "name"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(Lines(listed.out), kDeployObjects);

  // The tables kubectl prints: NAME and upstream's columns.
  RunResult sa = server_.Kubectl({"get", "sa", "-n", "kube-system"});
  ASSERT_EQ(sa.exit_code, 0) << sa.err;
  EXPECT_NE(sa.out.find("NAME"), std::string::npos) << sa.out;
  EXPECT_NE(sa.out.find("kubesched"), std::string::npos) << sa.out;
  RunResult cm = server_.Kubectl({"get", "cm", "kubesched-config", "-n", "kube-system"});
  ASSERT_EQ(cm.exit_code, 0) << cm.err;
  EXPECT_NE(cm.out.find("DATA"), std::string::npos) << cm.out;
  RunResult crb = server_.Kubectl({"get", "clusterrolebindings"});
  ASSERT_EQ(crb.exit_code, 0) << crb.err;
  EXPECT_NE(crb.out.find("ClusterRole/kubesched"), std::string::npos) << crb.out;
  EXPECT_NE(crb.out.find("ClusterRole/system:volume-scheduler"), std::string::npos) << crb.out;
  RunResult wide = server_.Kubectl({"get", "clusterrolebinding", "kubesched-as-volume-scheduler", "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_NE(wide.out.find("kube-system/kubesched"), std::string::npos) << wide.out;
  RunResult cr = server_.Kubectl({"get", "clusterroles"});
  ASSERT_EQ(cr.exit_code, 0) << cr.err;
  EXPECT_NE(cr.out.find("CREATED AT"), std::string::npos) << cr.out;
  EXPECT_NE(cr.out.find("kubesched:priorityclass-reader"), std::string::npos) << cr.out;
  RunResult deploy = server_.Kubectl({"get", "deploy", "-n", "kube-system"});
  ASSERT_EQ(deploy.exit_code, 0) << deploy.err;
  EXPECT_NE(deploy.out.find("kubesched"), std::string::npos) << deploy.out;

  // The static pod: host network, system-node-critical's priority.
  json pod = GetJson({"pod", "kube-scheduler", "-n", "kube-system"});
  EXPECT_EQ(pod["spec"]["hostNetwork"], true);
  EXPECT_EQ(pod["spec"]["priority"], 2000001000);
  EXPECT_EQ(pod["spec"]["containers"][0]["livenessProbe"]["httpGet"]["scheme"], "HTTPS");
}

// The manifests name one another consistently.
TEST_F(DeployTest, ManifestsAgreeWithOneAnother) {
  RunResult created = server_.Kubectl({"create", "-R", "-f", SourcePath("deploy")});
  ASSERT_EQ(created.exit_code, 0) << created.err;

  json deployment = GetJson({"deployment", "kubesched", "-n", "kube-system"});
  const json& spec = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(deployment["spec"]["replicas"], 2);
  EXPECT_EQ(spec["serviceAccountName"], "kubesched");
  EXPECT_EQ(spec["priorityClassName"], "system-cluster-critical");
  const json& container = spec["containers"][0];
  const std::vector<std::string> command = container["command"].get<std::vector<std::string>>();
  EXPECT_EQ(command.front(), "kubesched");
  EXPECT_NE(std::ranges::find(command, "--config=/etc/kubesched/config.yaml"), command.end());
  EXPECT_EQ(container["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(container["securityContext"]["allowPrivilegeEscalation"], false);
  EXPECT_EQ(container["securityContext"]["capabilities"]["drop"], json::array({"ALL"}));
  EXPECT_EQ(spec["securityContext"]["runAsNonRoot"], true);
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    EXPECT_EQ(container[probe]["httpGet"]["port"], 10259) << probe;
    EXPECT_EQ(container[probe]["httpGet"]["scheme"], "HTTPS") << probe;
  }
  // --config's directory is the ConfigMap's volume, and its file one of the ConfigMap's keys.
  std::string config_volume;
  for (const json& mount : container["volumeMounts"]) {
    if (mount["mountPath"] == "/etc/kubesched") config_volume = mount["name"];
  }
  ASSERT_FALSE(config_volume.empty());
  std::string config_map;
  for (const json& volume : spec["volumes"]) {
    if (volume["name"] == config_volume) config_map = volume["configMap"]["name"];
  }
  EXPECT_EQ(config_map, "kubesched-config");
  json cm = GetJson({"configmap", config_map, "-n", "kube-system"});
  ASSERT_TRUE(cm["data"].contains("config.yaml"));
  const std::string config = cm["data"]["config.yaml"];
  EXPECT_NE(config.find("resourceName: kubesched\n"), std::string::npos) << config;

  // The binding gives the ServiceAccount the ClusterRole, which renews exactly that Lease.
  json binding = GetJson({"clusterrolebinding", "kubesched"});
  EXPECT_EQ(binding["roleRef"]["name"], "kubesched");
  EXPECT_EQ(binding["subjects"][0]["kind"], "ServiceAccount");
  EXPECT_EQ(binding["subjects"][0]["name"], "kubesched");
  EXPECT_EQ(binding["subjects"][0]["namespace"], "kube-system");
  json role = GetJson({"clusterrole", "kubesched"});
  bool lease_rule = false;
  bool priority_classes = false;
  for (const json& rule : role["rules"]) {
    if (rule["resources"] == json::array({"leases"}) && rule.contains("resourceNames")) {
      EXPECT_EQ(rule["resourceNames"], json::array({"kubesched"}));
      EXPECT_EQ(rule["verbs"], json::array({"get", "update"}));
      lease_rule = true;
    }
    if (rule["apiGroups"] == json::array({"scheduling.k8s.io"})) priority_classes = true;
  }
  EXPECT_TRUE(lease_rule);
  EXPECT_TRUE(priority_classes);
}

// The configuration the ConfigMap carries, as the API server returns it, loads in kubesched, and
// its one profile schedules the pods that name it.
TEST_F(DeployTest, ConfigMapConfigurationLoadsAndSchedulesItsProfile) {
  RunResult created = server_.Kubectl({"create", "-f", SourcePath("deploy/config.yaml")});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json cm = GetJson({"configmap", "kubesched-config", "-n", "kube-system"});
  ASSERT_TRUE(cm["data"].contains("config.yaml"));
  const std::string config = server_.WriteFile("kubesched-config.yaml", cm["data"]["config.yaml"]);
  const std::string manifest = server_.WriteFile("cluster.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: opted-in}
spec:
  schedulerName: kubesched
  containers:
  - {name: c, image: busybox, resources: {requests: {cpu: 100m}}}
)");
  RunResult r = RunKubesched({"simulate", "--config", config, "-f", manifest, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json placement = json::parse(r.out);
  ASSERT_EQ(placement["pods"].size(), 1u) << r.out;
  EXPECT_EQ(placement["pods"][0]["name"], "opted-in");
  EXPECT_EQ(placement["pods"][0]["node"], "node-a") << "the profile kubesched schedules the pods that name it";

  // Not a configuration that loads whatever it says: a misspelt field fails.
  std::string broken = cm["data"]["config.yaml"];
  broken.replace(broken.find("resourceName"), 12, "resourceNames");
  RunResult bad = RunKubesched({"simulate", "--config", server_.WriteFile("broken.yaml", broken), "-f", manifest});
  EXPECT_NE(bad.exit_code, 0);
}

// The kinds deploy/ does not use but the test bed now stores, created with kubectl's defaults.
TEST_F(DeployTest, RbacAndSecretKindsCreateAndGet) {
  RunResult created = server_.Kubectl({"create", "-f", "-"}, R"(apiVersion: v1
kind: Secret
metadata: {name: token, namespace: default}
type: Opaque
stringData: {token: abc}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lease-reader, namespace: kube-system}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lease-reader, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lease-reader}
subjects:
- {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
)");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  RunResult secrets = server_.Kubectl({"get", "secrets", "-o", "name"});
  ASSERT_EQ(secrets.exit_code, 0) << secrets.err;
  EXPECT_EQ(secrets.out, "secret/token\n");
  RunResult bindings = server_.Kubectl({"get", "rolebindings", "-n", "kube-system", "-o", "wide"});
  ASSERT_EQ(bindings.exit_code, 0) << bindings.err;
  EXPECT_NE(bindings.out.find("Role/lease-reader"), std::string::npos) << bindings.out;
  EXPECT_NE(bindings.out.find("alice"), std::string::npos) << bindings.out;
  RunResult roles = server_.Kubectl({"get", "roles", "-A"});
  ASSERT_EQ(roles.exit_code, 0) << roles.err;
  EXPECT_NE(roles.out.find("lease-reader"), std::string::npos) << roles.out;
  // Strict validation is the server's, and it still rejects unknown fields of these kinds.
  RunResult unknown = server_.Kubectl({"create", "-f", "-"}, R"(apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: default}
dta: {a: b}
)");
  EXPECT_NE(unknown.exit_code, 0) << unknown.out;
}

}  // namespace
}  // namespace kubesched::e2e
