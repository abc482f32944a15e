#include "cache/cache.h"

#include <algorithm>

namespace kubesched::cache {

using framework::NodeInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

std::string ZoneOf(const api::Node& node) {
  const std::string* region = node.metadata.labels.Find(api::kLabelTopologyRegion);
  const std::string* zone = node.metadata.labels.Find(api::kLabelTopologyZone);
  std::string key = region ? *region : "";
  key += ":\x1f:";
  if (zone) key += *zone;
  return key;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Snapshot

std::unique_ptr<Snapshot> Snapshot::FromNodeInfos(std::vector<std::unique_ptr<NodeInfo>> nodes) {
  auto snap = std::make_unique<Snapshot>();
  std::vector<std::string> names;
  for (auto& n : nodes) {
    names.push_back(n->name());
    snap->generation_ = std::max(snap->generation_, n->generation());
    snap->map_[n->name()] = std::move(n);
  }
  snap->RebuildLists(names);
  return snap;
}

const NodeInfo* Snapshot::Get(std::string_view node_name) const {
  auto it = map_.find(std::string(node_name));
  return it != map_.end() ? it->second.get() : nullptr;
}

void Snapshot::RebuildLists(const std::vector<std::string>& ordered_names) {
  std::vector<const NodeInfo*> previous;
  previous.swap(list_);
  for (const auto& name : ordered_names) {
    auto it = map_.find(name);
    if (it == map_.end()) continue;
    NodeInfo* n = it->second.get();
    n->set_snapshot_index(static_cast<int32_t>(list_.size()));
    list_.push_back(n);
  }
  RebuildAffinityLists();
  // Domains depend only on the nodes listed, in order (a replaced node object clears them in
  // UpdateSnapshot): the affinity lists changing, as when a pod with affinity lands on a node
  // that had none, keeps them. Rebuilding them costs a string per node and key.
  if (list_ != previous) domains_.Clear();
}

void Snapshot::RebuildAffinityLists() {
  have_pods_with_affinity_.clear();
  have_pods_with_required_anti_affinity_.clear();
  for (const NodeInfo* n : list_) {
    if (!n->pods_with_affinity().empty()) have_pods_with_affinity_.push_back(n);
    if (!n->pods_with_required_anti_affinity().empty()) have_pods_with_required_anti_affinity_.push_back(n);
  }
}

// ---------------------------------------------------------------------------------------------
// Cache

void Cache::Bump(const std::string& node_name) {
  auto it = recency_pos_.find(node_name);
  if (it != recency_pos_.end()) {
    recency_.splice(recency_.begin(), recency_, it->second);
  } else {
    recency_.push_front(node_name);
    recency_pos_[node_name] = recency_.begin();
  }
}

NodeInfo& Cache::NodeFor(const std::string& node_name) {
  auto& slot = nodes_[node_name];
  if (!slot) slot = std::make_unique<NodeInfo>();
  return *slot;
}

void Cache::AddNodeImages(const api::Node& node) {
  for (const auto& image : node.status.images) {
    for (const auto& name : image.names) {
      std::string key = framework::NormalizedImageName(name);
      auto& state = images_[key];
      state.size = image.size_bytes;
      if (state.nodes.insert(node.metadata.name).second) {
        // Every other node with this image now reports one more node having it.
        for (const auto& other : state.nodes) {
          if (other == node.metadata.name) continue;
          auto it = nodes_.find(other);
          if (it != nodes_.end()) {
            it->second->Touch();
            Bump(other);
          }
        }
      }
    }
  }
}

void Cache::RemoveNodeImages(const api::Node& node) {
  for (const auto& image : node.status.images) {
    for (const auto& name : image.names) {
      std::string key = framework::NormalizedImageName(name);
      auto it = images_.find(key);
      if (it == images_.end()) continue;
      it->second.nodes.erase(node.metadata.name);
      for (const auto& other : it->second.nodes) {
        auto n = nodes_.find(other);
        if (n != nodes_.end()) {
          n->second->Touch();
          Bump(other);
        }
      }
      if (it->second.nodes.empty()) images_.erase(it);
    }
  }
}

std::vector<std::pair<std::string, framework::ImageStateSummary>> Cache::ImageSummaries(const api::Node& node) const {
  std::vector<std::pair<std::string, framework::ImageStateSummary>> out;
  for (const auto& image : node.status.images) {
    for (const auto& name : image.names) {
      std::string key = framework::NormalizedImageName(name);
      auto it = images_.find(key);
      if (it == images_.end()) continue;
      out.push_back({key, {it->second.size, static_cast<int>(it->second.nodes.size())}});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  out.erase(std::unique(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
            out.end());
  return out;
}

void Cache::AddNode(std::shared_ptr<const api::Node> node) {
  std::lock_guard lock(mu_);
  const std::string name = node->metadata.name;
  NodeInfo& info = NodeFor(name);
  if (info.node()) RemoveNodeImages(*info.node());
  bool was_present = info.node() != nullptr;
  info.SetNode(node);
  AddNodeImages(*node);
  Bump(name);
  if (!was_present) {
    if (in_added_order_.insert(name).second) added_order_.push_back(name);
    order_dirty_ = true;
  }
}

void Cache::UpdateNode(std::shared_ptr<const api::Node> node) {
  std::lock_guard lock(mu_);
  const std::string name = node->metadata.name;
  NodeInfo& info = NodeFor(name);
  bool zone_changed = !info.node() || ZoneOf(*info.node()) != ZoneOf(*node);
  if (info.node()) RemoveNodeImages(*info.node());
  info.SetNode(node);
  AddNodeImages(*node);
  Bump(name);
  if (in_added_order_.insert(name).second) added_order_.push_back(name);
  if (zone_changed) order_dirty_ = true;
}

void Cache::RemoveNode(const std::string& node_name) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node_name);
  if (it == nodes_.end()) return;
  if (it->second->node()) RemoveNodeImages(*it->second->node());
  if (in_added_order_.erase(node_name) > 0) std::erase(added_order_, node_name);
  if (it->second->pods().empty()) {
    nodes_.erase(it);
    auto pos = recency_pos_.find(node_name);
    if (pos != recency_pos_.end()) {
      recency_.erase(pos->second);
      recency_pos_.erase(pos);
    }
  } else {
    it->second->RemoveNode();
    Bump(node_name);
  }
  order_dirty_ = true;
}

void Cache::AddPodLocked(const PodInfoPtr& pod, const std::string& node_name) {
  NodeFor(node_name).AddPod(pod);
  Bump(node_name);
}

void Cache::RemovePodLocked(const api::Pod& pod, const std::string& node_name) {
  auto it = nodes_.find(node_name);
  if (it == nodes_.end()) return;
  it->second->RemovePod(pod);
  Bump(node_name);
  // A node deleted earlier is dropped once its last pod goes.
  if (!it->second->node() && it->second->pods().empty()) {
    nodes_.erase(it);
    auto pos = recency_pos_.find(node_name);
    if (pos != recency_pos_.end()) {
      recency_.erase(pos->second);
      recency_pos_.erase(pos);
    }
  }
}

Status Cache::AssumePod(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  const api::Pod& p = pod->pod();
  if (p.spec.node_name.empty()) return Status::Error("assumed pod " + p.Key() + " has no node");
  if (pods_.contains(p.metadata.uid)) return Status::Error("pod " + p.Key() + " is in the cache, so can't be assumed");
  std::string node = p.spec.node_name;
  AddPodLocked(pod, node);
  pods_[p.metadata.uid] = PodState{std::move(pod), node, true, false};
  ++assumed_count_;
  return {};
}

void Cache::FinishBinding(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  if (it != pods_.end() && it->second.assumed) it->second.binding_finished = true;
}

Status Cache::ForgetPod(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  if (it == pods_.end()) return {};
  if (!it->second.assumed) {
    return Status::Error("pod " + pod.Key() + " was added, not assumed, so it can't be forgotten");
  }
  RemovePodLocked(it->second.pod->pod(), it->second.node_name);
  pods_.erase(it);
  --assumed_count_;
  return {};
}

Status Cache::AddPod(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  const api::Pod& p = pod->pod();
  auto it = pods_.find(p.metadata.uid);
  if (it != pods_.end()) {
    if (!it->second.assumed) return Status::Error("pod " + p.Key() + " was already in added state");
    // Confirm the assumed pod with the object from the cluster, on the node it was really bound to.
    RemovePodLocked(it->second.pod->pod(), it->second.node_name);
    --assumed_count_;
    pods_.erase(it);
  }
  std::string node = p.spec.node_name;
  AddPodLocked(pod, node);
  pods_[p.metadata.uid] = PodState{std::move(pod), node, false, false};
  return {};
}

Status Cache::UpdatePod(const api::Pod& old_pod, PodInfoPtr new_pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(old_pod.metadata.uid);
  if (it == pods_.end()) return Status::Error("pod " + old_pod.Key() + " is not in the cache, so can't be updated");
  if (it->second.assumed) return Status::Error("assumed pod " + old_pod.Key() + " should not be updated");
  RemovePodLocked(it->second.pod->pod(), it->second.node_name);
  std::string node = new_pod->pod().spec.node_name;
  AddPodLocked(new_pod, node);
  it->second = PodState{std::move(new_pod), node, false, false};
  return {};
}

Status Cache::RemovePod(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  if (it == pods_.end()) return Status::Error("pod " + pod.Key() + " is not found in the cache, so can't be removed");
  RemovePodLocked(it->second.pod->pod(), it->second.node_name);
  if (it->second.assumed) --assumed_count_;
  pods_.erase(it);
  return {};
}

bool Cache::IsAssumedPod(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  return it != pods_.end() && it->second.assumed;
}

PodInfoPtr Cache::GetPod(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  return it != pods_.end() ? it->second.pod : nullptr;
}

std::shared_ptr<const api::Node> Cache::GetNode(std::string_view node_name) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(std::string(node_name));
  return it != nodes_.end() ? it->second->node_ptr() : nullptr;
}

void Cache::UpdateSnapshot(Snapshot& snapshot) {
  std::lock_guard lock(mu_);
  bool lists_dirty = false;     // nodes came or went: List() too
  bool affinity_dirty = false;  // only the affinity lists
  int64_t max_generation = snapshot.generation_;
  for (const std::string& name : recency_) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    const NodeInfo& info = *it->second;
    if (info.generation() <= snapshot.generation_) break;
    max_generation = std::max(max_generation, info.generation());
    if (!info.node()) continue;  // removed node still holding pods: not schedulable
    auto& slot = snapshot.map_[name];
    if (!slot) {
      slot = std::make_unique<NodeInfo>();
      lists_dirty = true;
    } else if (slot->pods_with_affinity().empty() != info.pods_with_affinity().empty() ||
               slot->pods_with_required_anti_affinity().empty() != info.pods_with_required_anti_affinity().empty()) {
      affinity_dirty = true;
    }
    // A new node object may carry new labels: topology domains are rebuilt on next use.
    if (slot->node_ptr() != info.node_ptr()) snapshot.domains_.Clear();
    // Assign in place: the lists hold this address (and keep its index).
    const int32_t index = slot->snapshot_index();
    *slot = info;
    slot->set_snapshot_index(index);
    slot->set_image_states(ImageSummaries(*info.node()));
  }
  // Drop nodes the cache no longer has (or that lost their node object). Nodes only go away
  // through RemoveNode, which marks the order dirty, so the check is needed only then.
  if (order_dirty_) {
    for (auto it = snapshot.map_.begin(); it != snapshot.map_.end();) {
      auto c = nodes_.find(it->first);
      if (c == nodes_.end() || !c->second->node()) {
        it = snapshot.map_.erase(it);
      } else {
        ++it;
      }
    }
    lists_dirty = true;
  }
  if (order_dirty_) {
    // Zone-interleaved order, zones in order of first appearance (upstream's node tree).
    std::vector<std::string> zones;
    std::unordered_map<std::string, std::vector<std::string>> by_zone;
    // Within a zone, nodes keep the order they were added in.
    for (const auto& n : added_order_) {
      auto node_it = nodes_.find(n);
      if (node_it == nodes_.end() || !node_it->second->node()) continue;
      std::string zone = ZoneOf(*node_it->second->node());
      auto& bucket = by_zone[zone];
      if (bucket.empty()) zones.push_back(zone);
      bucket.push_back(n);
    }
    node_order_.clear();
    for (size_t i = 0;; ++i) {
      bool any = false;
      for (const auto& z : zones) {
        auto& bucket = by_zone[z];
        if (i < bucket.size()) {
          node_order_.push_back(bucket[i]);
          any = true;
        }
      }
      if (!any) break;
    }
    order_dirty_ = false;
    lists_dirty = true;
  }
  if (lists_dirty) {
    snapshot.RebuildLists(node_order_);
  } else if (affinity_dirty) {
    // The same nodes in the same order (no slot was added or erased): no name lookups needed.
    snapshot.RebuildAffinityLists();
  }
  snapshot.generation_ = max_generation;
}

size_t Cache::NodeCount() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [name, info] : nodes_) n += info->node() ? 1 : 0;
  return n;
}

size_t Cache::PodCount() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

size_t Cache::AssumedPodCount() const {
  std::lock_guard lock(mu_);
  return assumed_count_;
}

}  // namespace kubesched::cache
