#pragma once
// The Scheduling Framework's plugin API: one abstract class per extension point, all deriving
// from Plugin. A plugin derives from exactly the points it implements. Contracts follow
// upstream's kube-scheduler framework interface.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/events.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/status.h"

namespace kubesched::framework {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;
inline constexpr int64_t kMaxTotalScore = INT64_MAX;

class Plugin {
 public:
  virtual ~Plugin() = default;
  //! The plugin's registered name, a string constant with static storage.
  virtual std::string_view Name() const = 0;
};

//! Runs when a pod is added to the queue. Non-success keeps the pod out of activeQ (gated) until
//! an event it registered for; must be cheap and must not depend on cluster state it does not
//! register events for.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const api::Pod& pod) = 0;
};

//! Orders activeQ. Exactly one QueueSort plugin per profile; all profiles must use the same one.
class QueueSortPlugin : public virtual Plugin {
 public:
  //! Strict weak ordering: true when a should be scheduled before b.
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

//! Plugins that can reject pods say which cluster events may make a rejected pod schedulable.
//! A plugin that rejects but does not implement this is treated as registering every event.
class EnqueueExtensions : public virtual Plugin {
 public:
  virtual std::vector<ClusterEventWithHint> EventsToRegister() const = 0;
};

//! Nodes a PreFilter plugin restricts the cycle to; nullopt means all nodes.
struct PreFilterResult {
  std::optional<std::set<std::string>> node_names;
  bool AllNodes() const { return !node_names.has_value(); }
  //! Intersection of two results.
  PreFilterResult Merge(const PreFilterResult& other) const;
};

//! What-if hooks used by preemption and nominated-pod evaluation: update the plugin's
//! PreFilter state as if pod_to_add were added to (or pod_to_remove removed from) node_info.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                        const NodeInfo& node_info) = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_remove,
                           const NodeInfo& node_info) = 0;
};

//! Runs once per cycle before Filter. May compute state for Filter, restrict the nodes
//! (PreFilterResult), return Skip (the plugin's Filter is then not run), or reject the pod
//! (Unschedulable / UnschedulableAndUnresolvable: no node is filtered).
class PreFilterPlugin : public virtual Plugin {
 public:
  virtual std::pair<PreFilterResult, Status> PreFilter(CycleState& state, const PodInfo& pod,
                                                       std::span<const NodeInfo* const> nodes) = 0;
  //! nullptr when the plugin's state does not depend on other pods.
  virtual PreFilterExtensions* GetPreFilterExtensions() { return nullptr; }
};

//! Decides whether the pod can run on one node. Called concurrently for different nodes with the
//! same (read-only) CycleState; must not mutate shared state. Returns Success, Unschedulable,
//! UnschedulableAndUnresolvable or Error.
class FilterPlugin : public virtual Plugin {
 public:
  virtual Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node_info) = 0;
  //! True when the verdict depends on nothing but the pod's spec (directly or through this
  //! plugin's PreFilter state) and the NodeInfo: no other node, no other cluster object, no
  //! clock. The scheduler then reuses a verdict for pods of the same spec on a node whose
  //! generation has not moved (runtime/equivalence_cache.h). Off unless a plugin promises it.
  virtual bool FilterIsNodeLocal() const { return false; }
};

//! Why each node was rejected in a cycle. Nodes not listed share `absent_status` (set when a
//! PreFilter restricted the nodes, so the others are UnschedulableAndUnresolvable). Kept as a
//! list in insertion order (a cycle appends one entry per rejected node, thousands on a large
//! cluster) with a name index built on the first lookup.
class NodeToStatus {
 public:
  //! Records a node's status, replacing an earlier one. The name is not copied: it must outlive
  //! this map (node names from the cycle's snapshot, or strings the caller keeps).
  void Set(std::string_view node_name, Status status);
  //! Records the status of a node not recorded yet (the cycle's filtering: each node once).
  void Append(std::string_view node_name, Status status) {
    entries_.emplace_back(node_name, std::move(status));
    if (indexed_) index_.emplace(node_name, entries_.size() - 1);
  }
  //! The node's status: its recorded one, else absent_status.
  const Status& Get(std::string_view node_name) const;
  bool Contains(std::string_view node_name) const;
  //! In recording order; callers aggregate (histograms), they do not depend on the order.
  const std::vector<std::pair<std::string_view, Status>>& statuses() const { return entries_; }
  void Reserve(size_t n) { entries_.reserve(n); }
  void set_absent_status(Status status) { absent_status_ = std::move(status); }
  const Status& absent_status() const { return absent_status_; }
  size_t size() const { return entries_.size(); }

 private:
  void BuildIndex() const;

  std::vector<std::pair<std::string_view, Status>> entries_;
  mutable bool indexed_ = false;
  mutable std::unordered_map<std::string_view, size_t> index_;
  Status absent_status_{Code::kUnschedulableAndUnresolvable};
};

enum class NominatingMode { kNoop, kOverride };

struct PostFilterResult {
  NominatingMode mode = NominatingMode::kNoop;
  std::string nominated_node_name;
};

//! Runs only when no node passed Filter (preemption lives here). Plugins run in order until one
//! returns Success (the pod may become schedulable, nominated on a node) or
//! UnschedulableAndUnresolvable (stop). Unschedulable means "not me, try the next".
class PostFilterPlugin : public virtual Plugin {
 public:
  virtual std::pair<PostFilterResult, Status> PostFilter(CycleState& state, const PodInfo& pod,
                                                         const NodeToStatus& filtered_statuses) = 0;
};

//! Runs once per cycle with the feasible nodes before Score. May return Skip (its Score is then not
//! run). Any other non-success fails the cycle.
class PreScorePlugin : public virtual Plugin {
 public:
  virtual Status PreScore(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes) = 0;
};

struct NodeScore {
  std::string_view name;  //!< the node's name, valid for the cycle
  int64_t score = 0;
};
using NodeScoreList = std::vector<NodeScore>;

//! Rescales a score plugin's raw scores into [kMinNodeScore, kMaxNodeScore].
class ScoreExtensions {
 public:
  virtual ~ScoreExtensions() = default;
  virtual Status NormalizeScore(const CycleState& state, const PodInfo& pod, NodeScoreList& scores) = 0;
};

//! Ranks a feasible node. Called concurrently for different nodes. After NormalizeScore (if any)
//! every score must lie in [0, 100]; the framework then multiplies by the plugin's weight.
class ScorePlugin : public virtual Plugin {
 public:
  virtual std::pair<int64_t, Status> Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node_info) = 0;
  virtual ScoreExtensions* GetScoreExtensions() { return nullptr; }
  //! As FilterPlugin::FilterIsNodeLocal, for the raw score (before NormalizeScore); the number of
  //! nodes in the snapshot may count too (ImageLocality's spread).
  virtual bool ScoreIsNodeLocal() const { return false; }
};

//! Reserve is called when the pod is assumed on a node, before the binding cycle; Unreserve when
//! any later step fails. Unreserve runs in reverse order, must be idempotent, and must tolerate
//! a Reserve that never ran or failed.
class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node_name) = 0;
  virtual void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node_name) = 0;
};

//! Last step of the scheduling cycle: Success (allow), Unschedulable/Error (reject), or Wait with a
//! timeout; a waiting pod is allowed or rejected later through the Handle's waiting pods, and a
//! timeout rejects it.
class PermitPlugin : public virtual Plugin {
 public:
  virtual std::pair<Status, std::chrono::nanoseconds> Permit(CycleState& state, const PodInfo& pod,
                                                             const std::string& node_name) = 0;
};

//! Binding cycle, before Bind. Any non-success aborts binding (Unreserve runs, pod requeued).
class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node_name) = 0;
};

//! Binds the pod. Returns Skip when it does not handle this pod; the first plugin that does not
//! skip decides.
class BindPlugin : public virtual Plugin {
 public:
  virtual Status Bind(CycleState& state, const PodInfo& pod, const std::string& node_name) = 0;
};

//! A plugin that acts on its own schedule between scheduling cycles (a batch window that closes):
//! the scheduler calls Tick once the clock reaches NextTickNs, with the profile's snapshot
//! current, on the scheduling thread. Not an extension point of upstream's: the batch placement
//! plugin collects pods at PreEnqueue and places them jointly here.
class TimedPlugin : public virtual Plugin {
 public:
  //! When Tick should run next (may be <= now), or nullopt when nothing is pending.
  virtual std::optional<int64_t> NextTickNs() const = 0;
  //! `held`: the pending pods this plugin's PreEnqueue holds (gated), by priority then creation.
  virtual void Tick(const std::vector<PodInfoPtr>& held) = 0;
};

//! A plugin that places a pod's whole group at once (upstream's PodGroup scheduling cycle; not an
//! upstream extension point): the scheduler calls it at the start of every pod's scheduling cycle,
//! the snapshot updated, before PreFilter, so that the first member of a group to be scheduled
//! decides for all of the group's pending members (its PreFilter then gives each its verdict).
//! Never called outside a scheduling cycle (PreFilter is: by preemption, by extender verbs).
class PodGroupCyclePlugin : public virtual Plugin {
 public:
  virtual void PodGroupCycle(const PodInfo& pod) = 0;
};

//! A plugin that decides about pods outside their own cycles (a batch's plan, a preemption plan)
//! says what it decided about one, for `simulate --explain`. Not an extension point of upstream's.
class PodExplainer : public virtual Plugin {
 public:
  //! What the plugin decided about the pod and why, in sentences; "" when it decided nothing.
  //! Called on the scheduling thread; must not change anything.
  virtual std::string ExplainPod(const api::Pod& pod) const = 0;
};

//! Informational, after a successful bind.
class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const PodInfo& pod, const std::string& node_name) = 0;
};

}  // namespace kubesched::framework
