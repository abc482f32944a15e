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
    const size_t i = static_cast<size_t>(node.snapshot_index());
    const uint32_t v = verdicts_[i];
    if (v == kNoVerdict || generations_[i] != node.generation()) return nullptr;
    return v == kPassed ? &passed_ : &statuses_[v - kFirstStatus];
  }
  void StoreVerdict(const NodeInfo& node, const Status& status);

  //! The raw score of score plugin `plugin` (its index in the profile) recorded for the node at
  //! its current generation.
  std::optional<int64_t> FindScore(size_t plugin, const NodeInfo& node) const {
    if (!Indexable(node) || plugin >= num_score_plugins_) return std::nullopt;
    const size_t i = static_cast<size_t>(node.snapshot_index());
    if ((known_scores_[i] & (uint64_t{1} << plugin)) == 0 || generations_[i] != node.generation()) return std::nullopt;
    return scores_[i * num_score_plugins_ + plugin];
  }
  //! Records a raw score; one outside int32 (no in-tree node-local plugin gives one) is not kept.
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

  // The node's row (its generation, verdict and known scores) for the node's generation, cleared
  // first when the row holds an older one.
  void Claim(size_t i, int64_t generation) {
    if (generations_[i] == generation) return;
    generations_[i] = generation;
    verdicts_[i] = kNoVerdict;
    known_scores_[i] = 0;
  }

  static constexpr uint32_t kNoVerdict = 0, kPassed = 1, kFirstStatus = 2;
  //! Score plugins past this many (a bit each in known_scores_) are not memoised.
  static constexpr size_t kMaxScorePlugins = 64;

  size_t num_nodes_ = 0;
  size_t num_score_plugins_ = 0;  // memoised: at most kMaxScorePlugins
  size_t score_plugins_ = 0;      // the profile's
  size_t entries_ = 0;
  // One row per node (by snapshot index), in columns: what the row holds is for the node at
  // generations_[i] only. About 20 + 4 x (score plugins) bytes per node.
  std::vector<int64_t> generations_;
  std::vector<uint32_t> verdicts_;      // kNoVerdict, kPassed or kFirstStatus + statuses_ index
  std::vector<uint64_t> known_scores_;  // bit p: scores_[i * num_score_plugins_ + p] is known
  std::vector<int32_t> scores_;
  //! Distinct rejections (a deque: stable while it grows).
  std::deque<Status> statuses_;
  const Status passed_;
  uint32_t last_stored_ = 0;  // the status index stored last: runs of nodes share one
  std::unordered_map<std::string, uint32_t> status_index_;
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
