#pragma once
// Loads cluster objects from Kubernetes manifests: multi-document YAML or JSON files, `kind: List`
// included, read as kubectl reads them. Applies the defaulting the API server (and kubelet) would,
// validates what the scheduler relies on and (as kubectl's --validate=strict) every field against
// the kinds' schemas, resolves pod priorities from PriorityClasses, and expands workloads into the
// pods their controllers would create. Kinds kubesched does not simulate (Services, ConfigMaps,
// RBAC, custom resources, ...) are skipped with a warning. Loading is all-or-error: any problem
// yields one LoadError naming file, document, object and field, and nothing is half-loaded.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource_types.h"
#include "api/storage_types.h"
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

//! A KubeSchedulerConfiguration document found among the manifests (a scenario's configuration):
//! kept as text for the configuration loader, which lies above the API layer.
struct EmbeddedConfiguration {
  std::string source;  //!< "scenario.yaml document 7" (an item of a List: "... items[2]")
  std::string text;    //!< the document, YAML or JSON
};

struct ClusterObjects {
  std::vector<std::shared_ptr<Node>> nodes;
  //! Explicit pods and the pods expanded from workloads, in manifest order (a workload's pods sit
  //! at its position).
  std::vector<std::shared_ptr<Pod>> pods;
  //! Declared namespaces, then any namespace an object uses without declaring it.
  std::vector<std::shared_ptr<Namespace>> namespaces;
  std::vector<std::shared_ptr<PriorityClass>> priority_classes;
  std::vector<std::shared_ptr<PodDisruptionBudget>> pdbs;
  std::vector<std::shared_ptr<PodGroup>> pod_groups;
  //! PersistentVolumeClaims, PersistentVolumes, StorageClasses and the CSI objects, in manifest
  //! order (StorageClasses are what claims need first; the simulated cluster stores them in order).
  std::vector<StorageObject> storage;
  //! DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates (resource.k8s.io),
  //! in manifest order.
  std::vector<ResourceObject> resources;
  //! Deployments, ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets and Jobs (not
  //! CronJobs, which create nothing in a snapshot).
  std::vector<std::shared_ptr<Workload>> workloads;
  //! What the user should know about the input that is not an error, one message each, without a
  //! "warning: " prefix: kinds skipped, CronJobs, what is not simulated, fields reported under
  //! FieldValidation::kWarn.
  std::vector<std::string> warnings;
  //! Objects in the input, skipped ones included (0: the input had no objects at all).
  size_t object_count = 0;
  //! KubeSchedulerConfiguration documents (kubescheduler.config.k8s.io), in input order: what a
  //! scenario file says to schedule with (simulate uses them when no --config is given).
  std::vector<EmbeddedConfiguration> scheduler_configurations;
};

//! What to do with unknown fields, duplicate keys and misshapen fields (kubectl's --validate).
enum class FieldValidation {
  kStrict,  //!< an error, as kubectl's default --validate=strict
  kWarn,    //!< a warning each (ClusterObjects.warnings), and go on
  kIgnore,  //!< not checked (fields kubesched reads are checked all the same)
};

struct LoadOptions {
  //! Seeds generateName suffixes and workload pod names: the same seed gives the same names.
  uint64_t seed = 1;
  //! Expand workloads into pods (ClusterObjects.workloads is filled either way).
  bool expand_workloads = true;
  //! Warn of the kinds skipped as not simulated (`simulate`'s view; the API test bed stores every
  //! kind it serves and warns of the others itself).
  bool warn_skipped_kinds = true;
  //! Creation timestamp given to every loaded object (the scheduler's clock at load time).
  int64_t creation_timestamp_ns = 0;
  //! Upper bound on pods (explicit plus generated), so a stray `replicas: 100000000` fails with a
  //! message instead of exhausting memory.
  size_t max_pods = 1'000'000;
  FieldValidation field_validation = FieldValidation::kStrict;
  //! LoadManifests: descend into the subdirectories of a directory given as a path (kubectl -R).
  bool recursive = false;
  //! The namespace of namespaced objects that name none (kubectl's -n/--namespace); an object
  //! naming another one is an error, as kubectl's. Empty: "default", and any namespace goes.
  std::string namespace_;
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

//! Loads every path in order, as one cluster, as `kubectl apply -f` reads them: "-" is standard
//! input; a directory stands for its *.yaml, *.yml and *.json files in name order (and, with
//! options.recursive, its subdirectories' in the same walk); any other path is a file.
std::expected<ClusterObjects, LoadError> LoadManifests(const std::vector<std::string>& files,
                                                       const LoadOptions& options = {});

//! Loads manifests already in memory, as one cluster.
std::expected<ClusterObjects, LoadError> LoadManifestSources(const std::vector<ManifestSource>& sources,
                                                             const LoadOptions& options = {});

//! Loads one manifest text; source_name appears in messages. For tests and fuzzing.
std::expected<ClusterObjects, LoadError> LoadManifestsFromString(std::string_view text, std::string_view source_name,
                                                                 const LoadOptions& options = {});

}  // namespace kubesched::api
