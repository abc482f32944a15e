#pragma once
// Cluster events and queueing hints: how a plugin that rejected a pod says which changes in the
// cluster could make the pod schedulable again.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/resource_types.h"
#include "api/storage_types.h"
#include "api/types.h"

namespace kubesched::framework {

//! What kind of object an event is about. kPod matches both assigned and unscheduled pods.
enum class EventResource : uint8_t {
  kPod,             //!< any pod
  kAssignedPod,     //!< a pod bound to a node
  kUnscheduledPod,  //!< a pod not yet bound
  kNode,
  kNamespace,
  kPodDisruptionBudget,
  kPodGroup,  //!< scheduling.k8s.io PodGroup
  kPersistentVolume,
  kPersistentVolumeClaim,
  kStorageClass,
  kCSINode,
  kCSIDriver,
  kCSIStorageCapacity,
  kResourceClaim,
  kResourceSlice,
  kDeviceClass,
  kWildCard,  //!< any resource
};

//! Bit set of actions, as upstream's ActionType.
using ActionType = uint32_t;
namespace action {
inline constexpr ActionType kAdd = 1 << 0;
inline constexpr ActionType kDelete = 1 << 1;
inline constexpr ActionType kUpdateNodeAllocatable = 1 << 2;
inline constexpr ActionType kUpdateNodeLabel = 1 << 3;
inline constexpr ActionType kUpdateNodeTaint = 1 << 4;
inline constexpr ActionType kUpdateNodeCondition = 1 << 5;
inline constexpr ActionType kUpdateNodeAnnotation = 1 << 6;
inline constexpr ActionType kUpdatePodLabel = 1 << 7;
inline constexpr ActionType kUpdatePodScaleDown = 1 << 8;
inline constexpr ActionType kUpdatePodTolerations = 1 << 9;
inline constexpr ActionType kUpdatePodSchedulingGatesEliminated = 1 << 10;
inline constexpr ActionType kUpdatePodOther = 1 << 11;
inline constexpr ActionType kUpdateNodeOther = 1 << 12;
inline constexpr ActionType kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint |
                                      kUpdateNodeCondition | kUpdateNodeAnnotation | kUpdatePodLabel |
                                      kUpdatePodScaleDown | kUpdatePodTolerations |
                                      kUpdatePodSchedulingGatesEliminated | kUpdatePodOther | kUpdateNodeOther;
inline constexpr ActionType kAll = kAdd | kDelete | kUpdate;
}  // namespace action

struct ClusterEvent {
  EventResource resource = EventResource::kWildCard;
  ActionType action = action::kAll;
  //! A readable label for logs ("AssignedPodDelete", "NodeAdd", ...).
  std::string label;

  //! Whether this event (as registered by a plugin) covers `happened`.
  bool Covers(const ClusterEvent& happened) const;
};

//! Well-known events the scheduler emits.
namespace events {
ClusterEvent NodeAdd();
ClusterEvent AssignedPodAdd();
ClusterEvent AssignedPodDelete();
ClusterEvent UnschedulableTimeout();
ClusterEvent ForceActivate();
}  // namespace events

enum class QueueingHint { kSkip, kQueue };

//! The objects an event carries; any may be null (e.g. old_* on an add).
struct EventObjects {
  const api::Pod* old_pod = nullptr;
  const api::Pod* new_pod = nullptr;
  const api::Node* old_node = nullptr;
  const api::Node* new_node = nullptr;
  const api::PodGroup* old_pod_group = nullptr;
  const api::PodGroup* new_pod_group = nullptr;
  //! A claim, volume, class or CSI object (the kind the event's resource names).
  const api::StorageObject* old_storage = nullptr;
  const api::StorageObject* new_storage = nullptr;
  //! A DeviceClass, ResourceSlice or ResourceClaim (the kind the event's resource names).
  const api::ResourceObject* old_resource = nullptr;
  const api::ResourceObject* new_resource = nullptr;
};

//! Decides whether `event` may make the rejected `pod` schedulable. May be called concurrently.
using QueueingHintFn = std::function<QueueingHint(const api::Pod& pod, const EventObjects& event)>;

struct ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint;  //!< null means always kQueue
};

}  // namespace kubesched::framework
