#pragma once
// The node features a pod can need (upstream's k8s.io/component-helpers/nodedeclaredfeatures: its
// Feature interface, features.AllFeatures and Framework.InferForPodScheduling), as the scheduler
// uses them: each feature's name, the last version it matters to, and whether scheduling a pod
// requires it. Discovery (the kubelet's side) and update inference (the admission plugin's) are not
// the scheduler's and are left out.

#include <compare>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "api/types.h"

namespace kubesched::plugins::node_declared_features {

//! A Kubernetes version (major.minor.patch), compared as upstream compares a feature's MaxVersion.
struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;
  auto operator<=>(const Version&) const = default;
};

//! The release whose registry AllFeatures() mirrors (upstream's AllFeatures as master held it when
//! release-1.37 was cut), and the version the plugin infers for, as kube-scheduler infers for its
//! own version.
inline constexpr Version kRegistryVersion{1, 37, 0};

//! What a feature's inference reads of a pod: the typed pod, and the pod's spec as the API server
//! holds it (the "spec" of Pod::json), for the fields api::Pod does not model. `spec` is null for a
//! pod built in code, which has none of those fields.
struct PodSpecView {
  const api::Pod& pod;
  const api::json::Value* spec = nullptr;
};

//! One entry of the registry (upstream's Feature, scheduler half).
struct Feature {
  //! The name nodes declare in status.declaredFeatures.
  std::string_view name;
  //! Upstream's MaxVersion: once the scheduler's version is past it, every node the version skew
  //! policy allows has the feature and no pod requires it. nullopt: no bound.
  std::optional<Version> max_version;
  //! Upstream's InferForScheduling: whether a pod needs a node that declares the feature. Null for
  //! the features only pod updates can need (in-place resize and the like).
  bool (*infer_for_scheduling)(const PodSpecView& pod) = nullptr;
  //! A field name the pod's JSON must contain for infer_for_scheduling to read anything there, so
  //! that the JSON of a pod that cannot need the feature is not parsed. Empty: the inference reads
  //! only typed fields.
  std::string_view json_field;
};

//! Upstream's features.AllFeatures of kRegistryVersion, in its order.
std::span<const Feature> AllFeatures();

//! Upstream's Framework.InferForPodScheduling: the names of the features in `registry` that
//! scheduling `pod` requires, for a scheduler of version `target` (a feature past its max_version
//! is never required), sorted and without repeats. Parses the pod's JSON at most once, and only
//! when it contains a json_field of some feature.
std::vector<std::string_view> InferForPodScheduling(std::span<const Feature> registry, const api::Pod& pod,
                                                    Version target);

}  // namespace kubesched::plugins::node_declared_features
