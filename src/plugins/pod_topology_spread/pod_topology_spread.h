#pragma once
// PodTopologySpread: spreads pods matching a selector evenly over topology domains (zones,
// hostnames, ...), as upstream's podtopologyspread plugin. DoNotSchedule constraints filter
// (PreFilter counts matching pods per domain once per cycle; Filter checks the skew with one
// lookup per constraint); ScheduleAnyway constraints score. Pods without constraints of their own
// get the cluster-level default constraints, with the selector of their controlling workload.

#include <array>
#include <climits>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "plugins/pod_topology_spread/args.h"

namespace kubesched::plugins::pod_topology_spread {

inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

//! A spreading constraint prepared for matching: selector parsed (matchLabelKeys merged in with the
//! pod's values), nil fields defaulted (minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy
//! Ignore).
struct Constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  api::LabelSelector selector;
  //! labelSelector was absent (and no matchLabelKeys applied): matches no pod.
  bool selector_matches_nothing = false;
  int32_t min_domains = 1;
  api::NodeInclusionPolicy node_affinity_policy = api::NodeInclusionPolicy::kHonor;
  api::NodeInclusionPolicy node_taints_policy = api::NodeInclusionPolicy::kIgnore;

  bool Matches(const api::Labels& labels) const { return !selector_matches_nothing && selector.Matches(labels); }
};

//! Transparent string hashing so maps keyed by std::string are probed with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

//! The two domains with the fewest matching pods for one constraint (upstream's criticalPaths):
//! paths[0] always holds the global minimum; paths[1] is >= it but not necessarily the second
//! minimum. Enough because preemption only removes pods from one node per evaluation.
struct CriticalPath {
  std::string topology_value;
  int match_num = INT32_MAX;
  bool operator==(const CriticalPath&) const = default;
};
using CriticalPaths = std::array<CriticalPath, 2>;
void UpdateCriticalPaths(CriticalPaths& paths, std::string_view topology_value, int match_num);

//! Written by PreFilter, read by Filter, updated by AddPod/RemovePod on a cloned cycle state.
//! Concurrent Filter calls only read it.
class PreFilterState final : public framework::StateData {
 public:
  //! Shared between clones: they never change after PreFilter.
  std::shared_ptr<const std::vector<Constraint>> constraints;
  //! Per constraint: whether the incoming pod matches its own selector.
  std::shared_ptr<const std::vector<bool>> self_match;
  std::vector<CriticalPaths> critical_paths;
  //! Per constraint: topology value → matching pods in that domain (eligible domains only).
  std::vector<StringMap<int>> tp_value_to_match_num;

  //! The global minimum for constraint i, 0 when fewer than minDomains domains are eligible.
  int MinMatchNum(size_t i) const;
  std::unique_ptr<framework::StateData> Clone() const override;
};

//! Written by PreScore, read by Score and NormalizeScore.
class PreScoreState final : public framework::StateData {
 public:
  std::vector<Constraint> constraints;
  //! Feasible nodes lacking one of the constraints' topology keys: they score 0.
  StringSet ignored_nodes;
  //! Per constraint (non-hostname keys only): topology value → matching pods.
  std::vector<StringMap<int64_t>> topology_value_to_pod_counts;
  //! Per constraint: log(number of domains + 2), so small topologies are not watered down.
  std::vector<double> topology_normalizing_weight;

  std::unique_ptr<framework::StateData> Clone() const override;
};

extern const framework::StateKey kPreFilterStateKey;
extern const framework::StateKey kPreScoreStateKey;

class PodTopologySpread final : public framework::PreFilterPlugin,
                                public framework::PreFilterExtensions,
                                public framework::FilterPlugin,
                                public framework::PreScorePlugin,
                                public framework::ScorePlugin,
                                public framework::ScoreExtensions,
                                public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";

  PodTopologySpread(PodTopologySpreadArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }

  //! Counts matching pods per domain of every DoNotSchedule constraint over all nodes. Skip when
  //! the pod has no hard constraints (own or default).
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  framework::PreFilterExtensions* GetPreFilterExtensions() override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfo& pod_to_add, const framework::NodeInfo& node_info) override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfo& pod_to_remove, const framework::NodeInfo& node_info) override;

  //! UnschedulableAndUnresolvable when the node lacks a topology key; Unschedulable when placing
  //! the pod would make a domain exceed maxSkew over the global minimum.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;

  //! Counts matching pods per domain of every ScheduleAnyway constraint over all nodes (hostname
  //! domains are counted in Score). Skip when the pod has no soft constraints.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;
  //! Raw score: weighted matching-pod count of the node's domains (higher is worse).
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  //! Reverses and scales raw scores into [0, 100]; ignored nodes get 0.
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   framework::NodeScoreList& scores) override;

  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  //! The pod's constraints with the given action: its own, or the default ones (empty when the pod
  //! has no controller selector).
  std::vector<Constraint> GetConstraints(const api::Pod& pod, api::UnsatisfiableConstraintAction action) const;

  //! Queueing hints (exposed for tests).
  framework::QueueingHint IsSchedulableAfterPodChange(const api::Pod& pod, const framework::EventObjects& ev) const;
  framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& ev) const;

 private:
  std::vector<Constraint> FilterConstraints(const std::vector<api::TopologySpreadConstraint>& constraints,
                                            const api::Labels& pod_labels,
                                            api::UnsatisfiableConstraintAction action) const;
  std::vector<Constraint> BuildDefaultConstraints(const api::Pod& pod, api::UnsatisfiableConstraintAction action) const;
  void UpdateWithPod(PreFilterState& s, const api::Pod& updated_pod, const api::Pod& preemptor, const api::Node* node,
                     int delta) const;

  std::vector<api::TopologySpreadConstraint> default_constraints_;
  bool system_defaulted_ = false;
  framework::Handle& handle_;
};

//! Factory: reads PodTopologySpreadArgs (null => System defaulting) and builds the plugin.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::pod_topology_spread
