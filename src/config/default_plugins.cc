#include "config/default_plugins.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <unordered_map>

namespace kubesched::config {
namespace {

// Upstream's getDefaultPlugins() (1.31+: the cloud volume limit plugins are gone) with
// applyFeatureGates() for the gates on by default: NodeDeclaredFeatures (GA in 1.37) is appended
// first; DynamicResources goes right before DefaultPreemption so that deallocating an idle claim is
// tried before evicting pods. GangScheduling is appended as applyFeatureGates does with the
// GangScheduling gate on: kubesched serves the PodGroups (scheduling.k8s.io/v1alpha2) that gate and
// GenericWorkload bring, so it acts on them; a pod without spec.schedulingGroup passes it untouched.
const std::array<PluginRef, 21> kUpstreamDefaults = {{
    {"SchedulingGates", 0},
    {"PrioritySort", 0},
    {"NodeUnschedulable", 0},
    {"NodeName", 0},
    {"TaintToleration", 3},
    {"NodeAffinity", 2},
    {"NodePorts", 0},
    {"NodeResourcesFit", 1},
    {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},
    {"VolumeBinding", 0},
    {"VolumeZone", 0},
    {"PodTopologySpread", 2},
    {"InterPodAffinity", 2},
    {"DynamicResources", 0},
    {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},
    {"DefaultBinder", 0},
    {"NodeDeclaredFeatures", 0},
    {"GangScheduling", 0},
}};

struct KnownPlugin {
  std::string_view name;
  UpstreamPlugin kind;
};

// Every upstream in-tree plugin name (pkg/scheduler/framework/plugins/registry.go) and the ones
// config v1 rejects (invalidPluginsByVersion in validation.go).
constexpr std::array<KnownPlugin, 25> kKnownPlugins = {{
    {"SchedulingGates", UpstreamPlugin::kInTree},   {"PrioritySort", UpstreamPlugin::kInTree},
    {"NodeUnschedulable", UpstreamPlugin::kInTree}, {"NodeName", UpstreamPlugin::kInTree},
    {"TaintToleration", UpstreamPlugin::kInTree},   {"NodeAffinity", UpstreamPlugin::kInTree},
    {"NodePorts", UpstreamPlugin::kInTree},         {"NodeResourcesFit", UpstreamPlugin::kInTree},
    {"PodTopologySpread", UpstreamPlugin::kInTree}, {"InterPodAffinity", UpstreamPlugin::kInTree},
    {"DefaultPreemption", UpstreamPlugin::kInTree}, {"NodeResourcesBalancedAllocation", UpstreamPlugin::kInTree},
    {"ImageLocality", UpstreamPlugin::kInTree},     {"DefaultBinder", UpstreamPlugin::kInTree},
    {"GangScheduling", UpstreamPlugin::kInTree},    {"VolumeRestrictions", UpstreamPlugin::kInTree},
    {"NodeVolumeLimits", UpstreamPlugin::kInTree},  {"VolumeBinding", UpstreamPlugin::kInTree},
    {"VolumeZone", UpstreamPlugin::kInTree},        {"NodeDeclaredFeatures", UpstreamPlugin::kInTree},
    {"DynamicResources", UpstreamPlugin::kInTree},  {"AzureDiskLimits", UpstreamPlugin::kRemoved},
    {"CinderLimits", UpstreamPlugin::kRemoved},     {"EBSLimits", UpstreamPlugin::kRemoved},
    {"GCEPDLimits", UpstreamPlugin::kRemoved},
}};

}  // namespace

std::span<const PluginRef> UpstreamDefaultPlugins() { return kUpstreamDefaults; }

UpstreamPlugin ClassifyUpstreamPlugin(std::string_view name) {
  for (const auto& p : kKnownPlugins) {
    if (p.name == name) return p.kind;
  }
  return UpstreamPlugin::kUnknown;
}

bool IsUpstreamQueueSortPlugin(std::string_view name) { return name == "PrioritySort"; }
bool IsUpstreamBindPlugin(std::string_view name) { return name == "DefaultBinder"; }

Plugins DefaultPlugins(const framework::Registry& registry) {
  Plugins plugins;
  // "Upstream's list ∩ registry": the unsupported plugins are never registered, and an in-tree
  // plugin still being written joins the defaults, at upstream's position and weight, as soon
  // as it is registered.
  for (const PluginRef& p : kUpstreamDefaults) {
    if (registry.Find(p.name) != nullptr) plugins.multi_point.enabled.push_back(p);
  }
  return plugins;
}

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet merged;
  std::set<std::string, std::less<>> disabled;
  // Disabled names are kept (names only) so that the runtime's multiPoint expansion knows what
  // not to insert at this point.
  for (const PluginRef& p : custom.disabled) {
    merged.disabled.push_back({p.name, 0});
    disabled.insert(p.name);
  }
  for (const PluginRef& p : defaults.disabled) {
    merged.disabled.push_back({p.name, 0});
    disabled.insert(p.name);
  }

  // Last custom entry of a name wins the in-place replacement, as upstream's map does.
  std::unordered_map<std::string_view, size_t> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;
  std::vector<bool> replaced(custom.enabled.size(), false);

  if (!disabled.contains("*")) {
    for (const PluginRef& p : defaults.enabled) {
      if (disabled.contains(p.name)) continue;
      if (auto it = custom_index.find(p.name); it != custom_index.end()) {
        merged.enabled.push_back(custom.enabled[it->second]);
        replaced[it->second] = true;
      } else {
        merged.enabled.push_back(p);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced[i]) merged.enabled.push_back(custom.enabled[i]);
  }
  return merged;
}

Plugins MergePlugins(const Plugins& defaults, const Plugins& custom) {
  Plugins merged;
  for (const auto& point : kExtensionPoints) {
    merged.*point.member = MergePluginSet(defaults.*point.member, custom.*point.member);
  }
  return merged;
}

}  // namespace kubesched::config
