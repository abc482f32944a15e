#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/helper/normalize_score.h"

namespace kubesched::plugins::helper {
namespace {

// Mirrors upstream's helper.TestDefaultNormalizeScore.
TEST(DefaultNormalizeScoreTest, Table) {
  struct Case {
    std::string name;
    bool reverse;
    std::vector<int64_t> scores;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"scaled to max", false, {1, 2, 3, 4}, {25, 50, 75, 100}},
      {"scaled and reversed", true, {1, 2, 3, 4}, {75, 50, 25, 0}},
      {"integer division", false, {1000, 10, 20, 30}, {100, 1, 2, 3}},
      {"integer division reversed", true, {1000, 10, 20, 30}, {0, 99, 98, 97}},
      {"all equal", false, {1, 1, 1, 1}, {100, 100, 100, 100}},
      {"small ones round to zero", false, {1000, 1, 1, 1}, {100, 0, 0, 0}},
      {"reversed with a zero", true, {0, 1, 1, 1}, {100, 0, 0, 0}},
      {"all zero stay zero", false, {0, 0, 0}, {0, 0, 0}},
      {"all zero reversed become max", true, {0, 0, 0}, {100, 100, 100}},
      {"empty list", true, {}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::NodeScoreList scores;
    for (int64_t s : c.scores) scores.push_back({"", s});
    EXPECT_TRUE(DefaultNormalizeScore(framework::kMaxNodeScore, c.reverse, scores).IsSuccess());
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want);
  }
}

TEST(DefaultNormalizeScoreTest, OtherMaxPriority) {
  framework::NodeScoreList scores = {{"a", 5}, {"b", 10}};
  DefaultNormalizeScore(10, false, scores);
  EXPECT_EQ(scores[0].score, 5);
  EXPECT_EQ(scores[1].score, 10);
}

}  // namespace
}  // namespace kubesched::plugins::helper
