// PreScore, Score and NormalizeScore (upstream's scoring.go).

#include <algorithm>
#include <limits>
#include <mutex>
#include <tuple>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/internal.h"

namespace kubesched::plugins::inter_pod_affinity {
namespace {

using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;

const framework::StateKey kPreScoreStateKey{"PreScoreInterPodAffinity"};

// (topology key, topology value, weight) contributions found on one node.
using Contributions = std::vector<std::tuple<std::string_view, std::string_view, int64_t>>;

void Contribute(Contributions& out, const framework::AffinityTerm& term, int64_t weight,
                const api::Labels& node_labels) {
  if (const std::string* value = node_labels.Find(term.topology_key))
    out.emplace_back(term.topology_key, *value, weight);
}

struct ScoringInputs {
  const IncomingTerms* preferred_affinity;
  const IncomingTerms* preferred_anti_affinity;
  const api::Pod* incoming;
  const api::Labels* namespace_labels;  // the incoming pod's
  int32_t hard_pod_affinity_weight;
};

// Upstream's processExistingPod: the incoming pod's preferred terms matched by the existing pod,
// and the existing pod's required (weighted by hardPodAffinityWeight) and preferred terms matched
// by the incoming pod, all counted in the existing pod's node's topology.
void ProcessExistingPod(const ScoringInputs& in, const PodInfo& existing, const api::Labels& node_labels,
                        Contributions& out) {
  const api::Pod& existing_pod = existing.pod();
  for (size_t i = 0; i < in.preferred_affinity->size(); ++i) {
    if (in.preferred_affinity->Matches(i, existing_pod)) {
      Contribute(out, in.preferred_affinity->term(i), in.preferred_affinity->weight(i), node_labels);
    }
  }
  for (size_t i = 0; i < in.preferred_anti_affinity->size(); ++i) {
    if (in.preferred_anti_affinity->Matches(i, existing_pod)) {
      Contribute(out, in.preferred_anti_affinity->term(i), -int64_t{in.preferred_anti_affinity->weight(i)},
                 node_labels);
    }
  }
  if (in.hard_pod_affinity_weight > 0) {
    for (const auto& t : existing.required_affinity_terms) {
      if (t.Matches(*in.incoming, in.namespace_labels)) Contribute(out, t, in.hard_pod_affinity_weight, node_labels);
    }
  }
  for (const auto& wt : existing.preferred_affinity_terms) {
    if (wt.term.Matches(*in.incoming, in.namespace_labels)) Contribute(out, wt.term, wt.weight, node_labels);
  }
  for (const auto& wt : existing.preferred_anti_affinity_terms) {
    if (wt.term.Matches(*in.incoming, in.namespace_labels)) Contribute(out, wt.term, -int64_t{wt.weight}, node_labels);
  }
}

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
  ScoringInputs inputs{&preferred_affinity, &preferred_anti_affinity, &pod, &namespace_labels,
                       args_.hard_pod_affinity_weight};

  auto scores = std::make_shared<TopologyScores>();
  bool any = false;
  std::mutex mu;
  handle_.parallelizer().Until(static_cast<int>(all_nodes.size()), [&](int i) {
    const NodeInfo& node_info = *all_nodes[i];
    const api::Node* node = node_info.node();
    if (node == nullptr || node->metadata.labels.empty()) return;
    thread_local Contributions found;
    found.clear();
    const auto& pods = has_constraints ? node_info.pods() : node_info.pods_with_affinity();
    for (const auto& existing : pods) ProcessExistingPod(inputs, *existing, node->metadata.labels, found);
    if (found.empty()) return;
    std::lock_guard lock(mu);
    any = true;
    for (const auto& [key, value, weight] : found) scores->Add(key, value, weight);
  });
  // Upstream skips when no node produced a contribution (even one that summed to zero).
  if (!any) return Status::Skip();

  auto state = std::make_unique<PreScoreState>();
  state->scores = std::move(scores);
  cycle_state.Write(kPreScoreStateKey, std::move(state));
  return Status::Success();
}

std::pair<int64_t, Status> InterPodAffinity::Score(const framework::CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node_info) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return {0, MissingStateError()};
  if (node_info.node() == nullptr) return {0, Status::Error("node not found")};
  return {s->scores->Score(node_info.node()->metadata.labels), Status::Success()};
}

Status InterPodAffinity::NormalizeScore(const framework::CycleState& state, const PodInfo& pod,
                                        framework::NodeScoreList& scores) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return MissingStateError();
  if (s->scores->empty()) return Status::Success();
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
