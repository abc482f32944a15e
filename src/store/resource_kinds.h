#pragma once
// The kinds of resource.k8s.io/v1 in the store (Dynamic Resource Allocation): DeviceClass,
// ResourceSlice, ResourceClaim (with its status subresource, where the scheduler writes the
// allocation) and ResourceClaimTemplate, with upstream's defaults and typed views through the
// codec.

#include "store/store.h"

namespace kubesched::store {

ResourceType DeviceClasses();
ResourceType ResourceSlices();
ResourceType ResourceClaims();
ResourceType ResourceClaimTemplates();

}  // namespace kubesched::store
