#pragma once
// NodeAffinity: a pod runs only on nodes matching its spec.nodeSelector and required node
// affinity (and the profile's scheduler-enforced addedAffinity), and prefers nodes matching its
// preferred terms (upstream's nodeaffinity plugin).

#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "plugins/node_affinity/args.h"
#include "plugins/node_affinity/node_selector.h"

namespace kubesched::plugins::node_affinity {

//! The pod's nodeSelector / required affinity rejects the node.
inline constexpr std::string_view kErrReasonPod = "node(s) didn't match Pod's node affinity/selector";
//! The profile's addedAffinity rejects the node.
inline constexpr std::string_view kErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity";
//! Every required term names nodes through matchFields and no name satisfies all of a term.
inline constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

class NodeAffinity final : public framework::PreFilterPlugin,
                           public framework::FilterPlugin,
                           public framework::PreScorePlugin,
                           public framework::ScorePlugin,
                           public framework::ScoreExtensions,
                           public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeAffinity";

  //! args must be valid (ParseArgs); the plugin keeps them and matches against them in place.
  explicit NodeAffinity(NodeAffinityArgs args);
  NodeAffinity(const NodeAffinity&) = delete;
  NodeAffinity& operator=(const NodeAffinity&) = delete;

  std::string_view Name() const override { return kName; }

  //! Skip when the pod has no nodeSelector and no required node affinity and the profile adds
  //! none. Otherwise stores the parsed requirements; when every required term selects nodes by
  //! matchFields metadata.name In, restricts the cycle to the union of those names
  //! (UnschedulableAndUnresolvable kErrReasonConflict when that union is empty).
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! UnschedulableAndUnresolvable kErrReasonEnforced or kErrReasonPod. Works without PreFilter
  //! (recomputes). Terms that fail validation never match.
  bool FilterIsNodeLocal() const override { return true; }
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! Skip when neither the pod nor the profile has preferred terms; Error when a pod term is
  //! invalid (as upstream).
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;
  //! Sum of the weights of the matching preferred terms (pod's and profile's).
  bool ScoreIsNodeLocal() const override { return true; }
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  //! DefaultNormalizeScore: the best node scores 100, the others proportionally.
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   framework::NodeScoreList& scores) override;
  //! Node add / label update; the hint queues when the node newly satisfies the added affinity and
  //! the pod's required affinity.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  //! The queueing hint for node events (exposed for tests).
  framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event) const;

 private:
  NodeAffinityArgs args_;
  std::optional<NodeSelectorMatcher> added_node_selector_;
  std::optional<PreferredSchedulingTerms> added_preferred_;
};

//! Parses and validates NodeAffinityArgs, then builds the plugin.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::node_affinity
