#include "util/duration.h"

#include <gtest/gtest.h>

namespace kubesched::util {
namespace {

TEST(DurationTest, FormatsAsGo) {
  struct Case {
    int64_t ns;
    std::string want;
  };
  const Case cases[] = {
      {0, "0s"},
      {1, "1ns"},
      {1'100, "1.1µs"},
      {2'200'000, "2.2ms"},
      {500'000'000, "500ms"},
      {1'000'000'000, "1s"},
      {2'000'000'000, "2s"},
      {15'000'000'000, "15s"},
      {90'000'000'000, "1m30s"},
      {3'600'000'000'000, "1h0m0s"},
      {3'723'500'000'000, "1h2m3.5s"},
      {-1'500'000'000, "-1.5s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(FormatDuration(c.ns), c.want);
  }
}

TEST(DurationTest, ParsesWhatItFormats) {
  for (int64_t ns : {int64_t{1}, int64_t{1'100}, int64_t{15'000'000'000}, int64_t{3'723'500'000'000}}) {
    auto parsed = ParseDuration(FormatDuration(ns));
    ASSERT_TRUE(parsed.has_value()) << FormatDuration(ns);
    EXPECT_EQ(*parsed, ns);
  }
  EXPECT_FALSE(ParseDuration("5x").has_value());
  EXPECT_FALSE(ParseDuration("").has_value());
}

}  // namespace
}  // namespace kubesched::util
