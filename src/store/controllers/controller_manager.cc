#include <algorithm>

#include "store/controllers/controller.h"
#include "store/controllers/daemonset_controller.h"
#include "store/controllers/deployment_controller.h"
#include "store/controllers/disruption_controller.h"
#include "store/controllers/job_controller.h"
#include "store/controllers/node_lifecycle.h"
#include "store/controllers/object_util.h"
#include "store/controllers/persistent_volume_controller.h"
#include "store/controllers/replicaset_controller.h"
#include "store/controllers/replication_controller.h"
#include "store/controllers/resource_claim_controller.h"
#include "store/controllers/statefulset_controller.h"
#include "store/controllers/volume_claims.h"

namespace kubesched::store::controllers {

namespace {

// SimulatedCluster's constant: its replacement pods draw from seed ^ this.
constexpr uint64_t kNameSeedMix = 0x9e3779b97f4a7c15ULL;

}  // namespace

ControllerManager::ControllerManager(Store& store, const util::Clock& clock, uint64_t seed)
    : store_(store),
      clock_(clock),
      pods_(*store.FindResource("", "pods")),
      nodes_(*store.FindResource("", "nodes")),
      rng_(seed ^ kNameSeedMix) {}

ControllerManager::~ControllerManager() {
  if (observer_) store_.RemoveObserver(*observer_);
}

void ControllerManager::Add(std::unique_ptr<Controller> controller) { controllers_.push_back(std::move(controller)); }

template <typename F>
void ControllerManager::Exclusive(F&& work, bool flush) {
  std::lock_guard lock(dispatch_mu_);
  dispatching_.store(std::this_thread::get_id());
  work();
  while (true) {
    while (!deferred_.empty()) {
      WatchEvent event = std::move(deferred_.front());
      deferred_.pop_front();
      Dispatch(event);
    }
    if (!flush) break;
    for (auto& c : controllers_) c->Flush();
    if (deferred_.empty()) break;
  }
  dispatching_.store(std::thread::id());
}

void ControllerManager::OnStoreEvent(const WatchEvent& event) {
  if (dispatching_.load() == std::this_thread::get_id()) {
    // A write of this thread's own controller work, delivered synchronously: after that work.
    deferred_.push_back(event);
    return;
  }
  Exclusive([&] { Dispatch(event); }, /*flush=*/false);
}

void ControllerManager::OnStoreIdle() {
  // Within this thread's own controller work, Exclusive flushes when that work is done.
  if (dispatching_.load() == std::this_thread::get_id()) return;
  Exclusive([] {}, /*flush=*/true);
}

void ControllerManager::Dispatch(const WatchEvent& event) {
  pods_.Apply(event);
  nodes_.Apply(event);
  for (auto& c : controllers_) c->OnEvent(event);
}

void ControllerManager::Start() {
  observer_ = store_.AddObserver([this](const WatchEvent& event) { OnStoreEvent(event); }, [this] { OnStoreIdle(); });
  Exclusive(
      [&] {
        nodes_.Fill(ListAll(store_, *store_.FindResource("", "nodes"), ""));
        pods_.Fill(ListAll(store_, *store_.FindResource("", "pods"), ""));
        for (auto& c : controllers_) c->Resync();
      },
      /*flush=*/true);
}

std::optional<int64_t> ControllerManager::NextEventNs() const {
  std::optional<int64_t> next;
  for (const auto& c : controllers_) {
    if (auto t = c->NextEventNs(); t && (!next || *t < *next)) next = t;
  }
  return next;
}

bool ControllerManager::FireEvents() {
  bool fired = false;
  while (true) {
    const int64_t now = clock_.NowNs();
    auto next = NextEventNs();
    if (!next || *next > now) break;
    Exclusive(
        [&] {
          for (auto& c : controllers_) {
            if (auto t = c->NextEventNs(); t && *t <= now) c->FireEvents(now);
          }
        },
        /*flush=*/true);
    fired = true;
  }
  return fired;
}

std::unique_ptr<ControllerManager> NewDefaultControllerManager(Store& store, const util::Clock& clock, uint64_t seed,
                                                               const DefaultControllerOptions& options) {
  auto m = std::make_unique<ControllerManager>(store, clock, seed);
  ControllerContext ctx = m->context();
  m->Add(std::make_unique<NodeLifecycle>(ctx, options.node_lifecycle));
  m->Add(std::make_unique<DeploymentController>(ctx));
  m->Add(std::make_unique<ReplicaSetController>(ctx));
  m->Add(NewReplicationController(ctx));
  m->Add(std::make_unique<StatefulSetController>(ctx));
  m->Add(std::make_unique<JobController>(ctx));
  m->Add(std::make_unique<DaemonSetController>(ctx));
  m->Add(std::make_unique<DisruptionController>(ctx));
  m->Add(std::make_unique<EphemeralVolumeController>(ctx));
  m->Add(std::make_unique<PersistentVolumeController>(ctx));
  m->Add(std::make_unique<ResourceClaimController>(ctx));
  return m;
}

}  // namespace kubesched::store::controllers
