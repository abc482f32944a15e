#include "util/parallelizer.h"

#include <algorithm>
#include <cmath>

namespace kubesched::util {

struct Parallelizer::Job {
  const std::function<void(int)>* body = nullptr;
  int pieces = 0;
  int chunk = 1;
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::mutex mu;
  std::condition_variable finished;
};

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  for (int i = 1; i < parallelism_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

Parallelizer::~Parallelizer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void Parallelizer::RunChunks(Job& job) {
  while (true) {
    int begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin >= job.pieces) return;
    int end = std::min(job.pieces, begin + job.chunk);
    for (int i = begin; i < end; ++i) (*job.body)(i);
    int finished = job.done.fetch_add(end - begin, std::memory_order_acq_rel) + (end - begin);
    if (finished == job.pieces) {
      std::lock_guard lock(job.mu);
      job.finished.notify_all();
    }
  }
}

void Parallelizer::WorkerLoop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mu_);
      if (!stopping_ && jobs_.empty()) {
        sleepers_.fetch_add(1, std::memory_order_relaxed);
        cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stopping_) return;
      job = jobs_.front();
      // Leave the job queued while chunks remain so other idle workers can join it.
      if (job->next.load(std::memory_order_relaxed) >= job->pieces) {
        jobs_.pop_front();
        queued_.fetch_sub(1, std::memory_order_release);
        continue;
      }
    }
    RunChunks(*job);
    std::lock_guard lock(mu_);
    if (!jobs_.empty() && jobs_.front() == job) {
      jobs_.pop_front();
      queued_.fetch_sub(1, std::memory_order_release);
    }
  }
}

void Parallelizer::Until(int pieces, const std::function<void(int)>& body) {
  if (pieces <= 0) return;
  if (parallelism_ == 1 || pieces == 1) {
    for (int i = 0; i < pieces; ++i) body(i);
    return;
  }
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->pieces = pieces;
  int chunk = static_cast<int>(std::sqrt(static_cast<double>(pieces)));
  chunk = std::min(chunk, pieces / parallelism_ + 1);
  job->chunk = std::max(1, chunk);
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(job);
    queued_.fetch_add(1, std::memory_order_release);
    wake = sleepers_.load(std::memory_order_relaxed) > 0;
  }
  if (wake) cv_.notify_all();
  RunChunks(*job);
  if (job->done.load(std::memory_order_acquire) < pieces) {
    std::unique_lock lock(job->mu);
    job->finished.wait(lock, [&] { return job->done.load(std::memory_order_acquire) >= pieces; });
  }
  // Drop the finished job from the queue if no worker did, so idle workers do not wake for it.
  std::lock_guard lock(mu_);
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if (*it == job) {
      jobs_.erase(it);
      queued_.fetch_sub(1, std::memory_order_release);
      break;
    }
  }
}

}  // namespace kubesched::util
