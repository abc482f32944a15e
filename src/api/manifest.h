#pragma once
// Loads cluster objects from Kubernetes manifests: multi-document YAML or JSON files, `kind: List`
// included. Applies the defaulting the API server (and kubelet) would, validates what the
// scheduler relies on, resolves pod priorities from PriorityClasses, and expands workloads into
// pods. Loading is all-or-error: any problem yields one LoadError naming file, document, object
// and field, and nothing is half-loaded.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"

namespace kubesched::api {

//! Label the API server puts on every namespace (its own name), so namespaceSelectors can pick a
//! namespace by name.
inline constexpr std::string_view kLabelMetadataName = "kubernetes.io/metadata.name";

//! Built-in PriorityClasses every cluster has.
inline constexpr std::string_view kSystemClusterCritical = "system-cluster-critical";
inline constexpr std::string_view kSystemNodeCritical = "system-node-critical";
inline constexpr int32_t kSystemClusterCriticalPriority = 2000000000;
inline constexpr int32_t kSystemNodeCriticalPriority = 2000001000;
//! The highest value a user-defined PriorityClass may have (names starting "system-" may go higher).
inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;

//! The kubelet's default maxPods, used as a node's "pods" capacity when the manifest gives none.
inline constexpr int64_t kDefaultMaxPods = 110;

struct ClusterObjects {
  std::vector<std::shared_ptr<Node>> nodes;
  //! Explicit pods and the pods expanded from workloads, in manifest order (a workload's pods sit
  //! at its position).
  std::vector<std::shared_ptr<Pod>> pods;
  //! Declared namespaces, then any namespace an object uses without declaring it.
  std::vector<std::shared_ptr<Namespace>> namespaces;
  std::vector<std::shared_ptr<PriorityClass>> priority_classes;
  std::vector<std::shared_ptr<PodDisruptionBudget>> pdbs;
  std::vector<std::shared_ptr<Workload>> workloads;
};

struct LoadOptions {
  //! Seeds generateName suffixes and workload pod names: the same seed gives the same names.
  uint64_t seed = 1;
  //! Expand workloads into pods (ClusterObjects.workloads is filled either way).
  bool expand_workloads = true;
  //! Creation timestamp given to every loaded object (the scheduler's clock at load time).
  int64_t creation_timestamp_ns = 0;
  //! Upper bound on pods (explicit plus generated), so a stray `replicas: 100000000` fails with a
  //! message instead of exhausting memory.
  size_t max_pods = 1'000'000;
};

struct LoadError {
  std::string file;
  int document = 0;    //!< 1-based; 0 when the error concerns the whole file (e.g. unreadable)
  std::string object;  //!< "Pod default/web", "Node n1"; empty when not known
  std::string field;   //!< "spec.containers[0].resources.requests.cpu"; empty for whole objects
  std::string message;
  int line = 0;  //!< 1-based line of the offending node in the file, 0 when unknown

  //! `file: document 3 (Pod default/web): spec...cpu: invalid quantity "abc": ... (line 12)`
  std::string ToString() const;
};

//! A manifest already in memory: its name (used in messages) and text.
struct ManifestSource {
  std::string name;
  std::string text;
};

//! Loads every file ("-" reads standard input) in order, as one cluster.
std::expected<ClusterObjects, LoadError> LoadManifests(const std::vector<std::string>& files,
                                                       const LoadOptions& options = {});

//! Loads manifests already in memory, as one cluster.
std::expected<ClusterObjects, LoadError> LoadManifestSources(const std::vector<ManifestSource>& sources,
                                                             const LoadOptions& options = {});

//! Loads one manifest text; source_name appears in messages. For tests and fuzzing.
std::expected<ClusterObjects, LoadError> LoadManifestsFromString(std::string_view text, std::string_view source_name,
                                                                 const LoadOptions& options = {});

}  // namespace kubesched::api
