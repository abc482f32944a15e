#include "server/scenario.h"

#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "api/json.h"
#include "api/manifest.h"
#include "api/yaml.h"
#include "server/api_handler.h"
#include "server/ui_handler.h"
#include "server/ui_test_requests.h"
#include "store/resources.h"
#include "util/clock.h"

namespace kubesched::server {
namespace {

namespace json = api::json;

constexpr int64_t kStart = 1'780'000'000LL * util::kNanosPerSecond;

class ScenarioTest : public ::testing::Test {
 protected:
  HttpResponse Call(std::string method, std::string path, std::string body = "") {
    return UiRequest(ui_, std::move(method), std::move(path), std::move(body));
  }
  void Apply(std::string_view manifests) {
    HttpResponse r = Call("POST", "/ui/apply", std::string(manifests));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  std::string Uid(std::string_view pod) {
    HttpResponse r = Call("GET", "/api/v1/namespaces/default/pods/" + std::string(pod));
    json::Document doc;
    EXPECT_TRUE(json::Parse(r.body, doc)) << r.body;
    return std::string(json::GetString(*json::Find(doc, "metadata"), "uid"));
  }
  // What the scheduler does to a pod it places: the binding, and an Event with reason Scheduled.
  void Schedule(std::string_view pod, std::string_view node, std::string_view scheduler = "default-scheduler") {
    const std::string uid = Uid(pod);
    ASSERT_TRUE(store_->Bind("default", pod, uid, node));
    Apply(fmt::format(R"({{"apiVersion": "events.k8s.io/v1", "kind": "Event",
      "metadata": {{"name": "{0}.1", "namespace": "default"}},
      "eventTime": "2026-06-01T00:00:00.000000Z", "reportingController": "{2}", "reportingInstance": "{2}-x",
      "action": "Binding", "reason": "Scheduled", "type": "Normal", "note": "Successfully assigned default/{0} to {1}",
      "regarding": {{"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": "{0}", "uid": "{3}"}}}})",
                      pod, node, scheduler, uid));
  }
  std::string Pod(std::string_view name, std::string_view cpu, std::string_view extra_spec = "") {
    return fmt::format(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {}}}\nspec:\n{}  containers:\n  - name: c\n    image: busybox\n"
        "    resources: {{requests: {{cpu: {}}}}}\n",
        name, extra_spec, cpu);
  }

  util::VirtualClock clock_{kStart};
  std::unique_ptr<store::Store> store_ = store::NewBuiltinStore(clock_);
  ApiHandler api_{*store_, ApiHandlerOptions{}};
  UiHandler ui_{api_, *store_};
};

constexpr std::string_view kCluster = R"(apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {tier: "1"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
description: "important: yes"
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: "0644", gpu: "yes"}, annotations: {note: "a: b"}}
spec:
  taints: [{key: dedicated, value: "true", effect: NoSchedule}]
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {unschedulable: true}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: team}
spec:
  template:
    metadata: {annotations: {simulate.kubesched.io/run-for: 30s}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
)";

TEST_F(ScenarioTest, SavesTheTestBedAsAScenarioSimulateLoadsStrictly) {
  Apply(kCluster);
  Apply(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubesched-scheduler-config, namespace: kube-system}\n"
      "data:\n  profiles.json: '{\"profiles\":[{\"schedulerName\":\"default-scheduler\"}]}'\n"
      "  config.yaml: |\n    apiVersion: kubescheduler.config.k8s.io/v1\n    kind: KubeSchedulerConfiguration\n"
      "    profiles:\n    - schedulerName: default-scheduler\n");
  Apply(Pod("placed", "1"));
  clock_.Advance(3 * util::kNanosPerSecond + 400'000'000);
  Apply(Pod("pinned", "2", "  nodeName: n1\n") + "---\n" + Pod("other-scheduler", "1", "  schedulerName: mine\n"));
  clock_.Advance(2 * util::kNanosPerSecond);
  // Through the API: /ui/apply checks a pod's PriorityClass among the pasted objects only.
  HttpRequest late;
  late.method = "POST";
  late.path = "/api/v1/namespaces/default/pods";
  late.content_type = late.accept = "application/json";
  late.body = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late", "annotations": {
    "simulate.kubesched.io/create-after": "99s", "simulate.kubesched.io/delete-after": "1m",
    "scheduler.kubesched.io/plugin-results": "{}"}},
    "spec": {"priorityClassName": "high", "containers": [{"name": "c", "image": "busybox"}]}})";
  ASSERT_EQ(api_.Handle(late).status, 201);
  Schedule("placed", "n1");
  Schedule("other-scheduler", "n2", "mine");  // not one of the published profiles
  Schedule("late", "n1");

  HttpResponse r = Call("GET", "/ui/scenario");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/yaml");
  EXPECT_EQ(ResponseHeader(r, "Content-Disposition"), "attachment; filename=\"scenario.yaml\"");
  const std::string& text = r.body;
  SCOPED_TRACE(text);
  EXPECT_TRUE(text.starts_with("# ")) << text;
  EXPECT_NE(text.find("kubesched simulate -f scenario.yaml"), std::string::npos);

  auto loaded = api::LoadManifestsFromString(text, "scenario.yaml", api::LoadOptions{});
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  ASSERT_EQ(loaded->scheduler_configurations.size(), 1u);
  EXPECT_NE(loaded->scheduler_configurations[0].text.find("schedulerName: default-scheduler"), std::string::npos);
  ASSERT_EQ(loaded->nodes.size(), 2u);
  EXPECT_EQ(loaded->nodes[0]->metadata.labels.Find("zone") ? *loaded->nodes[0]->metadata.labels.Find("zone") : "",
            "0644");
  EXPECT_EQ(loaded->nodes[0]->metadata.labels.Find("gpu") ? *loaded->nodes[0]->metadata.labels.Find("gpu") : "", "yes");
  EXPECT_TRUE(loaded->nodes[1]->spec.unschedulable);
  ASSERT_EQ(loaded->workloads.size(), 2u);  // the Deployment and the Job
  std::map<std::string, std::shared_ptr<api::Pod>> pods;
  for (const auto& p : loaded->pods) pods[p->metadata.name] = p;
  ASSERT_TRUE(pods.contains("placed") && pods.contains("pinned") && pods.contains("late"));
  EXPECT_EQ(pods["placed"]->spec.node_name, "");  // the scheduler placed it: simulate does again
  EXPECT_EQ(pods["pinned"]->spec.node_name, "n1");
  EXPECT_EQ(pods["other-scheduler"]->spec.node_name, "n2");  // no profile of the published configuration
  EXPECT_EQ(pods["late"]->spec.node_name, "");
  EXPECT_EQ(pods["late"]->spec.priority, 1000);

  // Arrivals: whole seconds after the first pod; the annotation the pod had is replaced, the
  // other simulate.kubesched.io ones kept, the scheduler's results dropped.
  EXPECT_EQ(text.find("create-after: 0s"), std::string::npos);
  EXPECT_NE(text.find("simulate.kubesched.io/create-after: 3s"), std::string::npos);
  EXPECT_NE(text.find("simulate.kubesched.io/create-after: 5s"), std::string::npos);
  EXPECT_EQ(text.find("99s"), std::string::npos);
  EXPECT_NE(text.find("simulate.kubesched.io/delete-after: 1m"), std::string::npos);
  EXPECT_EQ(text.find("plugin-results"), std::string::npos);
  for (std::string_view server_set : {"uid:", "resourceVersion:", "creationTimestamp:", "managedFields:",
                                      "controller-uid", "kube-system", "system-node-critical", "kube-public"}) {
    EXPECT_EQ(text.find(server_set), std::string::npos) << server_set;
  }
  // In order: namespaces, priority classes, nodes, workloads, pods by creation, the configuration.
  std::vector<size_t> at;
  for (std::string_view s : {"kind: Namespace", "kind: PriorityClass", "name: n1", "kind: Deployment", "kind: Job",
                             "name: placed", "name: pinned", "name: late", "kind: KubeSchedulerConfiguration"}) {
    at.push_back(text.find(s));
    EXPECT_NE(at.back(), std::string::npos) << s;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
}

TEST_F(ScenarioTest, WithoutAPublishedConfigurationDefaultSchedulerPlacedThePods) {
  Apply(kCluster);
  Apply(Pod("placed", "1"));
  Schedule("placed", "n1");
  const std::string text = BuildScenario(*store_);
  EXPECT_EQ(text.find("nodeName:"), std::string::npos) << text;
  EXPECT_EQ(text.find("KubeSchedulerConfiguration"), std::string::npos) << text;
  auto loaded = api::LoadManifestsFromString(text, "scenario.yaml", api::LoadOptions{});
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_TRUE(loaded->scheduler_configurations.empty());
}

// Volumes and device claims travel with the scenario without the binding the controllers made
// (simulate binds and allocates again); what a provisioner or a pod's template made is left out
// (simulate makes it again).
constexpr std::string_view kVolumesAndDevices = R"(apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: static
  annotations: {pv.kubernetes.io/bound-by-controller: "yes"}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  claimRef: {namespace: default, name: data, uid: "0f00", resourceVersion: "7"}
  local: {path: /mnt/a}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pvc-made
  annotations: {pv.kubernetes.io/provisioned-by: csi.example.com}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: csi.example.com, volumeHandle: h1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations:
    pv.kubernetes.io/bind-completed: "yes"
    pv.kubernetes.io/bound-by-controller: "yes"
    volume.kubernetes.io/selected-node: n1
    team: storage
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  volumeName: static
  resources: {requests: {storage: 1Gi}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: gpu}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: trainer-g
  ownerReferences: [{apiVersion: v1, kind: Pod, name: trainer, uid: "0e00", controller: true}]
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: gpu}}]
)";

TEST_F(ScenarioTest, VolumesAndClaimsTravelUnbound) {
  Apply(kCluster);
  Apply(kVolumesAndDevices);
  const std::string text = BuildScenario(*store_);
  SCOPED_TRACE(text);
  for (std::string_view s : {"kind: StorageClass", "name: static", "kind: PersistentVolumeClaim", "team: storage",
                             "kind: DeviceClass", "kind: ResourceSlice", "name: shared"}) {
    EXPECT_NE(text.find(s), std::string::npos) << s;
  }
  for (std::string_view s : {"claimRef", "volumeName", "bind-completed", "bound-by-controller", "selected-node",
                             "name: pvc-made", "name: trainer-g"}) {
    EXPECT_EQ(text.find(s), std::string::npos) << s;
  }
  // Classes and nodes before what names them.
  EXPECT_LT(text.find("kind: StorageClass"), text.find("kind: PersistentVolume\n"));
  EXPECT_LT(text.find("kind: Node\n"), text.find("kind: ResourceSlice"));
  auto loaded = api::LoadManifestsFromString(text, "scenario.yaml", api::LoadOptions{});  // strict by default
  ASSERT_TRUE(loaded) << loaded.error().ToString();
}

TEST_F(ScenarioTest, ApplyingAScenarioSkipsItsConfiguration) {
  HttpResponse r =
      Call("POST", "/ui/apply",
           Pod("a", "1") + "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n");
  ASSERT_EQ(r.status, 200) << r.body;
  json::Document doc;
  ASSERT_TRUE(json::Parse(r.body, doc));
  const json::Value* skipped = json::Find(doc, "skipped");
  ASSERT_TRUE(skipped != nullptr && skipped->IsArray() && skipped->Size() == 1) << r.body;
  EXPECT_EQ(json::GetString((*skipped)[0], "kind"), "KubeSchedulerConfiguration");
  EXPECT_NE(json::GetString((*skipped)[0], "reason").find("not applied"), std::string_view::npos);
  EXPECT_EQ(json::Find(doc, "created")->Size(), 1u);

  // A configuration alone creates nothing, and says so.
  r = Call("POST", "/ui/apply", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"skipped\""), std::string::npos) << r.body;
}

TEST(YamlDocumentTest, StringsReadBackAsTheSameStrings) {
  const std::vector<std::string> strings = {
      "plain", "1",     "1.10",   "0644", "true", "yes",         "Off",       "y",   "~",    "null",
      "",      " lead", "trail ", "a: b", "a #b", "#x",          "- x",       "-x",  "key:", "http://x:80/p",
      "[x]",   "{x}",   "a,b",    "'q'",  "\"dq", "multi\nline", "tab\there", "é",   "*ref", "&a",
      "!t",    "%x",    "@x",     "`x",   "? x",  "|",           ">",         "1e3", "0x10", "1_000",
      ".inf",  "<<",    "=",      "100m", "2Gi"};
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const std::string& s : strings) list.PushBack(json::MakeString(s, a), a);
  json::Set(doc, "list", std::move(list), a);
  json::Value map(rapidjson::kObjectType);
  for (const std::string& s : strings) json::Set(map, s.empty() ? "empty" : s, json::MakeString(s, a), a);
  json::Set(doc, "map", std::move(map), a);
  json::Set(doc, "number", json::Value(2.5), a);
  json::Set(doc, "empty", json::Value(rapidjson::kObjectType), a);
  const std::string text = YamlDocument(doc);
  ASSERT_TRUE(text.starts_with("---\n")) << text;
  json::Document back;
  ASSERT_TRUE(api::yaml::Parse(text, back)) << text;
  EXPECT_EQ(json::Encode(back), json::Encode(doc)) << text;
  EXPECT_NE(text.find("list:\n- plain\n"), std::string::npos) << text;  // block style, plain where it can be
}

}  // namespace
}  // namespace kubesched::server
