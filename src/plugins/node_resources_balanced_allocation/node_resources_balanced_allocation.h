#pragma once
// NodeResourcesBalancedAllocation: favors nodes whose resource usage stays balanced across the
// configured resources once the pod is placed, as upstream's noderesources.BalancedAllocation:
// score = (1 - std) * 100 over the requested/allocatable fractions (each capped at 1).

#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "plugins/node_resources_fit/args.h"
#include "plugins/node_resources_fit/resource_allocation.h"

namespace kubesched::plugins::node_resources_balanced_allocation {

using node_resources_fit::ResourceSpec;

//! upstream's config.NodeResourcesBalancedAllocationArgs.
struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources;
};

//! Decodes the args strictly, applies the defaults (null/absent or an empty list => cpu and
//! memory; a weight of 0 becomes 1) and validates them as upstream: names must be unique and every
//! weight must be 1. Every error names its field under `path`, e.g.
//! "<path>.resources[1].weight: Invalid value: 2: must be 1".
std::expected<NodeResourcesBalancedAllocationArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                                     const std::string& path);
//! DecodeArgs with paths relative to args, the errors joined as upstream's aggregate ("[e1, e2]").
std::expected<NodeResourcesBalancedAllocationArgs, std::string> ParseArgs(const framework::ArgsView& args);
//! The args as a configuration file spells them.
std::string EncodeArgs(const NodeResourcesBalancedAllocationArgs& args);

class BalancedAllocation final : public framework::PreScorePlugin, public framework::ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesBalancedAllocation";

  //! `args` must be valid (ParseArgs).
  explicit BalancedAllocation(NodeResourcesBalancedAllocationArgs args);

  std::string_view Name() const override { return kName; }

  //! Stores the pod's requests (plain requests, no defaults). Skip for a pod requesting none of
  //! the resources (best-effort), so such pods do not all pile onto one node.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;

  //! (1 - std) * 100 (computes the pod's requests itself when PreScore did not run; 0 for a
  //! best-effort pod then).
  bool ScoreIsNodeLocal() const override { return true; }
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;

 private:
  node_resources_fit::ResourceAllocationScorer scorer_;
};

//! Factory: reads, defaults and validates the args, then builds the plugin.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_resources_balanced_allocation
