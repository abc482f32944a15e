#pragma once
// The values nodes have for one topology key (a node label such as kubernetes.io/hostname or
// topology.kubernetes.io/zone), interned: each distinct value is a small integer, its domain.
// Plugins that count pods per topology domain every cycle (InterPodAffinity, PodTopologySpread)
// keep their counts in flat arrays indexed by domain instead of maps keyed by strings, and find a
// node's domain with one array load. Built lazily by the snapshot, once per key, and reused
// until nodes come, go or change.

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/node_info.h"

namespace kubesched::framework {

class TopologyDomains {
 public:
  //! The node lacks the label.
  static constexpr int32_t kNoDomain = -1;
  //! The node has the label with a value no snapshot node has (a NodeInfo from outside the
  //! snapshot): no pod is counted there.
  static constexpr int32_t kUnknownDomain = -2;

  //! Domains of `key` over `nodes`, which must be the snapshot's List() (a node's position in it
  //! is its snapshot_index()).
  TopologyDomains(std::string key, std::span<const NodeInfo* const> nodes);

  const std::string& key() const { return key_; }
  //! Number of distinct values.
  size_t size() const { return values_.size(); }
  //! The node's domain, kNoDomain or kUnknownDomain. One array load for a snapshot node (or a
  //! clone of one); a label lookup for any other NodeInfo.
  int32_t DomainOf(const NodeInfo& node) const {
    const int32_t i = node.snapshot_index();
    if (i >= 0 && static_cast<size_t>(i) < nodes_.size() && nodes_[i] == node.node()) return domain_of_index_[i];
    return DomainOfLabels(node);
  }
  //! The domain of a label value, or kUnknownDomain when no node has it.
  int32_t DomainOfValue(std::string_view value) const;
  std::string_view value(int32_t domain) const { return values_[static_cast<size_t>(domain)]; }

 private:
  int32_t DomainOfLabels(const NodeInfo& node) const;

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::string key_;
  std::vector<const api::Node*> nodes_;   // by snapshot index, to validate indexes
  std::vector<int32_t> domain_of_index_;  // by snapshot index
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::vector<std::string_view> values_;  // by domain; views into ids_' keys
};

//! The TopologyDomains of a snapshot, one per key asked for, built on first use. Thread-safe.
class TopologyDomainsCache {
 public:
  std::shared_ptr<const TopologyDomains> Get(std::string_view key, std::span<const NodeInfo* const> nodes) const;
  //! Forgets everything (nodes changed). Domains handed out stay valid for their holders.
  void Clear();

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<const TopologyDomains>> entries_;  // guarded by mu_; few keys
};

}  // namespace kubesched::framework
