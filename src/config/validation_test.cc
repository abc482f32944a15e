#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/validation.h"

namespace kubesched::config {
namespace {

TEST(FieldErrorsTest, Renderings) {
  EXPECT_EQ(util::GoQuote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(GoStringSlice(std::vector<std::string>{"node-1", "node-2"}), "[]string{\"node-1\", \"node-2\"}");
  EXPECT_EQ(GoStringSlice(std::vector<std::string>{}), "[]string(nil)");
  EXPECT_EQ(FieldInvalid("a.b", "3", "must be positive"), "a.b: Invalid value: 3: must be positive");
  EXPECT_EQ(FieldNotSupported("op", "Foo", {"In", "NotIn"}),
            "op: Unsupported value: \"Foo\": supported values: \"In\", \"NotIn\"");
  EXPECT_EQ(FieldRequired("shape", ""), "shape: Required value");
  std::vector<std::string> none;
  EXPECT_EQ(AggregateErrors(none), "");
  std::vector<std::string> one = {"e1"};
  EXPECT_EQ(AggregateErrors(one), "e1");
  std::vector<std::string> dup = {"e1", "e2", "e1"};
  EXPECT_EQ(AggregateErrors(dup), "[e1, e2]");
  std::vector<std::string> same = {"e1", "e1"};
  EXPECT_EQ(AggregateErrors(same), "e1");
}

}  // namespace
}  // namespace kubesched::config
