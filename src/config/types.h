#pragma once
// The decoded, defaulted and validated KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1): plain data the framework runtime and the scheduler build
// their profiles from. Produced by LoadConfigFile / DefaultConfiguration (config/load.h).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/args_view.h"

namespace kubesched::config {

//! One entry of an `enabled` or `disabled` list.
struct PluginRef {
  std::string name;
  //! Score weight; 0 means "not set" (the runtime then uses 1 for a score plugin, as upstream).
  //! Ignored outside score/multiPoint.
  int32_t weight = 0;

  bool operator==(const PluginRef&) const = default;
};

//! The plugins of one extension point. After loading, `enabled` is the merge of upstream's
//! defaults with the file (see MergePluginSet in config/default_plugins.h) and `disabled` keeps
//! the names the file disabled ("*" = all defaults): the runtime needs it to know which
//! multiPoint plugins must not be expanded into this point.
struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;

  //! True when `disabled` holds this name or "*".
  bool IsDisabled(std::string_view name) const;
  bool operator==(const PluginSet&) const = default;
};

//! Per extension point plugin lists. multi_point plugins are expanded by the runtime into every
//! extension point they implement (upstream's MultiPoint semantics).
struct Plugins {
  PluginSet pre_enqueue;
  PluginSet queue_sort;
  PluginSet pre_filter;
  PluginSet filter;
  PluginSet post_filter;
  PluginSet pre_score;
  PluginSet score;
  PluginSet reserve;
  PluginSet permit;
  PluginSet pre_bind;
  PluginSet bind;
  PluginSet post_bind;
  PluginSet multi_point;

  bool operator==(const Plugins&) const = default;
};

//! An extension point field of Plugins with its name in the file.
struct ExtensionPointField {
  std::string_view name;
  PluginSet Plugins::*member;
};

//! All fields of Plugins, multiPoint first, then in upstream's order.
inline constexpr std::array<ExtensionPointField, 13> kExtensionPoints = {{
    {"multiPoint", &Plugins::multi_point},
    {"preEnqueue", &Plugins::pre_enqueue},
    {"queueSort", &Plugins::queue_sort},
    {"preFilter", &Plugins::pre_filter},
    {"filter", &Plugins::filter},
    {"postFilter", &Plugins::post_filter},
    {"preScore", &Plugins::pre_score},
    {"score", &Plugins::score},
    {"reserve", &Plugins::reserve},
    {"permit", &Plugins::permit},
    {"preBind", &Plugins::pre_bind},
    {"bind", &Plugins::bind},
    {"postBind", &Plugins::post_bind},
}};

//! A pluginConfig entry. `args` is the JSON object given in the file with any `apiVersion` and
//! `kind` removed (they are checked while loading), or null when the file gives none; the
//! plugin's factory applies its defaults and validates it.
struct PluginConfig {
  std::string name;
  framework::ArgsDocument args;

  bool operator==(const PluginConfig&) const = default;
};

struct Profile {
  std::string scheduler_name;
  //! Overrides Configuration::percentage_of_nodes_to_score for this profile when set.
  std::optional<int32_t> percentage_of_nodes_to_score;
  Plugins plugins;
  std::vector<PluginConfig> plugin_config;

  //! The args configured for plugin `name`, or a null view when there are none.
  framework::ArgsView ArgsFor(std::string_view name) const;
};

//! Index of plugin `name` in profile.plugin_config, so that the runtime can report an args error
//! as `profiles[i].pluginConfig[j].args.<field>`; nullopt when the plugin has no entry.
std::optional<size_t> PluginConfigIndex(const Profile& profile, std::string_view name);

//! clientConnection (component-base ClientConnectionConfiguration), with v1's defaults: how
//! `kubesched run` talks to the API server.
struct ClientConnection {
  std::string kubeconfig;
  std::string accept_content_types;
  std::string content_type = "application/vnd.kubernetes.protobuf";
  float qps = 50;
  int32_t burst = 100;
};

//! leaderElection (component-base LeaderElectionConfiguration), with v1's defaults.
struct LeaderElection {
  bool leader_elect = true;
  int64_t lease_duration_ns = 15'000'000'000;
  int64_t renew_deadline_ns = 10'000'000'000;
  int64_t retry_period_ns = 2'000'000'000;
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
};

//! One entry of `extenders` (upstream's Extender): an HTTP service the scheduler calls to filter,
//! prioritize, adjust preemption and bind. kubesched calls them as upstream's HTTPExtender does
//! (src/extender/).
struct ExtenderTlsConfig {
  bool insecure = false;
  std::string server_name;
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  //! certData, keyData, caData as written: base64 of PEM ([]byte in Go's JSON); decoded by the
  //! extender client, which reports bad base64 when it is built.
  std::string cert_data;
  std::string key_data;
  std::string ca_data;
  bool operator==(const ExtenderTlsConfig&) const = default;
};

struct ExtenderManagedResource {
  std::string name;
  //! The scheduler's NodeResourcesFit then ignores this resource (the extender accounts for it).
  bool ignored_by_scheduler = false;
  bool operator==(const ExtenderManagedResource&) const = default;
};

struct Extender {
  std::string url_prefix;
  std::string filter_verb;
  std::string preempt_verb;
  std::string prioritize_verb;
  //! Multiplies the extender's 0-10 scores (scaled to the framework's 0-100); positive when
  //! prioritize_verb is set.
  int64_t weight = 0;
  std::string bind_verb;
  bool enable_https = false;
  std::optional<ExtenderTlsConfig> tls_config;
  //! httpTimeout; 0 means upstream's DefaultExtenderTimeout (5 s), applied by the client.
  int64_t http_timeout_ns = 0;
  //! The extender keeps its own node cache: requests carry node names, not Node objects.
  bool node_cache_capable = false;
  //! When non-empty, only pods requesting (or limiting) one of these resources are sent.
  std::vector<ExtenderManagedResource> managed_resources;
  //! Its errors (unreachable, non-200, an Error in the result) skip it instead of failing.
  bool ignorable = false;
  bool operator==(const Extender&) const = default;
};

struct Configuration {
  int32_t parallelism = 16;
  //! Unset means adaptive (upstream's default 0: 50% on 100 nodes down to 5% on 5000+ nodes).
  std::optional<int32_t> percentage_of_nodes_to_score;
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  //! At least one after loading; scheduler names are unique and non-empty.
  std::vector<Profile> profiles;
  //! The `extenders` list, decoded and validated as upstream's validateExtenders.
  std::vector<Extender> extenders;
  ClientConnection client_connection;
  LeaderElection leader_election;
};

}  // namespace kubesched::config
