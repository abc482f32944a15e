#pragma once
// Bookkeeping of pods nominated to nodes by preemption (upstream's nominator in
// pkg/scheduler/backend/queue/nominator.go). Not synchronized: the SchedulingQueue owns one and
// guards it with its own mutex, so that queue moves and nominations stay consistent.

#include <functional>
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

  //! Holds `node_name` for a pod that does not exist yet (the replacement a controller creates for
  //! a moved pod): `placeholder` is planned there until the first pod offered to Claim for which
  //! `is_replacement` holds; that pod then takes over the hold. Deleting the placeholder drops the
  //! expectation, claimed or not.
  void Expect(framework::PodInfoPtr placeholder, const std::string& node_name,
              std::function<bool(const framework::PodInfo&)> is_replacement);
  //! When `pod` (a pod entering the queue, not bound) is the replacement an unclaimed expectation
  //! waits for, the placeholder's hold becomes the pod's (planned on the node) and true.
  bool Claim(const framework::PodInfoPtr& pod);
  //! The pod that took over the placeholder with this key (PodKey), or null.
  framework::PodInfoPtr ClaimantOf(const std::string& placeholder_key) const;
  size_t expected_size() const { return expectations_.size(); }
  size_t planned_size() const { return planned_.size(); }
  size_t size() const { return node_of_.size(); }

 private:
  // node name → nominated pods, in nomination order.
  std::map<std::string, std::vector<framework::PodInfoPtr>, std::less<>> pods_;
  // pod key → node name.
  std::unordered_map<std::string, std::string> node_of_;
  // Keys of pods whose nomination is a plan.
  std::unordered_set<std::string> planned_;
  struct Expectation {
    framework::PodInfoPtr placeholder;
    std::string node;
    std::function<bool(const framework::PodInfo&)> is_replacement;
    framework::PodInfoPtr claimant;  // null until claimed
  };
  // Placeholder key → what it waits for, in the order the plans were made (the oldest claims first).
  std::vector<std::pair<std::string, Expectation>> expectations_;
};

}  // namespace kubesched::queue
