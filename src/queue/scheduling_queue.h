#pragma once
// The scheduling queue: upstream kube-scheduler's PriorityQueue
// (pkg/scheduler/backend/queue/scheduling_queue.go) with queueing hints enabled.
//
// A pending pod is in exactly one of three places:
//   - activeQ: pods ready to be tried, ordered by the profile's QueueSort less function;
//   - backoffQ: pods that may become schedulable but still serve their backoff, ordered by expiry;
//   - the unschedulable pool: pods that were rejected (or gated by a PreEnqueue plugin) and wait
//     for a cluster event that one of the plugins which rejected them registered for.
// A popped pod is "in flight" until Done(uid). Cluster events that arrive while pods are in flight
// are recorded, so that a pod coming back unschedulable is requeued at once when something it
// cares about happened during its attempt, instead of waiting in the pool for the next event.
//
// Thread safety: every public method takes the single mutex `mu_`. PreEnqueue plugins and
// queueing hint functions run under it, so they must be cheap and must not call back into the
// queue. Time comes from the injected clock only (virtual in `simulate`): nothing here sleeps or
// runs timers; the owner calls FlushBackoffQCompleted / FlushUnschedulablePodsLeftover (upstream
// runs them every 1 s and 30 s), or advances a virtual clock to NextTimerNs() and flushes.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "framework/events.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/pod_info.h"
#include "framework/status.h"
#include "metrics/recorder.h"
#include "queue/nominator.h"
#include "util/clock.h"

namespace kubesched::queue {

//! Orders activeQ: true when a should be popped before b (a QueueSort plugin's Less).
using LessFn = std::function<bool(const framework::QueuedPodInfo&, const framework::QueuedPodInfo&)>;

inline constexpr int64_t kDefaultPodInitialBackoffNs = 1 * util::kNanosPerSecond;
inline constexpr int64_t kDefaultPodMaxBackoffNs = 10 * util::kNanosPerSecond;
inline constexpr int64_t kDefaultPodMaxInUnschedulablePodsNs = 5 * 60 * util::kNanosPerSecond;
//! With pop_from_backoff_q, backoff expiries are truncated to windows of this length and ordered
//! by priority inside a window (upstream's backoffQOrderingWindowDuration, KEP-5142).
inline constexpr int64_t kBackoffOrderingWindowNs = 1 * util::kNanosPerSecond;

struct Options {
  //! Backoff after the first failed attempt; doubled per further attempt up to pod_max_backoff_ns.
  int64_t pod_initial_backoff_ns = kDefaultPodInitialBackoffNs;
  int64_t pod_max_backoff_ns = kDefaultPodMaxBackoffNs;
  //! A pod left this long in the unschedulable pool is retried (UnschedulableTimeout event).
  int64_t max_in_unschedulable_pods_ns = kDefaultPodMaxInUnschedulablePodsNs;
  //! Upstream's SchedulerPopFromBackoffQ feature (beta, on by default since 1.33): when activeQ
  //! is empty Pop takes the head of backoffQ (pods rejected by plugins, not errored ones) even
  //! if its backoff has not expired; PreEnqueue runs when a pod enters backoffQ rather than when
  //! it leaves it; backoff expiries are aligned to kBackoffOrderingWindowNs. Off by default here
  //! so that backoff always delays a retry.
  bool pop_from_backoff_q = false;
  //! scheduler_queue_incoming_pods_total; null: nothing recorded. Must outlive the queue.
  metrics::Recorder* metrics = nullptr;
};

//! Upstream's queue and event labels of scheduler_queue_incoming_pods_total for the moves that
//! are not cluster events (those carry their ClusterEvent's label).
inline constexpr std::string_view kActiveQueue = "active";
inline constexpr std::string_view kBackoffQueue = "backoff";
inline constexpr std::string_view kUnschedulableQueue = "unschedulable";
inline constexpr std::string_view kEventUnschedulablePodAdd = "UnschedulablePodAdd";
inline constexpr std::string_view kEventUnschedulablePodUpdate = "UnschedulablePodUpdate";
inline constexpr std::string_view kEventScheduleAttemptFailure = "ScheduleAttemptFailure";
inline constexpr std::string_view kEventBackoffComplete = "BackoffComplete";
inline constexpr std::string_view kEventForceActivate = "ForceActivate";

//! What the queue needs to know about one scheduler profile.
struct ProfileQueueingConfig {
  //! The profile's PreEnqueue plugins, in configuration order. Not owned; must outlive the queue.
  std::vector<framework::PreEnqueuePlugin*> pre_enqueue_plugins;
  //! Plugin name → the events it registered (EnqueueExtensions::EventsToRegister) with their
  //! hints. A rejecting plugin absent from this map is never woken by a specific event (only by
  //! wildcard events such as UnschedulableTimeout): the framework is expected to register plugins
  //! that do not implement EnqueueExtensions with a wildcard event, as upstream does.
  std::map<std::string, std::vector<framework::ClusterEventWithHint>, std::less<>> plugin_events;
};

//! Where a pending pod is.
enum class SubQueue { kActive, kBackoff, kUnschedulable };

std::string_view ToString(SubQueue q);

struct PendingPod {
  framework::QueuedPodInfo info;
  SubQueue queue = SubQueue::kActive;
};

class SchedulingQueue final : public framework::PodNominator {
 public:
  //! `profiles` is keyed by profile (scheduler) name; a pod uses the entry named by its
  //! spec.schedulerName. `clock` must outlive the queue.
  SchedulingQueue(LessFn less, const util::Clock& clock,
                  std::map<std::string, ProfileQueueingConfig, std::less<>> profiles, Options options = {});
  ~SchedulingQueue() override;

  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  // ---- Pending pod lifecycle (informer events for unscheduled pods) ----

  //! A new pending pod: runs the profile's PreEnqueue plugins; the pod goes to activeQ, or to
  //! the unschedulable pool marked gated when one of them rejects it. Registers the pod's
  //! status.nominatedNodeName with the nominator when it enters activeQ. A pod already queued
  //! under the same uid is replaced (unless the new one is gated, which keeps the old entry).
  void Add(framework::PodInfoPtr pod);

  //! A pending pod changed. In flight: the change is recorded as events for its return. In
  //! activeQ/backoffQ: updated in place. In the pool: updated, then moved to activeQ/backoffQ if
  //! a plugin that rejected (or gated) it says the change may help (the hints of its rejecting
  //! plugins for the update's UnscheduledPod events). Unknown: added as by Add. The nominator
  //! follows the pod.
  void Update(const api::Pod& old_pod, framework::PodInfoPtr new_pod);

  //! The pod left (deleted or bound elsewhere): removed from whichever sub-queue holds it and
  //! from the nominator. In-flight pods are only forgotten by Done.
  void Delete(const api::Pod& pod);

  // ---- Scheduling cycle ----

  //! Non-blocking pop (for the simulator): the head of activeQ (or, with pop_from_backoff_q and
  //! an empty activeQ, of backoffQ), or nullopt. Increments the pod's attempts and the
  //! scheduling cycle, and marks the pod in flight until Done.
  std::optional<framework::QueuedPodInfo> Pop();

  //! Blocking pop (for `run`): waits until a pod can be popped. Returns nullopt when `stop` is
  //! requested, or when the queue is closed and nothing is left to pop.
  std::optional<framework::QueuedPodInfo> PopBlocking(std::stop_token stop);

  //! Wakes blocked PopBlocking calls for good and ends in-flight tracking.
  void Close();

  //! Returns a pod whose attempt failed (`info` as popped, with unschedulable_plugins and
  //! pending_plugins set by the failed cycle; none means an error). Sets its timestamp to now,
  //! then: no rejecting plugin → backoffQ (activeQ if its backoff already expired); otherwise,
  //! if an event recorded while it was in flight may make it schedulable per its rejecting
  //! plugins' registered events and hints → backoffQ/activeQ (activeQ at once when a Pending
  //! plugin says Queue); otherwise the unschedulable pool. Always ends the pod's in-flight
  //! tracking (Done). Error when the pod is already queued (it is left where it is).
  //! `pod_scheduling_cycle` is SchedulingCycle() when the pod was popped (kept for upstream's
  //! signature; with queueing hints it does not affect the outcome).
  framework::Status AddUnschedulableIfNotPresent(framework::QueuedPodInfo info, int64_t pod_scheduling_cycle);

  //! Ends in-flight tracking of a popped pod (after binding, or after it was requeued). Idempotent.
  void Done(std::string_view uid);

  //! Number of pods popped so far.
  int64_t SchedulingCycle() const;

  // ---- Cluster events ----

  //! Moves pool pods that `event` may make schedulable: a pod moves when one of its rejecting
  //! plugins registered an event covering `event` and that registration's hint (if any) says
  //! Queue; wildcard events (UnschedulableTimeout, ForceActivate) move every pod (ForceActivate
  //! with objects.new_pod only that pod). Gated pods move only on events their gating plugin
  //! registered. A moved pod goes to backoffQ while it still backs off, else to activeQ. The
  //! event is also recorded for in-flight pods. Objects are copied if they must be kept.
  //! `pre_check`, when given, limits the move to the pool pods it accepts (upstream's
  //! PreEnqueueCheck: a failed binding cycle moves every pod but the one that failed).
  void MoveAllToActiveOrBackoffQueue(const framework::ClusterEvent& event, const framework::EventObjects& objects,
                                     const std::function<bool(const api::Pod&)>& pre_check = nullptr);

  //! A pod was bound (AssignedPodAdd, new_pod = pod).
  void AssignedPodAdded(const api::Pod& pod);
  //! A bound pod changed: one event per PodSchedulingPropertiesChange(new, old).
  void AssignedPodUpdated(const api::Pod& old_pod, const api::Pod& new_pod);
  //! A bound pod was deleted (AssignedPodDelete, old_pod = pod).
  void AssignedPodDeleted(const api::Pod& pod);

  //! Moves these pods from the pool or backoffQ to activeQ (PreEnqueue permitting). For a pod
  //! that is in flight instead, records a ForceActivate event for it so it is requeued when it
  //! comes back. Unknown pods are ignored.
  //! `restamp`: the pods' queue timestamps become now, so that among pods of equal priority they
  //! pop in the order given (a batch placement's plan order).
  void Activate(const std::vector<std::shared_ptr<const api::Pod>>& pods, bool restamp = false);

  //! Moves the backoffQ pods whose backoff has expired on the clock to activeQ.
  void FlushBackoffQCompleted();
  //! Moves pool pods that have waited longer than max_in_unschedulable_pods_ns (since their
  //! timestamp) as an UnschedulableTimeout event would.
  void FlushUnschedulablePodsLeftover();

  //! The earliest clock time at which one of the flushes would move a pod: the first backoff
  //! expiry in backoffQ, or the first unschedulable timeout of a non-gated pool pod (gated pods
  //! are not counted: a timeout would only gate them again). May be <= now, meaning a flush
  //! would move something right away. nullopt when no timer is pending.
  std::optional<int64_t> NextTimerNs() const;

  // ---- Introspection ----

  //! Every queued pod (not in-flight ones): activeQ in pop order, then backoffQ in expiry order,
  //! then the pool by uid.
  std::vector<PendingPod> PendingPods() const;
  //! The queued pod with this uid, or nullopt.
  std::optional<PendingPod> Get(std::string_view uid) const;
  size_t NumActive() const;
  size_t NumBackoff() const;
  //! Pool size, gated pods included.
  size_t NumUnschedulable() const;
  //! The sub-queue sizes and the pool's rejecting plugins, in one look (for /metrics): fills the
  //! queue fields of `state`. Pool pods count under each plugin that rejected or gated them, with
  //! their profile (upstream's unschedulable_pods).
  void FillMetricsState(metrics::SchedulerState& state) const;
  bool HasInFlight() const;
  //! Pods popped and not yet Done, by uid.
  std::vector<std::string> InFlightPods() const;
  //! The in-flight list for debugging and tests, oldest first: "pod:<uid>" for each in-flight
  //! pod, the event label for each event recorded since the oldest of them was popped.
  std::vector<std::string> InFlightEntries() const;

  //! Backoff after `attempts` failed attempts (upstream's calculateBackoffDuration): 0 for 0
  //! attempts, else initial * 2^(attempts-1) capped at max.
  int64_t BackoffDurationNs(int attempts) const;

  // ---- framework::PodNominator ----

  //! Nominates `pod` to `node_name` (preemption's choice), replacing any earlier nomination; an
  //! empty node_name clears it (upstream's ModeOverride). To keep the nomination the pod carries
  //! in status.nominatedNodeName (ModeNoop), pass that name. Bound pods are never nominated.
  //! Re-registers the pod's nomination from its status after a failed cycle whose PostFilter
  //! asked for no change (NominatingMode::kNoop); a plan's in-memory nomination survives it.
  void KeepNomination(framework::PodInfoPtr pod);
  void AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name) override;
  void DeleteNominatedPodIfExists(const api::Pod& pod) override;
  //! A copy of the pods nominated to node_name, in nomination order.
  std::vector<framework::PodInfoPtr> NominatedPodsForNode(const std::string& node_name) const override;
  bool HasNominatedPods() const override { return nominated_count_.load(std::memory_order_acquire) > 0; }
  //! The node the nominator holds this pod nominated to (which may be ahead of the pod's
  //! status.nominatedNodeName: the status update arrives after the nomination), or nullopt.
  std::optional<std::string> NominatedNodeOf(const api::Pod& pod) const override;
  void AddPlannedPod(framework::PodInfoPtr pod, const std::string& node_name) override;
  bool IsPlanned(const api::Pod& pod) const override;
  void ExpectReplacement(framework::PodInfoPtr placeholder, const std::string& node_name,
                         std::function<bool(const framework::PodInfo&)> is_replacement) override;
  framework::PodInfoPtr ReplacementOf(const api::Pod& placeholder) const override;

 private:
  enum class Where { kNone, kActive, kBackoff, kErrorBackoff, kUnschedulable };
  // How a pool pod should be requeued, weakest first (upstream's queueingStrategy).
  enum class Strategy { kSkip, kAfterBackoff, kImmediately };

  struct Item {
    framework::QueuedPodInfo info;
    std::string key;
    Where where = Where::kNone;
    // Insertion order into the current sub-queue: FIFO among equals, for determinism.
    uint64_t seq = 0;
    // Backoff expiry cached when the item entered backoffQ (the ordering key there).
    int64_t backoff_expiry_ns = 0;
    // Whether info.initial_attempt_timestamp_ns has been set (0 is a valid virtual time).
    bool initial_attempt_set = false;
    // The pod's profile (schedulerName is immutable), and the events its gating PreEnqueue plugin
    // registered (null when not gated or none): every cluster event checks each gated pod in the
    // pool, and a batch holds thousands, so the lookups are made once.
    const ProfileQueueingConfig* profile = nullptr;
    const std::vector<framework::ClusterEventWithHint>* gating_events = nullptr;
    // Where IndexPoolLocked filed the item (pool_ungated_ or pool_gated_[pool_index]).
    bool pool_gated = false;
    const std::vector<framework::ClusterEventWithHint>* pool_index = nullptr;
  };
  struct ActiveLess {
    const SchedulingQueue* q;
    bool operator()(const Item* a, const Item* b) const;
  };
  struct BackoffLess {
    const SchedulingQueue* q;
    bool operator()(const Item* a, const Item* b) const;
  };
  // An event kept for in-flight pods, owning copies of its objects.
  struct RecordedEvent {
    framework::ClusterEvent event;
    std::shared_ptr<const api::Pod> old_pod, new_pod;
    std::shared_ptr<const api::Node> old_node, new_node;
    std::shared_ptr<const api::PodGroup> old_pod_group, new_pod_group;
    framework::EventObjects Objects() const {
      return {old_pod.get(), new_pod.get(), old_node.get(), new_node.get(), old_pod_group.get(), new_pod_group.get()};
    }
  };
  // One entry of the in-flight list: a popped pod (pod_key set) or an event.
  struct InFlightEntry {
    std::string pod_key;
    std::shared_ptr<const RecordedEvent> event;
  };

  static bool IsWildCard(const framework::ClusterEvent& event);

  const ProfileQueueingConfig* ProfileFor(const api::Pod& pod) const;
  Item* FindLocked(std::string_view key) const;
  Item* NewItemLocked(framework::QueuedPodInfo info);
  void EraseItemLocked(Item* item);
  void DetachLocked(Item* item);
  void AttachActiveLocked(Item* item, bool keep_seq = false);
  void AttachBackoffLocked(Item* item);
  void AttachUnschedulableLocked(Item* item);

  std::optional<int64_t> BackoffExpiryLocked(const framework::QueuedPodInfo& info) const;
  bool IsBackingOffLocked(const framework::QueuedPodInfo& info) const;
  int64_t AlignToWindow(int64_t t) const;

  void RunPreEnqueuePluginsLocked(framework::QueuedPodInfo& info);
  //! RunPreEnqueuePluginsLocked on a queued item, refreshing what it caches about its gating.
  void RunPreEnqueuePluginsLocked(Item* item);
  void IndexPoolLocked(Item* item);
  void RefreshGatingEventsLocked(Item* item) const;
  void UnindexPoolLocked(Item* item);
  // `event` labels the move in scheduler_queue_incoming_pods_total.
  bool MoveToActiveLocked(Item* item, bool moves_from_backoff, bool nominate, std::string_view event);
  bool MoveToBackoffLocked(Item* item, std::string_view event);
  Where RequeueLocked(Item* item, Strategy strategy, std::string_view event);
  void ObserveIncomingLocked(std::string_view queue, std::string_view event) const;

  bool IsEventOfInterestLocked(const framework::ClusterEvent& event) const;
  Strategy IsPodWorthRequeuingLocked(const framework::QueuedPodInfo& info, const framework::ClusterEvent& event,
                                     const framework::EventObjects& objects) const;
  Strategy HintForInFlightPodLocked(const framework::QueuedPodInfo& info) const;
  void MovePodsLocked(const std::vector<Item*>& items, const framework::ClusterEvent& event,
                      const framework::EventObjects& objects);
  void RecordEventIfAnyInFlightLocked(const framework::ClusterEvent& event, const framework::EventObjects& objects);
  void RecordEventsIfPodInFlightLocked(std::string_view key, const std::vector<framework::ClusterEvent>& events,
                                       const api::Pod& old_pod, const std::shared_ptr<const api::Pod>& new_pod);
  void DoneLocked(std::string_view key);
  std::optional<framework::QueuedPodInfo> PopLocked();
  bool CanPopLocked() const;

  const LessFn less_;
  const util::Clock& clock_;
  const std::map<std::string, ProfileQueueingConfig, std::less<>> profiles_;
  const Options options_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;  // signalled (under mu_) when a pod may be poppable, or on Close

  // All queued items by key; the sub-queues below hold pointers into it. Guarded by mu_.
  std::unordered_map<std::string, std::unique_ptr<Item>> items_;
  std::set<Item*, ActiveLess> active_;                       // guarded by mu_
  std::set<Item*, BackoffLess> backoff_;                     // rejected by plugins; guarded by mu_
  std::set<Item*, BackoffLess> error_backoff_;               // failed with no rejecting plugin; mu_
  std::map<std::string, Item*, std::less<>> unschedulable_;  // by key; guarded by mu_
  // The pool split by what may move its pods, so that an event visits only the pods it may move:
  // those not gated, and per set of events a gating plugin registered, the pods it gates (a batch
  // holds thousands gated, and most events concern none of them). Guarded by mu_.
  std::set<Item*> pool_ungated_;
  std::map<const std::vector<framework::ClusterEventWithHint>*, std::set<Item*>> pool_gated_;
  uint64_t next_seq_ = 0;         // guarded by mu_
  int64_t scheduling_cycle_ = 0;  // guarded by mu_
  bool closed_ = false;           // guarded by mu_

  // In-flight pods and the events seen since each was popped, in arrival order (upstream's
  // inFlightEvents list); events before the oldest in-flight pod are pruned. Guarded by mu_.
  std::list<InFlightEntry> in_flight_events_;
  std::unordered_map<std::string, std::list<InFlightEntry>::iterator> in_flight_pods_;

  Nominator nominator_;  // guarded by mu_

  // nominator_.size(), updated under mu_ after each change, read without the lock.

  std::atomic<size_t> nominated_count_{0};
  // Planned pods among them: IsPlanned answers without the lock while there are none.
  std::atomic<size_t> planned_count_{0};
};

}  // namespace kubesched::queue
