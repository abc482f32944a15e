#include "plugins/helper/normalize_score.h"

namespace kubesched::plugins::helper {

framework::Status DefaultNormalizeScore(int64_t max_priority, bool reverse, framework::NodeScoreList& scores) {
  int64_t max_count = 0;
  for (const auto& s : scores) {
    if (s.score > max_count) max_count = s.score;
  }
  if (max_count == 0) {
    if (reverse) {
      for (auto& s : scores) s.score = max_priority;
    }
    return framework::Status::Success();
  }
  for (auto& s : scores) {
    int64_t score = max_priority * s.score / max_count;
    s.score = reverse ? max_priority - score : score;
  }
  return framework::Status::Success();
}

}  // namespace kubesched::plugins::helper
