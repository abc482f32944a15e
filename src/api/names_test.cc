#include "api/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kubesched::api {
namespace {

const char kNameRegexMsg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

TEST(IsQualifiedNameTest, Table) {
  struct Case {
    std::string value;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"simple", {}},
      {"example.com/My_Name-1", {}},
      {"a", {}},
      {"", {"name part must be non-empty", std::string("name part ") + kNameRegexMsg}},
      {"-leading", {std::string("name part ") + kNameRegexMsg}},
      {"/name", {"prefix part must be non-empty"}},
      {"Example.com/name",
       {"prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or "
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
      {std::string(64, 'a'), {"name part must be no more than 63 characters"}},
      {"invalid/label/key",
       {std::string("a qualified name ") + kNameRegexMsg +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.value);
    EXPECT_EQ(IsQualifiedName(c.value), c.want);
  }
}

TEST(IsValidLabelValueTest, Table) {
  const std::string regex_msg =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
      "must "
      "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
      "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  EXPECT_TRUE(IsValidLabelValue("").empty());
  EXPECT_TRUE(IsValidLabelValue("my_value-1.2").empty());
  EXPECT_EQ(IsValidLabelValue("invalid value: ___@#$%^"), std::vector<std::string>{regex_msg});
  EXPECT_EQ(IsValidLabelValue(std::string(64, 'a')), std::vector<std::string>{"must be no more than 63 characters"});
}

}  // namespace
}  // namespace kubesched::api
