#pragma once
// Read access to the per-cycle snapshot of nodes, as upstream's SharedLister.

#include <memory>
#include <span>
#include <string_view>

#include "framework/node_info.h"
#include "framework/topology_domains.h"

namespace kubesched::framework {

class NodeInfoLister {
 public:
  virtual ~NodeInfoLister() = default;
  //! All nodes, in a stable order.
  virtual std::span<const NodeInfo* const> List() const = 0;
  //! Nodes with at least one pod that has (anti-)affinity terms.
  virtual std::span<const NodeInfo* const> HavePodsWithAffinityList() const = 0;
  //! Nodes with at least one pod that has required anti-affinity terms.
  virtual std::span<const NodeInfo* const> HavePodsWithRequiredAntiAffinityList() const = 0;
  //! The node by name, or nullptr.
  virtual const NodeInfo* Get(std::string_view node_name) const = 0;
  //! The domains of a topology key over List(), valid for as long as the caller holds them.
  virtual std::shared_ptr<const TopologyDomains> Domains(std::string_view topology_key) const = 0;
  size_t NumNodes() const { return List().size(); }
};

}  // namespace kubesched::framework
