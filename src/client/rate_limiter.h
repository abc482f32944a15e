#pragma once
// The client side's token bucket, as client-go's flowcontrol.NewTokenBucketRateLimiter (over
// golang.org/x/time/rate): it starts full with `burst` tokens and refills at `qps` tokens per
// second up to `burst`. A request that finds no token reserves the next one (the bucket goes
// into debt) and waits until its time, so waiters are served in arrival order and never fail.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <stop_token>

#include "util/clock.h"

namespace kubesched::client {

class RateLimiter {
 public:
  //! `qps` <= 0: no limit (every reservation is immediate). `burst` < 1 counts as 1, so that a
  //! positive qps always lets requests through (x/time/rate with burst 0 refuses them all).
  RateLimiter(float qps, int32_t burst, const util::Clock& clock);

  //! Takes a token, now or in the future: the nanoseconds until the reserved token is due (0 when
  //! one was available). The caller must wait that long before its request.
  int64_t Reserve();

  //! Reserve, then sleeps until the token is due; false when `stop` was requested first (the
  //! token is spent all the same, as a cancelled x/time/rate Wait's is not returned either).
  bool Wait(std::stop_token stop = {});

  bool Unlimited() const { return unlimited_; }

 private:
  const util::Clock& clock_;
  const bool unlimited_;
  //! Nanoseconds per token (1e9 / qps): exact for whole qps, so delays are whole nanoseconds.
  const double ns_per_token_;
  const double burst_;
  std::mutex mu_;
  //! Tokens at last_ns_; negative when requests have reserved tokens not yet refilled. Guarded by mu_.
  double tokens_;
  //! Clock time of the last update of tokens_. Guarded by mu_.
  int64_t last_ns_;
};

}  // namespace kubesched::client
