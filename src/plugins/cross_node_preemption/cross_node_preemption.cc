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

// The API's timestamps have whole seconds: a pod created at or after t carries a
// creationTimestamp at or after t rounded down to the second.
int64_t FloorToSecond(int64_t ns) { return ns / util::kNanosPerSecond * util::kNanosPerSecond; }

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
  const std::string cooldown_path = helper::PathChild(path, "disruptionCooldownSeconds");
  if (d.Object(json, path,
               {"solverTimeoutSeconds", "protectedNamespaces", "allowMoves", "maxCandidatePods", "maxDestinationNodes",
                "planTimeoutSeconds", "disruptionCooldownSeconds", "solver", "apiVersion", "kind"})) {
    if (auto v = d.Seconds(helper::Member(json, "solverTimeoutSeconds"), timeout_path))
      args.solver_timeout_seconds = *v;
    if (!helper::Member(json, "protectedNamespaces").is_null()) {
      args.protected_namespaces = d.StringList(helper::Member(json, "protectedNamespaces"), ns_path);
    }
    if (auto v = d.Bool(helper::Member(json, "allowMoves"), moves_path)) args.allow_moves = *v;
    if (auto v = d.Int32(helper::Member(json, "maxCandidatePods"), pods_path)) args.max_candidate_pods = *v;
    if (auto v = d.Int32(helper::Member(json, "maxDestinationNodes"), dest_path)) args.max_destination_nodes = *v;
    if (auto v = d.Seconds(helper::Member(json, "planTimeoutSeconds"), plan_path)) args.plan_timeout_seconds = *v;
    if (auto v = d.Seconds(helper::Member(json, "disruptionCooldownSeconds"), cooldown_path)) {
      args.disruption_cooldown_seconds = *v;
    }
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
  if (!(args.disruption_cooldown_seconds >= 0 && args.disruption_cooldown_seconds <= 86400)) {
    errors.push_back(helper::FieldInvalid(cooldown_path, fmt::format("{}", args.disruption_cooldown_seconds),
                                          "not in valid range [0, 86400]"));
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
  out["disruptionCooldownSeconds"] = args.disruption_cooldown_seconds;
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

std::string CrossNodePreemption::ExplainPod(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  const std::string key = pod.Key();
  if (auto it = replacement_notes_.find(key); it != replacement_notes_.end()) return "this pod " + it->second + ".";
  for (auto rec = stats_.plan_records.rbegin(); rec != stats_.plan_records.rend(); ++rec) {
    if (rec->preemptor != key) continue;
    return fmt::format(
        "a plan made room for it on node {}: {} evicted, {} moved ({}); the plan {}. Its objective: the preemptor "
        "placed, then the most pods running by priority, then the fewest disrupted, then the fewest moves.",
        rec->node, rec->evictions, rec->moves, rec->optimal ? "proved optimal over its model" : "not proved optimal",
        rec->outcome == "active" ? "was in progress at this attempt" : rec->outcome);
  }
  return "";
}

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

PodInfoPtr CrossNodePreemption::ReplacementOf(const Move& move) const {
  return handle_.nominator().ReplacementOf(move.placeholder->pod());
}

bool CrossNodePreemption::RecentlyDisrupted(const PodInfo& pod, int64_t now_ns) const {
  if (disruptions_.empty()) return false;
  const api::Pod& p = pod.pod();
  if (!ControllerOf(p)) return false;
  const std::string key = TemplateKey(pod);
  return std::any_of(disruptions_.begin(), disruptions_.end(), [&](const Disruption& d) {
    return now_ns < d.until_ns && p.metadata.creation_timestamp_ns >= FloorToSecond(d.at_ns) && d.template_key == key;
  });
}

std::pair<framework::PreFilterResult, Status> CrossNodePreemption::PreFilter(CycleState&, const PodInfo& pod,
                                                                             std::span<const NodeInfo* const> nodes) {
  const api::Pod& p = pod.pod();
  std::lock_guard lock(mu_);
  if (plans_.empty() || !p.spec.node_name.empty()) return {{}, Status::Skip()};
  // A preemptor whose victims are still terminating waits for its own node: were it to take room
  // that became free elsewhere (another plan's, held for a pod of lower priority), its own victims
  // would have left for nothing and that plan would need new ones.
  if (auto it = plans_.find(p.metadata.uid);
      it != plans_.end() && !it->second.preemptor_done && VictimsStillPresent(it->second)) {
    framework::PreFilterResult only;
    only.node_names.emplace();
    only.node_names->insert(it->second.node);
    return {std::move(only), Status()};
  }
  // So does a moved pod's replacement while room is still being freed on its destination: were
  // it to land elsewhere, it could take room another plan holds, and its own hold would be wasted.
  if (const NodeInfo* dest = [&]() -> const NodeInfo* {
        for (const auto& [puid, plan] : plans_) {
          for (const auto& m : plan.moves) {
            if (m.done) continue;
            if (PodInfoPtr r = ReplacementOf(m); r && r->pod().metadata.uid == p.metadata.uid) {
              return handle_.SnapshotSharedLister().Get(m.destination);
            }
          }
        }
        return nullptr;
      }();
      dest && RoomBeingFreed(*dest)) {
    framework::PreFilterResult only;
    only.node_names.emplace();
    only.node_names->insert(dest->name());
    return {std::move(only), Status()};
  }
  std::vector<std::pair<std::string, std::string>> closed = ClosedDomains(pod);
  if (closed.empty()) return {{}, Status::Skip()};
  framework::PreFilterResult result;
  result.node_names.emplace();
  for (const NodeInfo* n : nodes) {
    if (!InClosedDomain(*n, closed)) result.node_names->insert(n->name());
  }
  return {std::move(result), Status()};
}

std::vector<std::pair<std::string, std::string>> CrossNodePreemption::ClosedDomains(const PodInfo& pod) const {
  // The topology domains a plan cleared for its preemptor stay clear of pods that conflict with it
  // (required anti-affinity either way) until it runs. Filter would count the nominated
  // preemptor only on its own node, and not at all for a pod whose InterPodAffinity PreFilter
  // skips (no terms of its own, no running pod with anti-affinity). This holds for a moved pod's
  // replacement too: should its planned node fail, it must not fall back into such a domain.
  const api::Pod& p = pod.pod();
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
  // The same for the replacements plans steer to their destinations: a pod that conflicts with
  // one stays out of its destination's domains (Filter sees a planned pod only on its own node).
  for (const auto& [uid, plan] : plans_) {
    for (const auto& m : plan.moves) {
      if (m.done) continue;
      const NodeInfo* dest = handle_.SnapshotSharedLister().Get(m.destination);
      if (!dest) continue;
      auto close = [&](const std::string& key) {
        if (const std::string* value = dest->node()->metadata.labels.Find(key)) closed.emplace_back(key, *value);
      };
      const api::Pod& moved = m.placeholder->pod();
      if (moved.metadata.uid == p.metadata.uid) continue;
      for (const auto& t : m.placeholder->required_anti_affinity_terms) {
        if (!ns_read) {
          ns_labels = handle_.client().NamespaceLabels(p.metadata.namespace_);
          ns_read = true;
        }
        if (t.Matches(p, ns_labels ? &*ns_labels : nullptr)) close(t.topology_key);
      }
      if (!pod.required_anti_affinity_terms.empty()) {
        const auto labels = handle_.client().NamespaceLabels(moved.metadata.namespace_);
        for (const auto& t : pod.required_anti_affinity_terms) {
          if (t.Matches(moved, labels ? &*labels : nullptr)) close(t.topology_key);
        }
      }
    }
  }
  return closed;
}

bool CrossNodePreemption::InClosedDomain(const NodeInfo& node,
                                         const std::vector<std::pair<std::string, std::string>>& closed) {
  const auto& labels = node.node()->metadata.labels;
  return std::any_of(closed.begin(), closed.end(), [&](const auto& kv) {
    const std::string* v = labels.Find(kv.first);
    return v && *v == kv.second;
  });
}

bool CrossNodePreemption::VictimsStillPresent(const Plan& plan) const {
  const auto& lister = handle_.SnapshotSharedLister();
  for (const auto& v : plan.victims) {
    if (const NodeInfo* n = lister.Get(v->spec.node_name); n && PodOnNode(*n, v->metadata.uid)) return true;
  }
  // Room still being freed on its node (another plan's victims, made for a pod the preemptor must
  // leave room for) is waited for too, as upstream waits for a terminating pod on the nominated
  // node instead of preempting again.
  const NodeInfo* n = lister.Get(plan.node);
  return n && RoomBeingFreed(*n);
}

bool CrossNodePreemption::RoomBeingFreed(const NodeInfo& node) {
  return std::any_of(node.pods().begin(), node.pods().end(),
                     [](const PodInfoPtr& pi) { return pi->pod().metadata.deletion_timestamp_ns.has_value(); });
}

void CrossNodePreemption::Release(Plan& plan) {
  for (auto& m : plan.moves) {
    if (m.done) continue;
    if (PodInfoPtr replacement = ReplacementOf(m)) handle_.nominator().DeleteNominatedPodIfExists(replacement->pod());
    m.done = true;
  }
  // The placeholders go last: deleting one drops its expectation, and with it the record of which
  // pod claimed it.
  for (auto& m : plan.moves) handle_.nominator().DeleteNominatedPodIfExists(m.placeholder->pod());
}

void CrossNodePreemption::EndPlan(const std::string& preemptor_uid, const std::string& why) {
  auto it = plans_.find(preemptor_uid);
  if (it == plans_.end()) return;
  Plan& plan = it->second;
  Release(plan);
  const bool expired = !why.empty();
  if (expired) {
    ++stats_.expired;
    ++stats_.expired_by[why];
    KS_LOG_V(2).InfoS("Cross-node preemption: plan expired", "pod", log::KObj(*plan.preemptor), "node", plan.node,
                      "reason", why);
  } else {
    ++stats_.completed;
    KS_LOG_V(2).InfoS("Cross-node preemption: plan completed", "pod", log::KObj(*plan.preemptor), "node", plan.node);
  }
  if (plan.record < stats_.plan_records.size()) {
    stats_.plan_records[plan.record].outcome = expired ? "expired: " + why : "completed";
  }
  plans_.erase(it);
}

std::pair<framework::PostFilterResult, Status> CrossNodePreemption::PostFilter(
    CycleState& state, const PodInfo& pod, const framework::NodeToStatus& filtered_statuses) {
  const api::Pod& p = pod.pod();
  const std::string& uid = p.metadata.uid;
  {
    std::lock_guard lock(mu_);
    // A replacement waiting for its planned node to be freed: keep its plan, wait.
    for (const auto& [puid, plan] : plans_) {
      for (const auto& m : plan.moves) {
        if (m.done) continue;
        if (PodInfoPtr r = ReplacementOf(m); r && r->pod().metadata.uid == uid) return {{}, Status()};
      }
    }
    if (auto it = plans_.find(uid); it != plans_.end()) {
      Plan& plan = it->second;
      if (!handle_.SnapshotSharedLister().Get(plan.node)) {
        EndPlan(uid, "its node is gone");
      } else if (VictimsStillPresent(plan)) {
        // Victims are still terminating: the preemptor stays nominated and waits for them.
        return {{framework::NominatingMode::kOverride, plan.node}, Status()};
      } else {
        // Its victims are gone and it still does not fit. Lower-priority pods count its
        // nomination and every pod counts a plan's holds, so a more important pod took the room.
        std::string taker;
        if (const NodeInfo* n = handle_.SnapshotSharedLister().Get(plan.node)) {
          for (const auto& other : n->pods()) {
            const api::Pod& o = other->pod();
            if (o.Priority() > p.Priority() && o.metadata.creation_timestamp_ns >= 0 &&
                o.status.start_time_ns.value_or(plan.created_ns) >= plan.created_ns) {
              taker = o.Key();
            }
          }
        }
        const Status& s = filtered_statuses.Get(plan.node);
        EndPlan(uid, taker.empty() ? "the preemptor did not fit on its node once its victims left (" +
                                         (s.Message().empty() ? std::string("no reason given") : s.Message()) + ")"
                                   : "a more important pod took the room: " + taker);
      }
    }
  }
  return ComputeAndApply(state, pod, filtered_statuses);
}

// The pods a plan may disrupt, the neighbourhood the model covers and the model itself.
struct CrossNodePreemption::Neighbourhood {
  struct Candidate {
    PodInfoPtr pi;
    const NodeInfo* node;
    bool movable;
    std::vector<int> pdbs;
  };
  std::vector<Candidate> removable;
  std::unordered_map<const NodeInfo*, std::vector<int>> removable_on;
  //! Copies of the nodes with every removable pod gone (what-if views).
  std::unordered_map<const NodeInfo*, std::unique_ptr<NodeInfo>> emptied;
  optimizer::PreemptionModel model;
  std::vector<const NodeInfo*> model_nodes;  // model node → node
  std::vector<int> model_pods;               // model pod → removable index
};

std::pair<framework::PostFilterResult, Status> CrossNodePreemption::ComputeAndApply(
    CycleState& state, const PodInfo& pod, const framework::NodeToStatus& filtered_statuses) {
  auto wrap = [](Status s) {
    const std::string msg = s.Message();
    return msg.empty() ? s : Status(s.code(), "preemption: " + msg);
  };
  const auto started = std::chrono::steady_clock::now();
  const int64_t now_ns = handle_.clock().NowNs();
  const api::Pod& p = pod.pod();
  const Status& nominated_status = filtered_statuses.Get(p.status.nominated_node_name);
  if (auto [ok, msg] = evaluator_.PodEligibleToPreemptOthers(p, nominated_status); !ok) {
    return {{}, wrap(Status::Unschedulable(std::move(msg)))};
  }
  const auto& lister = handle_.SnapshotSharedLister();
  std::span<const NodeInfo* const> all_nodes = lister.List();
  if (all_nodes.empty()) return {{}, wrap(Status::Error("no nodes available"))};
  std::vector<const NodeInfo*> potential = evaluator_.PotentialNodes(filtered_statuses);
  framework::NodeToStatus statuses;
  statuses.set_absent_status(Status::UnschedulableAndUnresolvable(std::string(preemption::kNotHelpful)));
  {
    // Domains other plans cleared stay closed to this pod, also when an earlier PreFilter plugin
    // rejected it before this plugin's PreFilter could say so.
    std::lock_guard lock(mu_);
    const auto closed = ClosedDomains(pod);
    if (!closed.empty()) {
      std::erase_if(potential, [&](const NodeInfo* n) { return InClosedDomain(*n, closed); });
    }
  }
  auto no_plan = [&](std::string detail) -> std::pair<framework::PostFilterResult, Status> {
    std::lock_guard lock(mu_);
    ++stats_.no_plan;
    return {{framework::NominatingMode::kOverride, ""}, wrap(Status::Unschedulable(std::move(detail)))};
  };
  if (potential.empty()) {
    return no_plan(fmt::format("cross-node preemption found no plan: {}",
                               preemption::FitErrorMessage(all_nodes.size(), statuses)));
  }

  // --- Candidates: the pods that may leave their nodes -----------------------------------------
  Neighbourhood hood;
  auto& removable = hood.removable;
  auto& removable_on = hood.removable_on;
  const int32_t priority = p.Priority();
  const auto pdbs = evaluator_.PdbBudgets();
  const preemption::PdbIndex pdb_index(pdbs);
  int64_t protected_pods = 0;
  {
    std::lock_guard lock(mu_);
    std::erase_if(disruptions_, [&](const Disruption& d) { return d.until_ns <= now_ns; });
    for (const NodeInfo* node : all_nodes) {
      for (const auto& pi : node->pods()) {
        const api::Pod& v = pi->pod();
        if (v.Priority() >= priority || v.metadata.deletion_timestamp_ns) continue;
        if (std::find(args_.protected_namespaces.begin(), args_.protected_namespaces.end(), v.metadata.namespace_) !=
            args_.protected_namespaces.end())
          continue;
        if (RecentlyDisrupted(*pi, now_ns)) {
          ++protected_pods;
          continue;
        }
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
    stats_.protected_pods += protected_pods;
  }

  // --- Where the preemptor fits once every such pod is gone ---------------------------------------
  std::unique_ptr<CycleState> what_if = state.Clone();
  auto& emptied = hood.emptied;
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
    std::string why = preemption::FitErrorMessage(all_nodes.size(), statuses);
    if (protected_pods > 0) {
      why += fmt::format(" ({} pod{} a plan disrupted in the last {}s left out)", protected_pods,
                         protected_pods == 1 ? "" : "s", args_.disruption_cooldown_seconds);
    }
    return no_plan("cross-node preemption found no plan: " + why);
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

  optimizer::PreemptionModel& model = hood.model;
  model.num_resources = R;
  model.preemptor_request = preemptor_request;
  std::unordered_map<const NodeInfo*, int> node_index;
  std::vector<const NodeInfo*>& model_nodes = hood.model_nodes;
  auto add_node = [&](const NodeInfo* node) {
    auto [it, inserted] = node_index.emplace(node, static_cast<int>(model_nodes.size()));
    if (inserted) {
      model_nodes.push_back(node);
      model.nodes.push_back({node->name(), free_of(*node), false});
    }
    return it->second;
  };
  std::unordered_map<int, int> pod_index;  // candidate → model pod
  std::vector<int>& model_pods = hood.model_pods;
  auto add_pod = [&](int c, bool on_destination = false) {
    auto [it, inserted] = pod_index.emplace(c, static_cast<int>(model_pods.size()));
    if (inserted) {
      model_pods.push_back(c);
      optimizer::PreemptionModel::Pod mp;
      mp.node = add_node(removable[c].node);
      mp.request = request_of(*removable[c].pi);
      mp.movable = removable[c].movable;
      mp.on_destination = on_destination;
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
  // Destinations: the nodes with the most room for moved pods (free, then what their own
  // removable pods could free), besides the candidates themselves. A destination's pods may leave
  // too, evicted or moved on in turn, when that keeps more (or more important) pods running.
  {
    std::vector<std::pair<double, const NodeInfo*>> roomy;
    for (const NodeInfo* node : all_nodes) {
      if (node_index.contains(node)) continue;
      const auto f = free_of(*node);
      double removable_cpu = 0, removable_mem = 0;
      if (auto it = removable_on.find(node); it != removable_on.end()) {
        for (int c : it->second) {
          removable_cpu += static_cast<double>(removable[c].pi->requests.milli_cpu);
          removable_mem += static_cast<double>(removable[c].pi->requests.memory);
        }
      }
      if (f[2] <= 0 && removable_on.find(node) == removable_on.end()) continue;
      const double cpu_alloc = static_cast<double>(std::max<int64_t>(1, node->allocatable().milli_cpu));
      const double mem_alloc = static_cast<double>(std::max<int64_t>(1, node->allocatable().memory));
      const double free_share = std::max(0.0, static_cast<double>(f[0]) / cpu_alloc) +
                                std::max(0.0, static_cast<double>(f[1]) * (1 << 20) / mem_alloc);
      const double removable_share = removable_cpu / cpu_alloc + removable_mem / mem_alloc;
      if (free_share <= 0 && removable_share <= 0) continue;
      roomy.push_back({-(free_share + 0.5 * removable_share), node});
    }
    const size_t keep = std::min(roomy.size(), static_cast<size_t>(args_.max_destination_nodes));
    std::partial_sort(roomy.begin(), roomy.begin() + static_cast<ptrdiff_t>(keep), roomy.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keep; ++i) add_node(roomy[i].second);
    // Every pod on a model node that is not a candidate may make room there (the destinations
    // above, and nodes in a candidate's domain that hold a blocker).
    for (size_t d = 0; d < model_nodes.size(); ++d) {
      if (model.nodes[d].preemptor_candidate) continue;
      if (auto it = removable_on.find(model_nodes[d]); it != removable_on.end()) {
        for (int c : it->second) add_pod(c, /*on_destination=*/true);
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
    const auto& c = removable[model_pods[mp]];
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
    for (const auto& n : model.nodes) {
      std::string free;
      for (int64_t f : n.free) free += (free.empty() ? "" : " ") + std::to_string(f);
      KS_LOG_V(4).InfoS("Cross-node preemption model node", "preemptor", log::KObj(p), "node", n.name, "free", free,
                        "preemptorCandidate", n.preemptor_candidate);
    }
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
      const auto& c = removable[model_pods[v]];
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

  // A plan that disrupts nothing is no plan: the pod fits there as things are, so whatever
  // rejected it (another plugin's verdict on the cycle, not a lack of room) preemption cannot
  // change. Upstream's dry run keeps no candidate without victims either.
  if (plan.evicted.empty() && plan.moves.empty()) {
    return no_plan(
        fmt::format("cross-node preemption found no plan: the pod fits on node {} without disrupting any "
                    "pod, so preemption is not what it waits for",
                    model_nodes[plan.node]->name()));
  }

  // --- Apply: hold, nominate, evict ---------------------------------------------------------------
  const NodeInfo* target = model_nodes[plan.node];
  Plan applied;
  applied.preemptor_uid = p.metadata.uid;
  applied.preemptor = pod.pod_ptr();
  applied.preemptor_info = pod.WithPod(pod.pod_ptr());
  applied.node = target->name();
  applied.created_ns = now_ns;
  int64_t grace = 0;
  std::vector<Disruption> disrupted;
  const int64_t cooldown_ns = static_cast<int64_t>(args_.disruption_cooldown_seconds * 1e9);
  for (int v : plan.evicted) {
    const PodInfo& victim = *removable[model_pods[v]].pi;
    applied.victims.push_back(victim.pod_ptr());
    grace = std::max(grace, GraceSeconds(victim.pod()));
    if (ControllerOf(victim.pod()) && cooldown_ns > 0) disrupted.push_back({TemplateKey(victim), now_ns, 0});
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
    if (cooldown_ns > 0) disrupted.push_back({m.template_key, now_ns, 0});
    applied.moves.push_back(std::move(m));
  }
  applied.deadline_ns = now_ns + static_cast<int64_t>((static_cast<double>(grace) + args_.plan_timeout_seconds) * 1e9);
  for (auto& d : disrupted) d.until_ns = now_ns + static_cast<int64_t>(grace) * util::kNanosPerSecond + cooldown_ns;
  // Each destination is held for the replacement the controller will create: the nominator hands
  // the hold to the first pod of the victim's controller and template created from now on.
  std::vector<std::pair<std::shared_ptr<const api::Pod>, std::string>> moves_to_apply;
  for (const auto& m : applied.moves) {
    handle_.nominator().ExpectReplacement(
        m.placeholder, m.destination,
        [key = m.template_key, created = applied.created_ns, victim = m.victim->metadata.uid](const PodInfo& pi) {
          const api::Pod& candidate = pi.pod();
          return candidate.metadata.uid != victim &&
                 candidate.metadata.creation_timestamp_ns >= FloorToSecond(created) && TemplateKey(pi) == key;
        });
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
    if (stats_.plan_records.size() < kMaxPlanRecords) {
      applied.record = stats_.plan_records.size();
      stats_.plan_records.push_back({p.Key(), target->name(), static_cast<int64_t>(plan.evicted.size()),
                                     static_cast<int64_t>(plan.moves.size()), plan.optimal, "active"});
    }
    disruptions_.insert(disruptions_.end(), disrupted.begin(), disrupted.end());
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

Status CrossNodePreemption::Reserve(CycleState&, const PodInfo& pod, const std::string& node_name) {
  const std::string& uid = pod.pod().metadata.uid;
  std::lock_guard lock(mu_);
  if (plans_.empty()) return Status();
  std::vector<std::string> finished;
  for (auto& [puid, plan] : plans_) {
    if (puid == uid) plan.preemptor_done = true;
    for (auto& m : plan.moves) {
      if (m.done) continue;
      if (PodInfoPtr r = ReplacementOf(m); r && r->pod().metadata.uid == uid) {
        m.done = true;
        if (replacement_notes_.size() < kMaxPlanRecords) {
          replacement_notes_[pod.pod().Key()] = fmt::format(
              "replaces {}, which the plan for {} (on node {}) moved to node {} (held for it there); placed on {}",
              m.victim->Key(), plan.preemptor->Key(), plan.node, m.destination, node_name);
        }
      }
    }
    if (plan.preemptor_done && std::all_of(plan.moves.begin(), plan.moves.end(), [](const Move& m) { return m.done; }))
      finished.push_back(puid);
  }
  for (const auto& puid : finished) EndPlan(puid, "");
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
    std::vector<std::pair<std::string, std::string>> expired;  // (preemptor uid, why)
    for (auto& [uid, plan] : plans_) {
      std::string why;
      if (!handle_.SnapshotSharedLister().Get(plan.node)) {
        why = "its node is gone";
      } else if (plan.deadline_ns <= now) {
        size_t waiting = 0;
        for (const auto& m : plan.moves) waiting += m.done ? 0 : 1;
        why = fmt::format("deadline passed ({}s after the victims' grace period) with {}{}", args_.plan_timeout_seconds,
                          plan.preemptor_done ? "" : "the preemptor not placed",
                          waiting == 0 ? std::string()
                                       : fmt::format("{}{} moved pod{} not placed", plan.preemptor_done ? "" : " and ",
                                                     waiting, waiting == 1 ? "" : "s"));
      }
      if (why.empty()) continue;
      expired.emplace_back(uid, std::move(why));
      if (!plan.preemptor_done) retry.push_back(plan.preemptor);
    }
    for (const auto& [uid, why] : expired) EndPlan(uid, why);
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
