#include "api/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kubesched::api {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

struct Case {
  std::string name;
  std::string input;
  int64_t want_value;
  int64_t want_milli;
};

// Cases follow upstream's TestQuantityParse (apimachinery/pkg/api/resource/quantity_test.go);
// the expected values are what resource.Quantity.Value() and MilliValue() return for them.
const std::vector<Case>& ValidCases() {
  static const std::vector<Case> cases = {
      // Zero in every suffix.
      {"zero", "0", 0, 0},
      {"zero nano", "0n", 0, 0},
      {"zero micro", "0u", 0, 0},
      {"zero milli", "0m", 0, 0},
      {"zero Ki", "0Ki", 0, 0},
      {"zero k", "0k", 0, 0},
      {"zero Mi", "0Mi", 0, 0},
      {"zero G", "0G", 0, 0},
      {"zero Ti", "0Ti", 0, 0},
      {"negative zero", "-0", 0, 0},
      {"zero fraction", "0.000", 0, 0},
      {"zero with exponent", "0e10", 0, 0},

      // Plain numbers.
      {"one", "1", 1, 1000},
      {"nine", "9", 9, 9000},
      {"explicit plus", "+5", 5, 5000},
      {"leading zeros", "007", 7, 7000},

      // Binary suffixes.
      {"1Ki", "1Ki", 1024, 1024000},
      {"8Ki", "8Ki", 8 * 1024, 8 * 1024 * 1000},
      {"7Mi", "7Mi", 7LL << 20, (7LL << 20) * 1000},
      {"5Mi", "5Mi", 5LL << 20, (5LL << 20) * 1000},
      {"6Gi", "6Gi", 6LL << 30, (6LL << 30) * 1000},
      {"5Ti", "5Ti", 5LL << 40, (5LL << 40) * 1000},
      {"4Pi", "4Pi", 4LL << 50, (4LL << 50) * 1000},
      {"3Ei", "3Ei", 3LL << 60, kMax},  // milli overflows int64 and saturates
      {"100Ti", "100Ti", 100LL << 40, (100LL << 40) * 1000},

      // Decimal suffixes.
      {"5n", "5n", 1, 1},
      {"4u", "4u", 1, 1},
      {"3m", "3m", 1, 3},
      {"100m", "100m", 1, 100},
      {"1000m", "1000m", 1, 1000},
      {"1500m", "1500m", 2, 1500},
      {"8k", "8k", 8000, 8000000},
      {"50k", "50k", 50000, 50000000},
      {"7M", "7M", 7000000, 7000000000},
      {"6G", "6G", 6000000000, 6000000000000},
      {"5T", "5T", 5000000000000, 5000000000000000},
      {"2P", "2P", 2000000000000000, 2000000000000000000},
      {"1E exa", "1E", 1000000000000000000, kMax},

      // Decimal exponents.
      {"1E-3", "1E-3", 1, 1},
      {"1e-3", "1e-3", 1, 1},
      {"1e3", "1e3", 1000, 1000000},
      {"1E3", "1E3", 1000, 1000000},
      {"1E6", "1E6", 1000000, 1000000000},
      {"12e6", "12e6", 12000000, 12000000000},
      {"1e9", "1e9", 1000000000, 1000000000000},
      {"1E18", "1E18", 1000000000000000000, kMax},
      {"1e+3", "1e+3", 1000, 1000000},
      {"1.2e3", "1.2e3", 1200, 1200000},
      {"1.3E+6", "1.3E+6", 1300000, 1300000000},
      {"1.40e9", "1.40e9", 1400000000, 1400000000000},
      {"0.5e0", "0.5e0", 1, 500},
      {"0.5e-1", "0.5e-1", 1, 50},
      {"0.5e-2", "0.5e-2", 1, 5},

      // Things that look like floating point, computed exactly.
      {"0.18", "0.18", 1, 180},
      {"0.001", "0.001", 1, 1},
      {"0.0005k", "0.0005k", 1, 500},
      {"0.5", "0.5", 1, 500},
      {"0.50000", "0.50000", 1, 500},
      {"100.035k", "100.035k", 100035, 100035000},
      {"10.035M", "10.035M", 10035000, 10035000000},
      {"9.01", "9.01", 10, 9010},
      {"8.1k", "8.1k", 8100, 8100000},
      {"7.123456M", "7.123456M", 7123456, 7123456000},
      {"6.987654321G", "6.987654321G", 6987654321, 6987654321000},
      {"2.5P", "2.5P", 2500000000000000, 2500000000000000000},
      {"1.5Gi", "1.5Gi", 1610612736, 1610612736000},
      {"0.5Mi", "0.5Mi", 524288, 524288000},
      {"100.035Ki", "100.035Ki", 102436, 102435840},
      {"0.05Gi", "0.05Gi", 53687092, 53687091200},
      {"0.025Ti", "0.025Ti", 27487790695, 27487790694400},

      // Values below a milli-unit round up (ceil), never to zero.
      {"0.1m", "0.1m", 1, 1},
      {"3.001n", "3.001n", 1, 1},
      {"0.0000000001", "0.0000000001", 1, 1},
      {"0.000000000001Ki", "0.000000000001Ki", 1, 1},
      {"1.1E-9", "1.1E-9", 1, 1},
      {"1e-2147483647", "1e-2147483647", 1, 1},
      {"1001m", "1001m", 2, 1001},

      // Written by trolls, accepted by the grammar.
      {".001", ".001", 1, 1},
      {".5", ".5", 1, 500},
      {".0001k", ".0001k", 1, 100},
      {"1.", "1.", 1, 1000},
      {"5.", "5.", 5, 5000},
      {"1.G", "1.G", 1000000000, 1000000000000},

      // Saturation: binary values cap at 2^63-1 (as upstream), decimal ones saturate on read.
      {"9Ei", "9Ei", kMax, kMax},
      {"9223372036854775807Ki", "9223372036854775807Ki", kMax, kMax},
      {"12E", "12E", kMax, kMax},
      {"1e100", "1e100", kMax, kMax},
      {"1e2147483647", "1e2147483647", kMax, kMax},
      {"huge mantissa", "123456789012345678901234567890123456789012345678901234567890", kMax, kMax},
      {"max int64", "9223372036854775807", kMax, kMax},
      {"max int64 milli", "9223372036854775807m", 9223372036854776, kMax},

      // Negative values: upstream rounds away from zero, so "-1.5" is -2 and "-100m" is -1.
      {"-1", "-1", -1, -1000},
      {"-1.5", "-1.5", -2, -1500},
      {"-100m", "-100m", -1, -100},
      {"-0.1m", "-0.1m", -1, -1},
      {"-1Ki", "-1Ki", -1024, -1024000},
      {"-9Ei", "-9Ei", -kMax, kMin},  // capped at -(2^63-1) like upstream
      {"-12E", "-12E", kMin, kMin},
      {"-1e-3", "-1e-3", -1, -1},
  };
  return cases;
}

TEST(QuantityTest, ParsesValidQuantities) {
  for (const Case& c : ValidCases()) {
    SCOPED_TRACE(c.name + ": " + c.input);
    auto q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.has_value()) << q.error();
    EXPECT_EQ(q->Value(), c.want_value);
    EXPECT_EQ(q->MilliValue(), c.want_milli);
    EXPECT_EQ(q->text(), c.input);
  }
}

TEST(QuantityTest, SignPrefixesMirrorUnsignedValues) {
  // As upstream's table test: "+x" equals x and "-x" negates x, for every valid unsigned input.
  for (const Case& c : ValidCases()) {
    if (c.input[0] == '-' || c.input[0] == '+') continue;
    SCOPED_TRACE(c.name + ": " + c.input);
    auto plus = Quantity::Parse("+" + c.input);
    ASSERT_TRUE(plus.has_value()) << plus.error();
    EXPECT_EQ(plus->Value(), c.want_value);
    EXPECT_EQ(plus->MilliValue(), c.want_milli);
    auto minus = Quantity::Parse("-" + c.input);
    ASSERT_TRUE(minus.has_value()) << minus.error();
    // A saturated positive value may be exactly 2^63-1 or past it, so its negation is checked
    // by the table's own negative rows instead.
    if (c.want_milli != kMax) {
      EXPECT_EQ(minus->MilliValue(), -c.want_milli);
    }
    if (c.want_value != kMax) {
      EXPECT_EQ(minus->Value(), -c.want_value);
    }
  }
}

TEST(QuantityTest, ZeroAndSignPredicates) {
  EXPECT_TRUE(Quantity::Parse("0Gi")->IsZero());
  EXPECT_FALSE(Quantity::Parse("1n")->IsZero());
  EXPECT_TRUE(Quantity::Parse("-1n")->IsNegative());
  EXPECT_FALSE(Quantity::Parse("-0")->IsNegative());
  EXPECT_TRUE(Quantity().IsZero());
  EXPECT_EQ(Quantity().Value(), 0);
  EXPECT_EQ(Quantity().text(), "0");
}

TEST(QuantityTest, RejectsInvalidQuantities) {
  struct Bad {
    std::string input;
    std::string want_in_message;
  };
  const std::vector<Bad> cases = {
      {"", "empty"},
      {"abc", "expected a number"},
      {"aoeu", "expected a number"},
      {"1KiB", "unknown suffix \"KiB\""},
      {"1 Gi", "unknown suffix \" Gi\""},
      {" 1", "expected a number"},
      {"1 ", "unknown suffix"},
      {"--1", "expected a number"},
      {"+-1", "expected a number"},
      {"1.2.3", "unknown suffix \".3\""},
      {"1.1.M", "unknown suffix"},
      {"1+1.0M", "unknown suffix"},
      {"0.1mi", "unknown suffix \"mi\""},
      {"0.1am", "unknown suffix"},
      {".5i", "unknown suffix"},
      {"1i", "unknown suffix"},
      {"-3.01i", "unknown suffix"},
      {"-3.01e-", "exponent"},
      {"1e", "unknown suffix \"e\""},
      {"1e+", "exponent"},
      {"1e1.5", "exponent"},
      {"1ee3", "exponent"},
      {"1e3m", "exponent"},
      {"1e4294967297", "out of range"},
      {"1e2147483648", "out of range"},
      {"1e99999999999999999999", "out of range"},
      {".", "expected a number"},
      {"-", "expected a number"},
      {"+", "expected a number"},
      {"m", "expected a number"},
      {"Gi", "expected a number"},
      {"0x10", "unknown suffix"},
      {"1,5", "unknown suffix"},
      {"1ki", "unknown suffix"},
      {"1K", "unknown suffix"},
      {"1kb", "unknown suffix"},
      {std::string("1\0", 2), "unknown suffix"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE("input: \"" + c.input + "\"");
    auto q = Quantity::Parse(c.input);
    ASSERT_FALSE(q.has_value()) << "parsed to value " << q->Value();
    EXPECT_NE(q.error().find("invalid quantity"), std::string::npos) << q.error();
    EXPECT_NE(q.error().find(c.want_in_message), std::string::npos) << q.error();
  }
}

TEST(QuantityTest, FromIntAndFromMilli) {
  const Quantity four = Quantity::FromInt(4);
  EXPECT_EQ(four.Value(), 4);
  EXPECT_EQ(four.MilliValue(), 4000);
  EXPECT_EQ(four.text(), "4");

  const Quantity half = Quantity::FromMilli(500);
  EXPECT_EQ(half.Value(), 1);
  EXPECT_EQ(half.MilliValue(), 500);
  EXPECT_EQ(half.text(), "500m");

  const Quantity two = Quantity::FromMilli(2000);
  EXPECT_EQ(two.Value(), 2);
  EXPECT_EQ(two.text(), "2");

  EXPECT_EQ(Quantity::FromInt(kMax).MilliValue(), kMax);
  EXPECT_EQ(Quantity::FromInt(kMin).MilliValue(), kMin);
  EXPECT_EQ(Quantity::FromMilli(-1500).Value(), -2);
  EXPECT_TRUE(Quantity::FromInt(0).IsZero());
}

TEST(QuantityTest, LongFractionsStayExact) {
  // 40 fraction digits: more than a 128-bit mantissa holds, still rounded up only at nano.
  auto q = Quantity::Parse("1.0000000000000000000000000000000000000001");
  ASSERT_TRUE(q.has_value()) << q.error();
  EXPECT_EQ(q->Value(), 2);
  EXPECT_EQ(q->MilliValue(), 1001);
  auto exact = Quantity::Parse("2.0000000000000000000000000000000000000000");
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->Value(), 2);
  EXPECT_EQ(exact->MilliValue(), 2000);
}

}  // namespace
}  // namespace kubesched::api
