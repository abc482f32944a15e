// Tests of the worker pool: every piece runs exactly once, nested loops do not deadlock, and
// results are visible to the caller.

#include "util/parallelizer.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
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

TEST(Parallelizer, LoopsWorthSharingAreSharedAndShortOnesRunOnTheCaller) {
  Parallelizer p(2);
  const auto caller = std::this_thread::get_id();
  auto threads_of = [&](int pieces, LoopCost& cost, std::chrono::microseconds piece_time) {
    std::mutex mu;
    std::set<std::thread::id> ran_on;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(pieces));
    p.UntilWorthIt(
        pieces,
        [&](int i) {
          if (piece_time.count() > 0) std::this_thread::sleep_for(piece_time);
          hits[static_cast<size_t>(i)].fetch_add(1);
          std::lock_guard lock(mu);
          ran_on.insert(std::this_thread::get_id());
        },
        cost);
    for (int i = 0; i < pieces; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
    return ran_on;
  };

  // A loop of trivial pieces is measured at a few nanoseconds a piece and stays on the caller.
  LoopCost cheap;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(threads_of(100, cheap, std::chrono::microseconds(0)), std::set<std::thread::id>{caller});
  }
  EXPECT_GT(cheap.ns_per_piece(), 0);
  EXPECT_LT(cheap.ns_per_piece() * 100, Parallelizer::kMinSharedLoopNs);

  // A site not measured yet runs its first loop alone; once it has seen pieces of 1 ms, a loop
  // of 64 is shared: the worker takes some of it.
  LoopCost slow;
  EXPECT_EQ(threads_of(64, slow, std::chrono::milliseconds(1)), std::set<std::thread::id>{caller});
  EXPECT_GE(slow.ns_per_piece(), 1e6);
  EXPECT_EQ(threads_of(64, slow, std::chrono::milliseconds(1)).size(), 2u);

  // Fewer pieces than are worth measuring run on the caller and leave the estimate alone.
  LoopCost few;
  EXPECT_EQ(threads_of(Parallelizer::kMinMeasuredPieces - 1, few, std::chrono::microseconds(0)),
            std::set<std::thread::id>{caller});
  EXPECT_EQ(few.ns_per_piece(), 0);
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
