#pragma once
// The PersistentVolume controller (pkg/controller/volume/persistentvolume, the "binder") with a
// simulated provisioner, good enough for scheduling experiments in `simulate` and the API test
// bed:
//  - a claim of an Immediate class (or of no class) is bound to the smallest Available volume
//    that matches it (class, volume mode, access modes, capacity, selector), else provisioned
//    when its class has a provisioner;
//  - a WaitForFirstConsumer claim waits for the scheduler's volume.kubernetes.io/selected-node
//    annotation, then is provisioned for that node as a CSI provisioner would: where its CSIDriver
//    publishes storage capacity, a CSIStorageCapacity of the class whose nodeTopology matches the
//    node must hold the request (it is then lowered by it, as the driver would report); the
//    volume is reachable from the node's topology (the CSINode's topology keys for the driver,
//    else the keys of the class's allowedTopologies or of the capacity's nodeTopology). Without
//    room the selected-node annotation is removed, as the external provisioner does, so the
//    scheduler tries again;
//  - a volume whose claimRef names a claim (the scheduler's static binding, or a user's
//    pre-binding) completes the binding on both sides: claim spec.volumeName, the bind-completed
//    and bound-by-controller annotations, status.phase Bound with capacity and access modes;
//  - a bound volume whose claim is gone is Released (Retain) or deleted (Delete).

#include <string>
#include <string_view>

#include "api/storage_types.h"
#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

class PersistentVolumeController final : public Controller {
 public:
  explicit PersistentVolumeController(const ControllerContext& ctx);
  std::string_view Name() const override { return "persistentvolume-binder"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;

 private:
  void SyncClaim(const api::PersistentVolumeClaim& claim);
  void SyncVolume(const api::PersistentVolume& volume);
  //! Claims still waiting for a volume (a new volume or class may serve them).
  void SyncPendingClaims();
  void Provision(const api::PersistentVolumeClaim& claim, const api::StorageClass& sc, const std::string& node);
  //! Writes the claim's side of a binding to `volume`.
  void BindClaim(const api::PersistentVolumeClaim& claim, const api::PersistentVolume& volume);
  //! Sets the volume's claimRef to the claim (and phase Bound).
  void ClaimVolume(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim);
  void SetVolumePhase(const api::PersistentVolume& volume, std::string_view phase);

  ControllerContext ctx_;
  const ResourceType& claims_;
  const ResourceType& volumes_;
  const ResourceType& classes_;
  const ResourceType& drivers_;
  const ResourceType& csi_nodes_;
  const ResourceType& capacities_;
};

}  // namespace kubesched::store::controllers
