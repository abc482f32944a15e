#pragma once
// DraCache: the scheduler's view of DeviceClasses, ResourceSlices and ResourceClaims, fed by its
// informers (Apply/Remove) and read by the DynamicResources plugin through framework::DraLister,
// with upstream's assume cache for claims and its allocated-devices tracker kept up to date on
// every change (so a cycle reads the allocated state without walking every claim). Thread-safe:
// informer callbacks write while scheduling cycles read.

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "framework/dra.h"

namespace kubesched::cache {

class DraCache final : public framework::DraLister {
 public:
  DraCache();

  //! An informer's add or update (the object's newest version).
  void Apply(const api::ResourceObject& object);
  //! An informer's delete.
  void Remove(const api::ResourceObject& object);

  // framework::DraLister
  std::shared_ptr<const api::ResourceClaim> Claim(std::string_view namespace_, std::string_view name) const override;
  std::shared_ptr<const api::DeviceClass> Class(std::string_view name) const override;
  std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> Slices() const override;
  std::shared_ptr<const framework::AllocatedState> Allocated() const override;
  bool Empty() const override;
  framework::Status AssumeClaim(std::shared_ptr<const api::ResourceClaim> assumed) override;
  void RestoreClaim(std::string_view namespace_, std::string_view name) override;
  std::shared_ptr<const api::ResourceClaim> ApiClaim(std::string_view namespace_, std::string_view name) const override;

 private:
  struct ClaimEntry {
    std::shared_ptr<const api::ResourceClaim> api;
    std::shared_ptr<const api::ResourceClaim> assumed;
    const std::shared_ptr<const api::ResourceClaim>& Latest() const { return assumed ? assumed : api; }
  };
  //! Replaces what the claim's latest version contributes to the allocated state (mu_ held).
  void SetLatest(ClaimEntry& entry, const std::shared_ptr<const api::ResourceClaim>& before);
  //! The allocated state to modify: copied first when a reader holds the current snapshot.
  framework::AllocatedState& MutableAllocated();

  mutable std::shared_mutex mu_;
  std::map<std::string, ClaimEntry, std::less<>> claims_;  // by namespace/name; guarded by mu_
  std::map<std::string, std::shared_ptr<const api::DeviceClass>, std::less<>> classes_;   // guarded by mu_
  std::map<std::string, std::shared_ptr<const api::ResourceSlice>, std::less<>> slices_;  // guarded by mu_
  //! Snapshots handed to readers: rebuilt (slices) or copied (allocated) only after a change.
  mutable std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> slice_list_;  // guarded by mu_
  std::shared_ptr<framework::AllocatedState> allocated_;                                              // guarded by mu_
};

}  // namespace kubesched::cache
