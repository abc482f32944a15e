#include "store/controllers/realtime_runner.h"

#include <algorithm>

namespace kubesched::store::controllers {

RealTimeRunner::RealTimeRunner(ControllerManager& manager, std::chrono::milliseconds poll)
    : manager_(manager), poll_(poll) {}

RealTimeRunner::~RealTimeRunner() { Stop(); }

void RealTimeRunner::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void RealTimeRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RealTimeRunner::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    manager_.FireEvents();
    auto wait = poll_;
    if (auto next = manager_.NextEventNs()) {
      const int64_t delta_ns = *next - manager_.clock().NowNs();
      wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(delta_ns)),
                        std::chrono::milliseconds(0), poll_);
    }
    lock.lock();
    cv_.wait_for(lock, wait, [this] { return stop_; });
  }
}

}  // namespace kubesched::store::controllers
