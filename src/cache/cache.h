#pragma once
// Cache: the scheduler's own view of nodes and the pods on them, kept current from cluster events
// and by the scheduler itself: a pod is *assumed* on its node at the end of its scheduling cycle,
// so later cycles see it before the bind completes, and *forgotten* if binding fails.

#include <cstdint>
#include <expected>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/snapshot.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/status.h"

namespace kubesched::cache {

//! Thread-safe: every public method takes mu_.
class Cache {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  void AddNode(std::shared_ptr<const api::Node> node);
  void UpdateNode(std::shared_ptr<const api::Node> node);
  //! Removes the node; its pods stay accounted (as upstream) until they are deleted.
  void RemoveNode(const std::string& node_name);

  //! Records `pod` (whose spec.node_name is the chosen node) as running there before it is bound.
  framework::Status AssumePod(framework::PodInfoPtr pod);
  //! The bind for an assumed pod was sent.
  void FinishBinding(const api::Pod& pod);
  //! Undoes AssumePod after a failed binding cycle.
  framework::Status ForgetPod(const api::Pod& pod);
  //! A bound pod seen from the cluster: confirms an assumed pod (moving it if it was bound
  //! elsewhere) or adds it.
  framework::Status AddPod(framework::PodInfoPtr pod);
  framework::Status UpdatePod(const api::Pod& old_pod, framework::PodInfoPtr new_pod);
  framework::Status RemovePod(const api::Pod& pod);

  bool IsAssumedPod(const api::Pod& pod) const;
  //! The pod as the cache knows it (assumed or added), or nullptr.
  framework::PodInfoPtr GetPod(const std::string& uid) const;

  //! The node object the cache has under this name, or nullptr.
  std::shared_ptr<const api::Node> GetNode(std::string_view node_name) const;

  //! Brings `snapshot` up to date, copying only nodes whose generation moved since its last update.
  void UpdateSnapshot(Snapshot& snapshot);

  size_t NodeCount() const;
  size_t PodCount() const;
  size_t AssumedPodCount() const;

 private:
  struct PodState {
    framework::PodInfoPtr pod;
    std::string node_name;
    bool assumed = false;
    bool binding_finished = false;
  };
  struct ImageState {
    int64_t size = 0;
    std::set<std::string> nodes;
  };

  framework::NodeInfo& NodeFor(const std::string& node_name);  // requires mu_
  void AddPodLocked(const framework::PodInfoPtr& pod, const std::string& node_name);
  void RemovePodLocked(const api::Pod& pod, const std::string& node_name);
  void AddNodeImages(const api::Node& node);
  void RemoveNodeImages(const api::Node& node);
  std::vector<std::pair<std::string, framework::ImageStateSummary>> ImageSummaries(const api::Node& node) const;
  void Bump(const std::string& node_name);

  // Node names, most recently changed first, so a snapshot update stops at the first node it
  // already has (as upstream's doubly linked node list).
  std::list<std::string> recency_;
  std::unordered_map<std::string, std::list<std::string>::iterator> recency_pos_;

  mutable std::mutex mu_;
  // Node infos by name (guarded by mu_). A node removed while pods remain keeps an entry without a
  // node object so the pods' resources are released correctly when they go.
  std::unordered_map<std::string, std::unique_ptr<framework::NodeInfo>> nodes_;
  // Node names in zone-interleaved order (as upstream's node tree), for the snapshot list.
  std::vector<std::string> node_order_;
  // Node names in the order they were first added.
  std::vector<std::string> added_order_;
  std::unordered_set<std::string> in_added_order_;  // the names in added_order_
  bool order_dirty_ = true;
  // Pods by uid (guarded by mu_).
  std::unordered_map<std::string, PodState> pods_;
  size_t assumed_count_ = 0;
  // Image name → size and the nodes that have it (guarded by mu_).
  std::unordered_map<std::string, ImageState> images_;
};

}  // namespace kubesched::cache
