#pragma once
// Clocks: real time for `kubesched run`, virtual time for `simulate` so that backoff, Permit
// timeouts and unschedulable timeouts cost no wall time, and Unix time for the object store.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kubesched::util {

inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

//! Nanoseconds since an arbitrary, fixed origin.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;
  //! Whether time only moves when the owner advances it.
  virtual bool IsVirtual() const { return false; }
};

class RealClock final : public Clock {
 public:
  int64_t NowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

//! Unix time (nanoseconds since 1970-01-01T00:00:00Z) from the system's wall clock: what the
//! object store stamps creationTimestamp and deletionTimestamp with when it serves a real API.
//! Unlike RealClock it may jump (NTP); use RealClock to measure durations.
class SystemClock final : public Clock {
 public:
  int64_t NowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

//! Time moves only through AdvanceTo/Advance. Reads are lock-free.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(int64_t start_ns = 0) : now_(start_ns) {}
  int64_t NowNs() const override { return now_.load(std::memory_order_acquire); }
  bool IsVirtual() const override { return true; }
  //! Moves time forward to t (never backwards).
  void AdvanceTo(int64_t t) {
    int64_t cur = now_.load();
    while (t > cur && !now_.compare_exchange_weak(cur, t)) {
    }
  }
  void Advance(int64_t delta_ns) { AdvanceTo(NowNs() + delta_ns); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace kubesched::util
