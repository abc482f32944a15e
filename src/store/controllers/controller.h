#pragma once
// The controllers that run beside the store (ReplicaSet, Deployment, disruption, and the node
// lifecycle acting as kubelets and pod garbage collector), and the manager that feeds them the
// store's changes and drives their timed work. Like upstream's controllers they read and write
// only through the Store interface; they see changes as an in-process observer, so `simulate`
// runs them deterministically on its thread and virtual clock, and the API server on a
// real-time thread (RealTimeRunner).

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "store/store.h"
#include "util/clock.h"

namespace kubesched::store::controllers {

class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string_view Name() const = 0;
  //! A change in the store, in resourceVersion order, on the thread that delivers observers.
  //! The controller may write to the store; its own writes come back as later events.
  virtual void OnEvent(const WatchEvent& event) = 0;
  //! Brings everything up to date from the store's current objects (at start).
  virtual void Resync() = 0;
  //! When timed work is next due (Unix ns on the manager's clock); nullopt when none is.
  virtual std::optional<int64_t> NextEventNs() const { return std::nullopt; }
  //! Does the timed work due by `now_ns`.
  virtual void FireEvents(int64_t now_ns) {}
};

class ControllerManager {
 public:
  ControllerManager(Store& store, const util::Clock& clock);
  ~ControllerManager();
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  //! Adds a controller; only before Start.
  void Add(std::unique_ptr<Controller> controller);
  //! Subscribes to the store and resyncs every controller, in the order added.
  void Start();
  //! The earliest timed work of any controller.
  std::optional<int64_t> NextEventNs() const;
  //! Runs every controller's timed work due by the clock's now (repeatedly, while more comes due
  //! at once); whether any was due.
  bool FireEvents();

  Store& store() { return store_; }
  const util::Clock& clock() const { return clock_; }

 private:
  Store& store_;
  const util::Clock& clock_;
  std::vector<std::unique_ptr<Controller>> controllers_;  // fixed after Start
  std::optional<uint64_t> observer_;
  std::mutex fire_mu_;  // serialises FireEvents callers (the runner thread and tests)
};

//! The controllers every mode runs: ReplicaSet, Deployment, disruption, node lifecycle. `seed`
//! seeds the pod IPs the node lifecycle hands out.
std::unique_ptr<ControllerManager> NewDefaultControllerManager(Store& store, const util::Clock& clock);

}  // namespace kubesched::store::controllers
