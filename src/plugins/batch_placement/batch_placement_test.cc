#include "plugins/batch_placement/batch_placement.h"

#include <gtest/gtest.h>

#include "testing/args.h"

namespace kubesched::plugins::batch_placement {
namespace {

std::string Errors(const framework::ArgsView& args) {
  auto r = DecodeArgs(args, "profiles[0].pluginConfig[0].args");
  if (r) return "";
  std::string out;
  for (const auto& e : r.error().errors) out += e + "\n";
  return out;
}

TEST(BatchPlacementArgs, Defaults) {
  auto r = DecodeArgs(testing::ArgsJson("{}").View(), "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->max_batch_size, 1000);
  EXPECT_EQ(r->batch_window_seconds, 1);
  EXPECT_EQ(r->solver_timeout_seconds, 10);
  EXPECT_EQ(r->objective, "MostPlacedFewestNodes");
  EXPECT_EQ(r->solver, "cbc");
  EXPECT_EQ(
      EncodeArgs(*r),
      R"({"maxBatchSize":1000,"batchWindowSeconds":1.0,"solverTimeoutSeconds":10.0,"objective":"MostPlacedFewestNodes","solver":"cbc"})");
}

TEST(BatchPlacementArgs, ReadsEveryField) {
  auto r =
      DecodeArgs(testing::ArgsJson(
                     R"({"maxBatchSize": 30, "batchWindowSeconds": 10, "solverTimeoutSeconds": 2.5, "solver": "glpk"})")
                     .View(),
                 "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->max_batch_size, 30);
  EXPECT_EQ(r->batch_window_seconds, 10);
  EXPECT_EQ(r->solver_timeout_seconds, 2.5);
  EXPECT_EQ(r->solver, "glpk");
}

TEST(BatchPlacementArgs, ValidationErrorsNameTheField) {
  EXPECT_EQ(Errors(testing::ArgsJson(R"({"maxBatchSize": 0})").View()),
            "profiles[0].pluginConfig[0].args.maxBatchSize: Invalid value: 0: not in valid range [1, 100000]\n");
  EXPECT_EQ(Errors(testing::ArgsJson(R"({"batchWindowSeconds": -1})").View()),
            "profiles[0].pluginConfig[0].args.batchWindowSeconds: Invalid value: -1: not in valid range [0, 3600]\n");
  EXPECT_EQ(Errors(testing::ArgsJson(R"({"solverTimeoutSeconds": 0})").View()),
            "profiles[0].pluginConfig[0].args.solverTimeoutSeconds: Invalid value: 0: not in valid range (0, 3600]\n");
  EXPECT_NE(Errors(testing::ArgsJson(R"({"objective": "Cheapest"})").View())
                .find("args.objective: Unsupported value: \"Cheapest\": supported values: \"MostPlacedFewestNodes\""),
            std::string::npos);
  EXPECT_NE(
      Errors(testing::ArgsJson(R"({"solver": "highs"})").View()).find("args.solver: Unsupported value: \"highs\""),
      std::string::npos);
}

TEST(BatchPlacementArgs, UnknownFieldsAndWrongTypesAreDecodingErrors) {
  auto r = DecodeArgs(testing::ArgsJson(R"({"maxBatch": 3})").View(), "args");
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().decoding);
  EXPECT_NE(r.error().errors.at(0).find("maxBatch"), std::string::npos);
  EXPECT_NE(Errors(testing::ArgsJson(R"({"batchWindowSeconds": "1s"})").View()).find("batchWindowSeconds"),
            std::string::npos);
}

}  // namespace
}  // namespace kubesched::plugins::batch_placement
