#include "profile/profile.h"

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "plugins/registry.h"
#include "testing/framework_deps.h"

// profile::NewMap: one framework per profile, found by scheduler name, with upstream's refusals for
// configurations built in code (the loader refuses the same files first, with field paths).
namespace kubesched::profile {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NewMapTest : public ::testing::Test {
 protected:
  NewMapTest() { plugins::RegisterInTreePlugins(registry_); }

  framework::runtime::FrameworkDeps Deps() { return fakes_.Deps(); }

  //! The default profile under another scheduler name.
  config::Profile DefaultProfile(std::string scheduler_name) {
    config::Profile p = config::DefaultConfiguration(registry_).profiles.at(0);
    p.scheduler_name = std::move(scheduler_name);
    return p;
  }

  static std::vector<std::string> Names(const Map& map) {
    std::vector<std::string> out;
    for (const auto& [name, fwk] : map) out.push_back(name);
    return out;
  }

  framework::Registry registry_;
  testing::FakeFrameworkDeps fakes_;
};

TEST_F(NewMapTest, OneFrameworkPerProfileBySchedulerName) {
  auto map = NewMap({DefaultProfile("default-scheduler"), DefaultProfile("batch")}, registry_, Deps());
  ASSERT_TRUE(map.has_value()) << map.error();
  EXPECT_THAT(Names(*map), ElementsAre("batch", "default-scheduler"));
  EXPECT_EQ(map->at("batch")->profile_name(), "batch");
  EXPECT_EQ(map->at("default-scheduler")->profile_name(), "default-scheduler");
}

TEST_F(NewMapTest, NoProfileIsRefused) {
  auto map = NewMap({}, registry_, Deps());
  ASSERT_FALSE(map.has_value());
  EXPECT_EQ(map.error(), "profiles: Required value: at least one profile is required");
}

TEST_F(NewMapTest, TwoProfilesWithOneSchedulerNameAreRefused) {
  auto map = NewMap({DefaultProfile("a"), DefaultProfile("b"), DefaultProfile("a")}, registry_, Deps());
  ASSERT_FALSE(map.has_value());
  EXPECT_EQ(map.error(), "duplicate profile with scheduler name \"a\"");
}

TEST_F(NewMapTest, DifferentQueueSortPluginsAreRefused) {
  // A second QueueSort: the profiles would need two queues.
  struct OtherSort final : framework::QueueSortPlugin {
    std::string_view Name() const override { return "OtherSort"; }
    bool Less(const framework::QueuedPodInfo&, const framework::QueuedPodInfo&) const override { return false; }
  };
  ASSERT_TRUE(registry_
                  .Register("OtherSort",
                            [](const auto&,
                               framework::Handle&) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                              return std::make_unique<OtherSort>();
                            })
                  .has_value());
  config::Profile other = DefaultProfile("other");
  other.plugins.queue_sort.enabled = {{"OtherSort"}};
  other.plugins.queue_sort.disabled = {{"*"}};
  auto map = NewMap({DefaultProfile("default-scheduler"), other}, registry_, Deps());
  ASSERT_FALSE(map.has_value());
  EXPECT_EQ(map.error(), "different queue sort plugins for profile \"other\": \"OtherSort\", first: \"PrioritySort\"");
}

TEST_F(NewMapTest, AFrameworkErrorNamesItsProfile) {
  config::Profile broken = DefaultProfile("broken");
  broken.plugins.filter.enabled.push_back({"NoSuchPlugin"});
  auto map = NewMap({DefaultProfile("default-scheduler"), broken}, registry_, Deps());
  ASSERT_FALSE(map.has_value());
  EXPECT_THAT(map.error(), HasSubstr("profiles[1]"));
  EXPECT_THAT(map.error(), HasSubstr("NoSuchPlugin"));
}

}  // namespace
}  // namespace kubesched::profile
