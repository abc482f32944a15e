#pragma once
// The ReplicationController controller (pkg/controller/replication): upstream runs the
// ReplicaSet controller's code on ReplicationControllers through an adapter, and so does this:
// a ReplicationController is a ReplicaSet whose selector is a plain map of labels (core/v1
// replicationcontrollers, pods `<rc>-<5 chars>` owned with apiVersion v1).

#include <memory>

#include "store/controllers/replicaset_controller.h"

namespace kubesched::store::controllers {

inline constexpr ReplicaKind kReplicationControllerKind{
    "", "replicationcontrollers", "v1", "ReplicationController", "replicationcontroller", SelectorForm::kPlainMap};

std::unique_ptr<Controller> NewReplicationController(const ControllerContext& ctx);

}  // namespace kubesched::store::controllers
