#include "config/default_plugins.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubesched::config {
namespace {

framework::Registry RegistryWith(const std::vector<std::string>& names) {
  framework::Registry registry;
  for (const auto& name : names) {
    auto ok =
        registry.Register(name,
                          [](const framework::ArgsView&,
                             framework::Handle&) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                            return std::unexpected("fake");
                          });
    EXPECT_TRUE(ok.has_value());
  }
  return registry;
}

// Upstream's TestApplyFeatureGates (1.34: DynamicResourceAllocation on by default; 1.36:
// NodeDeclaredFeatures on by default, appended after DefaultBinder).
TEST(DefaultPluginsTest, UpstreamList) {
  std::vector<PluginRef> want = {
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
  };
  auto got = UpstreamDefaultPlugins();
  EXPECT_EQ(std::vector<PluginRef>(got.begin(), got.end()), want);
}

TEST(DefaultPluginsTest, RestrictedToRegistry) {
  struct Case {
    std::string name;
    std::vector<std::string> registered;
    std::vector<PluginRef> want;
  };
  std::vector<Case> cases = {
      {"everything kubesched implements",
       {"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"},
       {{"SchedulingGates", 0},
        {"PrioritySort", 0},
        {"NodeUnschedulable", 0},
        {"NodeName", 0},
        {"TaintToleration", 3},
        {"NodeAffinity", 2},
        {"NodePorts", 0},
        {"NodeResourcesFit", 1},
        {"PodTopologySpread", 2},
        {"InterPodAffinity", 2},
        {"DefaultPreemption", 0},
        {"NodeResourcesBalancedAllocation", 1},
        {"ImageLocality", 1},
        {"DefaultBinder", 0}}},
      {"plugins still being written are skipped",
       {"DefaultBinder", "PrioritySort", "NodeResourcesFit", "TaintToleration"},
       {{"PrioritySort", 0}, {"TaintToleration", 3}, {"NodeResourcesFit", 1}, {"DefaultBinder", 0}}},
      {"NodeDeclaredFeatures goes after DefaultBinder",
       {"DefaultBinder", "NodeDeclaredFeatures", "PrioritySort"},
       {{"PrioritySort", 0}, {"DefaultBinder", 0}, {"NodeDeclaredFeatures", 0}}},
      {"a registered volume plugin would be a default again",
       {"PrioritySort", "VolumeBinding", "DefaultBinder"},
       {{"PrioritySort", 0}, {"VolumeBinding", 0}, {"DefaultBinder", 0}}},
      {"custom plugins are not defaults", {"CustomPlugin"}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Plugins got = DefaultPlugins(RegistryWith(c.registered));
    Plugins want;
    want.multi_point.enabled = c.want;
    EXPECT_EQ(got, want);
  }
}

TEST(DefaultPluginsTest, Classify) {
  EXPECT_EQ(ClassifyUpstreamPlugin("NodeResourcesFit"), UpstreamPlugin::kInTree);
  EXPECT_EQ(ClassifyUpstreamPlugin("InterPodAffinity"), UpstreamPlugin::kInTree);
  EXPECT_EQ(ClassifyUpstreamPlugin("VolumeBinding"), UpstreamPlugin::kInTree);
  EXPECT_EQ(ClassifyUpstreamPlugin("NodeDeclaredFeatures"), UpstreamPlugin::kInTree);
  EXPECT_EQ(ClassifyUpstreamPlugin("DynamicResources"), UpstreamPlugin::kInTree);
  EXPECT_EQ(ClassifyUpstreamPlugin("EBSLimits"), UpstreamPlugin::kRemoved);
  EXPECT_EQ(ClassifyUpstreamPlugin("CustomPlugin"), UpstreamPlugin::kUnknown);
  EXPECT_TRUE(IsUpstreamQueueSortPlugin("PrioritySort"));
  EXPECT_FALSE(IsUpstreamQueueSortPlugin("DefaultBinder"));
  EXPECT_TRUE(IsUpstreamBindPlugin("DefaultBinder"));
  EXPECT_FALSE(IsUpstreamBindPlugin("PrioritySort"));
}

// Upstream's TestMergePlugins, case for case.
TEST(DefaultPluginsTest, MergePlugins) {
  auto filter = [](std::vector<PluginRef> enabled, std::vector<PluginRef> disabled = {}) {
    Plugins p;
    p.filter = {std::move(enabled), std::move(disabled)};
    return p;
  };
  auto multi = [](std::vector<PluginRef> enabled, std::vector<PluginRef> disabled = {}) {
    Plugins p;
    p.multi_point = {std::move(enabled), std::move(disabled)};
    return p;
  };
  auto with_score_disabled = [](Plugins p, std::vector<PluginRef> disabled) {
    p.score.disabled = std::move(disabled);
    return p;
  };
  struct Case {
    std::string name;
    Plugins custom;
    Plugins defaults;
    Plugins want;
  };
  std::vector<Case> cases = {
      {"AppendCustomPlugin", filter({{"CustomPlugin", 0}}), filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}, {"CustomPlugin", 0}})},
      {"InsertAfterDefaultPlugins2", filter({{"CustomPlugin", 0}, {"DefaultPlugin2", 0}}, {{"DefaultPlugin2", 0}}),
       filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       filter({{"DefaultPlugin1", 0}, {"CustomPlugin", 0}, {"DefaultPlugin2", 0}}, {{"DefaultPlugin2", 0}})},
      {"InsertBeforeAllPlugins",
       filter({{"CustomPlugin", 0}, {"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}, {{"*", 0}}),
       filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       filter({{"CustomPlugin", 0}, {"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}, {{"*", 0}})},
      {"ReorderDefaultPlugins", filter({{"DefaultPlugin2", 0}, {"DefaultPlugin1", 0}}, {{"*", 0}}),
       filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       filter({{"DefaultPlugin2", 0}, {"DefaultPlugin1", 0}}, {{"*", 0}})},
      {"ApplyEmptyCustomPlugin", Plugins{}, filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       filter({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}})},
      {"CustomPluginOverrideDefaultPlugin", filter({{"Plugin1", 2}, {"Plugin3", 3}}),
       filter({{"Plugin1", 0}, {"Plugin2", 0}, {"Plugin3", 0}}),
       filter({{"Plugin1", 2}, {"Plugin2", 0}, {"Plugin3", 3}})},
      {"OrderPreserveAfterOverride", filter({{"Plugin2", 2}, {"Plugin1", 1}}),
       filter({{"Plugin1", 0}, {"Plugin2", 0}, {"Plugin3", 0}}),
       filter({{"Plugin1", 1}, {"Plugin2", 2}, {"Plugin3", 0}})},
      {"RepeatedCustomPlugin", filter({{"Plugin1", 0}, {"Plugin2", 2}, {"Plugin3", 0}, {"Plugin2", 4}}),
       filter({{"Plugin1", 0}, {"Plugin2", 0}, {"Plugin3", 0}}),
       filter({{"Plugin1", 0}, {"Plugin2", 4}, {"Plugin3", 0}, {"Plugin2", 2}})},
      {"Append custom MultiPoint plugin", multi({{"CustomPlugin", 0}}),
       multi({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       multi({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}, {"CustomPlugin", 0}})},
      {"Append disabled Multipoint plugins",
       with_score_disabled(multi({{"CustomPlugin", 0}, {"CustomPlugin2", 0}}, {{"DefaultPlugin2", 0}}),
                           {{"CustomPlugin2", 0}}),
       multi({{"DefaultPlugin1", 0}, {"DefaultPlugin2", 0}}),
       with_score_disabled(
           multi({{"DefaultPlugin1", 0}, {"CustomPlugin", 0}, {"CustomPlugin2", 0}}, {{"DefaultPlugin2", 0}}),
           {{"CustomPlugin2", 0}})},
      {"override default MultiPoint plugins with custom value", multi({{"DefaultPlugin", 5}}),
       multi({{"DefaultPlugin", 0}}), multi({{"DefaultPlugin", 5}})},
      {"disabled MultiPoint plugin in default set", multi({{"CustomPlugin", 0}}),
       multi({{"DefaultPlugin", 0}}, {{"DefaultPlugin2", 0}}),
       multi({{"DefaultPlugin", 0}, {"CustomPlugin", 0}}, {{"DefaultPlugin2", 0}})},
      {"disabled MultiPoint plugin in default set for specific extension point", multi({{"CustomPlugin", 0}}),
       with_score_disabled(multi({{"DefaultPlugin", 0}}), {{"DefaultPlugin2", 0}}),
       with_score_disabled(multi({{"DefaultPlugin", 0}, {"CustomPlugin", 0}}), {{"DefaultPlugin2", 0}})},
      {"multipoint with only disabled gets merged", multi({}, {{"DefaultPlugin", 0}}), multi({{"DefaultPlugin", 0}}),
       multi({}, {{"DefaultPlugin", 0}})},
      {"custom disabled come before the defaults' disabled", multi({}, {{"B", 0}}),
       multi({{"A", 0}, {"B", 0}}, {{"C", 0}}), multi({{"A", 0}}, {{"B", 0}, {"C", 0}})},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(MergePlugins(c.defaults, c.custom), c.want);
  }
}

TEST(DefaultPluginsTest, IsDisabled) {
  PluginSet set{{}, {{"A", 0}}};
  EXPECT_TRUE(set.IsDisabled("A"));
  EXPECT_FALSE(set.IsDisabled("B"));
  set.disabled.push_back({"*", 0});
  EXPECT_TRUE(set.IsDisabled("B"));
}

}  // namespace
}  // namespace kubesched::config
