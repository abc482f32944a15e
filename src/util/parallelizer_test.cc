// Tests of the worker pool: every piece runs exactly once, nested loops do not deadlock, and
// results are visible to the caller.

#include "util/parallelizer.h"

#include <atomic>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace kubesched::util {
namespace {

TEST(Parallelizer, RunsEveryPieceExactlyOnce) {
  for (int parallelism : {1, 2, 4}) {
    Parallelizer p(parallelism);
    for (int pieces : {0, 1, 7, 100, 5000}) {
      SCOPED_TRACE(::testing::Message() << parallelism << " threads, " << pieces << " pieces");
      std::vector<std::atomic<int>> hits(static_cast<size_t>(pieces));
      p.Until(pieces, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
      for (int i = 0; i < pieces; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
    }
  }
}

TEST(Parallelizer, ManyQuickLoopsInARow) {
  Parallelizer p(2);
  std::vector<int64_t> out(300);
  for (int round = 0; round < 2000; ++round) {
    p.Until(300, [&](int i) { out[static_cast<size_t>(i)] = static_cast<int64_t>(i) * round; });
    ASSERT_EQ(out[299], 299LL * round);
  }
}

TEST(Parallelizer, NestedLoopsComplete) {
  Parallelizer p(2);
  std::atomic<int64_t> sum{0};
  p.Until(50, [&](int i) { p.Until(50, [&](int j) { sum.fetch_add(i * 50 + j); }); });
  EXPECT_EQ(sum.load(), static_cast<int64_t>(2500) * 2499 / 2);
}

}  // namespace
}  // namespace kubesched::util
