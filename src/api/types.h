#pragma once
// The Kubernetes objects kubesched reads, holding the fields the scheduler and the simulated
// cluster use. Names follow the Kubernetes API (core/v1, apps/v1, batch/v1, scheduling/v1,
// policy/v1) so a reader can map each field to its manifest path.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/labels.h"
#include "api/quantity.h"

namespace kubesched::api {

//! Resource name → quantity, as v1.ResourceList. Ordered for deterministic output.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";
inline constexpr std::string_view kHugePagesPrefix = "hugepages-";

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kLabelTopologyRegion = "topology.kubernetes.io/region";
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
inline constexpr std::string_view kNamespaceDefault = "default";
//! The pod label that makes a pod a member of a scheduler-plugins PodGroup
//! (scheduling.x-k8s.io/v1alpha1, the Coscheduling plugin's) in its namespace.
inline constexpr std::string_view kLabelCoschedulingPodGroup = "scheduling.x-k8s.io/pod-group";
//! Scenario timeline of `kubesched simulate`: on a Pod or Node, a Go duration after the start of
//! the simulation at which the object is created (it does not exist before) or deleted.
inline constexpr std::string_view kAnnotationCreateAfter = "simulate.kubesched.io/create-after";
inline constexpr std::string_view kAnnotationDeleteAfter = "simulate.kubesched.io/delete-after";
//! On a Pod (or a Job's pod template) whose restartPolicy is Never or OnFailure: a Go duration
//! after it starts at which its containers exit 0 and it Succeeds (there is no kubelet to run
//! them), so Jobs complete in `simulate` and in the API test bed.
inline constexpr std::string_view kAnnotationRunFor = "simulate.kubesched.io/run-for";
//! spec.terminationGracePeriodSeconds when the manifest leaves it out (the API server's default).
inline constexpr int64_t kDefaultTerminationGracePeriodSeconds = 30;
inline constexpr std::string_view kNamespaceSystem = "kube-system";

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string uid;
  Labels labels;
  Labels annotations;
  std::vector<OwnerReference> owner_references;
  //! Creation time in nanoseconds on the scheduler's clock (virtual in simulate).
  int64_t creation_timestamp_ns = 0;
  std::optional<int64_t> deletion_timestamp_ns;
  //! Position in creation order (the manifest loader numbers objects in document order), so
  //! objects created at the same timestamp still have a stable, meaningful order.
  int64_t creation_index = 0;
  //! The store's version of the object (opaque; empty before the object is stored).
  std::string resource_version;
  int64_t generation = 0;
  std::optional<int64_t> deletion_grace_period_seconds;
  std::vector<std::string> finalizers;
};

//! An object's full JSON (compact, every field kept, modelled or not) at the version the typed
//! fields were decoded from, after defaulting. Shared and immutable: a new version gets a new
//! string. Null for objects built in code (tests, `kubesched bench`): encode those from the
//! typed fields (api/encode.h).
using ObjectJson = std::shared_ptr<const std::string>;

// ---------------------------------------------------------------------------------------------
// Nodes

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Taint&) const = default;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct NodeCondition {
  std::string type;    // Ready, MemoryPressure, ...
  std::string status;  // True, False, Unknown
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;  // defaulted to capacity when absent
  std::vector<ContainerImage> images;
  std::vector<NodeCondition> conditions;
  //! status.declaredFeatures (NodeDeclaredFeatures): the features the node's kubelet declares it
  //! supports, sorted.
  std::vector<std::string> declared_features;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
  ObjectJson json;
};

// ---------------------------------------------------------------------------------------------
// Pods

enum class TolerationOperator { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with Exists matches every key
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // absent matches every effect
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

struct ContainerPort {
  std::string name;
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0: not a host port
  std::string protocol = "TCP";
  std::string host_ip;  // empty means 0.0.0.0
  bool operator==(const ContainerPort&) const = default;
};

//! resources.claims[]: one of the pod's resourceClaims (by its name in the pod), and optionally
//! one request of it, this container uses.
struct ResourceClaimUse {
  std::string name;
  std::string request;
  bool operator==(const ResourceClaimUse&) const = default;
};

struct ResourceRequirements {
  ResourceList requests;  // defaulted from limits per resource when absent
  ResourceList limits;
  std::vector<ResourceClaimUse> claims;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  //! Only for init containers: "Always" makes it a restartable sidecar.
  std::optional<std::string> restart_policy;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  // absent matches no pod
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  bool operator==(const Affinity&) const = default;
};

enum class UnsatisfiableConstraintAction { kDoNotSchedule, kScheduleAnyway };
enum class NodeInclusionPolicy { kIgnore, kHonor };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  UnsatisfiableConstraintAction when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::optional<NodeInclusionPolicy> node_affinity_policy;  // default Honor
  std::optional<NodeInclusionPolicy> node_taints_policy;    // default Ignore
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

enum class PreemptionPolicy { kPreemptLowerPriority, kNever };

//! The in-tree volume plugins whose disks the scheduler reasons about: VolumeRestrictions
//! (conflicting disks on one node) and NodeVolumeLimits (attach limits, counted for the CSI driver
//! each migrated to).
enum class InlineDiskType { kGCEPersistentDisk, kAWSElasticBlockStore, kAzureDisk, kCinder, kISCSI, kRBD };

//! A disk named in a pod's volume (or a PersistentVolume's source) by an in-tree plugin.
struct InlineDisk {
  InlineDiskType type = InlineDiskType::kGCEPersistentDisk;
  //! gcePersistentDisk.pdName, awsElasticBlockStore.volumeID, azureDisk.diskURI, cinder.volumeID,
  //! iscsi.iqn, rbd.image.
  std::string id;
  std::string pool;                   //!< rbd.pool (default "rbd")
  std::vector<std::string> monitors;  //!< rbd.monitors
  bool read_only = false;
  bool operator==(const InlineDisk&) const = default;
};

//! One of spec.volumes, with the sources the scheduler reads (configMap, secret, emptyDir, ...
//! need nothing from it and leave every field empty).
struct Volume {
  std::string name;
  //! persistentVolumeClaim.claimName; empty otherwise (an ephemeral volume's claim is named after
  //! its pod: ClaimNameOf).
  std::string claim_name;
  bool claim_read_only = false;
  //! ephemeral.volumeClaimTemplate: the claim is the pod's own (created for it, owned by it).
  bool ephemeral = false;
  //! ephemeral.volumeClaimTemplate as written (metadata and spec), for the controller creating it.
  std::shared_ptr<const std::string> claim_template_json;
  std::optional<InlineDisk> disk;
  //! csi.driver of an inline CSI volume.
  std::string csi_driver;
  bool operator==(const Volume&) const = default;
};

//! spec.resourceClaims[]: a ResourceClaim the pod uses, named in the pod by `name`; either an
//! existing claim (resource_claim_name) or one made for the pod from a template.
struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const PodResourceClaim&) const = default;
};

//! status.resourceClaimStatuses[]: the claim made for a pod's template entry (absent name: none
//! was needed).
struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

struct PodSpec {
  std::string node_name;
  Labels node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::string scheduler_name = std::string(kDefaultSchedulerName);
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::optional<PreemptionPolicy> preemption_policy;
  std::vector<std::string> scheduling_gates;
  //! spec.schedulingGroup.podGroupName: the PodGroup (scheduling.k8s.io) this pod is a member
  //! of, in its namespace; empty when it belongs to none.
  std::string pod_group;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  //! Pod-level resources (spec.resources, the PodLevelResources feature): requests and limits for
  //! cpu, memory and hugepages that apply to the pod as a whole.
  std::optional<ResourceRequirements> resources;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  //! spec.volumes (ephemeral claims named once the pod's name is known).
  std::vector<Volume> volumes;
  std::vector<PodResourceClaim> resource_claims;
  bool host_network = false;
  //! spec.terminationGracePeriodSeconds; unset means kDefaultTerminationGracePeriodSeconds.
  std::optional<int64_t> termination_grace_period_seconds;

  int64_t TerminationGracePeriodSeconds() const {
    return termination_grace_period_seconds.value_or(kDefaultTerminationGracePeriodSeconds);
  }
};

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
};

struct PodStatus {
  PodPhase phase = PodPhase::kPending;
  std::string nominated_node_name;
  std::vector<PodCondition> conditions;
  std::optional<int64_t> start_time_ns;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  ObjectJson json;

  //! "namespace/name", the key upstream uses in messages and maps.
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
  //! The effective priority (spec.priority, 0 when unset).
  int32_t Priority() const { return spec.priority.value_or(0); }
};

// ---------------------------------------------------------------------------------------------
// Other cluster objects

struct Namespace {
  ObjectMeta metadata;
  ObjectJson json;
};

struct PriorityClass {
  ObjectMeta metadata;
  int32_t value = 0;
  bool global_default = false;
  std::optional<PreemptionPolicy> preemption_policy;
  ObjectJson json;
};

struct PodDisruptionBudget {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;
  //! minAvailable / maxUnavailable: an integer or a percentage ("50%").
  std::optional<std::string> min_available;
  std::optional<std::string> max_unavailable;
  ObjectJson json;
};

//! How a PodGroup's members are scheduled (spec.schedulingPolicy: exactly one of basic, gang).
enum class PodGroupPolicy { kBasic, kGang };

//! The API a PodGroup comes from: upstream's workload-aware scheduling (scheduling.k8s.io/v1alpha2,
//! members name it in spec.schedulingGroup.podGroupName, the GangScheduling plugin's) or the
//! scheduler-plugins CRD (scheduling.x-k8s.io/v1alpha1, members carry the label
//! kLabelCoschedulingPodGroup, the Coscheduling plugin's).
enum class PodGroupApi { kScheduling, kCoscheduling };

//! spec.disruptionMode of a scheduling.k8s.io PodGroup (KEP-5710): whether preemption may take
//! its pods one by one ("Pod", the default) or only all of them at once ("PodGroup").
enum class DisruptionMode { kPod, kPodGroup };

//! A PodGroup: a group of pods the scheduler places together, of either API (PodGroupApi).
struct PodGroup {
  ObjectMeta metadata;
  PodGroupApi api = PodGroupApi::kScheduling;
  PodGroupPolicy policy = PodGroupPolicy::kBasic;
  //! gang.minCount: the members that must be placed at once for any to be (1 for basic).
  int32_t min_count = 1;
  //! schedulingConstraints.topology[0].key: the node label whose one domain (a rack, a zone)
  //! must hold every member; empty without a topology constraint.
  std::string topology_key;
  //! spec.podGroupTemplateRef.workload: the Workload and template it was made from, if any.
  std::string workload_name;
  std::string template_name;
  //! scheduling.k8s.io only (KEP-5710): spec.disruptionMode, spec.priorityClassName and
  //! spec.priority (admission resolves the class, as for pods). The group's priority stands for
  //! its pods' in workload-aware preemption, as preemptor and as victim.
  DisruptionMode disruption_mode = DisruptionMode::kPod;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  //! scheduler-plugins only (its policy is always a gang of minMember): spec.scheduleTimeoutSeconds,
  //! how long members wait at Permit for the rest (unset: the plugin's permitWaitingTimeSeconds),
  //! and spec.minResources, what the cluster must have free in all for the group to be tried.
  std::optional<int32_t> schedule_timeout_seconds;
  ResourceList min_resources;
  ObjectJson json;

  //! "namespace/name".
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
  //! "scheduling.k8s.io/v1alpha2" or "scheduling.x-k8s.io/v1alpha1".
  std::string_view ApiVersion() const {
    return api == PodGroupApi::kScheduling ? "scheduling.k8s.io/v1alpha2" : "scheduling.x-k8s.io/v1alpha1";
  }
};

//! The name of the PodGroup of `api` that `pod` is a member of; empty when none.
std::string_view PodGroupOf(const Pod& pod, PodGroupApi api);

//! The pod template shared by the workload controllers.
struct PodTemplateSpec {
  ObjectMeta metadata;
  PodSpec spec;
};

enum class CompletionMode { kNonIndexed, kIndexed };

//! A workload controller (Deployment, ReplicaSet, ReplicationController, StatefulSet, Job,
//! DaemonSet, CronJob) as read from a manifest; expanded into pods by the loader and re-expanded by
//! the simulated cluster when one of its pods is evicted.
struct Workload {
  // "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "DaemonSet", "CronJob"
  std::string kind;
  ObjectMeta metadata;
  int32_t replicas = 1;     // Deployment, ReplicaSet, ReplicationController, StatefulSet; Job: parallelism
  int32_t completions = 1;  // Job only
  bool suspend = false;     // Job only: a suspended Job creates no pods
  CompletionMode completion_mode = CompletionMode::kNonIndexed;  // Job only
  //! ReplicationController: its plain selector map as matchLabels.
  std::optional<LabelSelector> selector;
  //! CronJob: spec.jobTemplate.spec.template.
  PodTemplateSpec template_;
  ObjectJson json;
};

//! The claim a pod's volume uses: persistentVolumeClaim.claimName, "<pod name>-<volume name>" for
//! a generic ephemeral volume; empty for a volume without a claim.
std::string ClaimNameOf(const Pod& pod, const Volume& volume);

std::string_view ToString(TaintEffect effect);
//! "NoSchedule", "PreferNoSchedule", "NoExecute"; nullopt for anything else.
std::optional<TaintEffect> ParseTaintEffect(std::string_view text);
std::string_view ToString(PodPhase phase);

}  // namespace kubesched::api
