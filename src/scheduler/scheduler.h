#pragma once
// The scheduler: takes pods from the scheduling queue one at a time through the scheduling cycle
// (PreFilter, Filter over a sample of nodes, PostFilter on failure, PreScore, Score, host
// selection, assume, Reserve, Permit), then hands the pod to a binding cycle (WaitOnPermit,
// PreBind, Bind, PostBind) that runs concurrently with later scheduling cycles. Keeps its cache
// and queue current from cluster events.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/cache.h"
#include "cache/dra_cache.h"
#include "cache/pod_group_index.h"
#include "cache/snapshot.h"
#include "cache/storage_cache.h"
#include "cluster/event_handler.h"
#include "config/types.h"
#include "framework/client.h"
#include "framework/extender.h"
#include "framework/registry.h"
#include "framework/runtime/framework.h"
#include "framework/runtime/waiting_pods.h"
#include "metrics/recorder.h"
#include "profile/profile.h"
#include "queue/scheduling_queue.h"
#include "scheduler/extender_verbs.h"
#include "util/clock.h"
#include "util/parallelizer.h"

namespace kubesched::scheduler {

//! Why a pod could not be placed in one cycle, as upstream's framework.Diagnosis.
struct Diagnosis {
  framework::NodeToStatus node_to_status;
  std::set<std::string> unschedulable_plugins;
  std::set<std::string> pending_plugins;
  std::string pre_filter_msg;
  std::string post_filter_msg;
};

//! One entry of a FitError's reason histogram: how many nodes Filter rejected for `reason`.
struct FilterReasonCount {
  std::string reason;  //!< as the plugin's status gives it ("Insufficient cpu")
  size_t nodes = 0;
  bool operator==(const FilterReasonCount&) const = default;
};

//! The reason histogram FitErrorMessage lists, in its order: "4 Insufficient cpu" is
//! {"Insufficient cpu", 4}. Empty when PreFilter rejected the pod (the message then gives
//! PreFilter's text, with no count per node).
std::vector<FilterReasonCount> FitErrorReasons(size_t num_all_nodes, const Diagnosis& diagnosis);

//! upstream's FitError.Error(): "0/N nodes are available: <sorted reason histogram>.[ <postfilter>]"
std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis);
//! The same, from the histogram FitErrorReasons(num_all_nodes, diagnosis) gave, for a caller that
//! keeps the histogram too.
std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis,
                            std::span<const FilterReasonCount> reasons);

//! A pod's last failed scheduling attempt in structured form (SchedulerOptions::
//! record_failed_attempts), so that a report can count reasons without parsing the message.
struct FailedAttempt {
  //! The FitError's histogram; empty when the attempt failed with an error, or when PreFilter
  //! rejected the pod.
  std::vector<FilterReasonCount> filter_reasons;
};

//! Below this many nodes, Filter runs on the calling thread (a scheduling cycle's round, an
//! extender request): handing a few nodes to the workers costs more than it saves.
inline constexpr size_t kMinNodesForParallelFilter = 128;

//! The longest Event note the API accepts (validation.NoteLengthLimit).
inline constexpr size_t kNoteLengthLimit = 1024;
//! upstream's truncateMessage: a FailedScheduling message longer than kNoteLengthLimit bytes is
//! cut to fit, ending in " ...".
std::string TruncateMessage(std::string message);

//! Upstream's numFeasibleNodesToFind: all nodes below 100, else a percentage (adaptive by default:
//! 50% minus 1% per 125 nodes, at least 5%), never fewer than 100.
int32_t NumFeasibleNodesToFind(std::optional<int32_t> percentage, int32_t num_all_nodes);

//! Per-node, per-plugin detail of one attempt (simulate --explain, run --record-plugin-results).
struct AttemptExplanation {
  //! How the scheduling cycle ended. kScheduled: a node was chosen and the pod went on to binding
  //! (or waits at Permit); a later failure of the binding cycle is another attempt's business.
  //! kUnschedulable: no node fit, or Reserve or Permit rejected the chosen one. kError: a plugin
  //! or the cache failed.
  enum class Result { kScheduled, kUnschedulable, kError };
  std::string pod_key;
  std::string profile;
  Result result = Result::kScheduled;
  int64_t time_ns = 0;             // the scheduler's clock when the decision was explained
  std::string pre_filter_message;  // when PreFilter rejected the pod
  struct FilterVerdict {
    std::string plugin;
    framework::Status status;
    //! What exactly rejected the node, when the plugin's reason does not say: the untolerated
    //! taint, the unmatched node selector or affinity term, the resource with its request and
    //! free amount, the pod (anti-)affinity term.
    std::string detail;
  };
  struct ScoreDetail {
    std::string plugin;
    int64_t raw = 0;         // as the plugin scored
    int64_t normalized = 0;  // after NormalizeScore
    int64_t weight = 0;
    int64_t weighted = 0;  // normalized × weight
  };
  struct NodeDetail {
    std::string node;
    std::vector<FilterVerdict> filters;  // every Filter plugin's verdict, in order
    std::vector<ScoreDetail> scores;
    int64_t total = 0;
    bool feasible = false;
    //! Whether the cycle itself filtered this node. Nodes it did not (node sampling stopped
    //! before them, or the nominated node passed first) are filtered for display only.
    bool evaluated = false;
    //! Set when PreFilter's result left the node out: the reason.
    std::string excluded;
  };
  std::vector<NodeDetail> nodes;
  std::string selected_node;
  std::string message;  // FailedScheduling message when no node fit
  //! What plugins deciding outside the pod's cycle (a batch's plan, a preemption plan) say about
  //! it (framework::PodExplainer), as (plugin, text).
  std::vector<std::pair<std::string, std::string>> plugin_notes;
};

struct SchedulerOptions {
  config::Configuration config;
  uint64_t seed = 1;
  //! Run binding cycles on worker threads (real clusters). When false, binding cycles are queued
  //! and run by RunPendingBindings() between scheduling cycles (the deterministic simulator).
  bool async_binding = false;
  //! Threads running binding cycles in async mode. Against a real API server a bind is a network
  //! round trip, so `run` uses more (upstream binds in a goroutine per pod).
  int binding_threads = 4;
  //! "namespace/name" of a pod whose attempts are explained in detail.
  std::string explain_pod;
  //! Explain every pod's attempts (run --record-plugin-results). Costly: each attempt re-runs
  //! every Filter plugin on every node for the explanation, and the equivalence cache is not used.
  bool explain_all = false;
  //! Called on the scheduling thread at the end of every explained attempt, whatever its outcome,
  //! with the pod as the cycle saw it; it must return quickly (copy and hand off). Unset: the
  //! explanation is only kept (explanation()).
  std::function<void(const api::Pod&, const AttemptExplanation&)> on_explained;
  //! Where upstream's scheduler metrics go (kubesched run); null: none are recorded and no clock
  //! is read for them (simulate, bench). Must outlive the scheduler.
  metrics::Recorder* metrics = nullptr;
  //! Whether pending pods are queued and scheduled. False for `kubesched extender`: the cache and
  //! snapshot follow the cluster's events, but the scheduler places no pod itself.
  bool queue_pods = true;
  //! The extenders to call: extender::BuildExtenders(config.extenders) (HTTP extenders), or
  //! tests' own. Create refuses a configuration with extenders when none are given.
  std::vector<std::shared_ptr<framework::Extender>> extenders;
  //! Keep each pod's last failed attempt (Scheduler::failed_attempts()): simulate's report counts
  //! its reasons. Off elsewhere: a long-running scheduler would keep an entry per pod for ever.
  bool record_failed_attempts = false;
};

class Scheduler final : public cluster::EventHandler {
 public:
  static std::expected<std::unique_ptr<Scheduler>, std::string> Create(const SchedulerOptions& options,
                                                                       framework::ClusterClient& client,
                                                                       const util::Clock& clock,
                                                                       const framework::Registry& registry);
  ~Scheduler() override;

  // --- cluster::EventHandler (thread-safe) -----------------------------------------------
  void OnNodeAdd(std::shared_ptr<const api::Node> node) override;
  void OnNodeUpdate(std::shared_ptr<const api::Node> old_node, std::shared_ptr<const api::Node> new_node) override;
  void OnNodeDelete(std::shared_ptr<const api::Node> node) override;
  void OnPodAdd(std::shared_ptr<const api::Pod> pod) override;
  void OnPodUpdate(std::shared_ptr<const api::Pod> old_pod, std::shared_ptr<const api::Pod> new_pod) override;
  void OnPodDelete(std::shared_ptr<const api::Pod> pod) override;
  void OnPodGroupAdd(std::shared_ptr<const api::PodGroup> group) override;
  void OnPodGroupUpdate(std::shared_ptr<const api::PodGroup> old_group,
                        std::shared_ptr<const api::PodGroup> new_group) override;
  void OnPodGroupDelete(std::shared_ptr<const api::PodGroup> group) override;
  void OnStorageAdd(const api::StorageObject& object) override;
  void OnStorageUpdate(const api::StorageObject& old_object, const api::StorageObject& new_object) override;
  void OnStorageDelete(const api::StorageObject& object) override;
  void OnResourceAdd(const api::ResourceObject& object) override;
  void OnResourceUpdate(const api::ResourceObject& old_object, const api::ResourceObject& new_object) override;
  void OnResourceDelete(const api::ResourceObject& object) override;

  //! Runs one scheduling cycle for the next pod in activeQ. Returns false when activeQ is empty.
  bool ScheduleOne();
  //! As ScheduleOne, waiting for a pod (kubesched run): false once `stop` is requested.
  bool ScheduleOne(std::stop_token stop);
  //! Runs binding cycles queued by earlier scheduling cycles (synchronous mode only).
  void RunPendingBindings();
  //! Moves pods whose backoff ended, times out Permit waits, flushes long-unschedulable pods,
  //! ticks TimedPlugins that are due. Safe to call from a timer thread while another thread runs
  //! scheduling cycles (kubesched run): the two never overlap.
  void FireTimers();
  //! The earliest clock time at which FireTimers would do something (backoff end or Permit timeout;
  //! `include_unschedulable_timeout` adds the 5-minute unschedulable flush).
  std::optional<int64_t> NextTimerNs(bool include_unschedulable_timeout) const;
  //! Waits for all asynchronous binding cycles to finish (async mode).
  void WaitForBindings();
  //! Rejects every pod waiting at Permit with `message` (shutting down: their binding cycles
  //! then end at once, undoing their reservations, instead of waiting for their timeouts).
  void RejectWaitingPods(std::string_view message);

  // --- Extender verbs (kubesched extender; src/scheduler/extender_verbs.cc) -----------------
  // A pod evaluated by the profile named `profile` on the nodes named, as the snapshot has them,
  // outside any scheduling cycle but serialized with cycles. Thread-safe. An unknown profile, a
  // plugin's Error status or an exception from a plugin comes back as the error.

  //! Puts nodes a request carries into the cache: added, or updated when they differ from the
  //! cache's (for an extender no watch feeds).
  void LearnNodes(std::span<const std::shared_ptr<const api::Node>> nodes);
  //! PreFilter, then Filter on every named node (in parallel). Nodes the view lacks fail with
  //! UnknownNodeReason.
  std::expected<ExtenderFilterVerdict, std::string> ExtenderFilter(std::string_view profile, const api::Pod& pod,
                                                                   std::span<const std::string> node_names);
  //! PreScore and Score (normalised and weighted) on the named nodes, feasibility not checked,
  //! mapped onto 0..kMaxExtenderPriority: the best node kMaxExtenderPriority, the others in
  //! proportion (integer division, as upstream's DefaultNormalizeScore). Unknown nodes score 0.
  std::expected<std::vector<framework::HostPriority>, std::string> ExtenderPrioritize(
      std::string_view profile, const api::Pod& pod, std::span<const std::string> node_names);
  //! Per named node, the minimal set of lower-priority pods whose eviction lets the pod fit
  //! (preemption's SelectVictimsOnNode with the PDB budgets); only nodes where that takes at
  //! least one victim appear.
  std::expected<framework::NodeToVictims, std::string> ExtenderPreempt(std::string_view profile, const api::Pod& pod,
                                                                       std::span<const std::string> node_names);

  queue::SchedulingQueue& queue() { return *queue_; }
  cache::Cache& cache() { return *cache_; }
  const std::optional<AttemptExplanation>& explanation() const { return explanation_; }
  size_t attempts() const { return attempts_; }
  //! By pod uid, the last failed attempt of every pod that failed one, when
  //! SchedulerOptions::record_failed_attempts is set. Read once no cycle runs.
  const std::unordered_map<std::string, FailedAttempt>& failed_attempts() const { return failed_attempts_; }
  //! Where the next cycle's node sampling starts (upstream's nextStartNodeIndex).
  size_t next_start_node_index() const { return next_start_node_index_; }
  //! Profile by schedulerName, or nullptr.
  framework::runtime::Framework* FrameworkFor(const std::string& scheduler_name) const;
  //! The queue's and the cache's gauges now (for /metrics). Thread-safe.
  metrics::SchedulerState MetricsState() const;

 private:
  struct ScheduleResult {
    std::string suggested_host;
    size_t evaluated_nodes = 0;
    size_t feasible_nodes = 0;
  };
  //! Why SchedulePod found no host: a FitError (no node passed Filter; the Diagnosis says why,
  //! PostFilter may run) or another failure (an Error, or no nodes at all).
  struct ScheduleFailure {
    framework::Status status;
    bool fit_error = false;
  };

  Scheduler() = default;

  //! One scheduling cycle for a popped pod.
  void SchedulePopped(framework::QueuedPodInfo qpi);

  std::expected<ScheduleResult, ScheduleFailure> SchedulePod(framework::runtime::Framework& fwk,
                                                             framework::CycleState& state,
                                                             const framework::PodInfo& pod, Diagnosis& diagnosis);
  std::vector<const framework::NodeInfo*> FindNodesThatFitPod(framework::runtime::Framework& fwk,
                                                              framework::CycleState& state,
                                                              const framework::PodInfo& pod, Diagnosis& diagnosis,
                                                              framework::Status& error);
  std::vector<const framework::NodeInfo*> FindNodesThatPassFilters(framework::runtime::Framework& fwk,
                                                                   framework::CycleState& state,
                                                                   const framework::PodInfo& pod, Diagnosis& diagnosis,
                                                                   std::span<const framework::NodeInfo* const> nodes,
                                                                   framework::Status& error, size_t& processed);
  std::string SelectHost(const std::vector<framework::runtime::NodePluginScores>& scores);
  //! upstream's findNodesThatPassExtenders: each interested extender filters what the previous
  //! ones left, its rejections recorded in the diagnosis; an error is fatal unless the extender
  //! is ignorable.
  std::vector<const framework::NodeInfo*> FindNodesThatPassExtenders(const api::Pod& pod,
                                                                     std::vector<const framework::NodeInfo*> feasible,
                                                                     Diagnosis& diagnosis, framework::Status& error);
  //! Adds the interested extenders' scores (0..10, × weight × MaxNodeScore / 10) to `scores`,
  //! the extenders called concurrently; a failed one gives no score (upstream ignores
  //! prioritize errors).
  void AddExtenderScores(const api::Pod& pod, const std::vector<const framework::NodeInfo*>& nodes,
                         std::vector<framework::runtime::NodePluginScores>& scores);
  //! upstream's extendersBinding: the first interested binding extender binds the pod (an
  //! ignorable one that fails is skipped); nullopt when none did, so the Bind plugins run.
  std::optional<framework::Status> BindThroughExtenders(const api::Pod& pod, const std::string& host);
  void RunBindingCycle(framework::runtime::Framework* fwk, std::shared_ptr<framework::CycleState> state,
                       framework::QueuedPodInfo qpi, framework::PodInfoPtr assumed, std::string host,
                       framework::Status permit_status, metrics::MonotonicClock::time_point start);
  //! A failed attempt for schedule_attempts_total and scheduling_attempt_duration_seconds:
  //! unschedulable when `status` is a rejection, else error (as upstream's handleSchedulingFailure).
  void ObserveFailedAttempt(const framework::runtime::Framework& fwk, const framework::Status& status,
                            metrics::MonotonicClock::time_point start);
  //! Upstream's handleSchedulingFailure: requeues the pod (the latest version the scheduler has
  //! seen) unless it was deleted or bound meanwhile, applies `nominating` to the nominator and to
  //! the pod's status (kOverride with an empty node clears a nomination; kNoop keeps the one in
  //! the pod's status), and records the PodScheduled=False condition. Only a rejection with a
  //! diagnosis (`fit`) names the plugins whose events may requeue the pod; an error sends it to
  //! backoff.
  void HandleSchedulingFailure(framework::runtime::Framework& fwk, framework::QueuedPodInfo qpi,
                               const framework::Status& status, const Diagnosis* fit,
                               const framework::PostFilterResult& nominating, const std::string& message,
                               std::vector<FilterReasonCount> filter_reasons = {});
  //! A rejection at Reserve or Permit, as upstream reports it: a FitError on the one node.
  void HandleRejectionOnNode(framework::runtime::Framework& fwk, framework::QueuedPodInfo qpi,
                             const framework::Status& status, const std::string& host);
  //! The explanation of this cycle's decision for `simulate --explain`, built after the decision:
  //! nodes the cycle did not evaluate are filtered for display only.
  void Explain(framework::runtime::Framework& fwk, framework::CycleState& state, const framework::PodInfo& pod,
               const Diagnosis& diagnosis, const std::vector<const framework::NodeInfo*>& feasible,
               const std::vector<framework::runtime::NodePluginScores>* scores, const std::string& selected,
               const std::string& message);
  //! Ends an explained attempt: records its result (and `message`, when given, as the reason it
  //! failed after a node was chosen) in explanation_ and hands it to options_.on_explained.
  void FinishExplanation(const api::Pod& pod, AttemptExplanation::Result result, std::string_view message = {});
  void SubmitBinding(std::function<void()> task);
  //! Ticks the profiles' TimedPlugins that are due (batch windows).
  void RunTimedPlugins();
  bool Responsible(const api::Pod& pod) const;

  SchedulerOptions options_;
  framework::ClusterClient* client_ = nullptr;
  const util::Clock* clock_ = nullptr;
  metrics::Recorder* metrics_ = nullptr;  // options_.metrics
  std::unique_ptr<util::Parallelizer> parallelizer_;
  std::unique_ptr<framework::runtime::WaitingPodsMap> waiting_pods_;
  std::unique_ptr<framework::PodNominator> nominator_proxy_;
  std::unique_ptr<cache::Cache> cache_;
  //! PodGroups and their members (Handle::PodGroups), fed by the informer callbacks.
  cache::PodGroupIndex pod_groups_{api::PodGroupApi::kScheduling};
  //! scheduler-plugins PodGroups and their members (Handle::PodGroups(kCoscheduling)).
  cache::PodGroupIndex coscheduling_groups_{api::PodGroupApi::kCoscheduling};
  //! Claims, volumes, classes and CSI objects (Handle::Storage), fed by the informer callbacks.
  cache::StorageCache storage_;
  cache::DraCache dra_;
  std::unique_ptr<cache::Snapshot> snapshot_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  profile::Map profiles_;
  std::vector<std::shared_ptr<framework::Extender>> extenders_;
  std::vector<framework::Extender*> extender_ptrs_;  // the frameworks' view of extenders_

  // Serializes scheduling cycles with FireTimers (a TimedPlugin's tick updates the snapshot
  // and plans as a cycle does), for `run`, where a timer thread fires them.
  std::mutex cycle_mu_;
  // Scheduling-cycle state (only the scheduling loop touches these).
  std::mt19937_64 rng_;
  // Samples the cycles whose plugin durations are recorded; apart from rng_, which decides
  // placements, so recording metrics changes no decision.
  std::minstd_rand metrics_rng_;
  size_t next_start_node_index_ = 0;
  // Nodes the cycle's filtering judged (upstream's EvaluatedNodes: the feasible and the failed).
  size_t cycle_evaluated_nodes_ = 0;
  size_t attempts_ = 0;
  std::optional<AttemptExplanation> explanation_;
  std::mutex failed_attempts_mu_;  // binding cycles fail on worker threads in async mode
  std::unordered_map<std::string, FailedAttempt> failed_attempts_;
  bool explaining_ = false;  // this cycle's pod is the one to explain
  // When explaining and PreFilter narrowed the nodes: the nodes it left.
  std::optional<std::set<std::string>> explain_candidates_;
  // FindNodesThatPassFilters' buffers, kept to avoid allocating per cycle.
  std::vector<uint8_t> filter_passed_;
  std::vector<framework::Status> filter_round_statuses_;
  std::vector<std::pair<uint32_t, framework::Status>> filter_failures_;
  // Nodes whose verdict this cycle was computed (not memoised) and may be memoised.
  std::vector<uint8_t> filter_memoize_;
  // Per evaluated node: the class's remembered verdict (referred to, copied only into the
  // diagnosis), or null when computed this cycle.
  std::vector<const framework::Status*> filter_remembered_;
  // The round's nodes without a remembered verdict (offsets into the round).
  std::vector<uint32_t> filter_to_run_;
  // What running Filter on a node has cost (whether a round's nodes are worth sharing out).
  util::LoopCost filter_loop_cost_;
  // The cycle's pod class in its profile's equivalence cache (nullptr: none, or explaining).
  framework::runtime::EquivalenceClass* cycle_class_ = nullptr;

  // Unbound pods this scheduler is responsible for, by uid: the latest object seen, used to
  // drop a failed pod that was deleted or bound meanwhile. Guarded by pods_mu_.
  mutable std::mutex pods_mu_;
  std::unordered_map<std::string, std::shared_ptr<const api::Pod>> pending_pods_;

  // Binding work. Guarded by binding_mu_.
  mutable std::mutex binding_mu_;
  std::condition_variable binding_cv_;
  std::deque<std::function<void()>> binding_tasks_;
  size_t bindings_in_flight_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> binding_threads_;
};

}  // namespace kubesched::scheduler
