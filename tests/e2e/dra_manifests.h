#pragma once
// Manifests of the Dynamic Resource Allocation scenarios (issue 36's "Done when"), shared by the
// simulate tests (dra_e2e_test.cc) and the apiserver + run tests (run_e2e_test.cc): nodes with
// ResourceSlices of a GPU driver, a DeviceClass, claims and templates, and the pods of each case.

#include <string>

#include "e2e/volume_manifests.h"

namespace kubesched::e2e::dra {

inline constexpr const char* kDriver = "gpu.example.com";

//! A node with `cpu` allocatable.
inline std::string DraNode(const std::string& name, const std::string& cpu = "8") {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name + "\nstatus:\n  capacity: {cpu: \"" + cpu +
         "\", memory: 32Gi, pods: \"110\"}\n";
}

//! The DeviceClass of the driver's GPUs.
inline std::string GpuClass() {
  return "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu.example.com\nspec:\n"
         "  selectors:\n  - cel:\n      expression: 'device.driver == \"gpu.example.com\"'\n";
}

//! A ResourceSlice on `node` with whole GPUs gpu-0 .. gpu-(n-1), each of model `model`.
inline std::string WholeGpus(const std::string& node, int n, const std::string& model = "a100") {
  std::string out = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: " + node +
                    "-gpus\nspec:\n  driver: gpu.example.com\n  nodeName: " + node + "\n  pool: {name: " + node +
                    ", generation: 1, resourceSliceCount: 1}\n  devices:\n";
  for (int i = 0; i < n; ++i) {
    out += "  - name: gpu-" + std::to_string(i) + "\n    attributes:\n      model: {string: " + model +
           "}\n    capacity:\n      memory: {value: 40Gi}\n";
  }
  return out;
}

//! A ResourceSlice on `node` with `n` shareable GPUs of 1000 gpuMilli each (allowMultipleAllocations,
//! consumable capacity), as openb_to_manifests.py --dra writes a GPU-sharing node; attribute
//! `index` numbers them from `first_index`.
inline std::string SharedGpus(const std::string& node, int n, int first_index = 0) {
  std::string out = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: " + node +
                    "-gpus\nspec:\n  driver: gpu.example.com\n  nodeName: " + node + "\n  pool: {name: " + node +
                    ", generation: 1, resourceSliceCount: 1}\n  devices:\n";
  for (int i = 0; i < n; ++i) {
    out += "  - name: gpu-" + std::to_string(i) + "\n    allowMultipleAllocations: true\n    attributes:\n" +
           "      index: {int: " + std::to_string(first_index + i) +
           "}\n    capacity:\n      gpuMilli: {value: \"1000\"}\n";
  }
  return out;
}

//! A ResourceSlice on `node` with one physical GPU of 40Gi memory offered as a whole (gpu-0) or as
//! two 20Gi partitions (gpu-0-part-0/1), all drawing on one counter set: partitionable devices.
inline std::string PartitionableGpu(const std::string& node) {
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: " + node +
         "-gpus\nspec:\n  driver: gpu.example.com\n  nodeName: " + node + "\n  pool: {name: " + node +
         ", generation: 1, resourceSliceCount: 1}\n  sharedCounters:\n  - name: gpu-0-counters\n    counters:\n"
         "      memory: {value: 40Gi}\n  devices:\n"
         "  - name: gpu-0\n    attributes:\n      partition: {bool: false}\n    consumesCounters:\n    - counterSet: "
         "gpu-0-counters\n      counters:\n"
         "        memory: {value: 40Gi}\n"
         "  - name: gpu-0-part-0\n    attributes:\n      partition: {bool: true}\n    consumesCounters:\n    - "
         "counterSet: gpu-0-counters\n      counters:\n"
         "        memory: {value: 20Gi}\n"
         "  - name: gpu-0-part-1\n    attributes:\n      partition: {bool: true}\n    consumesCounters:\n    - "
         "counterSet: gpu-0-counters\n      counters:\n"
         "        memory: {value: 20Gi}\n";
}

//! A ResourceClaimTemplate asking one device of the class, optionally with a CEL selector and a
//! gpu-milli capacity request.
inline std::string GpuTemplate(const std::string& name, const std::string& selector = "",
                               const std::string& gpu_milli = "") {
  std::string out = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: " + name +
                    "\n  namespace: default\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
                    "        exactly:\n          deviceClassName: gpu.example.com\n";
  if (!selector.empty())
    out += "          selectors:\n          - cel:\n              expression: '" + selector + "'\n";
  if (!gpu_milli.empty())
    out +=
        "          capacity:\n            requests:\n              gpu.example.com/gpuMilli: \"" + gpu_milli + "\"\n";
  return out;
}

//! A ResourceClaim (not from a template) asking one device of the class.
inline std::string GpuClaim(const std::string& name) {
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: " + name +
         "\n  namespace: default\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
         "        deviceClassName: gpu.example.com\n";
}

//! A pod using one claim: from the template `tmpl`, or the claim `claim` by name; created
//! `create_after` into the simulation when given (simulate's timeline; ignored by the API).
inline std::string ClaimPod(const std::string& name, const std::string& tmpl, const std::string& claim = "",
                            const std::string& create_after = "") {
  std::string out = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n";
  if (!create_after.empty()) out += "  annotations: {simulate.kubesched.io/create-after: " + create_after + "}\n";
  out +=
      "spec:\n  containers:\n  - name: main\n    image: busybox\n"
      "    resources:\n      requests: {cpu: 100m}\n      claims: [{name: gpu}]\n"
      "  resourceClaims:\n  - name: gpu\n";
  out += claim.empty() ? "    resourceClaimTemplateName: " + tmpl + "\n" : "    resourceClaimName: " + claim + "\n";
  return out;
}

//! kube-scheduler's effective configuration (volumes::kEffectiveConfig) with every default plugin:
//! DynamicResources before DefaultPreemption with its defaulted args, and NodeDeclaredFeatures
//! after DefaultBinder, as 1.37 prints it.
inline std::string EffectiveConfigWithEveryDefaultPlugin() {
  std::string config = volumes::kEffectiveConfig;
  auto insert_before = [&](const std::string& anchor, const std::string& text) {
    const size_t at = config.find(anchor);
    if (at != std::string::npos) config.insert(at, text);
  };
  insert_before("  - args:\n      apiVersion: kubescheduler.config.k8s.io/v1\n      hardPodAffinityWeight",
                "  - args:\n      apiVersion: kubescheduler.config.k8s.io/v1\n      filterTimeout: 10s\n"
                "      kind: DynamicResourcesArgs\n    name: DynamicResources\n");
  insert_before("      - name: DefaultPreemption\n", "      - name: DynamicResources\n        weight: 0\n");
  const std::string binder = "      - name: DefaultBinder\n        weight: 0\n";
  const size_t at = config.find(binder);
  if (at != std::string::npos)
    config.insert(at + binder.size(), "      - name: NodeDeclaredFeatures\n        weight: 0\n");
  return config;
}

}  // namespace kubesched::e2e::dra
