#include "api/semver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kubesched::api {
namespace {

struct ParseCase {
  std::string name;
  std::string input;
  bool valid;
};

// Valid and invalid inputs of blang/semver/v4's TestParse and semver.org's grammar (strict: no
// "v" prefix, no leading zeros, all three numbers).
TEST(SemVerTest, Parse) {
  const std::vector<ParseCase> cases = {
      {"plain", "1.2.3", true},
      {"zeros", "0.0.0", true},
      {"large", "18446744073709551615.0.1", true},
      {"pre-release", "1.0.0-alpha", true},
      {"dotted pre-release", "1.0.0-alpha.1", true},
      {"numeric pre-release", "1.0.0-0.3.7", true},
      {"pre-release with hyphens", "1.0.0-x.7.z.92", true},
      {"hyphen in pre-release", "1.0.0-x-y-z.--", true},
      {"build", "1.0.0+20130313144700", true},
      {"pre-release and build", "1.0.0-beta+exp.sha.5114f85", true},
      {"build with hyphen", "1.0.0+21AF26D3----117B344092BD", true},
      {"hyphen after build", "1.0.0+build-1", true},
      {"empty", "", false},
      {"one number", "1", false},
      {"two numbers", "1.2", false},
      {"v prefix", "v1.2.3", false},
      {"leading zero major", "01.2.3", false},
      {"leading zero minor", "1.02.3", false},
      {"leading zero patch", "1.2.03", false},
      {"leading zero numeric pre-release", "1.2.3-01", false},
      {"empty pre-release identifier", "1.2.3-alpha..1", false},
      {"empty pre-release", "1.2.3-", false},
      {"empty build", "1.2.3+", false},
      {"empty build identifier", "1.2.3+a..b", false},
      {"bad character in pre-release", "1.2.3-al_pha", false},
      {"bad character in build", "1.2.3+b@d", false},
      {"four numbers", "1.2.3.4", false},
      {"letters", "a.b.c", false},
      {"major overflow", "18446744073709551616.0.0", false},
      {"space", "1.2.3 ", false},
      {"negative", "-1.2.3", false},
      {"empty major", ".2.3", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto v = SemVer::Parse(c.input);
    EXPECT_EQ(v.has_value(), c.valid) << c.input;
    if (v) {
      EXPECT_EQ(v->String(), c.input);
    }
  }
}

TEST(SemVerTest, Fields) {
  const auto v = SemVer::Parse("1.22.333-rc.1+build.5");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 1u);
  EXPECT_EQ(v->minor, 22u);
  EXPECT_EQ(v->patch, 333u);
  EXPECT_EQ(v->pre_release, (std::vector<std::string>{"rc", "1"}));
  EXPECT_EQ(v->build, (std::vector<std::string>{"build", "5"}));
}

// semver.org §11: 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta < 1.0.0-beta < 1.0.0-beta.2 <
// 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0, and the plain numbers compared numerically.
TEST(SemVerTest, Precedence) {
  const std::vector<std::string> ordered = {
      "0.9.9",      "1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta",
      "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
      "1.0.0",      "1.0.1",        "1.1.0",         "1.10.0",
      "2.0.0",      "10.0.0",
  };
  for (size_t i = 0; i < ordered.size(); ++i) {
    for (size_t j = 0; j < ordered.size(); ++j) {
      SCOPED_TRACE(ordered[i] + " vs " + ordered[j]);
      const auto a = SemVer::Parse(ordered[i]);
      const auto b = SemVer::Parse(ordered[j]);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(a->Compare(*b), i <=> j);
    }
  }
}

TEST(SemVerTest, BuildMetadataIgnored) {
  struct Case {
    std::string name;
    std::string a;
    std::string b;
    std::strong_ordering want;
  };
  const std::vector<Case> cases = {
      {"build vs none", "1.0.0+build", "1.0.0", std::strong_ordering::equal},
      {"different builds", "1.0.0+a", "1.0.0+b", std::strong_ordering::equal},
      {"pre-release with build", "1.0.0-rc.1+x", "1.0.0-rc.1", std::strong_ordering::equal},
      {"numeric below alphanumeric", "1.0.0-1", "1.0.0-a", std::strong_ordering::less},
      {"longer numeric identifier", "1.0.0-10", "1.0.0-9", std::strong_ordering::greater},
      {"ASCII order", "1.0.0-Z", "1.0.0-a", std::strong_ordering::less},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto a = SemVer::Parse(c.a);
    const auto b = SemVer::Parse(c.b);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->Compare(*b), c.want);
    EXPECT_EQ(*a == *b, c.want == std::strong_ordering::equal);
  }
}

}  // namespace
}  // namespace kubesched::api
