#include "plugins/cross_node_preemption/cross_node_preemption.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include <fmt/format.h>

#include "plugins/helper/strict_decoder.h"
#include "plugins/helper/validation.h"
#include "util/log.h"

namespace kubesched::plugins::cross_node_preemption {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;
namespace preemption = framework::preemption;

namespace {

const api::OwnerReference* ControllerOf(const api::Pod& pod) {
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

// Controllers that recreate a deleted pod elsewhere (a DaemonSet's pod belongs to its node).
bool Recreates(const api::OwnerReference& ref) {
  return ref.kind == "ReplicaSet" || ref.kind == "StatefulSet" || ref.kind == "Job" ||
         ref.kind == "ReplicationController";
}

// What a recreated pod shares with the pod it replaces: its controller and its template (labels
// and requests; a StatefulSet's pod also keeps its name). Name and uid are new.
std::string TemplateKey(const PodInfo& pi) {
  const api::Pod& pod = pi.pod();
  const api::OwnerReference* ref = ControllerOf(pod);
  if (!ref) return {};
  std::string key = fmt::format("{}/{}/{}/{}", pod.metadata.namespace_, ref->kind, ref->name, ref->uid);
  if (ref->kind == "StatefulSet") key += "/" + pod.metadata.name;
  for (const auto& [k, v] : pod.metadata.labels) {
    if (k == "pod-template-hash" || k == "controller-revision-hash") continue;
    key += fmt::format("|{}={}", k, v);
  }
  key += fmt::format("|{}|{}|{}", pi.requests.milli_cpu, pi.requests.memory, pod.Priority());
  return key;
}

// Decision times kept for percentiles (a long-running scheduler stops recording after these).
constexpr size_t kMaxRecordedDecisions = 1'000'000;

int64_t GraceSeconds(const api::Pod& pod) { return pod.spec.TerminationGracePeriodSeconds(); }

// The pod as its controller would recreate it: not bound to any node yet.
PodInfoPtr Unbound(const PodInfo& pi) {
  auto pod = std::make_shared<api::Pod>(pi.pod());
  pod->spec.node_name.clear();
  pod->status.nominated_node_name.clear();
  return pi.WithPod(std::move(pod));
}

// Memory enters the model in MiB (requests rounded up, room rounded down: never optimistic), so
// that the solver's rows do not mix byte counts with ones.
int64_t CeilMiB(int64_t bytes) { return bytes <= 0 ? bytes / (1 << 20) : (bytes + (1 << 20) - 1) / (1 << 20); }
int64_t FloorMiB(int64_t bytes) { return bytes >= 0 ? bytes / (1 << 20) : -CeilMiB(-bytes); }

bool PodOnNode(const NodeInfo& node, const std::string& uid) {
  return std::any_of(node.pods().begin(), node.pods().end(),
                     [&](const PodInfoPtr& pi) { return pi->pod().metadata.uid == uid; });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Args

std::expected<CrossNodePreemptionArgs, framework::ArgsErrors> DecodeArgs(const nlohmann::json& json,
                                                                         const std::string& path) {
  CrossNodePreemptionArgs args;
  std::vector<std::string> errors;
  helper::StrictDecoder d(errors);
  const std::string timeout_path = helper::PathChild(path, "solverTimeoutSeconds");
  const std::string ns_path = helper::PathChild(path, "protectedNamespaces");
  const std::string moves_path = helper::PathChild(path, "allowMoves");
  const std::string pods_path = helper::PathChild(path, "maxCandidatePods");
  const std::string dest_path = helper::PathChild(path, "maxDestinationNodes");
  const std::string plan_path = helper::PathChild(path, "planTimeoutSeconds");
  const std::string solver_path = helper::PathChild(path, "solver");
  if (d.Object(json, path,
               {"solverTimeoutSeconds", "protectedNamespaces", "allowMoves", "maxCandidatePods", "maxDestinationNodes",
                "planTimeoutSeconds", "solver", "apiVersion", "kind"})) {
    if (auto v = d.Seconds(helper::Member(json, "solverTimeoutSeconds"), timeout_path))
      args.solver_timeout_seconds = *v;
    if (!helper::Member(json, "protectedNamespaces").is_null()) {
      args.protected_namespaces = d.StringList(helper::Member(json, "protectedNamespaces"), ns_path);
    }
    if (auto v = d.Bool(helper::Member(json, "allowMoves"), moves_path)) args.allow_moves = *v;
    if (auto v = d.Int32(helper::Member(json, "maxCandidatePods"), pods_path)) args.max_candidate_pods = *v;
    if (auto v = d.Int32(helper::Member(json, "maxDestinationNodes"), dest_path)) args.max_destination_nodes = *v;
    if (auto v = d.Seconds(helper::Member(json, "planTimeoutSeconds"), plan_path)) args.plan_timeout_seconds = *v;
    if (auto v = d.String(helper::Member(json, "solver"), solver_path)) args.solver = *v;
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  if (!(args.solver_timeout_seconds > 0 && args.solver_timeout_seconds <= 3600)) {
    errors.push_back(helper::FieldInvalid(timeout_path, fmt::format("{}", args.solver_timeout_seconds),
                                          "not in valid range (0, 3600]"));
  }
  if (args.max_candidate_pods < 1 || args.max_candidate_pods > 100000) {
    errors.push_back(
        helper::FieldInvalid(pods_path, std::to_string(args.max_candidate_pods), "not in valid range [1, 100000]"));
  }
  if (args.max_destination_nodes < 0 || args.max_destination_nodes > 10000) {
    errors.push_back(
        helper::FieldInvalid(dest_path, std::to_string(args.max_destination_nodes), "not in valid range [0, 10000]"));
  }
  if (!(args.plan_timeout_seconds > 0 && args.plan_timeout_seconds <= 86400)) {
    errors.push_back(
        helper::FieldInvalid(plan_path, fmt::format("{}", args.plan_timeout_seconds), "not in valid range (0, 86400]"));
  }
  for (size_t i = 0; i < args.protected_namespaces.size(); ++i) {
    if (args.protected_namespaces[i].empty()) {
      errors.push_back(helper::FieldInvalid(helper::PathIndex(ns_path, i), "\"\"", "must not be empty"));
    }
  }
  if (!optimizer::MakeMipSolver(args.solver)) {
    errors.push_back(helper::FieldNotSupported(solver_path, args.solver, {"cbc", "glpk"}));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

nlohmann::ordered_json EncodeArgs(const CrossNodePreemptionArgs& args) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["solverTimeoutSeconds"] = args.solver_timeout_seconds;
  out["protectedNamespaces"] = args.protected_namespaces;
  out["allowMoves"] = args.allow_moves;
  out["maxCandidatePods"] = args.max_candidate_pods;
  out["maxDestinationNodes"] = args.max_destination_nodes;
  out["planTimeoutSeconds"] = args.plan_timeout_seconds;
  out["solver"] = args.solver;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Plugin

CrossNodePreemption::CrossNodePreemption(CrossNodePreemptionArgs args, framework::Handle& handle)
    : args_(std::move(args)),
      handle_(handle),
      evaluator_(kName, handle),
      solver_(optimizer::MakeFallbackSolver(args_.solver)) {}

CrossNodeStats CrossNodePreemption::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

size_t CrossNodePreemption::active_plans() const {
  std::lock_guard lock(mu_);
  return plans_.size();
}

size_t CrossNodePreemption::held_moves() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [uid, plan] : plans_) {
    for (const auto& m : plan.moves) n += m.done ? 0 : 1;
  }
  return n;
}

std::pair<framework::PreFilterResult, Status> CrossNodePreemption::PreFilter(CycleState&, const PodInfo& pod,
                                                                             std::span<const NodeInfo* const> nodes) {
  const api::Pod& p = pod.pod();
  std::lock_guard lock(mu_);
  if (plans_.empty() || !p.spec.node_name.empty()) return {{}, Status::Skip()};
  // 1. A recreated pod of a planned move (only a pending pod created after the plan can be one:
  //    older pending siblings are not replacements) takes over the room its placeholder held and
  //    tries that node first.
  if (ControllerOf(p)) {
    std::string key;
    for (auto& [uid, plan] : plans_) {
      if (p.metadata.creation_timestamp_ns < plan.created_ns) continue;
      for (auto& m : plan.moves) {
        if (m.done || m.claimed_by) continue;
        if (key.empty()) key = TemplateKey(pod);
        if (m.template_key != key || m.victim->metadata.uid == p.metadata.uid) continue;
        handle_.nominator().DeleteNominatedPodIfExists(m.placeholder->pod());
        if (!handle_.SnapshotSharedLister().Get(m.destination)) {
          m.done = true;  // the destination is gone: the pod goes wherever it fits
          continue;
        }
        m.claimed_by = pod.pod_ptr();
        handle_.nominator().AddPlannedPod(PodInfo::Create(pod.pod_ptr()), m.destination);
        KS_LOG_V(2).InfoS("Cross-node preemption: pod replaces a moved pod", "pod", log::KObj(p), "replaces",
                          log::KObj(*m.victim), "node", m.destination);
        return {{}, Status::Skip()};
      }
    }
  }
  // 2. The topology domains a plan cleared for its preemptor stay clear of pods that conflict
  //    with it (required anti-affinity either way) until it runs. Filter would count the
  //    nominated preemptor only on its own node, and not at all for a pod whose InterPodAffinity
  //    PreFilter skips (no terms of its own, no running pod with anti-affinity).
  std::vector<std::pair<std::string, std::string>> closed;  // (topology key, value)
  std::optional<api::Labels> ns_labels;
  bool ns_read = false;
  for (const auto& [uid, plan] : plans_) {
    if (plan.preemptor_done || uid == p.metadata.uid) continue;
    const NodeInfo* node = handle_.SnapshotSharedLister().Get(plan.node);
    if (!node) continue;
    auto close = [&](const std::string& key) {
      if (const std::string* value = node->node()->metadata.labels.Find(key)) closed.emplace_back(key, *value);
    };
    for (const auto& t : plan.preemptor_info->required_anti_affinity_terms) {
      if (!ns_read) {
        ns_labels = handle_.client().NamespaceLabels(p.metadata.namespace_);
        ns_read = true;
      }
      if (t.Matches(p, ns_labels ? &*ns_labels : nullptr)) close(t.topology_key);
    }
    for (const auto& t : pod.required_anti_affinity_terms) {
      const auto labels = handle_.client().NamespaceLabels(plan.preemptor->metadata.namespace_);
      if (t.Matches(*plan.preemptor, labels ? &*labels : nullptr)) close(t.topology_key);
    }
  }
  if (closed.empty()) return {{}, Status::Skip()};
  framework::PreFilterResult result;
  result.node_names.emplace();
  for (const NodeInfo* n : nodes) {
    const auto& labels = n->node()->metadata.labels;
    const bool in_closed = std::any_of(closed.begin(), closed.end(), [&](const auto& kv) {
      const std::string* v = labels.Find(kv.first);
      return v && *v == kv.second;
    });
    if (!in_closed) result.node_names->insert(n->name());
  }
  return {std::move(result), Status()};
}

bool CrossNodePreemption::VictimsStillPresent(const Plan& plan) const {
  const auto& lister = handle_.SnapshotSharedLister();
  for (const auto& v : plan.victims) {
    if (const NodeInfo* n = lister.Get(v->spec.node_name); n && PodOnNode(*n, v->metadata.uid)) return true;
  }
  return false;
}

void CrossNodePreemption::Release(Plan& plan) {
  for (auto& m : plan.moves) {
    if (m.done) continue;
    if (m.claimed_by) {
      handle_.nominator().DeleteNominatedPodIfExists(*m.claimed_by);
    } else {
      handle_.nominator().DeleteNominatedPodIfExists(m.placeholder->pod());
    }
    m.done = true;
  }
}

void CrossNodePreemption::EndPlan(const std::string& preemptor_uid, bool expired) {
  auto it = plans_.find(preemptor_uid);
  if (it == plans_.end()) return;
  Release(it->second);
  ++(expired ? stats_.expired : stats_.completed);
  plans_.erase(it);
}

std::pair<framework::PostFilterResult, Status> CrossNodePreemption::PostFilter(
    CycleState& state, const PodInfo& pod, const framework::NodeToStatus& filtered_statuses) {
  const api::Pod& p = pod.pod();
  const std::string& uid = p.metadata.uid;
  {
    std::lock_guard lock(mu_);
    // A recreated pod waiting for its planned node to be freed: keep its plan, wait.
    for (const auto& [puid, plan] : plans_) {
      for (const auto& m : plan.moves) {
        if (!m.done && m.claimed_by && m.claimed_by->metadata.uid == uid) {
          return {{}, Status()};
        }
      }
    }
    if (auto it = plans_.find(uid); it != plans_.end()) {
      Plan& plan = it->second;
      if (handle_.SnapshotSharedLister().Get(plan.node) && VictimsStillPresent(plan)) {
        // Victims are still terminating: the preemptor stays nominated and waits for them.
        return {{framework::NominatingMode::kOverride, plan.node}, Status()};
      }
      // Its victims are gone and it still does not fit (or its node is gone): the plan no longer
      // holds; find a new one.
      KS_LOG_V(2).InfoS("Cross-node preemption: plan no longer valid", "pod", log::KObj(p), "node", plan.node);
      EndPlan(uid, /*expired=*/true);
    }
  }
  return ComputeAndApply(state, pod, filtered_statuses);
}

std::pair<framework::PostFilterResult, Status> CrossNodePreemption::ComputeAndApply(
    CycleState& state, const PodInfo& pod, const framework::NodeToStatus& filtered_statuses) {
  auto wrap = [](Status s) {
    const std::string msg = s.Message();
    return msg.empty() ? s : Status(s.code(), "preemption: " + msg);
  };
  const auto started = std::chrono::steady_clock::now();
  const api::Pod& p = pod.pod();
  const Status& nominated_status = filtered_statuses.Get(p.status.nominated_node_name);
  if (auto [ok, msg] = evaluator_.PodEligibleToPreemptOthers(p, nominated_status); !ok) {
    return {{}, wrap(Status::Unschedulable(std::move(msg)))};
  }
  const auto& lister = handle_.SnapshotSharedLister();
  std::span<const NodeInfo* const> all_nodes = lister.List();
  if (all_nodes.empty()) return {{}, wrap(Status::Error("no nodes available"))};
  const std::vector<const NodeInfo*> potential = evaluator_.PotentialNodes(filtered_statuses);
  framework::NodeToStatus statuses;
  statuses.set_absent_status(Status::UnschedulableAndUnresolvable(std::string(preemption::kNotHelpful)));
  auto no_plan = [&](std::string detail) -> std::pair<framework::PostFilterResult, Status> {
    std::lock_guard lock(mu_);
    ++stats_.no_plan;
    return {{framework::NominatingMode::kOverride, ""}, wrap(Status::Unschedulable(std::move(detail)))};
  };
  if (potential.empty()) {
    return no_plan(fmt::format("cross-node preemption found no plan: {}",
                               preemption::FitErrorMessage(all_nodes.size(), statuses)));
  }

  // --- The pods that may leave their nodes -----------------------------------------------------
  const int32_t priority = p.Priority();
  const auto pdbs = evaluator_.PdbBudgets();
  struct Candidate {
    PodInfoPtr pi;
    const NodeInfo* node;
    bool movable;
    std::vector<int> pdbs;
  };
  const preemption::PdbIndex pdb_index(pdbs);
  std::vector<Candidate> removable;
  std::unordered_map<const NodeInfo*, std::vector<int>> removable_on;
  for (const NodeInfo* node : all_nodes) {
    for (const auto& pi : node->pods()) {
      const api::Pod& v = pi->pod();
      if (v.Priority() >= priority || v.metadata.deletion_timestamp_ns) continue;
      if (std::find(args_.protected_namespaces.begin(), args_.protected_namespaces.end(), v.metadata.namespace_) !=
          args_.protected_namespaces.end())
        continue;
      std::vector<int> budgets;
      pdb_index.Selecting(v, budgets);
      if (std::any_of(budgets.begin(), budgets.end(), [&](int b) { return pdbs[b].disruptions_allowed <= 0; }))
        continue;
      const api::OwnerReference* ref = ControllerOf(v);
      const bool movable = args_.allow_moves && ref && Recreates(*ref);
      removable_on[node].push_back(static_cast<int>(removable.size()));
      removable.push_back({pi, node, movable, std::move(budgets)});
    }
  }

  // --- Where the preemptor fits once every such pod is gone ---------------------------------------
  std::unique_ptr<CycleState> what_if = state.Clone();
  std::unordered_map<const NodeInfo*, std::unique_ptr<NodeInfo>> emptied;
  for (const auto& c : removable) {
    auto& copy = emptied[c.node];
    if (!copy) copy = c.node->Clone();
    copy->RemovePod(c.pi->pod());
    Status s = handle_.RunPreFilterExtensionRemovePod(*what_if, pod, *c.pi, *copy);
    if (!s.IsSuccess()) return {{}, wrap(Status::Error(s.Message()))};
  }
  std::vector<const NodeInfo*> feasible;
  for (const NodeInfo* node : potential) {
    auto it = emptied.find(node);
    const NodeInfo& view = it != emptied.end() ? *it->second : *node;
    Status s = handle_.RunFilterPluginsWithNominatedPods(*what_if, pod, view);
    if (s.IsSuccess()) {
      feasible.push_back(node);
    } else {
      if (s.IsError()) return {{}, wrap(std::move(s))};
      statuses.Set(node->name(), std::move(s));
    }
  }
  if (feasible.empty()) {
    // The statuses say why no node takes the pod even with every pod it may displace gone.
    return no_plan(fmt::format("cross-node preemption found no plan: {}",
                               preemption::FitErrorMessage(all_nodes.size(), statuses)));
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.attempts;
  }

  // --- Resources: cpu, memory, pods, and the preemptor's other requests ---------------------------
  std::vector<std::string> scalars;
  for (const auto& [name, q] : pod.requests.scalar) {
    if (q > 0) scalars.push_back(name);
  }
  const size_t R = 3 + scalars.size();
  auto request_of = [&](const PodInfo& pi) {
    std::vector<int64_t> r(R, 0);
    r[0] = pi.requests.milli_cpu;
    r[1] = CeilMiB(pi.requests.memory);
    r[2] = 1;
    for (size_t i = 0; i < scalars.size(); ++i) r[3 + i] = pi.requests.Scalar(scalars[i]);
    return r;
  };
  const bool any_nominated = handle_.nominator().HasNominatedPods();
  auto free_of = [&](const NodeInfo& node) {
    std::vector<int64_t> f(R, 0);
    f[0] = node.allocatable().milli_cpu - node.requested().milli_cpu;
    f[1] = FloorMiB(node.allocatable().memory) - CeilMiB(node.requested().memory);
    f[2] = node.allocatable().allowed_pod_number - static_cast<int64_t>(node.pods().size());
    for (size_t i = 0; i < scalars.size(); ++i) {
      f[3 + i] = node.allocatable().Scalar(scalars[i]) - node.requested().Scalar(scalars[i]);
    }
    if (any_nominated) {
      // Room held for nominated and planned pods is not free.
      for (const auto& held : handle_.nominator().NominatedPodsForNode(node.name())) {
        if (held->pod().metadata.uid == p.metadata.uid) continue;
        const auto r = request_of(*held);
        for (size_t k = 0; k < R; ++k) f[k] -= r[k];
      }
    }
    return f;
  };
  const std::vector<int64_t> preemptor_request = request_of(pod);

  // --- The neighbourhood: the cheapest candidate nodes, then blockers and destinations -----------
  struct Estimate {
    int64_t evictions = 0;
    int64_t priorities = 0;
    int64_t removed = 0;
    auto operator<=>(const Estimate&) const = default;
  };
  std::vector<std::pair<Estimate, const NodeInfo*>> ranked;
  ranked.reserve(feasible.size());
  for (const NodeInfo* node : feasible) {
    std::vector<int64_t> f = free_of(*node);
    std::vector<int> order = removable_on.contains(node) ? removable_on[node] : std::vector<int>{};
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (removable[a].movable != removable[b].movable) return removable[a].movable;
      return removable[a].pi->pod().Priority() < removable[b].pi->pod().Priority();
    });
    auto fits = [&] {
      for (size_t k = 0; k < R; ++k) {
        if (preemptor_request[k] > f[k]) return false;
      }
      return true;
    };
    Estimate e;
    for (int v : order) {
      if (fits()) break;
      const auto r = request_of(*removable[v].pi);
      for (size_t k = 0; k < R; ++k) f[k] += r[k];
      ++e.removed;
      if (!removable[v].movable) {
        ++e.evictions;
        e.priorities += int64_t{removable[v].pi->pod().Priority()} + (int64_t{1} << 31);
      }
    }
    ranked.push_back({e, node});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const NodeInfo*> selected;
  size_t budget_pods = 0;
  for (const auto& [e, node] : ranked) {
    const size_t here = removable_on.contains(node) ? removable_on[node].size() : 0;
    if (!selected.empty() && budget_pods + here > static_cast<size_t>(args_.max_candidate_pods)) break;
    selected.push_back(node);
    budget_pods += here;
  }

  // Required anti-affinity in either direction between the preemptor and pods that may leave.
  auto ns_labels = [&](const api::Pod& x) { return handle_.client().NamespaceLabels(x.metadata.namespace_); };
  const auto preemptor_ns = ns_labels(p);
  std::vector<std::pair<const framework::AffinityTerm*, std::vector<int>>> anti;  // term → matching candidates
  for (const auto& t : pod.required_anti_affinity_terms) {
    std::vector<int> matching;
    for (size_t i = 0; i < removable.size(); ++i) {
      const auto lbl = ns_labels(removable[i].pi->pod());
      if (t.Matches(removable[i].pi->pod(), lbl ? &*lbl : nullptr)) matching.push_back(static_cast<int>(i));
    }
    anti.push_back({&t, std::move(matching)});
  }
  for (size_t i = 0; i < removable.size(); ++i) {
    for (const auto& t : removable[i].pi->required_anti_affinity_terms) {
      if (t.Matches(p, preemptor_ns ? &*preemptor_ns : nullptr)) anti.push_back({&t, {static_cast<int>(i)}});
    }
  }

  optimizer::PreemptionModel model;
  model.num_resources = R;
  model.preemptor_request = preemptor_request;
  std::unordered_map<const NodeInfo*, int> node_index;
  std::vector<const NodeInfo*> model_nodes;
  auto add_node = [&](const NodeInfo* node) {
    auto [it, inserted] = node_index.emplace(node, static_cast<int>(model_nodes.size()));
    if (inserted) {
      model_nodes.push_back(node);
      model.nodes.push_back({node->name(), free_of(*node), false});
    }
    return it->second;
  };
  std::unordered_map<int, int> pod_index;  // candidate → model pod
  std::vector<int> model_pods;             // model pod → candidate
  auto add_pod = [&](int c, bool may_move = true) {
    auto [it, inserted] = pod_index.emplace(c, static_cast<int>(model_pods.size()));
    if (inserted) {
      model_pods.push_back(c);
      optimizer::PreemptionModel::Pod mp;
      mp.node = add_node(removable[c].node);
      mp.request = request_of(*removable[c].pi);
      mp.movable = removable[c].movable && may_move;
      mp.pdbs = removable[c].pdbs;
      model.pods.push_back(std::move(mp));
    }
    return it->second;
  };
  for (const NodeInfo* node : selected) {
    model.nodes[add_node(node)].preemptor_candidate = true;
    if (auto it = removable_on.find(node); it != removable_on.end()) {
      for (int c : it->second) add_pod(c);
    }
  }
  // Blockers on other nodes of a selected node's domain.
  auto label = [](const NodeInfo& n, const std::string& key) -> const std::string* {
    return n.node()->metadata.labels.Find(key);
  };
  for (const auto& [term, matching] : anti) {
    for (const NodeInfo* node : selected) {
      const std::string* value = label(*node, term->topology_key);
      if (!value) continue;
      for (int c : matching) {
        const std::string* other = label(*removable[c].node, term->topology_key);
        if (other && *other == *value) add_pod(c);
      }
    }
  }
  // Destinations: the nodes with the most free room, and the candidates themselves.
  {
    std::vector<std::pair<double, const NodeInfo*>> roomy;
    for (const NodeInfo* node : all_nodes) {
      if (node_index.contains(node)) continue;
      const auto f = free_of(*node);
      if (f[0] <= 0 || f[1] <= 0 || f[2] <= 0) continue;
      const double cpu = static_cast<double>(f[0]) / std::max<int64_t>(1, node->allocatable().milli_cpu);
      const double mem = static_cast<double>(f[1]) / std::max<int64_t>(1, node->allocatable().memory);
      roomy.push_back({-(cpu + mem), node});
    }
    const size_t keep = std::min(roomy.size(), static_cast<size_t>(args_.max_destination_nodes));
    std::partial_sort(roomy.begin(), roomy.begin() + static_cast<ptrdiff_t>(keep), roomy.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
    // A destination's own lower-priority pods may be evicted to make room for a moved pod (one
    // eviction of a less important pod can beat one of a more important pod elsewhere); they do
    // not move on in turn.
    for (size_t i = 0; i < keep; ++i) {
      add_node(roomy[i].second);
      if (auto it = removable_on.find(roomy[i].second); it != removable_on.end()) {
        for (int c : it->second) add_pod(c, /*may_move=*/false);
      }
    }
  }
  // Room each model node could offer: what is free plus what its model pods could free.
  std::vector<std::vector<int64_t>> could_free(model_nodes.size());
  for (size_t d = 0; d < model_nodes.size(); ++d) could_free[d] = model.nodes[d].free;
  for (const auto& mp : model.pods) {
    for (size_t k = 0; k < R; ++k) could_free[mp.node][k] += mp.request[k];
  }
  // Which destinations each movable pod's filters accept (once per template).
  std::unordered_map<std::string, std::vector<int>> accepted_by_template;
  for (size_t mp = 0; mp < model_pods.size(); ++mp) {
    const Candidate& c = removable[model_pods[mp]];
    if (!model.pods[mp].movable) continue;
    const std::string key = TemplateKey(*c.pi);
    auto it = accepted_by_template.find(key);
    if (it == accepted_by_template.end()) {
      std::vector<int> accepted;
      auto vstate = std::make_unique<CycleState>();
      const PodInfoPtr pending = Unbound(*c.pi);
      auto [result, s] = handle_.RunPreFilterPlugins(*vstate, *pending);
      // Judged as if the model's pods had left (the solver decides which do; the plan is
      // validated pod by pod before anything is evicted).
      for (int other : model_pods) {
        if (!s.IsSuccess() && !s.IsSkip()) break;
        s = handle_.RunPreFilterExtensionRemovePod(*vstate, *pending, *removable[other].pi,
                                                   *emptied.at(removable[other].node));
      }
      if (s.IsSuccess() || s.IsSkip()) {
        for (size_t d = 0; d < model_nodes.size(); ++d) {
          const NodeInfo* node = model_nodes[d];
          if (result.node_names && !result.node_names->contains(node->name())) continue;
          bool room = true;
          const auto& req = model.pods[mp].request;
          for (size_t k = 0; k < R && room; ++k) room = req[k] <= could_free[d][k];
          if (!room) continue;
          auto e = emptied.find(node);
          const NodeInfo& view = e != emptied.end() ? *e->second : *node;
          if (handle_.RunFilterPluginsWithNominatedPods(*vstate, *pending, view).IsSuccess()) {
            accepted.push_back(static_cast<int>(d));
          }
        }
      }
      it = accepted_by_template.emplace(key, std::move(accepted)).first;
    }
    for (int d : it->second) {
      if (d != model.pods[mp].node) model.pods[mp].destinations.push_back(d);
    }
  }
  // Anti-affinity conflicts per selected node, over the domain's model nodes.
  for (const auto& [term, matching] : anti) {
    for (const NodeInfo* node : selected) {
      const std::string* value = label(*node, term->topology_key);
      if (!value) continue;
      std::vector<int> domain;
      for (size_t k = 0; k < model_nodes.size(); ++k) {
        const std::string* other = label(*model_nodes[k], term->topology_key);
        if (other && *other == *value) domain.push_back(static_cast<int>(k));
      }
      for (int c : matching) {
        auto it = pod_index.find(c);
        if (it == pod_index.end()) continue;
        model.conflicts.push_back({node_index[node], it->second, domain});
      }
    }
  }
  // Priority ranks and budgets.
  {
    std::set<int32_t> priorities;
    for (int c : model_pods) priorities.insert(removable[c].pi->pod().Priority());
    std::vector<int32_t> sorted(priorities.begin(), priorities.end());
    for (size_t mp = 0; mp < model_pods.size(); ++mp) {
      const int32_t pr = removable[model_pods[mp]].pi->pod().Priority();
      model.pods[mp].priority_rank =
          static_cast<int32_t>(std::lower_bound(sorted.begin(), sorted.end(), pr) - sorted.begin());
    }
    for (const auto& b : pdbs) model.pdb_allowed.push_back(b.disruptions_allowed);
  }

  if (log::V(4)) {  // the destination lists are built only to be logged
    for (size_t mp = 0; mp < model.pods.size(); ++mp) {
      std::string dests;
      for (int d : model.pods[mp].destinations) (dests.empty() ? dests : dests += " ") += model.nodes[d].name;
      KS_LOG_V(4).InfoS("Cross-node preemption model", "preemptor", log::KObj(p), "pod",
                        log::KObj(removable[model_pods[mp]].pi->pod()), "node", model.nodes[model.pods[mp].node].name,
                        "priorityRank", model.pods[mp].priority_rank, "movable", model.pods[mp].movable, "destinations",
                        dests);
    }
  }

  // --- Solve, then validate with the profile's filters; a failed check becomes a cut ---------------
  optimizer::MipOptions options;
  options.time_limit_seconds = args_.solver_timeout_seconds;
  optimizer::PreemptionPlanResult plan;
  double solver_seconds = 0;
  bool validated = false;
  std::string last_failure;
  for (int round = 0; round < 4 && !validated; ++round) {
    plan = optimizer::SolvePreemptionModel(model, *solver_, options);
    solver_seconds += plan.solver_seconds;
    if (plan.status != optimizer::PreemptionPlanResult::Status::kPlan) break;
    // The cluster as the plan leaves it.
    std::unordered_map<const NodeInfo*, std::unique_ptr<NodeInfo>> world;
    auto copy_of = [&](const NodeInfo* n) -> NodeInfo& {
      auto& c = world[n];
      if (!c) c = n->Clone();
      return *c;
    };
    struct Change {
      PodInfoPtr pod;
      const NodeInfo* node;
      bool add;
    };
    std::vector<Change> changes;
    std::vector<PodInfoPtr> moved_pods(plan.moves.size());
    std::vector<int> removed = plan.evicted;
    for (auto [v, d] : plan.moves) removed.push_back(v);
    for (int v : removed) {
      const Candidate& c = removable[model_pods[v]];
      copy_of(c.node).RemovePod(c.pi->pod());
      changes.push_back({c.pi, c.node, false});
    }
    for (size_t i = 0; i < plan.moves.size(); ++i) {
      const auto [v, d] = plan.moves[i];
      auto moved = std::make_shared<api::Pod>(removable[model_pods[v]].pi->pod());
      moved->spec.node_name = model_nodes[d]->name();
      moved_pods[i] = removable[model_pods[v]].pi->WithPod(std::move(moved));
      copy_of(model_nodes[d]).AddPod(moved_pods[i]);
      changes.push_back({moved_pods[i], model_nodes[d], true});
    }
    auto replay = [&](CycleState& st, const PodInfo& who, const PodInfo* skip) -> Status {
      for (const auto& ch : changes) {
        if (skip && ch.pod.get() == skip) continue;
        Status s = ch.add ? handle_.RunPreFilterExtensionAddPod(st, who, *ch.pod, copy_of(ch.node))
                          : handle_.RunPreFilterExtensionRemovePod(st, who, *ch.pod, copy_of(ch.node));
        if (!s.IsSuccess()) return s;
      }
      return Status();
    };
    const NodeInfo* target = model_nodes[plan.node];
    auto pstate = state.Clone();
    if (Status s = replay(*pstate, pod, nullptr); !s.IsSuccess()) return {{}, wrap(Status::Error(s.Message()))};
    if (Status s = handle_.RunFilterPluginsWithNominatedPods(*pstate, pod, copy_of(target)); !s.IsSuccess()) {
      last_failure = fmt::format("node {}: {}", target->name(), s.Message());
      model.forbidden_nodes.push_back(plan.node);
      continue;
    }
    auto placed = std::make_shared<api::Pod>(p);
    placed->spec.node_name = target->name();
    PodInfoPtr placed_info = pod.WithPod(placed);
    copy_of(target).AddPod(placed_info);
    changes.push_back({placed_info, target, true});
    bool moves_ok = true;
    for (size_t i = 0; i < plan.moves.size() && moves_ok; ++i) {
      const auto [v, d] = plan.moves[i];
      NodeInfo& dest = copy_of(model_nodes[d]);
      dest.RemovePod(moved_pods[i]->pod());
      const PodInfoPtr pending = Unbound(*removable[model_pods[v]].pi);
      const PodInfo& original = *pending;
      auto vstate = std::make_unique<CycleState>();
      auto [result, s] = handle_.RunPreFilterPlugins(*vstate, original);
      Status verdict = s.IsSuccess() || s.IsSkip() ? replay(*vstate, original, moved_pods[i].get()) : s;
      if (verdict.IsSuccess()) verdict = handle_.RunFilterPluginsWithNominatedPods(*vstate, original, dest);
      dest.AddPod(moved_pods[i]);
      if (!verdict.IsSuccess()) {
        last_failure =
            fmt::format("moving {} to {}: {}", original.pod().Key(), model_nodes[d]->name(), verdict.Message());
        model.forbidden_moves.emplace_back(v, d);
        moves_ok = false;
      }
    }
    validated = moves_ok;
  }
  const double decision_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!validated) {
    {
      std::lock_guard lock(mu_);
      stats_.solver_seconds += solver_seconds;
      if (stats_.decision_seconds.size() < kMaxRecordedDecisions) stats_.decision_seconds.push_back(decision_seconds);
    }
    std::string why = plan.status == optimizer::PreemptionPlanResult::Status::kPlan || !last_failure.empty()
                          ? "no plan passed the filters (" + last_failure + ")"
                          : plan.message;
    if (plan.status == optimizer::PreemptionPlanResult::Status::kError) {
      return {{}, wrap(Status::Error("cross-node preemption: " + why))};
    }
    return no_plan(fmt::format("cross-node preemption found no plan: {}", why));
  }

  // --- Apply: hold, nominate, evict ---------------------------------------------------------------
  const NodeInfo* target = model_nodes[plan.node];
  Plan applied;
  applied.preemptor_uid = p.metadata.uid;
  applied.preemptor = pod.pod_ptr();
  applied.preemptor_info = pod.WithPod(pod.pod_ptr());
  applied.node = target->name();
  int64_t grace = 0;
  for (int v : plan.evicted) {
    applied.victims.push_back(removable[model_pods[v]].pi->pod_ptr());
    grace = std::max(grace, GraceSeconds(removable[model_pods[v]].pi->pod()));
  }
  for (auto [v, d] : plan.moves) {
    const PodInfo& victim = *removable[model_pods[v]].pi;
    applied.victims.push_back(victim.pod_ptr());
    grace = std::max(grace, GraceSeconds(victim.pod()));
    Move m;
    m.victim = victim.pod_ptr();
    m.destination = model_nodes[d]->name();
    m.template_key = TemplateKey(victim);
    auto holder = std::make_shared<api::Pod>(victim.pod());
    holder->metadata.uid = victim.pod().metadata.uid + "-move";
    holder->spec.node_name.clear();
    holder->status = api::PodStatus{};
    m.placeholder = victim.WithPod(std::move(holder));
    applied.moves.push_back(std::move(m));
  }
  applied.deadline_ns =
      handle_.clock().NowNs() + static_cast<int64_t>((static_cast<double>(grace) + args_.plan_timeout_seconds) * 1e9);
  std::vector<std::pair<std::shared_ptr<const api::Pod>, std::string>> moves_to_apply;
  for (const auto& m : applied.moves) {
    handle_.nominator().AddPlannedPod(m.placeholder, m.destination);
    moves_to_apply.emplace_back(m.victim, m.destination);
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.plans;
    if (plan.optimal) ++stats_.optimal;
    stats_.max_gap = std::max(stats_.max_gap, plan.gap);
    stats_.evictions += static_cast<int64_t>(plan.evicted.size());
    stats_.moves += static_cast<int64_t>(plan.moves.size());
    stats_.solver_seconds += solver_seconds;
    if (stats_.decision_seconds.size() < kMaxRecordedDecisions) stats_.decision_seconds.push_back(decision_seconds);
    plans_[applied.preemptor_uid] = std::move(applied);
  }
  KS_LOG_V(2).InfoS("Cross-node preemption: plan made", "pod", log::KObj(p), "node", target->name(), "evicted",
                    plan.evicted.size(), "moved", plan.moves.size(), "optimal", plan.optimal, "gap", plan.gap,
                    "decisionMs", decision_seconds * 1e3);
  const std::string evict_reason = fmt::format("Preempted by pod {} on node {}", p.Key(), target->name());
  for (int v : plan.evicted) {
    if (Status s = evaluator_.Evict(removable[model_pods[v]].pi->pod(), p, target->name(), evict_reason);
        !s.IsSuccess()) {
      return {{}, wrap(std::move(s))};
    }
  }
  for (const auto& [victim, destination] : moves_to_apply) {
    const std::string reason =
        fmt::format("Moved to node {} by pod {} preempting on node {}", destination, p.Key(), target->name());
    if (Status s = evaluator_.Evict(*victim, p, target->name(), reason, destination); !s.IsSuccess()) {
      return {{}, wrap(std::move(s))};
    }
  }
  evaluator_.ClearLowerPriorityNominations(target->name(), priority);
  return {{framework::NominatingMode::kOverride, target->name()}, Status()};
}

Status CrossNodePreemption::Reserve(CycleState&, const PodInfo& pod, const std::string&) {
  const std::string& uid = pod.pod().metadata.uid;
  std::lock_guard lock(mu_);
  if (plans_.empty()) return Status();
  std::vector<std::string> finished;
  for (auto& [puid, plan] : plans_) {
    if (puid == uid) plan.preemptor_done = true;
    for (auto& m : plan.moves) {
      if (!m.done && m.claimed_by && m.claimed_by->metadata.uid == uid) m.done = true;
    }
    if (plan.preemptor_done && std::all_of(plan.moves.begin(), plan.moves.end(), [](const Move& m) { return m.done; }))
      finished.push_back(puid);
  }
  for (const auto& puid : finished) EndPlan(puid, /*expired=*/false);
  return Status();
}

std::optional<int64_t> CrossNodePreemption::NextTickNs() const {
  std::lock_guard lock(mu_);
  std::optional<int64_t> next;
  for (const auto& [uid, plan] : plans_) {
    if (!next || plan.deadline_ns < *next) next = plan.deadline_ns;
  }
  return next;
}

void CrossNodePreemption::Tick(const std::vector<PodInfoPtr>&) {
  const int64_t now = handle_.clock().NowNs();
  std::vector<std::shared_ptr<const api::Pod>> retry;
  {
    std::lock_guard lock(mu_);
    std::vector<std::string> expired;
    for (auto& [uid, plan] : plans_) {
      if (plan.deadline_ns <= now || !handle_.SnapshotSharedLister().Get(plan.node)) {
        expired.push_back(uid);
        if (!plan.preemptor_done) retry.push_back(plan.preemptor);
      }
    }
    for (const auto& uid : expired) {
      KS_LOG_V(2).InfoS("Cross-node preemption: plan expired", "pod", log::KObj(plans_[uid].preemptor), "node",
                        plans_[uid].node, "deadlineNs", plans_[uid].deadline_ns, "nowNs", now);
      EndPlan(uid, /*expired=*/true);
    }
  }
  if (!retry.empty()) handle_.Activate(retry);
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(helper::AggregateErrors(decoded.error().errors));
  return std::make_unique<CrossNodePreemption>(std::move(*decoded), handle);
}

}  // namespace kubesched::plugins::cross_node_preemption
