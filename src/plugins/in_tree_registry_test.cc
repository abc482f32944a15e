#include <gtest/gtest.h>

#include "plugins/names.h"
#include "plugins/registry.h"
#include "testing/args.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins {
namespace {

TEST(InTreeRegistryTest, RegistersEveryImplementedPluginByUpstreamName) {
  framework::Registry registry;
  RegisterInTreePlugins(registry);
  const std::vector<std::string_view> want = {
      names::kPrioritySort,     names::kSchedulingGates,
      names::kNodeName,         names::kNodeUnschedulable,
      names::kNodeAffinity,     names::kTaintToleration,
      names::kNodePorts,        names::kDefaultBinder,
      names::kNodeResourcesFit, names::kNodeResourcesBalancedAllocation,
      names::kInterPodAffinity, names::kPodTopologySpread,
      names::kImageLocality,    names::kDefaultPreemption,
      names::kGangScheduling,   names::kVolumeRestrictions,
      names::kNodeVolumeLimits, names::kVolumeBinding,
      names::kVolumeZone,       names::kNodeDeclaredFeatures,
      names::kDynamicResources, "BatchPlacement",
      "CrossNodePreemption",  // kubesched's own
      "DeviceFragmentation",  // kubesched's own
      "Coscheduling",         // kubernetes-sigs/scheduler-plugins'
  };
  testing::FakeHandle handle;
  for (auto name : want) {
    SCOPED_TRACE(std::string(name));
    const framework::PluginFactory* factory = registry.Find(name);
    ASSERT_NE(factory, nullptr);
    // Every factory accepts absent args (upstream defaults) and builds a plugin with that name.
    auto plugin = (*factory)(framework::ArgsView(), handle);
    ASSERT_TRUE(plugin.has_value()) << plugin.error();
    EXPECT_EQ((*plugin)->Name(), name);
  }
  EXPECT_EQ(registry.Names().size(), want.size());
}

TEST(InTreeRegistryTest, NodeAffinityFactoryValidatesArgs) {
  framework::Registry registry;
  RegisterInTreePlugins(registry);
  testing::FakeHandle handle;
  auto plugin = (*registry.Find(names::kNodeAffinity))(testing::ArgsJson(R"({"bogus": true})").View(), handle);
  ASSERT_FALSE(plugin.has_value());
  EXPECT_EQ(plugin.error(), "unknown field \"bogus\"");
}

// Plugins with an upstream args type register it: kind "<Name>Args", upstream's v1 defaults
// (encoded in upstream's field order), and errors rooted at the path the caller gives.
TEST(InTreeRegistryTest, ArgsTypesAndTheirDefaults) {
  framework::Registry registry;
  RegisterInTreePlugins(registry);
  struct Case {
    std::string_view plugin;
    std::string defaults;  // JSON, "" when the plugin has no args type
  };
  const std::vector<Case> cases = {
      {names::kDefaultPreemption, R"({"minCandidateNodesPercentage":10,"minCandidateNodesAbsolute":100})"},
      {names::kInterPodAffinity, R"({"hardPodAffinityWeight":1,"ignorePreferredTermsOfExistingPods":false})"},
      {names::kNodeAffinity, R"({"addedAffinity":null})"},
      {names::kNodeResourcesBalancedAllocation,
       R"({"resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1}]})"},
      {names::kNodeResourcesFit,
       R"({"ignoredResources":[],"ignoredResourceGroups":[],"scoringStrategy":{"type":"LeastAllocated",)"
       R"("resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1}],"requestedToCapacityRatio":null}})"},
      {names::kPodTopologySpread, R"({"defaultConstraints":[],"defaultingType":"System"})"},
      {names::kPrioritySort, ""},
      {names::kImageLocality, ""},
      {names::kDefaultBinder, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.plugin));
    const framework::ArgsType* type = registry.FindArgsType(c.plugin);
    if (c.defaults.empty()) {
      EXPECT_EQ(type, nullptr);
      continue;
    }
    ASSERT_NE(type, nullptr);
    EXPECT_EQ(type->kind, std::string(c.plugin) + "Args");
    auto defaults = type->decode(framework::ArgsView(), "");
    ASSERT_TRUE(defaults.has_value());
    EXPECT_EQ(*defaults, c.defaults);
    // The encoding reads back as the same args.
    auto again = type->decode(testing::ArgsJson(*defaults).View(), "");
    ASSERT_TRUE(again.has_value()) << again.error().errors.front();
    EXPECT_EQ(*again, c.defaults);
    auto unknown = type->decode(testing::ArgsJson(R"({"bogus": 1})").View(), "profiles[0].pluginConfig[3].args");
    ASSERT_FALSE(unknown.has_value());
    EXPECT_TRUE(unknown.error().decoding);
    EXPECT_EQ(unknown.error().errors,
              std::vector<std::string>{"unknown field \"profiles[0].pluginConfig[3].args.bogus\""});
  }
}

TEST(InTreeRegistryTest, ArgsErrorsAreAllListedWithTheirFullPaths) {
  framework::Registry registry;
  RegisterInTreePlugins(registry);
  auto got = registry.FindArgsType(names::kNodeResourcesFit)
                 ->decode(testing::ArgsJson(R"({"ignoredResourceGroups": ["a/b"], "scoringStrategy":
                     {"type": "Sideways", "resources": [{"name": "cpu", "weight": 500}]}})")
                              .View(),
                          "profiles[0].pluginConfig[1].args");
  ASSERT_FALSE(got.has_value());
  EXPECT_FALSE(got.error().decoding);
  EXPECT_EQ(got.error().errors,
            (std::vector<std::string>{
                "profiles[0].pluginConfig[1].args.ignoredResourceGroups[0]: Invalid value: \"a/b\": resource group "
                "name can't contain '/'",
                "profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: \"Sideways\": supported "
                "values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
                "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 500: resource "
                "weight of cpu not in valid range (0, 100]"}));
}

}  // namespace
}  // namespace kubesched::plugins
