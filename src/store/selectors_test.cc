#include "store/selectors.h"

#include <gtest/gtest.h>

namespace kubesched::store {
namespace {

TEST(LabelSelectorTest, ParseAndMatch) {
  const LabelPairs labels = {{"app", "web"}, {"replicas", "3"}, {"tier", "fe"}};
  struct Case {
    std::string selector;
    bool ok;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"", true, true},
      {"app=web", true, true},
      {"app==web", true, true},
      {"app = web , tier = fe", true, true},
      {"app!=web", true, false},
      {"missing!=x", true, true},
      {"app in (db,web)", true, true},
      {"app notin (db,web)", true, false},
      {"missing notin (a)", true, true},
      {"tier", true, true},
      {"!tier", true, false},
      {"!missing", true, true},
      {"replicas>2", true, true},
      {"replicas<3", true, false},
      {"app=", true, false},
      {"app in (", false, false},
      {"app in db", false, false},
      {"=web", false, false},
      {"app=web,", false, false},
      {"replicas>x", false, false},
      {"bad key!=x", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.selector);
    auto s = ParseLabelSelector(c.selector);
    ASSERT_EQ(s.has_value(), c.ok) << (s ? "" : s.error().message);
    if (s) {
      EXPECT_EQ(s->Matches(labels), c.matches);
    }
  }
}

TEST(LabelSelectorTest, FromJson) {
  api::json::Document d;
  ASSERT_TRUE(api::json::Parse(
      R"({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["fe"]}]})", d));
  auto s = LabelSelectorFromJson(&d);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->Matches({{"app", "web"}, {"tier", "fe"}}));
  EXPECT_FALSE(s->Matches({{"app", "web"}}));
  auto none = LabelSelectorFromJson(nullptr);
  EXPECT_FALSE(none->Matches({}));
}

TEST(FieldSelectorTest, Parse) {
  ResourceType pods;
  pods.field_selectors = {"spec.nodeName", "status.phase"};
  auto s = ParseFieldSelector(R"(spec.nodeName=n1,status.phase!=Failed,metadata.name==a\,b)", pods);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[1].equals, false);
  EXPECT_EQ((*s)[2].value, "a,b");
  auto bad = ParseFieldSelector("spec.other=x", pods);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "field label not supported: spec.other");
  EXPECT_FALSE(ParseFieldSelector("spec.nodeName", pods).has_value());
}

}  // namespace
}  // namespace kubesched::store
