#include "queue/scheduling_queue.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "framework/extender.h"
#include "queue/pod_events.h"

namespace kubesched::queue {
namespace {

using framework::ClusterEvent;
using framework::EventObjects;
using framework::QueuedPodInfo;

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::string_view ToString(SubQueue q) {
  switch (q) {
    case SubQueue::kActive:
      return "Active";
    case SubQueue::kBackoff:
      return "Backoff";
    case SubQueue::kUnschedulable:
      return "Unschedulable";
  }
  return "Unknown";
}

// ---------------------------------------------------------------------------------------------
// Orderings

bool SchedulingQueue::ActiveLess::operator()(const Item* a, const Item* b) const {
  if (q->less_(a->info, b->info)) return true;
  if (q->less_(b->info, a->info)) return false;
  return a->seq < b->seq;
}

bool SchedulingQueue::BackoffLess::operator()(const Item* a, const Item* b) const {
  if (a->backoff_expiry_ns != b->backoff_expiry_ns) return a->backoff_expiry_ns < b->backoff_expiry_ns;
  // Within one ordering window, pop-from-backoffQ takes pods in activeQ order.
  if (q->options_.pop_from_backoff_q) {
    if (q->less_(a->info, b->info)) return true;
    if (q->less_(b->info, a->info)) return false;
  }
  return a->seq < b->seq;
}

// ---------------------------------------------------------------------------------------------
// Construction

SchedulingQueue::SchedulingQueue(LessFn less, const util::Clock& clock,
                                 std::map<std::string, ProfileQueueingConfig, std::less<>> profiles, Options options)
    : less_(std::move(less)),
      clock_(clock),
      profiles_(std::move(profiles)),
      options_(options),
      active_(ActiveLess{this}),
      backoff_(BackoffLess{this}),
      error_backoff_(BackoffLess{this}) {}

SchedulingQueue::~SchedulingQueue() = default;

bool SchedulingQueue::IsWildCard(const ClusterEvent& event) {
  return event.resource == framework::EventResource::kWildCard && event.action == framework::action::kAll;
}

const ProfileQueueingConfig* SchedulingQueue::ProfileFor(const api::Pod& pod) const {
  auto it = profiles_.find(pod.spec.scheduler_name);
  return it == profiles_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Item bookkeeping (all under mu_)

SchedulingQueue::Item* SchedulingQueue::FindLocked(std::string_view key) const {
  auto it = items_.find(std::string(key));
  return it == items_.end() ? nullptr : it->second.get();
}

SchedulingQueue::Item* SchedulingQueue::NewItemLocked(QueuedPodInfo info) {
  auto item = std::make_unique<Item>();
  item->key = PodKey(info.pod());
  item->profile = ProfileFor(info.pod());
  item->info = std::move(info);
  Item* raw = item.get();
  items_[raw->key] = std::move(item);
  return raw;
}

void SchedulingQueue::EraseItemLocked(Item* item) {
  DetachLocked(item);
  const std::string key = item->key;  // the map entry owns item
  items_.erase(key);
}

void SchedulingQueue::DetachLocked(Item* item) {
  switch (item->where) {
    case Where::kNone:
      break;
    case Where::kActive:
      active_.erase(item);
      break;
    case Where::kBackoff:
      backoff_.erase(item);
      break;
    case Where::kErrorBackoff:
      error_backoff_.erase(item);
      break;
    case Where::kUnschedulable:
      unschedulable_.erase(item->key);
      UnindexPoolLocked(item);
      break;
  }
  item->where = Where::kNone;
}

void SchedulingQueue::AttachActiveLocked(Item* item, bool keep_seq) {
  if (!keep_seq) item->seq = next_seq_++;
  item->where = Where::kActive;
  active_.insert(item);
}

void SchedulingQueue::AttachBackoffLocked(Item* item) {
  item->seq = next_seq_++;
  // Pods that never tried sort first: they owe no backoff.
  item->backoff_expiry_ns = BackoffExpiryLocked(item->info).value_or(INT64_MIN);
  // Pods with no rejecting plugin failed with an error; they are kept apart as upstream's
  // podErrorBackoffQ (pop-from-backoffQ never takes them early).
  const bool error = item->info.unschedulable_plugins.empty() && item->info.pending_plugins.empty();
  item->where = error ? Where::kErrorBackoff : Where::kBackoff;
  (error ? error_backoff_ : backoff_).insert(item);
}

void SchedulingQueue::AttachUnschedulableLocked(Item* item) {
  item->where = Where::kUnschedulable;
  unschedulable_[item->key] = item;
  IndexPoolLocked(item);
}

void SchedulingQueue::IndexPoolLocked(Item* item) {
  RefreshGatingEventsLocked(item);
  item->pool_index = item->info.gated ? item->gating_events : nullptr;
  item->pool_gated = item->info.gated;
  if (item->pool_gated)
    pool_gated_[item->pool_index].insert(item);
  else
    pool_ungated_.insert(item);
}

void SchedulingQueue::UnindexPoolLocked(Item* item) {
  if (!item->pool_gated) {
    pool_ungated_.erase(item);
    return;
  }
  auto it = pool_gated_.find(item->pool_index);
  if (it == pool_gated_.end()) return;
  it->second.erase(item);
  if (it->second.empty()) pool_gated_.erase(it);
}

// ---------------------------------------------------------------------------------------------
// Backoff

int64_t SchedulingQueue::BackoffDurationNs(int attempts) const {
  if (attempts <= 0) return 0;
  int64_t d = options_.pod_initial_backoff_ns;
  for (int i = 1; i < attempts; ++i) {
    // Compare before doubling so that the doubling cannot overflow.
    if (d > options_.pod_max_backoff_ns - d) return options_.pod_max_backoff_ns;
    d += d;
  }
  return d;
}

int64_t SchedulingQueue::AlignToWindow(int64_t t) const {
  if (!options_.pop_from_backoff_q) return t;
  return FloorDiv(t, kBackoffOrderingWindowNs) * kBackoffOrderingWindowNs;
}

std::optional<int64_t> SchedulingQueue::BackoffExpiryLocked(const QueuedPodInfo& info) const {
  if (info.attempts == 0) return std::nullopt;
  return AlignToWindow(info.timestamp_ns + BackoffDurationNs(info.attempts));
}

bool SchedulingQueue::IsBackingOffLocked(const QueuedPodInfo& info) const {
  std::optional<int64_t> expiry = BackoffExpiryLocked(info);
  if (!expiry) return false;
  const int64_t now = clock_.NowNs();
  // With ordering windows a pod whose expiry falls in the current window still backs off.
  if (options_.pop_from_backoff_q) return *expiry >= AlignToWindow(now);
  return *expiry > now;
}

// ---------------------------------------------------------------------------------------------
// PreEnqueue and moves between sub-queues

void SchedulingQueue::RunPreEnqueuePluginsLocked(QueuedPodInfo& info) {
  const ProfileQueueingConfig* profile = ProfileFor(info.pod());
  if (profile == nullptr || profile->pre_enqueue_plugins.empty()) {
    info.gated = false;
    info.gating_plugin.clear();
    info.gating_message.clear();
    return;
  }
  auto run = [&](framework::PreEnqueuePlugin* plugin) {
    framework::Status s;
    // A plugin's exception gates the pod, as an Error status does upstream (framework.cc's Guard
    // for the other points).
    try {
      s = plugin->PreEnqueue(info.pod());
    } catch (const std::exception& e) {
      s = framework::Status::Error(std::string("PreEnqueue: exception: ") + e.what());
    } catch (...) {
      s = framework::Status::Error("PreEnqueue: non-standard exception");
    }
    if (s.IsSuccess()) return true;
    std::string name(plugin->Name());
    // The gating plugin also counts as rejecting, so that its events requeue the pod.
    if (!Contains(info.unschedulable_plugins, name)) info.unschedulable_plugins.push_back(name);
    info.gated = true;
    info.gating_plugin = std::move(name);
    info.gating_message = s.Message();
    return false;
  };
  // The plugin that gated the pod last time is the likeliest to gate it again: run it first.
  framework::PreEnqueuePlugin* gating = nullptr;
  if (info.gated) {
    for (auto* p : profile->pre_enqueue_plugins) {
      if (p->Name() == info.gating_plugin) gating = p;
    }
    if (gating != nullptr && !run(gating)) return;
  }
  for (auto* p : profile->pre_enqueue_plugins) {
    if (p == gating) continue;
    if (!run(p)) return;
  }
  info.gated = false;
  info.gating_plugin.clear();
  info.gating_message.clear();
}

void SchedulingQueue::RunPreEnqueuePluginsLocked(Item* item) {
  const bool in_pool = item->where == Where::kUnschedulable;
  if (in_pool) UnindexPoolLocked(item);
  RunPreEnqueuePluginsLocked(item->info);
  RefreshGatingEventsLocked(item);
  if (in_pool) IndexPoolLocked(item);
}

void SchedulingQueue::RefreshGatingEventsLocked(Item* item) const {
  item->gating_events = nullptr;
  if (item->info.gated && item->profile != nullptr) {
    auto it = item->profile->plugin_events.find(item->info.gating_plugin);
    if (it != item->profile->plugin_events.end()) item->gating_events = &it->second;
  }
}

void SchedulingQueue::ObserveIncomingLocked(std::string_view queue, std::string_view event) const {
  if (options_.metrics) options_.metrics->ObserveIncomingPod(queue, event);
}

bool SchedulingQueue::MoveToActiveLocked(Item* item, bool moves_from_backoff, bool nominate, std::string_view event) {
  // With pop-from-backoffQ, PreEnqueue already ran when the pod entered backoffQ.
  if (!(options_.pop_from_backoff_q && moves_from_backoff)) RunPreEnqueuePluginsLocked(item);
  if (item->info.gated) {
    // A pod already queued somewhere stays there; a detached one waits in the pool.
    if (item->where == Where::kNone) {
      AttachUnschedulableLocked(item);
      ObserveIncomingLocked(kUnschedulableQueue, event);
    }
    return false;
  }
  if (!item->initial_attempt_set) {
    item->info.initial_attempt_timestamp_ns = clock_.NowNs();
    item->initial_attempt_set = true;
  }
  DetachLocked(item);
  AttachActiveLocked(item);
  ObserveIncomingLocked(kActiveQueue, event);
  if (nominate) nominator_.Add(item->info.pod_info, std::nullopt);
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
  return true;
}

bool SchedulingQueue::MoveToBackoffLocked(Item* item, std::string_view event) {
  if (options_.pop_from_backoff_q) {
    RunPreEnqueuePluginsLocked(item);
    if (item->info.gated) {
      if (item->where == Where::kNone) {
        AttachUnschedulableLocked(item);
        ObserveIncomingLocked(kUnschedulableQueue, event);
      }
      return false;
    }
  }
  DetachLocked(item);
  AttachBackoffLocked(item);
  ObserveIncomingLocked(kBackoffQueue, event);
  return true;
}

SchedulingQueue::Where SchedulingQueue::RequeueLocked(Item* item, Strategy strategy, std::string_view event) {
  if (strategy == Strategy::kSkip) {
    if (item->where == Where::kNone) {
      AttachUnschedulableLocked(item);
      ObserveIncomingLocked(kUnschedulableQueue, event);
    }
    return Where::kUnschedulable;
  }
  // The pod may have finished its backoff while it waited in the pool.
  if (strategy == Strategy::kAfterBackoff && IsBackingOffLocked(item->info)) {
    return MoveToBackoffLocked(item, event) ? item->where : Where::kUnschedulable;
  }
  return MoveToActiveLocked(item, false, false, event) ? Where::kActive : Where::kUnschedulable;
}

// ---------------------------------------------------------------------------------------------
// Events and hints

bool SchedulingQueue::IsEventOfInterestLocked(const ClusterEvent& event) const {
  if (IsWildCard(event)) return true;
  for (const auto& [name, profile] : profiles_) {
    for (const auto& [plugin, registered] : profile.plugin_events) {
      for (const auto& r : registered) {
        if (r.event.Covers(event)) return true;
      }
    }
  }
  return false;
}

SchedulingQueue::Strategy SchedulingQueue::IsPodWorthRequeuingLocked(const QueuedPodInfo& info,
                                                                     const ClusterEvent& event,
                                                                     const EventObjects& objects) const {
  if (info.unschedulable_plugins.empty() && info.pending_plugins.empty()) {
    // Failed with an error, not rejected: any event is worth a retry.
    return Strategy::kAfterBackoff;
  }
  if (IsWildCard(event)) {
    // A wildcard event carrying a pod (ForceActivate from Activate) targets that pod only.
    if (objects.new_pod != nullptr) {
      return PodKey(*objects.new_pod) == PodKey(info.pod()) ? Strategy::kAfterBackoff : Strategy::kSkip;
    }
    if (objects.new_node != nullptr) return Strategy::kSkip;
    return Strategy::kAfterBackoff;
  }
  // Extenders register no events: a pod an extender rejected is retried on any event, as
  // upstream's framework.ExtenderName among its unschedulable plugins, except an update of the pod
  // that changed nothing scheduling reads (its status: the scheduler's own condition write would
  // otherwise send it straight back to backoff after every attempt).
  if (Contains(info.unschedulable_plugins, framework::kExtenderName) &&
      !(event.action == framework::action::kUpdatePodOther && objects.new_pod != nullptr &&
        PodKey(*objects.new_pod) == PodKey(info.pod()))) {
    return Strategy::kAfterBackoff;
  }
  const ProfileQueueingConfig* profile = ProfileFor(info.pod());
  if (profile == nullptr) return Strategy::kAfterBackoff;  // unknown profile: never strand the pod

  Strategy strategy = Strategy::kSkip;
  auto consider = [&](const std::string& plugin, bool pending) -> bool {  // true: stop, Immediately
    auto it = profile->plugin_events.find(plugin);
    if (it == profile->plugin_events.end()) return false;
    for (const auto& r : it->second) {
      if (!r.event.Covers(event)) continue;
      framework::QueueingHint hint = r.hint ? r.hint(info.pod(), objects) : framework::QueueingHint::kQueue;
      if (hint == framework::QueueingHint::kSkip) continue;
      // Queue from a Pending plugin skips backoff; from an unschedulable plugin it does not.
      if (pending) {
        strategy = Strategy::kImmediately;
        return true;
      }
      strategy = Strategy::kAfterBackoff;
      return false;
    }
    return false;
  };
  for (const auto& plugin : info.pending_plugins) {
    if (consider(plugin, true)) return strategy;
  }
  for (const auto& plugin : info.unschedulable_plugins) {
    if (Contains(info.pending_plugins, plugin)) continue;
    consider(plugin, false);
    if (strategy == Strategy::kAfterBackoff) return strategy;
  }
  return strategy;
}

SchedulingQueue::Strategy SchedulingQueue::HintForInFlightPodLocked(const QueuedPodInfo& info) const {
  if (info.unschedulable_plugins.empty() && info.pending_plugins.empty()) return Strategy::kAfterBackoff;
  auto it = in_flight_pods_.find(PodKey(info.pod()));
  // Not popped (a caller bug upstream logs): retry rather than strand the pod.
  if (it == in_flight_pods_.end()) return Strategy::kAfterBackoff;
  Strategy strategy = Strategy::kSkip;
  for (auto e = std::next(it->second); e != in_flight_events_.end(); ++e) {
    if (!e->event) continue;  // another in-flight pod
    Strategy s = IsPodWorthRequeuingLocked(info, e->event->event, e->event->Objects());
    if (s == Strategy::kImmediately) return s;
    if (s == Strategy::kAfterBackoff) {
      strategy = s;
      if (info.pending_plugins.empty()) return s;
    }
  }
  return strategy;
}

void SchedulingQueue::MovePodsLocked(const std::vector<Item*>& items, const ClusterEvent& event,
                                     const EventObjects& objects) {
  if (!IsEventOfInterestLocked(event)) return;
  bool activated = false;
  for (Item* item : items) {
    if (item->info.gated &&
        (item->gating_events == nullptr ||
         std::none_of(item->gating_events->begin(), item->gating_events->end(),
                      [&](const framework::ClusterEventWithHint& r) { return r.event.Covers(event); })))
      continue;
    Strategy s = IsPodWorthRequeuingLocked(item->info, event, objects);
    if (s == Strategy::kSkip) continue;
    Where w = RequeueLocked(item, s, event.label);
    if (w == Where::kActive || (options_.pop_from_backoff_q && w == Where::kBackoff)) activated = true;
  }
  RecordEventIfAnyInFlightLocked(event, objects);
  if (activated) cv_.notify_all();
}

void SchedulingQueue::RecordEventIfAnyInFlightLocked(const ClusterEvent& event, const EventObjects& objects) {
  if (in_flight_pods_.empty()) return;
  auto rec = std::make_shared<RecordedEvent>();
  rec->event = event;
  if (objects.old_pod) rec->old_pod = std::make_shared<const api::Pod>(*objects.old_pod);
  if (objects.new_pod) rec->new_pod = std::make_shared<const api::Pod>(*objects.new_pod);
  if (objects.old_node) rec->old_node = std::make_shared<const api::Node>(*objects.old_node);
  if (objects.new_node) rec->new_node = std::make_shared<const api::Node>(*objects.new_node);
  if (objects.old_pod_group) rec->old_pod_group = std::make_shared<const api::PodGroup>(*objects.old_pod_group);
  if (objects.new_pod_group) rec->new_pod_group = std::make_shared<const api::PodGroup>(*objects.new_pod_group);
  in_flight_events_.push_back({"", std::move(rec)});
}

void SchedulingQueue::RecordEventsIfPodInFlightLocked(std::string_view key, const std::vector<ClusterEvent>& events,
                                                      const api::Pod& old_pod,
                                                      const std::shared_ptr<const api::Pod>& new_pod) {
  auto old_copy = std::make_shared<const api::Pod>(old_pod);
  for (const auto& e : events) {
    auto rec = std::make_shared<RecordedEvent>();
    rec->event = e;
    rec->old_pod = old_copy;
    rec->new_pod = new_pod;
    in_flight_events_.push_back({"", std::move(rec)});
  }
}

// ---------------------------------------------------------------------------------------------
// Pending pod lifecycle

void SchedulingQueue::Add(framework::PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  // A replacement a plan waits for takes over the room held for it before any PreEnqueue plugin
  // decides about it (a batch must not place it elsewhere).
  if (nominator_.expected_size() > 0 && nominator_.Claim(pod)) {
    nominated_count_.store(nominator_.size(), std::memory_order_release);
    planned_count_.store(nominator_.planned_size(), std::memory_order_release);
  }
  QueuedPodInfo info;
  info.pod_info = std::move(pod);
  info.timestamp_ns = clock_.NowNs();
  const std::string key = PodKey(info.pod());
  Item* existing = FindLocked(key);
  if (existing != nullptr) {
    // Decide on a scratch copy so that a gated re-add leaves the queued entry untouched.
    RunPreEnqueuePluginsLocked(info);
    if (info.gated) return;
    EraseItemLocked(existing);
  }
  Item* item = NewItemLocked(std::move(info));
  if (MoveToActiveLocked(item, false, /*nominate=*/true, kEventUnschedulablePodAdd)) cv_.notify_all();
}

void SchedulingQueue::Update(const api::Pod& old_pod, framework::PodInfoPtr new_pod) {
  std::lock_guard lock(mu_);
  const std::string key = PodKey(new_pod->pod());
  std::vector<ClusterEvent> events = PodSchedulingPropertiesChange(new_pod->pod(), old_pod);

  // Being scheduled: remember the change for when the pod comes back.
  if (in_flight_pods_.contains(key)) {
    RecordEventsIfPodInFlightLocked(key, events, old_pod, new_pod->pod_ptr());
    return;
  }

  Item* item = FindLocked(key);
  if (item != nullptr &&
      (item->where == Where::kActive || item->where == Where::kBackoff || item->where == Where::kErrorBackoff)) {
    // In place; the sets are re-sorted by reinserting (the less function may read the pod).
    Where where = item->where;
    DetachLocked(item);
    item->info.pod_info = new_pod;
    if (where == Where::kActive) {
      AttachActiveLocked(item, /*keep_seq=*/true);
    } else {
      item->where = where;
      (where == Where::kBackoff ? backoff_ : error_backoff_).insert(item);
    }
    nominator_.Update(old_pod, new_pod);
    nominated_count_.store(nominator_.size(), std::memory_order_release);
    planned_count_.store(nominator_.planned_size(), std::memory_order_release);
    return;
  }

  if (item != nullptr && item->where == Where::kUnschedulable) {
    item->info.pod_info = new_pod;
    nominator_.Update(old_pod, new_pod);
    nominated_count_.store(nominator_.size(), std::memory_order_release);
    planned_count_.store(nominator_.planned_size(), std::memory_order_release);
    // The strongest verdict over the update's events decides.
    Strategy strategy = Strategy::kSkip;
    std::string_view label = kEventUnschedulablePodUpdate;
    for (const auto& e : events) {
      Strategy s = IsPodWorthRequeuingLocked(item->info, e, {&old_pod, &new_pod->pod()});
      if (s > strategy) label = e.label;
      strategy = std::max(strategy, s);
    }
    Where w = RequeueLocked(item, strategy, label);
    if (w == Where::kActive || (options_.pop_from_backoff_q && w == Where::kBackoff)) cv_.notify_all();
    return;
  }

  // Unknown to the queue: treat as a new pending pod.
  QueuedPodInfo info;
  info.pod_info = std::move(new_pod);
  info.timestamp_ns = clock_.NowNs();
  Item* fresh = NewItemLocked(std::move(info));
  if (MoveToActiveLocked(fresh, false, /*nominate=*/true, kEventUnschedulablePodUpdate)) cv_.notify_all();
}

void SchedulingQueue::Delete(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  nominator_.Delete(pod);
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
  if (Item* item = FindLocked(PodKey(pod))) EraseItemLocked(item);
}

// ---------------------------------------------------------------------------------------------
// Scheduling cycle

bool SchedulingQueue::CanPopLocked() const {
  return !active_.empty() || (options_.pop_from_backoff_q && !backoff_.empty());
}

std::optional<QueuedPodInfo> SchedulingQueue::PopLocked() {
  while (CanPopLocked()) {
    Item* item = !active_.empty() ? *active_.begin() : *backoff_.begin();
    DetachLocked(item);
    if (in_flight_pods_.contains(item->key)) {
      // The same pod is already being scheduled (a caller bug): drop this copy, as upstream.
      EraseItemLocked(item);
      continue;
    }
    QueuedPodInfo info = std::move(item->info);
    if (!item->initial_attempt_set) {  // popped from backoffQ without ever being active
      info.initial_attempt_timestamp_ns = clock_.NowNs();
    }
    const std::string key = item->key;
    items_.erase(key);  // destroys item
    ++info.attempts;
    ++scheduling_cycle_;
    in_flight_pods_[key] = in_flight_events_.insert(in_flight_events_.end(), InFlightEntry{key, nullptr});
    return info;
  }
  return std::nullopt;
}

std::optional<QueuedPodInfo> SchedulingQueue::Pop() {
  std::lock_guard lock(mu_);
  return PopLocked();
}

std::optional<QueuedPodInfo> SchedulingQueue::PopBlocking(std::stop_token stop) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, stop, [&] { return CanPopLocked() || closed_; });
  if (stop.stop_requested()) return std::nullopt;
  return PopLocked();
}

void SchedulingQueue::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  std::vector<std::string> keys;
  for (const auto& [key, it] : in_flight_pods_) keys.push_back(key);
  for (const auto& key : keys) DoneLocked(key);
  cv_.notify_all();
}

framework::Status SchedulingQueue::AddUnschedulableIfNotPresent(QueuedPodInfo info, int64_t pod_scheduling_cycle) {
  std::lock_guard lock(mu_);
  const std::string key = PodKey(info.pod());
  if (Item* existing = FindLocked(key)) {
    DoneLocked(key);
    std::string where = existing->where == Where::kActive          ? "active queue"
                        : existing->where == Where::kUnschedulable ? "unschedulable queue"
                                                                   : "backoff queue";
    return framework::Status::Error("Pod " + info.pod().Key() + " is already present in the " + where);
  }
  info.timestamp_ns = clock_.NowNs();
  Strategy strategy = HintForInFlightPodLocked(info);
  Item* item = NewItemLocked(std::move(info));
  // It was popped, so its first attempt is on record already.
  item->initial_attempt_set = true;
  Where w = RequeueLocked(item, strategy, kEventScheduleAttemptFailure);
  DoneLocked(key);
  if (w == Where::kActive || (options_.pop_from_backoff_q && w == Where::kBackoff)) cv_.notify_all();
  return framework::Status::Success();
}

void SchedulingQueue::Done(std::string_view uid) {
  std::lock_guard lock(mu_);
  DoneLocked(uid);
}

void SchedulingQueue::DoneLocked(std::string_view key) {
  auto it = in_flight_pods_.find(std::string(key));
  if (it == in_flight_pods_.end()) return;
  in_flight_events_.erase(it->second);
  in_flight_pods_.erase(it);
  // Events older than every remaining in-flight pod can no longer matter.
  while (!in_flight_events_.empty() && in_flight_events_.front().event) in_flight_events_.pop_front();
}

int64_t SchedulingQueue::SchedulingCycle() const {
  std::lock_guard lock(mu_);
  return scheduling_cycle_;
}

// ---------------------------------------------------------------------------------------------
// Cluster events

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(const ClusterEvent& event, const EventObjects& objects,
                                                    const std::function<bool(const api::Pod&)>& pre_check) {
  std::lock_guard lock(mu_);
  if (!IsEventOfInterestLocked(event)) return;
  // The pods the event may move: every pod not gated, and the gated ones whose gating plugin
  // registered the event; in key order, as the pool is kept.
  std::vector<Item*> pool;
  auto consider = [&](Item* item) {
    if (!pre_check || pre_check(item->info.pod())) pool.push_back(item);
  };
  for (Item* item : pool_ungated_) consider(item);
  for (const auto& [events, items] : pool_gated_) {
    if (events == nullptr ||
        std::none_of(events->begin(), events->end(),
                     [&](const framework::ClusterEventWithHint& r) { return r.event.Covers(event); })) {
      continue;
    }
    for (Item* item : items) consider(item);
  }
  std::sort(pool.begin(), pool.end(), [](const Item* a, const Item* b) { return a->key < b->key; });
  MovePodsLocked(pool, event, objects);
}

void SchedulingQueue::AssignedPodAdded(const api::Pod& pod) {
  MoveAllToActiveOrBackoffQueue(framework::events::AssignedPodAdd(), {.new_pod = &pod});
}

void SchedulingQueue::AssignedPodUpdated(const api::Pod& old_pod, const api::Pod& new_pod) {
  for (const auto& e : PodSchedulingPropertiesChange(new_pod, old_pod)) {
    MoveAllToActiveOrBackoffQueue(e, {.old_pod = &old_pod, .new_pod = &new_pod});
  }
}

void SchedulingQueue::AssignedPodDeleted(const api::Pod& pod) {
  MoveAllToActiveOrBackoffQueue(framework::events::AssignedPodDelete(), {.old_pod = &pod});
}

void SchedulingQueue::Activate(const std::vector<std::shared_ptr<const api::Pod>>& pods, bool restamp) {
  std::lock_guard lock(mu_);
  bool activated = false;
  for (const auto& pod : pods) {
    const std::string key = PodKey(*pod);
    Item* item = FindLocked(key);
    if (item != nullptr && restamp && item->where == Where::kUnschedulable) item->info.timestamp_ns = clock_.NowNs();
    if (item != nullptr && item->where == Where::kUnschedulable) {
      activated |= MoveToActiveLocked(item, false, false, kEventForceActivate);
      continue;
    }
    if (item != nullptr && (item->where == Where::kBackoff || item->where == Where::kErrorBackoff)) {
      DetachLocked(item);
      activated |= MoveToActiveLocked(item, true, false, kEventForceActivate);
      continue;
    }
    if (item == nullptr && in_flight_pods_.contains(key)) {
      // Requeue it when it comes back, whatever rejects it.
      auto rec = std::make_shared<RecordedEvent>();
      rec->event = framework::events::ForceActivate();
      rec->new_pod = pod;
      in_flight_events_.push_back({"", std::move(rec)});
    }
  }
  if (activated) cv_.notify_all();
}

void SchedulingQueue::FlushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  bool activated = false;
  const int64_t now = clock_.NowNs();
  for (auto* set : {&backoff_, &error_backoff_}) {
    while (!set->empty()) {
      Item* item = *set->begin();
      const bool expired =
          options_.pop_from_backoff_q ? item->backoff_expiry_ns < AlignToWindow(now) : item->backoff_expiry_ns <= now;
      if (!expired) break;
      DetachLocked(item);
      activated |= MoveToActiveLocked(item, true, false, kEventBackoffComplete);
    }
  }
  if (activated) cv_.notify_all();
}

void SchedulingQueue::FlushUnschedulablePodsLeftover() {
  std::lock_guard lock(mu_);
  const int64_t now = clock_.NowNs();
  std::vector<Item*> expired;
  for (const auto& [key, item] : unschedulable_) {
    if (now - item->info.timestamp_ns > options_.max_in_unschedulable_pods_ns) expired.push_back(item);
  }
  if (!expired.empty()) MovePodsLocked(expired, framework::events::UnschedulableTimeout(), {});
}

std::optional<int64_t> SchedulingQueue::NextTimerNs() const {
  std::lock_guard lock(mu_);
  std::optional<int64_t> next;
  auto consider = [&](int64_t t) { next = next ? std::min(*next, t) : t; };
  for (const auto* set : {&backoff_, &error_backoff_}) {
    if (set->empty()) continue;
    const Item* head = *set->begin();
    if (head->backoff_expiry_ns == INT64_MIN) {
      consider(head->info.timestamp_ns);  // owes no backoff: flushable now
    } else {
      consider(options_.pop_from_backoff_q ? head->backoff_expiry_ns + kBackoffOrderingWindowNs
                                           : head->backoff_expiry_ns);
    }
  }
  for (const auto& [key, item] : unschedulable_) {
    if (item->info.gated) continue;
    consider(item->info.timestamp_ns + options_.max_in_unschedulable_pods_ns + 1);
  }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Introspection

std::vector<PendingPod> SchedulingQueue::PendingPods() const {
  std::lock_guard lock(mu_);
  std::vector<PendingPod> out;
  out.reserve(items_.size());
  for (const Item* item : active_) out.push_back({item->info, SubQueue::kActive});
  for (const Item* item : backoff_) out.push_back({item->info, SubQueue::kBackoff});
  for (const Item* item : error_backoff_) out.push_back({item->info, SubQueue::kBackoff});
  for (const auto& [key, item] : unschedulable_) out.push_back({item->info, SubQueue::kUnschedulable});
  return out;
}

std::optional<PendingPod> SchedulingQueue::Get(std::string_view uid) const {
  std::lock_guard lock(mu_);
  const Item* item = FindLocked(uid);
  if (item == nullptr) return std::nullopt;
  SubQueue q = item->where == Where::kActive          ? SubQueue::kActive
               : item->where == Where::kUnschedulable ? SubQueue::kUnschedulable
                                                      : SubQueue::kBackoff;
  return PendingPod{item->info, q};
}

size_t SchedulingQueue::NumActive() const {
  std::lock_guard lock(mu_);
  return active_.size();
}

size_t SchedulingQueue::NumBackoff() const {
  std::lock_guard lock(mu_);
  return backoff_.size() + error_backoff_.size();
}

size_t SchedulingQueue::NumUnschedulable() const {
  std::lock_guard lock(mu_);
  return unschedulable_.size();
}

void SchedulingQueue::FillMetricsState(metrics::SchedulerState& state) const {
  std::lock_guard lock(mu_);
  state.active = active_.size();
  state.backoff = backoff_.size() + error_backoff_.size();
  state.unschedulable = 0;
  state.gated = 0;
  for (const auto& [key, item] : unschedulable_) {
    const QueuedPodInfo& info = item->info;
    ++(info.gated ? state.gated : state.unschedulable);
    const std::string& profile = info.pod().spec.scheduler_name;
    // A pod counts once per plugin, whether it rejected the pod, left it Pending or gated it.
    std::set<std::string_view> plugins(info.unschedulable_plugins.begin(), info.unschedulable_plugins.end());
    plugins.insert(info.pending_plugins.begin(), info.pending_plugins.end());
    if (info.gated && !info.gating_plugin.empty()) plugins.insert(info.gating_plugin);
    for (std::string_view plugin : plugins) ++state.unschedulable_by_plugin[{std::string(plugin), profile}];
  }
}

bool SchedulingQueue::HasInFlight() const {
  std::lock_guard lock(mu_);
  return !in_flight_pods_.empty();
}

std::vector<std::string> SchedulingQueue::InFlightPods() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& e : in_flight_events_) {
    if (!e.event) out.push_back(e.pod_key);
  }
  return out;
}

std::vector<std::string> SchedulingQueue::InFlightEntries() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& e : in_flight_events_) out.push_back(e.event ? e.event->event.label : "pod:" + e.pod_key);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Nominator

void SchedulingQueue::AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name) {
  std::lock_guard lock(mu_);
  nominator_.Add(std::move(pod), node_name);
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
}

void SchedulingQueue::KeepNomination(framework::PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  nominator_.Add(std::move(pod), std::nullopt);
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
}

void SchedulingQueue::DeleteNominatedPodIfExists(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  nominator_.Delete(pod);
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
}

void SchedulingQueue::AddPlannedPod(framework::PodInfoPtr pod, const std::string& node_name) {
  std::lock_guard lock(mu_);
  nominator_.Add(std::move(pod), node_name, /*planned=*/true);
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
}

void SchedulingQueue::ExpectReplacement(framework::PodInfoPtr placeholder, const std::string& node_name,
                                        std::function<bool(const framework::PodInfo&)> is_replacement) {
  std::lock_guard lock(mu_);
  nominator_.Expect(std::move(placeholder), node_name, std::move(is_replacement));
  nominated_count_.store(nominator_.size(), std::memory_order_release);
  planned_count_.store(nominator_.planned_size(), std::memory_order_release);
}

framework::PodInfoPtr SchedulingQueue::ReplacementOf(const api::Pod& placeholder) const {
  std::lock_guard lock(mu_);
  return nominator_.ClaimantOf(PodKey(placeholder));
}

bool SchedulingQueue::IsPlanned(const api::Pod& pod) const {
  if (planned_count_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(mu_);
  return nominator_.IsPlanned(PodKey(pod));
}

std::optional<std::string> SchedulingQueue::NominatedNodeOf(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  const std::string* node = nominator_.NodeOf(PodKey(pod));
  if (!node) return std::nullopt;
  return *node;
}

std::vector<framework::PodInfoPtr> SchedulingQueue::NominatedPodsForNode(const std::string& node_name) const {
  std::lock_guard lock(mu_);
  return nominator_.ForNode(node_name);
}

}  // namespace kubesched::queue
