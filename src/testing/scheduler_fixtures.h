#pragma once
// Fixtures for tests that run the whole scheduler over a simulated cluster loaded from YAML (the
// scheduler's Events, its metrics): the in-tree registry, a start time, and small manifests.

#include <cstdint>
#include <string>

#include "framework/registry.h"
#include "plugins/registry.h"
#include "util/clock.h"

namespace kubesched::testing {

//! A fixed Unix time (November 2026) the simulation's clock starts at.
inline constexpr int64_t kSchedulerTestStart = 1'795'521'600LL * util::kNanosPerSecond;

//! The in-tree plugins, registered once.
inline const framework::Registry& InTreeRegistry() {
  static const framework::Registry registry = [] {
    framework::Registry r;
    plugins::RegisterInTreePlugins(r);
    return r;
  }();
  return registry;
}

//! One node n0 with 2 cpus.
inline const std::string kTwoCpuNode = R"(apiVersion: v1
kind: Node
metadata: {name: n0}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
---
)";

//! Nodes n0..n<count-1>, each with `cpu` cpus, 8Gi and 110 pods.
inline std::string NumberedNodes(int count, const std::string& cpu = "2") {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "apiVersion: v1\nkind: Node\nmetadata: {name: n" + std::to_string(i) + "}\nstatus: {capacity: {cpu: \"" +
           cpu + "\", memory: 8Gi, pods: \"110\"}}\n---\n";
  }
  return out;
}

//! PriorityClass `high` (1000).
inline const std::string kHighPriorityClass = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
)";

//! A pod in default requesting `cpu`, with more of its spec (indented two spaces) appended.
inline std::string CpuPod(const std::string& name, const std::string& cpu, const std::string& spec = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n" +
         "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n" + spec + "---\n";
}

}  // namespace kubesched::testing
