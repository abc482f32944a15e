#include "plugins/cross_node_preemption/cross_node_preemption.h"

#include <gtest/gtest.h>

#include "testing/args.h"

namespace kubesched::plugins::cross_node_preemption {
namespace {

TEST(CrossNodePreemptionArgsTest, Defaults) {
  auto args = DecodeArgs({}, "args");
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->solver_timeout_seconds, 1);
  EXPECT_EQ(args->protected_namespaces, std::vector<std::string>{"kube-system"});
  EXPECT_TRUE(args->allow_moves);
  EXPECT_EQ(args->max_candidate_pods, 50);
  EXPECT_EQ(args->max_destination_nodes, 16);
  EXPECT_EQ(args->plan_timeout_seconds, 60);
  EXPECT_EQ(args->disruption_cooldown_seconds, 300);
  EXPECT_EQ(args->solver, "glpk");
  // Encoding then decoding gives the same args.
  auto again = DecodeArgs(testing::ArgsJson(EncodeArgs(*args)).View(), "args");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->protected_namespaces, args->protected_namespaces);
  EXPECT_EQ(again->solver, args->solver);
}

TEST(CrossNodePreemptionArgsTest, ExplicitValues) {
  auto args = DecodeArgs(testing::ArgsJson(R"({"solverTimeoutSeconds": 0.5, "protectedNamespaces": [],
      "allowMoves": false, "maxCandidatePods": 50, "maxDestinationNodes": 0, "planTimeoutSeconds": 10,
      "solver": "cbc"})")
                             .View(),
                         "args");
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->solver_timeout_seconds, 0.5);
  EXPECT_TRUE(args->protected_namespaces.empty());
  EXPECT_FALSE(args->allow_moves);
  EXPECT_EQ(args->max_candidate_pods, 50);
  EXPECT_EQ(args->max_destination_nodes, 0);
  EXPECT_EQ(args->plan_timeout_seconds, 10);
  EXPECT_EQ(args->solver, "cbc");
}

TEST(CrossNodePreemptionArgsTest, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* want;
    bool decoding;
  };
  const Case cases[] = {
      {R"({"solverTimeoutSeconds": 0})", "args.solverTimeoutSeconds: Invalid value: 0: not in valid range (0, 3600]",
       false},
      {R"({"maxCandidatePods": 0})", "args.maxCandidatePods: Invalid value: 0: not in valid range [1, 100000]", false},
      {R"({"maxDestinationNodes": -1})", "args.maxDestinationNodes: Invalid value: -1: not in valid range [0, 10000]",
       false},
      {R"({"planTimeoutSeconds": -5})", "args.planTimeoutSeconds: Invalid value: -5: not in valid range (0, 86400]",
       false},
      {R"({"disruptionCooldownSeconds": -1})",
       "args.disruptionCooldownSeconds: Invalid value: -1: not in valid range [0, 86400]", false},
      {R"({"protectedNamespaces": ["kube-system", ""]})", "args.protectedNamespaces[1]: Invalid value: \"\"", false},
      {R"({"solver": "highs"})", "args.solver: Unsupported value: \"highs\"", false},
      {R"({"allowMoves": "yes"})", "args.allowMoves", true},
      {R"({"maxCandidatePods": 1, "bogus": 1})", "bogus", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    auto args = DecodeArgs(testing::ArgsJson(c.json).View(), "args");
    ASSERT_FALSE(args.has_value());
    EXPECT_EQ(args.error().decoding, c.decoding);
    ASSERT_FALSE(args.error().errors.empty());
    EXPECT_NE(args.error().errors[0].find(c.want), std::string::npos) << args.error().errors[0];
  }
}

}  // namespace
}  // namespace kubesched::plugins::cross_node_preemption
