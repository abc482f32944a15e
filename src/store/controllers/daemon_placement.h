#pragma once
// Where a DaemonSet's pods belong (upstream's NodeShouldRunDaemonPod) and how a daemon pod is
// marked for its node (util.AddOrUpdateDaemonPodTolerations and
// ReplaceDaemonSetPodNodeNameNodeAffinity), read from the template's JSON so that every field the
// template has is kept in the pods made from it.

#include <string>
#include <vector>

#include "api/json.h"
#include "store/controllers/node_informer.h"
#include "store/selectors.h"

namespace kubesched::store::controllers {

//! What decides a daemon pod's nodes, parsed once per template.
struct DaemonPlacement {
  struct Requirement {
    std::string key;
    std::string op;  //!< In, NotIn, Exists, DoesNotExist, Gt, Lt
    std::vector<std::string> values;
  };
  struct Term {
    std::vector<Requirement> expressions;  //!< on the node's labels
    std::vector<Requirement> fields;       //!< on metadata.name
  };
  struct Toleration {
    std::string key;
    std::string op;  //!< "Exists" or "Equal" ("" is Equal)
    std::string value;
    std::string effect;  //!< "" tolerates every effect
  };
  std::string node_name;     //!< spec.nodeName
  LabelPairs node_selector;  //!< sorted
  bool has_required_affinity = false;
  std::vector<Term> required_terms;  //!< ORed
  //! The template's tolerations plus those the DaemonSet controller adds to every daemon pod.
  std::vector<Toleration> tolerations;
};

DaemonPlacement ParseDaemonPlacement(const api::json::Value& pod_template);

struct DaemonVerdict {
  bool should_run = false;       //!< a daemon pod should be created here
  bool should_continue = false;  //!< a daemon pod already here may stay
};

//! NodeShouldRunDaemonPod: nodeName, node selector and required node affinity must match, and
//! every NoSchedule and NoExecute taint be tolerated to run; a pod already there may stay unless a
//! NoExecute taint is not tolerated.
DaemonVerdict EvaluateDaemonPlacement(const DaemonPlacement& placement, const NodeFacts& node);

//! Adds the tolerations of every daemon pod (not-ready and unreachable NoExecute; disk-, memory-,
//! pid-pressure and unschedulable NoSchedule; network-unavailable NoSchedule with hostNetwork)
//! that `spec` does not have.
void AddDaemonTolerations(api::json::Value& spec, api::json::Allocator& a);

//! Makes the required node affinity exactly one term, matchFields metadata.name In [node] (the
//! preferred terms and pod (anti-)affinity stay).
void PinToNode(api::json::Value& spec, std::string_view node, api::json::Allocator& a);

}  // namespace kubesched::store::controllers
