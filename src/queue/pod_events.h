#pragma once
// Which cluster events an object update amounts to, as upstream's PodSchedulingPropertiesChange
// and NodeSchedulingPropertiesChange (pkg/scheduler/framework/events.go). The queue uses the pod
// variant for updates of pending pods; the event handlers use both to feed
// SchedulingQueue::MoveAllToActiveOrBackoffQueue.

#include <vector>

#include "api/types.h"
#include "framework/events.h"

namespace kubesched::queue {

//! The events an update of a pod produces: one per changed scheduling property (labels, a request
//! scaled down or removed, all scheduling gates removed, tolerations added), on AssignedPod when
//! new_pod is bound and UnscheduledPod otherwise. When none of those changed, a single
//! kUpdatePodOther event, which only wakes plugins that registered a general pod Update.
std::vector<framework::ClusterEvent> PodSchedulingPropertiesChange(const api::Pod& new_pod, const api::Pod& old_pod);

//! The events an update of a node produces: spec.unschedulable turned off (reported as a taint
//! update, as upstream), allocatable, labels, taints, condition statuses, annotations. Empty when
//! nothing the scheduler looks at changed.
std::vector<framework::ClusterEvent> NodeSchedulingPropertiesChange(const api::Node& new_node,
                                                                    const api::Node& old_node);

}  // namespace kubesched::queue
