#include "profile/profile.h"

#include <fmt/format.h>

namespace kubesched::profile {

std::expected<Map, std::string> NewMap(const std::vector<config::Profile>& profiles,
                                       const framework::Registry& registry,
                                       const framework::runtime::FrameworkDeps& deps) {
  if (profiles.empty()) return std::unexpected("profiles: Required value: at least one profile is required");
  Map map;
  std::string first_queue_sort;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const config::Profile& profile = profiles[i];
    if (map.contains(profile.scheduler_name)) {
      return std::unexpected(fmt::format("duplicate profile with scheduler name \"{}\"", profile.scheduler_name));
    }
    auto fwk = framework::runtime::Framework::Create(profile, i, registry, deps);
    if (!fwk) return std::unexpected(std::move(fwk.error()));
    const std::string queue_sort((*fwk)->queue_sort()->Name());
    if (i == 0) {
      first_queue_sort = queue_sort;
    } else if (queue_sort != first_queue_sort) {
      return std::unexpected(fmt::format("different queue sort plugins for profile \"{}\": \"{}\", first: \"{}\"",
                                         profile.scheduler_name, queue_sort, first_queue_sort));
    }
    map.emplace(profile.scheduler_name, std::move(*fwk));
  }
  return map;
}

}  // namespace kubesched::profile
