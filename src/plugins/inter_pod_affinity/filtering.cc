// PreFilter, PreFilterExtensions and Filter (upstream's filtering.go).

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "framework/interner.h"

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/internal.h"

namespace kubesched::plugins::inter_pod_affinity {
namespace {

using framework::Code;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;

const framework::StateKey kPreFilterStateKey{"PreFilterInterPodAffinity"};

// Topology keys by small index, few.
class KeyTable {
 public:
  uint32_t Index(std::string_view key) {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == key) return static_cast<uint32_t>(i);
    }
    keys_.emplace_back(key);
    return static_cast<uint32_t>(keys_.size() - 1);
  }
  const std::string& key(uint32_t i) const { return keys_[i]; }

 private:
  std::vector<std::string> keys_;
};

// (topology key index, matched terms) for one node.
using KeyCounts = std::vector<std::pair<uint32_t, int64_t>>;

}  // namespace

// CountExistingAntiAffinity's per-node results, by snapshot index, for the last incoming pod's
// label set and namespace labels (all a match against the incoming pod depends on), valid while
// the node keeps its generation (unique to a NodeInfo's content). Pods of one workload share
// their label set, so a cycle reads only the generation of a node that did not change.
class InterPodAffinity::ExistingCountCache {
 public:
  std::mutex mu;
  KeyTable keys;

  //! Whether the incoming pod's label set and namespace labels are the ones cached; when not,
  //! adopts them and forgets every node. The label set id is held, so it cannot be recycled
  //! meanwhile. num_nodes bounds the snapshot indexes cached.
  bool Bind(const PodInfo& incoming, const api::Labels& namespace_labels, size_t num_nodes) {
    if (incoming.label_set_id.value() == framework::kNotInterned) return false;
    if (incoming.label_set_id.value() != label_set_.value() || namespace_labels != namespace_labels_) {
      label_set_ = incoming.label_set_id;
      namespace_labels_ = namespace_labels;
      keys = KeyTable();
      entries_.assign(num_nodes, Entry{});
    } else if (entries_.size() < num_nodes) {
      entries_.resize(num_nodes);
    }
    return true;
  }

  //! The node's cached counts, or nullptr.
  const KeyCounts* Find(const NodeInfo& node) const {
    const int32_t i = node.snapshot_index();
    const int64_t g = node.generation();
    if (i < 0 || static_cast<size_t>(i) >= entries_.size() || g == 0 || entries_[i].generation != g) return nullptr;
    return &entries_[i].counts;
  }

  void Store(const NodeInfo& node, const KeyCounts& counts) {
    const int32_t i = node.snapshot_index();
    const int64_t g = node.generation();
    if (i < 0 || static_cast<size_t>(i) >= entries_.size() || g == 0) return;
    entries_[i].generation = g;
    entries_[i].counts = counts;
  }

 private:
  struct Entry {
    int64_t generation = 0;  // 0: nothing cached
    KeyCounts counts;
  };
  framework::InternedId label_set_;
  api::Labels namespace_labels_;
  std::vector<Entry> entries_;  // by snapshot index
};

namespace {

// Existing pods (on nodes with pods carrying required anti-affinity) whose required anti-affinity
// terms match the incoming pod, counted per (topology key, the existing pod's node value). cache
// may be null.
void CountExistingAntiAffinity(std::span<const NodeInfo* const> nodes, const api::Pod& incoming,
                               const api::Labels& namespace_labels, const framework::NodeInfoLister& lister,
                               TopologyCounts& out, InterPodAffinity::ExistingCountCache* cache) {
  KeyTable local_keys;
  KeyTable& keys = cache != nullptr ? cache->keys : local_keys;
  // Per term id: 0 when the term does not match the incoming pod, else 1 + the index of its
  // topology key. Pods from one template share their terms' ids, so each distinct term is
  // matched once. Sized lazily: a cycle whose nodes are all cached needs none. Serial: a memo
  // hit and an array increment per pod are cheaper than fanning out and merging.
  std::optional<framework::IdMemo> memo;
  std::vector<uint32_t> row_of_key;  // by key index: 1 + the row in out, 0 when not made yet
  KeyCounts computed;
  for (const NodeInfo* node_info : nodes) {
    if (node_info->node() == nullptr) continue;
    const KeyCounts* counts = cache != nullptr ? cache->Find(*node_info) : nullptr;
    if (counts == nullptr) {
      if (!memo) memo.emplace(framework::StringInterner::AffinityTerms().size());
      computed.clear();
      for (const auto& existing : node_info->pods_with_required_anti_affinity()) {
        for (const auto& term : existing->required_anti_affinity_terms) {
          const uint32_t m = memo->Get(term.id, [&]() -> uint32_t {
            return term.Matches(incoming, &namespace_labels) ? 1 + keys.Index(term.topology_key) : 0;
          });
          if (m == 0) continue;
          auto it = std::find_if(computed.begin(), computed.end(), [&](const auto& kc) { return kc.first == m - 1; });
          if (it == computed.end()) {
            computed.emplace_back(m - 1, 1);
          } else {
            ++it->second;
          }
        }
      }
      if (cache != nullptr) cache->Store(*node_info, computed);
      counts = &computed;
    }
    for (const auto& [key, count] : *counts) {
      if (row_of_key.size() <= key) row_of_key.resize(key + 1, 0);
      if (row_of_key[key] == 0) row_of_key[key] = 1 + static_cast<uint32_t>(out.Row(keys.key(key), &lister));
      out.Add(row_of_key[key] - 1, *node_info, count);
    }
  }
}

}  // namespace

// Rows of CountIncoming ([pods matching all affinity terms, pods matching each anti-affinity
// term...]) per node, by snapshot index, for the terms of the last pod counted, valid while the
// node keeps its generation (a NodeInfo's generation is unique to its content: every change
// takes a new one from a global counter). Pods of one workload share their terms, so a cycle
// reads only the generation of a node that did not change instead of walking its pods.
class InterPodAffinity::IncomingCountCache {
 public:
  std::mutex mu;

  //! Whether the terms are the ones cached; when not, adopts them and forgets every row. Terms
  //! are told apart by their interned ids, held here so that they cannot be recycled meanwhile;
  //! false (no caching) when a term has no id (a namespaceSelector was merged into it).
  //! num_nodes bounds the snapshot indexes cached.
  bool Bind(const PreFilterState::Terms& terms, size_t num_nodes) {
    std::vector<framework::InternedId> ids;
    ids.reserve(terms.affinity.size() + terms.anti_affinity.size());
    for (size_t t = 0; t < terms.affinity.size(); ++t) ids.push_back(terms.affinity.term(t).id);
    for (size_t t = 0; t < terms.anti_affinity.size(); ++t) ids.push_back(terms.anti_affinity.term(t).id);
    for (const auto& id : ids) {
      if (id.value() == framework::kNotInterned) return false;
    }
    const auto same = [&] {
      if (ids.size() != ids_.size() || num_affinity_ != terms.affinity.size()) return false;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i].value() != ids_[i].value()) return false;
      }
      return true;
    };
    if (!same()) {
      ids_ = std::move(ids);
      num_affinity_ = terms.affinity.size();
      stride_ = 1 + terms.anti_affinity.size();
      generation_.assign(num_nodes, 0);
      rows_.assign(num_nodes * stride_, 0);
    } else if (generation_.size() < num_nodes) {
      generation_.resize(num_nodes, 0);
      rows_.resize(num_nodes * stride_, 0);
    }
    return true;
  }

  //! The cached row of the node, or nullptr.
  const int64_t* Find(const NodeInfo& node) const {
    const int32_t i = node.snapshot_index();
    const int64_t g = node.generation();
    if (i < 0 || static_cast<size_t>(i) >= generation_.size() || g == 0 || generation_[i] != g) return nullptr;
    return rows_.data() + static_cast<size_t>(i) * stride_;
  }

  void Store(const NodeInfo& node, std::span<const int64_t> row) {
    const int32_t i = node.snapshot_index();
    const int64_t g = node.generation();
    if (i < 0 || static_cast<size_t>(i) >= generation_.size() || g == 0) return;
    generation_[i] = g;
    std::copy(row.begin(), row.end(), rows_.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(i) * stride_));
  }

 private:
  std::vector<framework::InternedId> ids_;  // affinity terms', then anti-affinity terms'
  size_t num_affinity_ = 0;
  size_t stride_ = 1;
  std::vector<int64_t> generation_;  // by snapshot index; 0: nothing cached
  std::vector<int64_t> rows_;        // by snapshot index * stride_
};

namespace internal {
std::shared_ptr<InterPodAffinity::IncomingCountCache> NewIncomingCountCache() {
  return std::make_shared<InterPodAffinity::IncomingCountCache>();
}
std::shared_ptr<InterPodAffinity::ExistingCountCache> NewExistingCountCache() {
  return std::make_shared<InterPodAffinity::ExistingCountCache>();
}
}  // namespace internal

namespace {

// Existing pods matching the incoming pod's required terms: for affinity, pods matching all terms
// count once per term; for anti-affinity, each matched term counts. cache may be null.
void CountIncoming(std::span<const NodeInfo* const> nodes, PreFilterState& s,
                   InterPodAffinity::IncomingCountCache* cache) {
  const PreFilterState::Terms& terms = *s.terms;
  const size_t n_anti = terms.anti_affinity.size();
  // Bit 0: the pod matches all affinity terms; bit 1 + t: it matches anti-affinity term t. A
  // match depends only on the pod's namespace and labels (the terms' namespaceSelectors are
  // resolved into namespace lists), so it is memoized per label set.
  auto match_bits = [&](const api::Pod& pod) -> uint32_t {
    uint32_t bits = terms.affinity.MatchesAll(pod) ? 1 : 0;
    for (size_t t = 0; t < n_anti; ++t) {
      if (terms.anti_affinity.Matches(t, pod)) bits |= 1u << (1 + t);
    }
    return bits;
  };
  const bool memoizable = 1 + n_anti <= static_cast<size_t>(framework::IdMemo::kBits);
  // Sized lazily: a cycle whose nodes are all cached needs none.
  std::optional<framework::IdMemo> memo;
  std::vector<int64_t> computed(1 + n_anti);  // per node: [pods matching all affinity terms, per anti term...]
  for (const NodeInfo* node_info : nodes) {
    if (node_info->node() == nullptr || node_info->pods().empty()) continue;
    const int64_t* row = cache != nullptr ? cache->Find(*node_info) : nullptr;
    if (row == nullptr) {
      std::fill(computed.begin(), computed.end(), 0);
      if (memoizable && !memo) memo.emplace(framework::StringInterner::PodLabelSets().size());
      for (const auto& existing : node_info->pods()) {
        const api::Pod& pod = existing->pod();
        if (memoizable) {
          const uint32_t bits = memo->Get(existing->label_set_id, [&] { return match_bits(pod); });
          if (bits == 0) continue;
          computed[0] += bits & 1;
          for (size_t t = 0; t < n_anti; ++t) computed[1 + t] += (bits >> (1 + t)) & 1;
        } else {
          if (terms.affinity.MatchesAll(pod)) ++computed[0];
          for (size_t t = 0; t < n_anti; ++t) {
            if (terms.anti_affinity.Matches(t, pod)) ++computed[1 + t];
          }
        }
      }
      if (cache != nullptr) cache->Store(*node_info, computed);
      row = computed.data();
    }
    if (row[0] > 0) {
      for (size_t t = 0; t < terms.affinity.size(); ++t) s.affinity_counts.Add(s.affinity_rows[t], *node_info, row[0]);
    }
    for (size_t t = 0; t < n_anti; ++t) {
      if (row[1 + t] > 0) s.anti_affinity_counts.Add(s.anti_affinity_rows[t], *node_info, row[1 + t]);
    }
  }
}

Status MissingStateError() {
  return Status::Error(std::string("error reading \"") + std::string(kPreFilterStateKey.name()) +
                       "\" from cycleState: not found");
}

bool SatisfiesPodAffinity(const PreFilterState& s, const NodeInfo& node) {
  bool pods_exist = true;
  for (const uint32_t row : s.affinity_rows) {
    const int32_t slot = s.affinity_counts.FindSlot(row, node);
    // Every topology key must exist on the node.
    if (slot == framework::TopologyDomains::kNoDomain) return false;
    if (s.affinity_counts.CountAt(row, slot) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group with affinity to itself: when no pod in the cluster matches the
  // terms and the pod matches its own terms, it may go anywhere the topology keys exist.
  return s.affinity_counts.empty() && s.pod_matches_own_affinity;
}

bool SatisfiesPodAntiAffinity(const PreFilterState& s, const NodeInfo& node) {
  if (s.anti_affinity_counts.empty()) return true;
  for (const uint32_t row : s.anti_affinity_rows) {
    if (s.anti_affinity_counts.CountAt(row, s.anti_affinity_counts.FindSlot(row, node)) > 0) return false;
  }
  return true;
}

bool SatisfiesExistingPodsAntiAffinity(const PreFilterState& s, const NodeInfo& node) {
  return s.existing_anti_affinity_counts.empty() || !s.existing_anti_affinity_counts.AnyPositiveOn(node);
}

}  // namespace

const PreFilterState* GetPreFilterState(const framework::CycleState& state) {
  return state.Get<PreFilterState>(kPreFilterStateKey);
}

void PreFilterState::UpdateWithPod(const PodInfo& pod_info, const NodeInfo& node, int64_t multiplier,
                                   const framework::NodeInfoLister* lister) {
  const api::Pod& other = pod_info.pod();
  // A namespace seen for the first time (e.g. a nominated pod's) must be resolved against the
  // terms' namespaceSelectors before matching; copy-on-write keeps earlier clones intact.
  if (client != nullptr && (terms->affinity.NeedsNamespaces() || terms->anti_affinity.NeedsNamespaces())) {
    const std::string& ns = other.metadata.namespace_;
    if (!terms->affinity.IsResolved(ns) || !terms->anti_affinity.IsResolved(ns)) {
      auto updated = std::make_shared<Terms>(*terms);
      std::optional<api::Labels> labels = client->NamespaceLabels(ns);
      updated->affinity.ResolveNamespace(ns, labels);
      updated->anti_affinity.ResolveNamespace(ns, labels);
      terms = std::move(updated);
    }
  }
  for (const auto& term : pod_info.required_anti_affinity_terms) {
    if (term.Matches(*pod, &namespace_labels)) {
      existing_anti_affinity_counts.Add(existing_anti_affinity_counts.Row(term.topology_key, lister), node, multiplier);
    }
  }
  if (terms->affinity.MatchesAll(other)) {
    for (const uint32_t row : affinity_rows) affinity_counts.Add(row, node, multiplier);
  }
  for (size_t t = 0; t < terms->anti_affinity.size(); ++t) {
    if (terms->anti_affinity.Matches(t, other)) anti_affinity_counts.Add(anti_affinity_rows[t], node, multiplier);
  }
}

std::pair<framework::PreFilterResult, Status> InterPodAffinity::PreFilter(framework::CycleState& cycle_state,
                                                                          const PodInfo& pod_info,
                                                                          std::span<const NodeInfo* const> nodes) {
  const api::Pod& pod = pod_info.pod();
  const bool has_terms = !pod_info.required_affinity_terms.empty() || !pod_info.required_anti_affinity_terms.empty();
  std::span<const NodeInfo* const> with_anti_affinity =
      handle_.SnapshotSharedLister().HavePodsWithRequiredAntiAffinityList();
  // The common case: nothing to enforce, known without allocating or asking the cluster.
  if (!has_terms && with_anti_affinity.empty()) return {framework::PreFilterResult{}, Status::Skip()};

  auto s = std::make_unique<PreFilterState>();
  s->pod = pod_info.pod_ptr();
  s->client = &handle_.client();
  s->namespace_labels = handle_.client().NamespaceLabels(pod.metadata.namespace_).value_or(api::Labels{});
  const framework::NodeInfoLister& lister = handle_.SnapshotSharedLister();
  {
    std::unique_lock lock(existing_counts_->mu, std::try_to_lock);
    const bool cached = lock.owns_lock() && existing_counts_->Bind(pod_info, s->namespace_labels, lister.NumNodes());
    CountExistingAntiAffinity(with_anti_affinity, pod, s->namespace_labels, lister, s->existing_anti_affinity_counts,
                              cached ? existing_counts_.get() : nullptr);
  }
  if (!has_terms && s->existing_anti_affinity_counts.empty()) return {framework::PreFilterResult{}, Status::Skip()};

  auto terms = std::make_shared<PreFilterState::Terms>();
  terms->affinity = IncomingTerms(pod_info.required_affinity_terms);
  terms->anti_affinity = IncomingTerms(pod_info.required_anti_affinity_terms);
  internal::ResolveNamespaces(nodes, pod.metadata.namespace_, handle_.client(),
                              {&terms->affinity, &terms->anti_affinity});
  for (size_t t = 0; t < terms->affinity.size(); ++t) {
    s->affinity_rows.push_back(s->affinity_counts.Row(terms->affinity.term(t).topology_key, &lister));
  }
  for (size_t t = 0; t < terms->anti_affinity.size(); ++t) {
    s->anti_affinity_rows.push_back(s->anti_affinity_counts.Row(terms->anti_affinity.term(t).topology_key, &lister));
  }
  s->pod_matches_own_affinity = terms->affinity.MatchesAll(pod);
  s->terms = std::move(terms);
  if (has_terms) {
    // Another cycle holding the cache (concurrent PreFilters) only costs this one the reuse.
    std::unique_lock lock(incoming_counts_->mu, std::try_to_lock);
    const bool cached =
        lock.owns_lock() && incoming_counts_->Bind(*s->terms, std::max(nodes.size(), lister.NumNodes()));
    CountIncoming(nodes, *s, cached ? incoming_counts_.get() : nullptr);
  }
  cycle_state.Write(kPreFilterStateKey, std::move(s));
  return {framework::PreFilterResult{}, Status::Success()};
}

Status InterPodAffinity::AddPod(framework::CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                                const NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (node_info.node() != nullptr) s->UpdateWithPod(pod_to_add, node_info, 1, &handle_.SnapshotSharedLister());
  return Status::Success();
}

Status InterPodAffinity::RemovePod(framework::CycleState& state, const PodInfo& pod_to_schedule,
                                   const PodInfo& pod_to_remove, const NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (node_info.node() != nullptr) s->UpdateWithPod(pod_to_remove, node_info, -1, &handle_.SnapshotSharedLister());
  return Status::Success();
}

Status InterPodAffinity::Filter(const framework::CycleState& state, const PodInfo& pod, const NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (node_info.node() == nullptr) return Status::Error("node not found");
  if (!SatisfiesPodAffinity(*s, node_info)) {
    static const framework::StaticReasons kReasons{kErrReasonAffinityRulesNotMatch};
    return Status(Code::kUnschedulableAndUnresolvable, kReasons);
  }
  if (!SatisfiesPodAntiAffinity(*s, node_info)) {
    static const framework::StaticReasons kReasons{kErrReasonAntiAffinityRulesNotMatch};
    return Status(Code::kUnschedulable, kReasons);
  }
  if (!SatisfiesExistingPodsAntiAffinity(*s, node_info)) {
    static const framework::StaticReasons kReasons{kErrReasonExistingAntiAffinityRulesNotMatch};
    return Status(Code::kUnschedulable, kReasons);
  }
  return Status::Success();
}

}  // namespace kubesched::plugins::inter_pod_affinity
