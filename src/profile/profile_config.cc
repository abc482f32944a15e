#include "profile/profile_config.h"

namespace kubesched::profile {

ProfileConfig DescribeProfile(const framework::runtime::Framework& fwk, const config::Profile& profile,
                              const config::Configuration& config) {
  ProfileConfig pc;
  pc.scheduler_name = profile.scheduler_name;
  for (const auto& point : config::kExtensionPoints) {
    if (point.name == "multiPoint" || point.name == "score") continue;
    std::vector<std::string> names = fwk.PluginNames(point.name);
    if (!names.empty()) pc.plugins.emplace_back(std::string(point.name), std::move(names));
  }
  pc.score_weights = fwk.ScoreWeights();
  for (const auto& c : profile.plugin_config) pc.plugin_args.emplace_back(c.name, c.args);
  pc.percentage_of_nodes_to_score =
      profile.percentage_of_nodes_to_score ? profile.percentage_of_nodes_to_score : config.percentage_of_nodes_to_score;
  return pc;
}

}  // namespace kubesched::profile
