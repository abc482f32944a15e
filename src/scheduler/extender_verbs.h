#pragma once
// What the scheduler answers when it serves as an upstream kube-scheduler's extender (`kubesched
// extender`): a pod evaluated by one profile's plugins on the nodes a request names, outside any
// scheduling cycle. Kept apart from the wire format (src/extender/wire.h) so that the scheduler
// knows nothing of HTTP or JSON.

#include <string>
#include <string_view>
#include <vector>

#include "framework/extender.h"

namespace kubesched::scheduler {

//! The Filter verb's verdict, node names in the request's order.
struct ExtenderFilterVerdict {
  std::vector<std::string> passed;
  //! Rejected (Unschedulable, or unknown to the extender): preemption may still help.
  framework::FailedNodesMap failed;
  //! Rejected as UnschedulableAndUnresolvable.
  framework::FailedNodesMap failed_and_unresolvable;
};

//! The reason given for a node the request names that the extender's view does not have (a
//! node-cache-capable request naming a node the extender has not seen).
std::string UnknownNodeReason(std::string_view node_name);

}  // namespace kubesched::scheduler
