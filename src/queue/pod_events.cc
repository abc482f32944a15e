#include "queue/pod_events.h"

#include <map>
#include <string>

#include "framework/resource.h"

namespace kubesched::queue {
namespace {

using framework::ActionType;
using framework::ClusterEvent;
using framework::EventResource;
namespace action = framework::action;

// Whether any resource the old pod requested is requested less (or no longer) by the new one.
bool RequestScaledDown(const api::Pod& new_pod, const api::Pod& old_pod) {
  framework::Resource n = framework::ComputePodRequests(new_pod.spec);
  framework::Resource o = framework::ComputePodRequests(old_pod.spec);
  if (o.milli_cpu > n.milli_cpu || o.memory > n.memory || o.ephemeral_storage > n.ephemeral_storage) {
    return true;
  }
  for (const auto& [name, value] : o.scalar) {
    if (value > n.Scalar(name)) return true;
  }
  return false;
}

std::string PodActionLabel(ActionType a) {
  switch (a) {
    case action::kUpdatePodLabel:
      return "UpdatePodLabel";
    case action::kUpdatePodScaleDown:
      return "UpdatePodScaleDown";
    case action::kUpdatePodSchedulingGatesEliminated:
      return "UpdatePodSchedulingGatesEliminated";
    case action::kUpdatePodTolerations:
      return "UpdatePodTolerations";
    default:
      return "Update";
  }
}

std::string NodeActionLabel(ActionType a) {
  switch (a) {
    case action::kUpdateNodeAllocatable:
      return "UpdateNodeAllocatable";
    case action::kUpdateNodeLabel:
      return "UpdateNodeLabel";
    case action::kUpdateNodeTaint:
      return "UpdateNodeTaint";
    case action::kUpdateNodeCondition:
      return "UpdateNodeCondition";
    case action::kUpdateNodeAnnotation:
      return "UpdateNodeAnnotation";
    default:
      return "Update";
  }
}

// Semantic equality of two resource lists (same names, same amounts).
bool SameResources(const api::ResourceList& a, const api::ResourceList& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.MilliValue() != ib->second.MilliValue()) return false;
  }
  return true;
}

// Condition type → status; upstream ignores heartbeat times and reasons.
std::map<std::string, std::string> ConditionStatuses(const api::Node& node) {
  std::map<std::string, std::string> out;
  for (const auto& c : node.status.conditions) out[c.type] = c.status;
  return out;
}

}  // namespace

std::vector<ClusterEvent> PodSchedulingPropertiesChange(const api::Pod& new_pod, const api::Pod& old_pod) {
  const bool assigned = !new_pod.spec.node_name.empty();
  const EventResource resource = assigned ? EventResource::kAssignedPod : EventResource::kUnscheduledPod;
  const std::string prefix = assigned ? "AssignedPod" : "UnscheduledPod";

  std::vector<ActionType> actions;
  if (!(new_pod.metadata.labels == old_pod.metadata.labels)) actions.push_back(action::kUpdatePodLabel);
  if (RequestScaledDown(new_pod, old_pod)) actions.push_back(action::kUpdatePodScaleDown);
  if (new_pod.spec.scheduling_gates.empty() && !old_pod.spec.scheduling_gates.empty()) {
    actions.push_back(action::kUpdatePodSchedulingGatesEliminated);
  }
  // API validation only lets tolerations be added, so a length change is a change.
  if (new_pod.spec.tolerations.size() != old_pod.spec.tolerations.size()) {
    actions.push_back(action::kUpdatePodTolerations);
  }

  std::vector<ClusterEvent> events;
  for (ActionType a : actions) events.push_back({resource, a, prefix + PodActionLabel(a)});
  if (events.empty()) events.push_back({resource, action::kUpdatePodOther, prefix + "Update"});
  return events;
}

std::vector<ClusterEvent> NodeSchedulingPropertiesChange(const api::Node& new_node, const api::Node& old_node) {
  std::vector<ActionType> actions;
  if (new_node.spec.unschedulable != old_node.spec.unschedulable && !new_node.spec.unschedulable) {
    actions.push_back(action::kUpdateNodeTaint);
  }
  if (!SameResources(new_node.status.allocatable, old_node.status.allocatable)) {
    actions.push_back(action::kUpdateNodeAllocatable);
  }
  if (!(new_node.metadata.labels == old_node.metadata.labels)) actions.push_back(action::kUpdateNodeLabel);
  if (new_node.spec.taints != old_node.spec.taints) actions.push_back(action::kUpdateNodeTaint);
  if (ConditionStatuses(new_node) != ConditionStatuses(old_node)) actions.push_back(action::kUpdateNodeCondition);
  if (!(new_node.metadata.annotations == old_node.metadata.annotations)) {
    actions.push_back(action::kUpdateNodeAnnotation);
  }
  std::vector<ClusterEvent> events;
  for (ActionType a : actions) events.push_back({EventResource::kNode, a, "Node" + NodeActionLabel(a)});
  return events;
}

}  // namespace kubesched::queue
