#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::node_resources_balanced_allocation {
namespace {

namespace args_util = node_resources_fit::args_util;

const framework::StateKey kPreScoreKey{"PreScoreNodeResourcesBalancedAllocation"};

struct PreScoreState final : framework::StateData {
  std::vector<int64_t> pod_requests;  // in resource order
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

// ValidateNodeResourcesBalancedAllocationArgs.
std::vector<std::string> Validate(const NodeResourcesBalancedAllocationArgs& args, const std::string& path) {
  std::vector<std::string> errs;
  for (size_t i = 0; i < args.resources.size(); ++i) {
    const ResourceSpec& r = args.resources[i];
    const std::string item_path = api::field_path::Index(api::field_path::Child(path, "resources"), i);
    bool seen = false;
    for (size_t k = 0; k < i; ++k) seen |= args.resources[k].name == r.name;
    if (seen) errs.push_back(config::FieldDuplicate(api::field_path::Child(item_path, "name"), util::GoQuote(r.name)));
    if (r.weight != 1) {
      errs.push_back(
          config::FieldInvalid(api::field_path::Child(item_path, "weight"), std::to_string(r.weight), "must be 1"));
    }
  }
  return errs;
}

}  // namespace

std::expected<NodeResourcesBalancedAllocationArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                                     const std::string& path) {
  NodeResourcesBalancedAllocationArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  if (d.Object(json, path, {"resources", "apiVersion", "kind"})) {
    args.resources =
        args_util::DecodeResourceSpecs(d, json.Find("resources"), api::field_path::Child(path, "resources"));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});
  // v1 defaulting (SetDefaults_NodeResourcesBalancedAllocationArgs).
  if (args.resources.empty()) {
    args.resources = node_resources_fit::DefaultResources();
  } else {
    for (auto& r : args.resources) {
      if (r.weight == 0) r.weight = 1;
    }
  }
  if (auto errs = Validate(args, path); !errs.empty()) {
    return std::unexpected(framework::ArgsErrors{false, std::move(errs)});
  }
  return args;
}

std::expected<NodeResourcesBalancedAllocationArgs, std::string> ParseArgs(const framework::ArgsView& json) {
  auto decoded = DecodeArgs(json, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeArgs(const NodeResourcesBalancedAllocationArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  args_util::EncodeResourceSpecs(w.Key("resources"), args.resources);
  w.EndObject();
  return std::move(w).Take();
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

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<BalancedAllocation>(std::move(*parsed));
}

}  // namespace kubesched::plugins::node_resources_balanced_allocation
