#pragma once
// Where a DaemonSet's pods belong (upstream's NodeShouldRunDaemonPod) and how a daemon pod is
// marked for its node (util.AddOrUpdateDaemonPodTolerations and
// ReplaceDaemonSetPodNodeNameNodeAffinity), read from the template's JSON so that every field the
// template has is kept in the pods made from it.

#include <string>
#include <vector>

#include "api/json.h"
#include "api/workloads.h"
#include "store/controllers/node_informer.h"
#include "store/selectors.h"

namespace kubesched::store::controllers {

//! What decides a daemon pod's nodes, parsed once per template from its JSON; evaluated by the
//! same api::EvaluateDaemonPod the loader uses. Requirements with an operator or a field key the
//! API does not define make their term match nothing, as upstream's nodeaffinity does with a term
//! it cannot convert; tolerations with an unknown operator or effect tolerate nothing.
using DaemonPlacement = api::DaemonPodPlacement;
using DaemonVerdict = api::DaemonPodVerdict;

DaemonPlacement ParseDaemonPlacement(const api::json::Value& pod_template);

//! api::EvaluateDaemonPod against a node the informer holds.
inline DaemonVerdict EvaluateDaemonPlacement(const DaemonPlacement& placement, const NodeFacts& node) {
  return api::EvaluateDaemonPod(placement, node.name(), node.labels(), node.taints);
}

//! Adds the tolerations of every daemon pod (not-ready and unreachable NoExecute; disk-, memory-,
//! pid-pressure and unschedulable NoSchedule; network-unavailable NoSchedule with hostNetwork)
//! that `spec` does not have.
void AddDaemonTolerations(api::json::Value& spec, api::json::Allocator& a);

//! Makes the required node affinity exactly one term, matchFields metadata.name In [node] (the
//! preferred terms and pod (anti-)affinity stay).
void PinToNode(api::json::Value& spec, std::string_view node, api::json::Allocator& a);

}  // namespace kubesched::store::controllers
