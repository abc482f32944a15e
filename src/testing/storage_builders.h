#pragma once
// Builders for storage objects in tests, as upstream's st.MakePersistentVolume() and friends:
//   auto pvc = MakePVC().Name("data").Namespace("ns").Class("fast").Request("1Gi").Obj();
//   auto pv = MakePV().Name("pv1").Capacity("5Gi").Class("fast").NodeAffinityIn(kZone, {"a"}).Obj();

#include <memory>
#include <string>
#include <vector>

#include "api/storage_types.h"

namespace kubesched::testing {

class PVCBuilder {
 public:
  PVCBuilder();
  PVCBuilder& Name(std::string name);
  PVCBuilder& Namespace(std::string ns);
  PVCBuilder& UID(std::string uid);
  PVCBuilder& Class(std::string class_name);
  PVCBuilder& NoClass();  //!< storageClassName absent
  PVCBuilder& Request(std::string quantity);
  PVCBuilder& AccessModes(std::vector<api::PersistentVolumeAccessMode> modes);
  PVCBuilder& VolumeName(std::string volume_name);  //!< spec.volumeName
  PVCBuilder& Bound(std::string volume_name);       //!< spec.volumeName and phase Bound
  PVCBuilder& Phase(api::PersistentVolumeClaimPhase phase);
  PVCBuilder& Annotation(std::string key, std::string value);
  PVCBuilder& ResourceVersion(std::string version);
  PVCBuilder& Selector(api::LabelSelector selector);
  api::PersistentVolumeClaim& Mutable() { return *pvc_; }
  std::shared_ptr<api::PersistentVolumeClaim> Obj() const;

 private:
  std::shared_ptr<api::PersistentVolumeClaim> pvc_;
};

class PVBuilder {
 public:
  PVBuilder();
  PVBuilder& Name(std::string name);
  PVBuilder& Class(std::string class_name);
  PVBuilder& Capacity(std::string quantity);
  PVBuilder& AccessModes(std::vector<api::PersistentVolumeAccessMode> modes);
  PVBuilder& ClaimRef(std::string namespace_, std::string name, std::string uid = "");
  PVBuilder& Phase(api::PersistentVolumePhase phase);
  PVBuilder& Label(std::string key, std::string value);
  PVBuilder& Annotation(std::string key, std::string value);
  //! spec.nodeAffinity.required with one term requiring `key` In `values`.
  PVBuilder& NodeAffinityIn(std::string key, std::vector<std::string> values);
  PVBuilder& NodeAffinity(api::NodeSelector selector);
  PVBuilder& CSI(std::string driver, std::string volume_handle);
  PVBuilder& InTree(api::InlineDisk disk);
  PVBuilder& ResourceVersion(std::string version);
  api::PersistentVolume& Mutable() { return *pv_; }
  std::shared_ptr<api::PersistentVolume> Obj() const;

 private:
  std::shared_ptr<api::PersistentVolume> pv_;
};

class StorageClassBuilder {
 public:
  StorageClassBuilder();
  StorageClassBuilder& Name(std::string name);
  StorageClassBuilder& Provisioner(std::string provisioner);
  StorageClassBuilder& WaitForFirstConsumer();
  StorageClassBuilder& Immediate();
  //! One allowedTopologies term with one requirement.
  StorageClassBuilder& AllowedTopology(std::string key, std::vector<std::string> values);
  StorageClassBuilder& Default();
  std::shared_ptr<api::StorageClass> Obj() const;

 private:
  std::shared_ptr<api::StorageClass> sc_;
};

//! A CSINode for `node_name` with one driver per entry (name, allocatable count or -1 for none).
std::shared_ptr<api::CSINode> MakeCSINode(std::string node_name, std::vector<std::pair<std::string, int32_t>> drivers);
std::shared_ptr<api::CSIDriver> MakeCSIDriver(std::string name, bool storage_capacity = false,
                                              bool attach_required = true);
//! A CSIStorageCapacity of `class_name` for nodes with label key=value.
std::shared_ptr<api::CSIStorageCapacity> MakeCapacity(std::string name, std::string class_name, std::string key,
                                                      std::string value, std::string capacity);

inline PVCBuilder MakePVC() { return PVCBuilder(); }
inline PVBuilder MakePV() { return PVBuilder(); }
inline StorageClassBuilder MakeStorageClass() { return StorageClassBuilder(); }

}  // namespace kubesched::testing
