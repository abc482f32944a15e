#pragma once
// The plugin registry a command schedules with: the in-tree plugins, then those of the plugin
// libraries given with --plugin (sdk/loader.h). Shared by every command that builds profiles.

#include <expected>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "framework/registry.h"

namespace kubesched::cmd {

//! Adds the repeatable `--plugin PATH` option to `command`.
void AddPluginOption(CLI::App* command, std::vector<std::string>& paths);

//! The in-tree plugins and those of `plugin_paths`, or the first library's error (which names the
//! file and the reason).
std::expected<framework::Registry, std::string> MakeRegistry(const std::vector<std::string>& plugin_paths);

}  // namespace kubesched::cmd
