#pragma once
// Snapshot: the immutable view of the cluster one scheduling cycle works on. Refreshed from the
// cache before each cycle, copying only the nodes that changed since the last refresh.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/listers.h"
#include "framework/node_info.h"

namespace kubesched::cache {

class Snapshot final : public framework::NodeInfoLister {
 public:
  Snapshot() = default;
  //! A snapshot of exactly these nodes and pods (tests, what-if evaluation).
  static std::unique_ptr<Snapshot> FromNodeInfos(std::vector<std::unique_ptr<framework::NodeInfo>> nodes);

  std::span<const framework::NodeInfo* const> List() const override { return list_; }
  std::span<const framework::NodeInfo* const> HavePodsWithAffinityList() const override {
    return have_pods_with_affinity_;
  }
  std::span<const framework::NodeInfo* const> HavePodsWithRequiredAntiAffinityList() const override {
    return have_pods_with_required_anti_affinity_;
  }
  const framework::NodeInfo* Get(std::string_view node_name) const override;
  std::shared_ptr<const framework::TopologyDomains> Domains(std::string_view topology_key) const override {
    return domains_.Get(topology_key, list_);
  }

  //! The highest node generation copied into this snapshot.
  int64_t generation() const { return generation_; }

 private:
  friend class Cache;
  void RebuildLists(const std::vector<std::string>& ordered_names);
  //! Rebuilds only the affinity lists from List() (nodes unchanged).
  void RebuildAffinityLists();

  // Node infos are owned here and keep their address while the node exists, so the lists below
  // only need rebuilding when nodes come or go or a node's affinity status flips.
  std::unordered_map<std::string, std::unique_ptr<framework::NodeInfo>> map_;
  std::vector<const framework::NodeInfo*> list_;
  std::vector<const framework::NodeInfo*> have_pods_with_affinity_;
  std::vector<const framework::NodeInfo*> have_pods_with_required_anti_affinity_;
  int64_t generation_ = 0;
  framework::TopologyDomainsCache domains_;
};

}  // namespace kubesched::cache
