#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "plugins/helper/validation.h"

namespace kubesched::plugins::node_resources_balanced_allocation {
namespace {

namespace args_util = node_resources_fit::args_util;

const framework::StateKey kPreScoreKey{"PreScoreNodeResourcesBalancedAllocation"};

struct PreScoreState final : framework::StateData {
  std::vector<int64_t> pod_requests;  // in resource order
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

// ValidateNodeResourcesBalancedAllocationArgs.
std::vector<std::string> Validate(const NodeResourcesBalancedAllocationArgs& args) {
  std::vector<std::string> errs;
  for (size_t i = 0; i < args.resources.size(); ++i) {
    const ResourceSpec& r = args.resources[i];
    bool seen = false;
    for (size_t k = 0; k < i; ++k) seen |= args.resources[k].name == r.name;
    if (seen) {
      errs.push_back(fmt::format("resources[{}].name: Duplicate value: {}", i, helper::GoQuote(r.name)));
    }
    if (r.weight != 1) {
      errs.push_back(
          helper::FieldInvalid(fmt::format("resources[{}].weight", i), std::to_string(r.weight), "must be 1"));
    }
  }
  return errs;
}

}  // namespace

std::expected<NodeResourcesBalancedAllocationArgs, std::string> ParseArgs(const nlohmann::json& json) {
  NodeResourcesBalancedAllocationArgs args;
  if (!json.is_null()) {
    if (!json.is_object()) return std::unexpected("expected an object");
    for (const auto& [key, value] : json.items()) {
      if (key == "resources") {
        if (auto err = args_util::ReadResourceSpecs(value, "resources", args.resources)) return std::unexpected(*err);
      } else if (key == "apiVersion" || key == "kind") {
        // Tolerated: args may be written as a typed object.
      } else {
        return std::unexpected(fmt::format("unknown field {}", helper::GoQuote(key)));
      }
    }
  }
  // v1 defaulting (SetDefaults_NodeResourcesBalancedAllocationArgs).
  if (args.resources.empty()) {
    args.resources = node_resources_fit::DefaultResources();
  } else {
    for (auto& r : args.resources) {
      if (r.weight == 0) r.weight = 1;
    }
  }
  if (auto errs = Validate(args); !errs.empty()) return std::unexpected(helper::AggregateErrors(errs));
  return args;
}

BalancedAllocation::BalancedAllocation(NodeResourcesBalancedAllocationArgs args)
    : scorer_(std::move(args.resources), /*use_requested=*/true,
              node_resources_fit::ResourceAllocationScorer::Strategy::kBalanced) {}

framework::Status BalancedAllocation::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                               std::span<const framework::NodeInfo* const> nodes) {
  std::vector<int64_t> pod_requests = scorer_.PodRequests(pod);
  // Every node would score 100 for a best-effort pod (its fractions do not move), which piles
  // such pods onto one node (kubernetes#129138).
  if (node_resources_fit::ResourceAllocationScorer::IsBestEffort(pod_requests)) return framework::Status::Skip();
  auto data = std::make_unique<PreScoreState>();
  data->pod_requests = std::move(pod_requests);
  state.Write(kPreScoreKey, std::move(data));
  return framework::Status();
}

std::pair<int64_t, framework::Status> BalancedAllocation::Score(const framework::CycleState& state,
                                                                const framework::PodInfo& pod,
                                                                const framework::NodeInfo& node_info) {
  if (const auto* s = state.Get<PreScoreState>(kPreScoreKey)) return scorer_.Score(node_info, s->pod_requests);
  const std::vector<int64_t> pod_requests = scorer_.PodRequests(pod);
  if (node_resources_fit::ResourceAllocationScorer::IsBestEffort(pod_requests)) return {0, framework::Status()};
  return scorer_.Score(node_info, pod_requests);
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<BalancedAllocation>(std::move(*parsed));
}

}  // namespace kubesched::plugins::node_resources_balanced_allocation
