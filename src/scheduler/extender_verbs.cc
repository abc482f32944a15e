// The scheduler answering an upstream kube-scheduler's extender verbs (`kubesched extender`):
// the chosen profile's plugins run on the nodes a request names, against the snapshot of the
// cache that the cluster's events (or the requests' own node objects) keep current. Each verb
// holds cycle_mu_ as a scheduling cycle does: the snapshot, the frameworks' snapshot pointer and
// their scratch buffers are shared with cycles and timers.

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "framework/preemption/evaluator.h"
#include "scheduler/scheduler.h"

namespace kubesched::scheduler {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;
using framework::runtime::Framework;

namespace {

// Names the evaluator in rejections of victims waiting at Permit; the extender evicts nothing,
// so it never appears.
constexpr std::string_view kEvaluatorName = "kubesched-extender";

std::string UnknownProfile(std::string_view profile) {
  return fmt::format("kubesched extender has no profile \"{}\"", profile);
}

// The named nodes the snapshot has, with their positions in the request.
struct ResolvedNodes {
  std::vector<const NodeInfo*> nodes;
  std::vector<size_t> positions;
};

ResolvedNodes Resolve(const cache::Snapshot& snapshot, std::span<const std::string> names) {
  ResolvedNodes r;
  r.nodes.reserve(names.size());
  r.positions.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (const NodeInfo* n = snapshot.Get(names[i])) {
      r.nodes.push_back(n);
      r.positions.push_back(i);
    }
  }
  return r;
}

// Runs a verb's body, turning an exception a plugin let escape into the verb's error: it must
// not cross into the HTTP layer.
template <typename F>
auto Guarded(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    return std::unexpected(fmt::format("kubesched extender: {}", e.what()));
  } catch (...) {
    return std::unexpected(std::string("kubesched extender: unexpected exception"));
  }
}

}  // namespace

std::string UnknownNodeReason(std::string_view node_name) {
  return fmt::format("node \"{}\" is not known to the kubesched extender (not in its view of the cluster)", node_name);
}

void Scheduler::LearnNodes(std::span<const std::shared_ptr<const api::Node>> nodes) {
  std::lock_guard cycle(cycle_mu_);
  cache_->UpdateSnapshot(*snapshot_);
  for (const auto& node : nodes) {
    if (!node) continue;
    const NodeInfo* known = snapshot_->Get(node->metadata.name);
    if (!known || !known->node()) {
      cache_->AddNode(node);
      continue;
    }
    // The objects' full JSON decides: a request repeating a node unchanged (the common case) costs
    // the cache no generation bump, so the snapshot copies nothing.
    const api::Node& have = *known->node();
    const bool same = have.json && node->json ? *have.json == *node->json : false;
    if (!same) cache_->UpdateNode(node);
  }
}

std::expected<ExtenderFilterVerdict, std::string> Scheduler::ExtenderFilter(std::string_view profile,
                                                                            const api::Pod& pod,
                                                                            std::span<const std::string> node_names) {
  std::lock_guard cycle(cycle_mu_);
  Framework* found = FrameworkFor(std::string(profile));
  if (!found) return std::unexpected(UnknownProfile(profile));
  Framework& fwk = *found;
  return Guarded([&]() -> std::expected<ExtenderFilterVerdict, std::string> {
    cache_->UpdateSnapshot(*snapshot_);
    fwk.set_snapshot(snapshot_.get());
    const PodInfoPtr pod_info = PodInfo::Create(std::make_shared<const api::Pod>(pod));
    ExtenderFilterVerdict verdict;
    const ResolvedNodes resolved = Resolve(*snapshot_, node_names);
    std::vector<uint8_t> known(node_names.size(), 0);
    for (size_t p : resolved.positions) known[p] = 1;
    for (size_t i = 0; i < node_names.size(); ++i) {
      if (!known[i]) verdict.failed[node_names[i]] = UnknownNodeReason(node_names[i]);
    }

    CycleState state;
    std::vector<std::string> narrowing;
    auto [pre_result, pre_status] = fwk.RunPreFilterPlugins(state, *pod_info, &narrowing);
    if (!pre_status.IsSuccess()) {
      if (!pre_status.IsRejected()) return std::unexpected(pre_status.Message());
      // PreFilter rejected the pod: every node fails with its message, as the scheduling
      // cycle's diagnosis reports it for all nodes.
      auto& target = pre_status.code() == framework::Code::kUnschedulableAndUnresolvable
                         ? verdict.failed_and_unresolvable
                         : verdict.failed;
      for (const NodeInfo* n : resolved.nodes) target[n->name()] = pre_status.Message();
      return verdict;
    }
    const std::string narrowed_reason =
        pre_result.AllNodes() ? std::string()
                              : fmt::format("node(s) didn't satisfy plugin(s) [{}]", fmt::join(narrowing, " "));

    // Every node is evaluated (no sampling: the request's nodes are all the answer is about).
    const size_t n = resolved.nodes.size();
    std::vector<Status> statuses(n);
    auto check = [&](int k) {
      const NodeInfo& node = *resolved.nodes[static_cast<size_t>(k)];
      if (!pre_result.AllNodes() && !pre_result.node_names->contains(node.name())) {
        statuses[static_cast<size_t>(k)] = Status::UnschedulableAndUnresolvable(narrowed_reason);
        return;
      }
      statuses[static_cast<size_t>(k)] = fwk.RunFilterPluginsWithNominatedPods(state, *pod_info, node);
    };
    if (n >= kMinNodesForParallelFilter) {
      parallelizer_->Until(static_cast<int>(n), check);
    } else {
      for (size_t k = 0; k < n; ++k) check(static_cast<int>(k));
    }
    verdict.passed.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      const Status& s = statuses[k];
      const std::string& name = resolved.nodes[k]->name();
      if (s.IsSuccess()) {
        verdict.passed.push_back(name);
      } else if (s.IsError()) {
        return std::unexpected(s.Message());
      } else if (s.code() == framework::Code::kUnschedulableAndUnresolvable) {
        verdict.failed_and_unresolvable[name] = s.Message();
      } else {
        verdict.failed[name] = s.Message();
      }
    }
    return verdict;
  });
}

std::expected<std::vector<framework::HostPriority>, std::string> Scheduler::ExtenderPrioritize(
    std::string_view profile, const api::Pod& pod, std::span<const std::string> node_names) {
  std::lock_guard cycle(cycle_mu_);
  Framework* found = FrameworkFor(std::string(profile));
  if (!found) return std::unexpected(UnknownProfile(profile));
  Framework& fwk = *found;
  return Guarded([&]() -> std::expected<std::vector<framework::HostPriority>, std::string> {
    cache_->UpdateSnapshot(*snapshot_);
    fwk.set_snapshot(snapshot_.get());
    std::vector<framework::HostPriority> priorities(node_names.size());
    for (size_t i = 0; i < node_names.size(); ++i) priorities[i].host = node_names[i];
    const ResolvedNodes resolved = Resolve(*snapshot_, node_names);
    if (resolved.nodes.empty() || !fwk.HasScorePlugins()) return priorities;

    const PodInfoPtr pod_info = PodInfo::Create(std::make_shared<const api::Pod>(pod));
    CycleState state;
    // PreFilter first, as in a cycle: plugins may keep state from it that scoring reads. A
    // rejection leaves nothing to rank (every node scores 0).
    auto [pre_result, pre_status] = fwk.RunPreFilterPlugins(state, *pod_info);
    if (!pre_status.IsSuccess()) {
      if (!pre_status.IsRejected()) return std::unexpected(pre_status.Message());
      return priorities;
    }
    if (Status s = fwk.RunPreScorePlugins(state, *pod_info, resolved.nodes); !s.IsSuccess()) {
      return std::unexpected(s.Message());
    }
    auto [scores, s] = fwk.RunScorePlugins(state, *pod_info, resolved.nodes);
    if (!s.IsSuccess()) return std::unexpected(s.Message());
    int64_t best = 0;
    for (const auto& node : scores) best = std::max(best, node.total);
    if (best <= 0) return priorities;
    for (size_t k = 0; k < scores.size(); ++k) {
      const int64_t total = std::max<int64_t>(scores[k].total, 0);
      priorities[resolved.positions[k]].score = framework::kMaxExtenderPriority * total / best;
    }
    return priorities;
  });
}

std::expected<framework::NodeToVictims, std::string> Scheduler::ExtenderPreempt(
    std::string_view profile, const api::Pod& pod, std::span<const std::string> node_names) {
  std::lock_guard cycle(cycle_mu_);
  Framework* found = FrameworkFor(std::string(profile));
  if (!found) return std::unexpected(UnknownProfile(profile));
  Framework& fwk = *found;
  return Guarded([&]() -> std::expected<framework::NodeToVictims, std::string> {
    cache_->UpdateSnapshot(*snapshot_);
    fwk.set_snapshot(snapshot_.get());
    framework::NodeToVictims result;
    const ResolvedNodes resolved = Resolve(*snapshot_, node_names);
    if (resolved.nodes.empty()) return result;

    const PodInfoPtr pod_info = PodInfo::Create(std::make_shared<const api::Pod>(pod));
    CycleState state;
    auto [pre_result, pre_status] = fwk.RunPreFilterPlugins(state, *pod_info);
    if (!pre_status.IsSuccess()) {
      if (!pre_status.IsRejected()) return std::unexpected(pre_status.Message());
      return result;  // evicting nobody's pods makes a pod PreFilter rejects fit
    }
    framework::preemption::Evaluator evaluator(kEvaluatorName, fwk);
    const auto pdbs = evaluator.PdbBudgets();
    const framework::preemption::PdbIndex index(pdbs);
    for (const NodeInfo* node : resolved.nodes) {
      if (!pre_result.AllNodes() && !pre_result.node_names->contains(node->name())) continue;
      // SelectVictimsOnNode works on copies: the snapshot and the PreFilter state stay as they are
      // for the next node.
      std::unique_ptr<NodeInfo> node_copy = node->Clone();
      std::unique_ptr<CycleState> state_copy = state.Clone();
      framework::NodeVictims victims;
      Status s = evaluator.SelectVictimsOnNode(*state_copy, *pod_info, *node_copy, pdbs, victims, &index);
      if (s.IsError()) return std::unexpected(s.Message());
      if (s.IsSuccess() && !victims.pods.empty()) result.emplace(node->name(), std::move(victims));
    }
    return result;
  });
}

}  // namespace kubesched::scheduler
