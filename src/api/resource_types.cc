#include "api/resource_types.h"

#include <algorithm>

namespace kubesched::api {

namespace {

template <typename T>
const T* FindByName(const std::vector<T>& items, const QualifiedName& name) {
  auto it = std::lower_bound(items.begin(), items.end(), name,
                             [](const T& item, const QualifiedName& n) { return item.name < n; });
  return it != items.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

const DeviceAttribute* Device::Attribute(const QualifiedName& name) const { return FindByName(attributes, name); }

const DeviceCapacity* Device::Capacity(const QualifiedName& name) const { return FindByName(capacity, name); }

bool ResourceClaim::IsReservedFor(std::string_view pod_uid) const {
  return std::any_of(reserved_for.begin(), reserved_for.end(),
                     [&](const ResourceClaimConsumerReference& r) { return r.uid == pod_uid; });
}

std::string ResourceClaimGenerateName(std::string_view pod_name, std::string_view pod_claim_name) {
  // Upstream (pkg/controller/resourceclaim): "<pod>-<claim>-"; past 57 characters (63 minus the
  // random suffix) both parts are cut to 28, so the claim's name keeps a part of each.
  if (pod_name.size() + pod_claim_name.size() + 2 <= 57) {
    return std::string(pod_name) + "-" + std::string(pod_claim_name) + "-";
  }
  std::string prefix(pod_name.substr(0, 28));
  prefix += '-';
  prefix += pod_claim_name.substr(0, 28);
  prefix += '-';
  return prefix;
}

}  // namespace kubesched::api
