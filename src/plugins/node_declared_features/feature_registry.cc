#include "plugins/node_declared_features/feature_registry.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <string>

namespace kubesched::plugins::node_declared_features {
namespace {

namespace json = api::json;

// The member `key` of `object`, or null when `object` is null, not an object, or has no such member.
const json::Value* Field(const json::Value* object, std::string_view key) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  return json::FindMember(*object, key);
}

// Calls f on each item of the list `key` of `object` until f returns true; whether one did.
template <typename F>
bool AnyItem(const json::Value* object, std::string_view key, F&& f) {
  const json::Value* list = Field(object, key);
  if (list == nullptr || !list->IsArray()) return false;
  return std::any_of(list->Begin(), list->End(), [&](const json::Value& item) { return f(item); });
}

// Whether f holds for a container of one of the lists `lists` of the pod's spec.
template <typename F>
bool AnyContainer(const json::Value* spec, std::initializer_list<std::string_view> lists, F&& f) {
  return std::ranges::any_of(lists, [&](std::string_view list) { return AnyItem(spec, list, f); });
}

// restartallcontainers: a container or init container with a restart rule whose action restarts
// every container of the pod (the kubelet must know the action).
bool RestartAllContainers(const PodSpecView& pod) {
  return AnyContainer(pod.spec, {"containers", "initContainers"}, [](const json::Value& container) {
    return AnyItem(&container, "restartPolicyRules", [](const json::Value& rule) {
      const json::Value* action = Field(&rule, "action");
      return action != nullptr && json::View(*action) == "RestartAllContainers";
    });
  });
}

// usernamespaceshostnetwork: host networking inside a user namespace (hostUsers set to false).
bool UserNamespacesHostNetwork(const PodSpecView& pod) {
  if (!pod.pod.spec.host_network) return false;
  const json::Value* host_users = Field(pod.spec, "hostUsers");
  return host_users != nullptr && host_users->IsBool() && !host_users->GetBool();
}

// volumebindmountoptions: a volume mount of any container (init and ephemeral ones included) with
// bindMountOptions.
bool VolumeBindMountOptions(const PodSpecView& pod) {
  return AnyContainer(pod.spec, {"containers", "initContainers", "ephemeralContainers"},
                      [](const json::Value& container) {
                        return AnyItem(&container, "volumeMounts", [](const json::Value& mount) {
                          const json::Value* options = Field(&mount, "bindMountOptions");
                          return options != nullptr && options->IsArray() && !options->Empty();
                        });
                      });
}

// podcertificatesmldsa: a projected podCertificate volume source whose key is an ML-DSA key.
bool PodCertificateMLDSA(const PodSpecView& pod) {
  return AnyItem(pod.spec, "volumes", [](const json::Value& volume) {
    return AnyItem(Field(&volume, "projected"), "sources", [](const json::Value& source) {
      const json::Value* key_type = Field(Field(&source, "podCertificate"), "keyType");
      if (key_type == nullptr) return false;
      const std::string_view type = json::View(*key_type);
      return type == "MLDSA44" || type == "MLDSA65" || type == "MLDSA87";
    });
  });
}

// Upstream's AllFeatures (staging/src/k8s.io/component-helpers/nodedeclaredfeatures/features/
// registry.go) when release-1.37 was cut, in its order. None has a MaxVersion yet. The resize
// features (pod-level resources, non-sidecar init containers, memory-backed volumes) only infer
// for pod updates, the DRA ones and ExtendWebSocketsToKubelet never for scheduling.
constexpr std::array<Feature, 10> kAllFeatures = {{
    {"RestartAllContainersOnContainerExits", std::nullopt, RestartAllContainers, "restartPolicyRules"},
    {"InPlacePodLevelResourcesVerticalScaling", std::nullopt, nullptr, {}},
    {"ExtendWebSocketsToKubelet", std::nullopt, nullptr, {}},
    {"InPlacePodVerticalScalingInitContainers", std::nullopt, nullptr, {}},
    {"InPlacePodVerticalScalingMemoryBackedVolumes", std::nullopt, nullptr, {}},
    {"UserNamespacesHostNetworkSupport", std::nullopt, UserNamespacesHostNetwork, "hostUsers"},
    {"DRANodeAllocatableResources", std::nullopt, nullptr, {}},
    {"VolumeBindMountOptions", std::nullopt, VolumeBindMountOptions, "bindMountOptions"},
    {"DRAOptionalNodeOperations", std::nullopt, nullptr, {}},
    {"PodCertificateMLDSA", std::nullopt, PodCertificateMLDSA, "podCertificate"},
}};

}  // namespace

std::span<const Feature> AllFeatures() { return kAllFeatures; }

std::vector<std::string_view> InferForPodScheduling(std::span<const Feature> registry, const api::Pod& pod,
                                                    Version target) {
  // Most pods use none of the fields the inferences read in the JSON: a substring search over the
  // pod's JSON (a few KB) settles that without parsing it.
  const std::string* text = pod.json.get();
  const bool parse = text != nullptr && std::ranges::any_of(registry, [&](const Feature& f) {
                       return f.infer_for_scheduling != nullptr && !f.json_field.empty() &&
                              text->find(f.json_field) != std::string::npos;
                     });
  // (A Document allocates its pool when constructed: only for a pod whose JSON is parsed.)
  std::optional<json::Document> doc;
  const json::Value* spec = nullptr;
  // A pod's JSON was encoded by the decoder, so it parses; if it did not, the inferences see only
  // the typed fields.
  if (parse && json::Parse(*text, doc.emplace()).has_value()) spec = Field(&*doc, "spec");
  const PodSpecView view{pod, spec};

  std::vector<std::string_view> required;
  for (const Feature& f : registry) {
    // Past its max version every node has the feature: no pod requires it.
    if (f.max_version && target > *f.max_version) continue;
    if (f.infer_for_scheduling != nullptr && f.infer_for_scheduling(view)) required.push_back(f.name);
  }
  std::ranges::sort(required);
  const auto repeats = std::ranges::unique(required);
  required.erase(repeats.begin(), repeats.end());
  return required;
}

}  // namespace kubesched::plugins::node_declared_features
