#include "plugins/batch_placement/batch_placement.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optimizer/mip.h"
#include "plugins/helper/strict_decoder.h"
#include "plugins/helper/taints.h"
#include "plugins/helper/validation.h"
#include "plugins/node_affinity/node_selector.h"
#include "util/log.h"

namespace kubesched::plugins::batch_placement {

using framework::Code;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

std::string Uid(const api::Pod& pod) { return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid; }

// The pod without what the model decides itself (required pod affinity, DoNotSchedule spread):
// the profile's filters then judge only what does not couple pods.
PodInfoPtr Relaxed(const PodInfo& pi) {
  auto pod = std::make_shared<api::Pod>(pi.pod());
  if (pod->spec.affinity && pod->spec.affinity->pod_affinity) pod->spec.affinity->pod_affinity->required.clear();
  std::erase_if(pod->spec.topology_spread_constraints, [](const api::TopologySpreadConstraint& c) {
    return c.when_unsatisfiable == api::UnsatisfiableConstraintAction::kDoNotSchedule;
  });
  return PodInfo::Create(std::move(pod));
}

}  // namespace

std::expected<BatchPlacementArgs, framework::ArgsErrors> DecodeArgs(const nlohmann::json& json,
                                                                    const std::string& path) {
  BatchPlacementArgs args;
  std::vector<std::string> errors;
  helper::StrictDecoder d(errors);
  const std::string size_path = helper::PathChild(path, "maxBatchSize");
  const std::string window_path = helper::PathChild(path, "batchWindowSeconds");
  const std::string timeout_path = helper::PathChild(path, "solverTimeoutSeconds");
  const std::string objective_path = helper::PathChild(path, "objective");
  const std::string solver_path = helper::PathChild(path, "solver");
  if (d.Object(json, path,
               {"maxBatchSize", "batchWindowSeconds", "solverTimeoutSeconds", "objective", "solver", "apiVersion",
                "kind"})) {
    if (auto v = d.Int32(helper::Member(json, "maxBatchSize"), size_path)) args.max_batch_size = *v;
    if (auto v = d.Seconds(helper::Member(json, "batchWindowSeconds"), window_path)) args.batch_window_seconds = *v;
    if (auto v = d.Seconds(helper::Member(json, "solverTimeoutSeconds"), timeout_path)) {
      args.solver_timeout_seconds = *v;
    }
    if (auto v = d.String(helper::Member(json, "objective"), objective_path)) args.objective = *v;
    if (auto v = d.String(helper::Member(json, "solver"), solver_path)) args.solver = *v;
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  if (args.max_batch_size < 1 || args.max_batch_size > 100000) {
    errors.push_back(
        helper::FieldInvalid(size_path, std::to_string(args.max_batch_size), "not in valid range [1, 100000]"));
  }
  if (!(args.batch_window_seconds >= 0 && args.batch_window_seconds <= 3600)) {
    errors.push_back(helper::FieldInvalid(window_path, fmt::format("{}", args.batch_window_seconds),
                                          "not in valid range [0, 3600]"));
  }
  if (!(args.solver_timeout_seconds > 0 && args.solver_timeout_seconds <= 3600)) {
    errors.push_back(helper::FieldInvalid(timeout_path, fmt::format("{}", args.solver_timeout_seconds),
                                          "not in valid range (0, 3600]"));
  }
  if (args.objective != "MostPlacedFewestNodes") {
    errors.push_back(helper::FieldNotSupported(objective_path, args.objective, {"MostPlacedFewestNodes"}));
  }
  if (!optimizer::MakeMipSolver(args.solver)) {
    errors.push_back(helper::FieldNotSupported(solver_path, args.solver, {"cbc", "glpk"}));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

nlohmann::ordered_json EncodeArgs(const BatchPlacementArgs& args) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["maxBatchSize"] = args.max_batch_size;
  out["batchWindowSeconds"] = args.batch_window_seconds;
  out["solverTimeoutSeconds"] = args.solver_timeout_seconds;
  out["objective"] = args.objective;
  out["solver"] = args.solver;
  return out;
}

Status BatchPlacement::PreEnqueue(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  const std::string uid = Uid(pod);
  if (released_.contains(uid)) return Status();
  // A pod preemption nominated has a node waiting for it: a batch must not place it elsewhere.
  // (Nominations and plans the nominator holds in memory only are found at Tick: PreEnqueue runs
  // under the queue's lock and cannot ask the nominator.)
  if (!pod.status.nominated_node_name.empty()) return Status();
  if (held_.empty()) window_start_ns_ = handle_->clock().NowNs();
  held_.insert(uid);
  return Status(Code::kUnschedulableAndUnresolvable,
                fmt::format("waiting for the batch to close ({} of at most {} pods, window {}s)", held_.size(),
                            args_.max_batch_size, args_.batch_window_seconds));
}

std::pair<framework::PreFilterResult, Status> BatchPlacement::PreFilter(framework::CycleState&, const PodInfo& pod,
                                                                        std::span<const framework::NodeInfo* const>) {
  std::lock_guard lock(mu_);
  if (ticking_) return {{}, Status()};
  const std::string uid = Uid(pod.pod());
  released_.erase(uid);
  auto it = left_out_.find(uid);
  if (it == left_out_.end()) return {{}, Status()};
  Status s(Code::kUnschedulable, "the batch optimizer found no room for this pod: " + it->second);
  left_out_.erase(it);
  return {{}, s};
}

std::vector<framework::ClusterEventWithHint> BatchPlacement::EventsToRegister() const {
  using framework::ClusterEvent;
  using framework::EventResource;
  namespace action = framework::action;
  // A pod the batch left out may fit after room appears: a node added or changed, a pod gone.
  return {
      {ClusterEvent{EventResource::kNode,
                    action::kAdd | action::kUpdateNodeAllocatable | action::kUpdateNodeLabel | action::kUpdateNodeTaint,
                    "NodeAdd|UpdateNodeAllocatable|UpdateNodeLabel|UpdateNodeTaint"},
       nullptr},
      {ClusterEvent{EventResource::kAssignedPod,
                    action::kDelete | action::kUpdatePodLabel | action::kUpdatePodScaleDown,
                    "AssignedPodDelete|UpdatePodLabel|UpdatePodScaleDown"},
       nullptr},
  };
}

std::optional<int64_t> BatchPlacement::NextTickNs() const {
  std::lock_guard lock(mu_);
  if (held_.empty() || !window_start_ns_) return std::nullopt;
  if (static_cast<int64_t>(held_.size()) >= args_.max_batch_size) return *window_start_ns_;
  return *window_start_ns_ + static_cast<int64_t>(std::llround(args_.batch_window_seconds * 1e9));
}

optimizer::PlacementInput BatchPlacement::MakeInput(const std::vector<PodInfoPtr>& pods) {
  optimizer::PlacementInput in;
  in.pods = pods;
  in.nodes = handle_->SnapshotSharedLister().List();
  framework::Handle* h = handle_;
  in.static_fit = [h](const PodInfo& pod) -> std::function<std::string(const framework::NodeInfo&)> {
    PodInfoPtr relaxed = Relaxed(pod);
    auto state = std::make_shared<framework::CycleState>();
    auto [pre, status] = h->RunPreFilterPlugins(*state, *relaxed);
    if (!status.IsSuccess()) {
      std::string why = status.Message();
      return [why](const framework::NodeInfo&) { return why; };
    }
    return [h, relaxed, state, pre](const framework::NodeInfo& node) -> std::string {
      if (!pre.AllNodes() && !pre.node_names->contains(node.name())) return "excluded by PreFilter";
      Status s = h->RunFilterPlugins(*state, *relaxed, node);
      if (s.IsSuccess()) return "";
      return s.Message().empty() ? std::string("rejected by a filter") : s.Message();
    };
  };
  // The profile's scores of each node class for the group, as the pod's own cycle would rank them
  // on the snapshot before the batch: the tie-break between otherwise equal placements.
  in.scores = [h](const PodInfo& pod, std::span<const framework::NodeInfo* const> nodes) -> std::vector<int64_t> {
    PodInfoPtr relaxed = Relaxed(pod);
    framework::CycleState state;
    auto [pre, status] = h->RunPreFilterPlugins(state, *relaxed);
    if (!status.IsSuccess()) return {};
    auto [totals, s] = h->RunScoreTotals(state, *relaxed, nodes);
    if (!s.IsSuccess()) return {};
    return totals;
  };
  in.spread_node_eligible = [](const PodInfo& pod, const framework::NodeInfo& node, bool honor_affinity,
                               bool honor_taints) {
    if (honor_affinity && !node_affinity::RequiredNodeAffinity(pod.pod()).Match(*node.node())) return false;
    if (honor_taints && helper::FindMatchingUntoleratedTaint(node.node()->spec.taints, pod.pod().spec.tolerations,
                                                             helper::DoNotScheduleTaintsFilter) != nullptr) {
      return false;
    }
    return true;
  };
  in.namespace_labels = [h, cache = std::make_shared<std::map<std::string, std::optional<api::Labels>, std::less<>>>()](
                            std::string_view ns) -> const api::Labels* {
    auto it = cache->find(ns);
    if (it == cache->end()) it = cache->emplace(std::string(ns), h->client().NamespaceLabels(ns)).first;
    return it->second ? &*it->second : nullptr;
  };
  // Room promised to pods outside this batch: nominations (preemption) and earlier plans.
  std::set<std::string> batch;
  for (const auto& p : pods) batch.insert(Uid(p->pod()));
  in.reserved = [h, batch = std::move(batch)](const framework::NodeInfo& node) {
    framework::Resource r;
    for (const auto& p : h->nominator().NominatedPodsForNode(node.name())) {
      if (batch.contains(Uid(p->pod()))) continue;
      r.Add(p->requests);
      r.allowed_pod_number += 1;
    }
    return r;
  };
  return in;
}

void BatchPlacement::Tick(const std::vector<PodInfoPtr>& all_held) {
  // Pods that already have a node held for them (a preemptor's nomination, a moved pod's
  // replacement, an earlier plan) go their own way: the batch plans around the room they hold.
  std::vector<PodInfoPtr> held;
  std::vector<std::shared_ptr<const api::Pod>> spoken_for;
  for (const auto& p : all_held) {
    if (handle_->nominator().NominatedNodeOf(p->pod()))
      spoken_for.push_back(p->pod_ptr());
    else
      held.push_back(p);
  }
  if (!spoken_for.empty()) {
    {
      std::lock_guard lock(mu_);
      for (const auto& p : spoken_for) {
        held_.erase(Uid(*p));
        released_.insert(Uid(*p));
      }
    }
    handle_->Activate(spoken_for);
  }
  std::vector<PodInfoPtr> batch(
      held.begin(), held.begin() + std::min<size_t>(held.size(), static_cast<size_t>(args_.max_batch_size)));
  {
    std::lock_guard lock(mu_);
    ticking_ = true;
    // Pods held but not handed over were deleted or left the queue; the rest wait for the next batch.
    std::set<std::string> rest;
    for (size_t i = batch.size(); i < held.size(); ++i) rest.insert(Uid(held[i]->pod()));
    held_ = std::move(rest);
    window_start_ns_ = held_.empty() ? std::nullopt : std::optional<int64_t>(handle_->clock().NowNs());
  }
  if (batch.empty()) {
    std::lock_guard lock(mu_);
    ticking_ = false;
    return;
  }
  optimizer::PlacementOptions options;
  options.timeout_seconds = args_.solver_timeout_seconds;
  options.solver = args_.solver;
  optimizer::PlacementResult result = optimizer::PlaceBatch(MakeInput(batch), options);
  KS_LOG_V(2).InfoS("BatchPlacement placed a batch", "pods", batch.size(), "groups", result.groups, "nodeClasses",
                    result.node_classes, "placed", result.placed, "placedBound", result.placed_bound, "newNodes",
                    result.new_nodes_used, "stranded", result.stranded, "from", result.source, "plan",
                    result.apply_plan, "optimal", result.optimal, "stoppedBy", result.stopped_by, "gap", result.gap,
                    "seconds", result.seconds, "boundSeconds", result.bound_seconds, "solverSeconds",
                    result.solver_seconds, "greedyPlaced", result.greedy_placed, "greedyNewNodes",
                    result.greedy_new_nodes, "greedyStranded", result.greedy_stranded);

  std::vector<std::shared_ptr<const api::Pod>> order;
  {
    std::lock_guard lock(mu_);
    // Without a plan (the profile alone places the batch as well), the pods go through their own
    // cycles in queue order, unplanned, exactly as without the batch.
    if (result.apply_plan) {
      for (const auto& [uid, why] : result.unplaced_reasons) left_out_[uid] = why;
      for (const auto& p : result.plan) {
        released_.insert(Uid(p.pod->pod()));
        order.push_back(p.pod->pod_ptr());
      }
    } else {
      for (const auto& p : batch) {
        released_.insert(Uid(p->pod()));
        order.push_back(p->pod_ptr());
      }
    }
    stats_.batches += 1;
    stats_.pods += static_cast<int64_t>(batch.size());
    stats_.placed += result.placed;
    stats_.all_optimal = stats_.all_optimal && result.optimal;
    stats_.max_gap = std::max(stats_.max_gap, result.gap);
    stats_.solver_seconds += result.solver_seconds;
    stats_.seconds += result.seconds;
    if (!result.solver.empty()) stats_.solver = result.solver;
    ticking_ = false;
  }
  if (result.apply_plan) {
    for (const auto& p : result.plan) {
      if (!p.node.empty()) handle_->nominator().AddPlannedPod(p.pod, p.node);
    }
  }
  handle_->Activate(order);
}

BatchStats BatchPlacement::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(helper::AggregateErrors(decoded.error().errors));
  return std::make_unique<BatchPlacement>(std::move(*decoded), handle);
}

}  // namespace kubesched::plugins::batch_placement
