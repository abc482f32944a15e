#include "framework/dra.h"

namespace kubesched::framework {

void AllocatedState::Apply(const api::AllocationResult& allocation, int sign) {
  for (const api::DeviceRequestAllocationResult& r : allocation.devices) {
    if (r.admin_access) continue;  // admin access does not take the device
    DeviceId id{r.driver, r.pool, r.device};
    if (!r.share_id) {
      if (sign > 0) {
        allocated_devices.insert(std::move(id));
      } else {
        allocated_devices.erase(id);
      }
      continue;
    }
    if (sign > 0) {
      allocated_shared_devices.insert(SharedDeviceId{id, *r.share_id});
    } else {
      allocated_shared_devices.erase(SharedDeviceId{id, *r.share_id});
    }
    auto& consumed = consumed_capacity[id];
    for (const auto& [name, amount] : r.consumed_capacity) {
      auto it = consumed.find(name);
      if (it == consumed.end()) {
        if (sign > 0) consumed.emplace(name, amount);
        continue;
      }
      auto next = sign > 0 ? it->second.Add(amount) : it->second.Sub(amount);
      if (next && !next->IsZero()) {
        it->second = std::move(*next);
      } else {
        consumed.erase(it);
      }
    }
    if (consumed.empty()) consumed_capacity.erase(id);
  }
}

}  // namespace kubesched::framework
