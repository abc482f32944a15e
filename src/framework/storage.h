#pragma once
// What the scheduler knows of storage: claims, volumes, classes and the CSI objects, as upstream's
// volume plugins read them from informer listers. The scheduler feeds it from its informers;
// plugins read it through Handle::Storage(), never through an API call.

#include <memory>
#include <string_view>
#include <vector>

#include "api/storage_types.h"
#include "framework/status.h"

namespace kubesched::framework {

class StorageLister {
 public:
  virtual ~StorageLister() = default;
  //! The claim `name` in `namespace_`, or null.
  virtual std::shared_ptr<const api::PersistentVolumeClaim> Claim(std::string_view namespace_,
                                                                  std::string_view name) const = 0;
  //! The PersistentVolume `name`, or null.
  virtual std::shared_ptr<const api::PersistentVolume> Volume(std::string_view name) const = 0;
  //! Every PersistentVolume of the class `class_name` ("" : volumes without a class), by name.
  virtual std::vector<std::shared_ptr<const api::PersistentVolume>> VolumesOfClass(
      std::string_view class_name) const = 0;
  //! The StorageClass `name`, or null.
  virtual std::shared_ptr<const api::StorageClass> Class(std::string_view name) const = 0;
  //! The CSINode of node `node_name`, or null.
  virtual std::shared_ptr<const api::CSINode> CSINodeOf(std::string_view node_name) const = 0;
  //! The CSIDriver `name`, or null.
  virtual std::shared_ptr<const api::CSIDriver> Driver(std::string_view name) const = 0;
  //! Every CSIStorageCapacity of the class `class_name`.
  virtual std::vector<std::shared_ptr<const api::CSIStorageCapacity>> CapacitiesOfClass(
      std::string_view class_name) const = 0;
  //! Whether any storage object at all is known: lets plugins skip work on clusters without any.
  virtual bool Empty() const = 0;

  // The assume cache (upstream's AssumeCache for PVs and PVCs): VolumeBinding's Reserve records
  // the bindings it is about to make, so that the next pods' cycles see them before the API does.
  // An assumed object stands until the informer delivers a version at least as new, or Restore.

  //! Replaces the volume (claim) by `assumed` for the readers above. Error when the cache holds
  //! no such object or a newer version than `assumed` was made from (upstream: "out of sync").
  virtual Status AssumeVolume(std::shared_ptr<const api::PersistentVolume> assumed) = 0;
  virtual Status AssumeClaim(std::shared_ptr<const api::PersistentVolumeClaim> assumed) = 0;
  //! Drops an assumed version: readers see the informer's again.
  virtual void RestoreVolume(std::string_view name) = 0;
  virtual void RestoreClaim(std::string_view namespace_, std::string_view name) = 0;
  //! The informer's version of the volume (claim), ignoring what is assumed; null when unknown.
  virtual std::shared_ptr<const api::PersistentVolume> ApiVolume(std::string_view name) const = 0;
  virtual std::shared_ptr<const api::PersistentVolumeClaim> ApiClaim(std::string_view namespace_,
                                                                     std::string_view name) const = 0;
};

//! A lister that knows no object (a cluster without storage, tests of other plugins).
class EmptyStorageLister final : public StorageLister {
 public:
  std::shared_ptr<const api::PersistentVolumeClaim> Claim(std::string_view, std::string_view) const override {
    return nullptr;
  }
  std::shared_ptr<const api::PersistentVolume> Volume(std::string_view) const override { return nullptr; }
  std::vector<std::shared_ptr<const api::PersistentVolume>> VolumesOfClass(std::string_view) const override {
    return {};
  }
  std::shared_ptr<const api::StorageClass> Class(std::string_view) const override { return nullptr; }
  std::shared_ptr<const api::CSINode> CSINodeOf(std::string_view) const override { return nullptr; }
  std::shared_ptr<const api::CSIDriver> Driver(std::string_view) const override { return nullptr; }
  std::vector<std::shared_ptr<const api::CSIStorageCapacity>> CapacitiesOfClass(std::string_view) const override {
    return {};
  }
  bool Empty() const override { return true; }
  Status AssumeVolume(std::shared_ptr<const api::PersistentVolume> assumed) override {
    return Status::Error("PersistentVolume \"" + assumed->metadata.name + "\" not found");
  }
  Status AssumeClaim(std::shared_ptr<const api::PersistentVolumeClaim> assumed) override {
    return Status::Error("PersistentVolumeClaim \"" + assumed->Key() + "\" not found");
  }
  void RestoreVolume(std::string_view) override {}
  void RestoreClaim(std::string_view, std::string_view) override {}
  std::shared_ptr<const api::PersistentVolume> ApiVolume(std::string_view) const override { return nullptr; }
  std::shared_ptr<const api::PersistentVolumeClaim> ApiClaim(std::string_view, std::string_view) const override {
    return nullptr;
  }
};

}  // namespace kubesched::framework
