#pragma once
// NodeResourcesFit: filters out nodes without room for the pod's requests (pod count, cpu,
// memory, ephemeral storage, extended resources and hugepages) and scores the rest with a
// resource-allocation strategy (LeastAllocated by default, MostAllocated,
// RequestedToCapacityRatio), as upstream's noderesources.Fit.

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
#include "framework/resource.h"
#include "plugins/node_resources_fit/args.h"
#include "plugins/node_resources_fit/resource_allocation.h"

namespace kubesched::plugins::node_resources_fit {

//! One resource the node lacks for the pod (upstream's InsufficientResource).
struct InsufficientResource {
  std::string resource_name;
  std::string reason;  //!< "Too many pods", "Insufficient cpu", "Insufficient <name>", ...
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
  //! The request exceeds the node's allocatable outright: no preemption on this node can help.
  bool unresolvable = false;
  bool operator==(const InsufficientResource&) const = default;
};

//! The pod request with the scalar resources Filter ignores removed: extended resources named in
//! ignored_resources or whose group (the part before '/') is in ignored_resource_groups, and
//! zero-quantity entries (which can never be insufficient).
framework::Resource PruneIgnoredResources(framework::Resource request, std::span<const std::string> ignored_resources,
                                          std::span<const std::string> ignored_resource_groups);

//! Every resource `node` lacks for `request` (already pruned), in upstream's order: pods, cpu,
//! memory, ephemeral-storage, then scalar resources by name. Allocates; Filter uses an
//! allocation-free path with the same logic.
std::vector<InsufficientResource> FitsRequest(const framework::Resource& request, const framework::NodeInfo& node);

//! Queueing hint for pod deletions and scale-downs (upstream's isSchedulableAfterPodEvent, with
//! InPlacePodVerticalScaling enabled): Queue when a pod bound or nominated to a node is deleted,
//! when the rejected pod itself is scaled down, or when a scheduled pod lowers a request the
//! rejected pod also makes.
framework::QueueingHint IsSchedulableAfterPodEvent(const api::Pod& pod, const framework::EventObjects& event);

//! Queueing hint for node additions and allocatable updates (upstream's
//! isSchedulableAfterNodeChange): Queue when the pod fits the (empty) new node and, for an update,
//! some resource the pod requests (or the pod count) grew.
framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event);

class Fit final : public framework::PreFilterPlugin,
                  public framework::FilterPlugin,
                  public framework::EnqueueExtensions,
                  public framework::PreScorePlugin,
                  public framework::ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";

  //! `args` must be valid (ParseNodeResourcesFitArgs).
  explicit Fit(NodeResourcesFitArgs args);

  std::string_view Name() const override { return kName; }

  //! Stores the pod's request (without ignored resources) for Filter. Never rejects: sidecar
  //! containers are always supported.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;

  //! Unschedulable with one reason per insufficient resource; UnschedulableAndUnresolvable when
  //! any request exceeds the node's allocatable outright. Error when PreFilter did not run.
  bool FilterIsNodeLocal() const override { return true; }
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;

  //! Pod Delete|UpdatePodScaleDown and Node Add|UpdateNodeAllocatable, with the hints above.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  //! Stores the pod's request for each scoring resource. Never skips.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;

  //! The strategy's score in [0, 100] (computes the pod's requests itself when PreScore did not
  //! run).
  bool ScoreIsNodeLocal() const override { return true; }
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;

  const NodeResourcesFitArgs& args() const { return args_; }

 private:
  NodeResourcesFitArgs args_;
  ResourceAllocationScorer scorer_;
};

//! Factory: reads, defaults and validates NodeResourcesFitArgs, then builds the plugin.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_resources_fit
