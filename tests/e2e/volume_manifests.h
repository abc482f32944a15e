#pragma once
// Manifests of the volume scenarios (issue 35's "Done when"), shared by the simulate tests
// (volume_e2e_test.cc) and the apiserver + run tests (run_e2e_test.cc): three zones of two nodes
// each, a CSI driver that publishes storage capacity, and the claims and pods of each case.

#include <string>

namespace kubesched::e2e::volumes {

inline constexpr const char* kDriver = "csi.example.com";

//! A node in `zone` with `cpu` allocatable.
inline std::string ZoneNode(const std::string& name, const std::string& zone, const std::string& cpu = "4") {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name + "\n    topology.kubernetes.io/zone: " + zone +
         "\nstatus:\n  capacity: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}\n  allocatable: {cpu: \"" + cpu +
         "\", memory: 8Gi, pods: \"110\"}\n";
}

//! Zones a, b, c with nodes <zone>-1 and <zone>-2.
inline std::string ThreeZones(const std::string& cpu = "4") {
  std::string out;
  for (const char* zone : {"zone-a", "zone-b", "zone-c"}) {
    for (const char* n : {"1", "2"}) out += ZoneNode(std::string(zone) + "-" + n, zone, cpu);
  }
  return out;
}

//! A WaitForFirstConsumer class of the driver, which publishes capacity, with 10Gi in zones a and
//! b and none in zone c.
inline std::string ZonalStorage() {
  std::string out = std::string("---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: ") + kDriver +
                    "\nspec:\n  storageCapacity: true\n  attachRequired: true\n"
                    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: zonal\nprovisioner: " +
                    kDriver + "\nvolumeBindingMode: WaitForFirstConsumer\n";
  for (const char* zone : {"zone-a", "zone-b", "zone-c"}) {
    const bool room = std::string(zone) != "zone-c";
    out += "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata:\n  name: capacity-" +
           std::string(zone) +
           "\n  namespace: kube-system\nstorageClassName: zonal\nnodeTopology:\n  matchLabels:\n"
           "    topology.kubernetes.io/zone: " +
           zone + "\ncapacity: " + (room ? "10Gi" : "0") + "\n";
  }
  return out;
}

//! A 3-replica StatefulSet whose pods each claim 1Gi of the zonal class.
inline std::string ZonalStatefulSet() {
  return R"(---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 3
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: postgres
        resources: {requests: {cpu: "1"}}
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: zonal
      resources: {requests: {storage: 1Gi}}
)";
}

//! A volume in zone-b (Retain, no class) pre-bound to the claim `claim`, and the claim, bound.
inline std::string ZonalVolumeAndClaim(const std::string& claim = "data") {
  return R"(---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-zone-b
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  csi: {driver: csi.example.com, volumeHandle: disk-b}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: )" +
         claim +
         R"(
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv-zone-b
  resources: {requests: {storage: 5Gi}}
)";
}

//! A pod using the claim `claim` with `cpu` requested; on `node` when given.
inline std::string ClaimPod(const std::string& name, const std::string& claim, const std::string& cpu = "1",
                            const std::string& node = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" +
         (node.empty() ? std::string() : "  nodeName: " + node + "\n") +
         "  containers:\n  - name: c\n    image: busybox\n    resources: {requests: {cpu: \"" + cpu +
         "\"}}\n  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: " + claim + "}\n";
}

//! A ReadWriteOncePod claim bound to its own volume.
inline std::string ReadWriteOncePodClaim(const std::string& claim) {
  return R"(---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-)" +
         claim +
         R"(
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOncePod]
  storageClassName: ""
  csi: {driver: csi.example.com, volumeHandle: disk-)" +
         claim + R"(}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: )" +
         claim +
         R"(
spec:
  accessModes: [ReadWriteOncePod]
  storageClassName: ""
  volumeName: pv-)" +
         claim +
         R"(
  resources: {requests: {storage: 1Gi}}
)";
}

//! A CSINode for `node` whose driver can attach `count` volumes.
inline std::string AttachLimit(const std::string& node, int count) {
  return "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata:\n  name: " + node +
         "\nspec:\n  drivers:\n  - name: " + kDriver + "\n    nodeID: " + node +
         "\n    topologyKeys: [topology.kubernetes.io/zone]\n    allocatable: {count: " + std::to_string(count) + "}\n";
}

//! A volume of the driver (any node) and its claim, bound: `name` names both.
inline std::string CsiVolumeAndClaim(const std::string& name) {
  return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv-" + name +
         "\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: \"\"\n  csi: "
         "{driver: " +
         kDriver + ", volumeHandle: handle-" + name +
         "}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n"
         "  name: " +
         name + "\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: \"\"\n  volumeName: pv-" + name +
         "\n  resources: {requests: {storage: 1Gi}}\n";
}

// What kube-scheduler 1.34 logs as its effective configuration with -v=... (every default plugin in
// multiPoint, with the weights and args it defaults), less DynamicResources and its args, which
// are the DRA issue's: kubesched loads it unchanged and schedules with it.
inline constexpr const char* kEffectiveConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  acceptContentTypes: ""
  burst: 100
  contentType: application/vnd.kubernetes.protobuf
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 50
enableContentionProfiling: true
enableProfiling: true
leaderElection:
  leaderElect: true
  leaseDuration: 15s
  renewDeadline: 10s
  resourceLock: leases
  resourceName: kube-scheduler
  resourceNamespace: kube-system
  retryPeriod: 2s
parallelism: 16
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 10
profiles:
- pluginConfig:
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: DefaultPreemptionArgs
      minCandidateNodesAbsolute: 100
      minCandidateNodesPercentage: 10
    name: DefaultPreemption
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      hardPodAffinityWeight: 1
      ignorePreferredTermsOfExistingPods: false
      kind: InterPodAffinityArgs
    name: InterPodAffinity
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeAffinityArgs
    name: NodeAffinity
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesBalancedAllocationArgs
      resources:
      - name: cpu
        weight: 1
      - name: memory
        weight: 1
    name: NodeResourcesBalancedAllocation
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
        type: LeastAllocated
    name: NodeResourcesFit
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      defaultingType: System
      kind: PodTopologySpreadArgs
    name: PodTopologySpread
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      bindTimeoutSeconds: 600
      kind: VolumeBindingArgs
    name: VolumeBinding
  plugins:
    bind: {}
    filter: {}
    multiPoint:
      enabled:
      - name: SchedulingGates
        weight: 0
      - name: PrioritySort
        weight: 0
      - name: NodeUnschedulable
        weight: 0
      - name: NodeName
        weight: 0
      - name: TaintToleration
        weight: 3
      - name: NodeAffinity
        weight: 2
      - name: NodePorts
        weight: 0
      - name: NodeResourcesFit
        weight: 1
      - name: VolumeRestrictions
        weight: 0
      - name: NodeVolumeLimits
        weight: 0
      - name: VolumeBinding
        weight: 0
      - name: VolumeZone
        weight: 0
      - name: PodTopologySpread
        weight: 2
      - name: InterPodAffinity
        weight: 2
      - name: DefaultPreemption
        weight: 0
      - name: NodeResourcesBalancedAllocation
        weight: 1
      - name: ImageLocality
        weight: 1
      - name: DefaultBinder
        weight: 0
    permit: {}
    postBind: {}
    postFilter: {}
    preBind: {}
    preEnqueue: {}
    preFilter: {}
    preScore: {}
    queueSort: {}
    reserve: {}
    score: {}
  schedulerName: default-scheduler
)";

}  // namespace kubesched::e2e::volumes
