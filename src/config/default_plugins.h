#pragma once
// Upstream's v1 default plugin set (pkg/scheduler/apis/config/v1/default_plugins.go), what
// kubesched knows about upstream plugin names, and upstream's merge of a profile's plugins with
// the defaults (mergePlugins / mergePluginSet).

#include <span>
#include <string_view>

#include "config/types.h"
#include "framework/registry.h"

namespace kubesched::config {

//! The upstream release whose default plugins, weights, feature gates and configuration API these
//! defaults (and kubesched's behaviour) follow. Printed by `kubesched version`.
inline constexpr std::string_view kUpstreamKubernetesVersion = "v1.34";

//! Upstream's default multiPoint list with its weights and order, unfiltered (DynamicResources
//! included: DynamicResourceAllocation is GA and on by default since 1.34).
std::span<const PluginRef> UpstreamDefaultPlugins();

//! How kubesched treats a plugin name that upstream knows.
enum class UpstreamPlugin {
  kUnknown,  //!< not an upstream plugin name
  kInTree,   //!< an upstream in-tree plugin kubesched implements or will implement
  kRemoved,  //!< removed from upstream in config v1 (cloud volume limit plugins)
};
UpstreamPlugin ClassifyUpstreamPlugin(std::string_view name);

//! Whether upstream's in-tree plugin `name` implements QueueSort / Bind. Used for the static
//! profile checks only; false for names that are not upstream in-tree plugins.
bool IsUpstreamQueueSortPlugin(std::string_view name);
bool IsUpstreamBindPlugin(std::string_view name);

//! The effective default plugins: upstream's default list restricted to the plugins present in
//! `registry`, order and weights kept (a build without some in-tree plugin drops it).
Plugins DefaultPlugins(const framework::Registry& registry);

//! Upstream's mergePluginSet: the defaults minus the custom `disabled` names (all of them for
//! "*"), a custom enabled plugin that is also a default replacing that default in place (the
//! last custom entry of that name wins), the other custom plugins appended in order (duplicates
//! kept: validation reports them). `disabled` is custom.disabled followed by defaults.disabled.
PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom);

//! MergePluginSet for every extension point, multiPoint included.
Plugins MergePlugins(const Plugins& defaults, const Plugins& custom);

}  // namespace kubesched::config
