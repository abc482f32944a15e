#include "util/parallelizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kubesched::util {
namespace {

// How long an idle worker keeps polling for the next job before it sleeps. Scheduling cycles
// come back to back, so the gap between two loops is the serial part of a cycle (tens of
// microseconds); polling across it saves a futex wake-up and a context switch per loop. When the
// machine is busy the poll yields its core each round, so it costs little to others.
constexpr auto kWorkerSpin = std::chrono::microseconds(200);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins on a condition, yielding the core now and then so a descheduled peer can finish.
template <typename Done>
void SpinUntil(Done&& done) {
  for (int i = 0; !done(); ++i) {
    if ((i & 63) == 63) {
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
}

}  // namespace

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  for (int i = 1; i < parallelism_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

Parallelizer::~Parallelizer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    stopping_flag_.store(true, std::memory_order_seq_cst);
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void Parallelizer::RunChunks() {
  const int pieces = pieces_;
  const int chunk = chunk_;
  while (true) {
    const int begin = next_.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= pieces) return;
    const int end = std::min(pieces, begin + chunk);
    for (int i = begin; i < end; ++i) body_(i);
    done_.fetch_add(end - begin, std::memory_order_acq_rel);
  }
}

void Parallelizer::WorkerLoop() {
  uint64_t seen = 0;
  auto is_new = [&](uint64_t e) { return (e & 1) == 0 && e != seen; };
  while (true) {
    uint64_t e = epoch_.load(std::memory_order_acquire);
    if (!is_new(e)) {
      // Poll for a while, then sleep until a caller publishes a job.
      const auto deadline = std::chrono::steady_clock::now() + kWorkerSpin;
      for (int i = 1;; ++i) {
        if (stopping_flag_.load(std::memory_order_relaxed)) return;
        e = epoch_.load(std::memory_order_acquire);
        if (is_new(e)) break;
        if ((i & 127) == 0) {
          if (std::chrono::steady_clock::now() >= deadline) break;
          std::this_thread::yield();
        } else {
          CpuRelax();
        }
      }
      if (!is_new(e)) {
        std::unique_lock lock(mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        cv_.wait(lock, [&] {
          e = epoch_.load(std::memory_order_seq_cst);
          return stopping_ || is_new(e);
        });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        if (stopping_) return;
      }
    }
    // Register, then check the slot was not reopened for rewriting meanwhile: the caller flips
    // the epoch to odd before it waits for active_ to drain, so either it sees us or we see it.
    active_.fetch_add(1, std::memory_order_seq_cst);
    if (epoch_.load(std::memory_order_seq_cst) == e) {
      seen = e;
      RunChunks();
    }
    active_.fetch_sub(1, std::memory_order_release);
  }
}

void Parallelizer::Until(int pieces, LoopBody body) {
  if (pieces <= 0) return;
  if (parallelism_ == 1 || pieces == 1 || busy_.exchange(true, std::memory_order_acquire)) {
    // Single-threaded, trivial, or the slot is taken (a nested or concurrent loop): run here.
    for (int i = 0; i < pieces; ++i) body(i);
    return;
  }
  int chunk = static_cast<int>(std::sqrt(static_cast<double>(pieces)));
  chunk = std::max(1, std::min(chunk, pieces / parallelism_ + 1));

  // Reopen the slot: odd epoch, then wait for workers still leaving the previous job.
  const uint64_t e = epoch_.load(std::memory_order_relaxed);
  epoch_.store(e + 1, std::memory_order_seq_cst);
  SpinUntil([&] { return active_.load(std::memory_order_seq_cst) == 0; });
  body_ = body;
  pieces_ = pieces;
  chunk_ = chunk;
  next_.store(0, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  epoch_.store(e + 2, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }

  RunChunks();
  // The rest are chunks workers claimed and are running now.
  SpinUntil([&] { return done_.load(std::memory_order_acquire) >= pieces; });
  busy_.store(false, std::memory_order_release);
}

void Parallelizer::UntilWorthIt(int pieces, LoopBody body, LoopCost& cost) {
  if (pieces < kMinMeasuredPieces) {
    for (int i = 0; i < pieces; ++i) body(i);
    return;
  }
  const bool shared = parallelism_ > 1 && static_cast<double>(pieces) * cost.ns_per_piece_ >= kMinSharedLoopNs;
  const auto start = std::chrono::steady_clock::now();
  if (shared) {
    Until(pieces, body);
  } else {
    for (int i = 0; i < pieces; ++i) body(i);
  }
  const auto elapsed = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  // A shared loop's time, as if one thread had run it all: an overestimate by its overheads, so a
  // loop too short to share is soon run alone again and measured as it is.
  const double per_piece = elapsed * (shared ? parallelism_ : 1) / pieces;
  cost.ns_per_piece_ = cost.ns_per_piece_ == 0 ? per_piece : cost.ns_per_piece_ + (per_piece - cost.ns_per_piece_) / 8;
}

}  // namespace kubesched::util
