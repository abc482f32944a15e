#pragma once
// PodInfo: a pod with what the scheduler derives from it once (requests, parsed affinity terms),
// shared read-only between the queue, the cache and the plugins.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "framework/interner.h"
#include "framework/resource.h"

namespace kubesched::framework {

//! A pod (anti-)affinity term prepared for matching: the namespaces it applies to resolved
//! (the pod's own namespace when none are listed and there is no namespaceSelector), and
//! matchLabelKeys / mismatchLabelKeys merged into the selector as the API server does.
struct AffinityTerm {
  std::vector<std::string> namespaces;  // sorted
  api::LabelSelector selector;
  bool selector_matches_nothing = false;  // labelSelector was absent
  std::optional<api::LabelSelector> namespace_selector;
  std::string topology_key;
  //! Equal for terms with equal content (StringInterner::AffinityTerms), set by PodInfo::Create.
  //! Only for terms as parsed: a term whose namespaces are changed later must not be memoized by it.
  InternedId id;

  //! Whether `pod` (whose namespace has labels `namespace_labels`) matches this term.
  bool Matches(const api::Pod& pod, const api::Labels* namespace_labels) const;
};

struct WeightedAffinityTerm {
  AffinityTerm term;
  int32_t weight = 0;
};

class PodInfo;
using PodInfoPtr = std::shared_ptr<const PodInfo>;

class PodInfo {
 public:
  //! Derives everything from the pod. Never fails: unparsable parts were rejected at load.
  static PodInfoPtr Create(std::shared_ptr<const api::Pod> pod);
  //! The same derived data for a changed copy of the pod whose spec affecting requests and
  //! affinity is unchanged (e.g. the assumed pod with spec.nodeName set).
  PodInfoPtr WithPod(std::shared_ptr<const api::Pod> pod) const;

  const api::Pod& pod() const { return *pod_; }
  const std::shared_ptr<const api::Pod>& pod_ptr() const { return pod_; }

  //! Equal for pods with the same namespace and labels (StringInterner::PodLabelSets): a term's
  //! match against a pod depends on nothing else, so matches can be memoized per cycle by it.
  InternedId label_set_id;

  //! Effective request (ComputePodRequests).
  Resource requests;
  //! cpu and memory with kDefault*Request for containers that set none (scoring and
  //! NodeInfo.NonZeroRequested).
  int64_t non_zero_milli_cpu = 0;
  int64_t non_zero_memory = 0;

  std::vector<AffinityTerm> required_affinity_terms;
  std::vector<AffinityTerm> required_anti_affinity_terms;
  std::vector<WeightedAffinityTerm> preferred_affinity_terms;
  std::vector<WeightedAffinityTerm> preferred_anti_affinity_terms;

  bool HasAffinity() const {
    return !required_affinity_terms.empty() || !required_anti_affinity_terms.empty() ||
           !preferred_affinity_terms.empty() || !preferred_anti_affinity_terms.empty();
  }
  bool HasRequiredAntiAffinity() const { return !required_anti_affinity_terms.empty(); }

 private:
  std::shared_ptr<const api::Pod> pod_;
};

//! A pod in the scheduling queue, with its queueing history.
struct QueuedPodInfo {
  PodInfoPtr pod_info;
  //! When the pod was last added to the queue (for QueueSort ties and timeouts).
  int64_t timestamp_ns = 0;
  //! When the pod first entered the queue.
  int64_t initial_attempt_timestamp_ns = 0;
  //! Scheduling attempts so far (drives backoff).
  int attempts = 0;
  //! Plugins that rejected the pod in its last attempt; only their registered events requeue it.
  std::vector<std::string> unschedulable_plugins;
  //! Plugins that returned Pending in its last attempt.
  std::vector<std::string> pending_plugins;
  //! Blocked by a PreEnqueue plugin (e.g. scheduling gates); sits in the unschedulable pool.
  bool gated = false;
  //! Plugin that gated the pod, and the message its PreEnqueue returned.
  std::string gating_plugin;
  std::string gating_message;

  const api::Pod& pod() const { return pod_info->pod(); }
};

}  // namespace kubesched::framework
