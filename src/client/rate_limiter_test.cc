#include "client/rate_limiter.h"

#include <gtest/gtest.h>

#include <stop_token>

namespace kubesched::client {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(RateLimiterTest, StartsFullAtBurstThenRefillsAtQps) {
  util::VirtualClock clock(1000 * util::kNanosPerSecond);
  RateLimiter limiter(10, 3, clock);  // one token per 100 ms
  EXPECT_EQ(limiter.Reserve(), 0);
  EXPECT_EQ(limiter.Reserve(), 0);
  EXPECT_EQ(limiter.Reserve(), 0);
  // Empty: the next ones are reserved 100 ms apart.
  EXPECT_EQ(limiter.Reserve(), 100 * kMs);
  EXPECT_EQ(limiter.Reserve(), 200 * kMs);
  // 250 ms later the two reservations are paid for and half a token has come back.
  clock.Advance(250 * kMs);
  EXPECT_EQ(limiter.Reserve(), 50 * kMs);
  EXPECT_EQ(limiter.Reserve(), 150 * kMs);
}

TEST(RateLimiterTest, RefillStopsAtBurst) {
  util::VirtualClock clock(0);
  RateLimiter limiter(100, 2, clock);
  EXPECT_EQ(limiter.Reserve(), 0);
  EXPECT_EQ(limiter.Reserve(), 0);
  clock.Advance(3600 * util::kNanosPerSecond);  // an hour idle still gives only `burst` tokens
  EXPECT_EQ(limiter.Reserve(), 0);
  EXPECT_EQ(limiter.Reserve(), 0);
  EXPECT_EQ(limiter.Reserve(), 10 * kMs);
}

TEST(RateLimiterTest, NonPositiveQpsIsUnlimited) {
  util::VirtualClock clock(0);
  for (float qps : {0.0f, -1.0f}) {
    SCOPED_TRACE(qps);
    RateLimiter limiter(qps, 1, clock);
    EXPECT_TRUE(limiter.Unlimited());
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(limiter.Reserve(), 0);
  }
}

TEST(RateLimiterTest, BurstBelowOneCountsAsOne) {
  util::VirtualClock clock(0);
  RateLimiter limiter(1, 0, clock);
  EXPECT_EQ(limiter.Reserve(), 0);
  EXPECT_EQ(limiter.Reserve(), util::kNanosPerSecond);
}

TEST(RateLimiterTest, WaitReturnsAtOnceWithATokenAndFalseWhenStopped) {
  util::VirtualClock clock(0);
  // The virtual clock never moves, so a wait for the second token would last an hour: only the
  // stop request can end it.
  RateLimiter limiter(1.0f / 3600, 1, clock);
  EXPECT_TRUE(limiter.Wait());
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(limiter.Wait(stop.get_token()));
}

}  // namespace
}  // namespace kubesched::client
