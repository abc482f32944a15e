#include "api/time_format.h"

#include <gtest/gtest.h>

namespace kubesched::api {
namespace {

TEST(TimeFormatTest, MicroTimeKeepsSixDigits) {
  const int64_t t = *ParseRFC3339("2024-05-01T12:00:00Z");
  EXPECT_EQ(FormatRFC3339Micro(t), "2024-05-01T12:00:00.000000Z");
  EXPECT_EQ(FormatRFC3339Micro(t + 123'456'789), "2024-05-01T12:00:00.123456Z");
  EXPECT_EQ(FormatRFC3339(t + 123'456'789), "2024-05-01T12:00:00Z");
  EXPECT_EQ(ParseRFC3339(FormatRFC3339Micro(t + 5'000)), t + 5'000);
  // Before 1970 the fraction still counts up from the floored second.
  EXPECT_EQ(FormatRFC3339Micro(-1'000), "1969-12-31T23:59:59.999999Z");
}

}  // namespace
}  // namespace kubesched::api
