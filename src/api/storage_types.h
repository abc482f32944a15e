#pragma once
// The storage objects the volume plugins read (core/v1 PersistentVolumeClaim and
// PersistentVolume; storage.k8s.io/v1 StorageClass, CSINode, CSIDriver, CSIStorageCapacity), with
// the fields VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits use and the
// simulated PV controller writes. Names follow the Kubernetes API.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/labels.h"
#include "api/quantity.h"
#include "api/types.h"

namespace kubesched::api {

inline constexpr std::string_view kResourceStorage = "storage";
//! On a claim: the node the scheduler chose for a WaitForFirstConsumer claim (the provisioner
//! creates the volume where that node can reach it).
inline constexpr std::string_view kAnnotationSelectedNode = "volume.kubernetes.io/selected-node";
//! On a claim: the provisioner asked to provision it (set by the PV controller).
inline constexpr std::string_view kAnnotationStorageProvisioner = "volume.kubernetes.io/storage-provisioner";
inline constexpr std::string_view kAnnotationBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner";
//! On a claim and a volume: the PV controller bound them (yes) / the claim was bound by the
//! controller rather than pre-bound by a user.
inline constexpr std::string_view kAnnotationBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnotationBoundByController = "pv.kubernetes.io/bound-by-controller";
//! On a volume: the provisioner that made it.
inline constexpr std::string_view kAnnotationProvisionedBy = "pv.kubernetes.io/provisioned-by";
//! On a StorageClass: it is the default class for claims that name none.
inline constexpr std::string_view kAnnotationDefaultStorageClass = "storageclass.kubernetes.io/is-default-class";
inline constexpr std::string_view kAnnotationBetaDefaultStorageClass =
    "storageclass.beta.kubernetes.io/is-default-class";
//! The provisioner of classes that provision nothing (local volumes, pre-created PVs).
inline constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";
//! Zone and region labels of older clusters, which VolumeZone still reads on volumes.
inline constexpr std::string_view kLabelFailureDomainZone = "failure-domain.beta.kubernetes.io/zone";
inline constexpr std::string_view kLabelFailureDomainRegion = "failure-domain.beta.kubernetes.io/region";

enum class PersistentVolumeAccessMode { kReadWriteOnce, kReadOnlyMany, kReadWriteMany, kReadWriteOncePod };
enum class PersistentVolumeMode { kFilesystem, kBlock };
enum class PersistentVolumeClaimPhase { kPending, kBound, kLost };
enum class PersistentVolumePhase { kPending, kAvailable, kBound, kReleased, kFailed };
enum class VolumeBindingMode { kImmediate, kWaitForFirstConsumer };

struct ObjectReference {
  std::string namespace_;
  std::string name;
  std::string uid;
  bool operator==(const ObjectReference&) const = default;
};

struct PersistentVolumeClaim {
  ObjectMeta metadata;
  std::vector<PersistentVolumeAccessMode> access_modes;
  std::optional<LabelSelector> selector;
  //! spec.resources.requests.storage (zero when absent).
  Quantity request;
  //! spec.volumeName: the volume it is (or is to be) bound to; empty while unbound.
  std::string volume_name;
  //! spec.storageClassName: absent means the default class (set by admission where one exists);
  //! "" means no class (only volumes without a class bind).
  std::optional<std::string> storage_class_name;
  PersistentVolumeMode volume_mode = PersistentVolumeMode::kFilesystem;
  PersistentVolumeClaimPhase phase = PersistentVolumeClaimPhase::kPending;
  //! status.capacity.storage.
  std::optional<Quantity> capacity;
  ObjectJson json;

  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
  std::string_view ClassName() const { return storage_class_name ? std::string_view(*storage_class_name) : ""; }
  bool HasAccessMode(PersistentVolumeAccessMode mode) const;
};

struct PersistentVolume {
  ObjectMeta metadata;
  //! spec.capacity.storage.
  Quantity capacity;
  std::vector<PersistentVolumeAccessMode> access_modes;
  std::optional<ObjectReference> claim_ref;
  std::string storage_class_name;
  //! spec.nodeAffinity.required: the nodes that can reach the volume.
  std::optional<NodeSelector> node_affinity;
  std::string reclaim_policy = "Retain";
  PersistentVolumeMode volume_mode = PersistentVolumeMode::kFilesystem;
  //! spec.csi.driver and spec.csi.volumeHandle.
  std::string csi_driver;
  std::string volume_handle;
  //! An in-tree source (gcePersistentDisk, awsElasticBlockStore, azureDisk, cinder, iscsi, rbd).
  std::optional<InlineDisk> in_tree;
  PersistentVolumePhase phase = PersistentVolumePhase::kPending;
  ObjectJson json;

  bool HasAccessMode(PersistentVolumeAccessMode mode) const;
};

//! A TopologySelectorTerm's matchLabelExpressions: each key's label must have one of its values.
struct TopologySelectorRequirement {
  std::string key;
  std::vector<std::string> values;
  bool operator==(const TopologySelectorRequirement&) const = default;
};

struct StorageClass {
  ObjectMeta metadata;
  std::string provisioner;
  VolumeBindingMode volume_binding_mode = VolumeBindingMode::kImmediate;
  //! allowedTopologies: terms ORed, each term's requirements ANDed; empty allows every node.
  std::vector<std::vector<TopologySelectorRequirement>> allowed_topologies;
  std::string reclaim_policy = "Delete";
  Labels parameters;
  ObjectJson json;

  //! The is-default-class annotation (or its beta form) is "true".
  bool IsDefault() const;
};

struct CSINodeDriver {
  std::string name;
  std::string node_id;
  std::vector<std::string> topology_keys;
  //! allocatable.count: how many of the driver's volumes the node can attach; absent: no limit.
  std::optional<int32_t> allocatable_count;
  bool operator==(const CSINodeDriver&) const = default;
};

struct CSINode {
  ObjectMeta metadata;  // named after its node
  std::vector<CSINodeDriver> drivers;
  ObjectJson json;

  const CSINodeDriver* Driver(std::string_view name) const;
};

struct CSIDriver {
  ObjectMeta metadata;  // named after the driver
  bool attach_required = true;
  //! spec.storageCapacity: the scheduler checks CSIStorageCapacity objects for its classes.
  bool storage_capacity = false;
  ObjectJson json;
};

struct CSIStorageCapacity {
  ObjectMeta metadata;
  std::string storage_class_name;
  //! nodeTopology: the nodes this capacity is for (absent: none).
  std::optional<LabelSelector> node_topology;
  std::optional<Quantity> capacity;
  std::optional<Quantity> maximum_volume_size;
  ObjectJson json;
};

//! One storage object of any of these kinds, as informers hand them to the scheduler.
using StorageObject =
    std::variant<std::shared_ptr<const PersistentVolumeClaim>, std::shared_ptr<const PersistentVolume>,
                 std::shared_ptr<const StorageClass>, std::shared_ptr<const CSINode>, std::shared_ptr<const CSIDriver>,
                 std::shared_ptr<const CSIStorageCapacity>>;

std::string_view ToString(PersistentVolumeAccessMode mode);
std::optional<PersistentVolumeAccessMode> ParseAccessMode(std::string_view text);
//! The CSI driver an in-tree plugin's volumes migrated to (CSIMigration is GA for all of them);
//! empty for iscsi and rbd, which never migrated.
std::string_view MigratedCSIDriver(InlineDiskType type);

}  // namespace kubesched::api
