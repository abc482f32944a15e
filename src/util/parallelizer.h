#pragma once
// A fixed pool of worker threads that runs a loop body over [0, pieces) in chunks, the calling
// thread taking part. Used for per-node Filter and Score. Nested calls are safe: a caller always
// makes progress on its own job, so it never waits on work nobody has claimed.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kubesched::util {

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
  void Until(int pieces, const std::function<void(int)>& body);

 private:
  struct Job;
  void WorkerLoop();
  static void RunChunks(Job& job);

  int parallelism_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> jobs_;  // guarded by mu_
  bool stopping_ = false;                  // guarded by mu_
  // Workers blocked on cv_ (changed under mu_): a job is announced with a (costly) futex wake-up
  // only when someone sleeps.
  std::atomic<int> sleepers_{0};
  std::atomic<int> queued_{0};  // jobs_.size(), readable without the lock
  std::vector<std::thread> workers_;
};

}  // namespace kubesched::util
