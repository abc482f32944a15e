#pragma once
// Runs a ControllerManager's timed work on wall-clock time, on its own thread: what
// `kubesched apiserver` uses (simulate calls NextEventNs/FireEvents on its virtual clock).

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

class RealTimeRunner {
 public:
  //! Checks for due work at the next due time or every `poll`, whichever is first (work added
  //! by an event between checks is picked up within `poll`).
  explicit RealTimeRunner(ControllerManager& manager, std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  ~RealTimeRunner();  //!< stops
  void Start();
  void Stop();

 private:
  void Run();

  ControllerManager& manager_;
  const std::chrono::milliseconds poll_;
  std::mutex mu_;  // guards stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kubesched::store::controllers
