#include "plugins/batch_placement/batch_placement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/taints.h"
#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"
#include "optimizer/mip.h"
#include "optimizer/pattern_bound.h"
#include "plugins/helper/placement_input.h"
#include "plugins/node_affinity/node_selector.h"
#include "util/log.h"

namespace kubesched::plugins::batch_placement {

using framework::Code;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

std::string Uid(const api::Pod& pod) { return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid; }

}  // namespace

std::expected<BatchPlacementArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                    const std::string& path) {
  BatchPlacementArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  const std::string size_path = api::field_path::Child(path, "maxBatchSize");
  const std::string window_path = api::field_path::Child(path, "batchWindowSeconds");
  const std::string timeout_path = api::field_path::Child(path, "solverTimeoutSeconds");
  const std::string objective_path = api::field_path::Child(path, "objective");
  const std::string solver_path = api::field_path::Child(path, "solver");
  if (d.Object(json, path,
               {"maxBatchSize", "batchWindowSeconds", "solverTimeoutSeconds", "objective", "solver", "apiVersion",
                "kind"})) {
    if (auto v = d.Int32(json.Find("maxBatchSize"), size_path)) args.max_batch_size = *v;
    if (auto v = d.Seconds(json.Find("batchWindowSeconds"), window_path)) args.batch_window_seconds = *v;
    if (auto v = d.Seconds(json.Find("solverTimeoutSeconds"), timeout_path)) {
      args.solver_timeout_seconds = *v;
    }
    if (auto v = d.String(json.Find("objective"), objective_path)) args.objective = *v;
    if (auto v = d.String(json.Find("solver"), solver_path)) args.solver = *v;
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  if (args.max_batch_size < 1 || args.max_batch_size > 100000) {
    errors.push_back(
        config::FieldInvalid(size_path, std::to_string(args.max_batch_size), "not in valid range [1, 100000]"));
  }
  if (!(args.batch_window_seconds >= 0 && args.batch_window_seconds <= 3600)) {
    errors.push_back(config::FieldInvalid(window_path, fmt::format("{}", args.batch_window_seconds),
                                          "not in valid range [0, 3600]"));
  }
  if (!(args.solver_timeout_seconds > 0 && args.solver_timeout_seconds <= 3600)) {
    errors.push_back(config::FieldInvalid(timeout_path, fmt::format("{}", args.solver_timeout_seconds),
                                          "not in valid range (0, 3600]"));
  }
  if (args.objective != "MostPlacedFewestNodes") {
    errors.push_back(config::FieldNotSupported(objective_path, args.objective, {"MostPlacedFewestNodes"}));
  }
  if (!optimizer::MakeMipSolver(args.solver)) {
    errors.push_back(config::FieldNotSupported(solver_path, args.solver, {"cbc", "glpk"}));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

std::string EncodeArgs(const BatchPlacementArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("maxBatchSize").Int64(args.max_batch_size);
  w.Key("batchWindowSeconds").Double(args.batch_window_seconds);
  w.Key("solverTimeoutSeconds").Double(args.solver_timeout_seconds);
  w.Key("objective").String(args.objective);
  w.Key("solver").String(args.solver);
  w.EndObject();
  return std::move(w).Take();
}

bool BatchPlacement::IsGangMember(const api::Pod& pod) const {
  for (const api::PodGroupApi api : {api::PodGroupApi::kScheduling, api::PodGroupApi::kCoscheduling}) {
    const std::string_view name = api::PodGroupOf(pod, api);
    if (name.empty()) continue;
    const framework::PodGroupTracker* groups = handle_->PodGroups(api);
    if (groups == nullptr) continue;
    const auto group = groups->Group(pod.metadata.namespace_, name);
    if (group != nullptr && group->policy == api::PodGroupPolicy::kGang) return true;
  }
  return false;
}

Status BatchPlacement::PreEnqueue(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  const std::string uid = Uid(pod);
  if (released_.contains(uid)) return Status();
  // A pod preemption nominated has a node waiting for it: a batch must not place it elsewhere.
  // (Nominations and plans the nominator holds in memory only are found at Tick: PreEnqueue runs
  // under the queue's lock and cannot ask the nominator.)
  if (!pod.status.nominated_node_name.empty()) return Status();
  // A gang's members are placed together by their group's cycle (GangScheduling), not one by one
  // among a batch's pods.
  if (IsGangMember(pod)) return Status();
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
  optimizer::PlacementInput input = helper::MakePlacementInput(*handle_, batch, handle_->SnapshotSharedLister().List());
  {
    std::lock_guard lock(mu_);
    RememberNodesLocked(input.nodes);
  }
  optimizer::PlacementResult result = optimizer::PlaceBatch(input, options);
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
    stats_.plans += result.apply_plan ? 1 : 0;
    for (const auto& p : batch) batched_.emplace(Uid(p->pod()), p);
    // Each pod's last batch decides how it counts.
    for (const auto& p : result.plan) {
      if (p.node.empty())
        placed_by_.erase(Uid(p.pod->pod()));
      else
        placed_by_[Uid(p.pod->pod())] = result.apply_plan;
    }
    {
      BatchRecord rec;
      rec.pods = batch.size();
      rec.result = result;
      rec.result.plan.clear();
      rec.result.unplaced_reasons.clear();
      batch_records_.push_back(std::move(rec));
      for (const auto& p : result.plan) {
        pod_records_[Uid(p.pod->pod())] = PodRecord{batch_records_.size() - 1, p.node, p.fitting_nodes};
      }
    }
    stats_.pods = static_cast<int64_t>(batched_.size());
    stats_.placed = static_cast<int64_t>(placed_by_.size());
    stats_.planned = std::count_if(placed_by_.begin(), placed_by_.end(), [](const auto& kv) { return kv.second; });
    run_bound_.reset();
    stats_.all_optimal = stats_.all_optimal && result.optimal;
    stats_.max_placed_gap = std::max(stats_.max_placed_gap, result.placed_gap);
    stats_.stranded = result.stranded;
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

std::string BatchPlacement::ExplainPod(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  auto it = pod_records_.find(Uid(pod));
  if (it == pod_records_.end()) return "";
  const PodRecord& pr = it->second;
  const BatchRecord& br = batch_records_[pr.batch];
  const optimizer::PlacementResult& r = br.result;
  const std::string batch =
      fmt::format("batch {} of {} ({} pods, {} groups)", pr.batch + 1, batch_records_.size(), br.pods, r.groups);
  const std::string compared = fmt::format(
      "it places {} pods (at most {:.0f} can be: the pattern bound; the profile one by one places {}), strands {:.2f} "
      "accelerator units (one by one: {:.2f}) and newly uses {} nodes (one by one: {})",
      r.placed, r.placed_bound, r.greedy_placed, r.stranded, r.greedy_stranded, r.new_nodes_used, r.greedy_new_nodes);
  if (!r.apply_plan) {
    return fmt::format("{} made no plan: {}; no better than the profile alone, so the pod took its own cycle.", batch,
                       compared);
  }
  // The objective level on which the plan beat what the profile does one by one.
  std::string level = "the profile's own scores between otherwise equal placements";
  if (r.placed > r.greedy_placed) {
    level = "most pods placed";
  } else if (r.stranded < r.greedy_stranded - 1e-6) {
    level = "least stranded accelerator capacity";
  } else if (r.new_nodes_used < r.greedy_new_nodes) {
    level = "fewest newly used nodes";
  }
  const std::string verdict = r.optimal ? "proved optimal" : "not proved optimal (" + r.stopped_by + ")";
  if (pr.node.empty()) {
    return fmt::format("{} left it out of its plan ({}; {}, decided on {}); it is retried when room appears.", batch,
                       verdict, compared, level);
  }
  return fmt::format(
      "{} planned it on {}, one of the {} nodes its filters accept, with the {} placement; {}; the plan beat the "
      "profile one by one on {}; {}.",
      batch, pr.node, pr.fitting_nodes, r.source, compared, level, verdict);
}

BatchStats BatchPlacement::stats(bool with_run_bound) const {
  std::lock_guard lock(mu_);
  BatchStats out = stats_;
  if (!with_run_bound) return out;
  if (!run_bound_) run_bound_ = RunBoundLocked();
  out.run_bound = *run_bound_;
  return out;
}

void BatchPlacement::RememberNodesLocked(std::span<const framework::NodeInfo* const> nodes) {
  for (const framework::NodeInfo* n : nodes) {
    if (seen_nodes_.contains(n->name())) continue;
    framework::Resource free = n->allocatable();
    free.Sub(n->requested());
    free.allowed_pod_number = n->allocatable().allowed_pod_number - static_cast<int64_t>(n->pods().size());
    seen_nodes_.emplace(n->name(), SeenNode{n->node_ptr(), std::move(free)});
  }
}

double BatchPlacement::RunBoundLocked() const {
  if (batched_.empty() || seen_nodes_.empty()) return static_cast<double>(batched_.size());
  // Dimensions: cpu, memory, pods, and every extended resource a batched pod requests.
  std::vector<std::string> scalars;
  for (const auto& [uid, pi] : batched_) {
    for (const auto& [name, q] : pi->requests.scalar) {
      if (q > 0 && std::find(scalars.begin(), scalars.end(), name) == scalars.end()) scalars.push_back(name);
    }
  }
  std::sort(scalars.begin(), scalars.end());
  const size_t R = 3 + scalars.size();
  auto vector_of = [&](const framework::Resource& r, int64_t pods) {
    std::vector<int64_t> v(R);
    v[0] = r.milli_cpu;
    v[1] = r.memory;
    v[2] = pods;
    for (size_t i = 0; i < scalars.size(); ++i) v[3 + i] = r.Scalar(scalars[i]);
    for (auto& x : v) x = std::max<int64_t>(0, x);
    return v;
  };
  // Node classes: free room, labels and taints alike.
  struct Class {
    const api::Node* node;
    std::vector<int64_t> free;
    int64_t count = 0;
  };
  std::vector<Class> classes;
  std::map<std::string, size_t> class_of;
  for (const auto& [name, seen] : seen_nodes_) {
    std::vector<int64_t> free = vector_of(seen.free, seen.free.allowed_pod_number);
    std::string key = fmt::format("{}|{}", fmt::join(free, ","), seen.node->spec.unschedulable);
    for (const auto& [k, v] : seen.node->metadata.labels) {
      if (k != "kubernetes.io/hostname") key += "|" + k + "=" + v;
    }
    for (const auto& t : seen.node->spec.taints)
      key += "|" + t.key + "=" + t.value + ":" + std::string(api::ToString(t.effect));
    auto [it, inserted] = class_of.emplace(std::move(key), classes.size());
    if (inserted) classes.push_back({seen.node.get(), std::move(free), 0});
    classes[it->second].count += 1;
  }
  // Shapes: requests and the classes the pod may run on (its node affinity and selector, and the
  // taints it tolerates): what holds whatever else runs.
  optimizer::PatternBoundInput in;
  in.num_resources = R;
  std::map<std::pair<std::vector<int64_t>, std::vector<uint8_t>>, size_t> shape_of;
  for (const auto& [uid, pi] : batched_) {
    const api::Pod& pod = pi->pod();
    const node_affinity::RequiredNodeAffinity affinity(pod);
    std::vector<uint8_t> may(classes.size());
    for (size_t c = 0; c < classes.size(); ++c) {
      const api::Node& node = *classes[c].node;
      may[c] = affinity.Match(node) && api::FindMatchingUntoleratedTaint(node.spec.taints, pod.spec.tolerations,
                                                                         api::DoNotScheduleTaintsFilter) == nullptr;
    }
    auto [it, inserted] =
        shape_of.emplace(std::make_pair(vector_of(pi->requests, 1), std::move(may)), in.shapes.size());
    if (inserted) in.shapes.push_back({it->first.first, 0, 1});
    in.shapes[it->second].count += 1;
  }
  for (const auto& c : classes) {
    optimizer::PatternBoundInput::NodeClass nc;
    nc.capacity = c.free;
    nc.count = c.count;
    nc.max_per_node.assign(in.shapes.size(), 0);
    in.classes.push_back(std::move(nc));
  }
  for (const auto& [key, s] : shape_of) {
    for (size_t c = 0; c < classes.size(); ++c) {
      if (key.second[c]) in.classes[c].max_per_node[s] = std::numeric_limits<int32_t>::max();
    }
  }
  optimizer::PatternBoundOptions options;
  options.time_limit_seconds = 1;
  auto r = optimizer::ComputePatternBound(in, options);
  return r ? r->bound : static_cast<double>(batched_.size());
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return std::make_unique<BatchPlacement>(std::move(*decoded), handle);
}

}  // namespace kubesched::plugins::batch_placement
