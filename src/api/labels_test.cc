#include "api/labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/types.h"

namespace kubesched::api {
namespace {

SelectorRequirement Req(std::string key, SelectorOperator op, std::vector<std::string> values = {}) {
  return SelectorRequirement{std::move(key), op, std::move(values)};
}

TEST(LabelsTest, KeepsEntriesSortedAndUnique) {
  Labels labels{{"zone", "a"}, {"app", "web"}, {"zone", "b"}};
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels.begin()->first, "app");
  ASSERT_NE(labels.Find("zone"), nullptr);
  EXPECT_EQ(*labels.Find("zone"), "b");  // later entries overwrite

  labels.Set("m", "1");
  labels.Set("a", "0");
  std::vector<std::string> keys;
  for (const auto& [k, v] : labels) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "app", "m", "zone"}));

  EXPECT_TRUE(labels.Has("m"));
  EXPECT_TRUE(labels.Erase("m"));
  EXPECT_FALSE(labels.Erase("m"));
  EXPECT_FALSE(labels.Has("m"));
  EXPECT_EQ(labels.Find("missing"), nullptr);
  EXPECT_EQ(labels, (Labels{{"app", "web"}, {"zone", "b"}, {"a", "0"}}));
  EXPECT_TRUE(Labels().empty());
}

// Mirrors apimachinery's labels.Requirement.Matches tests (selector_test.go TestRequirementMatches
// and the Gt/Lt cases of TestToString / TestLexerParserSelectors).
TEST(ApiSelectorRequirementTest, Operators) {
  struct Case {
    std::string name;
    SelectorRequirement req;
    Labels labels;
    bool want;
  };
  const Labels xy{{"x", "y"}};
  const std::vector<Case> cases = {
      {"In matches", Req("x", SelectorOperator::kIn, {"a", "y"}), xy, true},
      {"In other value", Req("x", SelectorOperator::kIn, {"a", "b"}), xy, false},
      {"In absent key", Req("z", SelectorOperator::kIn, {"y"}), xy, false},
      {"NotIn other value", Req("x", SelectorOperator::kNotIn, {"a"}), xy, true},
      {"NotIn listed value", Req("x", SelectorOperator::kNotIn, {"y"}), xy, false},
      {"NotIn absent key matches", Req("z", SelectorOperator::kNotIn, {"y"}), xy, true},
      {"Exists", Req("x", SelectorOperator::kExists), xy, true},
      {"Exists absent", Req("z", SelectorOperator::kExists), xy, false},
      {"Exists empty value", Req("e", SelectorOperator::kExists), Labels{{"e", ""}}, true},
      {"DoesNotExist absent", Req("z", SelectorOperator::kDoesNotExist), xy, true},
      {"DoesNotExist present", Req("x", SelectorOperator::kDoesNotExist), xy, false},
      {"Gt greater", Req("n", SelectorOperator::kGt, {"1"}), Labels{{"n", "2"}}, true},
      {"Gt equal", Req("n", SelectorOperator::kGt, {"2"}), Labels{{"n", "2"}}, false},
      {"Gt leading zeros", Req("kernel-version", SelectorOperator::kGt, {"0204"}), Labels{{"kernel-version", "0206"}},
       true},
      {"Gt negative", Req("n", SelectorOperator::kGt, {"-5"}), Labels{{"n", "-4"}}, true},
      {"Gt plus sign", Req("n", SelectorOperator::kGt, {"+1"}), Labels{{"n", "+2"}}, true},
      {"Gt absent key", Req("n", SelectorOperator::kGt, {"1"}), xy, false},
      {"Gt non-integer label", Req("n", SelectorOperator::kGt, {"1"}), Labels{{"n", "2.5"}}, false},
      {"Gt word label", Req("n", SelectorOperator::kGt, {"1"}), Labels{{"n", "two"}}, false},
      {"Gt non-integer value", Req("n", SelectorOperator::kGt, {"a"}), Labels{{"n", "2"}}, false},
      {"Gt two values", Req("n", SelectorOperator::kGt, {"1", "0"}), Labels{{"n", "2"}}, false},
      {"Gt no values", Req("n", SelectorOperator::kGt), Labels{{"n", "2"}}, false},
      {"Gt overflow label", Req("n", SelectorOperator::kGt, {"1"}), Labels{{"n", "99999999999999999999"}}, false},
      {"Lt smaller", Req("bar", SelectorOperator::kLt, {"7"}), Labels{{"bar", "6"}}, true},
      {"Lt equal", Req("bar", SelectorOperator::kLt, {"7"}), Labels{{"bar", "7"}}, false},
      {"Lt empty label", Req("bar", SelectorOperator::kLt, {"7"}), Labels{{"bar", ""}}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.req.Matches(c.labels), c.want);
  }
}

TEST(ApiLabelSelectorTest, EmptySelectorMatchesEverything) {
  LabelSelector empty;
  EXPECT_TRUE(empty.Empty());
  EXPECT_TRUE(empty.Matches(Labels{}));
  EXPECT_TRUE(empty.Matches(Labels{{"a", "b"}}));
}

TEST(ApiLabelSelectorTest, MatchLabelsAndExpressionsAreAnded) {
  LabelSelector sel;
  sel.match_labels = Labels{{"app", "web"}};
  sel.match_expressions = {Req("tier", SelectorOperator::kIn, {"frontend", "edge"}),
                           Req("canary", SelectorOperator::kDoesNotExist)};
  EXPECT_FALSE(sel.Empty());
  EXPECT_TRUE(sel.Matches(Labels{{"app", "web"}, {"tier", "edge"}}));
  EXPECT_TRUE(sel.Matches(Labels{{"app", "web"}, {"tier", "frontend"}, {"extra", "x"}}));
  EXPECT_FALSE(sel.Matches(Labels{{"app", "web"}}));
  EXPECT_FALSE(sel.Matches(Labels{{"app", "db"}, {"tier", "edge"}}));
  EXPECT_FALSE(sel.Matches(Labels{{"app", "web"}, {"tier", "edge"}, {"canary", "true"}}));
  EXPECT_FALSE(sel.Matches(Labels{{"tier", "edge"}}));

  LabelSelector only_labels;
  only_labels.match_labels = Labels{{"app", ""}};
  EXPECT_TRUE(only_labels.Matches(Labels{{"app", ""}}));
  EXPECT_FALSE(only_labels.Matches(Labels{}));
}

NodeSelectorTerm Term(std::vector<SelectorRequirement> exprs, std::vector<SelectorRequirement> fields = {}) {
  return NodeSelectorTerm{std::move(exprs), std::move(fields)};
}

// Mirrors component-helpers nodeaffinity_test.go TestNodeSelectorMatch and
// TestPodMatchesNodeSelectorAndAffinityTerms (the required-affinity part).
TEST(ApiNodeSelectorTest, MatchesLikeUpstream) {
  struct Case {
    std::string name;
    NodeSelector selector;
    std::string node_name;
    Labels node_labels;
    bool want;
  };
  const SelectorRequirement name_in_host1 = Req("metadata.name", SelectorOperator::kIn, {"host_1"});
  const SelectorRequirement label1 = Req("label_1", SelectorOperator::kIn, {"label_1_val"});
  const std::vector<Case> cases = {
      {"no terms matches nothing", NodeSelector{}, "host_1", Labels{{"foo", "bar"}}, false},
      {"empty term matches nothing", NodeSelector{{Term({})}}, "host_1", Labels{{"foo", "bar"}}, false},
      {"field matches but not labels", NodeSelector{{Term({label1}, {name_in_host1})}}, "host_1", Labels{}, false},
      {"field and labels match", NodeSelector{{Term({label1}, {name_in_host1})}}, "host_1",
       Labels{{"label_1", "label_1_val"}}, true},
      {"second term matches", NodeSelector{{Term({label1}), Term({}, {name_in_host1})}}, "host_1", Labels{}, true},
      {"field names another node", NodeSelector{{Term({}, {name_in_host1})}}, "host_2", Labels{}, false},
      {"field NotIn", NodeSelector{{Term({}, {Req("metadata.name", SelectorOperator::kNotIn, {"host_1"})})}}, "host_2",
       Labels{}, true},
      {"field NotIn own name", NodeSelector{{Term({}, {Req("metadata.name", SelectorOperator::kNotIn, {"host_1"})})}},
       "host_1", Labels{}, false},
      {"In matches", NodeSelector{{Term({Req("foo", SelectorOperator::kIn, {"bar", "value2"})})}}, "n",
       Labels{{"foo", "bar"}}, true},
      {"Gt matches", NodeSelector{{Term({Req("kernel-version", SelectorOperator::kGt, {"0204"})})}}, "n",
       Labels{{"kernel-version", "0206"}}, true},
      {"NotIn matches", NodeSelector{{Term({Req("mem-type", SelectorOperator::kNotIn, {"DDR", "DDR2"})})}}, "n",
       Labels{{"mem-type", "DDR3"}}, true},
      {"Exists matches", NodeSelector{{Term({Req("GPU", SelectorOperator::kExists)})}}, "n",
       Labels{{"GPU", "NVIDIA-GRID-K1"}}, true},
      {"In does not match", NodeSelector{{Term({Req("foo", SelectorOperator::kIn, {"value1", "value2"})})}}, "n",
       Labels{{"foo", "bar"}}, false},
      {"expressions in one term are ANDed",
       NodeSelector{{Term({Req("foo", SelectorOperator::kIn, {"bar"}), Req("GPU", SelectorOperator::kExists)})}}, "n",
       Labels{{"foo", "bar"}}, false},
      {"terms are ORed",
       NodeSelector{{Term({Req("foo", SelectorOperator::kIn, {"nope"})}), Term({Req("GPU", SelectorOperator::kExists)}),
                     Term({})}},
       "n", Labels{{"GPU", "yes"}}, true},
      {"empty term next to a matching one", NodeSelector{{Term({}), Term({Req("foo", SelectorOperator::kExists)})}},
       "n", Labels{{"foo", "bar"}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.selector.Matches(c.node_name, c.node_labels), c.want);
  }
}

TEST(ApiNodeSelectorTermTest, EmptyTermMatchesNoNode) {
  EXPECT_FALSE(NodeSelectorTerm{}.Matches("n", Labels{}));
  EXPECT_FALSE(NodeSelectorTerm{}.Matches("", Labels{{"a", "b"}}));
}

TEST(ApiToStringTest, Enums) {
  EXPECT_EQ(ToString(SelectorOperator::kIn), "In");
  EXPECT_EQ(ToString(SelectorOperator::kNotIn), "NotIn");
  EXPECT_EQ(ToString(SelectorOperator::kExists), "Exists");
  EXPECT_EQ(ToString(SelectorOperator::kDoesNotExist), "DoesNotExist");
  EXPECT_EQ(ToString(SelectorOperator::kGt), "Gt");
  EXPECT_EQ(ToString(SelectorOperator::kLt), "Lt");
  EXPECT_EQ(ToString(TaintEffect::kNoSchedule), "NoSchedule");
  EXPECT_EQ(ToString(TaintEffect::kPreferNoSchedule), "PreferNoSchedule");
  EXPECT_EQ(ToString(TaintEffect::kNoExecute), "NoExecute");
  EXPECT_EQ(ToString(PodPhase::kPending), "Pending");
  EXPECT_EQ(ToString(PodPhase::kRunning), "Running");
  EXPECT_EQ(ToString(PodPhase::kSucceeded), "Succeeded");
  EXPECT_EQ(ToString(PodPhase::kFailed), "Failed");
  EXPECT_EQ(ToString(PodPhase::kUnknown), "Unknown");
}

}  // namespace
}  // namespace kubesched::api
