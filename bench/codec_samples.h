#pragma once
// Typical objects for the codec benchmarks: a Deployment's Pod as the API server returns it
// (~1.4 KB of compact JSON) and a kubelet-reported Node (~2 KB).

#include <string_view>

namespace kubesched::bench {

inline constexpr std::string_view kTypicalPodJson = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "web-7d4b9c8f6d-x2v9k", "generateName": "web-7d4b9c8f6d-", "namespace": "shop",
    "uid": "3c1a9d52-7f0e-4b8e-9a61-2d7f4e1b9c03", "resourceVersion": "481516", "generation": 1,
    "creationTimestamp": "2024-05-01T12:00:00Z",
    "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d", "tier": "frontend", "version": "v2"},
    "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                    "kubectl.kubernetes.io/restartedAt": "2024-04-30T08:00:00Z"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c8f6d",
                         "uid": "9b2f1c7e-0d4a-4e3b-8f15-6a2c9e7d1b40", "controller": true,
                         "blockOwnerDeletion": true}]
  },
  "spec": {
    "containers": [{
      "name": "web", "image": "registry.example.com/shop/web:2.14.1",
      "command": ["/bin/web"], "args": ["--port=8080", "--log-level=info"],
      "env": [{"name": "LOG_FORMAT", "value": "json"},
              {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
      "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
      "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
      "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10},
      "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5},
      "volumeMounts": [{"name": "config", "mountPath": "/etc/web", "readOnly": true},
                       {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        "readOnly": true}],
      "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"
    }, {
      "name": "proxy", "image": "envoyproxy/envoy:v1.30.1",
      "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}
    }],
    "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                {"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken":
                  {"expirationSeconds": 3607, "path": "token"}}], "defaultMode": 420}}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "serviceAccountName": "web", "schedulerName": "default-scheduler",
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300}],
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
      "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                          "topologyKey": "kubernetes.io/hostname"}}]}},
    "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {"phase": "Pending", "qosClass": "Burstable"}
})";

inline constexpr std::string_view kTypicalNodeJson = R"({
  "apiVersion": "v1", "kind": "Node",
  "metadata": {
    "name": "ip-10-0-17-42.eu-west-1.compute.internal", "uid": "0d1f1a55-3c43-4a63-9a2b-3d2b0f0c6a11",
    "resourceVersion": "918273", "creationTimestamp": "2024-05-01T11:00:00Z",
    "labels": {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
               "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
               "kubernetes.io/hostname": "ip-10-0-17-42.eu-west-1.compute.internal",
               "node.kubernetes.io/instance-type": "m6i.2xlarge",
               "topology.kubernetes.io/region": "eu-west-1", "topology.kubernetes.io/zone": "eu-west-1b",
               "node-role.kubernetes.io/worker": ""},
    "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
  },
  "spec": {"podCIDR": "10.244.17.0/24", "podCIDRs": ["10.244.17.0/24"],
           "providerID": "aws:///eu-west-1b/i-0a1b2c3d4e5f67890",
           "taints": [{"key": "dedicated", "value": "web", "effect": "PreferNoSchedule"}]},
  "status": {
    "capacity": {"cpu": "8", "memory": "32408684Ki", "ephemeral-storage": "104845292Ki",
                 "hugepages-1Gi": "0", "hugepages-2Mi": "0", "pods": "58"},
    "allocatable": {"cpu": "7910m", "memory": "31391852Ki", "ephemeral-storage": "95551679124",
                    "hugepages-1Gi": "0", "hugepages-2Mi": "0", "pods": "58"},
    "conditions": [
      {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-05-01T11:00:00Z", "reason": "KubeletHasSufficientMemory",
       "message": "kubelet has sufficient memory available"},
      {"type": "DiskPressure", "status": "False", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-05-01T11:00:00Z", "reason": "KubeletHasNoDiskPressure",
       "message": "kubelet has no disk pressure"},
      {"type": "PIDPressure", "status": "False", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-05-01T11:00:00Z", "reason": "KubeletHasSufficientPID",
       "message": "kubelet has sufficient PID available"},
      {"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-05-01T11:00:30Z", "reason": "KubeletReady",
       "message": "kubelet is posting ready status"}],
    "addresses": [{"type": "InternalIP", "address": "10.0.17.42"},
                  {"type": "Hostname", "address": "ip-10-0-17-42.eu-west-1.compute.internal"}],
    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
    "nodeInfo": {"machineID": "ec2a1b2c3d4e5f67890", "systemUUID": "ec2a1b2c-3d4e-5f67-8901-234567890abc",
                 "bootID": "5f0e1d2c-3b4a-5968-7a8b-9c0d1e2f3a4b", "kernelVersion": "6.1.84-99.169.amzn2023.x86_64",
                 "osImage": "Amazon Linux 2023", "containerRuntimeVersion": "containerd://1.7.11",
                 "kubeletVersion": "v1.30.0", "kubeProxyVersion": "v1.30.0",
                 "operatingSystem": "linux", "architecture": "amd64"},
    "images": [{"names": ["registry.example.com/shop/web@sha256:4f1e", "registry.example.com/shop/web:2.14.1"],
                "sizeBytes": 187654321},
               {"names": ["envoyproxy/envoy@sha256:9a0b", "envoyproxy/envoy:v1.30.1"], "sizeBytes": 65432109}]
  }
})";

}  // namespace kubesched::bench
