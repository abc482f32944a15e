// PreFilter, PreFilterExtensions and Filter (upstream's filtering.go).

#include <algorithm>
#include <mutex>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/internal.h"

namespace kubesched::plugins::inter_pod_affinity {
namespace {

using framework::Code;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;

const framework::StateKey kPreFilterStateKey{"PreFilterInterPodAffinity"};

// Adds delta at (term's topology key, node's value for it) when the node has that label.
void UpdateCount(TopologyCounts& counts, const api::Node& node, const std::string& topology_key, int64_t delta) {
  if (const std::string* value = node.metadata.labels.Find(topology_key)) counts.Add(topology_key, *value, delta);
}

// Existing pods (on nodes with pods carrying required anti-affinity) whose required anti-affinity
// terms match the incoming pod, counted per (topology key, the existing pod's node value).
void CountExistingAntiAffinity(util::Parallelizer& parallelizer, std::span<const NodeInfo* const> nodes,
                               const api::Pod& incoming, const api::Labels& namespace_labels, TopologyCounts& out) {
  std::mutex mu;
  parallelizer.Until(static_cast<int>(nodes.size()), [&](int i) {
    const NodeInfo& node_info = *nodes[i];
    const api::Node* node = node_info.node();
    if (node == nullptr) return;
    // Per-thread scratch: no allocation per node once warm.
    thread_local std::vector<std::pair<std::string_view, std::string_view>> matched;
    matched.clear();
    for (const auto& existing : node_info.pods_with_required_anti_affinity()) {
      for (const auto& term : existing->required_anti_affinity_terms) {
        if (!term.Matches(incoming, &namespace_labels)) continue;
        if (const std::string* value = node->metadata.labels.Find(term.topology_key)) {
          matched.emplace_back(term.topology_key, *value);
        }
      }
    }
    if (matched.empty()) return;
    std::lock_guard lock(mu);
    for (const auto& [key, value] : matched) out.Add(key, value, 1);
  });
}

// Existing pods matching the incoming pod's required terms: for affinity, pods matching all terms
// count once per term; for anti-affinity, each matched term counts.
void CountIncoming(util::Parallelizer& parallelizer, std::span<const NodeInfo* const> nodes,
                   const PreFilterState::Terms& terms, TopologyCounts& affinity_out, TopologyCounts& anti_out) {
  const size_t n_anti = terms.anti_affinity.size();
  const size_t stride = 1 + n_anti;  // [pods matching all affinity terms, per-anti-term matches...]
  // One flat allocation for the whole cycle; each node writes only its own row.
  std::vector<int64_t> per_node(nodes.size() * stride, 0);
  parallelizer.Until(static_cast<int>(nodes.size()), [&](int i) {
    const NodeInfo& node_info = *nodes[i];
    if (node_info.node() == nullptr) return;
    int64_t* row = per_node.data() + static_cast<size_t>(i) * stride;
    for (const auto& existing : node_info.pods()) {
      const api::Pod& pod = existing->pod();
      if (terms.affinity.MatchesAll(pod)) ++row[0];
      for (size_t t = 0; t < n_anti; ++t) {
        if (terms.anti_affinity.Matches(t, pod)) ++row[1 + t];
      }
    }
  });
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t* row = per_node.data() + i * stride;
    const api::Node* node = nodes[i]->node();
    if (node == nullptr) continue;
    if (row[0] > 0) {
      for (size_t t = 0; t < terms.affinity.size(); ++t) {
        UpdateCount(affinity_out, *node, terms.affinity.term(t).topology_key, row[0]);
      }
    }
    for (size_t t = 0; t < n_anti; ++t) {
      if (row[1 + t] > 0) UpdateCount(anti_out, *node, terms.anti_affinity.term(t).topology_key, row[1 + t]);
    }
  }
}

Status MissingStateError() {
  return Status::Error(std::string("error reading \"") + std::string(kPreFilterStateKey.name()) +
                       "\" from cycleState: not found");
}

bool SatisfiesPodAffinity(const PreFilterState& s, const api::Labels& node_labels) {
  const IncomingTerms& terms = s.terms->affinity;
  bool pods_exist = true;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& key = terms.term(t).topology_key;
    const std::string* value = node_labels.Find(key);
    // Every topology key must exist on the node.
    if (value == nullptr) return false;
    if (s.affinity_counts.Get(key, *value) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group with affinity to itself: when no pod in the cluster matches the
  // terms and the pod matches its own terms, it may go anywhere the topology keys exist.
  return s.affinity_counts.empty() && s.pod_matches_own_affinity;
}

bool SatisfiesPodAntiAffinity(const PreFilterState& s, const api::Labels& node_labels) {
  if (s.anti_affinity_counts.empty()) return true;
  const IncomingTerms& terms = s.terms->anti_affinity;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& key = terms.term(t).topology_key;
    const std::string* value = node_labels.Find(key);
    if (value != nullptr && s.anti_affinity_counts.Get(key, *value) > 0) return false;
  }
  return true;
}

bool SatisfiesExistingPodsAntiAffinity(const PreFilterState& s, const api::Labels& node_labels) {
  return s.existing_anti_affinity_counts.empty() || !s.existing_anti_affinity_counts.AnyPositiveIn(node_labels);
}

}  // namespace

const PreFilterState* GetPreFilterState(const framework::CycleState& state) {
  return state.Get<PreFilterState>(kPreFilterStateKey);
}

void PreFilterState::UpdateWithPod(const PodInfo& pod_info, const api::Node& node, int64_t multiplier) {
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
    if (term.Matches(*pod, &namespace_labels))
      UpdateCount(existing_anti_affinity_counts, node, term.topology_key, multiplier);
  }
  if (terms->affinity.MatchesAll(other)) {
    for (size_t t = 0; t < terms->affinity.size(); ++t) {
      UpdateCount(affinity_counts, node, terms->affinity.term(t).topology_key, multiplier);
    }
  }
  for (size_t t = 0; t < terms->anti_affinity.size(); ++t) {
    if (terms->anti_affinity.Matches(t, other)) {
      UpdateCount(anti_affinity_counts, node, terms->anti_affinity.term(t).topology_key, multiplier);
    }
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
  CountExistingAntiAffinity(handle_.parallelizer(), with_anti_affinity, pod, s->namespace_labels,
                            s->existing_anti_affinity_counts);
  if (!has_terms && s->existing_anti_affinity_counts.empty()) return {framework::PreFilterResult{}, Status::Skip()};

  auto terms = std::make_shared<PreFilterState::Terms>();
  terms->affinity = IncomingTerms(pod_info.required_affinity_terms);
  terms->anti_affinity = IncomingTerms(pod_info.required_anti_affinity_terms);
  internal::ResolveNamespaces(nodes, pod.metadata.namespace_, handle_.client(),
                              {&terms->affinity, &terms->anti_affinity});
  if (has_terms) CountIncoming(handle_.parallelizer(), nodes, *terms, s->affinity_counts, s->anti_affinity_counts);
  s->pod_matches_own_affinity = terms->affinity.MatchesAll(pod);
  s->terms = std::move(terms);
  cycle_state.Write(kPreFilterStateKey, std::move(s));
  return {framework::PreFilterResult{}, Status::Success()};
}

Status InterPodAffinity::AddPod(framework::CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                                const NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (node_info.node() != nullptr) s->UpdateWithPod(pod_to_add, *node_info.node(), 1);
  return Status::Success();
}

Status InterPodAffinity::RemovePod(framework::CycleState& state, const PodInfo& pod_to_schedule,
                                   const PodInfo& pod_to_remove, const NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (node_info.node() != nullptr) s->UpdateWithPod(pod_to_remove, *node_info.node(), -1);
  return Status::Success();
}

Status InterPodAffinity::Filter(const framework::CycleState& state, const PodInfo& pod, const NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (node_info.node() == nullptr) return Status::Error("node not found");
  const api::Labels& labels = node_info.node()->metadata.labels;
  if (!SatisfiesPodAffinity(*s, labels)) {
    return Status(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonAffinityRulesNotMatch));
  }
  if (!SatisfiesPodAntiAffinity(*s, labels)) {
    return Status(Code::kUnschedulable, std::string(kErrReasonAntiAffinityRulesNotMatch));
  }
  if (!SatisfiesExistingPodsAntiAffinity(*s, labels)) {
    return Status(Code::kUnschedulable, std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
  }
  return Status::Success();
}

}  // namespace kubesched::plugins::inter_pod_affinity
