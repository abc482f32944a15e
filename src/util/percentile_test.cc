#include "util/percentile.h"

#include <gtest/gtest.h>

#include <vector>

namespace kubesched::util {
namespace {

TEST(PercentileTest, NearestRank) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(PercentileOfSorted(v, 0.5), 5);
  EXPECT_EQ(PercentileOfSorted(v, 0.9), 9);
  EXPECT_EQ(PercentileOfSorted(v, 0.99), 10);
  EXPECT_EQ(PercentileOfSorted(v, 0), 1);
  EXPECT_EQ(PercentileOfSorted({}, 0.5), 0);
  const std::vector<double> one = {7};
  EXPECT_EQ(PercentileOfSorted(one, 0.99), 7);
}

}  // namespace
}  // namespace kubesched::util
