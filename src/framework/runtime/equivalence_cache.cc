#include "framework/runtime/equivalence_cache.h"

#include "api/encode.h"
#include "api/types.h"

namespace kubesched::framework::runtime {

std::string PodClassKey(const api::Pod& pod) {
  api::Pod spec_only;
  spec_only.metadata.namespace_ = pod.metadata.namespace_;
  spec_only.spec = pod.spec;
  // The nomination is status, not spec, and a pending pod has no node name yet: neither is read
  // by a node-local plugin (NodeName reads spec.nodeName, kept).
  std::string key;
  api::EncodePodTo(spec_only, key);
  return key;
}

void EquivalenceClass::StoreVerdict(const NodeInfo& node, const Status& status) {
  if (!Indexable(node)) return;
  uint32_t index = 0;
  // Interned reason lists are shared: the same list (by address), code and plugin as the status
  // stored last is that status, with no key to build.
  auto same = [&](const Status& known) {
    return known.code() == status.code() && &known.reasons() == &status.reasons() &&
           known.plugin().data() == status.plugin().data() && known.plugin() == status.plugin();
  };
  if (!status.IsSuccess() && last_stored_ != 0 && same(statuses_[last_stored_ - 1])) {
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
      statuses_.push_back(status);
      it->second = static_cast<uint32_t>(statuses_.size());
    }
    index = it->second;
    last_stored_ = index;
  }
  verdicts_[static_cast<size_t>(node.snapshot_index())] = VerdictEntry{node.generation(), index};
}

void EquivalenceClass::StoreScore(size_t plugin, const NodeInfo& node, int64_t score) {
  if (!Indexable(node) || plugin >= scores_.size()) return;
  scores_[plugin][static_cast<size_t>(node.snapshot_index())] = ScoreEntry{node.generation(), score};
}

void EquivalenceClass::Reset(size_t num_nodes, size_t num_score_plugins) {
  num_nodes_ = num_nodes;
  entries_ = num_nodes * (1 + num_score_plugins);
  verdicts_.assign(num_nodes, VerdictEntry{});
  statuses_.clear();
  status_index_.clear();
  last_stored_ = 0;
  scores_.assign(num_score_plugins, std::vector<ScoreEntry>(num_nodes));
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
  if (inserted || c.num_nodes_ != num_nodes || c.scores_.size() != num_score_plugins ||
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
