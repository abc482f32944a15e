#pragma once
// The volume binder behind the VolumeBinding plugin (upstream's volumebinding binder.go, with the
// PV matching helpers of k8s.io/component-helpers/storage/volume and the in-tree → CSI topology
// translation of k8s.io/csi-translation-lib that it relies on):
//   GetPodVolumeClaims (PreFilter): the pod's claims split into bound, unbound WaitForFirstConsumer
//     and unbound immediate ones, with everything about them that does not depend on the node
//     computed once (the volumes each claim could bind, its class's provisioning);
//   FindPodVolumes (Filter, per node): bound volumes' node affinity, a volume for each unbound
//     claim (the smallest that fits) or else dynamic provisioning on that node;
//   AssumePodVolumes / RevertAssumedPodVolumes (Reserve / Unreserve): the chosen bindings and
//     selected-node annotations recorded in the scheduler's assume cache (Handle::Storage());
//   BindPodVolumes (PreBind): the API writes, then the wait for the PV controller to bind.
// The claims and volumes are read through Handle::Storage(), the writes go through
// Handle::client().

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/storage_types.h"
#include "api/types.h"
#include "framework/handle.h"
#include "framework/status.h"
#include "plugins/volume_binding/scorer.h"

namespace kubesched::plugins::volume_binding {

// Upstream's ConflictReason strings: why a node cannot host the pod's volumes.
inline constexpr std::string_view kErrReasonBindConflict = "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view kErrReasonNodeConflict = "node(s) had volume node affinity conflict";
inline constexpr std::string_view kErrReasonNotEnoughSpace = "node(s) did not have enough free storage";
inline constexpr std::string_view kErrReasonPVNotExist =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

//! The deprecated class annotation, which wins over spec.storageClassName where set.
inline constexpr std::string_view kAnnotationBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
//! On a CSINode: the in-tree plugins whose volumes the node mounts through their CSI drivers.
inline constexpr std::string_view kAnnotationMigratedPlugins = "storage.alpha.kubernetes.io/migrated-plugins";

using ClaimPtr = std::shared_ptr<const api::PersistentVolumeClaim>;
using VolumePtr = std::shared_ptr<const api::PersistentVolume>;
using CapacityPtr = std::shared_ptr<const api::CSIStorageCapacity>;

// ---------------------------------------------------------------------------------------------
// Helpers of component-helpers/storage/volume and ephemeral.

//! GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "".
std::string_view ClaimClass(const api::PersistentVolumeClaim& claim);
//! GetPersistentVolumeClass: the beta annotation, else spec.storageClassName.
std::string_view VolumeClass(const api::PersistentVolume& volume);
//! IsVolumeBoundToClaim: the volume's claimRef names the claim (and its uid, when it has one).
bool IsVolumeBoundToClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim);
//! The PV controller has finished binding the claim: spec.volumeName set and the bind-completed
//! annotation present. A claim in phase Bound counts as well: manifests written for `simulate`
//! often give volumeName and status.phase without the annotation the controller would have set.
bool IsClaimFullyBound(const api::PersistentVolumeClaim& claim);
//! CheckAccessModes: the volume offers every access mode the claim asks for.
bool CheckAccessModes(const api::PersistentVolumeClaim& claim, const api::PersistentVolume& volume);
//! ephemeral.VolumeIsForPod: nullopt when the claim is controlled by the pod, else the error.
std::optional<std::string> VolumeIsForPod(const api::Pod& pod, const api::PersistentVolumeClaim& claim);
//! GetBindVolumeToClaim: a copy of the volume with claimRef set to the claim and
//! pv.kubernetes.io/bound-by-controller added when the volume was not pre-bound to it; `dirty`
//! tells whether anything changed.
struct BoundVolume {
  VolumePtr volume;
  bool dirty = false;
};
BoundVolume GetBindVolumeToClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim);
//! MatchTopologySelectorTerms: a StorageClass's allowedTopologies admit the node labels (no terms:
//! every node; a term that is empty or does not parse selects nothing).
bool MatchTopologySelectorTerms(const std::vector<std::vector<api::TopologySelectorRequirement>>& terms,
                                const api::Labels& labels);

//! A volume's spec.nodeAffinity.required, parsed once: CheckNodeAffinity against node labels.
//! As upstream, the node is known by its labels only, so matchFields are not checked; terms that
//! are empty or fail validation never match. Holds pointers into the selector.
class VolumeNodeAffinity {
 public:
  //! No affinity: every node matches.
  VolumeNodeAffinity() = default;
  explicit VolumeNodeAffinity(const std::optional<api::NodeSelector>& affinity);
  bool Matches(const api::Labels& node_labels) const;

 private:
  bool required_ = false;
  std::vector<const api::NodeSelectorTerm*> terms_;
};

//! What CSI migration does to an in-tree volume (csi-translation-lib's TranslateInTreePVToCSI as
//! far as the scheduler looks: the node affinity).
struct CSIMigration {
  //! The in-tree plugin ("kubernetes.io/gce-pd", ...); empty when the volume is not migratable.
  std::string plugin;
  //! The node affinity after translation (zone keys replaced by the CSI driver's topology key).
  std::optional<api::NodeSelector> affinity;
  //! Why the volume cannot be translated (upstream returns it as an error), or empty.
  std::string error;
};
CSIMigration TranslateInTreeVolume(const api::PersistentVolume& volume);
//! isPluginMigratedToCSIOnNode: the CSINode's migrated-plugins annotation lists the plugin.
bool IsPluginMigratedOnNode(std::string_view plugin, const api::CSINode* csi_node);

// ---------------------------------------------------------------------------------------------
// The binder's data.

//! A claim to bind to a pre-provisioned volume.
struct BindingInfo {
  ClaimPtr pvc;
  VolumePtr pv;
  std::string_view StorageClassName() const { return pv->storage_class_name; }
  //! The claim's request and the volume's capacity, in bytes.
  StorageResource Resource() const { return {pvc->request.Value(), pv->capacity.Value()}; }
};

//! A claim to provision, with the CSIStorageCapacity that admitted it on the node (null when the
//! driver does not track capacity).
struct DynamicProvision {
  ClaimPtr pvc;
  CapacityPtr node_capacity;
};

//! What binding the pod's volumes on one node takes.
struct PodVolumes {
  std::vector<BindingInfo> static_bindings;
  std::vector<DynamicProvision> dynamic_provisions;
};

//! Why a node cannot host the pod's volumes, as bits.
enum ConflictReason : uint8_t {
  kNodeConflict = 1 << 0,
  kBindConflict = 1 << 1,
  kNotEnoughSpace = 1 << 2,
  kPVNotExist = 1 << 3,
};
using ConflictReasons = uint8_t;
//! The reasons' messages in upstream's order (node conflict, bind conflict, space, missing PV).
std::vector<std::string> ReasonMessages(ConflictReasons reasons);

//! A bound claim and its volume (null when it does not exist).
struct BoundClaim {
  ClaimPtr claim;
  VolumePtr pv;
  VolumeNodeAffinity affinity;
  //! Set for in-tree volumes that CSI migration translates.
  std::shared_ptr<const CSIMigration> migration;
  VolumeNodeAffinity migrated_affinity;
};

//! A volume an unbound claim could be bound to, wherever the node allows it: it passed every
//! check of FindMatchingVolume that does not depend on the node.
struct VolumeCandidate {
  VolumePtr pv;
  VolumeNodeAffinity affinity;
  //! The volume is pre-bound to the claim (claimRef): it is taken whenever the node allows it.
  bool bound_to_claim = false;
  int64_t capacity = 0;
};

//! What provisioning a claim's class involves, per class.
struct ProvisioningClass {
  std::shared_ptr<const api::StorageClass> storage_class;
  //! The class has a provisioner (not kubernetes.io/no-provisioner).
  bool can_provision = false;
  //! The class's CSI driver opted into capacity tracking (CSIDriver spec.storageCapacity).
  bool capacity_tracked = false;
  std::vector<CapacityPtr> capacities;
};

//! An unbound claim of a WaitForFirstConsumer class.
struct UnboundClaim {
  ClaimPtr claim;
  std::string class_name;
  //! volume.kubernetes.io/selected-node: provisioning was asked for on that node already.
  std::optional<std::string> selected_node;
  std::vector<VolumeCandidate> candidates;
  //! Null when the class does not exist (any more).
  std::shared_ptr<const ProvisioningClass> provisioning;
  //! The class's capacities large enough for the claim's request, when capacity is checked.
  std::vector<CapacityPtr> sufficient_capacities;
  //! Whether provisioning must find a CSIStorageCapacity (the claim requests storage and the
  //! class's driver tracks capacity).
  bool needs_capacity = false;
};

//! The pod's claims, as upstream's PodVolumeClaims with the per-claim work done.
struct PodVolumeClaims {
  std::vector<BoundClaim> bound_claims;
  //! In the order of the pod's volumes.
  std::vector<UnboundClaim> unbound_claims_delay_binding;
  //! Indexes into unbound_claims_delay_binding of the claims without a selected node, by
  //! increasing request: the order volumes are matched in (smallest claims first).
  std::vector<size_t> match_order;
  std::vector<ClaimPtr> unbound_claims_immediate;
};

//! FindPodVolumes' answer for one node: the volumes found (possibly partial) and the reasons the
//! node does not fit (none: it fits).
struct FindResult {
  PodVolumes volumes;
  ConflictReasons reasons = 0;
};

class VolumeBinder {
 public:
  //! `handle` outlives the binder; `bind_timeout_seconds` bounds BindPodVolumes' wait.
  VolumeBinder(framework::Handle& handle, int64_t bind_timeout_seconds)
      : handle_(handle), bind_timeout_seconds_(bind_timeout_seconds) {}

  //! The pod's claims split as upstream's GetPodVolumeClaims (a claim that is not fully bound
  //! and has a volumeName counts as unbound immediate). Error when a claim is missing or an
  //! ephemeral claim is not the pod's.
  std::expected<PodVolumeClaims, std::string> GetPodVolumeClaims(const api::Pod& pod) const;

  //! Whether the node can host the pod's volumes. Safe to call concurrently for different nodes.
  //! Error for what upstream reports as errors (a claim to provision without a class, a volume
  //! CSI migration cannot translate).
  std::expected<FindResult, std::string> FindPodVolumes(const api::Pod& pod, const PodVolumeClaims& claims,
                                                        const api::Node& node) const;

  //! Records the bindings and provisionings for `node_name` in the assume cache and replaces
  //! `volumes` by the assumed objects (what PreBind writes). True when every claim of the pod is
  //! bound already (nothing assumed). On error nothing stays assumed.
  std::expected<bool, std::string> AssumePodVolumes(const api::Pod& pod, const std::string& node_name,
                                                    PodVolumes& volumes) const;
  //! Drops what AssumePodVolumes recorded.
  void RevertAssumedPodVolumes(const PodVolumes& volumes) const;

  //! Writes the bindings and selected-node annotations through the cluster client, then waits
  //! until the PV controller has bound every claim (CheckBindings), at most the bind timeout: on
  //! a virtual clock it checks once (the simulated PV controller acts within the writes), on a
  //! real clock every 100 ms. `node` is the node the pod goes to (its labels are checked against
  //! the bound volumes' affinity). Errors are upstream's ("binding volumes: ...").
  framework::Status BindPodVolumes(const api::Pod& pod, const api::Node* node, const std::string& node_name,
                                   const PodVolumes& volumes) const;

  //! upstream's checkBindings against the informer's objects (not the assumed ones): true when
  //! every claim is fully bound, false while waiting, error when binding failed for good.
  std::expected<bool, std::string> CheckBindings(const api::Node* node, const std::string& node_name,
                                                 const PodVolumes& volumes) const;

 private:
  //! arePodVolumesBound: every claim of the pod is fully bound (assumed versions included).
  bool ArePodVolumesBound(const api::Pod& pod) const;
  void RevertBindings(const std::vector<BindingInfo>& bindings, size_t from) const;
  void RevertProvisions(const std::vector<DynamicProvision>& provisions, size_t from) const;

  framework::Handle& handle_;
  int64_t bind_timeout_seconds_;
};

}  // namespace kubesched::plugins::volume_binding
