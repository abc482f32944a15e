#include "framework/runtime/equivalence_cache.h"

#include <algorithm>
#include <limits>

#include "api/encode.h"
#include "api/types.h"

namespace kubesched::framework::runtime {

std::string PodClassKey(const api::Pod& pod) {
  // The namespace (no NUL in a name), then the spec as encoded. The nomination is status, not
  // spec, and a pending pod has no node name yet: neither is read by a node-local plugin
  // (NodeName reads spec.nodeName, kept).
  std::string key = pod.metadata.namespace_;
  key += '\0';
  api::EncodePodSpecTo(pod.spec, key);
  return key;
}

void EquivalenceClass::StoreVerdict(const NodeInfo& node, const Status& status) {
  if (!Indexable(node)) return;
  uint32_t index = kPassed;
  // Interned reason lists are shared: the same list (by address), code and plugin as the status
  // stored last is that status, with no key to build.
  auto same = [&](const Status& known) {
    return known.code() == status.code() && &known.reasons() == &status.reasons() &&
           known.plugin().data() == status.plugin().data() && known.plugin() == status.plugin();
  };
  if (!status.IsSuccess() && last_stored_ != 0 && same(statuses_[last_stored_ - kFirstStatus])) {
    index = last_stored_;
  } else if (!status.IsSuccess()) {
    std::string key(status.plugin());
    key += '\0';
    key += std::to_string(static_cast<int>(status.code()));
    for (const std::string& r : status.reasons()) {
      key += '\0';
      key += r;
    }
    auto [it, inserted] = status_index_.try_emplace(std::move(key), 0);
    if (inserted) {
      it->second = static_cast<uint32_t>(statuses_.size()) + kFirstStatus;
      statuses_.push_back(status);
    }
    index = it->second;
    last_stored_ = index;
  }
  const size_t i = static_cast<size_t>(node.snapshot_index());
  Claim(i, node.generation());
  verdicts_[i] = index;
}

void EquivalenceClass::StoreScore(size_t plugin, const NodeInfo& node, int64_t score) {
  if (!Indexable(node) || plugin >= num_score_plugins_) return;
  if (score < std::numeric_limits<int32_t>::min() || score > std::numeric_limits<int32_t>::max()) return;
  const size_t i = static_cast<size_t>(node.snapshot_index());
  Claim(i, node.generation());
  scores_[i * num_score_plugins_ + plugin] = static_cast<int32_t>(score);
  known_scores_[i] |= uint64_t{1} << plugin;
}

void EquivalenceClass::Reset(size_t num_nodes, size_t num_score_plugins) {
  num_nodes_ = num_nodes;
  num_score_plugins_ = std::min(num_score_plugins, kMaxScorePlugins);
  entries_ = num_nodes * (1 + num_score_plugins);
  generations_.assign(num_nodes, 0);  // no node has generation 0 (Indexable)
  verdicts_.assign(num_nodes, kNoVerdict);
  known_scores_.assign(num_nodes, 0);
  scores_.assign(num_nodes * num_score_plugins_, 0);
  statuses_.clear();
  status_index_.clear();
  last_stored_ = 0;
  score_plugins_ = num_score_plugins;
}

EquivalenceClass* EquivalenceCache::ClassFor(const std::string& key, size_t num_nodes, size_t num_score_plugins) {
  const size_t need = num_nodes * (1 + num_score_plugins);
  if (need == 0 || need > budget_) return nullptr;
  auto [it, inserted] = classes_.try_emplace(key);
  EquivalenceClass& c = it->second;
  if (inserted) {
    lru_.push_front(key);
    c.lru_ = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, c.lru_);
  }
  // A class whose statuses outgrew its nodes holds mostly stale ones (each store of a node's
  // new verdict may add one): start it over, as when the node count changed.
  if (inserted || c.num_nodes_ != num_nodes || c.score_plugins_ != num_score_plugins ||
      c.statuses_.size() > 2 * num_nodes + 16) {
    entries_ -= c.entries_;
    c.Reset(num_nodes, num_score_plugins);
    entries_ += c.entries_;
  }
  while (entries_ > budget_ && lru_.size() > 1) {
    auto victim = classes_.find(lru_.back());
    entries_ -= victim->second.entries_;
    classes_.erase(victim);
    lru_.pop_back();
  }
  return &c;
}

}  // namespace kubesched::framework::runtime
