#pragma once
// GangScheduling: all or nothing for a gang PodGroup (scheduling.k8s.io, upstream's
// gangscheduling plugin of the 1.36 API). A member waits before the queue until its PodGroup
// exists and minCount members exist (PreEnqueue); a member that passes Reserve waits at Permit
// until minCount members are reserved or bound, and then all of them go to binding together; a
// wait longer than five minutes gives the member back (Unreserve), so a gang that cannot
// complete holds nothing for longer. Pods of a basic PodGroup, and pods of none, pass.

#include <chrono>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::gang_scheduling {

//! How long a reserved member waits at Permit for the rest of its gang (upstream's
//! permitTimeoutDuration).
inline constexpr std::chrono::nanoseconds kPermitTimeout = std::chrono::minutes(5);

class GangScheduling final : public framework::PreEnqueuePlugin,
                             public framework::ReservePlugin,
                             public framework::PermitPlugin,
                             public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "GangScheduling";

  explicit GangScheduling(framework::Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  //! UnschedulableAndUnresolvable while the pod's PodGroup is unknown
  //! ("waiting for pods's pod group \"pg\" to appear in scheduling queue") or a gang has fewer
  //! than minCount members ("waiting for minCount pods from a gang to appear in scheduling queue").
  framework::Status PreEnqueue(const api::Pod& pod) override;
  //! Counts the member as assumed (Unreserve: no longer).
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod, const std::string& node_name) override;
  //! Wait (up to kPermitTimeout) while fewer than minCount members are assumed or bound, after
  //! activating the unscheduled ones; once minCount are, allows every waiting member.
  std::pair<framework::Status, std::chrono::nanoseconds> Permit(framework::CycleState& state,
                                                                const framework::PodInfo& pod,
                                                                const std::string& node_name) override;
  //! A member added (to the queue or a node) and the PodGroup added.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  framework::Handle& handle_;
};

//! Queue when the added pod is in the same group as `pod`.
framework::QueueingHint IsSchedulableAfterPodAdded(const api::Pod& pod, const framework::EventObjects& event);
//! Queue when the added PodGroup is `pod`'s.
framework::QueueingHint IsSchedulableAfterPodGroupAdded(const api::Pod& pod, const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::gang_scheduling
