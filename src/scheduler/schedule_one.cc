// The scheduling cycle and the binding cycle of one pod (upstream's schedule_one.go): pop, find
// the nodes that pass Filter (nominated node first, then a rotating sample), PostFilter when none
// does, score, assume, Reserve, Permit; then WaitOnPermit, PreBind, Bind, PostBind. Every failure
// goes through HandleSchedulingFailure, which decides where the pod waits and what happens to its
// nomination, as upstream does.

#include <algorithm>
#include <atomic>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "scheduler/scheduler.h"
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

// Upstream's ErrNoNodesAvailable, reported as UnschedulableAndUnresolvable.
constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

using Explained = AttemptExplanation::Result;

// Upstream's clearNominatedNode: failures other than a PostFilter verdict drop any nomination.
const framework::PostFilterResult kClearNomination{framework::NominatingMode::kOverride, ""};

void AddPluginStatus(Diagnosis& d, const Status& s) {
  if (s.plugin().empty()) return;
  // Called per rejected node: the sets hold a few names, so look before building a string.
  std::set<std::string>& plugins = s.code() == framework::Code::kPending ? d.pending_plugins : d.unschedulable_plugins;
  for (const std::string& p : plugins) {
    if (p == s.plugin()) return;
  }
  plugins.emplace(s.plugin());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scheduling cycle

bool Scheduler::ScheduleOne() {
  std::optional<QueuedPodInfo> popped = queue_->Pop();
  if (!popped) return false;
  SchedulePopped(std::move(*popped));
  return true;
}

bool Scheduler::ScheduleOne(std::stop_token stop) {
  std::optional<QueuedPodInfo> popped = queue_->PopBlocking(stop);
  if (!popped) return false;
  SchedulePopped(std::move(*popped));
  return true;
}

void Scheduler::SchedulePopped(QueuedPodInfo qpi) {
  std::lock_guard cycle(cycle_mu_);
  const PodInfoPtr pod_info = qpi.pod_info;
  const api::Pod& pod = pod_info->pod();
  Framework* fwk = FrameworkFor(pod.spec.scheduler_name);
  if (!fwk) {
    queue_->Done(pod.metadata.uid);
    return;
  }
  // Upstream's skipPodSchedule: a pod being deleted is not scheduled, nor is one already assumed
  // (an update may have queued it again during its own cycle). Neither goes back to the queue.
  if (pod.metadata.deletion_timestamp_ns || cache_->IsAssumedPod(pod)) {
    queue_->Done(pod.metadata.uid);
    return;
  }
  {
    // Skip pods deleted or bound since they were queued.
    std::lock_guard lock(pods_mu_);
    if (!pending_pods_.contains(pod.metadata.uid)) {
      queue_->Done(pod.metadata.uid);
      return;
    }
  }
  ++attempts_;
  KS_LOG_V(3).InfoS("Attempting to schedule pod", "pod", log::KObj(pod));  // upstream's line and level
  const auto start = metrics_ ? metrics::MonotonicClock::now() : metrics::MonotonicClock::time_point{};

  auto state = std::make_shared<CycleState>();
  // Upstream times every plugin in a sample of the cycles only (pluginMetricsSamplePercent).
  if (metrics_) {
    state->record_plugin_metrics =
        std::uniform_int_distribution<int>(0, 99)(metrics_rng_) < metrics::kPluginMetricsSamplePercent;
  }
  cache_->UpdateSnapshot(*snapshot_);
  fwk->set_snapshot(snapshot_.get());
  // The pod's group, when a plugin places groups whole, is decided first (for all its pending
  // members: the later members' cycles then follow that decision).
  fwk->RunPodGroupCycles(*pod_info);

  Diagnosis diagnosis;
  auto result = SchedulePod(*fwk, *state, *pod_info, diagnosis);
  if (!result) {
    const Status& status = result.error().status;
    if (!result.error().fit_error) {
      // An error, or no nodes at all: no PostFilter, and any nomination is dropped.
      if (explaining_) {
        Explain(*fwk, *state, *pod_info, diagnosis, {}, nullptr, "", status.Message());
        FinishExplanation(pod, status.IsError() ? Explained::kError : Explained::kUnschedulable);
      }
      ObserveFailedAttempt(*fwk, status, start);
      HandleSchedulingFailure(*fwk, std::move(qpi), status, nullptr, kClearNomination, status.Message());
      return;
    }
    // No node fits: PostFilter (preemption) may make room for a later cycle. Its result decides
    // the nomination, also when it found nothing (a stale nomination is then cleared).
    framework::PostFilterResult nominating = kClearNomination;
    if (fwk->HasPostFilterPlugins()) {
      auto [pf_result, pf_status] = fwk->RunPostFilterPlugins(*state, *pod_info, diagnosis.node_to_status);
      diagnosis.post_filter_msg = pf_status.Message();
      if (pf_status.IsError()) {
        KS_LOG.ErrorS(pf_status.Message(), "Running PostFilter plugins failed", "pod", log::KObj(pod));
      }
      nominating = std::move(pf_result);
      if (metrics_) metrics_->ObservePreemptionAttempt();
    }
    std::vector<FilterReasonCount> reasons = FitErrorReasons(snapshot_->NumNodes(), diagnosis);
    const std::string message = FitErrorMessage(snapshot_->NumNodes(), diagnosis, reasons);
    if (explaining_) {
      Explain(*fwk, *state, *pod_info, diagnosis, {}, nullptr, "", message);
      FinishExplanation(pod, Explained::kUnschedulable);
    }
    ObserveFailedAttempt(*fwk, Status(framework::Code::kUnschedulable), start);
    HandleSchedulingFailure(*fwk, std::move(qpi), Status(framework::Code::kUnschedulable, message), &diagnosis,
                            nominating, message, std::move(reasons));
    return;
  }

  if (metrics_) metrics_->ObserveAlgorithm(metrics::SinceInSeconds(start));
  const std::string host = result->suggested_host;
  auto assumed_pod = std::make_shared<api::Pod>(pod);
  assumed_pod->spec.node_name = host;
  PodInfoPtr assumed = pod_info->WithPod(assumed_pod);
  if (Status s = cache_->AssumePod(assumed); !s.IsSuccess()) {
    if (explaining_) FinishExplanation(pod, Explained::kError, s.Message());
    ObserveFailedAttempt(*fwk, s, start);
    HandleSchedulingFailure(*fwk, std::move(qpi), s, nullptr, kClearNomination, s.Message());
    return;
  }
  // The assumed pod now counts on its node: were it still nominated, Filter would count it twice.
  queue_->DeleteNominatedPodIfExists(*assumed_pod);

  if (Status s = fwk->RunReservePluginsReserve(*state, *assumed, host); !s.IsSuccess()) {
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    (void)cache_->ForgetPod(*assumed_pod);
    if (explaining_)
      FinishExplanation(pod, s.IsRejected() ? Explained::kUnschedulable : Explained::kError, s.Message());
    ObserveFailedAttempt(*fwk, s, start);
    HandleRejectionOnNode(*fwk, std::move(qpi), s, host);
    return;
  }

  {
    std::lock_guard lock(binding_mu_);
    ++bindings_in_flight_;  // counted from Permit on, so a waiting pod counts as binding work
  }
  auto on_permit_done = [this, fwk, state, qpi, assumed, host, start](Status s) {
    SubmitBinding([this, fwk, state, qpi, assumed, host, s, start] {
      RunBindingCycle(fwk, state, qpi, assumed, host, s, start);
    });
  };
  Status permit = fwk->RunPermitPlugins(*state, assumed, host, on_permit_done);
  if (permit.IsWait()) {
    if (explaining_) FinishExplanation(pod, Explained::kScheduled);
    return;  // the binding cycle continues when the waiting pod completes
  }
  if (!permit.IsSuccess()) {
    {
      std::lock_guard lock(binding_mu_);
      --bindings_in_flight_;
    }
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    (void)cache_->ForgetPod(*assumed_pod);
    if (explaining_) {
      FinishExplanation(pod, permit.IsRejected() ? Explained::kUnschedulable : Explained::kError, permit.Message());
    }
    ObserveFailedAttempt(*fwk, permit, start);
    HandleRejectionOnNode(*fwk, std::move(qpi), permit, host);
    return;
  }
  if (explaining_) FinishExplanation(pod, Explained::kScheduled);
  on_permit_done(Status::Success());
  return;
}

std::expected<Scheduler::ScheduleResult, Scheduler::ScheduleFailure> Scheduler::SchedulePod(Framework& fwk,
                                                                                            CycleState& state,
                                                                                            const PodInfo& pod,
                                                                                            Diagnosis& diagnosis) {
  explaining_ = options_.explain_all || (!options_.explain_pod.empty() && options_.explain_pod == pod.pod().Key());
  cycle_class_ = nullptr;
  if (snapshot_->NumNodes() == 0) {
    return std::unexpected(ScheduleFailure{Status::UnschedulableAndUnresolvable(std::string(kNoNodesAvailable))});
  }
  // Explained pods are evaluated in full (the explanation re-runs every plugin anyway).
  cycle_class_ = explaining_ ? nullptr : fwk.EquivalenceClassFor(pod);
  Status error;
  std::vector<const NodeInfo*> feasible = FindNodesThatFitPod(fwk, state, pod, diagnosis, error);
  if (!error.IsSuccess()) return std::unexpected(ScheduleFailure{error});
  if (feasible.empty()) {
    return std::unexpected(ScheduleFailure{Status(framework::Code::kUnschedulable), true});
  }
  if (feasible.size() == 1) {
    // Only one node passed: it is chosen without scoring, as upstream.
    if (explaining_) Explain(fwk, state, pod, diagnosis, feasible, nullptr, feasible[0]->name(), "");
    return ScheduleResult{feasible[0]->name(), cycle_evaluated_nodes_, 1};
  }
  std::vector<framework::runtime::NodePluginScores> scores;
  if (!fwk.HasScorePlugins() && extenders_.empty()) {
    scores.resize(feasible.size());
    for (size_t i = 0; i < feasible.size(); ++i) {
      scores[i].node = feasible[i];
      scores[i].total = 1;
    }
  } else {
    if (Status s = fwk.RunPreScorePlugins(state, pod, feasible); !s.IsSuccess()) {
      return std::unexpected(ScheduleFailure{s});
    }
    auto [sc, s] = fwk.RunScorePlugins(state, pod, feasible, explaining_, cycle_class_);
    if (!s.IsSuccess()) return std::unexpected(ScheduleFailure{s});
    scores = std::move(sc);
    if (!extenders_.empty()) AddExtenderScores(pod.pod(), feasible, scores);
  }
  std::string host = SelectHost(scores);
  if (explaining_) Explain(fwk, state, pod, diagnosis, feasible, &scores, host, "");
  return ScheduleResult{host, cycle_evaluated_nodes_, feasible.size()};
}

std::vector<const NodeInfo*> Scheduler::FindNodesThatFitPod(Framework& fwk, CycleState& state, const PodInfo& pod,
                                                            Diagnosis& diagnosis, Status& error) {
  auto all = snapshot_->List();
  explain_candidates_.reset();
  std::vector<std::string> narrowing_plugins;
  auto [pre_result, s] = fwk.RunPreFilterPlugins(state, pod, &narrowing_plugins);
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) {
      error = s;
      return {};
    }
    diagnosis.node_to_status.set_absent_status(s);
    // As upstream: the plugins that narrowed the nodes, and the one that rejected.
    for (const auto& p : narrowing_plugins) diagnosis.unschedulable_plugins.emplace(p);
    AddPluginStatus(diagnosis, s);
    diagnosis.pre_filter_msg = s.Message();
    return {};
  }

  // A pod nominated by an earlier preemption tries its nominated node first. The nominator's
  // record is the newest (the status update that carries it may not have arrived yet).
  std::optional<std::string> nominated = queue_->NominatedNodeOf(pod.pod());
  if (!nominated && !pod.pod().status.nominated_node_name.empty()) nominated = pod.pod().status.nominated_node_name;
  if (nominated && !nominated->empty()) {
    if (const NodeInfo* n = snapshot_->Get(*nominated)) {
      Status ns = fwk.RunFilterPluginsWithNominatedPods(state, pod, *n);
      if (ns.IsSuccess() && !extenders_.empty()) {
        // The extenders judge the nominated node too; their verdicts on it are not kept (the
        // search over all nodes that follows a rejection records its own).
        Diagnosis scratch;
        auto passed = FindNodesThatPassExtenders(pod.pod(), {n}, scratch, ns);
        if (ns.IsSuccess() && passed.empty()) ns = Status(framework::Code::kUnschedulable);
      }
      if (ns.IsSuccess()) {
        cycle_evaluated_nodes_ = 1;
        return {n};
      }
      // An error on the nominated node is logged and the search goes on over all nodes.
      if (ns.IsError())
        KS_LOG.ErrorS(ns.Message(), "Evaluation failed on nominated node", "pod", log::KObj(pod.pod()), "node",
                      *nominated);
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
    if (explaining_) {
      explain_candidates_.emplace();
      for (const NodeInfo* n : restricted) explain_candidates_->insert(n->name());
    }
  }
  size_t processed = 0;
  auto feasible = FindNodesThatPassFilters(fwk, state, pod, diagnosis, nodes, error, processed);
  cycle_evaluated_nodes_ = processed;
  // As upstream, the start index advances by the nodes processed, modulo all nodes (not only
  // those PreFilter left), also after an error, so every node gets its turn.
  next_start_node_index_ = (next_start_node_index_ + processed) % all.size();
  if (!error.IsSuccess() || extenders_.empty() || feasible.empty()) return feasible;
  const size_t before = feasible.size();
  feasible = FindNodesThatPassExtenders(pod.pod(), std::move(feasible), diagnosis, error);
  // Extenders register no events: a pod they rejected is retried on any cluster event.
  if (error.IsSuccess() && feasible.size() != before) diagnosis.unschedulable_plugins.emplace(framework::kExtenderName);
  return feasible;
}

std::vector<const NodeInfo*> Scheduler::FindNodesThatPassExtenders(const api::Pod& pod,
                                                                   std::vector<const NodeInfo*> feasible,
                                                                   Diagnosis& diagnosis, Status& error) {
  for (framework::Extender* extender : extender_ptrs_) {
    if (feasible.empty()) break;
    if (!extender->IsInterested(pod)) continue;
    auto result = extender->Filter(pod, feasible);
    if (!result) {
      if (extender->IsIgnorable()) {
        KS_LOG.InfoS("Skipping extender as it returned error and has ignorable flag set", "extender", extender->Name(),
                     "err", result.error());
        continue;
      }
      error = Status::Error(result.error());
      return {};
    }
    // The diagnosis keeps views of node names: those of the snapshot's nodes, which outlive the
    // cycle (an extender's answer naming a node the snapshot lacks has nothing to record).
    auto record = [&](const std::string& node, Status status) {
      if (const NodeInfo* n = snapshot_->Get(node)) diagnosis.node_to_status.Set(n->name(), std::move(status));
    };
    // Unresolvable verdicts win over resolvable ones for a node an extender put in both maps,
    // so preemption does not try a node it cannot help.
    for (const auto& [node, reason] : result->failed_and_unresolvable) {
      record(node, Status::UnschedulableAndUnresolvable(reason));
    }
    for (const auto& [node, reason] : result->failed) {
      if (result->failed_and_unresolvable.contains(node)) continue;
      record(node, Status(framework::Code::kUnschedulable, reason));
    }
    feasible = std::move(result->feasible);
  }
  return feasible;
}

std::vector<const NodeInfo*> Scheduler::FindNodesThatPassFilters(Framework& fwk, CycleState& state, const PodInfo& pod,
                                                                 Diagnosis& diagnosis,
                                                                 std::span<const NodeInfo* const> nodes, Status& error,
                                                                 size_t& processed) {
  const size_t n = nodes.size();
  processed = 0;
  if (n == 0) return {};
  const Framework& cfwk = fwk;
  std::optional<int32_t> percentage = cfwk.percentage_of_nodes_to_score();
  if (!percentage) percentage = options_.config.percentage_of_nodes_to_score;
  size_t to_find = static_cast<size_t>(NumFeasibleNodesToFind(percentage, static_cast<int32_t>(n)));
  // Without scoring, the first feasible node is as good as any.
  if (!fwk.HasScorePlugins()) to_find = 1;
  const size_t start = next_start_node_index_ % n;
  // The i-th node of the rotated order (i < n), without a division per node.
  auto rotated = [&](size_t i) {
    const size_t j = start + i;
    return nodes[j < n ? j : j - n];
  };

  std::vector<const NodeInfo*> feasible;
  if (!fwk.HasFilterPlugins()) {
    for (size_t i = 0; i < std::min(to_find, n); ++i) feasible.push_back(rotated(i));
    processed = feasible.size();
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
  // Verdicts of the pod's class on nodes unchanged since they were given are reused; the ones
  // computed are stored after each round (serially: the class's status table is not shared).
  framework::runtime::EquivalenceClass* memo =
      cycle_class_ && fwk.FilterVerdictsMemoizable(state) ? cycle_class_ : nullptr;
  std::vector<uint8_t>& memoize = filter_memoize_;
  // A remembered verdict is referred to (the class's statuses stay put for the cycle) and copied
  // once, into the diagnosis: most nodes of a busy cluster are judged this way.
  std::vector<const Status*>& remembered = filter_remembered_;
  if (memo) {
    memoize.assign(n, 0);
    remembered.assign(n, nullptr);
  }
  const bool check_nominated = memo && fwk.HasNominatedPods();
  size_t evaluated = 0;
  size_t found = 0;
  std::atomic<bool> had_error{false};
  while (evaluated < n && found < to_find) {
    const size_t round = std::min(n - evaluated, std::max<size_t>(to_find - found, 32));
    if (round_statuses.size() < round) round_statuses.resize(round);
    // Remembered verdicts first, on this thread: a lookup each, and on a busy cluster most nodes
    // have one. Only the nodes left need their Filter plugins run, shared with the workers when
    // that work is worth handing out (a Filter takes well under a microsecond on most nodes).
    std::vector<uint32_t>& to_run = filter_to_run_;
    to_run.clear();
    for (size_t k = 0; k < round; ++k) {
      const size_t idx = evaluated + k;
      if (memo) {
        const NodeInfo& node = *rotated(idx);
        // A node where nominated pods count is judged afresh (its verdict is not the class's).
        const Status* known = memo->FindVerdict(node);
        if (known && check_nominated && !fwk.NominatedPodsToCount(pod, node).empty()) known = nullptr;
        if (known) {
          remembered[idx] = known;  // never an error: errors are not remembered
          if (known->IsSuccess()) passed[idx] = 1;
          continue;
        }
      }
      to_run.push_back(static_cast<uint32_t>(k));
    }
    auto check = [&](int j) {
      const size_t k = to_run[static_cast<size_t>(j)];
      const size_t idx = evaluated + k;
      const NodeInfo& node = *rotated(idx);
      bool counted_nominated = false;
      Status s = fwk.RunFilterPluginsWithNominatedPods(state, pod, node, &counted_nominated);
      if (memo && !counted_nominated && !s.IsError()) memoize[idx] = 1;
      if (s.IsSuccess()) {
        passed[idx] = 1;
      } else {
        if (s.IsError()) had_error.store(true, std::memory_order_relaxed);
        round_statuses[k] = std::move(s);
      }
    };
    parallelizer_->UntilWorthIt(static_cast<int>(to_run.size()), check, filter_loop_cost_);
    for (size_t k = 0; k < round; ++k) {
      const size_t idx = evaluated + k;
      if (passed[idx]) ++found;
      if (memo && remembered[idx]) continue;
      if (memo && memoize[idx]) memo->StoreVerdict(*rotated(idx), passed[idx] ? Status() : round_statuses[k]);
      if (!passed[idx]) {
        failures.emplace_back(static_cast<uint32_t>(idx), std::move(round_statuses[k]));
        round_statuses[k] = Status();
      }
    }
    evaluated += round;
    if (had_error) break;
  }
  if (had_error) {
    processed = evaluated;
    for (auto& [idx, s] : failures) {
      if (s.IsError()) {
        error = s;
        return {};
      }
    }
  }
  // Keep the first to_find feasible nodes; nodes after the last kept one count as not processed.
  feasible.reserve(std::min(found, to_find));
  for (size_t i = 0; i < evaluated && feasible.size() < to_find; ++i) {
    processed = i + 1;
    if (passed[i]) feasible.push_back(rotated(i));
  }
  // The failed nodes' statuses matter only when the pod fits nowhere (they feed PostFilter and
  // the FitError), when extenders may still reject every node, or for an explanation: a cycle
  // that found nodes and needs none of that records nothing (upstream drops that diagnosis).
  if (!feasible.empty() && extenders_.empty() && !explaining_) return feasible;
  diagnosis.node_to_status.Reserve(processed - feasible.size());
  size_t next_failure = 0;
  // Rejections come in runs from one plugin: its name goes into the diagnosis once per run.
  std::string_view last_plugin;
  framework::Code last_code = framework::Code::kSuccess;
  for (size_t i = 0; i < processed; ++i) {
    if (passed[i]) continue;
    Status s = memo && remembered[i] ? *remembered[i] : std::move(failures[next_failure++].second);
    if (s.plugin().data() != last_plugin.data() || s.code() != last_code) {
      AddPluginStatus(diagnosis, s);
      last_plugin = s.plugin();
      last_code = s.code();
    }
    diagnosis.node_to_status.Append(rotated(i)->name(), std::move(s));
  }
  return feasible;
}

void Scheduler::AddExtenderScores(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                                  std::vector<framework::runtime::NodePluginScores>& scores) {
  std::vector<framework::Extender*> interested;
  for (framework::Extender* e : extender_ptrs_) {
    if (e->IsInterested(pod)) interested.push_back(e);
  }
  if (interested.empty()) return;
  // Each extender is a network round trip: they are asked at once, as upstream's goroutines.
  std::vector<std::expected<framework::ExtenderPrioritizeResult, std::string>> results(interested.size());
  auto ask = [&](int i) {
    results[static_cast<size_t>(i)] = interested[static_cast<size_t>(i)]->Prioritize(pod, nodes);
  };
  if (interested.size() == 1) {
    ask(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < interested.size(); ++i) threads.emplace_back(ask, static_cast<int>(i));
    ask(0);
    for (auto& t : threads) t.join();
  }
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) index.emplace(scores[i].node->name(), i);
  for (size_t e = 0; e < interested.size(); ++e) {
    if (!results[e]) {
      KS_LOG_V(5).InfoS("Failed to run extender's priority function. No score given by this extender.", "error",
                        results[e].error(), "pod", log::KObj(pod), "extender", interested[e]->Name());
      continue;
    }
    const int64_t weight = results[e]->weight;
    for (const framework::HostPriority& hp : results[e]->priorities) {
      auto it = index.find(hp.host);
      if (it == index.end()) continue;  // a node it was not asked about
      // Extenders score 0..10: scaled into the plugins' 0..100 range, then weighted.
      const int64_t score = hp.score * weight * (framework::kMaxNodeScore / framework::kMaxExtenderPriority);
      framework::runtime::NodePluginScores& node = scores[it->second];
      if (explaining_) {
        node.scores.push_back({.plugin = interested[e]->Name(),
                               .score = score,
                               .raw = hp.score,
                               .normalized = hp.score * (framework::kMaxNodeScore / framework::kMaxExtenderPriority),
                               .weight = weight});
      }
      node.total += score;
    }
  }
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

// ---------------------------------------------------------------------------------------------
// Failure handling

void Scheduler::HandleRejectionOnNode(Framework& fwk, QueuedPodInfo qpi, const Status& status,
                                      const std::string& host) {
  if (!status.IsRejected()) {
    HandleSchedulingFailure(fwk, std::move(qpi), status, nullptr, kClearNomination, status.Message());
    return;
  }
  Diagnosis diagnosis;
  diagnosis.node_to_status.Set(host, status);
  AddPluginStatus(diagnosis, status);
  std::vector<FilterReasonCount> reasons = FitErrorReasons(1, diagnosis);
  const std::string message = FitErrorMessage(1, diagnosis, reasons);
  HandleSchedulingFailure(fwk, std::move(qpi), status, &diagnosis, kClearNomination, message, std::move(reasons));
}

void Scheduler::HandleSchedulingFailure(Framework& fwk, QueuedPodInfo qpi, const Status& status, const Diagnosis* fit,
                                        const framework::PostFilterResult& nominating, const std::string& message,
                                        std::vector<FilterReasonCount> filter_reasons) {
  const api::Pod& pod = qpi.pod();
  const std::string uid = pod.metadata.uid;
  const bool rejected = status.IsRejected();
  if (options_.record_failed_attempts) {
    std::lock_guard lock(failed_attempts_mu_);
    failed_attempts_[uid] = FailedAttempt{.filter_reasons = std::move(filter_reasons)};
  }
  // Upstream records the event about the pod as this attempt saw it, even when it has since been
  // deleted or bound.
  if (client_->RecordsEvents()) {
    client_->RecordEvent({.regarding = framework::EventObjectReference::ForPod(pod),
                          .type = "Warning",
                          .reason = "FailedScheduling",
                          .action = "Scheduling",
                          .note = TruncateMessage(message),
                          .reporting_controller = fwk.name()});
  }
  // Only a rejection names the plugins whose events may make the pod schedulable; a pod that
  // failed with an error has none and is retried after backoff.
  qpi.unschedulable_plugins.clear();
  qpi.pending_plugins.clear();
  if (rejected && fit) {
    qpi.unschedulable_plugins.assign(fit->unschedulable_plugins.begin(), fit->unschedulable_plugins.end());
    qpi.pending_plugins.assign(fit->pending_plugins.begin(), fit->pending_plugins.end());
  }

  std::shared_ptr<const api::Pod> current;
  {
    std::lock_guard lock(pods_mu_);
    auto it = pending_pods_.find(uid);
    if (it != pending_pods_.end()) current = it->second;
  }
  if (!current) {
    // Deleted or bound meanwhile: nothing to requeue, and no nomination to keep.
    queue_->DeleteNominatedPodIfExists(pod);
    queue_->Done(uid);
    return;
  }
  if (current.get() != &pod) qpi.pod_info = PodInfo::Create(current);
  const int64_t cycle = queue_->SchedulingCycle();
  PodInfoPtr requeued = qpi.pod_info;
  queue_->AddUnschedulableIfNotPresent(std::move(qpi), cycle);

  // The nominator learns the outcome at once, so the next cycle sees it before the status update
  // arrives (upstream's AddNominatedPod with the NominatingInfo).
  const std::string& status_node = current->status.nominated_node_name;
  const std::string& node =
      nominating.mode == framework::NominatingMode::kOverride ? nominating.nominated_node_name : status_node;
  if (nominating.mode == framework::NominatingMode::kOverride) {
    queue_->AddNominatedPod(requeued, node);
  } else {
    // The status' nomination, or the plan the pod's nomination is (a plan lives in memory only).
    queue_->KeepNomination(requeued);
  }
  if (nominating.mode == framework::NominatingMode::kOverride && status_node != node) {
    (void)client_->SetNominatedNodeName(*current, node);
  }
  api::PodCondition cond{"PodScheduled", "False", rejected ? "Unschedulable" : "SchedulerError", message};
  // Upstream's updatePod sends nothing when the pod already has this condition: a retry that
  // fails the same way leaves the pod (and its resourceVersion) alone, so its FailedScheduling
  // occurrences stay isomorphic and aggregate into one Event series.
  const auto& conditions = current->status.conditions;
  const bool unchanged = std::ranges::any_of(conditions, [&cond](const api::PodCondition& c) {
    return c.type == cond.type && c.status == cond.status && c.reason == cond.reason && c.message == cond.message;
  });
  if (!unchanged) (void)client_->SetPodScheduledCondition(*current, cond);
  queue_->Done(uid);
  KS_LOG_V(4).InfoS("Unable to schedule pod", "pod", log::KObj(pod), "err", message);
}

// ---------------------------------------------------------------------------------------------
// Binding cycle

void Scheduler::ObserveFailedAttempt(const Framework& fwk, const Status& status,
                                     metrics::MonotonicClock::time_point start) {
  if (!metrics_) return;
  metrics_->ObserveAttempt(status.IsRejected() ? metrics::result::kUnschedulable : metrics::result::kError, fwk.name(),
                           metrics::SinceInSeconds(start));
}

std::optional<Status> Scheduler::BindThroughExtenders(const api::Pod& pod, const std::string& host) {
  for (framework::Extender* extender : extender_ptrs_) {
    if (!extender->IsBinder() || !extender->IsInterested(pod)) continue;
    auto bound = extender->Bind(pod, host);
    if (!bound && extender->IsIgnorable()) {
      KS_LOG.InfoS("Skipping extender in bind as it returned error and has ignorable flag set", "extender",
                   extender->Name(), "err", bound.error());
      continue;
    }
    if (!bound) return Status::Error(bound.error());
    return client_->BoundByExtender(pod, host);
  }
  return std::nullopt;
}

void Scheduler::RunBindingCycle(Framework* fwk, std::shared_ptr<CycleState> state, QueuedPodInfo qpi,
                                PodInfoPtr assumed, std::string host, Status permit_status,
                                metrics::MonotonicClock::time_point start) {
  const std::string uid = assumed->pod().metadata.uid;
  waiting_pods_->Remove(uid);
  Status s = permit_status;
  if (s.IsSuccess()) {
    // Past Permit, a failure cannot make the pod unschedulable (PreBind and Bind failures are
    // retried after backoff), so the queue stops recording events for it, as upstream.
    queue_->Done(uid);
    s = fwk->RunPreBindPlugins(*state, *assumed, host);
    if (s.IsSuccess()) {
      if (std::optional<Status> bound = BindThroughExtenders(assumed->pod(), host)) {
        s = std::move(*bound);
      } else {
        s = fwk->RunBindPlugins(*state, *assumed, host);
        if (s.IsSkip()) s = Status::Error("no bind plugin bound the pod");
      }
    }
  }
  if (s.IsSuccess()) {
    cache_->FinishBinding(assumed->pod());
    if (client_->RecordsEvents()) {
      const api::Pod& pod = assumed->pod();
      client_->RecordEvent(
          {.regarding = framework::EventObjectReference::ForPod(pod),
           .type = "Normal",
           .reason = "Scheduled",
           .action = "Binding",
           .note = fmt::format("Successfully assigned {}/{} to {}", pod.metadata.namespace_, pod.metadata.name, host),
           .reporting_controller = fwk->name()});
    }
    fwk->RunPostBindPlugins(*state, *assumed, host);
    KS_LOG_V(2).InfoS("Successfully bound pod to node", "pod", log::KObj(assumed->pod()), "node", host);
    if (metrics_) {
      metrics_->ObserveAttempt(metrics::result::kScheduled, fwk->name(), metrics::SinceInSeconds(start));
      const double sli = static_cast<double>(clock_->NowNs() - qpi.initial_attempt_timestamp_ns) / 1e9;
      metrics_->ObservePodScheduled(qpi.attempts, sli);
    }
    return;
  }
  // Undo: Unreserve in reverse and forget the assumed pod. Its resources are free again, which is
  // an AssignedPodDelete for the pods waiting for them. After a rejection (at WaitOnPermit) the
  // pod itself is still in flight: the move waits until it is requeued and leaves it out, or the
  // recorded event would send it straight back to backoff.
  fwk->RunReservePluginsUnreserve(*state, *assumed, host);
  const bool forgotten = cache_->ForgetPod(assumed->pod()).IsSuccess();
  const framework::EventObjects objects{.old_pod = &assumed->pod()};
  if (forgotten && !s.IsRejected()) {
    queue_->MoveAllToActiveOrBackoffQueue(framework::events::AssignedPodDelete(), objects);
  }
  ObserveFailedAttempt(*fwk, s, start);
  if (s.IsRejected()) {
    HandleRejectionOnNode(*fwk, std::move(qpi), s, host);
  } else {
    const std::string message = fmt::format("binding rejected: {}", s.Message());
    HandleSchedulingFailure(*fwk, std::move(qpi), s, nullptr, kClearNomination, message);
  }
  if (forgotten && s.IsRejected()) {
    queue_->MoveAllToActiveOrBackoffQueue(framework::events::AssignedPodDelete(), objects,
                                          [&uid](const api::Pod& p) { return p.metadata.uid != uid; });
  }
}

}  // namespace kubesched::scheduler
