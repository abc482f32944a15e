#include "config/types.h"

#include <algorithm>

namespace kubesched::config {

bool PluginSet::IsDisabled(std::string_view name) const {
  return std::ranges::any_of(disabled, [&](const PluginRef& p) { return p.name == name || p.name == "*"; });
}

framework::ArgsView Profile::ArgsFor(std::string_view name) const {
  auto index = PluginConfigIndex(*this, name);
  return index ? plugin_config[*index].args.View() : framework::ArgsView();
}

std::optional<size_t> PluginConfigIndex(const Profile& profile, std::string_view name) {
  for (size_t i = 0; i < profile.plugin_config.size(); ++i) {
    if (profile.plugin_config[i].name == name) return i;
  }
  return std::nullopt;
}

}  // namespace kubesched::config
