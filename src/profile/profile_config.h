#pragma once
// What a profile runs, as its framework was built (upstream's defaults merged, multiPoint
// expanded): the configuration a placement came from, for simulate's reports and for what
// `run --record-plugin-results` publishes.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/types.h"
#include "framework/args_view.h"
#include "framework/runtime/framework.h"

namespace kubesched::profile {

struct ProfileConfig {
  std::string scheduler_name;
  //! Extension point (upstream's field name: "preFilter", ...) and its plugins in order; points
  //! without plugins left out. Score plugins are listed with their weights below.
  std::vector<std::pair<std::string, std::vector<std::string>>> plugins;
  std::vector<std::pair<std::string, int64_t>> score_weights;
  //! The pluginConfig entries as the configuration gives them (plugin name, args).
  std::vector<std::pair<std::string, framework::ArgsDocument>> plugin_args;
  //! The profile's percentageOfNodesToScore, else the configuration's; unset: adaptive.
  std::optional<int32_t> percentage_of_nodes_to_score;
};

//! The ProfileConfig of `profile` (one of `config`'s profiles), from `fwk`, the framework built
//! for it.
ProfileConfig DescribeProfile(const framework::runtime::Framework& fwk, const config::Profile& profile,
                              const config::Configuration& config);

}  // namespace kubesched::profile
