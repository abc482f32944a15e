#pragma once
// The storage kinds in the store: PersistentVolumeClaim and PersistentVolume (core/v1),
// StorageClass, CSINode, CSIDriver and CSIStorageCapacity (storage.k8s.io/v1), with upstream's
// defaults, the DefaultStorageClass admission plugin, and typed views through the codec.

#include <optional>

#include "store/store.h"

namespace kubesched::store {

ResourceType PersistentVolumeClaims();
ResourceType PersistentVolumes();
ResourceType StorageClasses();
ResourceType CSINodes();
ResourceType CSIDrivers();
ResourceType CSIStorageCapacities();

//! DefaultStorageClass admission: a claim that names no class (spec.storageClassName absent) gets
//! the default StorageClass's name, the newest when several are marked default; none when there
//! is no default class.
std::optional<Error> AdmitDefaultStorageClass(api::json::Document& claim, const ObjectReader& reader);

}  // namespace kubesched::store
