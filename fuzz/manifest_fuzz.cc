// Fuzz target for the manifest loader: any input must load or fail with a message, never crash,
// hang or throw, and whatever loads must satisfy the loader's promises.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/manifest.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched::api;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A small pod budget keeps a mutated "replicas:" from turning one input into a memory test.
  LoadOptions options;
  options.max_pods = 2000;
  auto result = LoadManifestsFromString(text, "fuzz.yaml", options);
  if (!result) {
    Check(!result.error().message.empty());
    Check(!result.error().ToString().empty());
    return 0;
  }
  Check(result->pods.size() <= options.max_pods);
  for (const auto& pod : result->pods) {
    Check(!pod->metadata.name.empty());
    Check(!pod->metadata.namespace_.empty());
    Check(!pod->metadata.uid.empty());
    Check(!pod->spec.containers.empty());
    Check(pod->spec.priority.has_value());
    Check(pod->spec.preemption_policy.has_value());
    for (const auto& c : pod->spec.containers) {
      for (const auto& [name, limit] : c.resources.limits) Check(c.resources.requests.contains(name));
    }
  }
  for (const auto& node : result->nodes) {
    Check(node->metadata.labels.Has(kLabelHostname));
    Check(node->status.allocatable.contains(kResourcePods));
  }
  for (const auto& ns : result->namespaces) Check(ns->metadata.labels.Has(kLabelMetadataName));
  return 0;
}
