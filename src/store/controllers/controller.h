#pragma once
// The controllers that run beside the store (ReplicaSet, ReplicationController, Deployment,
// StatefulSet, Job, DaemonSet, disruption, and the node lifecycle acting as kubelets and pod
// garbage collector), and the manager that feeds them the store's changes and drives their timed
// work. Like upstream's controllers they write only through the Store interface and read from
// shared informers (PodInformer, NodeInformer) and their own caches, each object version parsed
// once; they see changes as an in-process observer, so `simulate` runs them deterministically on
// its thread and virtual clock, and the API server on a real-time thread (RealTimeRunner).

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "api/workloads.h"
#include "store/controllers/node_informer.h"
#include "store/controllers/pod_informer.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::store::controllers {

//! How the node lifecycle (node_lifecycle.h) treats the pods it finds when it starts.
struct NodeLifecycleOptions {
  //! Pods already past their deletionTimestamp when the lifecycle starts are left as they are,
  //! holding their resources, instead of being removed at once: a cluster snapshot's pods stuck
  //! terminating (a finalizer, an unreachable kubelet) stay stuck. `simulate` sets it, as the
  //! snapshot has no kubelet that could finish them; the API server does not (its restored
  //! state's kubelets are the node lifecycle itself).
  bool leave_overdue_terminating_pods = false;
};

//! What every controller is built from. The informers and the Rng are the manager's; they are
//! only used while the manager dispatches an event or runs Resync (never concurrently).
struct ControllerContext {
  Store& store;
  const util::Clock& clock;
  const PodInformer& pods;
  const NodeInformer& nodes;
  //! Draws the names of the pods controllers create (api::GenerateName, one draw per pod), as
  //! the loader and SimulatedCluster do, so the same seed and events give the same names.
  api::Rng& rng;
};

class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string_view Name() const = 0;
  //! A change in the store, in resourceVersion order, after the informers have applied it. The
  //! controller may write to the store; its own writes come back as later events.
  virtual void OnEvent(const WatchEvent& event) = 0;
  //! Brings everything up to date from the store's current objects (at start, after the
  //! informers are filled).
  virtual void Resync() = 0;
  //! Writes what the controller batched over the events since the last call (statuses): called
  //! once the store has delivered every queued event, and after Resync and FireEvents.
  virtual void Flush() {}
  //! When timed work is next due (Unix ns on the manager's clock); nullopt when none is.
  virtual std::optional<int64_t> NextEventNs() const { return std::nullopt; }
  //! Does the timed work due by `now_ns`.
  virtual void FireEvents(int64_t now_ns) {}
};

class ControllerManager {
 public:
  //! `seed` seeds the names of the pods the controllers create: the same seed as SimulatedCluster
  //! was given yields its names (it draws from seed ^ 0x9e3779b97f4a7c15).
  ControllerManager(Store& store, const util::Clock& clock, uint64_t seed);
  ~ControllerManager();
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  //! Adds a controller; only before Start.
  void Add(std::unique_ptr<Controller> controller);
  //! Subscribes to the store, fills the informers from it and resyncs every controller, in the
  //! order added. Call it before other threads write to the store.
  void Start();
  //! The earliest timed work of any controller.
  std::optional<int64_t> NextEventNs() const;
  //! Runs every controller's timed work due by the clock's now (repeatedly, while more comes due
  //! at once); whether any was due.
  bool FireEvents();

  Store& store() { return store_; }
  const util::Clock& clock() const { return clock_; }
  //! The context controllers are built with.
  ControllerContext context() { return ControllerContext{store_, clock_, pods_, nodes_, rng_}; }

 private:
  //! Runs `work` as the one dispatching thread: events the store delivers to this thread meanwhile
  //! (its own writes, while no other thread was delivering) are queued and dispatched after it,
  //! so controllers never see an event in the middle of their own work.
  //! With `flush`, the controllers' Flush runs after it (and again after what that writes).
  template <typename F>
  void Exclusive(F&& work, bool flush);
  void OnStoreEvent(const WatchEvent& event);
  void OnStoreIdle();
  void Dispatch(const WatchEvent& event);

  Store& store_;
  const util::Clock& clock_;
  PodInformer pods_;
  NodeInformer nodes_;
  api::Rng rng_;
  std::vector<std::unique_ptr<Controller>> controllers_;  // fixed after Start
  std::optional<uint64_t> observer_;
  std::mutex dispatch_mu_;                      // held while informers and controllers run; guards deferred_
  std::atomic<std::thread::id> dispatching_{};  // the thread holding dispatch_mu_
  std::deque<WatchEvent> deferred_;
};

struct DefaultControllerOptions {
  NodeLifecycleOptions node_lifecycle{};
};

//! The controllers every mode runs: node lifecycle, Deployment, ReplicaSet,
//! ReplicationController, StatefulSet, Job, DaemonSet, disruption. `seed` as ControllerManager's.
std::unique_ptr<ControllerManager> NewDefaultControllerManager(Store& store, const util::Clock& clock,
                                                               uint64_t seed = 0,
                                                               const DefaultControllerOptions& options = {});

}  // namespace kubesched::store::controllers
