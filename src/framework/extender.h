#pragma once
// Extender: an external service the scheduler consults around its plugins (upstream's
// framework.Extender): Filter after the Filter plugins, Prioritize added to the Score plugins'
// totals, ProcessPreemption on the victims preemption chose, Bind instead of the Bind plugins.
// kubesched's implementation calls an HTTP extender as upstream's HTTPExtender does
// (src/extender/http_extender.h); the scheduler and preemption see only this interface.
//
// Errors are values: a transport failure, a non-200 answer or an Error in the result comes back
// as the error string, and the caller decides (fatal unless IsIgnorable, as upstream).

#include <cstdint>
#include <expected>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "api/types.h"
#include "framework/listers.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"

namespace kubesched::framework {

//! upstream's extenderv1.MaxExtenderPriority: extenders score nodes 0..10; the scheduler scales
//! them by weight × (MaxNodeScore / MaxExtenderPriority).
inline constexpr int64_t kMaxExtenderPriority = 10;

//! The name under which a pod rejected by an extender records its rejector (upstream's
//! framework.ExtenderName). Extenders register no events: such a pod is retried on any event.
inline constexpr std::string_view kExtenderName = "Extender";

//! Node name → why the extender rejected it (upstream's FailedNodesMap).
using FailedNodesMap = std::map<std::string, std::string, std::less<>>;

struct ExtenderFilterResult {
  //! The nodes that passed, a subset of the ones given (the same pointers), in the extender's order.
  std::vector<const NodeInfo*> feasible;
  FailedNodesMap failed;
  //! Nodes preemption cannot help either (UnschedulableAndUnresolvable).
  FailedNodesMap failed_and_unresolvable;
};

struct HostPriority {
  std::string host;
  int64_t score = 0;  //!< 0..kMaxExtenderPriority
  bool operator==(const HostPriority&) const = default;
};

struct ExtenderPrioritizeResult {
  std::vector<HostPriority> priorities;
  int64_t weight = 0;  //!< the extender's weight (0 when it has no prioritize verb)
};

//! The pods to evict on one node, most important first (upstream's extenderv1.Victims), and how
//! many PodDisruptionBudgets evicting them violates.
struct NodeVictims {
  std::vector<PodInfoPtr> pods;
  int64_t num_pdb_violations = 0;
};

//! Node name → its victims.
using NodeToVictims = std::map<std::string, NodeVictims, std::less<>>;

class Extender {
 public:
  virtual ~Extender() = default;
  //! Identifies the extender in logs and score breakdowns (its URL prefix).
  virtual const std::string& Name() const = 0;
  //! Errors from it are skipped instead of failing the pod's cycle.
  virtual bool IsIgnorable() const = 0;
  //! It has a bind verb: it binds the pods it is interested in.
  virtual bool IsBinder() const = 0;
  //! It has a preempt verb.
  virtual bool SupportsPreemption() const = 0;
  //! Whether the pod is for it: always, unless it manages resources and the pod requests or
  //! limits none of them (in its containers or init containers).
  virtual bool IsInterested(const api::Pod& pod) const = 0;
  //! The nodes among `nodes` that pass the extender's filter (all of them without a filter verb).
  virtual std::expected<ExtenderFilterResult, std::string> Filter(const api::Pod& pod,
                                                                  std::span<const NodeInfo* const> nodes) = 0;
  //! Its scores for `nodes` (all 0 with weight 0 without a prioritize verb).
  virtual std::expected<ExtenderPrioritizeResult, std::string> Prioritize(const api::Pod& pod,
                                                                          std::span<const NodeInfo* const> nodes) = 0;
  //! The candidates preemption chose, as the extender accepts or changes them: a subset of the
  //! nodes, each with victims among the pods `nodes` has on it. Not called without a preempt verb.
  virtual std::expected<NodeToVictims, std::string> ProcessPreemption(const api::Pod& pod,
                                                                      const NodeToVictims& candidates,
                                                                      const NodeInfoLister& nodes) = 0;
  //! Binds the pod to the node. Not called without a bind verb.
  virtual std::expected<void, std::string> Bind(const api::Pod& pod, const std::string& node_name) = 0;
};

}  // namespace kubesched::framework
