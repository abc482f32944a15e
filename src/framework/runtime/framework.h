#pragma once
// The framework runtime: one instance per scheduler profile. Builds the profile's plugins from the
// registry and runs each extension point in order with upstream's rules (first rejecting Filter
// wins, PostFilter stops at the first success, scores normalised then weighted, Unreserve in
// reverse, first non-skipping Bind wins, ...). Implements the Handle given to plugins.

#include <any>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "framework/runtime/equivalence_cache.h"
#include "framework/runtime/waiting_pods.h"
#include "metrics/recorder.h"
#include "util/parallelizer.h"

namespace kubesched::framework::runtime {

//! What a framework needs from the scheduler that owns it. All pointers must outlive it.
struct FrameworkDeps {
  ClusterClient* client = nullptr;
  PodNominator* nominator = nullptr;
  const util::Clock* clock = nullptr;
  util::Parallelizer* parallelizer = nullptr;
  WaitingPodsMap* waiting_pods = nullptr;
  //! Moves pods to activeQ (Handle::Activate); may be empty.
  std::function<void(const std::vector<std::shared_ptr<const api::Pod>>&)> activate;
  //! Extension point and (sampled) plugin durations; null: none recorded, no clock read.
  metrics::Recorder* metrics = nullptr;
  //! The scheduler's extenders (Handle::Extenders), in call order; they outlive the framework.
  std::vector<Extender*> extenders;
  //! The scheduler's PodGroups and their members (Handle::PodGroups); null: none tracked.
  PodGroupTracker* pod_groups = nullptr;
  //! The same for scheduler-plugins PodGroups (scheduling.x-k8s.io).
  PodGroupTracker* coscheduling_groups = nullptr;
  //! Claims, volumes, classes and CSI objects (Handle::Storage); null: an empty lister.
  StorageLister* storage = nullptr;
  DraLister* dra = nullptr;
};

//! A plugin's scores on one node after normalisation and weighting.
struct PluginScore {
  std::string_view plugin;
  int64_t score = 0;  //!< normalized × weight: what the total adds up
  // Kept only with details (explain):
  int64_t raw = 0;         //!< as the plugin's Score returned it
  int64_t normalized = 0;  //!< after the plugin's NormalizeScore (0..100)
  int64_t weight = 0;
};

struct NodePluginScores {
  const NodeInfo* node = nullptr;
  std::vector<PluginScore> scores;
  int64_t total = 0;
};

class Framework final : public Handle {
 public:
  //! Builds the profile. Errors name the field path, e.g.
  //! "profiles[0].pluginConfig[1].args: scoringStrategy.type: Unsupported value: ...".
  static std::expected<std::unique_ptr<Framework>, std::string> Create(const config::Profile& profile,
                                                                       size_t profile_index, const Registry& registry,
                                                                       FrameworkDeps deps);
  ~Framework() override;

  // --- Handle -----------------------------------------------------------------------------
  const NodeInfoLister& SnapshotSharedLister() const override { return *snapshot_; }
  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) override;
  std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) override;
  bool RejectWaitingPod(std::string_view uid) override;
  ClusterClient& client() override { return *deps_.client; }
  PodNominator& nominator() override { return *deps_.nominator; }
  const util::Clock& clock() const override { return *deps_.clock; }
  util::Parallelizer& parallelizer() override { return *deps_.parallelizer; }
  std::string_view profile_name() const override { return profile_name_; }
  void Activate(const std::vector<std::shared_ptr<const api::Pod>>& pods) override {
    if (deps_.activate) deps_.activate(pods);
  }
  std::span<Extender* const> Extenders() const override { return deps_.extenders; }
  PodGroupTracker* PodGroups(api::PodGroupApi api) const override {
    return api == api::PodGroupApi::kScheduling ? deps_.pod_groups : deps_.coscheduling_groups;
  }
  StorageLister& Storage() const override { return deps_.storage != nullptr ? *deps_.storage : Handle::Storage(); }
  DraLister& Dra() const override { return deps_.dra != nullptr ? *deps_.dra : Handle::Dra(); }
  void ObservePreemptionVictims(size_t victims) override {
    if (deps_.metrics) deps_.metrics->ObservePreemptionVictims(victims);
  }
  //! Plugins that run on their own schedule (TimedPlugin), in configuration order.
  const std::vector<TimedPlugin*>& timed_plugins() const { return timed_; }
  //! Every PodGroupCyclePlugin's PodGroupCycle, in configuration order (an exception is logged,
  //! not passed on: the pod's own cycle then decides alone).
  void RunPodGroupCycles(const PodInfo& pod);

  //! The snapshot plugins see through the Handle; set by the scheduler before each cycle.
  void set_snapshot(const NodeInfoLister* snapshot) { snapshot_ = snapshot; }

  // --- Extension points -----------------------------------------------------------------
  // PreEnqueue runs in the scheduling queue (queue/scheduling_queue.cc), which gates pods with it.
  const std::vector<PreEnqueuePlugin*>& pre_enqueue_plugins() const { return pre_enqueue_; }
  const QueueSortPlugin* queue_sort() const { return queue_sort_; }
  //! Plugin name → events it registered, for every plugin that can reject pods.
  std::vector<std::pair<std::string, std::vector<ClusterEventWithHint>>> EnqueueEvents() const;

  std::pair<PreFilterResult, Status> RunPreFilterPlugins(CycleState& state, const PodInfo& pod) override {
    return RunPreFilterPlugins(state, pod, nullptr);
  }
  //! Also reports the plugins whose PreFilter narrowed the node set (for the diagnosis).
  std::pair<PreFilterResult, Status> RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                                         std::vector<std::string>* plugins_with_nodes);
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                                     const NodeInfo& node_info) override;
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_remove,
                                        const NodeInfo& node_info) override;
  Status RunFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node_info) override;
  Status RunFilterPluginsWithNominatedPods(CycleState& state, const PodInfo& pod, const NodeInfo& node_info) override {
    return RunFilterPluginsWithNominatedPods(state, pod, node_info, nullptr);
  }
  //! Also reports whether nominated pods were counted on the node (the verdict is then not the
  //! pod class's own: it must not be memoised).
  Status RunFilterPluginsWithNominatedPods(CycleState& state, const PodInfo& pod, const NodeInfo& node_info,
                                           bool* counted_nominated);
  bool HasFilterPlugins() const { return !filter_.empty(); }
  //! The nominated pods Filter counts on the node for the pod (upstream's addGENominatedPods):
  //! those of equal or higher priority, or planned by a batch placement.
  std::vector<PodInfoPtr> NominatedPodsToCount(const PodInfo& pod, const NodeInfo& node_info) const;
  bool HasNominatedPods() const { return deps_.nominator && deps_.nominator->HasNominatedPods(); }

  //! The pod's class in the profile's equivalence cache (runtime/equivalence_cache.h), or nullptr
  //! when no Filter or Score plugin of the profile is node-local. Call once per cycle, serially.
  EquivalenceClass* EquivalenceClassFor(const PodInfo& pod);
  //! Whether this cycle's Filter verdicts may come from the pod's class: every Filter plugin that
  //! runs (not skipped by its PreFilter) is node-local.
  bool FilterVerdictsMemoizable(const CycleState& state) const;

  //! Runs PostFilter plugins: the first Success or UnschedulableAndUnresolvable stops.
  std::pair<PostFilterResult, Status> RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                                           const NodeToStatus& statuses);
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }

  Status RunPreScorePlugins(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes);
  std::pair<std::vector<int64_t>, Status> RunScoreTotals(CycleState& state, const PodInfo& pod,
                                                         std::span<const NodeInfo* const> nodes) override;
  //! Scores every node with every (non-skipped) score plugin in parallel, normalises per plugin,
  //! applies weights, and sums.
  //! Per-plugin scores are kept only `with_details` (explain): the totals are all selection needs.
  std::pair<std::vector<NodePluginScores>, Status> RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                                                   std::span<const NodeInfo* const> nodes,
                                                                   bool with_details = false,
                                                                   EquivalenceClass* memo = nullptr);
  bool HasScorePlugins() const { return !score_.empty(); }

  Status RunReservePluginsReserve(CycleState& state, const PodInfo& pod, const std::string& node_name);
  void RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod, const std::string& node_name);

  //! Success, a rejection, or Wait (the pod is registered as waiting; `on_done` runs once when it
  //! is allowed, rejected or times out).
  Status RunPermitPlugins(CycleState& state, const PodInfoPtr& pod, const std::string& node_name,
                          WaitingPodImpl::OnDone on_done);

  Status RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node_name);
  Status RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node_name);
  void RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node_name);

  //! For `simulate --explain`: every Filter plugin's verdict on the node (no early stop).
  std::vector<std::pair<std::string_view, Status>> ExplainFilter(const CycleState& state, const PodInfo& pod,
                                                                 const NodeInfo& node_info);

  const std::string& name() const { return profile_name_; }
  std::optional<int32_t> percentage_of_nodes_to_score() const { return percentage_of_nodes_to_score_; }
  //! The profile's instance of a plugin, or nullptr when it is not enabled.
  Plugin* GetPlugin(std::string_view name) const;
  //! The statistics of the plugin `name` (framework/statistics.h); empty when the profile does not
  //! enable it or it keeps none.
  std::any PluginStatistics(std::string_view name) const;
  //! What each plugin that decides about pods outside their cycles says about this one
  //! (PodExplainer), as (plugin, text), in the profile's order.
  std::vector<std::pair<std::string, std::string>> ExplainPod(const api::Pod& pod) const;
  //! Every plugin's name per extension point (for logs and tests).
  std::vector<std::string> PluginNames(std::string_view extension_point) const;
  //! The Score plugins in order with their weights (1 when the configuration sets none).
  std::vector<std::pair<std::string, int64_t>> ScoreWeights() const;

 private:
  Framework() = default;
  // Create's steps: put a plugin in the list of one extension point; then the per-plugin facts the
  // cycles read (node-local Filter and Score, queueing hints, timers).
  std::expected<void, std::string> AddAt(std::string_view point, Plugin* plugin, const config::PluginRef& ref,
                                         const std::string& path);
  void CollectPluginTraits();

  std::string profile_name_;
  std::optional<int32_t> percentage_of_nodes_to_score_;
  FrameworkDeps deps_;
  const NodeInfoLister* snapshot_ = nullptr;

  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<PreScorePlugin*> pre_score_;
  std::vector<ScorePlugin*> score_;
  std::vector<int64_t> score_weights_;  // parallel to score_
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> pre_bind_;
  std::vector<BindPlugin*> bind_;
  std::vector<PostBindPlugin*> post_bind_;
  std::vector<EnqueueExtensions*> enqueue_extensions_;
  std::vector<TimedPlugin*> timed_;
  std::vector<PodGroupCyclePlugin*> group_cycle_;

  std::vector<uint8_t> filter_node_local_;  // parallel to filter_
  std::vector<uint8_t> score_node_local_;   // parallel to score_
  EquivalenceCache equivalence_;

  //! RunScorePlugins' per-plugin score lists, reused across cycles (scheduling cycles are serial).
  std::vector<NodeScoreList> score_scratch_;
  // The cycle's nodes without every score remembered (indices into its nodes).
  std::vector<uint32_t> score_to_run_;
  // What scoring a node has cost (whether a cycle's nodes are worth sharing out).
  util::LoopCost score_loop_cost_;
};

}  // namespace kubesched::framework::runtime
