// PreScore, Score and NormalizeScore (upstream's scoring.go).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "framework/interner.h"

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/internal.h"

namespace kubesched::plugins::inter_pod_affinity {
namespace {

using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;

const framework::StateKey kPreScoreStateKey{"PreScoreInterPodAffinity"};

// Sums weights per (topology key, value) over the existing pods, as upstream's processExistingPod:
// the incoming pod's preferred terms matched by the existing pod, and the existing pod's required
// (weighted by hardPodAffinityWeight) and preferred terms matched by the incoming pod, all counted
// in the existing pod's node's topology.
class Accumulator {
 public:
  Accumulator(const IncomingTerms& preferred_affinity, const IncomingTerms& preferred_anti_affinity,
              const api::Pod& incoming, const api::Labels& namespace_labels, int32_t hard_pod_affinity_weight,
              const framework::NodeInfoLister& lister)
      : affinity_(preferred_affinity),
        anti_affinity_(preferred_anti_affinity),
        incoming_(incoming),
        namespace_labels_(namespace_labels),
        hard_pod_affinity_weight_(hard_pod_affinity_weight),
        lister_(lister),
        memoizable_(affinity_.size() + anti_affinity_.size() <= static_cast<size_t>(framework::IdMemo::kBits)),
        incoming_memo_(memoizable_ ? framework::StringInterner::PodLabelSets().size() : 0),
        existing_memo_(framework::StringInterner::AffinityTerms().size()) {
    for (size_t i = 0; i < affinity_.size(); ++i) affinity_rows_.push_back(Row(affinity_.term(i).topology_key));
    for (size_t i = 0; i < anti_affinity_.size(); ++i) {
      anti_affinity_rows_.push_back(Row(anti_affinity_.term(i).topology_key));
    }
  }

  void ProcessExistingPod(const PodInfo& existing, const NodeInfo& node) {
    const api::Pod& existing_pod = existing.pod();
    const size_t na = affinity_.size();
    const size_t nb = anti_affinity_.size();
    if (na + nb > 0) {
      if (memoizable_) {
        // Bit i: preferred affinity term i matches; bit na + i: preferred anti-affinity term i.
        const uint32_t bits = incoming_memo_.Get(existing.label_set_id, [&] {
          uint32_t b = 0;
          for (size_t i = 0; i < na; ++i) b |= affinity_.Matches(i, existing_pod) ? 1u << i : 0;
          for (size_t i = 0; i < nb; ++i) b |= anti_affinity_.Matches(i, existing_pod) ? 1u << (na + i) : 0;
          return b;
        });
        if (bits != 0) {
          for (size_t i = 0; i < na; ++i) {
            if ((bits >> i) & 1) Contribute(affinity_rows_[i], affinity_.weight(i), node);
          }
          for (size_t i = 0; i < nb; ++i) {
            if ((bits >> (na + i)) & 1) Contribute(anti_affinity_rows_[i], -int64_t{anti_affinity_.weight(i)}, node);
          }
        }
      } else {
        for (size_t i = 0; i < na; ++i) {
          if (affinity_.Matches(i, existing_pod)) Contribute(affinity_rows_[i], affinity_.weight(i), node);
        }
        for (size_t i = 0; i < nb; ++i) {
          if (anti_affinity_.Matches(i, existing_pod)) {
            Contribute(anti_affinity_rows_[i], -int64_t{anti_affinity_.weight(i)}, node);
          }
        }
      }
    }
    if (hard_pod_affinity_weight_ > 0) {
      for (const auto& t : existing.required_affinity_terms) ProcessExistingTerm(t, hard_pod_affinity_weight_, node);
    }
    for (const auto& wt : existing.preferred_affinity_terms) ProcessExistingTerm(wt.term, wt.weight, node);
    for (const auto& wt : existing.preferred_anti_affinity_terms)
      ProcessExistingTerm(wt.term, -int64_t{wt.weight}, node);
  }

  bool any() const { return any_; }
  std::shared_ptr<const TopologyCounts> Finish() { return std::make_shared<const TopologyCounts>(std::move(scores_)); }

 private:
  uint32_t Row(std::string_view key) { return static_cast<uint32_t>(scores_.Row(key, &lister_)); }

  void Contribute(uint32_t row, int64_t weight, const NodeInfo& node) {
    const int32_t slot = scores_.FindSlot(row, node);
    if (slot == framework::TopologyDomains::kNoDomain) return;
    any_ = true;
    if (slot >= 0) {
      scores_.AddAt(row, slot, weight);
    } else {
      scores_.Add(row, node, weight);  // a value the snapshot lacks: gets an extra slot
    }
  }

  // An existing pod's term against the incoming pod: memoized by the term's content id, the
  // value being 0 for no match, else 1 + the row of its topology key.
  void ProcessExistingTerm(const framework::AffinityTerm& term, int64_t weight, const NodeInfo& node) {
    const uint32_t m = existing_memo_.Get(term.id, [&]() -> uint32_t {
      return term.Matches(incoming_, &namespace_labels_) ? 1 + Row(term.topology_key) : 0;
    });
    if (m != 0) Contribute(m - 1, weight, node);
  }

  const IncomingTerms& affinity_;
  const IncomingTerms& anti_affinity_;
  const api::Pod& incoming_;
  const api::Labels& namespace_labels_;
  const int32_t hard_pod_affinity_weight_;
  const framework::NodeInfoLister& lister_;
  const bool memoizable_;
  framework::IdMemo incoming_memo_;  // by the existing pod's label set
  framework::IdMemo existing_memo_;  // by the existing term's id
  std::vector<uint32_t> affinity_rows_;
  std::vector<uint32_t> anti_affinity_rows_;
  TopologyCounts scores_;
  bool any_ = false;
};

Status MissingStateError() {
  return Status::Error(std::string("failed to read \"") + std::string(kPreScoreStateKey.name()) +
                       "\" from cycleState: not found");
}

}  // namespace

Status InterPodAffinity::PreScore(framework::CycleState& cycle_state, const PodInfo& pod_info,
                                  std::span<const NodeInfo* const> nodes) {
  if (nodes.empty()) return Status::Skip();
  const api::Pod& pod = pod_info.pod();
  const bool has_constraints =
      !pod_info.preferred_affinity_terms.empty() || !pod_info.preferred_anti_affinity_terms.empty();
  // Existing pods' preferred terms alone are optionally ignored.
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return Status::Skip();

  // Unless the incoming pod has preferred terms, only pods with affinity can contribute.
  const framework::NodeInfoLister& lister = handle_.SnapshotSharedLister();
  std::span<const NodeInfo* const> all_nodes = has_constraints ? lister.List() : lister.HavePodsWithAffinityList();
  if (all_nodes.empty()) return Status::Skip();  // nothing can contribute

  IncomingTerms preferred_affinity(pod_info.preferred_affinity_terms);
  IncomingTerms preferred_anti_affinity(pod_info.preferred_anti_affinity_terms);
  internal::ResolveNamespaces(all_nodes, pod.metadata.namespace_, handle_.client(),
                              {&preferred_affinity, &preferred_anti_affinity});
  api::Labels namespace_labels = handle_.client().NamespaceLabels(pod.metadata.namespace_).value_or(api::Labels{});
  Accumulator acc(preferred_affinity, preferred_anti_affinity, pod, namespace_labels, args_.hard_pod_affinity_weight,
                  lister);
  // Serial: with memoized matches a pod costs a memo hit and an array add, cheaper than fanning
  // out and merging per-thread sums.
  for (const NodeInfo* node_info : all_nodes) {
    // Upstream also skips nodes without labels; Contribute finds no topology value on them, and
    // not reading the node object here saves a cache miss per node.
    if (node_info->node() == nullptr) continue;
    const auto& pods = has_constraints ? node_info->pods() : node_info->pods_with_affinity();
    for (const auto& existing : pods) acc.ProcessExistingPod(*existing, *node_info);
  }
  // Upstream skips when no node produced a contribution (even one that summed to zero).
  if (!acc.any()) return Status::Skip();

  auto state = std::make_unique<PreScoreState>();
  state->scores = acc.Finish();
  cycle_state.Write(kPreScoreStateKey, std::move(state));
  return Status::Success();
}

std::pair<int64_t, Status> InterPodAffinity::Score(const framework::CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node_info) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return {0, MissingStateError()};
  if (node_info.node() == nullptr) return {0, Status::Error("node not found")};
  return {s->scores->Sum(node_info), Status::Success()};
}

Status InterPodAffinity::NormalizeScore(const framework::CycleState& state, const PodInfo& pod,
                                        framework::NodeScoreList& scores) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return MissingStateError();
  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::min();
  for (const auto& ns : scores) {
    max_count = std::max(max_count, ns.score);
    min_count = std::min(min_count, ns.score);
  }
  const int64_t diff = max_count - min_count;
  for (auto& ns : scores) {
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(framework::kMaxNodeScore) *
          (static_cast<double>(ns.score - min_count) / static_cast<double>(diff));
    }
    ns.score = static_cast<int64_t>(f);
  }
  return Status::Success();
}

}  // namespace kubesched::plugins::inter_pod_affinity
