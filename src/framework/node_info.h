#pragma once
// NodeInfo: a node with the pods on it and the aggregates plugins read (requested resources,
// used host ports, image sizes), as upstream's framework.NodeInfo.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "framework/pod_info.h"
#include "framework/resource.h"

namespace kubesched::framework {

//! Host ports in use on a node: (ip, protocol, port). A port bound on 0.0.0.0 conflicts with the
//! same protocol and port on every ip.
class HostPortInfo {
 public:
  void Add(std::string_view ip, std::string_view protocol, int32_t port);
  void Remove(std::string_view ip, std::string_view protocol, int32_t port);
  //! Whether (ip, protocol, port) conflicts with a port in use.
  bool CheckConflict(std::string_view ip, std::string_view protocol, int32_t port) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string ip;
    std::string protocol;
    int32_t port;
    int count;  // pods using it
  };
  std::vector<Entry> entries_;
};

//! How many nodes of the cluster hold an image, and its size (ImageLocality scoring).
struct ImageStateSummary {
  int64_t size = 0;
  int num_nodes = 0;
};

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(std::shared_ptr<const api::Node> node) { SetNode(std::move(node)); }

  const api::Node* node() const { return node_.get(); }
  const std::shared_ptr<const api::Node>& node_ptr() const { return node_; }
  const std::string& name() const;

  //! Replaces the node object; recomputes allocatable. Pods are kept.
  void SetNode(std::shared_ptr<const api::Node> node);
  void RemoveNode() { node_.reset(); }

  void AddPod(PodInfoPtr pod);
  //! Removes the pod with the same uid. Returns false when absent.
  bool RemovePod(const api::Pod& pod);

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  const std::vector<PodInfoPtr>& pods_with_affinity() const { return pods_with_affinity_; }
  const std::vector<PodInfoPtr>& pods_with_required_anti_affinity() const { return pods_with_required_anti_affinity_; }
  const Resource& requested() const { return requested_; }
  const Resource& allocatable() const { return allocatable_; }
  //! requested cpu/memory counting defaults for containers without requests.
  int64_t non_zero_milli_cpu() const { return non_zero_milli_cpu_; }
  int64_t non_zero_memory() const { return non_zero_memory_; }
  const HostPortInfo& used_ports() const { return used_ports_; }

  //! Image name → state, filled in by the snapshot (needs cluster-wide counts).
  const std::vector<std::pair<std::string, ImageStateSummary>>& image_states() const { return image_states_; }
  void set_image_states(std::vector<std::pair<std::string, ImageStateSummary>> states) {
    image_states_ = std::move(states);
  }
  //! Looks up an image state by normalized name; nullptr when the node does not have it.
  const ImageStateSummary* FindImage(std::string_view normalized_name) const;

  //! Bumped on every change; the snapshot copies only nodes whose generation moved.
  int64_t generation() const { return generation_; }
  //! Position in the snapshot's List() (-1 outside a snapshot); clones keep it. Lets per-node
  //! arrays built from the snapshot (TopologyDomains) be indexed directly.
  int32_t snapshot_index() const { return snapshot_index_; }
  void set_snapshot_index(int32_t i) { snapshot_index_ = i; }
  void set_generation(int64_t g) { generation_ = g; }

  std::unique_ptr<NodeInfo> Clone() const { return std::make_unique<NodeInfo>(*this); }

  //! Gives the node a new generation without changing it (e.g. an image's node count moved).
  void Touch();

 private:
  std::shared_ptr<const api::Node> node_;
  std::vector<PodInfoPtr> pods_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
  Resource requested_;
  Resource allocatable_;
  int64_t non_zero_milli_cpu_ = 0;
  int64_t non_zero_memory_ = 0;
  HostPortInfo used_ports_;
  std::vector<std::pair<std::string, ImageStateSummary>> image_states_;  // sorted by name
  int64_t generation_ = 0;
  int32_t snapshot_index_ = -1;
};

//! Image names as the kubelet reports them: "nginx" and "nginx:latest" and
//! "docker.io/library/nginx:latest" are the same image (upstream's normalizedImageName adds
//! ":latest" when no tag or digest is given).
std::string NormalizedImageName(std::string_view name);

}  // namespace kubesched::framework
