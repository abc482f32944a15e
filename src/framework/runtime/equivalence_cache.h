#pragma once
// Filter verdicts and Score results memoised per pod class (kube-scheduler's former "equivalence
// cache", kept exact). A node-local plugin (FilterPlugin::FilterIsNodeLocal,
// ScorePlugin::ScoreIsNodeLocal) judges a node by nothing but the pod's spec and the NodeInfo, and
// a NodeInfo's generation moves on every change (globally unique, kept by snapshot clones), so
// what a pod class got on a node stays right while the node keeps that generation. Pods of one
// Deployment, Job or trace request class then cost a lookup per unchanged node instead of every
// plugin's Filter and Score: the decisions, statuses and messages are the ones the plugins give.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/node_info.h"
#include "framework/status.h"

namespace kubesched::api {
struct Pod;
}

namespace kubesched::framework::runtime {

//! What makes two pods one class: the namespace and the spec, as encoded (every modelled field; the
//! name, labels, uid and status are left out, no node-local plugin reads them).
std::string PodClassKey(const api::Pod& pod);

//! One pod class's memo, indexed by the nodes' snapshot index. Lookups may run concurrently; a
//! verdict is stored from one thread (after a parallel round), a score concurrently only for
//! distinct nodes.
class EquivalenceClass {
 public:
  //! The Filter verdict recorded for the node at its current generation, or nullptr.
  const Status* FindVerdict(const NodeInfo& node) const {
    if (!Indexable(node)) return nullptr;
    const VerdictEntry& e = verdicts_[static_cast<size_t>(node.snapshot_index())];
    if (e.generation != node.generation()) return nullptr;
    return e.status == 0 ? &passed_ : &statuses_[e.status - 1];
  }
  void StoreVerdict(const NodeInfo& node, const Status& status);

  //! The raw score of score plugin `plugin` (its index in the profile) recorded for the node at
  //! its current generation.
  std::optional<int64_t> FindScore(size_t plugin, const NodeInfo& node) const {
    if (!Indexable(node) || plugin >= scores_.size()) return std::nullopt;
    const ScoreEntry& e = scores_[plugin][static_cast<size_t>(node.snapshot_index())];
    if (e.generation != node.generation()) return std::nullopt;
    return e.score;
  }
  void StoreScore(size_t plugin, const NodeInfo& node, int64_t score);

  //! Entries held (nodes × (1 + score plugins)), what the cache's budget counts.
  size_t entries() const { return entries_; }

 private:
  friend class EquivalenceCache;
  void Reset(size_t num_nodes, size_t num_score_plugins);
  bool Indexable(const NodeInfo& node) const {
    return node.generation() > 0 && node.snapshot_index() >= 0 &&
           static_cast<size_t>(node.snapshot_index()) < num_nodes_;
  }

  struct VerdictEntry {
    int64_t generation = 0;
    uint32_t status = 0;  // 0: passed; else statuses_[status - 1]
  };
  struct ScoreEntry {
    int64_t generation = 0;
    int64_t score = 0;
  };
  size_t num_nodes_ = 0;
  size_t entries_ = 0;
  std::vector<VerdictEntry> verdicts_;
  //! Distinct rejections (a deque: stable while it grows).
  std::deque<Status> statuses_;
  const Status passed_;
  uint32_t last_stored_ = 0;  // the status index stored last: runs of nodes share one
  std::unordered_map<std::string, uint32_t> status_index_;
  std::vector<std::vector<ScoreEntry>> scores_;  // [plugin][node], sized on first use
  std::list<std::string>::iterator lru_;
};

//! The classes of one profile, the least recently used dropped beyond a budget of entries (about
//! 40 bytes each), so memory stays bounded on large clusters with many distinct pods.
class EquivalenceCache {
 public:
  explicit EquivalenceCache(size_t budget_entries = size_t{1} << 20) : budget_(budget_entries) {}

  //! The class with this key, fresh when new or when the snapshot's node count changed (indices
  //! moved; an image's spread over all nodes too). nullptr when a single class would exceed the
  //! budget.
  EquivalenceClass* ClassFor(const std::string& key, size_t num_nodes, size_t num_score_plugins);

  size_t size() const { return classes_.size(); }

 private:
  size_t budget_;
  size_t entries_ = 0;
  std::unordered_map<std::string, EquivalenceClass> classes_;
  std::list<std::string> lru_;  // front: most recent
};

}  // namespace kubesched::framework::runtime
