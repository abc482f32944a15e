#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plugins/names.h"
#include "plugins/registry.h"
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
  };
  testing::FakeHandle handle;
  for (auto name : want) {
    SCOPED_TRACE(std::string(name));
    const framework::PluginFactory* factory = registry.Find(name);
    ASSERT_NE(factory, nullptr);
    // Every factory accepts absent args (upstream defaults) and builds a plugin with that name.
    auto plugin = (*factory)(nlohmann::json(nullptr), handle);
    ASSERT_TRUE(plugin.has_value()) << plugin.error();
    EXPECT_EQ((*plugin)->Name(), name);
  }
  EXPECT_EQ(registry.Names().size(), want.size());
}

TEST(InTreeRegistryTest, NodeAffinityFactoryValidatesArgs) {
  framework::Registry registry;
  RegisterInTreePlugins(registry);
  testing::FakeHandle handle;
  auto plugin = (*registry.Find(names::kNodeAffinity))(nlohmann::json::parse(R"({"bogus": true})"), handle);
  ASSERT_FALSE(plugin.has_value());
  EXPECT_EQ(plugin.error(), "unknown field \"bogus\"");
}

}  // namespace
}  // namespace kubesched::plugins
