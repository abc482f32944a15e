#include "cmd/plugin_registry.h"

#include "plugins/registry.h"
#include "sdk/loader.h"

namespace kubesched::cmd {

void AddPluginOption(CLI::App* command, std::vector<std::string>& paths) {
  command->add_option("--plugin", paths,
                      "load a plugin library (a shared object built with the kubesched SDK, "
                      "docs/writing-plugins.md); its plugins are then named in --config like in-tree ones "
                      "(repeatable)");
}

std::expected<framework::Registry, std::string> MakeRegistry(const std::vector<std::string>& plugin_paths) {
  framework::Registry registry;
  plugins::RegisterInTreePlugins(registry);
  if (!plugin_paths.empty()) {
    auto loaded = sdk::LoadPluginLibraries(plugin_paths, registry);
    if (!loaded) return std::unexpected(loaded.error());
  }
  return registry;
}

}  // namespace kubesched::cmd
