#pragma once
// Reads a KubeSchedulerConfiguration file (apiVersion kubescheduler.config.k8s.io/v1, kind
// KubeSchedulerConfiguration), in YAML or JSON, the way upstream kube-scheduler does:
//   1. strict decoding: an unknown or duplicated field, or a value of the wrong type, is an
//      error naming its path (`unknown field "profiles[0].plugins.scor"`), at every level and
//      inside the args of every plugin with an args type (`unknown field
//      "profiles[0].pluginConfig[0].args.foo"`: the registry's ArgsType decodes them);
//      upstream's v1 fields that do not concern scheduling (clientConnection, leaderElection,
//      enableProfiling, enableContentionProfiling, delayCacheUntilActive) are accepted and
//      ignored, `extenders` is kept as JSON;
//   2. upstream v1 defaulting: no profiles gives one "default-scheduler" profile, a single
//      profile without schedulerName is "default-scheduler", each profile's plugins are the
//      defaults (config/default_plugins.h) merged with the file's;
//   3. upstream validation (ValidateKubeSchedulerConfiguration, each plugin's args included,
//      with paths such as `profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight`)
//      plus the checks upstream only makes when it builds the frameworks that can be made
//      without building plugins (unknown plugin names, plugins kubesched does not support,
//      duplicates, one queue sort plugin). A non-empty `extenders` list is an error too:
//      kubesched does not call extenders yet.
// Every error is collected; the result is all of them, one per line, each as
// `<source>: <field path>: <message>` in upstream's wording (`Invalid value: 0: ...`,
// `Required value`, `Duplicate value: "x"`). Decoding errors stop before validation, as upstream.

#include <expected>
#include <string>

#include "config/types.h"
#include "framework/registry.h"

namespace kubesched::config {

//! Upstream's v1.DefaultSchedulerName.
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
inline constexpr std::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kKind = "KubeSchedulerConfiguration";

//! Loads `path`; errors are prefixed with the path. `registry` decides which plugin names
//! exist and which defaults apply.
std::expected<Configuration, std::string> LoadConfigFile(const std::string& path, const framework::Registry& registry);

//! Loads a configuration held in memory; errors are prefixed with `source_name`.
std::expected<Configuration, std::string> LoadConfigFromString(const std::string& text, const std::string& source_name,
                                                               const framework::Registry& registry);

//! The configuration used without --config: upstream's defaults, one "default-scheduler"
//! profile with DefaultPlugins(registry).
Configuration DefaultConfiguration(const framework::Registry& registry);

}  // namespace kubesched::config
