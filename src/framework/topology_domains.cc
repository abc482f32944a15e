#include "framework/topology_domains.h"

namespace kubesched::framework {

TopologyDomains::TopologyDomains(std::string key, std::span<const NodeInfo* const> nodes) : key_(std::move(key)) {
  nodes_.reserve(nodes.size());
  domain_of_index_.reserve(nodes.size());
  for (const NodeInfo* info : nodes) {
    const api::Node* node = info->node();
    nodes_.push_back(node);
    const std::string* value = node != nullptr ? node->metadata.labels.Find(key_) : nullptr;
    if (value == nullptr) {
      domain_of_index_.push_back(kNoDomain);
      continue;
    }
    auto [it, inserted] = ids_.try_emplace(*value, static_cast<int32_t>(ids_.size()));
    domain_of_index_.push_back(it->second);
  }
  values_.resize(ids_.size());
  for (const auto& [value, id] : ids_) values_[static_cast<size_t>(id)] = value;
}

int32_t TopologyDomains::DomainOfValue(std::string_view value) const {
  auto it = ids_.find(value);
  return it == ids_.end() ? kUnknownDomain : it->second;
}

int32_t TopologyDomains::DomainOfLabels(const NodeInfo& node) const {
  if (node.node() == nullptr) return kNoDomain;
  const std::string* value = node.node()->metadata.labels.Find(key_);
  return value == nullptr ? kNoDomain : DomainOfValue(*value);
}

std::shared_ptr<const TopologyDomains> TopologyDomainsCache::Get(std::string_view key,
                                                                 std::span<const NodeInfo* const> nodes) const {
  std::lock_guard lock(mu_);
  for (const auto& e : entries_) {
    if (e->key() == key) return e;
  }
  entries_.push_back(std::make_shared<const TopologyDomains>(std::string(key), nodes));
  return entries_.back();
}

void TopologyDomainsCache::Clear() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

}  // namespace kubesched::framework
