#include "scheduler/scheduler.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>

#include <fmt/format.h>

#include "util/log.h"

namespace kubesched::scheduler {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::QueuedPodInfo;
using framework::Status;
using framework::runtime::Framework;

namespace {

constexpr int32_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;

bool Assigned(const api::Pod& pod) { return !pod.spec.node_name.empty(); }

framework::ActionType NodeUpdateActions(const api::Node& o, const api::Node& n) {
  framework::ActionType a = 0;
  auto alloc_changed = [&] {
    if (o.status.allocatable.size() != n.status.allocatable.size()) return true;
    for (const auto& [k, v] : o.status.allocatable) {
      auto it = n.status.allocatable.find(k);
      if (it == n.status.allocatable.end() || it->second.MilliValue() != v.MilliValue()) return true;
    }
    return false;
  };
  if (alloc_changed()) a |= framework::action::kUpdateNodeAllocatable;
  if (!(o.metadata.labels == n.metadata.labels)) a |= framework::action::kUpdateNodeLabel;
  if (o.spec.taints != n.spec.taints || o.spec.unschedulable != n.spec.unschedulable) {
    a |= framework::action::kUpdateNodeTaint;
  }
  auto conditions_changed = [&] {
    if (o.status.conditions.size() != n.status.conditions.size()) return true;
    for (size_t i = 0; i < o.status.conditions.size(); ++i) {
      if (o.status.conditions[i].type != n.status.conditions[i].type ||
          o.status.conditions[i].status != n.status.conditions[i].status) {
        return true;
      }
    }
    return false;
  };
  if (conditions_changed()) a |= framework::action::kUpdateNodeCondition;
  if (!(o.metadata.annotations == n.metadata.annotations)) a |= framework::action::kUpdateNodeAnnotation;
  return a;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Messages and sampling

std::vector<FilterReasonCount> FitErrorReasons(size_t num_all_nodes, const Diagnosis& diagnosis) {
  std::vector<FilterReasonCount> reasons;
  if (!diagnosis.pre_filter_msg.empty()) return reasons;
  std::map<std::string, size_t> histogram;
  for (const auto& [node, status] : diagnosis.node_to_status.statuses()) {
    for (const auto& r : status.reasons()) ++histogram[r];
  }
  size_t explicit_nodes = diagnosis.node_to_status.size();
  if (explicit_nodes < num_all_nodes) {
    for (const auto& r : diagnosis.node_to_status.absent_status().reasons()) {
      histogram[r] += num_all_nodes - explicit_nodes;
    }
  }
  // Ordered as the message lists them: upstream sorts the "<count> <reason>" strings
  // (sort.Strings), so "10 x" comes before "9 y".
  std::vector<std::pair<std::string, FilterReasonCount>> entries;
  entries.reserve(histogram.size());
  for (auto& [reason, count] : histogram) {
    entries.emplace_back(fmt::format("{} {}", count, reason), FilterReasonCount{reason, count});
  }
  std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  reasons.reserve(entries.size());
  for (auto& [text, entry] : entries) reasons.push_back(std::move(entry));
  return reasons;
}

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis) {
  return FitErrorMessage(num_all_nodes, diagnosis, FitErrorReasons(num_all_nodes, diagnosis));
}

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis,
                            std::span<const FilterReasonCount> reasons) {
  std::string msg = fmt::format("0/{} nodes are available:", num_all_nodes);
  if (!diagnosis.pre_filter_msg.empty()) {
    msg += fmt::format(" {}.", diagnosis.pre_filter_msg);
  } else if (!reasons.empty()) {
    msg += ' ';
    for (size_t i = 0; i < reasons.size(); ++i) {
      msg += fmt::format("{}{} {}", i == 0 ? "" : ", ", reasons[i].nodes, reasons[i].reason);
    }
    msg += '.';
  }
  if (!diagnosis.post_filter_msg.empty()) msg += fmt::format(" {}", diagnosis.post_filter_msg);
  return msg;
}

std::string TruncateMessage(std::string message) {
  if (message.size() <= kNoteLengthLimit) return message;
  constexpr std::string_view kSuffix = " ...";
  message.resize(kNoteLengthLimit - kSuffix.size());
  message += kSuffix;
  return message;
}

int32_t NumFeasibleNodesToFind(std::optional<int32_t> percentage, int32_t num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  int32_t p = percentage.value_or(0);
  if (p == 0) {
    p = 50 - num_all_nodes / 125;
    if (p < kMinFeasibleNodesPercentageToFind) p = kMinFeasibleNodesPercentageToFind;
  }
  int32_t n = static_cast<int32_t>(static_cast<int64_t>(num_all_nodes) * p / 100);
  return std::max(n, kMinFeasibleNodesToFind);
}

// ---------------------------------------------------------------------------------------------
// Construction

std::expected<std::unique_ptr<Scheduler>, std::string> Scheduler::Create(const SchedulerOptions& options,
                                                                         framework::ClusterClient& client,
                                                                         const util::Clock& clock,
                                                                         const framework::Registry& registry) {
  std::unique_ptr<Scheduler> s(new Scheduler());
  s->options_ = options;
  s->client_ = &client;
  s->clock_ = &clock;
  s->rng_.seed(options.seed);
  s->metrics_rng_.seed(static_cast<std::minstd_rand::result_type>(options.seed));
  int parallelism = std::max(1, std::min<int>(options.config.parallelism,
                                              static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))));
  s->parallelizer_ = std::make_unique<util::Parallelizer>(parallelism);
  s->waiting_pods_ = std::make_unique<framework::runtime::WaitingPodsMap>();
  s->cache_ = std::make_unique<cache::Cache>();
  s->snapshot_ = std::make_unique<cache::Snapshot>();

  // The queue also serves as the nominator; it is created after the profiles, so the frameworks
  // reach it through this indirection.
  struct NominatorProxy final : framework::PodNominator {
    Scheduler* s;
    void AddNominatedPod(PodInfoPtr pod, const std::string& node) override {
      s->queue_->AddNominatedPod(std::move(pod), node);
    }
    void DeleteNominatedPodIfExists(const api::Pod& pod) override { s->queue_->DeleteNominatedPodIfExists(pod); }
    std::vector<PodInfoPtr> NominatedPodsForNode(const std::string& node) const override {
      return s->queue_->NominatedPodsForNode(node);
    }
    bool HasNominatedPods() const override { return s->queue_->HasNominatedPods(); }
    void AddPlannedPod(PodInfoPtr pod, const std::string& node) override {
      s->queue_->AddPlannedPod(std::move(pod), node);
    }
    bool IsPlanned(const api::Pod& pod) const override { return s->queue_->IsPlanned(pod); }
    std::optional<std::string> NominatedNodeOf(const api::Pod& pod) const override {
      return s->queue_->NominatedNodeOf(pod);
    }
    void ExpectReplacement(PodInfoPtr placeholder, const std::string& node,
                           std::function<bool(const framework::PodInfo&)> is_replacement) override {
      s->queue_->ExpectReplacement(std::move(placeholder), node, std::move(is_replacement));
    }
    PodInfoPtr ReplacementOf(const api::Pod& placeholder) const override {
      return s->queue_->ReplacementOf(placeholder);
    }
  };
  auto proxy = std::make_unique<NominatorProxy>();
  proxy->s = s.get();
  framework::PodNominator* nominator = proxy.get();
  s->nominator_proxy_ = std::move(proxy);

  s->extenders_ = options.extenders;
  if (s->extenders_.empty() && !options.config.extenders.empty()) {
    // The extenders' clients sit above the scheduler (src/extender); the mode wires them in.
    return std::unexpected(
        std::string("the configuration has extenders, but none were built (extender::BuildExtenders)"));
  }
  // upstream's buildExtenders order: ignorable extenders are called after the others.
  std::stable_partition(s->extenders_.begin(), s->extenders_.end(), [](const auto& e) { return !e->IsIgnorable(); });
  for (const auto& e : s->extenders_) s->extender_ptrs_.push_back(e.get());

  framework::runtime::FrameworkDeps deps;
  deps.client = &client;
  deps.nominator = nominator;
  deps.clock = &clock;
  deps.parallelizer = s->parallelizer_.get();
  deps.waiting_pods = s->waiting_pods_.get();
  deps.extenders = s->extender_ptrs_;
  deps.pod_groups = &s->pod_groups_;
  deps.coscheduling_groups = &s->coscheduling_groups_;
  deps.storage = &s->storage_;
  deps.dra = &s->dra_;
  deps.metrics = options.metrics;
  s->metrics_ = options.metrics;
  Scheduler* self = s.get();
  deps.activate = [self](const std::vector<std::shared_ptr<const api::Pod>>& pods) {
    self->queue_->Activate(pods, /*restamp=*/true);
  };
  auto profiles = profile::NewMap(options.config.profiles, registry, deps);
  if (!profiles) return std::unexpected(std::move(profiles.error()));
  s->profiles_ = std::move(*profiles);

  // All profiles share one queue and so one QueueSort (profile::NewMap refuses profiles whose
  // QueueSort plugins differ).
  Framework* first = s->profiles_.begin()->second.get();
  const framework::QueueSortPlugin* sort = first->queue_sort();
  queue::Options qopts;
  qopts.pod_initial_backoff_ns = options.config.pod_initial_backoff_seconds * util::kNanosPerSecond;
  qopts.pod_max_backoff_ns = options.config.pod_max_backoff_seconds * util::kNanosPerSecond;
  qopts.metrics = options.metrics;
  std::map<std::string, queue::ProfileQueueingConfig, std::less<>> qprofiles;
  for (auto& [name, fwk] : s->profiles_) {
    queue::ProfileQueueingConfig qp;
    qp.pre_enqueue_plugins = fwk->pre_enqueue_plugins();
    for (auto& [plugin, events] : fwk->EnqueueEvents()) qp.plugin_events[plugin] = std::move(events);
    qprofiles.emplace(name, std::move(qp));
  }
  s->queue_ = std::make_unique<queue::SchedulingQueue>(
      // A QueueSort plugin must not throw (the queue's heaps cannot take a failed comparison); if
      // one does, the two pods compare equal rather than the exception crossing the queue.
      [sort](const QueuedPodInfo& a, const QueuedPodInfo& b) {
        try {
          return sort->Less(a, b);
        } catch (...) {
          return false;
        }
      },
      clock, std::move(qprofiles), qopts);

  if (options.async_binding) {
    for (int i = 0; i < std::max(options.binding_threads, 1); ++i) {
      s->binding_threads_.emplace_back([sp = s.get()] {
        while (true) {
          std::function<void()> task;
          {
            std::unique_lock lock(sp->binding_mu_);
            sp->binding_cv_.wait(lock, [&] { return sp->stopping_ || !sp->binding_tasks_.empty(); });
            if (sp->binding_tasks_.empty()) return;
            task = std::move(sp->binding_tasks_.front());
            sp->binding_tasks_.pop_front();
          }
          task();
          {
            std::lock_guard lock(sp->binding_mu_);
            --sp->bindings_in_flight_;
          }
          sp->binding_cv_.notify_all();
        }
      });
    }
  }
  return s;
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(binding_mu_);
    stopping_ = true;
  }
  binding_cv_.notify_all();
  for (auto& t : binding_threads_) t.join();
}

Framework* Scheduler::FrameworkFor(const std::string& scheduler_name) const {
  auto it = profiles_.find(scheduler_name);
  return it != profiles_.end() ? it->second.get() : nullptr;
}

metrics::SchedulerState Scheduler::MetricsState() const {
  metrics::SchedulerState state;
  queue_->FillMetricsState(state);
  state.cache_nodes = cache_->NodeCount();
  state.cache_pods = cache_->PodCount();
  state.cache_assumed_pods = cache_->AssumedPodCount();
  return state;
}

bool Scheduler::Responsible(const api::Pod& pod) const {
  return options_.queue_pods && profiles_.contains(pod.spec.scheduler_name);
}

// ---------------------------------------------------------------------------------------------
// Event handlers

void Scheduler::OnNodeAdd(std::shared_ptr<const api::Node> node) {
  cache_->AddNode(node);
  queue_->MoveAllToActiveOrBackoffQueue(framework::events::NodeAdd(), {.new_node = node.get()});
}

void Scheduler::OnNodeUpdate(std::shared_ptr<const api::Node> old_node, std::shared_ptr<const api::Node> new_node) {
  cache_->UpdateNode(new_node);
  framework::ActionType actions = NodeUpdateActions(*old_node, *new_node);
  if (actions == 0) return;
  queue_->MoveAllToActiveOrBackoffQueue({framework::EventResource::kNode, actions, "NodeUpdate"},
                                        {.old_node = old_node.get(), .new_node = new_node.get()});
}

void Scheduler::OnNodeDelete(std::shared_ptr<const api::Node> node) { cache_->RemoveNode(node->metadata.name); }

void Scheduler::OnPodAdd(std::shared_ptr<const api::Pod> pod) {
  // Group members are counted before the queue runs PreEnqueue on the pod.
  pod_groups_.SetPod(pod);
  coscheduling_groups_.SetPod(pod);
  if (Assigned(*pod)) {
    Status s = cache_->AddPod(PodInfo::Create(pod));
    if (!s.IsSuccess()) KS_LOG.ErrorS(s.Message(), "Scheduler cache AddPod failed", "pod", log::KObj(*pod));
    queue_->AssignedPodAdded(*pod);
    return;
  }
  if (!Responsible(*pod)) return;
  {
    std::lock_guard lock(pods_mu_);
    pending_pods_[pod->metadata.uid] = pod;
  }
  queue_->Add(PodInfo::Create(pod));
  // A new member may complete its gang: the members PreEnqueue held back are asked again. Only
  // for members of a group, so that other pods pay nothing for it.
  if (!pod->spec.pod_group.empty() || !api::PodGroupOf(*pod, api::PodGroupApi::kCoscheduling).empty()) {
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kUnscheduledPod, framework::action::kAdd, "UnscheduledPodAdd"},
        {.new_pod = pod.get()});
  }
}

void Scheduler::OnPodUpdate(std::shared_ptr<const api::Pod> old_pod, std::shared_ptr<const api::Pod> new_pod) {
  pod_groups_.SetPod(new_pod);
  coscheduling_groups_.SetPod(new_pod);
  if (Assigned(*new_pod)) {
    if (!Assigned(*old_pod)) {
      // Bound: no longer the queue's; the cache confirms the assumed pod (or learns of it).
      {
        std::lock_guard lock(pods_mu_);
        pending_pods_.erase(new_pod->metadata.uid);
      }
      queue_->Delete(*old_pod);
      Status s = cache_->AddPod(PodInfo::Create(new_pod));
      if (!s.IsSuccess()) KS_LOG.ErrorS(s.Message(), "Scheduler cache AddPod failed", "pod", log::KObj(*new_pod));
      queue_->AssignedPodAdded(*new_pod);
    } else {
      Status s = cache_->UpdatePod(*old_pod, PodInfo::Create(new_pod));
      if (!s.IsSuccess()) KS_LOG.ErrorS(s.Message(), "Scheduler cache UpdatePod failed", "pod", log::KObj(*new_pod));
      queue_->AssignedPodUpdated(*old_pod, *new_pod);
    }
    return;
  }
  if (Assigned(*old_pod)) {
    // Unbound. An API server never clears nodeName, but a view can go back: a relist after the
    // test bed crashed shows a bind it had sent on a watch and never made durable. client-go's
    // filtering handlers deliver this as upstream's scheduler sees it: the assigned pod deleted
    // (out of the cache, its room freed for waiting pods) and an unscheduled pod added.
    KS_LOG_V(2).InfoS("Pod is no longer bound; scheduling it again", "pod", log::KObj(*new_pod), "node",
                      old_pod->spec.node_name);
    OnPodDelete(old_pod);
    OnPodAdd(new_pod);
    return;
  }
  if (!Responsible(*new_pod)) return;
  {
    std::lock_guard lock(pods_mu_);
    pending_pods_[new_pod->metadata.uid] = new_pod;
  }
  // An assumed pod's own status updates (nominations, conditions) need no requeue.
  if (cache_->IsAssumedPod(*new_pod)) return;
  queue_->Update(*old_pod, PodInfo::Create(new_pod));
}

void Scheduler::OnPodDelete(std::shared_ptr<const api::Pod> pod) {
  pod_groups_.DeletePod(*pod);
  coscheduling_groups_.DeletePod(*pod);
  if (Assigned(*pod)) {
    Status s = cache_->RemovePod(*pod);
    // Debug only, as before: a pod the cache never saw (or already forgot) is deleted routinely.
    if (!s.IsSuccess())
      KS_LOG_V(4).InfoS("Scheduler cache RemovePod failed", "pod", log::KObj(*pod), "err", s.Message());
    queue_->AssignedPodDeleted(*pod);
    return;
  }
  {
    std::lock_guard lock(pods_mu_);
    pending_pods_.erase(pod->metadata.uid);
  }
  queue_->Delete(*pod);
  if (auto wp = waiting_pods_->Get(pod->metadata.uid)) wp->Reject("", "pod was deleted");
}

void Scheduler::OnPodGroupAdd(std::shared_ptr<const api::PodGroup> group) {
  // Each index takes the groups of its API.
  pod_groups_.SetGroup(group);
  coscheduling_groups_.SetGroup(group);
  queue_->MoveAllToActiveOrBackoffQueue({framework::EventResource::kPodGroup, framework::action::kAdd, "PodGroupAdd"},
                                        {.new_pod_group = group.get()});
}

void Scheduler::OnPodGroupUpdate(std::shared_ptr<const api::PodGroup> old_group,
                                 std::shared_ptr<const api::PodGroup> new_group) {
  pod_groups_.SetGroup(new_group);
  coscheduling_groups_.SetGroup(new_group);
  // A scheduling.k8s.io policy is immutable: nothing a gated member waits for changes. A
  // scheduler-plugins PodGroup's minMember may change, and with it whether its members may go.
  if (new_group->api == api::PodGroupApi::kCoscheduling) {
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kPodGroup, framework::action::kUpdate, "PodGroupUpdate"},
        {.old_pod_group = old_group.get(), .new_pod_group = new_group.get()});
  }
}

void Scheduler::OnPodGroupDelete(std::shared_ptr<const api::PodGroup> group) {
  pod_groups_.DeleteGroup(*group);
  coscheduling_groups_.DeleteGroup(*group);
}

namespace {

// The queue's event for a change of a storage object (its kind's resource, the informer's action).
framework::ClusterEvent StorageEvent(const api::StorageObject& object, framework::ActionType action) {
  using framework::EventResource;
  static constexpr std::pair<EventResource, std::string_view> kKinds[] = {
      {EventResource::kPersistentVolumeClaim, "PersistentVolumeClaim"},
      {EventResource::kPersistentVolume, "PersistentVolume"},
      {EventResource::kStorageClass, "StorageClass"},
      {EventResource::kCSINode, "CSINode"},
      {EventResource::kCSIDriver, "CSIDriver"},
      {EventResource::kCSIStorageCapacity, "CSIStorageCapacity"},
  };
  const auto& [resource, kind] = kKinds[object.index()];
  const std::string_view verb = action == framework::action::kAdd      ? "Add"
                                : action == framework::action::kDelete ? "Delete"
                                                                       : "Update";
  return {resource, action, std::string(kind) + std::string(verb)};
}

// The queue's event for a change of a DeviceClass, ResourceSlice or ResourceClaim.
framework::ClusterEvent ResourceEvent(const api::ResourceObject& object, framework::ActionType action) {
  using framework::EventResource;
  static constexpr std::pair<EventResource, std::string_view> kKinds[] = {
      {EventResource::kDeviceClass, "DeviceClass"},
      {EventResource::kResourceSlice, "ResourceSlice"},
      {EventResource::kResourceClaim, "ResourceClaim"},
      {EventResource::kWildCard, "ResourceClaimTemplate"},  // not informed
  };
  const auto& [resource, kind] = kKinds[object.index()];
  const std::string_view verb = action == framework::action::kAdd      ? "Add"
                                : action == framework::action::kDelete ? "Delete"
                                                                       : "Update";
  return {resource, action, std::string(kind) + std::string(verb)};
}

}  // namespace

void Scheduler::OnResourceAdd(const api::ResourceObject& object) {
  dra_.Apply(object);
  queue_->MoveAllToActiveOrBackoffQueue(ResourceEvent(object, framework::action::kAdd), {.new_resource = &object});
}

void Scheduler::OnResourceUpdate(const api::ResourceObject& old_object, const api::ResourceObject& new_object) {
  dra_.Apply(new_object);
  queue_->MoveAllToActiveOrBackoffQueue(ResourceEvent(new_object, framework::action::kUpdate),
                                        {.old_resource = &old_object, .new_resource = &new_object});
}

void Scheduler::OnResourceDelete(const api::ResourceObject& object) {
  dra_.Remove(object);
  queue_->MoveAllToActiveOrBackoffQueue(ResourceEvent(object, framework::action::kDelete), {.old_resource = &object});
}

void Scheduler::OnStorageAdd(const api::StorageObject& object) {
  storage_.Apply(object);
  queue_->MoveAllToActiveOrBackoffQueue(StorageEvent(object, framework::action::kAdd), {.new_storage = &object});
}

void Scheduler::OnStorageUpdate(const api::StorageObject& old_object, const api::StorageObject& new_object) {
  storage_.Apply(new_object);
  queue_->MoveAllToActiveOrBackoffQueue(StorageEvent(new_object, framework::action::kUpdate),
                                        {.old_storage = &old_object, .new_storage = &new_object});
}

void Scheduler::OnStorageDelete(const api::StorageObject& object) {
  storage_.Remove(object);
  queue_->MoveAllToActiveOrBackoffQueue(StorageEvent(object, framework::action::kDelete), {.old_storage = &object});
}

// ---------------------------------------------------------------------------------------------
// Binding work

void Scheduler::SubmitBinding(std::function<void()> task) {
  {
    std::lock_guard lock(binding_mu_);
    binding_tasks_.push_back(std::move(task));
  }
  binding_cv_.notify_one();
}

void Scheduler::RunPendingBindings() {
  if (options_.async_binding) return;
  while (true) {
    std::function<void()> task;
    {
      std::lock_guard lock(binding_mu_);
      if (binding_tasks_.empty()) return;
      task = std::move(binding_tasks_.front());
      binding_tasks_.pop_front();
    }
    task();
    std::lock_guard lock(binding_mu_);
    --bindings_in_flight_;
  }
}

void Scheduler::WaitForBindings() {
  std::unique_lock lock(binding_mu_);
  binding_cv_.wait(lock,
                   [&] { return bindings_in_flight_ == 0 || (!options_.async_binding && binding_tasks_.empty()); });
}

void Scheduler::RejectWaitingPods(std::string_view message) {
  // Collected first: rejecting completes the pod, whose binding cycle removes it from the map.
  std::vector<std::string> uids;
  waiting_pods_->Iterate([&](framework::WaitingPod& p) { uids.push_back(p.pod().metadata.uid); });
  for (const std::string& uid : uids) {
    if (auto p = waiting_pods_->Get(uid)) p->RejectPending(std::string(message));
  }
}

// ---------------------------------------------------------------------------------------------
// Timers

void Scheduler::FireTimers() {
  std::lock_guard cycle(cycle_mu_);
  waiting_pods_->ExpireDue(clock_->NowNs());
  queue_->FlushBackoffQCompleted();
  queue_->FlushUnschedulablePodsLeftover();
  RunTimedPlugins();
}

namespace {

// A timed plugin that throws from NextTickNs has nothing due (it is not ticked), rather than the
// exception crossing the scheduling loop.
std::optional<int64_t> TimedPluginNextTick(const framework::TimedPlugin& plugin) {
  try {
    return plugin.NextTickNs();
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

void Scheduler::RunTimedPlugins() {
  const int64_t now = clock_->NowNs();
  for (auto& [name, fwk] : profiles_) {
    for (framework::TimedPlugin* t : fwk->timed_plugins()) {
      auto due = TimedPluginNextTick(*t);
      if (!due || *due > now) continue;
      // The pods this plugin holds at PreEnqueue, in queue order (the queue drops deleted ones).
      std::vector<framework::PodInfoPtr> held;
      for (const auto& p : queue_->PendingPods()) {
        if (p.info.gated && p.info.gating_plugin == t->Name() && p.info.pod().spec.scheduler_name == name) {
          held.push_back(p.info.pod_info);
        }
      }
      std::stable_sort(held.begin(), held.end(), [&](const framework::PodInfoPtr& a, const framework::PodInfoPtr& b) {
        if (a->pod().Priority() != b->pod().Priority()) return a->pod().Priority() > b->pod().Priority();
        return a->pod().metadata.creation_timestamp_ns < b->pod().metadata.creation_timestamp_ns;
      });
      cache_->UpdateSnapshot(*snapshot_);
      fwk->set_snapshot(snapshot_.get());
      try {
        t->Tick(held);
      } catch (const std::exception& e) {
        KS_LOG.ErrorS(e.what(), "Timed plugin threw from Tick", "plugin", t->Name());
      } catch (...) {
        KS_LOG.ErrorS("non-standard exception", "Timed plugin threw from Tick", "plugin", t->Name());
      }
    }
  }
}

std::optional<int64_t> Scheduler::NextTimerNs(bool include_unschedulable_timeout) const {
  std::optional<int64_t> t;
  // Without the unschedulable timeout, only backoff expiries count.
  if (include_unschedulable_timeout || queue_->NumBackoff() > 0) t = queue_->NextTimerNs();
  if (auto w = waiting_pods_->NextDeadline(); w && (!t || *w < *t)) t = w;
  for (const auto& [name, fwk] : profiles_) {
    for (const framework::TimedPlugin* p : fwk->timed_plugins()) {
      if (auto w = TimedPluginNextTick(*p); w && (!t || *w < *t)) t = w;
    }
  }
  return t;
}

}  // namespace kubesched::scheduler
