#pragma once
// NodePorts: a pod's host ports must be free on the node (upstream's nodeports plugin).

#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::node_ports {

inline constexpr std::string_view kErrReason = "node(s) didn't have free ports for the requested pod ports";

class NodePorts final : public framework::PreFilterPlugin,
                        public framework::FilterPlugin,
                        public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodePorts";

  std::string_view Name() const override { return kName; }
  //! Collects the pod's host ports (containers and restartable init containers); Skip when it has
  //! none.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! Unschedulable kErrReason when any wanted host port conflicts with one in use on the node
  //! (preemption can free it). Error when PreFilter did not run.
  bool FilterIsNodeLocal() const override { return true; }
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Pod deletions (queued when the deleted, placed pod released a port the pod wants) and node
  //! additions.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

//! The host ports a pod occupies: ports with hostPort > 0 of restartable init containers and of
//! containers (upstream's util.GetHostPorts).
std::vector<api::ContainerPort> GetHostPorts(const api::Pod& pod);

framework::QueueingHint IsSchedulableAfterPodDeleted(const api::Pod& pod, const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_ports
