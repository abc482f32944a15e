#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::default_preemption {
namespace {

using framework::Code;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Args

std::expected<DefaultPreemptionArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                       const std::string& path) {
  DefaultPreemptionArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  const std::string pct_path = api::field_path::Child(path, "minCandidateNodesPercentage");
  const std::string abs_path = api::field_path::Child(path, "minCandidateNodesAbsolute");
  if (d.Object(json, path, {"minCandidateNodesPercentage", "minCandidateNodesAbsolute", "apiVersion", "kind"})) {
    if (auto v = d.Int32(json.Find("minCandidateNodesPercentage"), pct_path)) {
      args.min_candidate_nodes_percentage = *v;
    }
    if (auto v = d.Int32(json.Find("minCandidateNodesAbsolute"), abs_path)) {
      args.min_candidate_nodes_absolute = *v;
    }
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  // ValidateDefaultPreemptionArgs.
  const int32_t pct = args.min_candidate_nodes_percentage;
  const int32_t abs = args.min_candidate_nodes_absolute;
  if (pct < 0 || pct > 100) {
    errors.push_back(config::FieldInvalid(pct_path, std::to_string(pct), "not in valid range [0, 100]"));
  }
  if (abs < 0) errors.push_back(config::FieldInvalid(abs_path, std::to_string(abs), "not in valid range [0, inf)"));
  if (pct == 0 && abs == 0) {
    errors.push_back(
        config::FieldInvalid(pct_path, "0", "cannot be zero at the same time as minCandidateNodesAbsolute"));
    errors.push_back(
        config::FieldInvalid(abs_path, "0", "cannot be zero at the same time as minCandidateNodesPercentage"));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

std::expected<DefaultPreemptionArgs, std::string> ParseArgs(const framework::ArgsView& json) {
  auto decoded = DecodeArgs(json, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeArgs(const DefaultPreemptionArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("minCandidateNodesPercentage").Int64(args.min_candidate_nodes_percentage);
  w.Key("minCandidateNodesAbsolute").Int64(args.min_candidate_nodes_absolute);
  w.EndObject();
  return std::move(w).Take();
}

// ---------------------------------------------------------------------------------------------
// Plugin

DefaultPreemption::DefaultPreemption(DefaultPreemptionArgs args, framework::Handle& handle)
    : args_(args), handle_(handle), evaluator_(kName, handle) {}

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
  return evaluator_.PodEligibleToPreemptOthers(pod, nominated_node_status);
}

Status DefaultPreemption::SelectVictimsOnNode(framework::CycleState& state, const PodInfo& pod, NodeInfo& node_info,
                                              std::span<const PdbBudget> pdbs, NodeVictims& victims) {
  return evaluator_.SelectVictimsOnNode(state, pod, node_info, pdbs, victims);
}

std::vector<Candidate> DefaultPreemption::DryRunPreemption(framework::CycleState& state, const PodInfo& pod,
                                                           std::span<const NodeInfo* const> potential_nodes,
                                                           std::span<const PdbBudget> pdbs, int32_t offset,
                                                           int32_t num_candidates,
                                                           framework::NodeToStatus& node_statuses,
                                                           std::vector<std::string>& errors) {
  return evaluator_.DryRunPreemption(state, pod, potential_nodes, pdbs, offset, num_candidates, node_statuses, errors);
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
  const std::vector<const NodeInfo*> potential = evaluator_.PotentialNodes(filtered_statuses);

  framework::NodeToStatus node_statuses;
  std::vector<Candidate> candidates;
  std::vector<std::string> errors;
  if (!potential.empty()) {
    const auto pdbs = evaluator_.PdbBudgets();
    auto [offset, num] = GetOffsetAndNumCandidates(static_cast<int32_t>(potential.size()));
    candidates = DryRunPreemption(state, pod, potential, pdbs, offset, num, node_statuses, errors);
  }
  if (candidates.empty()) {
    if (!errors.empty()) return {{}, wrap(Status::Error(config::AggregateErrors(errors)))};
    node_statuses.set_absent_status(Status::UnschedulableAndUnresolvable(std::string(kNotHelpful)));
    // kOverride with no node clears a stale nomination of the pod.
    return {{framework::NominatingMode::kOverride, ""},
            wrap(Status::Unschedulable(framework::preemption::FitErrorMessage(all_nodes.size(), node_statuses)))};
  }

  // The extenders may drop or change candidates before the best is picked.
  auto accepted = evaluator_.CallExtenders(p, std::move(candidates));
  if (!accepted) return {{}, wrap(std::move(accepted.error()))};
  candidates = std::move(*accepted);
  const int best = candidates.size() == 1 ? 0 : PickOneNodeForPreemption(candidates, handle_.clock().NowNs());
  if (best < 0) return {{}, wrap(Status::Unschedulable("no candidate node for preemption"))};
  const Candidate& chosen = candidates[static_cast<size_t>(best)];
  if (Status s = evaluator_.PrepareCandidate(chosen, pod); !s.IsSuccess()) return {{}, wrap(std::move(s))};
  return {{framework::NominatingMode::kOverride, chosen.node_name}, Status()};
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<DefaultPreemption>(*parsed, handle);
}

}  // namespace kubesched::plugins::default_preemption
