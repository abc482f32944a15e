#pragma once
// `kubesched plugins`: the in-tree plugins of this build, each with the extension points it
// implements (found on the plugin object, built with default args through the registry, so the
// list cannot drift from the code), whether the default profile enables it and with which score
// weight, and its args type with every field's default. `-o json` for scripts.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kubesched::cmd {

struct PluginsFlags {
  std::string output = "table";      //!< table or json
  std::vector<std::string> plugins;  //!< --plugin: plugin libraries to load
};

//! Registers the `plugins` subcommand on `app`, filling `args` when parsed.
CLI::App* AddPluginsSubcommand(CLI::App& app, PluginsFlags& args);

//! Prints the plugins; returns the process exit code (0 ok, 1 when a plugin cannot be built with
//! its default args, which is a bug).
int PluginsCommand(const PluginsFlags& args);

}  // namespace kubesched::cmd
