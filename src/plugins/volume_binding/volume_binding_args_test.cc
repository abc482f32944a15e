#include <gtest/gtest.h>

#include "plugins/volume_binding/args.h"
#include "testing/args.h"

namespace kubesched::plugins::volume_binding {
namespace {

const Features kScoringOff{.storage_capacity_scoring = false};
const Features kScoringOn{.storage_capacity_scoring = true};

// Mirrors upstream's TestValidateVolumeBindingArgs (both feature settings), plus strict decoding.
TEST(VolumeBindingArgsTest, Validation) {
  struct Case {
    std::string name;
    Features features;
    std::string args;
    std::string want_error;  // "" when valid
  };
  const std::vector<Case> cases = {
      {"zero is a valid config", kScoringOff, R"({"bindTimeoutSeconds": 0})", ""},
      {"positive value is valid config", kScoringOff, R"({"bindTimeoutSeconds": 10})", ""},
      {"negative value is invalid config", kScoringOff, R"({"bindTimeoutSeconds": -10})",
       "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"},
      {"[StorageCapacityScoring=off] shape should be nil when the feature is off", kScoringOff,
       R"({"bindTimeoutSeconds": 10, "shape": null})", ""},
      {"[StorageCapacityScoring=off] error if the shape is not nil when the feature is off", kScoringOff,
       R"({"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]})",
       "shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:1, Score:1}, "
       "config.UtilizationShapePoint{Utilization:3, Score:3}}: unexpected field `shape`, remove it or turn on the "
       "feature gate StorageCapacityScoring"},
      {"[StorageCapacityScoring=off] an empty shape is still a shape", kScoringOff, R"({"shape": []})",
       "shape: Invalid value: []config.UtilizationShapePoint{}: unexpected field `shape`, remove it or turn on the "
       "feature gate StorageCapacityScoring"},
      {"[StorageCapacityScoring=on] shape should not be empty: defaulted instead", kScoringOn, R"({"shape": []})", ""},
      {"[StorageCapacityScoring=on] shape points must be sorted in increasing order", kScoringOn,
       R"({"bindTimeoutSeconds": 10, "shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]})",
       "shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"},
      {"[StorageCapacityScoring=on] shape point: invalid utilization and score", kScoringOn,
       R"({"bindTimeoutSeconds": 10, "shape": [{"utilization": -1, "score": 1}, {"utilization": 10, "score": -1},
           {"utilization": 20, "score": 11}, {"utilization": 101, "score": 1}]})",
       "[shape[0].utilization: Invalid value: -1: not in valid range [0, 100], shape[1].score: Invalid value: -1: "
       "not in valid range [0, 10], shape[2].score: Invalid value: 11: not in valid range [0, 10], "
       "shape[3].utilization: Invalid value: 101: not in valid range [0, 100]]"},
      {"[StorageCapacityScoring=on] a valid shape", kScoringOn,
       R"({"shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3}, {"utilization": 100, "score": 5}]})",
       ""},
      {"negative timeout and a shape with the feature off: both reported", kScoringOff,
       R"({"bindTimeoutSeconds": -1, "shape": [{"utilization": 0, "score": 0}]})",
       "[bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value, shape: "
       "Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, Score:0}}: "
       "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring]"},
      {"apiVersion and kind are accepted", kScoringOff,
       R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "VolumeBindingArgs"})", ""},
      {"unknown field", kScoringOff, R"({"bindTimeout": 60})", "unknown field \"bindTimeout\""},
      {"unknown field in a point", kScoringOn, R"({"shape": [{"utilization": 0, "scor": 1}]})",
       "unknown field \"shape[0].scor\""},
      {"wrong type", kScoringOff, R"({"bindTimeoutSeconds": "60s"})",
       "bindTimeoutSeconds: Invalid type: expected int64, got string"},
      {"utilization out of int32", kScoringOn, R"({"shape": [{"utilization": 4294967296, "score": 1}]})",
       "shape[0].utilization: Invalid value: 4294967296: out of range for int32"},
      {"shape not an array", kScoringOn, R"({"shape": {"utilization": 0}})",
       "shape: Invalid type: expected array, got object"},
      {"args not an object", kScoringOff, "[1]", "Invalid type: expected object, got array"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(testing::ArgsJson(c.args).View(), c.features);
    if (c.want_error.empty()) {
      EXPECT_TRUE(got.has_value()) << (got ? "" : got.error());
    } else {
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), c.want_error);
    }
  }
}

// Upstream's SetDefaults_VolumeBindingArgs.
TEST(VolumeBindingArgsTest, Defaults) {
  struct Case {
    std::string name;
    Features features;
    std::string args;
    VolumeBindingArgs want;
  };
  const std::vector<UtilizationShapePoint> default_shape = {{0, 10}, {100, 0}};
  const std::vector<Case> cases = {
      {"null args", kScoringOff, "null", {600, std::nullopt}},
      {"empty args", kScoringOff, "{}", {600, std::nullopt}},
      {"explicit zero timeout stays", kScoringOff, R"({"bindTimeoutSeconds": 0})", {0, std::nullopt}},
      {"timeout given", kScoringOff, R"({"bindTimeoutSeconds": 300})", {300, std::nullopt}},
      {"feature on: default shape prefers free capacity", kScoringOn, "{}", {600, default_shape}},
      {"feature on: an empty shape is defaulted", kScoringOn, R"({"shape": []})", {600, default_shape}},
      {"feature on: shape given",
       kScoringOn,
       R"({"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]})",
       {600, std::vector<UtilizationShapePoint>{{0, 0}, {100, 10}}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(testing::ArgsJson(c.args).View(), c.features);
    ASSERT_TRUE(got.has_value()) << got.error();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(VolumeBindingArgsTest, DecodeArgsUsesDefaultFeaturesAndPaths) {
  // v1.34: StorageCapacityScoring is off, so a shape is refused; paths are rooted where asked.
  auto got = DecodeArgs(testing::ArgsJson(R"({"shape": [{"utilization": 0, "score": 0}], "foo": 1})").View(),
                        "profiles[0].pluginConfig[0].args");
  ASSERT_FALSE(got.has_value());
  EXPECT_TRUE(got.error().decoding);
  EXPECT_EQ(got.error().errors, std::vector<std::string>{"unknown field \"profiles[0].pluginConfig[0].args.foo\""});

  got = DecodeArgs(testing::ArgsJson(R"({"bindTimeoutSeconds": -5})").View(), "args");
  ASSERT_FALSE(got.has_value());
  EXPECT_FALSE(got.error().decoding);
  EXPECT_EQ(
      got.error().errors,
      std::vector<std::string>{
          "args.bindTimeoutSeconds: Invalid value: -5: invalid BindTimeoutSeconds, should not be a negative value"});
}

TEST(VolumeBindingArgsTest, EncodeRoundTrips) {
  EXPECT_EQ(EncodeArgs(VolumeBindingArgs{}), R"({"bindTimeoutSeconds":600})");
  VolumeBindingArgs with_shape{30, std::vector<UtilizationShapePoint>{{0, 10}, {100, 0}}};
  const std::string text = EncodeArgs(with_shape);
  EXPECT_EQ(text, R"({"bindTimeoutSeconds":30,"shape":[{"utilization":0,"score":10},{"utilization":100,"score":0}]})");
  auto back = ParseArgs(testing::ArgsJson(text).View(), kScoringOn);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, with_shape);
}

}  // namespace
}  // namespace kubesched::plugins::volume_binding
