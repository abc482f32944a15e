#pragma once
// NodeDeclaredFeatures: a pod that needs a node feature (inferred from its spec by the feature
// registry) runs only on nodes that declare it in status.declaredFeatures (upstream's
// nodedeclaredfeatures plugin, KEP-5328; GA in 1.37, so always on).

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
#include "plugins/node_declared_features/feature_registry.h"

namespace kubesched::plugins::node_declared_features {

inline constexpr std::string_view kErrReasonUnsatisfiedRequirements = "node(s) didn't match Pod's required features";

class NodeDeclaredFeatures final : public framework::PreFilterPlugin,
                                   public framework::FilterPlugin,
                                   public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeDeclaredFeatures";

  //! Infers with `registry` (which outlives the plugin) for a scheduler of version `version`.
  explicit NodeDeclaredFeatures(std::span<const Feature> registry = AllFeatures(), Version version = kRegistryVersion)
      : registry_(registry), version_(version) {}

  std::string_view Name() const override { return kName; }
  //! The features the pod requires (InferForPodScheduling), kept for Filter. Skip when it requires
  //! none: Filter then does not run. Never rejects.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! UnschedulableAndUnresolvable kErrReasonUnsatisfiedRequirements when the node does not declare
  //! every required feature (preemption cannot add one); Error when PreFilter did not run. Not
  //! node-local: the requirements come from fields of the pod's JSON that the equivalence cache's
  //! pod class does not encode.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Node additions and updates (queued when the declared features changed) and updates of the pod
  //! itself (queued when its requirements changed).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  std::span<const Feature> registry_;
  Version version_;
};

//! Upstream's isSchedulableAfterNodeChange: queue for a new node, or one whose declared features
//! changed.
framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event);
//! Upstream's isSchedulableAfterTargetPodUpdate: queue when an update of `pod` itself changed the
//! features it requires (with `registry` at `version`).
framework::QueueingHint IsSchedulableAfterPodUpdate(std::span<const Feature> registry, Version version,
                                                    const api::Pod& pod, const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_declared_features
