#include "plugins/gang_scheduling/group_preemption.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "framework/preemption/replacement.h"
#include "plugins/helper/placement_input.h"
#include "util/log.h"

namespace kubesched::plugins::gang_scheduling {

using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;
namespace preemption = framework::preemption;

namespace {

int64_t StartOf(const api::Pod& pod) { return pod.status.start_time_ns.value_or(pod.metadata.creation_timestamp_ns); }

// Whether the pod's placement depends on other pods' (required or preferred pod affinity, anti-
// affinity, spread constraints): giving a victim back next to it then needs a new placement.
bool Coupled(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  return (a && (a->pod_affinity || a->pod_anti_affinity)) || !pod.spec.topology_spread_constraints.empty();
}

// The pod as its controller would recreate it: not bound to any node yet.
PodInfoPtr Unbound(const PodInfo& pi) {
  auto pod = std::make_shared<api::Pod>(pi.pod());
  pod->spec.node_name.clear();
  pod->status = api::PodStatus{};
  return pi.WithPod(std::move(pod));
}

}  // namespace

// What-if copies of the nodes a decision changes, standing in for the snapshot's nodes.
class WhatIfNodes {
 public:
  explicit WhatIfNodes(std::span<const NodeInfo* const> snapshot) : nodes_(snapshot.begin(), snapshot.end()) {
    for (size_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i]->name(), i);
  }
  NodeInfo& Mutable(const std::string& name) {
    auto it = copies_.find(name);
    if (it == copies_.end()) {
      const size_t i = index_.at(name);
      it = copies_.emplace(name, nodes_[i]->Clone()).first;
      nodes_[i] = it->second.get();
    }
    return *it->second;
  }
  void Remove(const VictimUnit& u) {
    for (size_t i = 0; i < u.pods.size(); ++i) Mutable(u.nodes[i]).RemovePod(u.pods[i]->pod());
  }
  void Add(const VictimUnit& u) {
    for (size_t i = 0; i < u.pods.size(); ++i) Mutable(u.nodes[i]).AddPod(u.pods[i]);
  }
  std::span<const NodeInfo* const> List() const { return nodes_; }
  const NodeInfo& Get(const std::string& name) const { return *nodes_[index_.at(name)]; }

 private:
  std::vector<const NodeInfo*> nodes_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<std::string, std::unique_ptr<NodeInfo>> copies_;
};

bool MoreImportant(const VictimUnit& a, const VictimUnit& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  const bool a_group = !a.group.empty(), b_group = !b.group.empty();
  if (a_group != b_group) return a_group;
  if (a_group && a.pods.size() != b.pods.size()) return a.pods.size() > b.pods.size();
  return a.start_ns < b.start_ns;
}

int32_t GroupPreemptor::GroupPriority(const api::PodGroup& group, const std::vector<PodInfoPtr>& members) {
  if (group.priority) return *group.priority;
  int32_t p = std::numeric_limits<int32_t>::min();
  for (const auto& m : members) p = std::max(p, m->pod().Priority());
  return members.empty() ? 0 : p;
}

std::vector<VictimUnit> GroupPreemptor::Candidates(const api::PodGroup& group, int32_t priority) const {
  framework::PodGroupTracker* groups = handle_.PodGroups(api::PodGroupApi::kScheduling);
  std::map<std::string, VictimUnit> by_key;  // ordered: the decision does not depend on hashing
  std::set<std::string> spared;              // whole groups with a pod of the preemptor's priority or more
  for (const NodeInfo* node : handle_.SnapshotSharedLister().List()) {
    for (const PodInfoPtr& pi : node->pods()) {
      const api::Pod& p = pi->pod();
      if (p.metadata.deletion_timestamp_ns) continue;  // leaving already
      const std::string_view g = api::PodGroupOf(p, api::PodGroupApi::kScheduling);
      if (!g.empty() && p.metadata.namespace_ == group.metadata.namespace_ && g == group.metadata.name) continue;
      std::shared_ptr<const api::PodGroup> pg;
      if (!g.empty() && groups != nullptr) pg = groups->Group(p.metadata.namespace_, g);
      const int32_t pod_priority = pg != nullptr && pg->priority ? *pg->priority : p.Priority();
      const bool whole = pg != nullptr && pg->disruption_mode == api::DisruptionMode::kPodGroup;
      const std::string key = whole ? "group/" + pg->Key() : "pod/" + p.metadata.uid;
      if (pod_priority >= priority) {
        if (whole) spared.insert(key);
        continue;
      }
      VictimUnit& u = by_key[key];
      if (u.pods.empty()) {
        u.group = whole ? pg->Key() : "";
        u.priority = pod_priority;
        u.start_ns = StartOf(p);
      }
      u.priority = std::max(u.priority, pod_priority);
      u.start_ns = std::min(u.start_ns, StartOf(p));
      u.pods.push_back(pi);
      u.nodes.push_back(node->name());
    }
  }
  std::vector<VictimUnit> out;
  for (auto& [key, u] : by_key) {
    if (!spared.contains(key)) out.push_back(std::move(u));
  }
  std::stable_sort(out.begin(), out.end(), MoreImportant);
  // PodDisruptionBudgets, consumed in order of importance (upstream's filterPodsWithPDBViolation).
  const std::vector<preemption::PdbBudget> pdbs = evaluator_.PdbBudgets();
  if (!pdbs.empty()) {
    std::vector<PodInfoPtr> all;
    std::unordered_map<const PodInfo*, size_t> unit_of;
    for (size_t i = 0; i < out.size(); ++i) {
      for (const auto& pi : out[i].pods) {
        all.push_back(pi);
        unit_of.emplace(pi.get(), i);
      }
    }
    std::vector<PodInfoPtr> violating, non_violating;
    preemption::FilterPodsWithPdbViolation(all, pdbs, violating, non_violating);
    for (const auto& pi : violating) out[unit_of.at(pi.get())].violates_pdb = true;
  }
  return out;
}

GroupPreemptionResult GroupPreemptor::Plan(const api::PodGroup& group, const std::vector<PodInfoPtr>& members,
                                           int32_t needed) {
  const auto start = std::chrono::steady_clock::now();
  GroupPreemptionResult result = Choose(group, members, needed);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

GroupPreemptionResult GroupPreemptor::Choose(const api::PodGroup& group, const std::vector<PodInfoPtr>& members,
                                             int32_t needed) {
  GroupPreemptionResult result;
  if (!group.topology_key.empty()) {
    result.message = kGroupPreemptionTopology;
    return result;
  }
  for (const auto& m : members) {
    if (m->pod().spec.preemption_policy == api::PreemptionPolicy::kNever) {
      result.message = kGroupPreemptionNever;
      return result;
    }
  }
  std::vector<VictimUnit> units = Candidates(group, GroupPriority(group, members));
  result.candidates = static_cast<int32_t>(units.size());
  if (units.empty()) {
    result.message = kGroupNoVictims;
    return result;
  }

  // The nodes cheapest to clear first (the placement's heuristics take nodes in this order), and
  // among placements equal on pods placed and nodes used, the one on the nodes whose candidates
  // matter least (the profile's scores replaced by the cost of the candidates on each node).
  const std::unordered_map<std::string, int64_t> node_scores = VictimCostScores(units);
  std::vector<const NodeInfo*> by_cost(handle_.SnapshotSharedLister().List().begin(),
                                       handle_.SnapshotSharedLister().List().end());
  auto score_of = [&node_scores](const NodeInfo* n) {
    auto it = node_scores.find(n->name());
    return it == node_scores.end() ? framework::kMaxNodeScore : it->second;
  };
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](const NodeInfo* a, const NodeInfo* b) { return score_of(a) > score_of(b); });
  WhatIfNodes nodes(by_cost);
  for (const VictimUnit& u : units) nodes.Remove(u);
  optimizer::PlacementOptions options;
  options.timeout_seconds = kSolveSeconds;
  auto place = [&] {
    optimizer::PlacementInput input = helper::MakePlacementInput(handle_, members, nodes.List());
    input.scores = [&score_of](const PodInfo&, std::span<const NodeInfo* const> list) {
      std::vector<int64_t> out;
      out.reserve(list.size());
      for (const NodeInfo* n : list) out.push_back(score_of(n));
      return out;
    };
    optimizer::PlacementResult r = optimizer::PlaceBatch(input, options);
    ++result.solves;
    result.optimal = result.optimal && r.optimal;
    return r;
  };
  optimizer::PlacementResult placed = place();
  if (placed.placed < needed) {
    result.message = fmt::format(
        "pod group preemption: preemption does not help: {} of the {} pending pods fit with every pod of lower "
        "priority gone, {} needed",
        placed.placed, members.size(), needed);
    return result;
  }

  // Reprieve: PDB-protected candidates first, then by importance; each is given back while the
  // group still places `needed` members.
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return units[a].violates_pdb && !units[b].violates_pdb; });
  const bool members_coupled =
      std::any_of(members.begin(), members.end(), [](const PodInfoPtr& m) { return Coupled(m->pod()); });
  std::vector<bool> evicted(units.size(), true);
  const auto reprieve_start = std::chrono::steady_clock::now();
  for (size_t i : order) {
    const VictimUnit& u = units[i];
    nodes.Add(u);
    // A unit the current placement leaves room for (the members placed on its nodes still pass
    // the profile's filters there), with no pod-to-pod constraint on either side, is spared
    // without a new placement.
    const bool still_fits = !members_coupled && std::none_of(u.pods.begin(), u.pods.end(), [](const PodInfoPtr& p) {
      return Coupled(p->pod());
    }) && StillFits(placed, u, nodes);
    if (still_fits) {
      evicted[i] = false;
      continue;
    }
    if (result.solves >= kMaxSolves ||
        std::chrono::steady_clock::now() - reprieve_start > std::chrono::duration<double>(kReprieveSeconds)) {
      nodes.Remove(u);
      continue;
    }
    optimizer::PlacementResult again = place();
    if (again.placed >= needed) {
      placed = std::move(again);
      evicted[i] = false;
    } else {
      nodes.Remove(u);
    }
  }
  for (size_t i = 0; i < units.size(); ++i) {
    if (evicted[i]) result.victims.push_back(units[i]);
  }

  // Moves: a victim its controller recreates, which fits elsewhere once the group is placed, has
  // its destination held for its replacement.
  std::vector<PodInfoPtr> movers;
  std::unordered_map<std::string, std::string> from;  // uid -> node
  for (const VictimUnit& u : result.victims) {
    if (!u.group.empty()) continue;
    const api::OwnerReference* ref = preemption::ControllerOf(u.pods[0]->pod());
    if (ref == nullptr || !preemption::Recreates(*ref)) continue;
    movers.push_back(Unbound(*u.pods[0]));
    from.emplace(u.pods[0]->pod().metadata.uid, u.nodes[0]);
  }
  if (!movers.empty()) {
    std::unordered_map<std::string, PodInfoPtr> by_uid;
    for (const auto& m : members) by_uid.emplace(m->pod().metadata.uid, m);
    for (const auto& p : placed.plan) {
      if (p.node.empty()) continue;
      auto pod = std::make_shared<api::Pod>(p.pod->pod());
      pod->spec.node_name = p.node;
      nodes.Mutable(p.node).AddPod(p.pod->WithPod(std::move(pod)));
    }
    optimizer::PlacementInput input = helper::MakePlacementInput(handle_, movers, nodes.List());
    // The members' nominations are not yet made: their room is in the nodes themselves.
    const optimizer::PlacementResult moved = optimizer::PlaceBatch(input, options);
    for (const auto& p : moved.plan) {
      const std::string& uid = p.pod->pod().metadata.uid;
      if (!p.node.empty() && p.node != from.at(uid)) result.moves.emplace_back(uid, p.node);
    }
  }
  result.placement = std::move(placed);
  result.preempted = true;
  return result;
}

std::unordered_map<std::string, int64_t> GroupPreemptor::VictimCostScores(const std::vector<VictimUnit>& units) {
  // A node's cost ranks its candidates as the order of importance does, lexicographically by
  // priority: one pod of a priority outweighs every pod below it (the counts per priority, highest
  // first, compared in order). Nodes are scored by their rank in that order, cheapest
  // kMaxNodeScore, dearest 0; equal costs score alike.
  std::unordered_map<std::string, std::map<int32_t, int64_t, std::greater<>>> cost;
  for (const VictimUnit& u : units) {
    for (const std::string& n : u.nodes) cost[n][u.priority] += 1;
  }
  std::vector<std::pair<const std::string*, const std::map<int32_t, int64_t, std::greater<>>*>> ranked;
  for (const auto& [n, c] : cost) ranked.emplace_back(&n, &c);
  auto less = [](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.second->begin(), a.second->end(), b.second->begin(), b.second->end());
  };
  std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    if (less(a, b) != less(b, a)) return less(a, b);
    return *a.first < *b.first;
  });
  std::unordered_map<std::string, int64_t> scores;
  size_t rank = 0;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (i > 0 && less(ranked[i - 1], ranked[i])) rank = i;
    scores[*ranked[i].first] =
        framework::kMaxNodeScore - static_cast<int64_t>(rank * framework::kMaxNodeScore / ranked.size());
  }
  return scores;
}

bool GroupPreemptor::StillFits(const optimizer::PlacementResult& placed, const VictimUnit& unit,
                               const WhatIfNodes& nodes) {
  const std::set<std::string> unit_nodes(unit.nodes.begin(), unit.nodes.end());
  for (const std::string& name : unit_nodes) {
    std::unique_ptr<NodeInfo> trial;
    for (const auto& p : placed.plan) {
      if (p.node != name) continue;
      if (trial == nullptr) trial = nodes.Get(name).Clone();
      framework::CycleState state;
      if (!handle_.RunPreFilterPlugins(state, *p.pod).second.IsSuccess()) return false;
      if (!handle_.RunFilterPlugins(state, *p.pod, *trial).IsSuccess()) return false;
      auto pod = std::make_shared<api::Pod>(p.pod->pod());
      pod->spec.node_name = name;
      trial->AddPod(p.pod->WithPod(std::move(pod)));
    }
  }
  return true;
}

Status GroupPreemptor::Apply(const api::PodGroup& group, GroupPreemptionResult& plan) {
  const int64_t now_ns = handle_.clock().NowNs();
  const std::unordered_map<std::string, std::string> moves(plan.moves.begin(), plan.moves.end());
  const framework::EventObjectReference ref{
      "PodGroup",         std::string(group.ApiVersion()), group.metadata.namespace_, group.metadata.name,
      group.metadata.uid, group.metadata.resource_version};
  const std::string note = fmt::format("Preempted by podgroup {} on node cluster", group.metadata.uid);
  // The victim's DisruptionTarget message, in kubesched's words for a preemption ("Preempted by
  // pod ..."), naming the group, with upstream's message for a pod group's preemption after it.
  const std::string why =
      fmt::format("{}: preempting to accommodate a higher priority podgroup", handle_.profile_name());
  for (const VictimUnit& u : plan.victims) {
    for (const PodInfoPtr& victim : u.pods) {
      std::string destination;
      if (auto it = moves.find(victim->pod().metadata.uid); it != moves.end()) {
        destination = it->second;
        PodInfoPtr placeholder = preemption::ReplacementPlaceholder(*victim);
        plan.placeholders.push_back(placeholder);
        preemption::HoldForReplacement(handle_.nominator(), std::move(placeholder), destination,
                                       victim->pod().metadata.uid, now_ns);
      }
      const std::string reason =
          destination.empty() ? fmt::format("Preempted by podgroup {} ({})", group.Key(), why)
                              : fmt::format("Moved to node {} by podgroup {} ({})", destination, group.Key(), why);
      if (Status s = evaluator_.Evict(victim->pod(), ref, note, reason, destination); !s.IsSuccess()) return s;
      ++plan.evicted_pods;
    }
  }
  handle_.ObservePreemptionVictims(static_cast<size_t>(plan.evicted_pods));
  // Each placed member is nominated where the placement put it: pods of lower priority may not
  // take the room the victims leave.
  for (const auto& p : plan.placement.plan) {
    if (p.node.empty()) continue;
    handle_.nominator().AddNominatedPod(p.pod, p.node);
    if (p.pod->pod().status.nominated_node_name != p.node) {
      (void)handle_.client().SetNominatedNodeName(p.pod->pod(), p.node);
    }
  }
  KS_LOG_V(2).InfoS("Pod group preemption", "podGroup", group.Key(), "victims", plan.victims.size(), "pods",
                    plan.evicted_pods, "moves", plan.moves.size(), "solves", plan.solves, "optimal", plan.optimal,
                    "seconds", plan.seconds);
  return Status();
}

}  // namespace kubesched::plugins::gang_scheduling
