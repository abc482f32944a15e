#pragma once
// InterPodAffinity: required and preferred pod affinity / anti-affinity, as upstream's
// pkg/scheduler/framework/plugins/interpodaffinity (filtering.go, scoring.go, plugin.go).
//
// Filtering keeps, per (topology key, value) pair, how many existing pods
//   - have a required anti-affinity term matching the incoming pod (the symmetric check),
//   - match all of the incoming pod's required affinity terms (counted once per term),
//   - match each of the incoming pod's required anti-affinity terms,
// computed once per cycle in PreFilter, so Filter is a few array loads per node. Scoring sums
// weights per (topology key, value) in PreScore; Score adds up the pairs a node has.
//
// A term's match against a pod depends only on the pod's namespace and labels (and the
// namespace's labels, fixed for a cycle), so matches are memoized per cycle by the pod's interned
// label set (PodInfo::label_set_id) or the term's interned content (AffinityTerm::id): pods
// stamped from one template are evaluated once.

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/args_view.h"
#include "framework/client.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/listers.h"
#include "framework/pod_info.h"
#include "plugins/inter_pod_affinity/args.h"

namespace kubesched::plugins::inter_pod_affinity {

// Upstream's reason strings (filtering.go).
inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";

//! Counts per (topology key, topology value), in flat arrays: one row per topology key, indexed
//! by the key's topology domains in the snapshot (framework::TopologyDomains), so counting a pod
//! or reading a node's count is an array load rather than a hash lookup of two strings. Values
//! no snapshot node has (nodes from outside the snapshot, e.g. preemption what-ifs) get extra
//! slots after the snapshot's domains. Copying it copies the counts and shares the domains.
class TopologyCounts {
 public:
  //! The row of a key, added (over the lister's domains; none without a lister) when new.
  //! Rows are never removed, so row numbers stay valid in copies.
  size_t Row(std::string_view key, const framework::NodeInfoLister* lister);
  //! The node's slot in a row: TopologyDomains::kNoDomain when it lacks the key,
  //! kUnknownDomain for a value no slot has.
  int32_t FindSlot(size_t row, const framework::NodeInfo& node) const;
  //! Adds delta at the node's value of the row's key; nothing when the node lacks the key.
  void Add(size_t row, const framework::NodeInfo& node, int64_t delta);
  //! Adds delta at a slot from FindSlot (>= 0).
  void AddAt(size_t row, int32_t slot, int64_t delta) {
    int64_t& c = rows_[row].counts[static_cast<size_t>(slot)];
    nonzero_ -= c != 0 ? 1 : 0;
    c += delta;
    nonzero_ += c != 0 ? 1 : 0;
  }
  //! The count at a slot from FindSlot (0 for kNoDomain / kUnknownDomain).
  int64_t CountAt(size_t row, int32_t slot) const {
    return slot >= 0 ? rows_[row].counts[static_cast<size_t>(slot)] : 0;
  }
  //! Whether no pair has a non-zero count.
  bool empty() const { return nonzero_ == 0; }
  //! Whether some row has a positive count at the node's value.
  bool AnyPositiveOn(const framework::NodeInfo& node) const;
  //! The sum over rows of the count at the node's value.
  int64_t Sum(const framework::NodeInfo& node) const;
  //! The non-zero pairs, sorted (tests and debugging).
  std::map<std::pair<std::string, std::string>, int64_t> ToMap() const;

 private:
  struct KeyRow {
    std::string key;
    std::shared_ptr<const framework::TopologyDomains> domains;  // may be null: extra slots only
    std::vector<int64_t> counts;                                // by slot
    std::vector<std::string> extra_values;                      // value of slot num_domains + j
    size_t num_domains() const { return domains ? domains->size() : 0; }
  };
  int32_t FindSlotOfValue(const KeyRow& row, std::string_view value) const;

  std::vector<KeyRow> rows_;  // few distinct topology keys
  size_t nonzero_ = 0;        // slots with a non-zero count
};

//! The incoming pod's (anti-)affinity terms with their namespaceSelector merged into the
//! namespaces list, as upstream's mergeAffinityTermNamespacesIfNotEmpty: after resolving every
//! namespace a matched pod can be in, a term matches a pod without looking up its namespace. An
//! empty namespaceSelector ({}) keeps meaning "all namespaces".
class IncomingTerms {
 public:
  IncomingTerms() = default;
  explicit IncomingTerms(const std::vector<framework::AffinityTerm>& terms);
  explicit IncomingTerms(const std::vector<framework::WeightedAffinityTerm>& terms);

  //! Whether some term has a non-empty namespaceSelector still to be resolved for new namespaces.
  bool NeedsNamespaces() const { return !selectors_.empty(); }
  bool IsResolved(std::string_view ns) const;
  //! Adds ns to the namespaces of every term whose namespaceSelector matches its labels (nullopt:
  //! the namespace does not exist, and no selector matches it). Idempotent.
  void ResolveNamespace(std::string_view ns, const std::optional<api::Labels>& labels);

  size_t size() const { return terms_.size(); }
  bool empty() const { return terms_.empty(); }
  const framework::AffinityTerm& term(size_t i) const { return terms_[i].term; }
  int32_t weight(size_t i) const { return terms_[i].weight; }
  //! Whether pod matches term i (namespace and label selector; topology is not checked).
  bool Matches(size_t i, const api::Pod& pod) const;
  //! Whether pod matches every term; false when there are none (upstream's
  //! podMatchesAllAffinityTerms).
  bool MatchesAll(const api::Pod& pod) const;

 private:
  std::vector<framework::WeightedAffinityTerm> terms_;
  //! (term index, original non-empty namespaceSelector) for the terms being merged.
  std::vector<std::pair<size_t, api::LabelSelector>> selectors_;
  std::vector<std::string> resolved_namespaces_;  // sorted
};

//! PreFilter's state, read by Filter and updated by AddPod/RemovePod.
class PreFilterState final : public framework::StateData {
 public:
  struct Terms {
    IncomingTerms affinity;
    IncomingTerms anti_affinity;
  };

  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
  //! Counts pod (on node) in, with multiplier +1, or out, with -1 (upstream's updateWithPod).
  //! lister gives the domains of topology keys met for the first time (may be null).
  void UpdateWithPod(const framework::PodInfo& pod, const framework::NodeInfo& node, int64_t multiplier,
                     const framework::NodeInfoLister* lister);

  //! Existing pods whose required anti-affinity terms match the incoming pod.
  TopologyCounts existing_anti_affinity_counts;
  //! Existing pods matching all of the incoming pod's required affinity terms (once per term).
  TopologyCounts affinity_counts;
  //! Existing pods matching each of the incoming pod's required anti-affinity terms.
  TopologyCounts anti_affinity_counts;
  //! The incoming pod's required terms, namespaces resolved. Shared between clones; replaced
  //! (copy-on-write) when AddPod meets a namespace not resolved yet.
  std::shared_ptr<const Terms> terms;
  //! Per term of terms->affinity / terms->anti_affinity: its row in affinity_counts /
  //! anti_affinity_counts.
  std::vector<uint32_t> affinity_rows;
  std::vector<uint32_t> anti_affinity_rows;
  std::shared_ptr<const api::Pod> pod;
  //! The incoming pod's namespace labels (empty when the namespace is unknown).
  api::Labels namespace_labels;
  //! Whether the incoming pod matches all of its own required affinity terms.
  bool pod_matches_own_affinity = false;
  //! Used to resolve namespaces met in AddPod/RemovePod.
  framework::ClusterClient* client = nullptr;
};

class PreScoreState final : public framework::StateData {
 public:
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
  //! Summed weights per (topology key, value). Immutable after PreScore, so clones share it.
  std::shared_ptr<const TopologyCounts> scores;
};

class InterPodAffinity final : public framework::PreFilterPlugin,
                               public framework::PreFilterExtensions,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::ScoreExtensions,
                               public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";

  InterPodAffinity(InterPodAffinityArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }
  const InterPodAffinityArgs& args() const { return args_; }

  //! Counts the existing pods relevant to the incoming pod's required terms, and the existing
  //! pods whose required anti-affinity rejects it. Skip when there is nothing to enforce (no
  //! required terms and no existing anti-affinity matches).
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  framework::PreFilterExtensions* GetPreFilterExtensions() override { return this; }
  //! Error when PreFilter did not write its state.
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfo& pod_to_add, const framework::NodeInfo& node_info) override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfo& pod_to_remove, const framework::NodeInfo& node_info) override;
  //! UnschedulableAndUnresolvable when the pod's affinity is not satisfied; Unschedulable when
  //! its anti-affinity, or an existing pod's anti-affinity, is violated.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;

  //! Sums preferred-term weights per topology pair. Skip when no term matched anything.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  //! (score - min) * 100 / (max - min); all 0 when every node scored the same.
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   framework::NodeScoreList& scores) override;

  //! Pod add / label update / delete and node add / label update, with upstream's hints.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  //! Hint for a pod added (new only), updated (both) or deleted (old only).
  framework::QueueingHint IsSchedulableAfterPodChange(const api::Pod& pod, const framework::EventObjects& event) const;
  //! Hint for a node added (new only) or updated (both).
  framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event) const;

  //! Per-node counts of pods matching the incoming pod's required terms, kept across cycles.
  class IncomingCountCache;
  //! Per-node counts of existing anti-affinity terms matching the incoming pod, kept across cycles.
  class ExistingCountCache;

 private:
  InterPodAffinityArgs args_;
  framework::Handle& handle_;
  std::shared_ptr<IncomingCountCache> incoming_counts_;
  std::shared_ptr<ExistingCountCache> existing_counts_;
};

//! Factory: args as InterPodAffinityArgs JSON (null => defaults).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

//! The state PreFilter wrote, or nullptr (for tests).
const PreFilterState* GetPreFilterState(const framework::CycleState& state);

}  // namespace kubesched::plugins::inter_pod_affinity
