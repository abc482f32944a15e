#pragma once
// What the scheduler knows of Dynamic Resource Allocation: DeviceClasses, ResourceSlices and
// ResourceClaims from its informers, the claims' assume cache, and the devices allocated in the
// cluster (upstream's DRA manager: its ResourceClaim tracker and allocated-devices tracker). The
// DynamicResources plugin reads it through Handle::Dra(), never through an API call.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource_types.h"
#include "framework/status.h"

namespace kubesched::framework {

//! A device of a pool of a driver (upstream's DeviceID).
struct DeviceId {
  std::string driver;
  std::string pool;
  std::string device;
  auto operator<=>(const DeviceId&) const = default;
};

//! One allocation of a device that allows multiple allocations (upstream's SharedDeviceID).
struct SharedDeviceId {
  DeviceId device;
  std::string share_id;
  auto operator<=>(const SharedDeviceId&) const = default;
};

//! What is allocated in the cluster (upstream's AllocatedState): the claims allocated in the API
//! plus those the scheduler has assumed (Reserve) and not yet written.
struct AllocatedState {
  //! Devices allocated exclusively (allowMultipleAllocations unset), admin-access allocations
  //! excluded (they do not take the device).
  std::set<DeviceId> allocated_devices;
  //! Allocations of devices that allow multiple allocations.
  std::set<SharedDeviceId> allocated_shared_devices;
  //! The capacity consumed on devices that allow multiple allocations, summed over their
  //! allocations (upstream's AggregatedCapacity).
  std::map<DeviceId, std::map<api::QualifiedName, api::Quantity>> consumed_capacity;

  //! Adds (sign +1) or removes (sign -1) one claim's allocation.
  void Apply(const api::AllocationResult& allocation, int sign);
};

class DraLister {
 public:
  virtual ~DraLister() = default;
  //! The claim (the assumed version while there is one), or null.
  virtual std::shared_ptr<const api::ResourceClaim> Claim(std::string_view namespace_, std::string_view name) const = 0;
  //! The DeviceClass `name`, or null.
  virtual std::shared_ptr<const api::DeviceClass> Class(std::string_view name) const = 0;
  //! Every ResourceSlice, as one immutable snapshot (shared until a slice changes).
  virtual std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> Slices() const = 0;
  //! The devices allocated by every claim (assumed versions included), as one immutable snapshot.
  virtual std::shared_ptr<const AllocatedState> Allocated() const = 0;
  //! Whether any DRA object is known: lets the plugin skip work on clusters without any.
  virtual bool Empty() const = 0;

  //! Replaces the claim by `assumed` (an allocation made in Reserve) for the readers above, until
  //! the informer delivers a version at least as new (and, when `assumed` is allocated, itself
  //! allocated: a newer version that only changed metadata keeps the assumed allocation), or
  //! RestoreClaim. Error when the cache holds no such claim or a newer version than `assumed` was
  //! made from.
  virtual Status AssumeClaim(std::shared_ptr<const api::ResourceClaim> assumed) = 0;
  virtual void RestoreClaim(std::string_view namespace_, std::string_view name) = 0;
  //! The informer's version of the claim, ignoring what is assumed; null when unknown.
  virtual std::shared_ptr<const api::ResourceClaim> ApiClaim(std::string_view namespace_,
                                                             std::string_view name) const = 0;
};

//! A lister that knows no object (a cluster without DRA, tests of other plugins).
class EmptyDraLister final : public DraLister {
 public:
  std::shared_ptr<const api::ResourceClaim> Claim(std::string_view, std::string_view) const override { return nullptr; }
  std::shared_ptr<const api::DeviceClass> Class(std::string_view) const override { return nullptr; }
  std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> Slices() const override {
    static const auto empty = std::make_shared<const std::vector<std::shared_ptr<const api::ResourceSlice>>>();
    return empty;
  }
  std::shared_ptr<const AllocatedState> Allocated() const override {
    static const auto empty = std::make_shared<const AllocatedState>();
    return empty;
  }
  bool Empty() const override { return true; }
  Status AssumeClaim(std::shared_ptr<const api::ResourceClaim> assumed) override {
    return Status::Error("ResourceClaim \"" + assumed->Key() + "\" not found");
  }
  void RestoreClaim(std::string_view, std::string_view) override {}
  std::shared_ptr<const api::ResourceClaim> ApiClaim(std::string_view, std::string_view) const override {
    return nullptr;
  }
};

}  // namespace kubesched::framework
