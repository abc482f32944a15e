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
  // Runs a loop and returns the threads it ran on. With `until_shared`, a piece on the caller
  // waits until a worker has started one, and a piece on a worker until the caller has: a shared
  // loop then ends up on two threads however loaded the machine is (neither can run every chunk
  // while the other is descheduled), and a loop wrongly kept on the caller fails after the bound
  // instead of racing.
  auto threads_of = [&](int pieces, LoopCost& cost, std::chrono::microseconds piece_time, bool until_shared) {
    std::mutex mu;
    std::set<std::thread::id> ran_on;
    std::atomic<bool> worker_ran{false};
    std::atomic<bool> caller_ran{false};
    std::vector<std::atomic<int>> hits(static_cast<size_t>(pieces));
    p.UntilWorthIt(
        pieces,
        [&](int i) {
          const bool on_caller = std::this_thread::get_id() == caller;
          (on_caller ? caller_ran : worker_ran) = true;
          if (until_shared) {
            const std::atomic<bool>& other = on_caller ? worker_ran : caller_ran;
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (!other && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
          }
          if (piece_time.count() > 0) std::this_thread::sleep_for(piece_time);
          hits[static_cast<size_t>(i)].fetch_add(1);
          std::lock_guard lock(mu);
          ran_on.insert(std::this_thread::get_id());
        },
        cost);
    for (int i = 0; i < pieces; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
    return ran_on;
  };

  // A site whose pieces cost a few nanoseconds keeps a loop of 100 on the caller. (The estimate
  // is seeded for each round: how fast a loaded machine ran the last one is not under test.)
  for (int round = 0; round < 3; ++round) {
    LoopCost cheap(10);
    EXPECT_EQ(threads_of(100, cheap, std::chrono::microseconds(0), false), std::set<std::thread::id>{caller});
  }

  // A site not measured yet runs its first loop alone and measures it (a piece sleeps at least
  // 1 ms, so the estimate is at least that); with that estimate a loop of 64 is shared.
  LoopCost slow;
  EXPECT_EQ(threads_of(64, slow, std::chrono::milliseconds(1), false), std::set<std::thread::id>{caller});
  EXPECT_GE(slow.ns_per_piece(), 1e6);
  EXPECT_EQ(threads_of(64, slow, std::chrono::microseconds(0), true).size(), 2u);

  // The threshold is pieces times cost per piece.
  LoopCost just_below(Parallelizer::kMinSharedLoopNs / 64 * 0.99);
  EXPECT_EQ(threads_of(64, just_below, std::chrono::microseconds(0), false), std::set<std::thread::id>{caller});
  LoopCost at(Parallelizer::kMinSharedLoopNs / 64);
  EXPECT_EQ(threads_of(64, at, std::chrono::microseconds(0), true).size(), 2u);

  // Fewer pieces than are worth measuring run on the caller and leave the estimate alone.
  LoopCost few;
  EXPECT_EQ(threads_of(Parallelizer::kMinMeasuredPieces - 1, few, std::chrono::microseconds(0), false),
            std::set<std::thread::id>{caller});
  EXPECT_EQ(few.ns_per_piece(), 0);
  LoopCost known(1e6);
  EXPECT_EQ(threads_of(Parallelizer::kMinMeasuredPieces - 1, known, std::chrono::microseconds(0), false),
            std::set<std::thread::id>{caller});
  EXPECT_EQ(known.ns_per_piece(), 1e6);
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
