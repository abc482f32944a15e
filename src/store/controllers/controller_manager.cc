#include <algorithm>

#include "store/controllers/controller.h"
#include "store/controllers/deployment_controller.h"
#include "store/controllers/disruption_controller.h"
#include "store/controllers/node_lifecycle.h"
#include "store/controllers/replicaset_controller.h"

namespace kubesched::store::controllers {

ControllerManager::ControllerManager(Store& store, const util::Clock& clock) : store_(store), clock_(clock) {}

ControllerManager::~ControllerManager() {
  if (observer_) store_.RemoveObserver(*observer_);
}

void ControllerManager::Add(std::unique_ptr<Controller> controller) { controllers_.push_back(std::move(controller)); }

void ControllerManager::Start() {
  observer_ = store_.AddObserver([this](const WatchEvent& event) {
    for (auto& c : controllers_) c->OnEvent(event);
  });
  for (auto& c : controllers_) c->Resync();
}

std::optional<int64_t> ControllerManager::NextEventNs() const {
  std::optional<int64_t> next;
  for (const auto& c : controllers_) {
    if (auto t = c->NextEventNs(); t && (!next || *t < *next)) next = t;
  }
  return next;
}

bool ControllerManager::FireEvents() {
  std::lock_guard lock(fire_mu_);
  bool fired = false;
  while (true) {
    const int64_t now = clock_.NowNs();
    auto next = NextEventNs();
    if (!next || *next > now) break;
    for (auto& c : controllers_) {
      if (auto t = c->NextEventNs(); t && *t <= now) c->FireEvents(now);
    }
    fired = true;
  }
  return fired;
}

std::unique_ptr<ControllerManager> NewDefaultControllerManager(Store& store, const util::Clock& clock) {
  auto m = std::make_unique<ControllerManager>(store, clock);
  m->Add(std::make_unique<NodeLifecycle>(store, clock));
  m->Add(std::make_unique<DeploymentController>(store));
  m->Add(std::make_unique<ReplicaSetController>(store));
  m->Add(std::make_unique<DisruptionController>(store, clock));
  return m;
}

}  // namespace kubesched::store::controllers
