#pragma once
// Bookkeeping of pods nominated to nodes by preemption (upstream's nominator in
// pkg/scheduler/backend/queue/nominator.go). Not synchronized: the SchedulingQueue owns one and
// guards it with its own mutex, so that queue moves and nominations stay consistent.

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/types.h"
#include "framework/pod_info.h"

namespace kubesched::queue {

//! The key the queue and the nominator know a pod by: its uid, or "namespace/name" when it has
//! none (hand-written manifests).
std::string PodKey(const api::Pod& pod);

class Nominator {
 public:
  //! Nominates the pod to `node_name` when given (an empty string clears the nomination), else
  //! to its status.nominatedNodeName. Any earlier nomination of the pod is dropped first. A pod
  //! already bound (spec.nodeName set) is not nominated.
  //! `planned`: the nomination is a batch placement's plan (PodNominator::AddPlannedPod). A plan
  //! survives an Add without a node while the pod's status names no node (the pod entering
  //! activeQ re-registers its status' nomination).
  void Add(framework::PodInfoPtr pod, const std::optional<std::string>& node_name, bool planned = false);
  //! Follows a pod update. When neither version carries a nominatedNodeName but the pod is
  //! nominated in memory (preemption nominated it and the status update has not arrived yet),
  //! the in-memory nomination is kept; otherwise the new version's nomination applies.
  void Update(const api::Pod& old_pod, framework::PodInfoPtr new_pod);
  void Delete(const api::Pod& pod);
  std::vector<framework::PodInfoPtr> ForNode(const std::string& node_name) const;
  //! The node the pod with this key (PodKey) is nominated to, or nullptr.
  const std::string* NodeOf(const std::string& key) const;
  bool IsPlanned(const std::string& key) const { return planned_.contains(key); }
  size_t planned_size() const { return planned_.size(); }
  size_t size() const { return node_of_.size(); }

 private:
  // node name → nominated pods, in nomination order.
  std::map<std::string, std::vector<framework::PodInfoPtr>, std::less<>> pods_;
  // pod key → node name.
  std::unordered_map<std::string, std::string> node_of_;
  // Keys of pods whose nomination is a plan.
  std::unordered_set<std::string> planned_;
};

}  // namespace kubesched::queue
