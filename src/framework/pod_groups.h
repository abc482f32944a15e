#pragma once
// What the scheduler knows of PodGroups (scheduling.k8s.io) and their member pods, as upstream's
// workload manager keeps it for the GangScheduling plugin: the group objects it has seen, and each
// group's pods by state (unscheduled, assumed by a Reserve, assigned to a node). The scheduler
// feeds it from its informers; plugins read it through Handle::PodGroups(api).

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "api/types.h"

namespace kubesched::framework {

//! How many of a group's members are in each state. A pod counts once, in its latest state.
struct PodGroupMembers {
  size_t all = 0;       //!< every pod naming the group, in any state
  size_t assumed = 0;   //!< reserved in a scheduling cycle, not yet bound
  size_t assigned = 0;  //!< bound to a node (spec.nodeName set)

  //! Assumed or assigned: the members that count toward a gang's minCount at Permit.
  size_t Scheduled() const { return assumed + assigned; }
};

class PodGroupTracker {
 public:
  virtual ~PodGroupTracker() = default;
  //! The PodGroup `name` in `namespace_`, or null when the scheduler has not seen it.
  virtual std::shared_ptr<const api::PodGroup> Group(std::string_view namespace_, std::string_view name) const = 0;
  //! The pods that name the group (spec.schedulingGroup.podGroupName) in that namespace.
  virtual PodGroupMembers Members(std::string_view namespace_, std::string_view name) const = 0;
  //! The members neither assumed nor assigned (what an activation moves to the active queue), in
  //! the order they were added.
  virtual std::vector<std::shared_ptr<const api::Pod>> UnscheduledMembers(std::string_view namespace_,
                                                                          std::string_view name) const = 0;
  //! A member passed Reserve (upstream's AssumePod) / was unreserved (ForgetPod).
  virtual void Assume(const api::Pod& pod) = 0;
  virtual void Forget(const api::Pod& pod) = 0;
};

}  // namespace kubesched::framework
