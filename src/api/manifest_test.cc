#include "api/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/schema.h"
#include "api/workloads.h"

namespace kubesched::api {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

ClusterObjects MustLoad(std::string_view text, const LoadOptions& options = {}) {
  auto r = LoadManifestsFromString(text, "test.yaml", options);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().ToString());
  return r ? *r : ClusterObjects{};
}

std::string LoadErrorOf(std::string_view text, const LoadOptions& options = {}) {
  auto r = LoadManifestsFromString(text, "test.yaml", options);
  if (r) return "<loaded without error>";
  return r.error().ToString();
}

const Pod& OnlyPod(const ClusterObjects& objs) {
  EXPECT_EQ(objs.pods.size(), 1u);
  static const Pod kEmpty;
  return objs.pods.empty() ? kEmpty : *objs.pods.front();
}

// ---------------------------------------------------------------------------------------------
// Nodes

TEST(ManifestTest, NodeFieldsAndDefaults) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels:
    topology.kubernetes.io/zone: zone-a
  annotations: {note: hello}
spec:
  unschedulable: true
  taints:
  - {key: dedicated, value: gpu, effect: NoSchedule}
  - {key: flaky, effect: NoExecute}
status:
  capacity:
    cpu: "4"
    memory: 16Gi
    nvidia.com/gpu: 2
  images:
  - names: [nginx:1.25, docker.io/library/nginx:1.25]
    sizeBytes: 70000000
  conditions:
  - {type: Ready, status: "True"}
)");
  ASSERT_EQ(objs.nodes.size(), 1u);
  const Node& n = *objs.nodes[0];
  EXPECT_EQ(n.metadata.name, "node-1");
  EXPECT_TRUE(n.metadata.namespace_.empty());
  // The kubelet's hostname label.
  ASSERT_NE(n.metadata.labels.Find(kLabelHostname), nullptr);
  EXPECT_EQ(*n.metadata.labels.Find(kLabelHostname), "node-1");
  EXPECT_EQ(*n.metadata.labels.Find(kLabelTopologyZone), "zone-a");
  EXPECT_EQ(*n.metadata.annotations.Find("note"), "hello");
  EXPECT_TRUE(n.spec.unschedulable);
  EXPECT_THAT(n.spec.taints, ElementsAre(Taint{"dedicated", "gpu", TaintEffect::kNoSchedule},
                                         Taint{"flaky", "", TaintEffect::kNoExecute}));
  EXPECT_EQ(n.status.capacity.at("cpu").MilliValue(), 4000);
  EXPECT_EQ(n.status.capacity.at("memory").Value(), 16LL << 30);
  EXPECT_EQ(n.status.capacity.at("nvidia.com/gpu").Value(), 2);
  // pods defaults to the kubelet's maxPods; allocatable defaults to capacity.
  EXPECT_EQ(n.status.capacity.at("pods").Value(), kDefaultMaxPods);
  ASSERT_EQ(n.status.allocatable.size(), n.status.capacity.size());
  EXPECT_EQ(n.status.allocatable.at("memory").Value(), 16LL << 30);
  EXPECT_EQ(n.status.allocatable.at("pods").Value(), kDefaultMaxPods);
  ASSERT_EQ(n.status.images.size(), 1u);
  EXPECT_THAT(n.status.images[0].names, ElementsAre("nginx:1.25", "docker.io/library/nginx:1.25"));
  EXPECT_EQ(n.status.images[0].size_bytes, 70000000);
  ASSERT_EQ(n.status.conditions.size(), 1u);
  EXPECT_EQ(n.status.conditions[0].type, "Ready");
  EXPECT_EQ(n.status.conditions[0].status, "True");
  EXPECT_FALSE(n.metadata.uid.empty());
}

TEST(ManifestTest, NodeKeepsExplicitAllocatableAndHostnameLabel) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: custom}
status:
  capacity: {cpu: 4, memory: 8Gi, pods: 50}
  allocatable: {cpu: 3500m, memory: 7Gi}
)");
  ASSERT_EQ(objs.nodes.size(), 1u);
  const Node& n = *objs.nodes[0];
  EXPECT_EQ(*n.metadata.labels.Find(kLabelHostname), "custom");
  EXPECT_EQ(n.status.allocatable.at("cpu").MilliValue(), 3500);
  EXPECT_EQ(n.status.allocatable.at("memory").Value(), 7LL << 30);
  EXPECT_EQ(n.status.allocatable.at("pods").Value(), 50);  // taken from capacity
  EXPECT_EQ(n.status.capacity.at("pods").Value(), 50);
}

// ---------------------------------------------------------------------------------------------
// Pods

constexpr std::string_view kFullPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: "1234"
  labels: {app: web, tier: frontend}
  annotations: {a: b}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-rs, uid: rs-uid, controller: true}
spec:
  nodeName: ""
  nodeSelector: {disktype: ssd}
  schedulerName: my-scheduler
  priority: 7
  preemptionPolicy: Never
  schedulingGates: [{name: wait-for-quota}]
  hostNetwork: false
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [b, a, a]}
          - {key: cores, operator: Gt, values: ["8"]}
          - {key: mem, operator: Lt, values: ["64"]}
          - {key: gpu, operator: Exists}
          - {key: spot, operator: DoesNotExist}
          - {key: arch, operator: NotIn, values: [arm]}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [bad-node]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions: [{key: zone, operator: In, values: [a]}]
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: cache}}
        namespaces: [shop, infra]
        topologyKey: topology.kubernetes.io/zone
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          labelSelector:
            matchExpressions: [{key: app, operator: In, values: [db]}]
          namespaceSelector: {matchLabels: {team: data}}
          topologyKey: kubernetes.io/hostname
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
        matchLabelKeys: [tier]
        mismatchLabelKeys: [missing-label]
  tolerations:
  - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {operator: Exists}
  initContainers:
  - name: init
    image: busybox
    resources: {requests: {cpu: 500m}}
  - name: sidecar
    image: envoy
    restartPolicy: Always
    resources: {requests: {memory: 64Mi}}
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 250m, memory: 64Mi}
      limits: {cpu: 500m, memory: 128Mi, ephemeral-storage: 1Gi}
    ports:
    - {name: http, containerPort: 80, hostPort: 8080, protocol: UDP, hostIP: 10.0.0.1}
    - {containerPort: 443}
  overhead: {cpu: 100m}
  topologySpreadConstraints:
  - maxSkew: 2
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    minDomains: 3
    nodeAffinityPolicy: Ignore
    nodeTaintsPolicy: Honor
    matchLabelKeys: [tier]
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
status:
  phase: Running
  nominatedNodeName: node-9
  startTime: "2024-05-01T12:00:00.5Z"
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: no fit}]
)";

TEST(ManifestTest, PodReadsEveryField) {
  auto objs = MustLoad(kFullPod);
  const Pod& p = OnlyPod(objs);
  EXPECT_EQ(p.Key(), "shop/web");
  EXPECT_EQ(p.metadata.uid, "1234");
  EXPECT_EQ(p.metadata.labels, (Labels{{"app", "web"}, {"tier", "frontend"}}));
  EXPECT_EQ(*p.metadata.annotations.Find("a"), "b");
  EXPECT_THAT(p.metadata.owner_references,
              ElementsAre(OwnerReference{"apps/v1", "ReplicaSet", "web-rs", "rs-uid", true}));

  const PodSpec& s = p.spec;
  EXPECT_EQ(s.node_name, "");
  EXPECT_EQ(s.node_selector, (Labels{{"disktype", "ssd"}}));
  EXPECT_EQ(s.scheduler_name, "my-scheduler");
  EXPECT_EQ(s.priority, 7);
  EXPECT_EQ(s.preemption_policy, PreemptionPolicy::kNever);
  EXPECT_THAT(s.scheduling_gates, ElementsAre("wait-for-quota"));
  EXPECT_FALSE(s.host_network);

  ASSERT_TRUE(s.affinity.has_value());
  ASSERT_TRUE(s.affinity->node_affinity.has_value());
  const auto& na = *s.affinity->node_affinity;
  ASSERT_TRUE(na.required.has_value());
  ASSERT_EQ(na.required->terms.size(), 1u);
  const auto& term = na.required->terms[0];
  ASSERT_EQ(term.match_expressions.size(), 6u);
  // Values are sorted and de-duplicated.
  EXPECT_EQ(term.match_expressions[0], (SelectorRequirement{"zone", SelectorOperator::kIn, {"a", "b"}}));
  EXPECT_EQ(term.match_expressions[1], (SelectorRequirement{"cores", SelectorOperator::kGt, {"8"}}));
  EXPECT_EQ(term.match_expressions[2], (SelectorRequirement{"mem", SelectorOperator::kLt, {"64"}}));
  EXPECT_EQ(term.match_expressions[3], (SelectorRequirement{"gpu", SelectorOperator::kExists, {}}));
  EXPECT_EQ(term.match_expressions[4], (SelectorRequirement{"spot", SelectorOperator::kDoesNotExist, {}}));
  EXPECT_EQ(term.match_expressions[5], (SelectorRequirement{"arch", SelectorOperator::kNotIn, {"arm"}}));
  EXPECT_THAT(term.match_fields,
              ElementsAre(SelectorRequirement{"metadata.name", SelectorOperator::kNotIn, {"bad-node"}}));
  ASSERT_EQ(na.preferred.size(), 1u);
  EXPECT_EQ(na.preferred[0].weight, 10);
  EXPECT_EQ(na.preferred[0].preference.match_expressions[0].key, "zone");

  ASSERT_TRUE(s.affinity->pod_affinity.has_value());
  const auto& pa = *s.affinity->pod_affinity;
  ASSERT_EQ(pa.required.size(), 1u);
  EXPECT_EQ(pa.required[0].label_selector->match_labels, (Labels{{"app", "cache"}}));
  EXPECT_THAT(pa.required[0].namespaces, ElementsAre("shop", "infra"));
  EXPECT_FALSE(pa.required[0].namespace_selector.has_value());
  EXPECT_EQ(pa.required[0].topology_key, "topology.kubernetes.io/zone");
  ASSERT_EQ(pa.preferred.size(), 1u);
  EXPECT_EQ(pa.preferred[0].weight, 50);
  EXPECT_EQ(pa.preferred[0].term.label_selector->match_expressions[0],
            (SelectorRequirement{"app", SelectorOperator::kIn, {"db"}}));
  EXPECT_EQ(pa.preferred[0].term.namespace_selector->match_labels, (Labels{{"team", "data"}}));

  ASSERT_TRUE(s.affinity->pod_anti_affinity.has_value());
  const auto& anti = s.affinity->pod_anti_affinity->required.at(0);
  EXPECT_THAT(anti.match_label_keys, ElementsAre("tier"));
  EXPECT_THAT(anti.mismatch_label_keys, ElementsAre("missing-label"));
  // The API server merges matchLabelKeys into the selector at creation; absent labels add nothing.
  EXPECT_THAT(anti.label_selector->match_expressions,
              ElementsAre(SelectorRequirement{"tier", SelectorOperator::kIn, {"frontend"}}));

  ASSERT_EQ(s.tolerations.size(), 3u);
  EXPECT_EQ(s.tolerations[0],
            (Toleration{"dedicated", TolerationOperator::kEqual, "web", TaintEffect::kNoSchedule, std::nullopt}));
  EXPECT_EQ(s.tolerations[1], (Toleration{"node.kubernetes.io/unreachable", TolerationOperator::kExists, "",
                                          TaintEffect::kNoExecute, 300}));
  EXPECT_EQ(s.tolerations[2], (Toleration{"", TolerationOperator::kExists, "", std::nullopt, std::nullopt}));

  ASSERT_EQ(s.init_containers.size(), 2u);
  EXPECT_EQ(s.init_containers[0].name, "init");
  EXPECT_FALSE(s.init_containers[0].restart_policy.has_value());
  EXPECT_EQ(s.init_containers[1].restart_policy, "Always");
  EXPECT_EQ(s.init_containers[1].resources.requests.at("memory").Value(), 64LL << 20);

  ASSERT_EQ(s.containers.size(), 1u);
  const Container& c = s.containers[0];
  EXPECT_EQ(c.name, "app");
  EXPECT_EQ(c.image, "nginx");
  EXPECT_EQ(c.resources.requests.at("cpu").MilliValue(), 250);
  EXPECT_EQ(c.resources.limits.at("cpu").MilliValue(), 500);
  // Requests default to limits for resources with only a limit.
  EXPECT_EQ(c.resources.requests.at("ephemeral-storage").Value(), 1LL << 30);
  EXPECT_THAT(c.ports,
              ElementsAre(ContainerPort{"http", 80, 8080, "UDP", "10.0.0.1"}, ContainerPort{"", 443, 0, "TCP", ""}));
  EXPECT_EQ(s.overhead.at("cpu").MilliValue(), 100);

  ASSERT_EQ(s.topology_spread_constraints.size(), 2u);
  const auto& tsc = s.topology_spread_constraints[0];
  EXPECT_EQ(tsc.max_skew, 2);
  EXPECT_EQ(tsc.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(tsc.when_unsatisfiable, UnsatisfiableConstraintAction::kDoNotSchedule);
  EXPECT_EQ(tsc.min_domains, 3);
  EXPECT_EQ(tsc.node_affinity_policy, NodeInclusionPolicy::kIgnore);
  EXPECT_EQ(tsc.node_taints_policy, NodeInclusionPolicy::kHonor);
  EXPECT_THAT(tsc.match_label_keys, ElementsAre("tier"));
  EXPECT_EQ(tsc.label_selector->match_labels, (Labels{{"app", "web"}}));
  EXPECT_THAT(tsc.label_selector->match_expressions,
              ElementsAre(SelectorRequirement{"tier", SelectorOperator::kIn, {"frontend"}}));
  const auto& tsc2 = s.topology_spread_constraints[1];
  EXPECT_EQ(tsc2.when_unsatisfiable, UnsatisfiableConstraintAction::kScheduleAnyway);
  EXPECT_FALSE(tsc2.label_selector.has_value());
  EXPECT_FALSE(tsc2.min_domains.has_value());
  EXPECT_FALSE(tsc2.node_affinity_policy.has_value());

  EXPECT_EQ(p.status.phase, PodPhase::kRunning);
  EXPECT_EQ(p.status.nominated_node_name, "node-9");
  EXPECT_EQ(p.status.start_time_ns, 1714564800'500000000LL);
  ASSERT_EQ(p.status.conditions.size(), 1u);
  EXPECT_EQ(p.status.conditions[0].reason, "Unschedulable");
  EXPECT_EQ(p.status.conditions[0].message, "no fit");

  // An implicit Namespace for "shop", labelled with its name.
  ASSERT_EQ(objs.namespaces.size(), 1u);
  EXPECT_EQ(objs.namespaces[0]->metadata.name, "shop");
  EXPECT_EQ(*objs.namespaces[0]->metadata.labels.Find(kLabelMetadataName), "shop");
}

TEST(ManifestTest, PodDefaults) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  hostNetwork: true
  containers:
  - name: c
    resources:
      limits: {cpu: "1", memory: 1Gi}
      requests: {memory: 512Mi}
    ports: [{containerPort: 9090}]
)");
  const Pod& p = OnlyPod(objs);
  EXPECT_EQ(p.metadata.namespace_, "default");
  EXPECT_EQ(p.spec.scheduler_name, "default-scheduler");
  EXPECT_EQ(p.spec.priority, 0);
  EXPECT_EQ(p.spec.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(p.status.phase, PodPhase::kPending);
  EXPECT_FALSE(p.status.start_time_ns.has_value());
  EXPECT_FALSE(p.spec.affinity.has_value());
  const Container& c = p.spec.containers.at(0);
  EXPECT_EQ(c.resources.requests.at("cpu").MilliValue(), 1000);       // from the limit
  EXPECT_EQ(c.resources.requests.at("memory").Value(), 512LL << 20);  // explicit request kept
  // Host-network pods use their container ports on the host.
  EXPECT_THAT(c.ports, ElementsAre(ContainerPort{"", 9090, 9090, "TCP", ""}));
  EXPECT_EQ(p.metadata.uid, GenerateUID("Pod", "default", "p"));
}

TEST(ManifestTest, UIDsAreDeterministicAndDistinct) {
  constexpr std::string_view kTwo = R"(
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {containers: [{name: c}]}
)";
  auto first = MustLoad(kTwo);
  auto second = MustLoad(kTwo);
  ASSERT_EQ(first.pods.size(), 2u);
  EXPECT_EQ(first.pods[0]->metadata.uid, second.pods[0]->metadata.uid);
  EXPECT_NE(first.pods[0]->metadata.uid, first.pods[1]->metadata.uid);
  EXPECT_EQ(first.pods[0]->metadata.uid.size(), 36u);
}

TEST(ManifestTest, GenerateNameIsDeterministicPerSeed) {
  constexpr std::string_view kText = R"(
apiVersion: v1
kind: Pod
metadata: {generateName: worker-}
spec: {containers: [{name: c}]}
)";
  auto a = MustLoad(kText);
  auto b = MustLoad(kText);
  auto c = MustLoad(kText, LoadOptions{.seed = 2});
  const std::string name = OnlyPod(a).metadata.name;
  EXPECT_EQ(name.size(), std::string("worker-").size() + 5);
  EXPECT_TRUE(name.starts_with("worker-"));
  EXPECT_EQ(name, OnlyPod(b).metadata.name);
  EXPECT_NE(name, OnlyPod(c).metadata.name);
  EXPECT_EQ(OnlyPod(a).metadata.generate_name, "worker-");
}

// ---------------------------------------------------------------------------------------------
// Formats: multi-document, JSON, List.

TEST(ManifestTest, MultiDocumentKeepsOrderAndSkipsEmptyDocuments) {
  auto objs = MustLoad(R"(# leading comment
---
apiVersion: v1
kind: Pod
metadata: {name: first}
spec: {containers: [{name: c}]}
---
# only a comment
---
---
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {env: prod}}
---
apiVersion: v1
kind: Pod
metadata: {name: second, namespace: team}
spec: {containers: [{name: c}]}
...
)",
                       LoadOptions{.creation_timestamp_ns = 42});
  ASSERT_EQ(objs.pods.size(), 2u);
  EXPECT_EQ(objs.pods[0]->metadata.name, "first");
  EXPECT_EQ(objs.pods[1]->metadata.name, "second");
  // Creation order follows the documents, whatever the kind.
  EXPECT_EQ(objs.pods[0]->metadata.creation_index, 0);
  ASSERT_EQ(objs.namespaces.size(), 2u);
  EXPECT_EQ(objs.namespaces[0]->metadata.name, "team");
  EXPECT_EQ(objs.namespaces[0]->metadata.creation_index, 1);
  EXPECT_EQ(objs.pods[1]->metadata.creation_index, 2);
  EXPECT_EQ(objs.pods[1]->metadata.creation_timestamp_ns, 42);
  EXPECT_EQ(objs.namespaces[0]->metadata.labels, (Labels{{"env", "prod"}, {"kubernetes.io/metadata.name", "team"}}));
  // "default" was used but not declared.
  EXPECT_EQ(objs.namespaces[1]->metadata.name, "default");
  EXPECT_EQ(objs.namespaces[1]->metadata.creation_index, 3);
}

TEST(ManifestTest, EmptyInputLoadsNothing) {
  for (std::string_view text : {"", "\n", "---\n", "# nothing\n---\n---\n", "null\n"}) {
    SCOPED_TRACE(std::string(text));
    auto objs = MustLoad(text);
    EXPECT_TRUE(objs.pods.empty());
    EXPECT_TRUE(objs.nodes.empty());
    EXPECT_TRUE(objs.namespaces.empty());
  }
}

TEST(ManifestTest, JsonAndList) {
  auto objs = MustLoad(R"({
	"apiVersion": "v1",
	"kind": "List",
	"items": [
		{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
		 "status": {"capacity": {"cpu": "8", "memory": "32Gi"}}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "ns1"},
		 "spec": {"priority": 5, "containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5}}}]}}
	]
})");
  ASSERT_EQ(objs.nodes.size(), 1u);
  EXPECT_EQ(objs.nodes[0]->status.capacity.at("cpu").Value(), 8);
  const Pod& p = OnlyPod(objs);
  EXPECT_EQ(p.Key(), "ns1/p1");
  EXPECT_EQ(p.Priority(), 5);
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("cpu").MilliValue(), 500);
}

TEST(ManifestTest, TypedListKinds) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: NodeList
items:
- {apiVersion: v1, kind: Node, metadata: {name: a}}
- {apiVersion: v1, kind: Node, metadata: {name: b}}
)");
  ASSERT_EQ(objs.nodes.size(), 2u);
  EXPECT_EQ(objs.nodes[1]->metadata.name, "b");
}

TEST(ManifestTest, LoadManifestsReadsFilesInOrder) {
  const auto dir = std::filesystem::temp_directory_path() / ("ks_manifest_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto a = (dir / "a.yaml").string();
  const auto b = (dir / "b.json").string();
  std::ofstream(a) << "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
  std::ofstream(b) << R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}})";
  auto r = LoadManifests({a, b});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->nodes.size(), 2u);
  EXPECT_EQ(r->nodes[0]->metadata.name, "n1");
  EXPECT_EQ(r->nodes[1]->metadata.name, "n2");

  auto dup = LoadManifests({a, a});
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().ToString(),
            a + ": document 1 (Node n1): metadata.name: duplicate Node \"n1\" (first defined in " + a +
                " document 1) (line 1)");

  auto missing = LoadManifests({(dir / "missing.yaml").string()});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().document, 0);
  EXPECT_THAT(missing.error().ToString(), HasSubstr("missing.yaml: cannot open file: No such file or directory"));
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Priorities

TEST(ManifestTest, PriorityResolution) {
  auto objs = MustLoad(R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: default-prio}
value: 10
globalDefault: true
---
apiVersion: v1
kind: Pod
metadata: {name: from-class}
spec: {priorityClassName: high, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: own-policy}
spec: {priorityClassName: high, preemptionPolicy: PreemptLowerPriority, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: global-default}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: builtin}
spec: {priorityClassName: system-node-critical, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: explicit}
spec: {priority: 3, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: restated}
spec: {priority: 1000, priorityClassName: high, containers: [{name: c}]}
)");
  ASSERT_EQ(objs.pods.size(), 6u);
  ASSERT_EQ(objs.priority_classes.size(), 2u);
  EXPECT_EQ(objs.priority_classes[1]->value, 10);
  EXPECT_TRUE(objs.priority_classes[1]->global_default);
  EXPECT_EQ(objs.priority_classes[1]->preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(objs.pods[0]->Priority(), 1000);
  EXPECT_EQ(objs.pods[0]->spec.preemption_policy, PreemptionPolicy::kNever);  // copied from the class
  EXPECT_EQ(objs.pods[1]->Priority(), 1000);
  EXPECT_EQ(objs.pods[1]->spec.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(objs.pods[2]->Priority(), 10);
  EXPECT_EQ(objs.pods[3]->Priority(), kSystemNodeCriticalPriority);
  EXPECT_EQ(objs.pods[4]->Priority(), 3);
  EXPECT_EQ(objs.pods[4]->spec.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(objs.pods[5]->Priority(), 1000);

  auto builtin = MustLoad(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: kube-system}
spec: {priorityClassName: system-cluster-critical, containers: [{name: c}]}
)");
  EXPECT_EQ(OnlyPod(builtin).Priority(), kSystemClusterCriticalPriority);
}

TEST(ManifestTest, WorkloadTemplatesGetPriorities) {
  auto objs = MustLoad(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {priorityClassName: batch, containers: [{name: c}]}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 50
)");
  ASSERT_EQ(objs.pods.size(), 2u);
  EXPECT_EQ(objs.pods[0]->Priority(), 50);
  EXPECT_EQ(objs.workloads.at(0)->template_.spec.priority, 50);
}

// ---------------------------------------------------------------------------------------------
// Workloads through the loader

// As the API server refuses them: a Job's pods must be OnFailure or Never (the template's
// restartPolicy defaults to Always), a CronJob's job template's too.
TEST(ManifestTest, JobPodsMustNotRestartInPlace) {
  const std::string job = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers: [{name: c, image: x}]
)";
  EXPECT_EQ(LoadErrorOf(job),
            "test.yaml: document 1 (Job default/j): spec.template.spec.restartPolicy: unsupported value \"Always\"; "
            "supported values: \"OnFailure\", \"Never\" (line 7)");
  EXPECT_THAT(LoadErrorOf(job + "      restartPolicy: Always\n"), HasSubstr("unsupported value \"Always\""));
  EXPECT_EQ(MustLoad(job + "      restartPolicy: OnFailure\n").pods.size(), 1u);
  EXPECT_EQ(MustLoad(job + "      restartPolicy: Never\n").pods.size(), 1u);
}

TEST(ManifestTest, WorkloadPodsSitAtTheirDocumentPosition) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Pod
metadata: {name: before}
spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: data}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 3
  completions: 2
  template:
    spec: {restartPolicy: Never, containers: [{name: c}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: after}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
)");
  std::vector<std::string> names;
  for (const auto& p : objs.pods) names.push_back(p->metadata.name);
  ASSERT_EQ(names.size(), 7u);
  EXPECT_EQ(names[0], "before");
  EXPECT_EQ(names[1], "db-0");
  EXPECT_EQ(names[2], "db-1");
  EXPECT_TRUE(names[3].starts_with("batch-"));
  EXPECT_TRUE(names[4].starts_with("batch-"));
  EXPECT_TRUE(names[5].starts_with("agent-"));  // nodes declared later still count
  EXPECT_EQ(names[6], "after");
  for (size_t i = 1; i < objs.pods.size(); ++i) {
    EXPECT_LT(objs.pods[i - 1]->metadata.creation_index, objs.pods[i]->metadata.creation_index);
  }
  EXPECT_EQ(objs.pods[1]->metadata.namespace_, "data");
  ASSERT_EQ(objs.workloads.size(), 3u);
  // The Job got its controller labels and a uid selector.
  const Workload& job = *objs.workloads[1];
  EXPECT_EQ(job.kind, "Job");
  EXPECT_EQ(job.replicas, 3);
  EXPECT_EQ(job.completions, 2);
  ASSERT_TRUE(job.selector.has_value());
  EXPECT_EQ(*job.selector->match_labels.Find(kLabelBatchControllerUID), job.metadata.uid);
  EXPECT_TRUE(job.selector->Matches(objs.pods[3]->metadata.labels));

  auto unexpanded = MustLoad(R"(
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 4
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: c}]}
)",
                             LoadOptions{.expand_workloads = false});
  EXPECT_TRUE(unexpanded.pods.empty());
  ASSERT_EQ(unexpanded.workloads.size(), 1u);
  EXPECT_EQ(unexpanded.workloads[0]->replicas, 4);
}

TEST(ManifestTest, PodDisruptionBudget) {
  auto objs = MustLoad(R"(
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: a}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: b, namespace: x}
spec:
  maxUnavailable: 25%
)");
  ASSERT_EQ(objs.pdbs.size(), 2u);
  EXPECT_EQ(objs.pdbs[0]->min_available, "2");
  EXPECT_FALSE(objs.pdbs[0]->max_unavailable.has_value());
  EXPECT_EQ(objs.pdbs[0]->selector->match_labels, (Labels{{"app", "web"}}));
  EXPECT_EQ(objs.pdbs[1]->max_unavailable, "25%");
  EXPECT_FALSE(objs.pdbs[1]->selector.has_value());
  EXPECT_EQ(objs.pdbs[1]->metadata.namespace_, "x");
}

TEST(ManifestTest, MaxPodsGuardsAgainstHugeReplicaCounts) {
  const std::string err = LoadErrorOf(R"(
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 2000000000
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: c}]}
)",
                                      LoadOptions{.max_pods = 100});
  EXPECT_EQ(err,
            "test.yaml: document 1 (ReplicaSet default/rs): spec.replicas: 2000000000 pods would make more than 100 "
            "pods in total (LoadOptions.max_pods) (line 2)");
}

// ---------------------------------------------------------------------------------------------
// Errors: each names the file, document, object and field.

struct ErrorCase {
  std::string name;
  std::string yaml;
  std::string want;  // the whole LoadError::ToString()
};

constexpr std::string_view kPodHeader = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n";

std::string PodWith(std::string_view spec_yaml) { return std::string(kPodHeader) + std::string(spec_yaml); }

TEST(ManifestTest, ErrorsNameTheFileDocumentObjectAndField) {
  const std::vector<ErrorCase> cases = {
      {"invalid quantity in the third document",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
       "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: c\n    resources:\n"
       "      requests:\n        cpu: abc\n",
       "test.yaml: document 3 (Pod default/web): spec.containers[0].resources.requests.cpu: invalid quantity \"abc\": "
       "expected a number such as 500m, 2, 1.5Gi or 1e3 (line 17)"},
      {"bad suffix", PodWith("spec:\n  containers: [{name: c, resources: {limits: {memory: 1KiB}}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].resources.limits.memory: invalid quantity "
       "\"1KiB\": "
       "unknown suffix \"KiB\"; use one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3 "
       "(no space before it) (line 5)"},
      {"extended resource names are bracketed",
       PodWith("spec:\n  containers: [{name: c, resources: {requests: {nvidia.com/gpu: x}}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].resources.requests[nvidia.com/gpu]: invalid "
       "quantity \"x\": expected a number such as 500m, 2, 1.5Gi or 1e3 (line 5)"},
      {"negative quantity", PodWith("spec:\n  containers: [{name: c, resources: {requests: {cpu: -1}}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].resources.requests.cpu: must be greater than or "
       "equal to 0, got \"-1\" (line 5)"},
      {"request above limit",
       PodWith("spec:\n  containers: [{name: c, resources: {requests: {cpu: 2}, limits: {cpu: 1}}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].resources.requests.cpu: request \"2\" must be less "
       "than or equal to the limit \"1\" (line 5)"},
      {"a kind the core group does not serve", "apiVersion: v1\nkind: Gadget\nmetadata: {name: g}\n",
       "test.yaml: document 1 (Gadget g): kind: no kind \"Gadget\" is served by apiVersion \"v1\" (line 2)"},
      {"a typo in a kind", "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: web}\n",
       "test.yaml: document 1 (Deploymnet web): kind: no kind \"Deploymnet\" is served by apiVersion \"apps/v1\" "
       "(did you mean \"Deployment\"?) (line 2)"},
      {"apiVersion without a version", "apiVersion: apps/\nkind: Deployment\nmetadata: {name: web}\n",
       "test.yaml: document 1 (Deployment default/web): apiVersion: invalid apiVersion \"apps/\"; expected "
       "\"version\" or \"group/version\", such as \"apps/v1\" (line 1)"},
      {"missing kind", "apiVersion: v1\nmetadata: {name: s}\n",
       "test.yaml: document 1: kind: required field is missing or empty (line 1)"},
      {"wrong apiVersion", "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Pod default/web): apiVersion: apiVersion \"apps/v1\" does not serve kind Pod; use "
       "\"v1\" "
       "(line 1)"},
      {"a removed beta version", "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n",
       "test.yaml: document 1 (CronJob default/c): apiVersion: no matches for kind \"CronJob\" in version "
       "\"batch/v1beta1\" (Kubernetes no longer serves it); use \"batch/v1\" (line 1)"},
      {"apps/v1beta2", "apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata: {name: s}\n",
       "test.yaml: document 1 (StatefulSet default/s): apiVersion: no matches for kind \"StatefulSet\" in version "
       "\"apps/v1beta2\" (Kubernetes no longer serves it); use \"apps/v1\" (line 1)"},
      {"missing apiVersion", "kind: Node\nmetadata: {name: n}\n",
       "test.yaml: document 1 (Node n): apiVersion: required field is missing or empty (line 1)"},
      {"missing name", "apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\nspec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Pod): metadata.name: required field is missing (set name or generateName) (line 3)"},
      {"not a mapping", "- a\n- b\n",
       "test.yaml: document 1: expected an object with apiVersion and kind, got a list (line 1)"},
      {"scalar document", "hello\n",
       "test.yaml: document 1: expected an object with apiVersion and kind, got \"hello\" (line 1)"},
      {"metadata not a mapping", "apiVersion: v1\nkind: Node\nmetadata: n1\n",
       "test.yaml: document 1 (Node): metadata: expected a mapping of fields, got \"n1\" (line 3)"},
      {"containers not a list", PodWith("spec:\n  containers: {name: c}\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers: expected a list, got a mapping (line 5)"},
      {"no containers", PodWith("spec: {nodeName: n1}\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers: must have at least one container (line 4)"},
      {"no spec", std::string(kPodHeader),
       "test.yaml: document 1 (Pod default/web): spec: required field is missing (line 1)"},
      {"container without name", PodWith("spec:\n  containers: [{image: nginx}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].name: required field is missing or empty (line 5)"},
      {"duplicate container name", PodWith("spec:\n  initContainers: [{name: c}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].name: duplicate container name \"c\" (line 6)"},
      {"int field not an int", PodWith("spec:\n  priority: high\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.priority: expected an integer, got the string \"high\" (line 5)"},
      {"int field is a float", PodWith("spec:\n  containers: [{name: c, ports: [{containerPort: 80.5}]}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].ports[0].containerPort: expected an integer, got "
       "the number 80.5 (line 5)"},
      {"int field out of range", PodWith("spec:\n  containers: [{name: c, ports: [{containerPort: 70000}]}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].ports[0].containerPort: must be between 1 and "
       "65535, got 70000 (line 5)"},
      {"int field is a list", PodWith("spec:\n  priority: [1]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.priority: expected an integer, got a list (line 5)"},
      {"bool field", PodWith("spec:\n  hostNetwork: maybe\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.hostNetwork: expected true or false, got the string \"maybe\" "
       "(line 5)"},
      {"bad protocol", PodWith("spec:\n  containers: [{name: c, ports: [{containerPort: 80, protocol: HTTP}]}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].ports[0].protocol: unsupported value \"HTTP\"; "
       "supported values: \"TCP\", \"UDP\", \"SCTP\" (line 5)"},
      {"host network port mismatch",
       PodWith("spec:\n  hostNetwork: true\n  containers: [{name: c, ports: [{containerPort: 80, hostPort: 81}]}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].ports[0].hostPort: must match containerPort when "
       "hostNetwork is true (line 6)"},
      {"bad taint effect",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n  - {key: k, effect: NoScheduling}\n",
       "test.yaml: document 1 (Node n1): spec.taints[0].effect: unsupported value \"NoScheduling\"; supported values: "
       "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\" (line 6)"},
      {"taint without effect", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints: [{key: k}]\n",
       "test.yaml: document 1 (Node n1): spec.taints[0].effect: required field is missing (line 5)"},
      {"duplicate taint",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n  - {key: k, effect: NoSchedule}\n"
       "  - {key: k, value: v, effect: NoSchedule}\n",
       "test.yaml: document 1 (Node n1): spec.taints[1]: duplicate taint \"k\" with effect NoSchedule; taints must be "
       "unique by key and effect (line 7)"},
      {"toleration Exists with value",
       PodWith("spec:\n  tolerations: [{key: k, operator: Exists, value: v}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.tolerations[0].value: must be empty when operator is Exists "
       "(line 5)"},
      {"toleration bad operator",
       PodWith("spec:\n  tolerations: [{key: k, operator: Equals}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.tolerations[0].operator: unsupported value \"Equals\"; supported "
       "values: \"Equal\", \"Exists\" (line 5)"},
      {"toleration empty key needs Exists", PodWith("spec:\n  tolerations: [{value: v}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.tolerations[0].operator: must be Exists when key is empty (which "
       "tolerates every taint) (line 5)"},
      {"tolerationSeconds needs NoExecute",
       PodWith("spec:\n  tolerations: [{key: k, operator: Exists, tolerationSeconds: 5}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.tolerations[0].effect: must be NoExecute when tolerationSeconds "
       "is set (line 5)"},
      {"In needs values",
       PodWith("spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "        nodeSelectorTerms:\n        - matchExpressions: [{key: zone, operator: In}]\n"
               "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].values: must be non-empty when operator is In or NotIn (line 9)"},
      {"Exists takes no values",
       PodWith("spec:\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "      - topologyKey: zone\n        labelSelector:\n          matchExpressions:\n"
               "          - {key: app, operator: Exists, values: [x]}\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0]."
       "values: must be empty when operator is Exists or DoesNotExist (line 11)"},
      {"Gt needs one integer",
       PodWith("spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "        nodeSelectorTerms:\n        - matchExpressions: [{key: cores, operator: Gt, values: [eight]}]\n"
               "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].values: must be exactly one integer when operator is Gt or Lt (line 9)"},
      {"Gt only in node selectors",
       PodWith("spec:\n  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
               "    whenUnsatisfiable: DoNotSchedule\n    labelSelector:\n"
               "      matchExpressions: [{key: \"n\", operator: Gt, values: [\"1\"]}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0]."
       "operator: unsupported value \"Gt\"; supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\" (line "
       "10)"},
      {"matchFields only metadata.name",
       PodWith("spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "        nodeSelectorTerms:\n        - matchFields: [{key: metadata.uid, operator: In, values: [x]}]\n"
               "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]."
       "key: unsupported field \"metadata.uid\"; matchFields only supports \"metadata.name\" (line 9)"},
      {"matchFields one value",
       PodWith(
           "spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
           "        nodeSelectorTerms:\n        - matchFields: [{key: metadata.name, operator: In, values: [a, b]}]\n"
           "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]."
       "values: must have exactly one value for a matchFields requirement (line 9)"},
      {"no node selector terms",
       PodWith("spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "        nodeSelectorTerms: []\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: must have at "
       "least one node selector term (line 8)"},
      {"weight out of range",
       PodWith("spec:\n  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
               "      - {weight: 0, preference: {matchExpressions: [{key: a, operator: Exists}]}}\n"
               "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be between 1 and "
       "100, got 0 (line 8)"},
      {"pod affinity needs topologyKey",
       PodWith("spec:\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "      - labelSelector: {matchLabels: {app: web}}\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: required field "
       "is missing or empty (line 8)"},
      {"matchLabelKeys overlapping the selector",
       PodWith("spec:\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
               "      - labelSelector: {matchLabels: {app: web}}\n        topologyKey: zone\n"
               "        matchLabelKeys: [app]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): "
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys[0]: \"app\" exists "
       "in both matchLabelKeys and labelSelector (line 10)"},
      {"spread maxSkew",
       PodWith("spec:\n  topologySpreadConstraints:\n  - {maxSkew: 0, topologyKey: zone, "
               "whenUnsatisfiable: DoNotSchedule}\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.topologySpreadConstraints[0].maxSkew: must be between 1 and "
       "2147483647, got 0 (line 6)"},
      {"spread whenUnsatisfiable",
       PodWith("spec:\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, "
               "whenUnsatisfiable: Maybe}\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.topologySpreadConstraints[0].whenUnsatisfiable: unsupported "
       "value \"Maybe\"; supported values: \"DoNotSchedule\", \"ScheduleAnyway\" (line 6)"},
      {"spread minDomains with ScheduleAnyway",
       PodWith("spec:\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
               "ScheduleAnyway, minDomains: 2}\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.topologySpreadConstraints[0].minDomains: can only be set when "
       "whenUnsatisfiable is DoNotSchedule (line 6)"},
      {"spread duplicate",
       PodWith("spec:\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
               "DoNotSchedule}\n  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
               "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.topologySpreadConstraints[1]: duplicate constraint for "
       "topologyKey \"zone\" and whenUnsatisfiable (line 7)"},
      {"init container restartPolicy",
       PodWith("spec:\n  initContainers: [{name: i, restartPolicy: Never}]\n"
               "  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.initContainers[0].restartPolicy: unsupported value \"Never\"; "
       "init containers only support \"Always\" (a sidecar) (line 5)"},
      {"bad preemptionPolicy", PodWith("spec:\n  preemptionPolicy: Always\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.preemptionPolicy: unsupported value \"Always\"; supported "
       "values: \"PreemptLowerPriority\", \"Never\" (line 5)"},
      {"scheduling gates with nodeName",
       PodWith("spec:\n  nodeName: n1\n  schedulingGates: [{name: g}]\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.nodeName: cannot be set while the pod has schedulingGates "
       "(line 5)"},
      {"bad phase", PodWith("spec: {containers: [{name: c}]}\nstatus: {phase: Done}\n"),
       "test.yaml: document 1 (Pod default/web): status.phase: unsupported value \"Done\"; supported values: "
       "\"Pending\", \"Running\", \"Succeeded\", \"Failed\", \"Unknown\" (line 5)"},
      {"bad startTime", PodWith("spec: {containers: [{name: c}]}\nstatus: {startTime: yesterday}\n"),
       "test.yaml: document 1 (Pod default/web): status.startTime: invalid time \"yesterday\"; use RFC 3339, such as "
       "\"2024-05-01T12:00:00Z\" (line 5)"},
      {"missing priority class", PodWith("spec:\n  priorityClassName: gold\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.priorityClassName: no PriorityClass named \"gold\"; defined: "
       "\"system-cluster-critical\", \"system-node-critical\" (line 1)"},
      {"priority contradicting its class",
       PodWith("spec:\n  priority: 5\n  priorityClassName: system-node-critical\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.priority: priority 5 contradicts priorityClassName "
       "\"system-node-critical\" (value 2000001000); drop spec.priority (line 1)"},
      {"two global defaults",
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n"
       "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: "
       "true\n",
       "test.yaml: document 2 (PriorityClass b): globalDefault: only one PriorityClass may be marked globalDefault "
       "(line 7)"},
      {"priority class value too high",
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1000000001\n",
       "test.yaml: document 1 (PriorityClass a): value: must be at most 1000000000 for a user-defined PriorityClass "
       "(higher values are reserved for system-* classes) (line 4)"},
      {"priority class without value", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\n",
       "test.yaml: document 1 (PriorityClass a): value: required field is missing (line 1)"},
      {"duplicate pod",
       PodWith("spec: {containers: [{name: c}]}\n") + "---\n" + PodWith("spec: {containers: [{name: d}]}\n"),
       "test.yaml: document 2 (Pod default/web): metadata.name: duplicate Pod \"web\" (first defined in test.yaml "
       "document 1) (line 6)"},
      {"pdb both set",
       "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {minAvailable: 1, "
       "maxUnavailable: 1}\n",
       "test.yaml: document 1 (PodDisruptionBudget default/p): spec.maxUnavailable: minAvailable and maxUnavailable "
       "cannot both be set (line 4)"},
      {"pdb bad percent",
       "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {minAvailable: 150%}\n",
       "test.yaml: document 1 (PodDisruptionBudget default/p): spec.minAvailable: expected a non-negative integer or "
       "a percentage such as \"50%\", got \"150%\" (line 4)"},
      {"negative termination grace period",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  terminationGracePeriodSeconds: -5\n"
       "  containers: [{name: c}]\n",
       "test.yaml: document 1 (Pod default/p): spec.terminationGracePeriodSeconds: must be greater than or equal to 0, "
       "got -5 (line 5)"},
      {"timeline annotation that is not a duration",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: \"n\"\n  annotations: {simulate.kubesched.io/delete-after: "
       "soon}\n",
       "test.yaml: document 1 (Node n): metadata.annotations[simulate.kubesched.io/delete-after]: invalid duration "
       "\"soon\": expected a number, such as 30s, 1m30s or 500ms (line 5)"},
      {"deployment selector mismatch",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
       "  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Deployment default/web): spec.selector: does not match the template labels "
       "(spec.template.metadata.labels must satisfy spec.selector) (line 5)"},
      {"deployment without selector",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: "
       "{app: api}}\n    spec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Deployment default/web): spec.selector: required field is missing (line 5)"},
      {"replicaset empty selector",
       "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web}\nspec:\n  selector: {}\n  template:\n"
       "    spec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (ReplicaSet default/web): spec.selector: must not be empty (an empty selector would "
       "select every pod) (line 5)"},
      {"negative replicas",
       "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: -1\n  selector: "
       "{matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (StatefulSet default/db): spec.replicas: must be between 0 and 2147483647, got -1 (line "
       "5)"},
      {"template pod spec errors carry the template path",
       "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, namespace: kube-system}\nspec:\n  selector: "
       "{matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n"
       "      - name: c\n        resources: {requests: {memory: lots}}\n",
       "test.yaml: document 1 (DaemonSet kube-system/ds): spec.template.spec.containers[0].resources.requests.memory: "
       "invalid quantity \"lots\": expected a number such as 500m, 2, 1.5Gi or 1e3 (line 11)"},
      {"workload without template", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 2}\n",
       "test.yaml: document 1 (Job default/j): spec.template: required field is missing (line 4)"},
      {"statefulset pod clashes with an explicit pod",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: db-0}\nspec: {containers: [{name: c}]}\n"
       "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 1\n  selector: "
       "{matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c}]}\n",
       "test.yaml: document 2 (StatefulSet default/db): metadata.name: StatefulSet pod \"db-0\" clashes with a pod of "
       "the same name (first defined in test.yaml document 1) (line 6)"},
      {"List item errors name the item",
       "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: ok}}\n"
       "- apiVersion: v1\n  kind: Pod\n  metadata: {name: bad}\n  spec: {containers: [{name: c, resources: {requests: "
       "{cpu: 1x}}}]}\n",
       "test.yaml: document 1 (Pod default/bad): items[1].spec.containers[0].resources.requests.cpu: invalid quantity "
       "\"1x\": unknown suffix \"x\"; use one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such "
       "as e3 (no space before it) (line 8)"},
      {"List without items", "apiVersion: v1\nkind: List\n",
       "test.yaml: document 1 (List): items: required field is missing (line 1)"},
      {"yaml syntax error in the second document",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: [n2\n",
       "test.yaml: document 2: YAML syntax error: flow sequence without a closing bracket (line 8)"},
      {"labels must be a map", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: [a, b]\n",
       "test.yaml: document 1 (Node n1): metadata.labels: expected a mapping of fields, got a list (line 5)"},
      {"label value must be a string", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {a: {b: c}}\n",
       "test.yaml: document 1 (Node n1): metadata.labels.a: expected a string, got a mapping (line 5)"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name + "\n" + c.yaml);
    EXPECT_EQ(LoadErrorOf(c.yaml), c.want);
  }
}

TEST(ManifestTest, ErrorFieldsAreStructured) {
  auto r = LoadManifestsFromString(PodWith("spec:\n  containers: [{name: c, resources: {requests: {cpu: abc}}}]\n"),
                                   "dir/x.yaml");
  ASSERT_FALSE(r.has_value());
  const LoadError& e = r.error();
  EXPECT_EQ(e.file, "dir/x.yaml");
  EXPECT_EQ(e.document, 1);
  EXPECT_EQ(e.object, "Pod default/web");
  EXPECT_EQ(e.field, "spec.containers[0].resources.requests.cpu");
  EXPECT_THAT(e.message, HasSubstr("invalid quantity \"abc\""));
  EXPECT_EQ(e.line, 5);
}

TEST(ManifestTest, NothingIsHalfLoaded) {
  // A valid object before the bad one does not come back on its own.
  auto r = LoadManifestsFromString("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\nkind: Bogus\n", "x");
  EXPECT_FALSE(r.has_value());
}

// ---------------------------------------------------------------------------------------------
// Kinds kubesched does not simulate, as in a real application's manifest.

TEST(ManifestTest, SkipsKindsItDoesNotSimulateWithOneWarning) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Service
metadata: {name: a}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {key: value}
---
apiVersion: v1
kind: Service
metadata: {name: b}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {anything: [goes, here]}
---
apiVersion: example.com/v1
kind: Pod
metadata: {name: a-custom-resource-named-like-a-pod}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: ServiceList
items:
- {apiVersion: v1, kind: Service, metadata: {name: c}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg2}}
)");
  EXPECT_EQ(OnlyPod(objs).metadata.name, "web");
  EXPECT_EQ(objs.object_count, 9u);
  EXPECT_THAT(objs.warnings, ElementsAre("skipped 3 Service, 2 ConfigMap, 1 CustomResourceDefinition, 1 Widget, 1 Pod "
                                         "objects kubesched does not simulate"));

  auto one = MustLoad("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n");
  EXPECT_THAT(one.warnings, ElementsAre("skipped 1 Secret object kubesched does not simulate"));
  EXPECT_EQ(one.object_count, 1u);
  EXPECT_EQ(MustLoad("").object_count, 0u);
  EXPECT_EQ(MustLoad("---\nnull\n---\n").object_count, 0u);
}

TEST(ManifestTest, ReplicationControllerExpandsLikeAReplicaSet) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: old}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c}]}
)");
  ASSERT_EQ(objs.pods.size(), 2u);
  ASSERT_EQ(objs.workloads.size(), 1u);
  const Workload& rc = *objs.workloads[0];
  // The selector defaults to the template's labels.
  ASSERT_TRUE(rc.selector.has_value());
  EXPECT_EQ(rc.selector->match_labels, (Labels{{"app", "legacy"}}));
  for (const auto& pod : objs.pods) {
    EXPECT_TRUE(pod->metadata.name.starts_with("legacy-")) << pod->metadata.name;
    EXPECT_EQ(pod->metadata.name.size(), std::string("legacy-").size() + kNameSuffixLength);
    EXPECT_EQ(pod->metadata.namespace_, "old");
    ASSERT_EQ(pod->metadata.owner_references.size(), 1u);
    EXPECT_EQ(pod->metadata.owner_references[0],
              (OwnerReference{"v1", "ReplicationController", "legacy", rc.metadata.uid, true}));
  }
  EXPECT_EQ(LoadErrorOf(R"(apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  selector: {app: other}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c}]}
)"),
            "test.yaml: document 1 (ReplicationController default/legacy): spec.selector: does not match the template "
            "labels (spec.template.metadata.labels must satisfy spec.selector) (line 5)");
}

TEST(ManifestTest, JobsSuspendedIndexedAndCronJobs) {
  auto objs = MustLoad(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: paused}
spec:
  suspend: true
  template:
    spec: {restartPolicy: Never, containers: [{name: c}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: shards}
spec:
  completionMode: Indexed
  completions: 5
  parallelism: 3
  template:
    spec: {restartPolicy: Never, containers: [{name: c}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ops}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: OnFailure, priorityClassName: not-defined-anywhere, containers: [{name: c}]}
)");
  ASSERT_EQ(objs.pods.size(), 3u);
  for (size_t i = 0; i < objs.pods.size(); ++i) {
    const Pod& pod = *objs.pods[i];
    const std::string prefix = "shards-" + std::to_string(i) + "-";
    EXPECT_TRUE(pod.metadata.name.starts_with(prefix)) << pod.metadata.name;
    EXPECT_EQ(pod.metadata.name.size(), prefix.size() + kNameSuffixLength);
    ASSERT_NE(pod.metadata.labels.Find(kLabelJobCompletionIndex), nullptr);
    EXPECT_EQ(*pod.metadata.labels.Find(kLabelJobCompletionIndex), std::to_string(i));
    ASSERT_NE(pod.metadata.annotations.Find(kLabelJobCompletionIndex), nullptr);
    EXPECT_EQ(*pod.metadata.annotations.Find(kLabelJobCompletionIndex), std::to_string(i));
  }
  // The CronJob is read (and checked) but creates nothing, and says so.
  ASSERT_EQ(objs.workloads.size(), 2u);
  EXPECT_TRUE(objs.workloads[0]->suspend);
  EXPECT_EQ(objs.workloads[1]->completion_mode, CompletionMode::kIndexed);
  EXPECT_THAT(objs.warnings,
              ElementsAre("CronJob ops/nightly creates no pods: a snapshot has no schedule to run them on"));

  EXPECT_EQ(
      LoadErrorOf("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  completionMode: Indexed\n"
                  "  template:\n    spec: {containers: [{name: c}]}\n"),
      "test.yaml: document 1 (Job default/j): spec.completions: required when completionMode is Indexed (line 5)");
  EXPECT_EQ(LoadErrorOf("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: j}\nspec:\n  jobTemplate:\n"
                        "    spec:\n      template:\n        spec: {containers: [{name: c}]}\n"),
            "test.yaml: document 1 (CronJob default/j): spec.schedule: required field is missing or empty (line 5)");
}

TEST(ManifestTest, PodVolumesAreReadAndStatefulSetPodsUseTheirClaims) {
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Pod
metadata: {name: with-claim}
spec:
  containers: [{name: c}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: v1
kind: Pod
metadata: {name: already-running}
spec:
  nodeName: n1
  containers: [{name: c}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: other}}]
---
apiVersion: v1
kind: Pod
metadata: {name: scratch}
spec:
  containers: [{name: c}]
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  - {name: tmp, emptyDir: {}}
---
apiVersion: v1
kind: Pod
metadata: {name: no-claims}
spec:
  containers: [{name: c}]
  volumes: [{name: tmp, emptyDir: {}}, {name: cfg, configMap: {name: cfg}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, volumeMounts: [{name: data, mountPath: /data}]}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
)");
  ASSERT_EQ(objs.pods.size(), 6u);
  EXPECT_TRUE(objs.warnings.empty());
  std::map<std::string, std::vector<std::string>> claims;  // pod -> its volumes' claims
  for (const auto& pod : objs.pods) {
    for (const Volume& v : pod->spec.volumes) claims[pod->metadata.name].push_back(ClaimNameOf(*pod, v));
  }
  EXPECT_EQ(claims["with-claim"], std::vector<std::string>{"data"});
  EXPECT_EQ(claims["scratch"], (std::vector<std::string>{"scratch-scratch", ""}));
  EXPECT_EQ(claims["no-claims"], (std::vector<std::string>{"", ""}));
  // Each StatefulSet pod's volume named after the template uses "<template>-<set>-<ordinal>".
  EXPECT_EQ(claims["db-0"], std::vector<std::string>{"data-db-0"});
  EXPECT_EQ(claims["db-1"], std::vector<std::string>{"data-db-1"});
}

TEST(ManifestTest, StorageObjectsAreLoadedAndClaimsGetTheDefaultClass) {
  auto objs = MustLoad(R"(
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a, b]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: static}
spec:
  accessModes: [ReadWriteOncePod]
  storageClassName: ""
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: csi.example.com, volumeHandle: h1}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers: [{name: csi.example.com, nodeID: n1, allocatable: {count: 3}}]
)");
  ASSERT_EQ(objs.storage.size(), 5u);
  auto claim = std::get<std::shared_ptr<const PersistentVolumeClaim>>(objs.storage[1]);
  EXPECT_EQ(claim->storage_class_name, "standard");  // DefaultStorageClass
  EXPECT_EQ(claim->request.Value(), int64_t{1} << 30);
  auto fixed = std::get<std::shared_ptr<const PersistentVolumeClaim>>(objs.storage[2]);
  EXPECT_EQ(fixed->storage_class_name, "");
  EXPECT_TRUE(fixed->HasAccessMode(PersistentVolumeAccessMode::kReadWriteOncePod));
  auto sc = std::get<std::shared_ptr<const StorageClass>>(objs.storage[0]);
  EXPECT_EQ(sc->volume_binding_mode, VolumeBindingMode::kWaitForFirstConsumer);
  ASSERT_EQ(sc->allowed_topologies.size(), 1u);
  EXPECT_EQ(sc->allowed_topologies[0][0].values, (std::vector<std::string>{"a", "b"}));
  auto pv = std::get<std::shared_ptr<const PersistentVolume>>(objs.storage[3]);
  EXPECT_EQ(pv->csi_driver, "csi.example.com");
  ASSERT_TRUE(pv->node_affinity);
  auto node = std::get<std::shared_ptr<const CSINode>>(objs.storage[4]);
  ASSERT_NE(node->Driver("csi.example.com"), nullptr);
  EXPECT_EQ(node->Driver("csi.example.com")->allocatable_count, 3);
}

TEST(ManifestTest, StorageObjectsAreCheckedAsTheApiServerChecksThem) {
  struct Case {
    std::string name;
    std::string manifest;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"a claim without access modes",
       "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {resources: {requests: {storage: "
       "1Gi}}}\n",
       "spec.accessModes: at least 1 access mode is required"},
      {"a claim without a storage request",
       "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce]}\n",
       "spec.resources.requests[storage]: Required value"},
      {"ReadWriteOncePod with another mode",
       "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOncePod, "
       "ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
       "spec.accessModes: may not use ReadWriteOncePod with other access modes"},
      {"an unknown access mode",
       "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteSome], "
       "resources: {requests: {storage: 1Gi}}}\n",
       "spec.accessModes[0]: unsupported value \"ReadWriteSome\""},
      {"a volume without a source",
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {capacity: {storage: 1Gi}, accessModes: "
       "[ReadWriteOnce]}\n",
       "spec: must specify a volume type"},
      {"a local volume without node affinity",
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {capacity: {storage: 1Gi}, accessModes: "
       "[ReadWriteOnce], local: {path: /mnt}}\n",
       "spec.nodeAffinity: Local volumes require node affinity"},
      {"a class with an unknown binding mode",
       "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\nvolumeBindingMode: "
       "Later\n",
       "volumeBindingMode: unsupported value \"Later\""},
      {"a pod volume with two sources",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  volumes: [{name: d, "
       "emptyDir: {}, persistentVolumeClaim: {claimName: x}}]\n",
       "spec.volumes[0]: may not specify more than 1 volume type"},
      {"a claim volume without a claim name",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  volumes: [{name: d, "
       "persistentVolumeClaim: {readOnly: true}}]\n",
       "spec.volumes[0].persistentVolumeClaim.claimName: required field is missing or empty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string error = LoadErrorOf(c.manifest);
    EXPECT_NE(error.find(c.error), std::string::npos) << error;
  }
}

// ---------------------------------------------------------------------------------------------
// A cluster dump: workloads listed with the pods they already have.

// A Deployment, its ReplicaSet (replicas 3) and two of its pods, linked by uid, as `kubectl get
// deploy,rs,pods -o yaml` prints them.
constexpr std::string_view kDumpWithDeployment = R"(
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop, uid: 11111111-0000-0000-0000-000000000001, generation: 2,
             resourceVersion: "4711", creationTimestamp: "2024-05-01T12:00:00Z"}
  spec:
    replicas: 3
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec: {containers: [{name: c, image: nginx}]}
  status: {replicas: 3, readyReplicas: 2, observedGeneration: 2}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: web-7d4b9c8f6d
    namespace: shop
    uid: 22222222-0000-0000-0000-000000000002
    labels: {app: web, pod-template-hash: 7d4b9c8f6d}
    ownerReferences:
    - {apiVersion: apps/v1, kind: Deployment, name: web, uid: 11111111-0000-0000-0000-000000000001,
       controller: true, blockOwnerDeletion: true}
  spec:
    replicas: 3
    selector: {matchLabels: {app: web, pod-template-hash: 7d4b9c8f6d}}
    template:
      metadata: {labels: {app: web, pod-template-hash: 7d4b9c8f6d}}
      spec: {containers: [{name: c, image: nginx}]}
  status: {replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d4b9c8f6d-abcde
    namespace: shop
    uid: 33333333-0000-0000-0000-000000000003
    labels: {app: web, pod-template-hash: 7d4b9c8f6d}
    ownerReferences:
    - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c8f6d, uid: 22222222-0000-0000-0000-000000000002,
       controller: true, blockOwnerDeletion: true}
  spec: {nodeName: n1, containers: [{name: c, image: nginx}]}
  status: {phase: Running, podIP: 10.0.0.5, qosClass: BestEffort}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d4b9c8f6d-fghij
    namespace: shop
    uid: 44444444-0000-0000-0000-000000000004
    labels: {app: web, pod-template-hash: 7d4b9c8f6d}
    ownerReferences:
    - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c8f6d, uid: 22222222-0000-0000-0000-000000000002,
       controller: true}
  spec: {nodeName: n2, containers: [{name: c, image: nginx}]}
  status: {phase: Running}
)";

TEST(ManifestTest, DumpedWorkloadsCreateOnlyTheMissingPods) {
  auto objs = MustLoad(kDumpWithDeployment);
  // The two pods of the dump and one new pod of the ReplicaSet (at the ReplicaSet's position);
  // none of the Deployment's own.
  ASSERT_EQ(objs.pods.size(), 3u);
  EXPECT_EQ(objs.pods[1]->metadata.name, "web-7d4b9c8f6d-abcde");
  EXPECT_EQ(objs.pods[2]->metadata.name, "web-7d4b9c8f6d-fghij");
  const Pod& fresh = *objs.pods[0];
  EXPECT_TRUE(fresh.metadata.name.starts_with("web-7d4b9c8f6d-")) << fresh.metadata.name;
  EXPECT_TRUE(fresh.spec.node_name.empty());
  ASSERT_EQ(fresh.metadata.owner_references.size(), 1u);
  EXPECT_EQ(fresh.metadata.owner_references[0].uid, "22222222-0000-0000-0000-000000000002");
  EXPECT_EQ(objs.workloads.size(), 2u);

  // A ReplicaSet with replicas 1 and its running pod: nothing to create. A finished pod does not
  // count, and a pod that only names its owner (no uid) is matched by kind and name.
  const std::string rs = R"(
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api, uid: rs-uid}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: api-x1
  labels: {app: api}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: api, uid: rs-uid, controller: true}]
spec: {nodeName: n1, containers: [{name: c}]}
status: {phase: )";
  EXPECT_EQ(MustLoad(rs + "Running}\n").pods.size(), 1u);
  EXPECT_EQ(MustLoad(rs + "Failed}\n").pods.size(), 2u);
  auto by_name = MustLoad(std::string(R"(
apiVersion: v1
kind: Pod
metadata:
  name: api-x1
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: api, controller: true}]
spec: {nodeName: n1, containers: [{name: c}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c}]}
)"));
  EXPECT_EQ(by_name.pods.size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Field validation (kubectl --validate) and names.

constexpr std::string_view kDeploymentWithTypo = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelectr: {disktype: ssd}
      containers: [{name: c}]
)";

TEST(ManifestTest, FieldValidationErrors) {
  const std::vector<ErrorCase> cases = {
      {"unknown field in a workload's pod template", std::string(kDeploymentWithTypo),
       "test.yaml: document 1 (Deployment default/web): spec.template.spec.nodeSelectr: unknown field (did you mean "
       "\"nodeSelector\"?) (line 9)"},
      {"unknown top-level field", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatuss: {}\n",
       "test.yaml: document 1 (Node n1): statuss: unknown field (did you mean \"status\"?) (line 4)"},
      {"unknown field without a close match", PodWith("spec:\n  containers: [{name: c, flavour: {spicy: true}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].flavour: unknown field (line 5)"},
      {"unknown field in a volume source",
       PodWith("spec:\n  containers: [{name: c}]\n  volumes: [{name: v, emptyDir: {size: 1Gi}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.volumes[0].emptyDir.size: unknown field (line 6)"},
      {"unknown field in status", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacityy: {cpu: 1}}\n",
       "test.yaml: document 1 (Node n1): status.capacityy: unknown field (did you mean \"capacity\"?) (line 4)"},
      {"unknown field in a List item",
       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: ns, lables: {}}\n",
       "test.yaml: document 1 (Namespace ns): items[0].metadata.lables: unknown field (did you mean \"labels\"?) "
       "(line 6)"},
      {"duplicate key", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  name: n2\n",
       "test.yaml: document 1 (Node n1): metadata.name: duplicate field (line 5)"},
      {"duplicate label", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {a: x, b: w, a: z}\n",
       "test.yaml: document 1 (Node n1): metadata.labels.a: duplicate field (line 5)"},
      {"duplicate key in JSON",
       R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}, "kind": "Node"})",
       "test.yaml: document 1 (Namespace a): kind: duplicate field (line 1)"},
      {"unknown field in a CronJob's job template",
       "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: \"@daily\"\n  jobTemplate:\n"
       "    spec:\n      backofLimit: 3\n      template: {spec: {restartPolicy: Never, containers: [{name: c}]}}\n",
       "test.yaml: document 1 (CronJob default/c): spec.jobTemplate.spec.backofLimit: unknown field (did you mean "
       "\"backoffLimit\"?) (line 8)"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name + "\n" + c.yaml);
    EXPECT_EQ(LoadErrorOf(c.yaml), c.want);
    // Warn reports the same as a warning and loads; ignore loads silently.
    auto warned = LoadManifestsFromString(c.yaml, "test.yaml", LoadOptions{.field_validation = FieldValidation::kWarn});
    ASSERT_TRUE(warned.has_value()) << warned.error().ToString();
    ASSERT_FALSE(warned->warnings.empty());
    EXPECT_EQ(warned->warnings.front(), c.want);
    auto ignored =
        LoadManifestsFromString(c.yaml, "test.yaml", LoadOptions{.field_validation = FieldValidation::kIgnore});
    ASSERT_TRUE(ignored.has_value()) << ignored.error().ToString();
    EXPECT_THAT(ignored->warnings, Not(Contains(c.want)));
  }
}

// A value of the wrong type is an error whatever --validate says, as the API server's decoder
// refuses it (`json: cannot unmarshal string into Go struct field ...`): the file, document,
// field path and line, and for YAML the value as written (a plain scalar YAML 1.1 reads as a
// boolean or number is pointed out).
TEST(ManifestTest, WrongTypesAreErrorsInEveryMode) {
  const std::string node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n";
  const std::vector<ErrorCase> cases = {
      {"a list where the schema has a mapping",
       PodWith("spec:\n  containers:\n  - name: c\n    env: {LOG_LEVEL: debug}\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].env: expected a list, got a mapping (line 7)"},
      {"a mapping where the schema has a string", PodWith("spec:\n  containers: [{name: c, workingDir: {a: b}}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].workingDir: expected a string, got a mapping "
       "(line 5)"},
      {"a quoted integer", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: \"6\"\n",
       "test.yaml: document 1 (Deployment default/d): spec.replicas: expected an integer, got the string \"6\" (line "
       "5)"},
      {"a quoted grace period",
       PodWith("spec:\n  terminationGracePeriodSeconds: \"1800\"\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.terminationGracePeriodSeconds: expected an integer, got the "
       "string \"1800\" (line 5)"},
      {"a quoted container port", PodWith("spec:\n  containers: [{name: c, ports: [{containerPort: \"80\"}]}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].ports[0].containerPort: expected an integer, got "
       "the string \"80\" (line 5)"},
      {"a number in a command", PodWith("spec:\n  containers: [{name: c, command: [sleep, 10]}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.containers[0].command[1]: expected a string, got the number 10 "
       "(line 5)"},
      {"a quoted maxSkew",
       PodWith("spec:\n  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: \"1\", topologyKey: "
               "zone, whenUnsatisfiable: DoNotSchedule}\n"),
       "test.yaml: document 1 (Pod default/web): spec.topologySpreadConstraints[0].maxSkew: expected an integer, got "
       "the string \"1\" (line 7)"},
      {"YAML 1.1's boolean n as a node name", node + PodWith("spec:\n  nodeName: n\n  containers: [{name: c}]\n"),
       "test.yaml: document 2 (Pod default/web): spec.nodeName: expected a string, got \"n\", which YAML reads as the "
       "boolean false (quote it for a string) (line 9)"},
      {"a float replica count", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  replicas: 1.5\n",
       "test.yaml: document 1 (ReplicaSet default/r): spec.replicas: expected an integer, got the number 1.5 (line 5)"},
      {"an unquoted version label", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {version: 1.10}\n",
       "test.yaml: document 1 (Node n1): metadata.labels.version: expected a string, got \"1.10\", which YAML reads as "
       "the number 1.1 (quote it for a string) (line 5)"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name + "\n" + c.yaml);
    EXPECT_EQ(LoadErrorOf(c.yaml), c.want);
    for (FieldValidation mode : {FieldValidation::kWarn, FieldValidation::kIgnore}) {
      auto loaded = LoadManifestsFromString(c.yaml, "test.yaml", LoadOptions{.field_validation = mode});
      ASSERT_FALSE(loaded.has_value());
      EXPECT_EQ(loaded.error().ToString(), c.want);
    }
  }
}

TEST(ManifestTest, WarnModeReportsEveryIssueInOrder) {
  auto objs = MustLoad(R"(apiVersion: v1
kind: Pod
metadata: {name: web, labelz: {}}
spec:
  containers: [{name: c, imag: nginx}]
  tolerations: [{key: a, operator: Exists, efect: NoSchedule}]
)",
                       LoadOptions{.field_validation = FieldValidation::kWarn});
  EXPECT_THAT(objs.warnings,
              ElementsAre("test.yaml: document 1 (Pod default/web): metadata.labelz: unknown field (did you mean "
                          "\"labels\"?) (line 3)",
                          "test.yaml: document 1 (Pod default/web): spec.containers[0].imag: unknown field (did you "
                          "mean \"image\"?) (line 5)",
                          "test.yaml: document 1 (Pod default/web): spec.tolerations[0].efect: unknown field (did you "
                          "mean \"effect\"?) (line 6)"));
}

// Every field of these objects is a real Kubernetes field, most of them ones kubesched never reads:
// strict validation must accept them all.
TEST(ManifestTest, StrictValidationAcceptsRealObjects) {
  EXPECT_THAT(FieldSchemaProblems(), ::testing::IsEmpty());
  auto objs = MustLoad(R"(
apiVersion: v1
kind: Node
metadata:
  name: n1
  uid: 0d1f1a55-3c43-4a63-9a2b-3d2b0f0c6a11
  resourceVersion: "9182"
  creationTimestamp: "2024-05-01T12:00:00Z"
  annotations: {node.alpha.kubernetes.io/ttl: "0", volumes.kubernetes.io/controller-managed-attach-detach: "true"}
  managedFields:
  - {manager: kubelet, operation: Update, apiVersion: v1, time: "2024-05-01T12:00:00Z", fieldsType: FieldsV1,
     fieldsV1: {"f:status": {"f:conditions": {}}}, subresource: status}
spec:
  podCIDR: 10.244.1.0/24
  podCIDRs: [10.244.1.0/24]
  providerID: kind://docker/kind/n1
status:
  addresses: [{type: InternalIP, address: 172.18.0.3}, {type: Hostname, address: n1}]
  capacity: {cpu: "8", memory: 32Gi, ephemeral-storage: 100Gi, hugepages-2Mi: "0", pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", lastHeartbeatTime: "2024-05-01T12:00:00Z", lastTransitionTime: "2024-05-01T12:00:00Z",
     reason: KubeletReady, message: kubelet is posting ready status}
  daemonEndpoints: {kubeletEndpoint: {Port: 10250}}
  nodeInfo: {machineID: a, systemUUID: b, bootID: c, kernelVersion: 6.1.0, osImage: Debian, containerRuntimeVersion: containerd://1.7.13,
             kubeletVersion: v1.30.0, kubeProxyVersion: v1.30.0, operatingSystem: linux, architecture: amd64}
  images: [{names: [nginx:1.25], sizeBytes: 70000000}]
  runtimeHandlers: [{name: runc, features: {recursiveReadOnlyMounts: true, userNamespaces: false}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: shop
  generation: 1
  finalizers: [example.com/cleanup]
  labels: {app.kubernetes.io/name: web, example.com/tier: front_end.v2}
spec:
  serviceAccountName: web
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 30
  activeDeadlineSeconds: 3600
  dnsPolicy: ClusterFirstWithHostNet
  dnsConfig: {nameservers: [1.1.1.1], searches: [shop.svc.cluster.local], options: [{name: ndots, value: "2"}]}
  hostAliases: [{ip: 127.0.0.1, hostnames: [foo.local]}]
  imagePullSecrets: [{name: registry}]
  enableServiceLinks: false
  shareProcessNamespace: true
  hostname: web-0
  subdomain: web
  restartPolicy: Always
  runtimeClassName: runc
  os: {name: linux}
  readinessGates: [{conditionType: example.com/ready}]
  securityContext:
    runAsUser: 1000
    runAsGroup: 1000
    fsGroup: 2000
    fsGroupChangePolicy: OnRootMismatch
    supplementalGroups: [3000]
    sysctls: [{name: net.core.somaxconn, value: "1024"}]
    seccompProfile: {type: RuntimeDefault}
  initContainers:
  - name: sidecar
    image: envoy
    restartPolicy: Always
  containers:
  - name: web
    image: nginx
    command: [nginx]
    args: [-g, daemon off;]
    workingDir: /srv
    env:
    - {name: A, value: b}
    - name: NODE
      valueFrom: {fieldRef: {apiVersion: v1, fieldPath: spec.nodeName}}
    - name: KEY
      valueFrom: {configMapKeyRef: {name: cfg, key: key, optional: true}}
    envFrom: [{prefix: CFG_, configMapRef: {name: cfg}}, {secretRef: {name: s, optional: false}}]
    resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}
    resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]
    ports: [{name: http, containerPort: 80, protocol: TCP}]
    volumeMounts:
    - {name: data, mountPath: /data, subPath: web, mountPropagation: None, readOnly: false}
    - {name: projected, mountPath: /var/run/secrets/tokens, recursiveReadOnly: Disabled}
    volumeDevices: [{name: raw, devicePath: /dev/xvda}]
    livenessProbe: {grpc: {port: 9090, service: health}, initialDelaySeconds: 3, timeoutSeconds: 1, successThreshold: 1,
                    terminationGracePeriodSeconds: 10}
    readinessProbe: {httpGet: {path: /, port: http, host: localhost, scheme: HTTPS, httpHeaders: [{name: a, value: b}]}}
    startupProbe: {exec: {command: ["true"]}}
    lifecycle:
      postStart: {httpGet: {path: /started, port: 80}}
      preStop: {sleep: {seconds: 5}}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: FallbackToLogsOnError
    imagePullPolicy: Always
    securityContext:
      privileged: false
      capabilities: {add: [NET_ADMIN], drop: [ALL]}
      seLinuxOptions: {level: "s0:c123,c456"}
      runAsNonRoot: true
      procMount: Default
      appArmorProfile: {type: RuntimeDefault}
    stdin: false
    tty: false
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data, readOnly: false}}
  - {name: raw, hostPath: {path: /dev/xvda, type: BlockDevice}}
  - {name: cfg, configMap: {name: cfg, items: [{key: a, path: a, mode: 0644}], defaultMode: 0644, optional: true}}
  - {name: s, secret: {secretName: s}}
  - {name: dapi, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}
  - {name: nfs, nfs: {server: nfs.local, path: /exports}}
  - {name: csi, csi: {driver: example.csi.k8s.io, volumeAttributes: {size: small}, nodePublishSecretRef: {name: s}}}
  - {name: img, image: {reference: "example.com/data:1", pullPolicy: IfNotPresent}}
  - name: projected
    projected:
      defaultMode: 0400
      sources:
      - serviceAccountToken: {audience: vault, expirationSeconds: 3600, path: token}
      - configMap: {name: ca, items: [{key: ca.crt, path: ca.crt}]}
      - downwardAPI: {items: [{path: cpu, resourceFieldRef: {containerName: web, resource: requests.cpu, divisor: 1m}}]}
status:
  phase: Running
  hostIP: 172.18.0.3
  hostIPs: [{ip: 172.18.0.3}]
  podIP: 10.244.1.7
  podIPs: [{ip: 10.244.1.7}]
  qosClass: Burstable
  startTime: "2024-05-01T12:00:00Z"
  conditions: [{type: Ready, status: "True", lastProbeTime: null, lastTransitionTime: "2024-05-01T12:00:01Z"}]
  containerStatuses:
  - name: web
    ready: true
    started: true
    restartCount: 0
    image: nginx:1.25
    imageID: docker.io/library/nginx@sha256:0000
    containerID: containerd://abc
    state: {running: {startedAt: "2024-05-01T12:00:01Z"}}
    lastState: {terminated: {exitCode: 137, reason: OOMKilled, startedAt: "2024-05-01T11:00:00Z", finishedAt: "2024-05-01T11:59:00Z"}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: db
  replicas: 1
  podManagementPolicy: OrderedReady
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0, maxUnavailable: 1}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  revisionHistoryLimit: 10
  minReadySeconds: 0
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
  volumeClaimTemplates:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: standard
      volumeMode: Filesystem
      resources: {requests: {storage: 1Gi}}
      dataSourceRef: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: seed}
status: {replicas: 1, readyReplicas: 1, currentRevision: db-1, updateRevision: db-1, collisionCount: 0}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  backoffLimit: 4
  activeDeadlineSeconds: 600
  ttlSecondsAfterFinished: 100
  podReplacementPolicy: Failed
  podFailurePolicy:
    rules:
    - {action: Ignore, onPodConditions: [{type: DisruptionTarget, status: "True"}]}
    - {action: FailJob, onExitCodes: {operator: In, values: [42]}}
  template:
    spec: {restartPolicy: Never, containers: [{name: m, image: migrate}]}
status: {active: 1, ready: 0, uncountedTerminatedPods: {succeeded: [], failed: []}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 10%, maxSurge: 0}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      hostPID: true
      tolerations: [{operator: Exists}]
      containers: [{name: agent, image: agent}]
status: {currentNumberScheduled: 1, numberMisscheduled: 0, desiredNumberScheduled: 1, numberReady: 1}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
spec: {finalizers: [kubernetes]}
status: {phase: Active}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {maxUnavailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow}
status: {currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 1, expectedPods: 1, disruptedPods: {}}
)");
  EXPECT_TRUE(objs.warnings.size() <= 1u) << ::testing::PrintToString(objs.warnings);  // the PVC note
  EXPECT_EQ(objs.nodes.size(), 1u);
  EXPECT_EQ(objs.workloads.size(), 3u);
}

TEST(ManifestTest, NamesAndLabelsAreCheckedAsTheAPIServerDoes) {
  const std::string subdomain =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
      "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  const std::string label =
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
      "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  const std::string name_part =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const std::vector<ErrorCase> cases = {
      {"pod name with capitals", "apiVersion: v1\nkind: Pod\nmetadata: {name: Web}\nspec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Pod default/Web): metadata.name: invalid name \"Web\": " + subdomain + " (line 3)"},
      {"node name too long", "apiVersion: v1\nkind: Node\nmetadata: {name: " + std::string(254, 'n') + "}\n",
       "test.yaml: document 1 (Node " + std::string(254, 'n') + "): metadata.name: invalid name \"" +
           std::string(254, 'n') + "\": must be no more than 253 characters (line 3)"},
      {"namespace names are labels", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team.a}\n",
       "test.yaml: document 1 (Namespace team.a): metadata.name: invalid name \"team.a\": " + label + " (line 3)"},
      {"namespace of an object",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: Shop}\nspec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Pod Shop/web): metadata.namespace: invalid namespace \"Shop\": " + label + " (line 3)"},
      {"generateName is checked as a prefix",
       "apiVersion: v1\nkind: Pod\nmetadata: {generateName: Web-}\nspec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Pod default/Web-): metadata.generateName: invalid generateName \"Web-\": " + subdomain +
           " (line 3)"},
      {"label key with a space", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {\"app \": web}\n",
       "test.yaml: document 1 (Node n1): metadata.labels[app ]: invalid label key \"app \": " + name_part +
           " (line 5)"},
      {"label value too long",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {app: " + std::string(64, 'v') + "}\n",
       "test.yaml: document 1 (Node n1): metadata.labels.app: invalid label value \"" + std::string(64, 'v') +
           "\": must be no more than 63 characters (line 5)"},
      {"label value with a slash", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {app: a/b}\n",
       "test.yaml: document 1 (Node n1): metadata.labels.app: invalid label value \"a/b\": a valid label must be an "
       "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
       "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') (line 5)"},
      {"template labels",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
       "  template:\n    metadata: {labels: {app: -web}}\n    spec: {containers: [{name: c}]}\n",
       "test.yaml: document 1 (Deployment default/web): spec.template.metadata.labels.app: invalid label value "
       "\"-web\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
       "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
       "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') (line 7)"},
      {"nodeSelector keys are label keys",
       PodWith("spec:\n  nodeSelector: {example.com/: x}\n  containers: [{name: c}]\n"),
       "test.yaml: document 1 (Pod default/web): spec.nodeSelector[example.com/]: invalid label key \"example.com/\": "
       "name part must be non-empty; " +
           name_part + " (line 5)"},
      {"annotation keys are qualified names",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations: {\"a b\": c}\n",
       "test.yaml: document 1 (Node n1): metadata.annotations[a b]: invalid annotation key \"a b\": " + name_part +
           " (line 5)"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(LoadErrorOf(c.yaml), c.want);
  }
  // Valid: prefixed keys, empty values, '_' and '.', a generateName ending in '-'.
  MustLoad(R"(apiVersion: v1
kind: Pod
metadata:
  generateName: web-
  labels: {example.com/Tier_1.a: "", app: My_App.v1}
  annotations: {Example.com/Note: "anything at all: even spaces"}
spec: {containers: [{name: c}]}
)");
}

// Labels and annotations in any order are read in O(n log n) (they were inserted one by one into
// a sorted vector: 100,000 labels took 7.8 s), and an object's annotations are capped as upstream
// caps them.
TEST(ManifestTest, ManyLabelsAndTheAnnotationLimit) {
  std::string labels;
  for (int i = 100000; i-- > 0;) labels += fmt::format("    k{}: v{}\n", i, i);
  const ClusterObjects objs = MustLoad("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n" + labels);
  ASSERT_EQ(objs.nodes.size(), 1u);
  const Labels& got = objs.nodes.front()->metadata.labels;
  EXPECT_EQ(got.size(), 100001u);  // and kubernetes.io/hostname
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
  ASSERT_NE(got.Find("k7"), nullptr);
  EXPECT_EQ(*got.Find("k7"), "v7");
  EXPECT_EQ(*got.Find("k99999"), "v99999");

  const std::string node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations:\n    a: ";
  MustLoad(node + std::string(256 * 1024 - 1, 'x') + "\n");
  EXPECT_EQ(LoadErrorOf(node + std::string(256 * 1024, 'x') + "\n"),
            "test.yaml: document 1 (Node n1): metadata.annotations: Too long: must have at most 262144 bytes (line 6)");
}

// ---------------------------------------------------------------------------------------------
// Paths: directories, as kubectl -f DIR [-R].

TEST(ManifestTest, DirectoriesAreReadAsKubectlReadsThem) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ks_manifest_dir_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub" / "deeper");
  auto node = [](const std::string& name) { return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n"; };
  std::ofstream(dir / "b.yaml") << node("b");
  std::ofstream(dir / "a.yml") << node("a");
  std::ofstream(dir / "c.json") << R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}})";
  std::ofstream(dir / "README.md") << "not a manifest";
  std::ofstream(dir / "d.yaml.orig") << "not: [a manifest";
  std::ofstream(dir / "sub" / "e.yaml") << node("e");
  std::ofstream(dir / "sub" / "deeper" / "f.yaml") << node("f");
  std::ofstream(dir / "z.yaml") << node("z");
  auto names = [](const ClusterObjects& objs) {
    std::vector<std::string> out;
    for (const auto& n : objs.nodes) out.push_back(n->metadata.name);
    return out;
  };
  auto flat = LoadManifests({dir.string()});
  ASSERT_TRUE(flat.has_value()) << flat.error().ToString();
  EXPECT_THAT(names(*flat), ElementsAre("a", "b", "c", "z"));
  auto recursive = LoadManifests({dir.string()}, LoadOptions{.recursive = true});
  ASSERT_TRUE(recursive.has_value()) << recursive.error().ToString();
  // One walk in name order, subdirectories in place ("deeper" sorts before "e.yaml"), as
  // filepath.Walk.
  EXPECT_THAT(names(*recursive), ElementsAre("a", "b", "c", "f", "e", "z"));
  // A file named explicitly is read whatever its extension.
  std::ofstream(dir / "nodes.txt") << node("t");
  auto explicit_file = LoadManifests({(dir / "nodes.txt").string()});
  ASSERT_TRUE(explicit_file.has_value()) << explicit_file.error().ToString();
  EXPECT_THAT(names(*explicit_file), ElementsAre("t"));
  // Errors name the file inside the directory.
  std::ofstream(dir / "sub" / "e.yaml") << "apiVersion: v1\nkind: Node\nmetadata: {name: e, labelz: {}}\n";
  auto bad = LoadManifests({dir.string()}, LoadOptions{.recursive = true});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().file, (dir / "sub" / "e.yaml").string());
  EXPECT_EQ(bad.error().field, "metadata.labelz");
  // An empty directory has no objects.
  fs::create_directories(dir / "empty");
  auto empty = LoadManifests({(dir / "empty").string()});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->object_count, 0u);
  fs::remove_all(dir);
}

TEST(ManifestTest, TerminationGracePeriodDefaultsToThirtySeconds) {
  auto r = LoadManifestsFromString(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {terminationGracePeriodSeconds: 0, containers: [{name: "
      "c}]}\n",
      "test.yaml");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->pods.size(), 2u);
  EXPECT_FALSE(r->pods[0]->spec.termination_grace_period_seconds.has_value());
  EXPECT_EQ(r->pods[0]->spec.TerminationGracePeriodSeconds(), 30);
  EXPECT_EQ(r->pods[1]->spec.termination_grace_period_seconds, 0);
  EXPECT_EQ(r->pods[1]->spec.TerminationGracePeriodSeconds(), 0);
}

}  // namespace
}  // namespace kubesched::api

namespace kubesched::api {
namespace {

// A manifest of many documents is read in runs on several threads; what it gives must be what a
// serial read gives: objects in document order, and the first bad document's error even when a
// later run (read at the same time) has one too.
TEST(ManifestTest, ManyDocumentsLoadInOrderAndReportTheFirstError) {
  std::string text;
  const int documents = 2000;
  for (int i = 0; i < documents; ++i) {
    text += "apiVersion: v1\nkind: Node\nmetadata:\n  name: n" + std::to_string(i) +
            "\nstatus:\n  allocatable:\n    cpu: \"4\"\n---\n";
  }
  const ClusterObjects objs = MustLoad(text);
  ASSERT_EQ(objs.nodes.size(), static_cast<size_t>(documents));
  for (int i = 0; i < documents; ++i)
    EXPECT_EQ(objs.nodes[static_cast<size_t>(i)]->metadata.name, "n" + std::to_string(i));

  std::string bad;
  for (int i = 0; i < documents; ++i) {
    const bool broken = i == 700 || i == 1900;  // in different runs of documents
    bad += "apiVersion: v1\nkind: Node\nmetadata:\n  name: n" + std::to_string(i) +
           "\nstatus:\n  allocatable:\n    cpu: " + (broken ? "\"lots\"" : "\"4\"") + "\n---\n";
  }
  const std::string error = LoadErrorOf(bad);
  EXPECT_THAT(error, HasSubstr("document 701 "));
  EXPECT_THAT(error, HasSubstr("Node n700"));
}

// A scenario's KubeSchedulerConfiguration is kept as text for the configuration loader: a whole
// document as written, an item of a List as JSON; other kinds of that group stay skipped.
TEST(ManifestTest, SchedulerConfigurationsAreKeptForTheConfigurationLoader) {
  const ClusterObjects objs = MustLoad(R"(apiVersion: v1
kind: Node
metadata: {name: node-a}
---
# the scenario's configuration
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-b}}
- {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, profiles: [{schedulerName: x}]}
---
apiVersion: kubescheduler.config.k8s.io/v1
kind: SomethingElse
)");
  EXPECT_EQ(objs.nodes.size(), 2u);
  ASSERT_EQ(objs.scheduler_configurations.size(), 2u);
  EXPECT_EQ(objs.scheduler_configurations[0].source, "test.yaml document 2");
  EXPECT_THAT(objs.scheduler_configurations[0].text, HasSubstr("percentageOfNodesToScore: 50"));
  EXPECT_EQ(objs.scheduler_configurations[1].source, "test.yaml document 3 items[1]");
  EXPECT_THAT(objs.scheduler_configurations[1].text, HasSubstr(R"("profiles":[{"schedulerName":"x"}])"));
  EXPECT_EQ(objs.object_count, 5u);  // two nodes, two configurations, the skipped one
  EXPECT_THAT(objs.warnings, Contains(HasSubstr("skipped 1 SomethingElse object")));
}

}  // namespace
}  // namespace kubesched::api
