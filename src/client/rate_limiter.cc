#include "client/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <thread>

namespace kubesched::client {

RateLimiter::RateLimiter(float qps, int32_t burst, const util::Clock& clock)
    : clock_(clock),
      unlimited_(!(qps > 0)),
      ns_per_token_(unlimited_ ? 0 : static_cast<double>(util::kNanosPerSecond) / static_cast<double>(qps)),
      burst_(static_cast<double>(std::max<int32_t>(burst, 1))),
      tokens_(burst_),
      last_ns_(clock.NowNs()) {}

int64_t RateLimiter::Reserve() {
  if (unlimited_) return 0;
  std::lock_guard lock(mu_);
  const int64_t now = clock_.NowNs();
  // A clock read before last_ns_ (another thread's later reading won the lock first) refills
  // nothing rather than taking tokens back.
  if (now > last_ns_) {
    tokens_ = std::min(burst_, tokens_ + static_cast<double>(now - last_ns_) / ns_per_token_);
    last_ns_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return 0;
  // The debt is paid back at the refill rate; rounding up never lets a request start early.
  return static_cast<int64_t>(std::ceil(-tokens_ * ns_per_token_)) + (last_ns_ - now);
}

bool RateLimiter::Wait(std::stop_token stop) {
  const int64_t delay_ns = Reserve();
  if (delay_ns <= 0) return !stop.stop_requested();
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  // Wakes early only for a stop request; the predicate is never true otherwise.
  cv.wait_for(lock, stop, std::chrono::nanoseconds(delay_ns), [] { return false; });
  return !stop.stop_requested();
}

}  // namespace kubesched::client
