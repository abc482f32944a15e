#pragma once
// StoreInformer: the scheduler's informers over the object store, in process. It tells an
// EventHandler about nodes and pods as client-go's informers tell kube-scheduler: the current
// objects as adds when it subscribes, then every change, with the typed views the store derived
// once per object version (nothing is decoded again here).
//
// Pods in phase Succeeded or Failed are left out, as by the field selector upstream's scheduler
// watches pods with: they hold no resources and are never scheduled. A pod that reaches such a
// phase therefore leaves as a delete.

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "cluster/event_handler.h"
#include "store/store.h"

namespace kubesched::cluster {

class StoreInformer {
 public:
  explicit StoreInformer(store::Store& store);
  ~StoreInformer();
  StoreInformer(const StoreInformer&) = delete;
  StoreInformer& operator=(const StoreInformer&) = delete;

  //! Registers the handler and replays the current objects to it as adds: nodes, storage objects,
  //! PodGroups, then
  //! pods in the order they were created (resourceVersion order), then forwards every later change.
  //! Other threads may write meanwhile (a remote store's reflectors do): changes delivered during
  //! the replay wait until it is done, and those the replay already covered are dropped.
  void Subscribe(EventHandler* handler);

 private:
  void OnEvent(const store::WatchEvent& event);
  void Forward(const store::WatchEvent& event);
  void ForwardPodGroup(const store::WatchEvent& event);
  void ForwardStorage(const store::WatchEvent& event);
  void ForwardResource(const store::WatchEvent& event);

  store::Store& store_;
  const store::ResourceType& pods_;
  const store::ResourceType& nodes_;
  //! PodGroups of both APIs (scheduling.k8s.io, scheduling.x-k8s.io); null when the store does not
  //! serve them.
  std::array<const store::ResourceType*, 2> pod_groups_{};
  //! The storage kinds, in the order Subscribe replays them (classes and CSI objects before the
  //! volumes and claims that name them); null when the store does not serve one.
  std::array<const store::ResourceType*, 6> storage_{};
  //! DeviceClasses, ResourceSlices and ResourceClaims (resource.k8s.io), in the order Subscribe
  //! replays them; null when the store does not serve one.
  std::array<const store::ResourceType*, 3> resources_{};
  EventHandler* handler_ = nullptr;
  std::optional<uint64_t> observer_;
  //! Changes up to this resourceVersion were replayed by Subscribe.
  uint64_t replayed_through_ = 0;
  std::mutex mu_;           // guards replaying_ and held_
  bool replaying_ = false;  // Subscribe is replaying: events are held
  std::vector<store::WatchEvent> held_;
};

}  // namespace kubesched::cluster
