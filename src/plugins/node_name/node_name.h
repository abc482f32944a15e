#pragma once
// NodeName: a pod that names its node (spec.nodeName) fits only that node (upstream's nodename
// plugin). PreFilter restricts the cycle to the named node.

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

namespace kubesched::plugins::node_name {

inline constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

class NodeName final : public framework::PreFilterPlugin,
                       public framework::FilterPlugin,
                       public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeName";

  std::string_view Name() const override { return kName; }
  //! With spec.nodeName set, restricts the cycle to that node; otherwise all nodes. Never rejects.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! UnschedulableAndUnresolvable kErrReason when the pod names another node.
  bool FilterIsNodeLocal() const override { return true; }
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Node additions; the hint queues only when the added node is the one the pod names.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

//! Whether the pod may run on a node named node_name (true when the pod names no node).
bool Fits(const api::Pod& pod, std::string_view node_name);

framework::QueueingHint IsSchedulableAfterNodeAdd(const api::Pod& pod, const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_name
