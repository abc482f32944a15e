#pragma once
// A fixed pool of worker threads that runs a loop body over [0, pieces) in chunks, the calling
// thread taking part. Used for per-node Filter and Score, which the scheduling loop runs thousands
// of times a second on a few hundred nodes each: a loop must cost far less than a futex wake-up
// and a context switch. So there is one job slot, published with an atomic epoch; workers spin
// for a short while after each job, catching the next one without a system call, and only then
// sleep on a condition variable. A call made while a loop is already running (a nested loop, or a
// second thread) runs its body on the calling thread.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace kubesched::util {

//! A non-owning reference to a callable `void(int)`: cheap to pass, never allocates. The callable
//! must outlive the call it is passed to.
class LoopBody {
 public:
  //! Does nothing.
  LoopBody() : object_(nullptr), call_([](void*, int) {}) {}
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, LoopBody> && std::is_invocable_v<F&, int>)
      LoopBody(F&& f)  // NOLINT: implicit, so lambdas pass directly
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int i) { (*static_cast<std::remove_reference_t<F>*>(o))(i); }) {}

  void operator()(int i) const { call_(object_, i); }

 private:
  void* object_;
  void (*call_)(void*, int);
};

//! What one loop of a call site has cost per piece, as measured on its earlier loops: how
//! Parallelizer::UntilWorthIt decides whether the next one is worth sharing. One per call site,
//! used by one thread at a time.
class LoopCost {
 public:
  //! A site not measured yet, or one whose cost per piece is known (tests seed it so that where a
  //! loop runs does not depend on how fast the machine was).
  explicit LoopCost(double ns_per_piece = 0) : ns_per_piece_(ns_per_piece) {}

  //! Nanoseconds per piece (0 until a loop was measured).
  double ns_per_piece() const { return ns_per_piece_; }

 private:
  friend class Parallelizer;
  double ns_per_piece_ = 0;
};

class Parallelizer {
 public:
  //! parallelism: total threads working on a loop, including the caller (>= 1).
  explicit Parallelizer(int parallelism);
  ~Parallelizer();
  Parallelizer(const Parallelizer&) = delete;
  Parallelizer& operator=(const Parallelizer&) = delete;

  int parallelism() const { return parallelism_; }

  //! Runs body(i) for every i in [0, pieces); returns when all have run. Chunk size follows
  //! upstream's chunkSizeFor: about sqrt(pieces), at most pieces / parallelism + 1.
  void Until(int pieces, LoopBody body);

  //! Until when the loop is expected to take long enough to repay sharing it: pieces times the
  //! call site's measured cost per piece reaches kMinSharedLoopNs. Otherwise the calling thread
  //! runs it alone, which for short loops is faster: handing out work, waiting for the last
  //! piece, and a worker polling for the next job (it slows the caller's core on the machines
  //! measured, two vCPUs) cost tens of microseconds, while a memoised Filter or Score of a node
  //! takes under a tenth of one. Loops of kMinMeasuredPieces or more update `cost`. Where a loop
  //! runs never changes what it computes.
  void UntilWorthIt(int pieces, LoopBody body, LoopCost& cost);

  static constexpr double kMinSharedLoopNs = 150'000;
  static constexpr int kMinMeasuredPieces = 32;

 private:
  void WorkerLoop();
  //! Claims and runs chunks of the current job until none is left.
  void RunChunks();

  const int parallelism_;

  // The job slot. Written by the caller only while epoch_ is odd and no worker is active; read by
  // workers after they saw an even epoch and registered in active_.
  LoopBody body_;
  int pieces_ = 0;
  int chunk_ = 1;
  alignas(64) std::atomic<int> next_{0};  // next piece to claim
  alignas(64) std::atomic<int> done_{0};  // pieces finished
  // Even: job slot stable (epoch / 2 jobs published so far); odd: being rewritten.
  alignas(64) std::atomic<uint64_t> epoch_{0};
  std::atomic<int> active_{0};     // workers inside the job slot
  std::atomic<bool> busy_{false};  // a caller owns the slot

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<int> sleepers_{0};  // workers waiting on cv_ (changed under mu_)
  bool stopping_ = false;         // guarded by mu_
  std::atomic<bool> stopping_flag_{false};
  std::vector<std::thread> workers_;
};

}  // namespace kubesched::util
