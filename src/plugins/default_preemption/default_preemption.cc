#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "plugins/helper/strict_decoder.h"
#include "plugins/helper/validation.h"

namespace kubesched::plugins::default_preemption {
namespace {

using framework::Code;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;

int64_t StartTimeOr(const api::Pod& pod, int64_t now_ns) { return pod.status.start_time_ns.value_or(now_ns); }

// Upstream's podTerminatingByPreemption: deleted, and marked DisruptionTarget by the scheduler.
bool TerminatingByPreemption(const api::Pod& pod) {
  if (!pod.metadata.deletion_timestamp_ns) return false;
  for (const auto& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget") return c.status == "True" && c.reason == "PreemptionByScheduler";
  }
  return false;
}

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

// "0/N nodes are available: <sorted histogram>." as upstream's FitError.Error().
std::string FitErrorMessage(size_t num_all_nodes, const framework::NodeToStatus& statuses) {
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
  std::string out = fmt::format("0/{} nodes are available:", num_all_nodes);
  std::string joined;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) joined += ", ";
    joined += entries[i];
  }
  return out + " " + joined + ".";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Args

std::expected<DefaultPreemptionArgs, framework::ArgsErrors> DecodeArgs(const nlohmann::json& json,
                                                                       const std::string& path) {
  DefaultPreemptionArgs args;
  std::vector<std::string> errors;
  helper::StrictDecoder d(errors);
  const std::string pct_path = helper::PathChild(path, "minCandidateNodesPercentage");
  const std::string abs_path = helper::PathChild(path, "minCandidateNodesAbsolute");
  if (d.Object(json, path, {"minCandidateNodesPercentage", "minCandidateNodesAbsolute", "apiVersion", "kind"})) {
    if (auto v = d.Int32(helper::Member(json, "minCandidateNodesPercentage"), pct_path)) {
      args.min_candidate_nodes_percentage = *v;
    }
    if (auto v = d.Int32(helper::Member(json, "minCandidateNodesAbsolute"), abs_path)) {
      args.min_candidate_nodes_absolute = *v;
    }
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  // ValidateDefaultPreemptionArgs.
  const int32_t pct = args.min_candidate_nodes_percentage;
  const int32_t abs = args.min_candidate_nodes_absolute;
  if (pct < 0 || pct > 100) {
    errors.push_back(helper::FieldInvalid(pct_path, std::to_string(pct), "not in valid range [0, 100]"));
  }
  if (abs < 0) errors.push_back(helper::FieldInvalid(abs_path, std::to_string(abs), "not in valid range [0, inf)"));
  if (pct == 0 && abs == 0) {
    errors.push_back(
        helper::FieldInvalid(pct_path, "0", "cannot be zero at the same time as minCandidateNodesAbsolute"));
    errors.push_back(
        helper::FieldInvalid(abs_path, "0", "cannot be zero at the same time as minCandidateNodesPercentage"));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

std::expected<DefaultPreemptionArgs, std::string> ParseArgs(const nlohmann::json& json) {
  auto decoded = DecodeArgs(json, "");
  if (!decoded) return std::unexpected(helper::AggregateErrors(decoded.error().errors));
  return *decoded;
}

nlohmann::ordered_json EncodeArgs(const DefaultPreemptionArgs& args) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["minCandidateNodesPercentage"] = args.min_candidate_nodes_percentage;
  out["minCandidateNodesAbsolute"] = args.min_candidate_nodes_absolute;
  return out;
}

// ---------------------------------------------------------------------------------------------
// PDBs

std::vector<PdbBudget> ComputePdbBudgets(std::span<const std::shared_ptr<const api::PodDisruptionBudget>> pdbs,
                                         std::span<const NodeInfo* const> nodes) {
  std::vector<PdbBudget> out;
  out.reserve(pdbs.size());
  for (const auto& pdb : pdbs) {
    int32_t healthy = 0;
    if (pdb->selector && !pdb->selector->Empty()) {
      for (const NodeInfo* node : nodes) {
        for (const auto& pi : node->pods()) {
          const api::Pod& p = pi->pod();
          if (p.metadata.namespace_ != pdb->metadata.namespace_ || p.metadata.deletion_timestamp_ns) continue;
          if (pdb->selector->Matches(p.metadata.labels)) ++healthy;
        }
      }
    }
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
                                std::vector<PodInfoPtr>& violating, std::vector<PodInfoPtr>& non_violating) {
  std::vector<int32_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& b : pdbs) allowed.push_back(b.disruptions_allowed);
  for (const auto& pi : pods) {
    const api::Pod& pod = pi->pod();
    bool violated = false;
    // A pod without labels matches no PDB.
    if (!pod.metadata.labels.empty()) {
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const api::PodDisruptionBudget& pdb = *pdbs[i].pdb;
        if (pdb.metadata.namespace_ != pod.metadata.namespace_) continue;
        // A PDB with a nil or empty selector matches nothing.
        if (!pdb.selector || pdb.selector->Empty() || !pdb.selector->Matches(pod.metadata.labels)) continue;
        if (--allowed[i] < 0) violated = true;
      }
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

int PickOneNodeForPreemption(std::span<const Candidate> candidates, int64_t now_ns) {
  if (candidates.empty()) return -1;
  // Upstream's util.GetEarliestPodStartTime: earliest start among the highest-priority victims.
  auto earliest_start = [now_ns](const Victims& v) -> int64_t {
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
  using ScoreFn = int64_t (*)(const Victims&);
  const ScoreFn fns[] = {
      [](const Victims& v) -> int64_t { return -v.num_pdb_violations; },
      [](const Victims& v) -> int64_t { return v.pods.empty() ? 0 : -int64_t{v.pods[0]->pod().Priority()}; },
      [](const Victims& v) -> int64_t {
        int64_t sum = 0;
        // Shifted so that negative priorities still count as victims.
        for (const auto& pi : v.pods) sum += int64_t{pi->pod().Priority()} + (int64_t{1} << 31);
        return -sum;
      },
      [](const Victims& v) -> int64_t { return -static_cast<int64_t>(v.pods.size()); },
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

// ---------------------------------------------------------------------------------------------
// Plugin

DefaultPreemption::DefaultPreemption(DefaultPreemptionArgs args, framework::Handle& handle)
    : args_(args), handle_(handle) {}

int32_t DefaultPreemption::CalculateNumCandidates(int32_t num_nodes) const {
  int32_t n = static_cast<int32_t>(static_cast<int64_t>(num_nodes) * args_.min_candidate_nodes_percentage / 100);
  n = std::max(n, args_.min_candidate_nodes_absolute);
  return std::min(n, num_nodes);
}

std::pair<int32_t, int32_t> DefaultPreemption::GetOffsetAndNumCandidates(int32_t num_nodes) {
  int32_t offset = 0;
  if (fixed_offset_ >= 0) {
    offset = num_nodes > 0 ? fixed_offset_ % num_nodes : 0;
  } else if (num_nodes > 0) {
    offset = std::uniform_int_distribution<int32_t>(0, num_nodes - 1)(rng_);
  }
  return {offset, CalculateNumCandidates(num_nodes)};
}

std::pair<bool, std::string> DefaultPreemption::PodEligibleToPreemptOthers(const api::Pod& pod,
                                                                           const Status& nominated_node_status) const {
  if (pod.spec.preemption_policy == api::PreemptionPolicy::kNever) {
    return {false, std::string(kNotEligibleNever)};
  }
  const std::string& nominated = pod.status.nominated_node_name;
  if (!nominated.empty()) {
    // A nominated node that the filters now reject outright deserves a new preemption attempt.
    if (nominated_node_status.code() == Code::kUnschedulableAndUnresolvable) return {true, ""};
    if (const NodeInfo* node = handle_.SnapshotSharedLister().Get(nominated)) {
      for (const auto& pi : node->pods()) {
        if (pi->pod().Priority() < pod.Priority() && TerminatingByPreemption(pi->pod())) {
          return {false, std::string(kNotEligibleTerminating)};
        }
      }
    }
  }
  return {true, ""};
}

Status DefaultPreemption::SelectVictimsOnNode(framework::CycleState& state, const PodInfo& pod, NodeInfo& node_info,
                                              std::span<const PdbBudget> pdbs, Victims& victims) {
  victims = Victims{};
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
  FilterPodsWithPdbViolation(potential, pdbs, violating, non_violating);

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

std::vector<Candidate> DefaultPreemption::DryRunPreemption(framework::CycleState& state, const PodInfo& pod,
                                                           std::span<const NodeInfo* const> potential_nodes,
                                                           std::span<const PdbBudget> pdbs, int32_t offset,
                                                           int32_t num_candidates,
                                                           framework::NodeToStatus& node_statuses,
                                                           std::vector<std::string>& errors) {
  std::vector<Candidate> non_violating;
  std::vector<Candidate> violating;
  const size_t n = potential_nodes.size();
  // Sequential (upstream runs this in parallel and cancels once enough candidates exist), so the
  // result is deterministic.
  for (size_t i = 0; i < n; ++i) {
    const NodeInfo& node = *potential_nodes[(static_cast<size_t>(offset) + i) % n];
    // A node without lower-priority pods has no victims: skip cloning it and the cycle state
    // (the verdict is the one SelectVictimsOnNode would reach).
    const int32_t priority = pod.pod().Priority();
    bool has_lower = false;
    for (const auto& pi : node.pods()) {
      if (pi->pod().Priority() < priority) {
        has_lower = true;
        break;
      }
    }
    if (!has_lower) {
      static const framework::StaticReasons kReasons{kNoVictims};
      node_statuses.Set(node.name(), Status(Code::kUnschedulableAndUnresolvable, kReasons));
      continue;
    }
    std::unique_ptr<NodeInfo> node_copy = node.Clone();
    std::unique_ptr<framework::CycleState> state_copy = state.Clone();
    Victims victims;
    Status status = SelectVictimsOnNode(*state_copy, pod, *node_copy, pdbs, victims);
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

Status DefaultPreemption::PrepareCandidate(const Candidate& candidate, const PodInfo& pod) {
  const api::Pod& preemptor = pod.pod();
  const std::string reason = fmt::format("Preempted by pod {} on node {}", preemptor.Key(), candidate.node_name);
  for (const auto& victim : candidate.victims.pods) {
    // A victim still waiting at Permit is rejected instead of deleted.
    if (auto waiting = handle_.GetWaitingPod(victim->pod().metadata.uid)) {
      waiting->Reject(kName, "preempted");
      continue;
    }
    if (Status s = handle_.client().DeletePod(victim->pod(), reason); !s.IsSuccess()) {
      return Status::Error(s.Message());
    }
  }
  // Lower-priority pods nominated to this node may no longer fit there: clear their nomination so
  // that they look for another place.
  for (const auto& nominated : handle_.nominator().NominatedPodsForNode(candidate.node_name)) {
    if (nominated->pod().Priority() >= preemptor.Priority()) continue;
    handle_.nominator().DeleteNominatedPodIfExists(nominated->pod());
    (void)handle_.client().SetNominatedNodeName(nominated->pod(), "");
  }
  return Status();
}

std::pair<framework::PostFilterResult, Status> DefaultPreemption::PostFilter(
    framework::CycleState& state, const PodInfo& pod, const framework::NodeToStatus& filtered_statuses) {
  auto wrap = [](Status s) {
    const std::string msg = s.Message();
    return msg.empty() ? s : Status(s.code(), "preemption: " + msg);
  };
  const api::Pod& p = pod.pod();
  const Status& nominated_status = filtered_statuses.Get(p.status.nominated_node_name);
  if (auto [ok, msg] = PodEligibleToPreemptOthers(p, nominated_status); !ok) {
    return {{}, wrap(Status::Unschedulable(std::move(msg)))};
  }

  std::span<const NodeInfo* const> all_nodes = handle_.SnapshotSharedLister().List();
  if (all_nodes.empty()) return {{}, wrap(Status::Error("no nodes available"))};
  std::vector<const NodeInfo*> potential;
  for (const NodeInfo* node : all_nodes) {
    if (filtered_statuses.Get(node->name()).code() == Code::kUnschedulable) potential.push_back(node);
  }

  framework::NodeToStatus node_statuses;
  std::vector<Candidate> candidates;
  std::vector<std::string> errors;
  if (!potential.empty()) {
    const auto pdbs = ComputePdbBudgets(handle_.client().ListPodDisruptionBudgets(), all_nodes);
    auto [offset, num] = GetOffsetAndNumCandidates(static_cast<int32_t>(potential.size()));
    candidates = DryRunPreemption(state, pod, potential, pdbs, offset, num, node_statuses, errors);
  }
  if (candidates.empty()) {
    if (!errors.empty()) return {{}, wrap(Status::Error(helper::AggregateErrors(errors)))};
    node_statuses.set_absent_status(Status::UnschedulableAndUnresolvable(std::string(kNotHelpful)));
    // kOverride with no node clears a stale nomination of the pod.
    return {{framework::NominatingMode::kOverride, ""},
            wrap(Status::Unschedulable(FitErrorMessage(all_nodes.size(), node_statuses)))};
  }

  const int best = candidates.size() == 1 ? 0 : PickOneNodeForPreemption(candidates, handle_.clock().NowNs());
  if (best < 0) return {{}, wrap(Status::Unschedulable("no candidate node for preemption"))};
  const Candidate& chosen = candidates[static_cast<size_t>(best)];
  if (Status s = PrepareCandidate(chosen, pod); !s.IsSuccess()) return {{}, wrap(std::move(s))};
  return {{framework::NominatingMode::kOverride, chosen.node_name}, Status()};
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<DefaultPreemption>(*parsed, handle);
}

}  // namespace kubesched::plugins::default_preemption
