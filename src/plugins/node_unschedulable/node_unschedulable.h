#pragma once
// NodeUnschedulable: keeps pods off cordoned nodes (spec.unschedulable) unless they tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint (upstream's nodeunschedulable plugin).

#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::node_unschedulable {

inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";

class NodeUnschedulable final : public framework::FilterPlugin, public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";

  std::string_view Name() const override { return kName; }
  //! UnschedulableAndUnresolvable kErrReasonUnschedulable on a cordoned node the pod does not
  //! tolerate; Success otherwise.
  bool FilterIsNodeLocal() const override { return true; }
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Node add / taint update (queued when a schedulable node appears or a node is uncordoned) and
  //! the pod's own toleration update (queued when it gains the unschedulable toleration).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterPodTolerationChange(const api::Pod& pod,
                                                              const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_unschedulable
