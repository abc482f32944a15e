#pragma once
// What a cluster (simulated or real) tells the scheduler, as informer callbacks. Called without
// any cluster lock held; may be called from any thread.

#include <memory>

#include "api/resource_types.h"
#include "api/storage_types.h"
#include "api/types.h"

namespace kubesched::cluster {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void OnNodeAdd(std::shared_ptr<const api::Node> node) = 0;
  virtual void OnNodeUpdate(std::shared_ptr<const api::Node> old_node, std::shared_ptr<const api::Node> new_node) = 0;
  virtual void OnNodeDelete(std::shared_ptr<const api::Node> node) = 0;
  virtual void OnPodAdd(std::shared_ptr<const api::Pod> pod) = 0;
  virtual void OnPodUpdate(std::shared_ptr<const api::Pod> old_pod, std::shared_ptr<const api::Pod> new_pod) = 0;
  virtual void OnPodDelete(std::shared_ptr<const api::Pod> pod) = 0;
  //! PodGroups (scheduling.k8s.io): ignored unless the handler tracks them.
  virtual void OnPodGroupAdd(std::shared_ptr<const api::PodGroup> /*group*/) {}
  virtual void OnPodGroupUpdate(std::shared_ptr<const api::PodGroup> /*old_group*/,
                                std::shared_ptr<const api::PodGroup> /*new_group*/) {}
  virtual void OnPodGroupDelete(std::shared_ptr<const api::PodGroup> /*group*/) {}
  //! Claims, volumes, StorageClasses and the CSI objects: ignored unless the handler reads them.
  virtual void OnStorageAdd(const api::StorageObject& /*object*/) {}
  virtual void OnStorageUpdate(const api::StorageObject& /*old_object*/, const api::StorageObject& /*new_object*/) {}
  virtual void OnStorageDelete(const api::StorageObject& /*object*/) {}
  //! DeviceClasses, ResourceSlices and ResourceClaims: ignored unless the handler reads them.
  virtual void OnResourceAdd(const api::ResourceObject& /*object*/) {}
  virtual void OnResourceUpdate(const api::ResourceObject& /*old_object*/, const api::ResourceObject& /*new_object*/) {}
  virtual void OnResourceDelete(const api::ResourceObject& /*object*/) {}
};

}  // namespace kubesched::cluster
