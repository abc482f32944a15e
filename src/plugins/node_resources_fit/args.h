#pragma once
// NodeResourcesFitArgs, as upstream's config.NodeResourcesFitArgs, with the v1 defaults
// (SetDefaults_NodeResourcesFitArgs) and ValidateNodeResourcesFitArgs. Also the pieces of args
// reading that NodeResourcesBalancedAllocation shares (a list of {name, weight}).

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/strict_decoder.h"
#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::node_resources_fit {

inline constexpr std::string_view kLeastAllocated = "LeastAllocated";
inline constexpr std::string_view kMostAllocated = "MostAllocated";
inline constexpr std::string_view kRequestedToCapacityRatio = "RequestedToCapacityRatio";

//! Upstream's config.MaxCustomPriorityScore: shape scores are in [0, 10] and scaled by 10.
inline constexpr int64_t kMaxCustomPriorityScore = 10;

//! A resource considered when scoring, with its weight (config.ResourceSpec).
struct ResourceSpec {
  std::string name;
  int64_t weight = 0;
  bool operator==(const ResourceSpec&) const = default;
};

//! A point of the RequestedToCapacityRatio function: utilization in [0, 100] → score in [0, 10].
struct UtilizationShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
  bool operator==(const UtilizationShapePoint&) const = default;
};

struct ScoringStrategy {
  //! "LeastAllocated", "MostAllocated" or "RequestedToCapacityRatio" (validated).
  std::string type = std::string(kLeastAllocated);
  std::vector<ResourceSpec> resources;
  //! requestedToCapacityRatio.shape; nullopt when requestedToCapacityRatio is absent.
  std::optional<std::vector<UtilizationShapePoint>> shape;
};

struct NodeResourcesFitArgs {
  //! Extended resources Filter does not check.
  std::vector<std::string> ignored_resources;
  //! Extended resource groups (the part before '/') Filter does not check.
  std::vector<std::string> ignored_resource_groups;
  ScoringStrategy scoring_strategy;
};

//! The default scoring resources: cpu and memory, weight 1 each.
std::vector<ResourceSpec> DefaultResources();

//! Decodes the args strictly, applies the v1 defaults (null/absent => LeastAllocated over cpu and
//! memory with weight 1; an empty resource list gets the defaults; a weight of 0 becomes 1) and
//! validates them. Every error names its field under `path` in upstream's field.Error wording,
//! e.g. "<path>.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu
//! not in valid range (0, 100]".
std::expected<NodeResourcesFitArgs, framework::ArgsErrors> DecodeNodeResourcesFitArgs(const framework::ArgsView& args,
                                                                                      const std::string& path);
//! DecodeNodeResourcesFitArgs with paths relative to args, the errors joined as upstream's
//! aggregate ("[e1, e2]").
std::expected<NodeResourcesFitArgs, std::string> ParseNodeResourcesFitArgs(const framework::ArgsView& args);
//! The args as a configuration file spells them.
std::string EncodeNodeResourcesFitArgs(const NodeResourcesFitArgs& args);

namespace args_util {

//! Decodes a list of {name, weight} at `path` (a missing weight reads as 0).
std::vector<ResourceSpec> DecodeResourceSpecs(config::StrictDecoder& d, const framework::ArgsView& value,
                                              std::string_view path);
void EncodeResourceSpecs(framework::ArgsWriter& w, const std::vector<ResourceSpec>& resources);

}  // namespace args_util

}  // namespace kubesched::plugins::node_resources_fit
