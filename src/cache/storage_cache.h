#pragma once
// StorageCache: the scheduler's view of claims, volumes, StorageClasses and the CSI objects, fed
// by its informers (Apply) and read by the volume plugins through framework::StorageLister, with
// upstream's assume cache for PersistentVolumes and PersistentVolumeClaims. Thread-safe: informer
// callbacks write while scheduling cycles read.

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>

#include "framework/storage.h"

namespace kubesched::cache {

class StorageCache final : public framework::StorageLister {
 public:
  //! An informer's add or update (the object's newest version).
  void Apply(const api::StorageObject& object);
  //! An informer's delete.
  void Remove(const api::StorageObject& object);

  // framework::StorageLister
  std::shared_ptr<const api::PersistentVolumeClaim> Claim(std::string_view namespace_,
                                                          std::string_view name) const override;
  std::shared_ptr<const api::PersistentVolume> Volume(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::PersistentVolume>> VolumesOfClass(std::string_view class_name) const override;
  std::shared_ptr<const api::StorageClass> Class(std::string_view name) const override;
  std::shared_ptr<const api::CSINode> CSINodeOf(std::string_view node_name) const override;
  std::shared_ptr<const api::CSIDriver> Driver(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::CSIStorageCapacity>> CapacitiesOfClass(
      std::string_view class_name) const override;
  bool Empty() const override;
  framework::Status AssumeVolume(std::shared_ptr<const api::PersistentVolume> assumed) override;
  framework::Status AssumeClaim(std::shared_ptr<const api::PersistentVolumeClaim> assumed) override;
  void RestoreVolume(std::string_view name) override;
  void RestoreClaim(std::string_view namespace_, std::string_view name) override;
  std::shared_ptr<const api::PersistentVolume> ApiVolume(std::string_view name) const override;
  std::shared_ptr<const api::PersistentVolumeClaim> ApiClaim(std::string_view namespace_,
                                                             std::string_view name) const override;

 private:
  //! The informer's version and, while one is assumed, the assumed version.
  template <typename T>
  struct Entry {
    std::shared_ptr<const T> api;
    std::shared_ptr<const T> assumed;
    const std::shared_ptr<const T>& Latest() const { return assumed ? assumed : api; }
  };
  template <typename T>
  using Map = std::map<std::string, Entry<T>, std::less<>>;

  mutable std::shared_mutex mu_;
  Map<api::PersistentVolumeClaim> claims_;   // by namespace/name; guarded by mu_
  Map<api::PersistentVolume> volumes_;       // by name; guarded by mu_
  Map<api::StorageClass> classes_;           // guarded by mu_
  Map<api::CSINode> csi_nodes_;              // guarded by mu_
  Map<api::CSIDriver> drivers_;              // guarded by mu_
  Map<api::CSIStorageCapacity> capacities_;  // by namespace/name; guarded by mu_
};

//! Whether resourceVersion `a` is older than `b` (numeric where both are, as the store's are).
bool OlderVersion(std::string_view a, std::string_view b);

}  // namespace kubesched::cache
