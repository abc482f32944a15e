#include "store/controllers/replication_controller.h"

namespace kubesched::store::controllers {

std::unique_ptr<Controller> NewReplicationController(const ControllerContext& ctx) {
  return std::make_unique<ReplicaSetController>(ctx, kReplicationControllerKind);
}

}  // namespace kubesched::store::controllers
