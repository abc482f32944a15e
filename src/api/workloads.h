#pragma once
// Expands workload controllers (Deployment, ReplicaSet, ReplicationController, StatefulSet, Job,
// DaemonSet) into the pods their Kubernetes controllers would create: upstream's names, labels,
// owner references and, for DaemonSets, the tolerations and per-node affinity the DaemonSet
// controller adds. A controller whose pods partly exist already (a cluster dump) creates only the
// missing ones.

#include <cstddef>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "api/taints.h"
#include "api/types.h"

namespace kubesched::api {

//! The generator behind every "random" name. std::mt19937_64's output sequence is fixed by the
//! standard, so a given seed gives the same names on every platform.
using Rng = std::mt19937_64;

//! Upstream's utilrand alphabet: no vowels (no accidental words) and no look-alike characters.
inline constexpr std::string_view kNameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";
inline constexpr size_t kNameSuffixLength = 5;
inline constexpr size_t kPodTemplateHashLength = 10;

inline constexpr std::string_view kLabelPodTemplateHash = "pod-template-hash";
inline constexpr std::string_view kLabelStatefulSetPodName = "statefulset.kubernetes.io/pod-name";
inline constexpr std::string_view kLabelPodIndex = "apps.kubernetes.io/pod-index";
inline constexpr std::string_view kLabelControllerRevisionHash = "controller-revision-hash";
inline constexpr std::string_view kLabelJobName = "job-name";
inline constexpr std::string_view kLabelBatchJobName = "batch.kubernetes.io/job-name";
inline constexpr std::string_view kLabelControllerUID = "controller-uid";
inline constexpr std::string_view kLabelBatchControllerUID = "batch.kubernetes.io/controller-uid";
//! Label and annotation of an Indexed Job's pods: the completion index.
inline constexpr std::string_view kLabelJobCompletionIndex = "batch.kubernetes.io/job-completion-index";
//! The only field a node selector's matchFields may name.
inline constexpr std::string_view kFieldNodeName = "metadata.name";

//! n characters drawn from kNameSuffixAlphabet.
std::string RandomString(Rng& rng, size_t n);

//! base + 5 random characters, as the API server's generateName (base cut to 58 characters so
//! the result fits a 63-character name).
std::string GenerateName(std::string_view base, Rng& rng);

//! A UUID-shaped identifier derived from kind, namespace and name, for objects a manifest gives
//! no uid: stable across runs, so owner references and messages are reproducible.
std::string GenerateUID(std::string_view kind, std::string_view namespace_, std::string_view name);

//! A deterministic 10-character hash of a pod template (FNV-1a over a canonical serialisation),
//! used where upstream uses the pod-template-hash label.
std::string ComputePodTemplateHash(const PodTemplateSpec& pod_template);
//! The claim a StatefulSet's pod of `ordinal` uses for the volumeClaimTemplate `template_name`:
//! "<template>-<set>-<ordinal>" (upstream's getPersistentVolumeClaimName).
std::string StatefulSetClaimName(std::string_view template_name, std::string_view set, int64_t ordinal);
//! Points a StatefulSet pod's volumes at its claims: for each of `statefulset`'s
//! volumeClaimTemplates (the object as JSON), a volume of the template's name using
//! StatefulSetClaimName for the pod's ordinal (its pod-index label), replacing a template volume of
//! that name (upstream's updateStorage).
void UseStatefulSetClaims(Pod& pod, const json::Value& statefulset);

//! `<deployment>-<pod-template-hash>`: the ReplicaSet a Deployment's pods belong to.
std::string ReplicaSetNameForDeployment(const Workload& deployment);

//! The tolerations the DaemonSet controller adds to every daemon pod (not-ready and unreachable
//! NoExecute; disk-, memory-, pid-pressure and unschedulable NoSchedule; network-unavailable
//! NoSchedule for host-network pods).
std::vector<Toleration> DaemonSetTolerations(bool host_network);

//! What decides which nodes a DaemonSet's pods run on, read once per template: the loader builds it
//! from a typed PodSpec, the store's DaemonSet controller from the template's JSON.
struct DaemonPodPlacement {
  std::string node_name;  //!< spec.nodeName, empty when unset
  Labels node_selector;
  //! The required node affinity, when the template has one (no terms: matches no node).
  std::optional<NodeSelector> required;
  //! The template's tolerations followed by DaemonSetTolerations.
  std::vector<Toleration> tolerations;
};

DaemonPodPlacement DaemonPodPlacementOf(const PodSpec& spec);

struct DaemonPodVerdict {
  bool should_run = false;       //!< a daemon pod should be created on the node
  bool should_continue = false;  //!< a daemon pod already there may stay
};

//! Upstream's NodeShouldRunDaemonPod: nodeName, node selector and required node affinity must
//! match, and every NoSchedule and NoExecute taint be tolerated to run; a pod already there may
//! stay unless a NoExecute taint is not tolerated.
DaemonPodVerdict EvaluateDaemonPod(const DaemonPodPlacement& placement, std::string_view node_name,
                                   const std::vector<Labels::Entry>& sorted_node_labels,
                                   std::span<const Taint> node_taints);

//! Whether the DaemonSet controller would run a daemon pod on this node (EvaluateDaemonPod's
//! should_run).
bool DaemonSetShouldRunOnNode(const Workload& daemon_set, const Node& node);

//! The node a daemon pod is pinned to through its matchFields metadata.name affinity, or "".
std::string DaemonPodTargetNode(const Pod& pod);

//! What the API server does to matchLabelKeys / mismatchLabelKeys when a pod is created: each key
//! the pod has as a label becomes an In (mismatch: NotIn) requirement on the term's label
//! selector, for pod (anti-)affinity terms and topology spread constraints. Terms without a label
//! selector are left alone (they match nothing anyway). The key lists themselves are kept.
void ApplyMatchLabelKeys(Pod& pod);

//! The pods a workload's controller creates: Deployment → pods of ReplicaSet
//! `<name>-<hash>` named `<rs>-<5 chars>`; ReplicaSet and ReplicationController → `<name>-<5 chars>`;
//! StatefulSet → `<name>-0` … `<name>-(N-1)`; Job → min(parallelism, completions) pods
//! `<job>-<5 chars>` (Indexed: `<job>-<index>-<5 chars>` with indexes 0 … n-1 in the
//! job-completion-index label and annotation; suspended: none); DaemonSet → one pod
//! `<ds>-<5 chars>` per node DaemonSetShouldRunOnNode accepts, pinned to it by a required node
//! affinity on metadata.name (as the DaemonSet controller does, not nodeName).
//! `owned` are the workload's pods that exist already (controlled by it): they count as its
//! controller counts them, and only the rest is created. Active pods (not Succeeded, Failed or
//! deleting) fill replicas; StatefulSet ordinals and Indexed Job indexes that exist are not created
//! again; a DaemonSet skips nodes that have its pod; a Job's succeeded pods count against
//! completions and its active ones against parallelism.
//! Pods carry the template's labels and annotations plus the controller's labels, the workload's
//! namespace, a deterministic uid and a controller owner reference. Names are unique within one
//! call; creation_index and timestamps are left for the caller.
std::vector<std::shared_ptr<Pod>> ExpandWorkload(const Workload& workload,
                                                 const std::vector<std::shared_ptr<const Node>>& nodes, Rng& rng,
                                                 const std::vector<const Pod*>& owned = {});

//! One new pod for a workload, as its controller creates when one of its pods goes away. When
//! `replaced` is given it keeps that pod's identity where the controller would: a StatefulSet
//! pod gets the same name and ordinal, an Indexed Job's pod the same index, a DaemonSet pod the
//! same target node. Without it a StatefulSet pod gets ordinal 0, an Indexed Job's pod index 0 and
//! a DaemonSet pod no node pinning.
std::shared_ptr<Pod> NewPodForWorkload(const Workload& workload, Rng& rng, const Pod* replaced = nullptr);

}  // namespace kubesched::api
