#include "api/storage_types.h"

#include <algorithm>

namespace kubesched::api {

bool PersistentVolumeClaim::HasAccessMode(PersistentVolumeAccessMode mode) const {
  return std::find(access_modes.begin(), access_modes.end(), mode) != access_modes.end();
}

bool PersistentVolume::HasAccessMode(PersistentVolumeAccessMode mode) const {
  return std::find(access_modes.begin(), access_modes.end(), mode) != access_modes.end();
}

bool StorageClass::IsDefault() const {
  const std::string* v = metadata.annotations.Find(kAnnotationDefaultStorageClass);
  if (v == nullptr) v = metadata.annotations.Find(kAnnotationBetaDefaultStorageClass);
  return v != nullptr && *v == "true";
}

const CSINodeDriver* CSINode::Driver(std::string_view name) const {
  for (const CSINodeDriver& d : drivers) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string_view ToString(PersistentVolumeAccessMode mode) {
  switch (mode) {
    case PersistentVolumeAccessMode::kReadWriteOnce:
      return "ReadWriteOnce";
    case PersistentVolumeAccessMode::kReadOnlyMany:
      return "ReadOnlyMany";
    case PersistentVolumeAccessMode::kReadWriteMany:
      return "ReadWriteMany";
    case PersistentVolumeAccessMode::kReadWriteOncePod:
      return "ReadWriteOncePod";
  }
  return "";
}

std::optional<PersistentVolumeAccessMode> ParseAccessMode(std::string_view text) {
  for (auto mode : {PersistentVolumeAccessMode::kReadWriteOnce, PersistentVolumeAccessMode::kReadOnlyMany,
                    PersistentVolumeAccessMode::kReadWriteMany, PersistentVolumeAccessMode::kReadWriteOncePod}) {
    if (ToString(mode) == text) return mode;
  }
  return std::nullopt;
}

std::string_view MigratedCSIDriver(InlineDiskType type) {
  switch (type) {
    case InlineDiskType::kGCEPersistentDisk:
      return "pd.csi.storage.gke.io";
    case InlineDiskType::kAWSElasticBlockStore:
      return "ebs.csi.aws.com";
    case InlineDiskType::kAzureDisk:
      return "disk.csi.azure.com";
    case InlineDiskType::kCinder:
      return "cinder.csi.openstack.org";
    case InlineDiskType::kISCSI:
    case InlineDiskType::kRBD:
      return "";
  }
  return "";
}

}  // namespace kubesched::api
