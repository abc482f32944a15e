#include "framework/events.h"

namespace kubesched::framework {

bool ClusterEvent::Covers(const ClusterEvent& happened) const {
  bool resource_match = resource == EventResource::kWildCard || resource == happened.resource ||
                        (resource == EventResource::kPod && (happened.resource == EventResource::kAssignedPod ||
                                                             happened.resource == EventResource::kUnscheduledPod));
  return resource_match && (action & happened.action) != 0;
}

namespace events {
ClusterEvent NodeAdd() { return {EventResource::kNode, action::kAdd, "NodeAdd"}; }
ClusterEvent AssignedPodAdd() { return {EventResource::kAssignedPod, action::kAdd, "AssignedPodAdd"}; }
ClusterEvent AssignedPodDelete() { return {EventResource::kAssignedPod, action::kDelete, "AssignedPodDelete"}; }
ClusterEvent UnschedulableTimeout() { return {EventResource::kWildCard, action::kAll, "UnschedulableTimeout"}; }
ClusterEvent ForceActivate() { return {EventResource::kWildCard, action::kAll, "ForceActivate"}; }
}  // namespace events

}  // namespace kubesched::framework
