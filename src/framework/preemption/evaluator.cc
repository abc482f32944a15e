#include "framework/preemption/evaluator.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/log.h"

namespace kubesched::framework::preemption {
namespace {

int64_t StartTimeOr(const api::Pod& pod, int64_t now_ns) { return pod.status.start_time_ns.value_or(now_ns); }

// intstr.GetScaledValueFromIntOrPercent with roundUp; nullopt when unparsable.
std::optional<int32_t> ScaledValue(const std::string& value, int32_t total) {
  const bool percent = !value.empty() && value.back() == '%';
  std::string_view digits(value.data(), value.size() - (percent ? 1 : 0));
  int32_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  if (!percent) return v;
  return static_cast<int32_t>((static_cast<int64_t>(v) * total + 99) / 100);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// PDBs

bool PdbSelects(const api::PodDisruptionBudget& pdb, const api::Pod& pod) {
  if (pod.metadata.labels.empty() || pdb.metadata.namespace_ != pod.metadata.namespace_) return false;
  // A PDB with a nil or empty selector matches nothing.
  return pdb.selector && !pdb.selector->Empty() && pdb.selector->Matches(pod.metadata.labels);
}

namespace {

std::string LabelKey(const std::string& ns, const std::string& key, const std::string& value) {
  std::string k;
  k.reserve(ns.size() + key.size() + value.size() + 2);
  k.append(ns).push_back('\0');
  k.append(key).push_back('\0');
  k.append(value);
  return k;
}

}  // namespace

PdbIndex::PdbIndex(std::span<const std::shared_ptr<const api::PodDisruptionBudget>> pdbs) {
  for (size_t i = 0; i < pdbs.size(); ++i) Add(static_cast<int>(i), *pdbs[i]);
}

PdbIndex::PdbIndex(std::span<const PdbBudget> budgets) {
  for (size_t i = 0; i < budgets.size(); ++i) Add(static_cast<int>(i), *budgets[i].pdb);
}

void PdbIndex::Add(int index, const api::PodDisruptionBudget& pdb) {
  pdbs_.push_back(&pdb);
  // A PDB with a nil or empty selector matches nothing: not indexed.
  if (!pdb.selector || pdb.selector->Empty()) return;
  if (pdb.selector->match_labels.empty()) {
    by_namespace_[pdb.metadata.namespace_].push_back(index);
    return;
  }
  const auto& [key, value] = *pdb.selector->match_labels.begin();
  by_label_[LabelKey(pdb.metadata.namespace_, key, value)].push_back(index);
}

void PdbIndex::Selecting(const api::Pod& pod, std::vector<int>& out) const {
  out.clear();
  if (pod.metadata.labels.empty()) return;
  auto check = [&](const std::vector<int>& indices) {
    for (int i : indices) {
      if (PdbSelects(*pdbs_[i], pod)) out.push_back(i);
    }
  };
  if (!by_label_.empty()) {
    for (const auto& [key, value] : pod.metadata.labels) {
      if (auto it = by_label_.find(LabelKey(pod.metadata.namespace_, key, value)); it != by_label_.end()) {
        check(it->second);
      }
    }
  }
  if (auto it = by_namespace_.find(pod.metadata.namespace_); it != by_namespace_.end()) check(it->second);
  std::sort(out.begin(), out.end());
}

std::vector<PdbBudget> ComputePdbBudgets(std::span<const std::shared_ptr<const api::PodDisruptionBudget>> pdbs,
                                         std::span<const NodeInfo* const> nodes) {
  std::vector<PdbBudget> out;
  out.reserve(pdbs.size());
  std::vector<int32_t> healthy_of(pdbs.size(), 0);
  if (!pdbs.empty()) {
    const PdbIndex index(pdbs);
    std::vector<int> selecting;
    for (const NodeInfo* node : nodes) {
      for (const auto& pi : node->pods()) {
        const api::Pod& p = pi->pod();
        if (p.metadata.deletion_timestamp_ns) continue;
        if (p.metadata.labels.empty()) {
          // Rare: only a selector of expressions alone can match a pod without labels.
          for (size_t i = 0; i < pdbs.size(); ++i) {
            const auto& pdb = *pdbs[i];
            if (pdb.metadata.namespace_ == p.metadata.namespace_ && pdb.selector && !pdb.selector->Empty() &&
                pdb.selector->Matches(p.metadata.labels))
              ++healthy_of[i];
          }
          continue;
        }
        index.Selecting(p, selecting);
        for (int i : selecting) ++healthy_of[i];
      }
    }
  }
  for (size_t i = 0; i < pdbs.size(); ++i) {
    const auto& pdb = pdbs[i];
    const int32_t healthy = healthy_of[i];
    // The expected count is the healthy count: kubesched does not track controller scale.
    int32_t desired = 0;
    if (pdb->max_unavailable) {
      desired = healthy - ScaledValue(*pdb->max_unavailable, healthy).value_or(0);
    } else if (pdb->min_available) {
      desired = ScaledValue(*pdb->min_available, healthy).value_or(0);
    }
    out.push_back({pdb, std::max(0, healthy - desired)});
  }
  return out;
}

void FilterPodsWithPdbViolation(const std::vector<PodInfoPtr>& pods, std::span<const PdbBudget> pdbs,
                                std::vector<PodInfoPtr>& violating, std::vector<PodInfoPtr>& non_violating,
                                const PdbIndex* index) {
  std::vector<int32_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& b : pdbs) allowed.push_back(b.disruptions_allowed);
  std::vector<int> selecting;
  for (const auto& pi : pods) {
    bool violated = false;
    if (index) {
      index->Selecting(pi->pod(), selecting);
    } else {
      selecting.clear();
      for (size_t i = 0; i < pdbs.size(); ++i) {
        if (PdbSelects(*pdbs[i].pdb, pi->pod())) selecting.push_back(static_cast<int>(i));
      }
    }
    for (int i : selecting) {
      if (--allowed[i] < 0) violated = true;
    }
    (violated ? violating : non_violating).push_back(pi);
  }
}

// ---------------------------------------------------------------------------------------------
// Candidate selection

bool MoreImportantPod(const api::Pod& a, const api::Pod& b, int64_t now_ns) {
  if (a.Priority() != b.Priority()) return a.Priority() > b.Priority();
  return StartTimeOr(a, now_ns) < StartTimeOr(b, now_ns);
}

bool TerminatingByPreemption(const api::Pod& pod) {
  if (!pod.metadata.deletion_timestamp_ns) return false;
  for (const auto& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget") return c.status == "True" && c.reason == "PreemptionByScheduler";
  }
  return false;
}

int PickOneNodeForPreemption(std::span<const Candidate> candidates, int64_t now_ns) {
  if (candidates.empty()) return -1;
  // Upstream's util.GetEarliestPodStartTime: earliest start among the highest-priority victims.
  auto earliest_start = [now_ns](const NodeVictims& v) -> int64_t {
    if (v.pods.empty()) return std::numeric_limits<int64_t>::min();
    int32_t max_priority = v.pods[0]->pod().Priority();
    int64_t earliest = StartTimeOr(v.pods[0]->pod(), now_ns);
    for (const auto& pi : v.pods) {
      const int32_t p = pi->pod().Priority();
      const int64_t start = StartTimeOr(pi->pod(), now_ns);
      if (p == max_priority) {
        earliest = std::min(earliest, start);
      } else if (p > max_priority) {
        max_priority = p;
        earliest = start;
      }
    }
    return earliest;
  };
  using ScoreFn = int64_t (*)(const NodeVictims&);
  const ScoreFn fns[] = {
      [](const NodeVictims& v) -> int64_t { return -v.num_pdb_violations; },
      [](const NodeVictims& v) -> int64_t { return v.pods.empty() ? 0 : -int64_t{v.pods[0]->pod().Priority()}; },
      [](const NodeVictims& v) -> int64_t {
        int64_t sum = 0;
        // Shifted so that negative priorities still count as victims.
        for (const auto& pi : v.pods) sum += int64_t{pi->pod().Priority()} + (int64_t{1} << 31);
        return -sum;
      },
      [](const NodeVictims& v) -> int64_t { return -static_cast<int64_t>(v.pods.size()); },
  };
  std::vector<int> remaining(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) remaining[i] = static_cast<int>(i);
  auto narrow = [&](auto score) -> bool {
    int64_t best = std::numeric_limits<int64_t>::min();
    std::vector<int> selected;
    for (int i : remaining) {
      const int64_t s = score(candidates[i].victims);
      if (s > best) {
        best = s;
        selected.clear();
      }
      if (s == best) selected.push_back(i);
    }
    remaining = std::move(selected);
    return remaining.size() == 1;
  };
  for (ScoreFn fn : fns) {
    if (narrow(fn)) return remaining[0];
  }
  if (narrow(earliest_start)) return remaining[0];
  return remaining[0];
}

std::string FitErrorMessage(size_t num_all_nodes, const NodeToStatus& statuses) {
  std::map<std::string, size_t> histogram;
  for (const auto& [name, status] : statuses.statuses()) {
    for (const auto& reason : status.reasons()) ++histogram[reason];
  }
  if (statuses.size() < num_all_nodes) {
    for (const auto& reason : statuses.absent_status().reasons()) {
      histogram[reason] += num_all_nodes - statuses.size();
    }
  }
  std::vector<std::string> entries;
  entries.reserve(histogram.size());
  for (const auto& [reason, count] : histogram) entries.push_back(fmt::format("{} {}", count, reason));
  std::sort(entries.begin(), entries.end());
  return fmt::format("0/{} nodes are available: {}.", num_all_nodes, fmt::join(entries, ", "));
}

// ---------------------------------------------------------------------------------------------
// Evaluator

std::pair<bool, std::string> Evaluator::PodEligibleToPreemptOthers(const api::Pod& pod,
                                                                   const Status& nominated_node_status) const {
  if (pod.spec.preemption_policy == api::PreemptionPolicy::kNever) {
    return {false, std::string(kNotEligibleNever)};
  }
  // A member of a gang PodGroup preempts with its group, as one preemptor (KEP-5710's
  // workload-aware preemption, run by GangScheduling's group cycle), never on its own.
  if (const std::string_view group = api::PodGroupOf(pod, api::PodGroupApi::kScheduling); !group.empty()) {
    if (const PodGroupTracker* groups = handle_.PodGroups(api::PodGroupApi::kScheduling)) {
      const auto g = groups->Group(pod.metadata.namespace_, group);
      if (g != nullptr && g->policy == api::PodGroupPolicy::kGang) return {false, std::string(kNotEligibleGroupMember)};
    }
  }
  const std::string& nominated = pod.status.nominated_node_name;
  if (!nominated.empty()) {
    // A nominated node that the filters now reject outright deserves a new preemption attempt.
    if (nominated_node_status.code() == Code::kUnschedulableAndUnresolvable) return {true, ""};
    const bool planned = handle_.nominator().IsPlanned(pod);
    if (const NodeInfo* node = handle_.SnapshotSharedLister().Get(nominated)) {
      for (const auto& pi : node->pods()) {
        if ((planned || pi->pod().Priority() < pod.Priority()) && TerminatingByPreemption(pi->pod())) {
          return {false, std::string(kNotEligibleTerminating)};
        }
      }
    }
  }
  return {true, ""};
}

std::vector<const NodeInfo*> Evaluator::PotentialNodes(const NodeToStatus& filtered_statuses) const {
  std::vector<const NodeInfo*> potential;
  for (const NodeInfo* node : handle_.SnapshotSharedLister().List()) {
    if (filtered_statuses.Get(node->name()).code() == Code::kUnschedulable) potential.push_back(node);
  }
  return potential;
}

std::vector<PdbBudget> Evaluator::PdbBudgets() const {
  return ComputePdbBudgets(handle_.client().ListPodDisruptionBudgets(), handle_.SnapshotSharedLister().List());
}

Status Evaluator::SelectVictimsOnNode(CycleState& state, const PodInfo& pod, NodeInfo& node_info,
                                      std::span<const PdbBudget> pdbs, NodeVictims& victims, const PdbIndex* index) {
  victims = NodeVictims{};
  const int32_t priority = pod.pod().Priority();
  std::vector<PodInfoPtr> potential;
  for (const auto& pi : node_info.pods()) {
    if (pi->pod().Priority() < priority) potential.push_back(pi);
  }
  auto remove_pod = [&](const PodInfoPtr& pi) -> Status {
    node_info.RemovePod(pi->pod());
    Status s = handle_.RunPreFilterExtensionRemovePod(state, pod, *pi, node_info);
    return s.IsSuccess() ? Status() : Status::Error(s.Message());
  };
  auto add_pod = [&](const PodInfoPtr& pi) -> Status {
    node_info.AddPod(pi);
    Status s = handle_.RunPreFilterExtensionAddPod(state, pod, *pi, node_info);
    return s.IsSuccess() ? Status() : Status::Error(s.Message());
  };
  for (const auto& pi : potential) {
    if (Status s = remove_pod(pi); !s.IsSuccess()) return s;
  }
  if (potential.empty()) return Status::UnschedulableAndUnresolvable(std::string(kNoVictims));
  // Not fitting even without every lower-priority pod ends the search on this node (upstream does
  // not consider the preemptor's affinity to victims).
  if (Status s = handle_.RunFilterPluginsWithNominatedPods(state, pod, node_info); !s.IsSuccess()) return s;

  const int64_t now = handle_.clock().NowNs();
  auto more_important = [now](const PodInfoPtr& a, const PodInfoPtr& b) {
    return MoreImportantPod(a->pod(), b->pod(), now);
  };
  std::stable_sort(potential.begin(), potential.end(), more_important);
  std::vector<PodInfoPtr> violating;
  std::vector<PodInfoPtr> non_violating;
  FilterPodsWithPdbViolation(potential, pdbs, violating, non_violating, index);

  // Re-adds a victim; it stays (is reprieved) when the preemptor still fits.
  auto reprieve = [&](const PodInfoPtr& pi, bool& fits) -> Status {
    if (Status s = add_pod(pi); !s.IsSuccess()) return s;
    fits = handle_.RunFilterPluginsWithNominatedPods(state, pod, node_info).IsSuccess();
    if (!fits) {
      if (Status s = remove_pod(pi); !s.IsSuccess()) return s;
      victims.pods.push_back(pi);
    }
    return Status();
  };
  for (const auto& pi : violating) {
    bool fits = false;
    if (Status s = reprieve(pi, fits); !s.IsSuccess()) return s;
    if (!fits) ++victims.num_pdb_violations;
  }
  for (const auto& pi : non_violating) {
    bool fits = false;
    if (Status s = reprieve(pi, fits); !s.IsSuccess()) return s;
  }
  if (!violating.empty() && !non_violating.empty()) {
    std::stable_sort(victims.pods.begin(), victims.pods.end(), more_important);
  }
  return Status();
}

std::optional<int32_t> Evaluator::LowestPodPriority(const NodeInfo& node) {
  auto compute = [&] {
    std::optional<int32_t> lowest;
    for (const PodInfoPtr& pi : node.pods()) {
      const int32_t p = pi->pod().Priority();
      if (!lowest || p < *lowest) lowest = p;
    }
    return lowest;
  };
  if (node.snapshot_index() < 0) return compute();
  const size_t i = static_cast<size_t>(node.snapshot_index());
  if (lowest_priority_.size() <= i) lowest_priority_.resize(i + 1);
  LowestPriority& entry = lowest_priority_[i];
  if (!entry.known || entry.generation != node.generation()) {
    entry = LowestPriority{true, node.generation(), compute()};
  }
  return entry.priority;
}

std::vector<Candidate> Evaluator::DryRunPreemption(CycleState& state, const PodInfo& pod,
                                                   std::span<const NodeInfo* const> potential_nodes,
                                                   std::span<const PdbBudget> pdbs, int32_t offset,
                                                   int32_t num_candidates, NodeToStatus& node_statuses,
                                                   std::vector<std::string>& errors) {
  std::vector<Candidate> non_violating;
  std::vector<Candidate> violating;
  const size_t n = potential_nodes.size();
  const int32_t priority = pod.pod().Priority();
  const PdbIndex index(pdbs);
  // Sequential (upstream runs this in parallel and cancels once enough candidates exist), so the
  // result is deterministic.
  for (size_t i = 0; i < n; ++i) {
    const NodeInfo& node = *potential_nodes[(static_cast<size_t>(offset) + i) % n];
    // A node without lower-priority pods has no victims: skip cloning it and the cycle state
    // (the verdict is the one SelectVictimsOnNode would reach).
    const std::optional<int32_t> lowest = LowestPodPriority(node);
    const bool has_lower = lowest && *lowest < priority;
    if (!has_lower) {
      static const StaticReasons kReasons{kNoVictims};
      node_statuses.Set(node.name(), Status(Code::kUnschedulableAndUnresolvable, kReasons));
      continue;
    }
    std::unique_ptr<NodeInfo> node_copy = node.Clone();
    std::unique_ptr<CycleState> state_copy = state.Clone();
    NodeVictims victims;
    Status status = SelectVictimsOnNode(*state_copy, pod, *node_copy, pdbs, victims, &index);
    if (status.IsSuccess() && !victims.pods.empty()) {
      const bool no_violation = victims.num_pdb_violations == 0;
      (no_violation ? non_violating : violating).push_back({node.name(), std::move(victims)});
      if (!non_violating.empty() && static_cast<int64_t>(non_violating.size() + violating.size()) >= num_candidates) {
        break;
      }
      continue;
    }
    if (status.IsSuccess()) {
      status = Status::Error(fmt::format("expected at least one victim pod on node \"{}\"", node.name()));
    }
    if (status.IsError()) errors.push_back(status.Message());
    node_statuses.Set(node.name(), std::move(status));
  }
  for (auto& c : violating) non_violating.push_back(std::move(c));
  return non_violating;
}

Status Evaluator::Evict(const api::Pod& victim, const api::Pod& preemptor, const std::string& node_name,
                        std::string_view reason, const std::string& destination) {
  return Evict(victim, EventObjectReference::ForPod(preemptor),
               fmt::format("Preempted by pod {} on node {}", preemptor.metadata.uid, node_name), reason, destination);
}

Status Evaluator::Evict(const api::Pod& victim, const EventObjectReference& preemptor, std::string_view note,
                        std::string_view reason, const std::string& destination) {
  // A victim still waiting at Permit is rejected instead of deleted.
  if (auto waiting = handle_.GetWaitingPod(victim.metadata.uid)) {
    waiting->Reject(plugin_name_, "preempted");
  } else {
    Status s = destination.empty() ? handle_.client().DeletePod(victim, reason)
                                   : handle_.client().DeletePodForMove(victim, destination, reason);
    if (!s.IsSuccess()) return Status::Error(s.Message());
  }
  // Upstream's PreemptPod records this for a rejected waiting pod and a deleted one alike; a
  // victim already terminating it leaves alone, without an event.
  ClusterClient& client = handle_.client();
  if (client.RecordsEvents() && !victim.metadata.deletion_timestamp_ns) {
    client.RecordEvent({.regarding = EventObjectReference::ForPod(victim),
                        .related = preemptor,
                        .type = "Normal",
                        .reason = "Preempted",
                        .action = "Preempting",
                        .note = std::string(note),
                        .reporting_controller = std::string(handle_.profile_name())});
  }
  return Status();
}

void Evaluator::ClearLowerPriorityNominations(const std::string& node_name, int32_t priority) {
  for (const auto& nominated : handle_.nominator().NominatedPodsForNode(node_name)) {
    if (nominated->pod().Priority() >= priority) continue;
    // Room a plan holds (a batch's placement, a moved pod's destination) stays held: the plans
    // that made it counted on it, and a preemption plan counts it as taken.
    if (handle_.nominator().IsPlanned(nominated->pod())) continue;
    handle_.nominator().DeleteNominatedPodIfExists(nominated->pod());
    (void)handle_.client().SetNominatedNodeName(nominated->pod(), "");
  }
}

std::expected<std::vector<Candidate>, Status> Evaluator::CallExtenders(const api::Pod& pod,
                                                                       std::vector<Candidate> candidates) {
  std::span<Extender* const> extenders = handle_.Extenders();
  if (extenders.empty() || candidates.empty()) return candidates;
  NodeToVictims victims;
  for (Candidate& c : candidates) victims.emplace(std::move(c.node_name), std::move(c.victims));
  for (Extender* extender : extenders) {
    if (!extender->SupportsPreemption() || !extender->IsInterested(pod)) continue;
    auto answered = extender->ProcessPreemption(pod, victims, handle_.SnapshotSharedLister());
    if (!answered) {
      if (extender->IsIgnorable()) {
        KS_LOG.InfoS("Skipped extender as it returned error and has ignorable flag set", "extender", extender->Name(),
                     "err", answered.error());
        continue;
      }
      return std::unexpected(Status::Error(answered.error()));
    }
    for (auto it = answered->begin(); it != answered->end();) {
      if (!it->second.pods.empty()) {
        ++it;
        continue;
      }
      if (!extender->IsIgnorable()) {
        return std::unexpected(
            Status::Error(fmt::format("expected at least one victim pod on node \"{}\"", it->first)));
      }
      KS_LOG.InfoS("Ignored node for which the extender didn't report victims", "node", it->first, "extender",
                   extender->Name());
      it = answered->erase(it);
    }
    victims = std::move(*answered);
    if (victims.empty()) break;  // no preemption can happen, whatever the other extenders say
  }
  std::vector<Candidate> remaining;
  remaining.reserve(victims.size());
  for (auto& [node, v] : victims) remaining.push_back({node, std::move(v)});
  return remaining;
}

Status Evaluator::PrepareCandidate(const Candidate& candidate, const PodInfo& pod) {
  const api::Pod& preemptor = pod.pod();
  const std::string reason = fmt::format("Preempted by pod {} on node {}", preemptor.Key(), candidate.node_name);
  for (const auto& victim : candidate.victims.pods) {
    if (Status s = Evict(victim->pod(), preemptor, candidate.node_name, reason); !s.IsSuccess()) return s;
  }
  handle_.ObservePreemptionVictims(candidate.victims.pods.size());
  ClearLowerPriorityNominations(candidate.node_name, preemptor.Priority());
  return Status();
}

}  // namespace kubesched::framework::preemption
