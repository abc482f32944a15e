#include "scheduler/scheduler.h"

#include <algorithm>
#include <atomic>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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
// Below this many nodes per round, Filter runs on the calling thread.
constexpr size_t kMinNodesForParallelFilter = 128;
constexpr int kBindingThreads = 4;

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

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis) {
  std::string msg = fmt::format("0/{} nodes are available:", num_all_nodes);
  if (!diagnosis.pre_filter_msg.empty()) {
    msg += fmt::format(" {}.", diagnosis.pre_filter_msg);
  } else {
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
    std::vector<std::string> parts;
    for (const auto& [reason, count] : histogram) parts.push_back(fmt::format("{} {}", count, reason));
    std::sort(parts.begin(), parts.end());  // as strings, like upstream's sort.Strings
    if (!parts.empty()) msg += fmt::format(" {}.", fmt::join(parts, ", "));
  }
  if (!diagnosis.post_filter_msg.empty()) msg += fmt::format(" {}", diagnosis.post_filter_msg);
  return msg;
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
  };
  auto proxy = std::make_unique<NominatorProxy>();
  proxy->s = s.get();
  framework::PodNominator* nominator = proxy.get();
  s->nominator_proxy_ = std::move(proxy);

  framework::runtime::FrameworkDeps deps{&client, nominator, &clock, s->parallelizer_.get(), s->waiting_pods_.get()};
  for (size_t i = 0; i < options.config.profiles.size(); ++i) {
    const auto& profile = options.config.profiles[i];
    auto fwk = Framework::Create(profile, i, registry, deps);
    if (!fwk) return std::unexpected(fwk.error());
    s->profiles_.emplace(profile.scheduler_name, std::move(*fwk));
  }
  if (s->profiles_.empty()) return std::unexpected("profiles: Required value: at least one profile is required");

  // All profiles share one queue and so one QueueSort (validated by the configuration).
  Framework* first = s->profiles_.begin()->second.get();
  const framework::QueueSortPlugin* sort = first->queue_sort();
  queue::Options qopts;
  qopts.pod_initial_backoff_ns = options.config.pod_initial_backoff_seconds * util::kNanosPerSecond;
  qopts.pod_max_backoff_ns = options.config.pod_max_backoff_seconds * util::kNanosPerSecond;
  std::map<std::string, queue::ProfileQueueingConfig, std::less<>> qprofiles;
  for (auto& [name, fwk] : s->profiles_) {
    queue::ProfileQueueingConfig qp;
    qp.pre_enqueue_plugins = fwk->pre_enqueue_plugins();
    for (auto& [plugin, events] : fwk->EnqueueEvents()) qp.plugin_events[plugin] = std::move(events);
    qprofiles.emplace(name, std::move(qp));
  }
  s->queue_ = std::make_unique<queue::SchedulingQueue>(
      [sort](const QueuedPodInfo& a, const QueuedPodInfo& b) { return sort->Less(a, b); }, clock, std::move(qprofiles),
      qopts);

  if (options.async_binding) {
    for (int i = 0; i < kBindingThreads; ++i) {
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

bool Scheduler::Responsible(const api::Pod& pod) const { return profiles_.contains(pod.spec.scheduler_name); }

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
  if (Assigned(*pod)) {
    Status s = cache_->AddPod(PodInfo::Create(pod));
    if (!s.IsSuccess()) spdlog::error("cache AddPod {}: {}", pod->Key(), s.Message());
    queue_->AssignedPodAdded(*pod);
    return;
  }
  if (!Responsible(*pod)) return;
  {
    std::lock_guard lock(pods_mu_);
    pending_pods_[pod->metadata.uid] = pod;
  }
  queue_->Add(PodInfo::Create(pod));
}

void Scheduler::OnPodUpdate(std::shared_ptr<const api::Pod> old_pod, std::shared_ptr<const api::Pod> new_pod) {
  if (Assigned(*new_pod)) {
    if (!Assigned(*old_pod)) {
      // Bound: no longer the queue's; the cache confirms the assumed pod (or learns of it).
      {
        std::lock_guard lock(pods_mu_);
        pending_pods_.erase(new_pod->metadata.uid);
      }
      queue_->Delete(*old_pod);
      Status s = cache_->AddPod(PodInfo::Create(new_pod));
      if (!s.IsSuccess()) spdlog::error("cache AddPod {}: {}", new_pod->Key(), s.Message());
      queue_->AssignedPodAdded(*new_pod);
    } else {
      Status s = cache_->UpdatePod(*old_pod, PodInfo::Create(new_pod));
      if (!s.IsSuccess()) spdlog::error("cache UpdatePod {}: {}", new_pod->Key(), s.Message());
      queue_->AssignedPodUpdated(*old_pod, *new_pod);
    }
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
  if (Assigned(*pod)) {
    Status s = cache_->RemovePod(*pod);
    if (!s.IsSuccess()) spdlog::debug("cache RemovePod {}: {}", pod->Key(), s.Message());
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

// ---------------------------------------------------------------------------------------------
// Scheduling cycle

bool Scheduler::ScheduleOne() {
  std::optional<QueuedPodInfo> popped = queue_->Pop();
  if (!popped) return false;
  QueuedPodInfo qpi = std::move(*popped);
  const PodInfoPtr pod_info = qpi.pod_info;
  const api::Pod& pod = pod_info->pod();
  Framework* fwk = FrameworkFor(pod.spec.scheduler_name);
  if (!fwk) {
    queue_->Done(pod.metadata.uid);
    return true;
  }
  {
    // Skip pods deleted or already assumed since they were queued.
    std::lock_guard lock(pods_mu_);
    if (!pending_pods_.contains(pod.metadata.uid)) {
      queue_->Done(pod.metadata.uid);
      return true;
    }
  }
  if (cache_->IsAssumedPod(pod)) {
    queue_->Done(pod.metadata.uid);
    return true;
  }
  ++attempts_;

  auto state = std::make_shared<CycleState>();
  cache_->UpdateSnapshot(*snapshot_);
  fwk->set_snapshot(snapshot_.get());

  Diagnosis diagnosis;
  auto result = SchedulePod(*fwk, *state, *pod_info, diagnosis);
  if (!result) {
    Status status = result.error();
    framework::PostFilterResult nominating;
    std::string message;
    if (status.IsRejected()) {
      if (fwk->HasPostFilterPlugins()) {
        auto [pf_result, pf_status] = fwk->RunPostFilterPlugins(*state, *pod_info, diagnosis.node_to_status);
        if (pf_status.IsError()) {
          spdlog::error("running PostFilter for {}: {}", pod.Key(), pf_status.Message());
        } else {
          diagnosis.post_filter_msg = pf_status.Message();
        }
        if (pf_status.IsSuccess()) nominating = pf_result;
      }
      message = FitErrorMessage(snapshot_->NumNodes(), diagnosis);
    } else {
      message = status.Message();
    }
    if (!options_.explain_pod.empty() && options_.explain_pod == pod.Key()) {
      Explain(*fwk, *state, *pod_info, nullptr, "", message);
    }
    HandleSchedulingFailure(*fwk, std::move(qpi), status, &diagnosis, &nominating, message);
    return true;
  }

  const std::string host = result->suggested_host;
  auto assumed_pod = std::make_shared<api::Pod>(pod);
  assumed_pod->spec.node_name = host;
  PodInfoPtr assumed = pod_info->WithPod(assumed_pod);
  if (Status s = cache_->AssumePod(assumed); !s.IsSuccess()) {
    HandleSchedulingFailure(*fwk, std::move(qpi), s, nullptr, nullptr, s.Message());
    return true;
  }
  if (Status s = fwk->RunReservePluginsReserve(*state, *assumed, host); !s.IsSuccess()) {
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    (void)cache_->ForgetPod(*assumed_pod);
    HandleSchedulingFailure(*fwk, std::move(qpi), s, nullptr, nullptr, s.Message());
    return true;
  }

  {
    std::lock_guard lock(binding_mu_);
    ++bindings_in_flight_;  // counted from Permit on, so a waiting pod counts as binding work
  }
  auto on_permit_done = [this, fwk, state, qpi, assumed, host](Status s) {
    SubmitBinding([this, fwk, state, qpi, assumed, host, s] { RunBindingCycle(fwk, state, qpi, assumed, host, s); });
  };
  Status permit = fwk->RunPermitPlugins(*state, assumed, host, on_permit_done);
  if (permit.IsWait()) return true;  // the binding cycle continues when the waiting pod completes
  if (!permit.IsSuccess()) {
    {
      std::lock_guard lock(binding_mu_);
      --bindings_in_flight_;
    }
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    (void)cache_->ForgetPod(*assumed_pod);
    HandleSchedulingFailure(*fwk, std::move(qpi), permit, nullptr, nullptr, permit.Message());
    return true;
  }
  on_permit_done(Status::Success());
  return true;
}

std::expected<Scheduler::ScheduleResult, Status> Scheduler::SchedulePod(Framework& fwk, CycleState& state,
                                                                        const PodInfo& pod, Diagnosis& diagnosis) {
  if (snapshot_->NumNodes() == 0) return std::unexpected(Status::Error("no nodes available to schedule pods"));
  Status error;
  std::vector<const NodeInfo*> feasible = FindNodesThatFitPod(fwk, state, pod, diagnosis, error);
  if (!error.IsSuccess()) return std::unexpected(error);
  if (feasible.empty()) {
    Status s(framework::Code::kUnschedulable, "no feasible nodes");
    return std::unexpected(s);
  }
  bool explaining = !options_.explain_pod.empty() && options_.explain_pod == pod.pod().Key();
  if (feasible.size() == 1 && !explaining) {
    return ScheduleResult{feasible[0]->name(), 1 + diagnosis.node_to_status.size(), 1};
  }
  std::vector<framework::runtime::NodePluginScores> scores;
  if (!fwk.HasScorePlugins()) {
    scores.resize(feasible.size());
    for (size_t i = 0; i < feasible.size(); ++i) {
      scores[i].node = feasible[i];
      scores[i].total = 1;
    }
  } else {
    if (Status s = fwk.RunPreScorePlugins(state, pod, feasible); !s.IsSuccess()) return std::unexpected(s);
    auto [sc, s] = fwk.RunScorePlugins(state, pod, feasible, explaining);
    if (!s.IsSuccess()) return std::unexpected(s);
    scores = std::move(sc);
  }
  std::string host = SelectHost(scores);
  if (explaining) Explain(fwk, state, pod, &scores, host, "");
  return ScheduleResult{host, feasible.size() + diagnosis.node_to_status.size(), feasible.size()};
}

std::vector<const NodeInfo*> Scheduler::FindNodesThatFitPod(Framework& fwk, CycleState& state, const PodInfo& pod,
                                                            Diagnosis& diagnosis, Status& error) {
  auto all = snapshot_->List();
  std::vector<std::string> narrowing_plugins;
  auto [pre_result, s] = fwk.RunPreFilterPlugins(state, pod, &narrowing_plugins);
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) {
      error = s;
      return {};
    }
    diagnosis.node_to_status.set_absent_status(s);
    if (!s.plugin().empty()) diagnosis.unschedulable_plugins.emplace(s.plugin());
    diagnosis.pre_filter_msg = s.Message();
    return {};
  }

  // A pod nominated by an earlier preemption tries its nominated node first.
  const std::string& nominated = pod.pod().status.nominated_node_name;
  if (!nominated.empty()) {
    if (const NodeInfo* n = snapshot_->Get(nominated)) {
      Status ns = fwk.RunFilterPluginsWithNominatedPods(state, pod, *n);
      if (ns.IsError()) {
        error = ns;
        return {};
      }
      if (ns.IsSuccess()) return {n};
    }
  }

  std::vector<const NodeInfo*> restricted;
  std::span<const NodeInfo* const> nodes = all;
  if (!pre_result.AllNodes()) {
    for (const NodeInfo* n : all) {
      if (pre_result.node_names->contains(n->name())) restricted.push_back(n);
    }
    nodes = restricted;
    // Every node the PreFilter result left out is reported under the plugins that narrowed it.
    Status absent(framework::Code::kUnschedulableAndUnresolvable);
    std::string list;
    for (const auto& p : narrowing_plugins) {
      if (!list.empty()) list += " ";
      list += p;
      diagnosis.unschedulable_plugins.emplace(p);
    }
    absent.AppendReason(fmt::format("node(s) didn't satisfy plugin(s) [{}]", list));
    diagnosis.node_to_status.set_absent_status(std::move(absent));
  }
  return FindNodesThatPassFilters(fwk, state, pod, diagnosis, nodes, error);
}

std::vector<const NodeInfo*> Scheduler::FindNodesThatPassFilters(Framework& fwk, CycleState& state, const PodInfo& pod,
                                                                 Diagnosis& diagnosis,
                                                                 std::span<const NodeInfo* const> nodes,
                                                                 Status& error) {
  const size_t n = nodes.size();
  if (n == 0) return {};
  const Framework& cfwk = fwk;
  std::optional<int32_t> percentage = cfwk.percentage_of_nodes_to_score();
  if (!percentage) percentage = options_.config.percentage_of_nodes_to_score;
  bool explaining = !options_.explain_pod.empty() && options_.explain_pod == pod.pod().Key();
  const size_t to_find =
      explaining ? n : static_cast<size_t>(NumFeasibleNodesToFind(percentage, static_cast<int32_t>(n)));
  const size_t start = next_start_node_index_ % n;

  std::vector<const NodeInfo*> feasible;
  if (!fwk.HasFilterPlugins()) {
    for (size_t i = 0; i < std::min(to_find, n); ++i) feasible.push_back(nodes[(start + i) % n]);
    next_start_node_index_ = (start + feasible.size()) % n;
    return feasible;
  }

  // Nodes are evaluated in rounds over contiguous ranges of the rotated order, each round sized
  // to what is still missing, so the evaluated nodes are always a prefix and the outcome does not
  // depend on thread timing. Within a round, nodes are filtered in parallel. Only failing nodes
  // keep a Status (in a per-round slot array reused across cycles), so a cycle whose nodes mostly
  // pass allocates nothing per node.
  std::vector<uint8_t>& passed = filter_passed_;
  std::vector<std::pair<uint32_t, Status>>& failures = filter_failures_;
  passed.assign(n, 0);
  failures.clear();
  std::vector<Status>& round_statuses = filter_round_statuses_;
  size_t evaluated = 0;
  size_t found = 0;
  std::atomic<bool> had_error{false};
  while (evaluated < n && found < to_find) {
    const size_t round = std::min(n - evaluated, std::max<size_t>(to_find - found, 32));
    if (round_statuses.size() < round) round_statuses.resize(round);
    auto check = [&](int k) {
      const size_t idx = evaluated + static_cast<size_t>(k);
      const NodeInfo& node = *nodes[(start + idx) % n];
      Status s = fwk.RunFilterPluginsWithNominatedPods(state, pod, node);
      if (s.IsSuccess()) {
        passed[idx] = 1;
      } else {
        if (s.IsError()) had_error.store(true, std::memory_order_relaxed);
        round_statuses[static_cast<size_t>(k)] = std::move(s);
      }
    };
    if (round >= kMinNodesForParallelFilter) {
      parallelizer_->Until(static_cast<int>(round), check);
    } else {
      for (size_t k = 0; k < round; ++k) check(static_cast<int>(k));
    }
    for (size_t k = 0; k < round; ++k) {
      if (passed[evaluated + k]) {
        ++found;
      } else {
        failures.emplace_back(static_cast<uint32_t>(evaluated + k), std::move(round_statuses[k]));
        round_statuses[k] = Status();
      }
    }
    evaluated += round;
    if (had_error) break;
  }
  if (had_error) {
    for (auto& [idx, s] : failures) {
      if (s.IsError()) {
        error = s;
        return {};
      }
    }
  }
  // Keep the first to_find feasible nodes; nodes after the last kept one count as not processed.
  diagnosis.node_to_status.Reserve(failures.size());
  feasible.reserve(std::min(found, to_find));
  size_t processed = 0;
  size_t next_failure = 0;
  for (size_t i = 0; i < evaluated && feasible.size() < to_find; ++i) {
    processed = i + 1;
    const NodeInfo* node = nodes[(start + i) % n];
    if (passed[i]) {
      feasible.push_back(node);
      continue;
    }
    Status& s = failures[next_failure++].second;
    if (!s.plugin().empty()) {
      if (s.code() == framework::Code::kPending) {
        diagnosis.pending_plugins.emplace(s.plugin());
      } else {
        diagnosis.unschedulable_plugins.emplace(s.plugin());
      }
    }
    diagnosis.node_to_status.Set(node->name(), std::move(s));
  }
  next_start_node_index_ = (start + processed) % n;
  return feasible;
}

std::string Scheduler::SelectHost(const std::vector<framework::runtime::NodePluginScores>& scores) {
  // Highest total wins; ties are broken uniformly at random by reservoir sampling, as upstream.
  const framework::runtime::NodePluginScores* selected = &scores[0];
  int64_t max_score = scores[0].total;
  uint64_t ties = 1;
  for (size_t i = 1; i < scores.size(); ++i) {
    if (scores[i].total > max_score) {
      max_score = scores[i].total;
      selected = &scores[i];
      ties = 1;
    } else if (scores[i].total == max_score) {
      ++ties;
      if (std::uniform_int_distribution<uint64_t>(0, ties - 1)(rng_) == 0) selected = &scores[i];
    }
  }
  return selected->node->name();
}

void Scheduler::Explain(Framework& fwk, CycleState& state, const PodInfo& pod,
                        const std::vector<framework::runtime::NodePluginScores>* scores, const std::string& selected,
                        const std::string& message) {
  AttemptExplanation e;
  e.pod_key = pod.pod().Key();
  e.profile = fwk.name();
  e.selected_node = selected;
  e.message = message;
  for (const NodeInfo* node : snapshot_->List()) {
    AttemptExplanation::NodeDetail d;
    d.node = node->name();
    d.evaluated = true;
    bool ok = true;
    for (auto& [plugin, status] : fwk.ExplainFilter(state, pod, *node)) {
      ok = ok && (status.IsSuccess() || status.IsSkip());
      d.filters.emplace_back(std::string(plugin), std::move(status));
    }
    d.feasible = ok;
    if (scores) {
      for (const auto& ns : *scores) {
        if (ns.node != node) continue;
        for (const auto& ps : ns.scores) d.scores.emplace_back(std::string(ps.plugin), ps.score);
        d.total = ns.total;
      }
    }
    e.nodes.push_back(std::move(d));
  }
  explanation_ = std::move(e);
}

// ---------------------------------------------------------------------------------------------
// Failure handling and binding

void Scheduler::HandleSchedulingFailure(Framework& fwk, QueuedPodInfo qpi, const Status& status,
                                        const Diagnosis* diagnosis, const framework::PostFilterResult* nominating,
                                        const std::string& message) {
  const api::Pod& pod = qpi.pod();
  const std::string uid = pod.metadata.uid;
  const bool rejected = status.IsRejected();
  qpi.unschedulable_plugins.clear();
  qpi.pending_plugins.clear();
  if (diagnosis) {
    qpi.unschedulable_plugins.assign(diagnosis->unschedulable_plugins.begin(), diagnosis->unschedulable_plugins.end());
    qpi.pending_plugins.assign(diagnosis->pending_plugins.begin(), diagnosis->pending_plugins.end());
  } else if (rejected && !status.plugin().empty()) {
    qpi.unschedulable_plugins.emplace_back(status.plugin());
  }

  std::shared_ptr<const api::Pod> current;
  {
    std::lock_guard lock(pods_mu_);
    auto it = pending_pods_.find(uid);
    if (it != pending_pods_.end()) current = it->second;
  }
  if (!current) {
    // Deleted or bound meanwhile: nothing to requeue.
    queue_->Done(uid);
    return;
  }
  if (current.get() != &pod) qpi.pod_info = PodInfo::Create(current);
  const int64_t cycle = queue_->SchedulingCycle();
  queue_->AddUnschedulableIfNotPresent(qpi, cycle);

  if (nominating && nominating->mode == framework::NominatingMode::kOverride &&
      !nominating->nominated_node_name.empty()) {
    queue_->AddNominatedPod(qpi.pod_info, nominating->nominated_node_name);
    (void)client_->SetNominatedNodeName(*current, nominating->nominated_node_name);
  }
  api::PodCondition cond{"PodScheduled", "False", rejected ? "Unschedulable" : "SchedulerError", message};
  (void)client_->SetPodScheduledCondition(*current, cond);
  queue_->Done(uid);
  spdlog::debug("unable to schedule pod {}: {}", pod.Key(), message);
}

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

bool Scheduler::HasBindingWork() const {
  std::lock_guard lock(binding_mu_);
  return bindings_in_flight_ > 0;
}

void Scheduler::RunBindingCycle(Framework* fwk, std::shared_ptr<CycleState> state, QueuedPodInfo qpi,
                                PodInfoPtr assumed, std::string host, Status permit_status) {
  waiting_pods_->Remove(assumed->pod().metadata.uid);
  Status s = permit_status;
  if (s.IsSuccess()) s = fwk->RunPreBindPlugins(*state, *assumed, host);
  if (s.IsSuccess()) {
    s = fwk->RunBindPlugins(*state, *assumed, host);
    if (s.IsSkip()) s = Status::Error("no bind plugin bound the pod");
  }
  if (s.IsSuccess()) {
    cache_->FinishBinding(assumed->pod());
    fwk->RunPostBindPlugins(*state, *assumed, host);
    queue_->Done(assumed->pod().metadata.uid);
    return;
  }
  // Undo: Unreserve in reverse, forget the assumed pod (its resources are free again, which may
  // help pods waiting for them), and requeue.
  fwk->RunReservePluginsUnreserve(*state, *assumed, host);
  (void)cache_->ForgetPod(assumed->pod());
  queue_->MoveAllToActiveOrBackoffQueue(framework::events::AssignedPodDelete(), {.old_pod = &assumed->pod()});
  std::string message = s.IsRejected() ? s.Message() : fmt::format("binding rejected: {}", s.Message());
  HandleSchedulingFailure(*fwk, std::move(qpi), s, nullptr, nullptr, message);
}

// ---------------------------------------------------------------------------------------------
// Timers

void Scheduler::FireTimers() {
  waiting_pods_->ExpireDue(clock_->NowNs());
  queue_->FlushBackoffQCompleted();
  queue_->FlushUnschedulablePodsLeftover();
}

std::optional<int64_t> Scheduler::NextTimerNs(bool include_unschedulable_timeout) const {
  std::optional<int64_t> t;
  // Without the unschedulable timeout, only backoff expiries count.
  if (include_unschedulable_timeout || queue_->NumBackoff() > 0) t = queue_->NextTimerNs();
  if (auto w = waiting_pods_->NextDeadline(); w && (!t || *w < *t)) t = w;
  return t;
}

}  // namespace kubesched::scheduler
