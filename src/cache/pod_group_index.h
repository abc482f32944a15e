#pragma once
// PodGroupIndex: the scheduler's record of PodGroups and their members (framework::PodGroupTracker),
// fed by its informer callbacks as upstream's workload manager is: a pod that names a group
// (spec.schedulingGroup.podGroupName) is a member from the moment it is seen, assigned once it has
// a node, assumed between a Reserve and its bind or Unreserve. Groups and members are indexed by
// "namespace/name"; counts are kept as members change, so PreEnqueue and Permit read them in O(1).
// One index per PodGroup API (api::PodGroupApi): a scheduler-plugins PodGroup's members carry a
// label, which may change and so move a pod from one group to another.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "framework/pod_groups.h"

namespace kubesched::cache {

class PodGroupIndex final : public framework::PodGroupTracker {
 public:
  //! Groups of `api`, and members as api::PodGroupOf(pod, api) names them.
  explicit PodGroupIndex(api::PodGroupApi api = api::PodGroupApi::kScheduling) : api_(api) {}

  //! A PodGroup was added or changed.
  void SetGroup(std::shared_ptr<const api::PodGroup> group);
  void DeleteGroup(const api::PodGroup& group);
  //! A pod was added or changed (a pod that names no group is ignored); its state follows its
  //! spec.nodeName, and a bound pod is no longer assumed.
  void SetPod(std::shared_ptr<const api::Pod> pod);
  void DeletePod(const api::Pod& pod);

  std::shared_ptr<const api::PodGroup> Group(std::string_view namespace_, std::string_view name) const override;
  framework::PodGroupMembers Members(std::string_view namespace_, std::string_view name) const override;
  std::vector<std::shared_ptr<const api::Pod>> UnscheduledMembers(std::string_view namespace_,
                                                                  std::string_view name) const override;
  void Assume(const api::Pod& pod) override;
  void Forget(const api::Pod& pod) override;

 private:
  struct Member {
    std::shared_ptr<const api::Pod> pod;
    uint64_t order = 0;  // when first seen
    bool assumed = false;
  };
  struct Entry {
    std::shared_ptr<const api::PodGroup> group;       // null until the object is seen
    std::unordered_map<std::string, Member> members;  // by pod uid
    framework::PodGroupMembers counts;
  };
  static std::string KeyOf(std::string_view namespace_, std::string_view name);
  // Removes the member `uid` from the group `key` (under mu_).
  void RemoveMemberLocked(const std::string& key, const std::string& uid);
  // Adds or removes `m`'s contribution to the counts.
  static void Count(Entry& e, const Member& m, int sign);
  // Drops the entry once it has neither a group object nor members.
  void EraseIfEmpty(const std::string& key);

  const api::PodGroupApi api_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> groups_;
  std::unordered_map<std::string, std::string> group_of_;  // member uid -> group key
  uint64_t next_order_ = 0;
};

}  // namespace kubesched::cache
