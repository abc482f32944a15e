// DynamicResourcesArgs: strict decoding, upstream's defaults (SetDefaults_DynamicResourcesArgs)
// and validation (ValidateDynamicResourcesArgs with every feature on: DRASchedulerFilterTimeout,
// DRADeviceBindingConditions and DRAResourceClaimDeviceStatus), and the encoding back.

#include <gtest/gtest.h>

#include "plugins/dynamic_resources/args.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "testing/args.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

TEST(DynamicResourcesArgsTest, Defaults) {
  auto none = ParseArgs(framework::ArgsView());
  ASSERT_TRUE(none.has_value()) << none.error();
  EXPECT_EQ(none->filter_timeout_ns, 10'000'000'000);
  EXPECT_EQ(none->binding_timeout_ns, 600'000'000'000);
  auto empty = ParseArgs(kubesched::testing::ArgsJson("{}").View());
  ASSERT_TRUE(empty.has_value()) << empty.error();
  EXPECT_EQ(*empty, *none);
  EXPECT_EQ(*none, DynamicResourcesArgs{});
}

TEST(DynamicResourcesArgsTest, DecodeAndValidate) {
  struct Case {
    std::string name;
    std::string args;
    std::string want_error;  // "" when valid
    int64_t want_filter_ns = kDefaultFilterTimeoutNs;
    int64_t want_binding_ns = kDefaultBindingTimeoutNs;
  };
  const std::vector<Case> cases = {
      {"filter timeout", R"({"filterTimeout": "1m30s"})", "", 90'000'000'000},
      {"zero filter timeout disables it", R"({"filterTimeout": "0s"})", "", 0},
      {"negative filter timeout", R"({"filterTimeout": "-1s"})",
       "filterTimeout: Invalid value: -1s: must be zero or positive"},
      {"binding timeout", R"({"bindingTimeout": "5m"})", "", kDefaultFilterTimeoutNs, 300'000'000'000},
      {"binding timeout of one second", R"({"bindingTimeout": "1s"})", "", kDefaultFilterTimeoutNs, 1'000'000'000},
      {"binding timeout below one second", R"({"bindingTimeout": "999ms"})",
       "bindingTimeout: Invalid value: 999ms: must be at least 1 second"},
      {"zero binding timeout", R"({"bindingTimeout": "0s"})",
       "bindingTimeout: Invalid value: 0s: must be at least 1 second"},
      {"both invalid: both reported", R"({"filterTimeout": "-1ms", "bindingTimeout": "-1s"})",
       "[filterTimeout: Invalid value: -1ms: must be zero or positive, bindingTimeout: Invalid value: -1s: must be at "
       "least 1 second]"},
      {"apiVersion and kind are accepted",
       R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DynamicResourcesArgs"})", ""},
      {"unknown field", R"({"filterTimeout": "1s", "timeout": "1s"})", "unknown field \"timeout\""},
      {"wrong type", R"({"filterTimeout": 10})", "filterTimeout: Invalid type: expected string, got integer"},
      {"args not an object", "[1]", "Invalid type: expected object, got array"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(kubesched::testing::ArgsJson(c.args).View());
    if (c.want_error.empty()) {
      ASSERT_TRUE(got.has_value()) << got.error();
      EXPECT_EQ(got->filter_timeout_ns, c.want_filter_ns);
      EXPECT_EQ(got->binding_timeout_ns, c.want_binding_ns);
    } else {
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), c.want_error);
    }
  }
}

// Malformed durations are decoding errors at the field (time.ParseDuration's message).
TEST(DynamicResourcesArgsTest, MalformedDuration) {
  auto got = ParseArgs(kubesched::testing::ArgsJson(R"({"bindingTimeout": "ten minutes"})").View());
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().rfind("bindingTimeout: ", 0), 0u) << got.error();
  EXPECT_NE(got.error().find("ten minutes"), std::string::npos) << got.error();
}

// Paths are relative to where the args sit in the configuration.
TEST(DynamicResourcesArgsTest, DecodeArgsWithPath) {
  auto got = DecodeArgs(kubesched::testing::ArgsJson(R"({"filterTimeout": "-2s", "x": 1})").View(),
                        "profiles[0].pluginConfig[0].args");
  ASSERT_FALSE(got.has_value());
  EXPECT_TRUE(got.error().decoding);
  ASSERT_EQ(got.error().errors.size(), 1u);
  EXPECT_EQ(got.error().errors[0], "unknown field \"profiles[0].pluginConfig[0].args.x\"");
  got = DecodeArgs(kubesched::testing::ArgsJson(R"({"filterTimeout": "-2s"})").View(), "args");
  ASSERT_FALSE(got.has_value());
  EXPECT_FALSE(got.error().decoding);
  ASSERT_EQ(got.error().errors.size(), 1u);
  EXPECT_EQ(got.error().errors[0], "args.filterTimeout: Invalid value: -2s: must be zero or positive");
}

TEST(DynamicResourcesArgsTest, EncodeRoundTrips) {
  for (const DynamicResourcesArgs& args : {DynamicResourcesArgs{}, DynamicResourcesArgs{0, 1'000'000'000},
                                           DynamicResourcesArgs{1'500'000'000, 90'000'000'000}}) {
    const std::string encoded = EncodeArgs(args);
    auto decoded = ParseArgs(kubesched::testing::ArgsJson(encoded).View());
    ASSERT_TRUE(decoded.has_value()) << encoded << ": " << decoded.error();
    EXPECT_EQ(*decoded, args) << encoded;
  }
  EXPECT_EQ(EncodeArgs(DynamicResourcesArgs{}), R"({"filterTimeout":"10s","bindingTimeout":"10m0s"})");
}

// The factory refuses invalid args with the aggregate message.
TEST(DynamicResourcesArgsTest, FactoryValidates) {
  kubesched::testing::FakeHandle handle;
  auto bad = New(kubesched::testing::ArgsJson(R"({"bindingTimeout": "0s"})").View(), handle);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), "bindingTimeout: Invalid value: 0s: must be at least 1 second");
  auto good = New(framework::ArgsView(), handle);
  ASSERT_TRUE(good.has_value()) << good.error();
  EXPECT_EQ((*good)->Name(), "DynamicResources");
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources
