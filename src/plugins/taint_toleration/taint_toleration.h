#pragma once
// TaintToleration: a pod may run only on nodes whose NoSchedule/NoExecute taints it tolerates, and
// prefers nodes with fewer untolerated PreferNoSchedule taints (upstream's tainttoleration).

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

namespace kubesched::plugins::taint_toleration {

//! Current upstream's Filter reason (it no longer names the taint).
inline constexpr std::string_view kErrReasonNotMatch = "node(s) had untolerated taint(s)";

class TaintToleration final : public framework::FilterPlugin,
                              public framework::PreScorePlugin,
                              public framework::ScorePlugin,
                              public framework::ScoreExtensions,
                              public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "TaintToleration";

  std::string_view Name() const override { return kName; }
  //! UnschedulableAndUnresolvable kErrReasonNotMatch when a NoSchedule or NoExecute taint of the
  //! node is not tolerated.
  bool FilterIsNodeLocal() const override { return true; }
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Keeps the tolerations that can tolerate PreferNoSchedule taints (effect empty or
  //! PreferNoSchedule). Always Success.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;
  //! The number of the node's PreferNoSchedule taints the pod does not tolerate (higher is worse).
  //! Error when PreScore did not run.
  bool ScoreIsNodeLocal() const override { return true; }
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  //! Reversed DefaultNormalizeScore: no untolerated taint scores 100.
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   framework::NodeScoreList& scores) override;
  //! Node add / taint update (queued when an untolerated node becomes tolerated) and the pod's own
  //! toleration update (always queued).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterPodTolerationChange(const api::Pod& pod,
                                                              const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::taint_toleration
