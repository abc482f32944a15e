#pragma once
// PodTopologySpread: spreads pods matching a selector evenly over topology domains (zones,
// hostnames, ...), as upstream's podtopologyspread plugin. DoNotSchedule constraints filter
// (PreFilter counts matching pods per domain once per cycle; Filter checks the skew with one
// array lookup per constraint); ScheduleAnyway constraints score. Pods without constraints of
// their own get the cluster-level default constraints, with the selector of their controlling
// workload. Counts live in flat arrays indexed by the snapshot's topology domains
// (framework::TopologyDomains), and per-node matching-pod counts are reused across cycles for
// nodes that did not change, so a cycle costs a few loads per node rather than a selector match
// per pod.

#include <algorithm>
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

#include "framework/args_view.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/topology_domains.h"
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

//! The same, with domains named by their slot in a DomainCounts (-1: no domain yet).
struct DomainCriticalPath {
  int32_t slot = -1;
  int match_num = INT32_MAX;
  bool operator==(const DomainCriticalPath&) const = default;
};
using DomainCriticalPaths = std::array<DomainCriticalPath, 2>;
void UpdateCriticalPaths(DomainCriticalPaths& paths, int32_t slot, int match_num);

//! Whether a domain slot is present. An enum rather than a char type: stores to it may not alias
//! other objects, so loops writing it keep their loads in registers.
enum class Presence : uint8_t { kAbsent, kPresent };

//! Matching pods per topology domain of one constraint, in a flat array indexed by slot: slot d <
//! domains->size() is the snapshot's domain d; later slots hold values no snapshot node has
//! (seen only on nodes from outside the snapshot, e.g. during preemption what-ifs; rare). A slot
//! is "present" when the domain holds an eligible node (upstream's map has the key); absent
//! slots count 0. Copying it (CycleState::Clone) copies the arrays and shares the domains.
template <typename T>
struct DomainCounts {
  std::shared_ptr<const framework::TopologyDomains> domains;
  std::vector<T> counts;          // by slot
  std::vector<Presence> present;  // by slot
  size_t num_present = 0;
  std::vector<std::string> extra_values;  // value of slot domains->size() + j

  void Init(std::shared_ptr<const framework::TopologyDomains> d) {
    domains = std::move(d);
    counts.assign(domains->size(), T{});
    present.assign(domains->size(), Presence::kAbsent);
    num_present = 0;
    extra_values.clear();
  }
  //! The slot of a label value, or kUnknownDomain for a value neither the snapshot nor an extra
  //! slot has.
  int32_t FindSlotOfValue(std::string_view value) const {
    const int32_t d = domains->DomainOfValue(value);
    if (d >= 0) return d;
    for (size_t j = 0; j < extra_values.size(); ++j) {
      if (extra_values[j] == value) return static_cast<int32_t>(domains->size() + j);
    }
    return framework::TopologyDomains::kUnknownDomain;
  }
  //! As FindSlotOfValue, giving an unknown value a new (absent, zero) slot.
  int32_t AddSlotOfValue(std::string_view value) {
    const int32_t slot = FindSlotOfValue(value);
    if (slot != framework::TopologyDomains::kUnknownDomain) return slot;
    extra_values.emplace_back(value);
    counts.push_back(T{});
    present.push_back(Presence::kAbsent);
    return static_cast<int32_t>(counts.size() - 1);
  }
  //! The slot of the node's domain: kNoDomain when the node lacks the key, kUnknownDomain for a
  //! value no slot has. One array load for a snapshot node.
  int32_t FindSlot(const framework::NodeInfo& node) const {
    const int32_t d = domains->DomainOf(node);
    if (d != framework::TopologyDomains::kUnknownDomain) return d;
    return FindSlotOfValue(*node.node()->metadata.labels.Find(domains->key()));
  }
  //! As FindSlot, giving an unknown value a new slot (never kUnknownDomain).
  int32_t AddSlot(const framework::NodeInfo& node) {
    const int32_t d = domains->DomainOf(node);
    if (d != framework::TopologyDomains::kUnknownDomain) return d;
    return AddSlotOfValue(*node.node()->metadata.labels.Find(domains->key()));
  }
  //! The count of a slot from FindSlot: absent and unknown domains count 0.
  T CountAt(int32_t slot) const { return slot >= 0 ? counts[static_cast<size_t>(slot)] : T{}; }
  bool IsPresent(int32_t slot) const { return slot >= 0 && present[static_cast<size_t>(slot)] == Presence::kPresent; }
  void MarkPresent(int32_t slot) {
    Presence& p = present[static_cast<size_t>(slot)];
    num_present += p == Presence::kAbsent ? 1 : 0;
    p = Presence::kPresent;
  }
  //! Sets num_present from `present` (after marking slots directly).
  void RecountPresent() {
    num_present = static_cast<size_t>(std::count(present.begin(), present.end(), Presence::kPresent));
  }
  std::string_view ValueOf(int32_t slot) const {
    const size_t n = domains->size();
    return static_cast<size_t>(slot) < n ? domains->value(slot) : std::string_view(extra_values[slot - n]);
  }
  //! Present domains by value (tests, debugging).
  StringMap<T> ToStringMap() const {
    StringMap<T> out;
    for (size_t slot = 0; slot < present.size(); ++slot) {
      if (present[slot] == Presence::kPresent)
        out.emplace(std::string(ValueOf(static_cast<int32_t>(slot))), counts[slot]);
    }
    return out;
  }
  operator StringMap<T>() const { return ToStringMap(); }  // NOLINT: lets tests compare with maps
};

//! Written by PreFilter, read by Filter, updated by AddPod/RemovePod on a cloned cycle state.
//! Concurrent Filter calls only read it.
class PreFilterState final : public framework::StateData {
 public:
  //! Shared between clones: they never change after PreFilter.
  std::shared_ptr<const std::vector<Constraint>> constraints;
  //! Per constraint: whether the incoming pod matches its own selector.
  std::shared_ptr<const std::vector<bool>> self_match;
  //! Per constraint, over the slots of tp_value_to_match_num[i].
  std::vector<DomainCriticalPaths> critical_paths;
  //! Per constraint: matching pods per domain (present: eligible domains only).
  std::vector<DomainCounts<int>> tp_value_to_match_num;

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
  //! Per constraint: matching pods per domain holding a feasible node. Hostname constraints are
  //! counted per node in Score: theirs hold only the domains (no arrays, nothing present).
  std::vector<DomainCounts<int64_t>> topology_value_to_pod_counts;
  //! Per constraint: log(number of domains + 2), so small topologies are not watered down.
  std::vector<double> topology_normalizing_weight;

  std::unique_ptr<framework::StateData> Clone() const override;
};

//! Matching-pod counts per node and selector, kept across cycles (defined in the .cc).
class MatchCountCache;

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
  ~PodTopologySpread() override;

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
  void UpdateWithPod(PreFilterState& s, const api::Pod& updated_pod, const api::Pod& preemptor,
                     const framework::NodeInfo& node_info, int delta) const;

  std::vector<api::TopologySpreadConstraint> default_constraints_;
  bool system_defaulted_ = false;
  framework::Handle& handle_;
  //! Matching-pod counts per node, reused across cycles while nodes keep their generation.
  std::unique_ptr<MatchCountCache> match_counts_;
};

//! Factory: reads PodTopologySpreadArgs (null => System defaulting) and builds the plugin.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::pod_topology_spread
