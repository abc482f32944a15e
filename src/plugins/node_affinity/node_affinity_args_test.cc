#include <gtest/gtest.h>

#include "plugins/node_affinity/args.h"
#include "testing/args.h"

namespace kubesched::plugins::node_affinity {
namespace {

const char kQualifiedNameMsg[] =
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
    "'example.com/MyName')";
const char kRequired[] = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";

// Mirrors upstream's TestValidateNodeAffinityArgs, plus decoding errors.
TEST(NodeAffinityArgsTest, Validation) {
  struct Case {
    std::string name;
    std::string args;
    std::string want_error;  // "" when valid
  };
  const std::vector<Case> cases = {
      {"empty", "null", ""},
      {"empty object", "{}", ""},
      {"apiVersion and kind are accepted",
       R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs"})", ""},
      {"valid added affinity", R"({"addedAffinity": {
          "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}]},
          "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchFields": [
              {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}}]}})",
       ""},
      {"invalid added affinity", R"({"addedAffinity": {
          "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}]}]},
          "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchFields": [
              {"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]}}]}})",
       std::string("[") + kRequired +
           ".matchExpressions[0].key: Invalid value: \"invalid/label/key\": " + kQualifiedNameMsg +
           ", addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: "
           "Invalid value: "
           "[]string{\"node-1\", \"node-2\"}: must have one element]"},
      {"unsupported operator", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]}]}}})",
       std::string(kRequired) + ".matchExpressions[0].operator: Unsupported value: \"Equals\": supported "
                                "values: \"In\", \"NotIn\", "
                                "\"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""},
      {"unsupported field operator", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]}}})",
       std::string(kRequired) +
           ".matchFields[0].operator: Unsupported value: \"Exists\": supported values: \"In\", \"NotIn\""},
      {"In without values", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]}}})",
       std::string(kRequired) + ".matchExpressions[0].values: Invalid value: []string(nil): for 'in', "
                                "'notin' operators, values set can't "
                                "be empty"},
      {"Exists with values", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}]}}})",
       std::string(kRequired) + ".matchExpressions[0].values: Invalid value: []string{\"x\"}: values set "
                                "must be empty for exists and does "
                                "not exist"},
      {"Gt with a non-integer", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x1"]}]}]}}})",
       std::string(kRequired) + ".matchExpressions[0].values[0]: Invalid value: \"x1\": for 'Gt', 'Lt' "
                                "operators, the value must be an "
                                "integer"},
      {"Lt with two values", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Lt", "values": ["1", "2"]}]}]}}})",
       std::string(kRequired) + ".matchExpressions[0].values: Invalid value: []string{\"1\", \"2\"}: for "
                                "'Gt', 'Lt' operators, exactly "
                                "one value is required"},
      {"invalid label value", R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["-x"]}]}]}}})",
       std::string(kRequired) +
           ".matchExpressions[0].values[0][a]: Invalid value: \"-x\": a valid label must be an empty string "
           "or "
           "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
           "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
           "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {"weight 0 terms are not validated",
       R"({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
          [{"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Foo"}]}}]}})",
       ""},
      {"empty required terms are not validated",
       R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{}]}}})",
       ""},
      {"unknown field", R"({"addedAffinity": {"foo": 1}})", "unknown field \"addedAffinity.foo\""},
      {"unknown top-level field", R"({"addedAffinty": {}})", "unknown field \"addedAffinty\""},
      {"wrong type", R"({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "high"}]}})",
       "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid type: expected int32, "
       "got string"},
      {"every decoding error", R"({"foo": 1, "addedAffinity": {"bar": 2,
          "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": 1}]}]}}})",
       "[unknown field \"foo\", unknown field \"addedAffinity.bar\", " + std::string(kRequired) +
           ".matchExpressions[0].key: Invalid type: expected string, got integer]"},
      {"args not an object", "[1]", "Invalid type: expected object, got array"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(testing::ArgsJson(c.args).View());
    if (c.want_error.empty()) {
      EXPECT_TRUE(got.has_value()) << (got ? "" : got.error());
    } else {
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), c.want_error);
    }
  }
}

TEST(NodeAffinityArgsTest, DecodesIntoApiTypes) {
  auto got = ParseArgs(testing::ArgsJson(R"({"addedAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a", "b"]},
                              {"key": "gpu", "operator": "DoesNotExist"}],
         "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [{"key": "rank", "operator": "Gt", "values": ["3"]}]}}]}})")
                           .View());
  ASSERT_TRUE(got.has_value()) << got.error();
  ASSERT_TRUE(got->added_affinity.has_value());
  const api::NodeAffinity& a = *got->added_affinity;
  ASSERT_TRUE(a.required.has_value());
  ASSERT_EQ(a.required->terms.size(), 1u);
  const auto& term = a.required->terms[0];
  ASSERT_EQ(term.match_expressions.size(), 2u);
  EXPECT_EQ(term.match_expressions[0], (api::SelectorRequirement{"zone", api::SelectorOperator::kNotIn, {"a", "b"}}));
  EXPECT_EQ(term.match_expressions[1], (api::SelectorRequirement{"gpu", api::SelectorOperator::kDoesNotExist, {}}));
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_EQ(term.match_fields[0], (api::SelectorRequirement{"metadata.name", api::SelectorOperator::kIn, {"n1"}}));
  ASSERT_EQ(a.preferred.size(), 1u);
  EXPECT_EQ(a.preferred[0].weight, 7);
  EXPECT_EQ(a.preferred[0].preference.match_expressions[0],
            (api::SelectorRequirement{"rank", api::SelectorOperator::kGt, {"3"}}));

  auto none = ParseArgs(testing::ArgsJson(R"({"addedAffinity": null})").View());
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->added_affinity.has_value());
}

}  // namespace
}  // namespace kubesched::plugins::node_affinity
