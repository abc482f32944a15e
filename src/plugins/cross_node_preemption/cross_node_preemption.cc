#include "plugins/cross_node_preemption/cross_node_preemption.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"
#include "framework/preemption/replacement.h"
#include "util/log.h"

namespace kubesched::plugins::cross_node_preemption {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;
namespace preemption = framework::preemption;
using preemption::ControllerOf;
using preemption::FloorToSecond;
using preemption::Recreates;
using preemption::TemplateKey;

namespace {

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
bool PodOnNode(const NodeInfo& node, const std::string& uid) {
  return std::any_of(node.pods().begin(), node.pods().end(),
                     [&](const PodInfoPtr& pi) { return pi->pod().metadata.uid == uid; });
}

// "preemption: " before a status's message (an empty message stays empty).
Status Wrap(Status s) {
  const std::string msg = s.Message();
  return msg.empty() ? s : Status(s.code(), "preemption: " + msg);
}

const std::string* NodeLabel(const NodeInfo& n, const std::string& key) { return n.node()->metadata.labels.Find(key); }

// The resources a model counts: cpu, memory (MiB), pods, and the preemptor's other requests.
struct Resources {
  std::vector<std::string> scalars;  // the preemptor's other requests
  size_t count = 3;                  // 3 + scalars
  framework::Handle* handle = nullptr;
  const api::Pod* preemptor = nullptr;
  bool any_nominated = false;

  static Resources Of(const PodInfo& preemptor, framework::Handle& handle) {
    Resources r;
    for (const auto& [name, q] : preemptor.requests.scalar) {
      if (q > 0) r.scalars.push_back(name);
    }
    r.count = 3 + r.scalars.size();
    r.handle = &handle;
    r.preemptor = &preemptor.pod();
    r.any_nominated = handle.nominator().HasNominatedPods();
    return r;
  }

  std::vector<int64_t> RequestOf(const PodInfo& pi) const {
    std::vector<int64_t> r(count, 0);
    r[0] = pi.requests.milli_cpu;
    r[1] = CeilMiB(pi.requests.memory);
    r[2] = 1;
    for (size_t i = 0; i < scalars.size(); ++i) r[3 + i] = pi.requests.Scalar(scalars[i]);
    return r;
  }

  std::vector<int64_t> FreeOn(const NodeInfo& node) const {
    std::vector<int64_t> f(count, 0);
    f[0] = node.allocatable().milli_cpu - node.requested().milli_cpu;
    f[1] = FloorMiB(node.allocatable().memory) - CeilMiB(node.requested().memory);
    f[2] = node.allocatable().allowed_pod_number - static_cast<int64_t>(node.pods().size());
    for (size_t i = 0; i < scalars.size(); ++i) {
      f[3 + i] = node.allocatable().Scalar(scalars[i]) - node.requested().Scalar(scalars[i]);
    }
    if (any_nominated) {
      // Room held for nominated and planned pods is not free.
      for (const auto& held : handle->nominator().NominatedPodsForNode(node.name())) {
        if (held->pod().metadata.uid == preemptor->metadata.uid) continue;
        const auto r = RequestOf(*held);
        for (size_t k = 0; k < count; ++k) f[k] -= r[k];
      }
    }
    return f;
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Args

std::expected<CrossNodePreemptionArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                         const std::string& path) {
  CrossNodePreemptionArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  const std::string timeout_path = api::field_path::Child(path, "solverTimeoutSeconds");
  const std::string ns_path = api::field_path::Child(path, "protectedNamespaces");
  const std::string moves_path = api::field_path::Child(path, "allowMoves");
  const std::string pods_path = api::field_path::Child(path, "maxCandidatePods");
  const std::string dest_path = api::field_path::Child(path, "maxDestinationNodes");
  const std::string plan_path = api::field_path::Child(path, "planTimeoutSeconds");
  const std::string solver_path = api::field_path::Child(path, "solver");
  const std::string cooldown_path = api::field_path::Child(path, "disruptionCooldownSeconds");
  if (d.Object(json, path,
               {"solverTimeoutSeconds", "protectedNamespaces", "allowMoves", "maxCandidatePods", "maxDestinationNodes",
                "planTimeoutSeconds", "disruptionCooldownSeconds", "solver", "apiVersion", "kind"})) {
    if (auto v = d.Seconds(json.Find("solverTimeoutSeconds"), timeout_path)) args.solver_timeout_seconds = *v;
    if (!json.Find("protectedNamespaces").IsNull()) {
      args.protected_namespaces = d.StringList(json.Find("protectedNamespaces"), ns_path);
    }
    if (auto v = d.Bool(json.Find("allowMoves"), moves_path)) args.allow_moves = *v;
    if (auto v = d.Int32(json.Find("maxCandidatePods"), pods_path)) args.max_candidate_pods = *v;
    if (auto v = d.Int32(json.Find("maxDestinationNodes"), dest_path)) args.max_destination_nodes = *v;
    if (auto v = d.Seconds(json.Find("planTimeoutSeconds"), plan_path)) args.plan_timeout_seconds = *v;
    if (auto v = d.Seconds(json.Find("disruptionCooldownSeconds"), cooldown_path)) {
      args.disruption_cooldown_seconds = *v;
    }
    if (auto v = d.String(json.Find("solver"), solver_path)) args.solver = *v;
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  if (!(args.solver_timeout_seconds > 0 && args.solver_timeout_seconds <= 3600)) {
    errors.push_back(config::FieldInvalid(timeout_path, fmt::format("{}", args.solver_timeout_seconds),
                                          "not in valid range (0, 3600]"));
  }
  if (args.max_candidate_pods < 1 || args.max_candidate_pods > 100000) {
    errors.push_back(
        config::FieldInvalid(pods_path, std::to_string(args.max_candidate_pods), "not in valid range [1, 100000]"));
  }
  if (args.max_destination_nodes < 0 || args.max_destination_nodes > 10000) {
    errors.push_back(
        config::FieldInvalid(dest_path, std::to_string(args.max_destination_nodes), "not in valid range [0, 10000]"));
  }
  if (!(args.plan_timeout_seconds > 0 && args.plan_timeout_seconds <= 86400)) {
    errors.push_back(
        config::FieldInvalid(plan_path, fmt::format("{}", args.plan_timeout_seconds), "not in valid range (0, 86400]"));
  }
  if (!(args.disruption_cooldown_seconds >= 0 && args.disruption_cooldown_seconds <= 86400)) {
    errors.push_back(config::FieldInvalid(cooldown_path, fmt::format("{}", args.disruption_cooldown_seconds),
                                          "not in valid range [0, 86400]"));
  }
  for (size_t i = 0; i < args.protected_namespaces.size(); ++i) {
    if (args.protected_namespaces[i].empty()) {
      errors.push_back(config::FieldInvalid(api::field_path::Index(ns_path, i), "\"\"", "must not be empty"));
    }
  }
  if (!optimizer::MakeMipSolver(args.solver)) {
    errors.push_back(config::FieldNotSupported(solver_path, args.solver, {"cbc", "glpk"}));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

std::string EncodeArgs(const CrossNodePreemptionArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("solverTimeoutSeconds").Double(args.solver_timeout_seconds);
  w.Key("protectedNamespaces").StringList(args.protected_namespaces);
  w.Key("allowMoves").Bool(args.allow_moves);
  w.Key("maxCandidatePods").Int64(args.max_candidate_pods);
  w.Key("maxDestinationNodes").Int64(args.max_destination_nodes);
  w.Key("planTimeoutSeconds").Double(args.plan_timeout_seconds);
  w.Key("disruptionCooldownSeconds").Double(args.disruption_cooldown_seconds);
  w.Key("solver").String(args.solver);
  w.EndObject();
  return std::move(w).Take();
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

std::any CrossNodePreemption::Statistics() const {
  return CrossNodeReport{.stats = stats(), .active_plans = active_plans(), .held_moves = held_moves()};
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

// What one decision's steps hand each other: the nodes in question, the pods a plan may disrupt,
// the neighbourhood the model covers, the model itself and the plan solved from it.
struct CrossNodePreemption::Neighbourhood {
  struct Candidate {
    PodInfoPtr pi;
    const NodeInfo* node;
    bool movable;
    std::vector<int> pdbs;
  };
  std::span<const NodeInfo* const> all_nodes;
  std::vector<const NodeInfo*> potential;  // where preemption may help
  framework::NodeToStatus statuses;        // why the other nodes do not take the pod
  std::vector<preemption::PdbBudget> pdbs;
  std::vector<Candidate> removable;
  std::unordered_map<const NodeInfo*, std::vector<int>> removable_on;
  int64_t protected_pods = 0;  // left out: a plan disrupted them within the cooldown
  //! Copies of the nodes with every removable pod gone (what-if views).
  std::unordered_map<const NodeInfo*, std::unique_ptr<NodeInfo>> emptied;
  std::vector<const NodeInfo*> feasible;  // where the preemptor fits once they are gone
  Resources resources;
  std::vector<int64_t> preemptor_request;
  std::vector<const NodeInfo*> selected;                                          // the preemptor's candidate nodes
  std::vector<std::pair<const framework::AffinityTerm*, std::vector<int>>> anti;  // term → matching candidates
  optimizer::PreemptionModel model;
  std::vector<const NodeInfo*> model_nodes;             // model node → node
  std::vector<int> model_pods;                          // model pod → removable index
  std::unordered_map<const NodeInfo*, int> node_index;  // node → model node
  std::unordered_map<int, int> pod_index;               // candidate → model pod
  optimizer::PreemptionPlanResult plan;                 // the last one solved
  double solver_seconds = 0;
  bool validated = false;
  std::string last_failure;

  //! The node's index in the model, adding it (with its free room) if new.
  int AddNode(const NodeInfo* node) {
    auto [it, inserted] = node_index.emplace(node, static_cast<int>(model_nodes.size()));
    if (inserted) {
      model_nodes.push_back(node);
      model.nodes.push_back({node->name(), resources.FreeOn(*node), false});
    }
    return it->second;
  }
  //! The candidate's index in the model, adding it (and its node) if new.
  int AddPod(int c, bool on_destination = false) {
    auto [it, inserted] = pod_index.emplace(c, static_cast<int>(model_pods.size()));
    if (inserted) {
      model_pods.push_back(c);
      optimizer::PreemptionModel::Pod mp;
      mp.node = AddNode(removable[c].node);
      mp.request = resources.RequestOf(*removable[c].pi);
      mp.movable = removable[c].movable;
      mp.on_destination = on_destination;
      mp.pdbs = removable[c].pdbs;
      model.pods.push_back(std::move(mp));
    }
    return it->second;
  }
  //! Anti-affinity conflicts per selected node, over the domain's model nodes.
  void AddConflicts() {
    for (const auto& [term, matching] : anti) {
      for (const NodeInfo* node : selected) {
        const std::string* value = NodeLabel(*node, term->topology_key);
        if (!value) continue;
        std::vector<int> domain;
        for (size_t k = 0; k < model_nodes.size(); ++k) {
          const std::string* other = NodeLabel(*model_nodes[k], term->topology_key);
          if (other && *other == *value) domain.push_back(static_cast<int>(k));
        }
        for (int c : matching) {
          auto it = pod_index.find(c);
          if (it == pod_index.end()) continue;
          model.conflicts.push_back({node_index[node], it->second, domain});
        }
      }
    }
  }
  //! Priority ranks and budgets.
  void RankPriorities() {
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
};

// The cluster as a plan leaves it: copies of the nodes it changes, and its changes in order (to
// replay into a cycle state).
struct CrossNodePreemption::PlanWorld {
  struct Change {
    PodInfoPtr pod;
    const NodeInfo* node;
    bool add;
  };
  framework::Handle& handle;
  std::unordered_map<const NodeInfo*, std::unique_ptr<NodeInfo>> world;
  std::vector<Change> changes;
  std::vector<PodInfoPtr> moved_pods;  // plan move → the pod on its destination

  PlanWorld(framework::Handle& h, const Neighbourhood& hood) : handle(h), moved_pods(hood.plan.moves.size()) {
    const auto& plan = hood.plan;
    std::vector<int> removed = plan.evicted;
    for (auto [v, d] : plan.moves) removed.push_back(v);
    for (int v : removed) {
      const auto& c = hood.removable[hood.model_pods[v]];
      CopyOf(c.node).RemovePod(c.pi->pod());
      changes.push_back({c.pi, c.node, false});
    }
    for (size_t i = 0; i < plan.moves.size(); ++i) {
      const auto [v, d] = plan.moves[i];
      auto moved = std::make_shared<api::Pod>(hood.removable[hood.model_pods[v]].pi->pod());
      moved->spec.node_name = hood.model_nodes[d]->name();
      moved_pods[i] = hood.removable[hood.model_pods[v]].pi->WithPod(std::move(moved));
      CopyOf(hood.model_nodes[d]).AddPod(moved_pods[i]);
      changes.push_back({moved_pods[i], hood.model_nodes[d], true});
    }
  }
  NodeInfo& CopyOf(const NodeInfo* n) {
    auto& c = world[n];
    if (!c) c = n->Clone();
    return *c;
  }
  //! Runs the PreFilter extensions for each change (but `skip`'s) for `who`.
  Status Replay(CycleState& st, const PodInfo& who, const PodInfo* skip) {
    for (const auto& ch : changes) {
      if (skip && ch.pod.get() == skip) continue;
      Status s = ch.add ? handle.RunPreFilterExtensionAddPod(st, who, *ch.pod, CopyOf(ch.node))
                        : handle.RunPreFilterExtensionRemovePod(st, who, *ch.pod, CopyOf(ch.node));
      if (!s.IsSuccess()) return s;
    }
    return Status();
  }
};

std::pair<framework::PostFilterResult, Status> CrossNodePreemption::ComputeAndApply(
    CycleState& state, const PodInfo& pod, const framework::NodeToStatus& filtered_statuses) {
  const auto started = std::chrono::steady_clock::now();
  const int64_t now_ns = handle_.clock().NowNs();
  Neighbourhood hood;
  if (auto done = FindPotentialNodes(pod, filtered_statuses, hood)) return *done;
  CollectCandidates(pod, now_ns, hood);
  if (auto done = FindFeasibleNodes(state, pod, hood)) return *done;
  hood.resources = Resources::Of(pod, handle_);
  hood.preemptor_request = hood.resources.RequestOf(pod);
  SelectCandidateNodes(hood);
  FindAntiAffinity(pod, hood);
  BuildModel(hood);
  LogModel(pod.pod(), hood);
  if (auto done = SolveAndValidate(state, pod, hood)) return *done;
  const double decision_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!hood.validated) return NoValidPlan(hood, decision_seconds);
  // A plan that disrupts nothing is no plan: the pod fits there as things are, so whatever
  // rejected it (another plugin's verdict on the cycle, not a lack of room) preemption cannot
  // change. Upstream's dry run keeps no candidate without victims either.
  if (hood.plan.evicted.empty() && hood.plan.moves.empty()) {
    return NoPlan(
        fmt::format("cross-node preemption found no plan: the pod fits on node {} without disrupting any "
                    "pod, so preemption is not what it waits for",
                    hood.model_nodes[hood.plan.node]->name()));
  }
  return ApplyPlan(pod, now_ns, hood, decision_seconds);
}

CrossNodePreemption::Outcome CrossNodePreemption::NoPlan(std::string detail) {
  std::lock_guard lock(mu_);
  ++stats_.no_plan;
  return {{framework::NominatingMode::kOverride, ""}, Wrap(Status::Unschedulable(std::move(detail)))};
}

// ---------------------------------------------------------------------------------------------
// Candidates: the pods that may leave their nodes, and where the preemptor fits once they are gone

std::optional<CrossNodePreemption::Outcome> CrossNodePreemption::FindPotentialNodes(
    const PodInfo& pod, const framework::NodeToStatus& filtered_statuses, Neighbourhood& hood) {
  const api::Pod& p = pod.pod();
  const Status& nominated_status = filtered_statuses.Get(p.status.nominated_node_name);
  if (auto [ok, msg] = evaluator_.PodEligibleToPreemptOthers(p, nominated_status); !ok) {
    return Outcome{{}, Wrap(Status::Unschedulable(std::move(msg)))};
  }
  const auto& lister = handle_.SnapshotSharedLister();
  hood.all_nodes = lister.List();
  if (hood.all_nodes.empty()) return Outcome{{}, Wrap(Status::Error("no nodes available"))};
  hood.potential = evaluator_.PotentialNodes(filtered_statuses);
  hood.statuses.set_absent_status(Status::UnschedulableAndUnresolvable(std::string(preemption::kNotHelpful)));
  {
    // Domains other plans cleared stay closed to this pod, also when an earlier PreFilter plugin
    // rejected it before this plugin's PreFilter could say so.
    std::lock_guard lock(mu_);
    const auto closed = ClosedDomains(pod);
    if (!closed.empty()) {
      std::erase_if(hood.potential, [&](const NodeInfo* n) { return InClosedDomain(*n, closed); });
    }
  }
  if (hood.potential.empty()) {
    return NoPlan(fmt::format("cross-node preemption found no plan: {}",
                              preemption::FitErrorMessage(hood.all_nodes.size(), hood.statuses)));
  }
  return std::nullopt;
}

void CrossNodePreemption::CollectCandidates(const PodInfo& pod, int64_t now_ns, Neighbourhood& hood) {
  auto& removable = hood.removable;
  auto& removable_on = hood.removable_on;
  const int32_t priority = pod.pod().Priority();
  hood.pdbs = evaluator_.PdbBudgets();
  const auto& pdbs = hood.pdbs;
  const preemption::PdbIndex pdb_index(pdbs);
  int64_t protected_pods = 0;
  std::lock_guard lock(mu_);
  std::erase_if(disruptions_, [&](const Disruption& d) { return d.until_ns <= now_ns; });
  for (const NodeInfo* node : hood.all_nodes) {
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
  hood.protected_pods = protected_pods;
}

std::optional<CrossNodePreemption::Outcome> CrossNodePreemption::FindFeasibleNodes(CycleState& state,
                                                                                   const PodInfo& pod,
                                                                                   Neighbourhood& hood) {
  std::unique_ptr<CycleState> what_if = state.Clone();
  auto& emptied = hood.emptied;
  for (const auto& c : hood.removable) {
    auto& copy = emptied[c.node];
    if (!copy) copy = c.node->Clone();
    copy->RemovePod(c.pi->pod());
    Status s = handle_.RunPreFilterExtensionRemovePod(*what_if, pod, *c.pi, *copy);
    if (!s.IsSuccess()) return Outcome{{}, Wrap(Status::Error(s.Message()))};
  }
  for (const NodeInfo* node : hood.potential) {
    auto it = emptied.find(node);
    const NodeInfo& view = it != emptied.end() ? *it->second : *node;
    Status s = handle_.RunFilterPluginsWithNominatedPods(*what_if, pod, view);
    if (s.IsSuccess()) {
      hood.feasible.push_back(node);
    } else {
      if (s.IsError()) return Outcome{{}, Wrap(std::move(s))};
      hood.statuses.Set(node->name(), std::move(s));
    }
  }
  if (hood.feasible.empty()) {
    // The statuses say why no node takes the pod even with every pod it may displace gone.
    std::string why = preemption::FitErrorMessage(hood.all_nodes.size(), hood.statuses);
    const int64_t protected_pods = hood.protected_pods;
    if (protected_pods > 0) {
      why += fmt::format(" ({} pod{} a plan disrupted in the last {}s left out)", protected_pods,
                         protected_pods == 1 ? "" : "s", args_.disruption_cooldown_seconds);
    }
    return NoPlan("cross-node preemption found no plan: " + why);
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.attempts;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The neighbourhood: the cheapest candidate nodes, then blockers and destinations; the model

void CrossNodePreemption::SelectCandidateNodes(Neighbourhood& hood) const {
  auto& removable = hood.removable;
  auto& removable_on = hood.removable_on;
  const size_t R = hood.resources.count;
  struct Estimate {
    int64_t evictions = 0;
    int64_t priorities = 0;
    int64_t removed = 0;
    auto operator<=>(const Estimate&) const = default;
  };
  std::vector<std::pair<Estimate, const NodeInfo*>> ranked;
  ranked.reserve(hood.feasible.size());
  for (const NodeInfo* node : hood.feasible) {
    std::vector<int64_t> f = hood.resources.FreeOn(*node);
    std::vector<int> order = removable_on.contains(node) ? removable_on[node] : std::vector<int>{};
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (removable[a].movable != removable[b].movable) return removable[a].movable;
      return removable[a].pi->pod().Priority() < removable[b].pi->pod().Priority();
    });
    auto fits = [&] {
      for (size_t k = 0; k < R; ++k) {
        if (hood.preemptor_request[k] > f[k]) return false;
      }
      return true;
    };
    Estimate e;
    for (int v : order) {
      if (fits()) break;
      const auto r = hood.resources.RequestOf(*removable[v].pi);
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
  size_t budget_pods = 0;
  for (const auto& [e, node] : ranked) {
    const size_t here = removable_on.contains(node) ? removable_on[node].size() : 0;
    if (!hood.selected.empty() && budget_pods + here > static_cast<size_t>(args_.max_candidate_pods)) break;
    hood.selected.push_back(node);
    budget_pods += here;
  }
}

void CrossNodePreemption::FindAntiAffinity(const PodInfo& pod, Neighbourhood& hood) const {
  const auto& removable = hood.removable;
  auto ns_labels = [&](const api::Pod& x) { return handle_.client().NamespaceLabels(x.metadata.namespace_); };
  const auto preemptor_ns = ns_labels(pod.pod());
  for (const auto& t : pod.required_anti_affinity_terms) {
    std::vector<int> matching;
    for (size_t i = 0; i < removable.size(); ++i) {
      const auto lbl = ns_labels(removable[i].pi->pod());
      if (t.Matches(removable[i].pi->pod(), lbl ? &*lbl : nullptr)) matching.push_back(static_cast<int>(i));
    }
    hood.anti.push_back({&t, std::move(matching)});
  }
  for (size_t i = 0; i < removable.size(); ++i) {
    for (const auto& t : removable[i].pi->required_anti_affinity_terms) {
      if (t.Matches(pod.pod(), preemptor_ns ? &*preemptor_ns : nullptr))
        hood.anti.push_back({&t, {static_cast<int>(i)}});
    }
  }
}

void CrossNodePreemption::BuildModel(Neighbourhood& hood) {
  optimizer::PreemptionModel& model = hood.model;
  model.num_resources = hood.resources.count;
  model.preemptor_request = hood.preemptor_request;
  for (const NodeInfo* node : hood.selected) {
    model.nodes[hood.AddNode(node)].preemptor_candidate = true;
    if (auto it = hood.removable_on.find(node); it != hood.removable_on.end()) {
      for (int c : it->second) hood.AddPod(c);
    }
  }
  // Blockers on other nodes of a selected node's domain.
  for (const auto& [term, matching] : hood.anti) {
    for (const NodeInfo* node : hood.selected) {
      const std::string* value = NodeLabel(*node, term->topology_key);
      if (!value) continue;
      for (int c : matching) {
        const std::string* other = NodeLabel(*hood.removable[c].node, term->topology_key);
        if (other && *other == *value) hood.AddPod(c);
      }
    }
  }
  AddDestinationNodes(hood);
  FindMoveDestinations(hood);
  hood.AddConflicts();
  hood.RankPriorities();
}

void CrossNodePreemption::AddDestinationNodes(Neighbourhood& hood) const {
  // Destinations: the nodes with the most room for moved pods (free, then what their own
  // removable pods could free), besides the candidates themselves. A destination's pods may leave
  // too, evicted or moved on in turn, when that keeps more (or more important) pods running.
  const auto& removable = hood.removable;
  const auto& removable_on = hood.removable_on;
  std::vector<std::pair<double, const NodeInfo*>> roomy;
  for (const NodeInfo* node : hood.all_nodes) {
    if (hood.node_index.contains(node)) continue;
    const auto f = hood.resources.FreeOn(*node);
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
  for (size_t i = 0; i < keep; ++i) hood.AddNode(roomy[i].second);
  // Every pod on a model node that is not a candidate may make room there (the destinations
  // above, and nodes in a candidate's domain that hold a blocker).
  for (size_t d = 0; d < hood.model_nodes.size(); ++d) {
    if (hood.model.nodes[d].preemptor_candidate) continue;
    if (auto it = removable_on.find(hood.model_nodes[d]); it != removable_on.end()) {
      for (int c : it->second) hood.AddPod(c, /*on_destination=*/true);
    }
  }
}

void CrossNodePreemption::FindMoveDestinations(Neighbourhood& hood) {
  const auto& removable = hood.removable;
  const auto& model_nodes = hood.model_nodes;
  const auto& model_pods = hood.model_pods;
  optimizer::PreemptionModel& model = hood.model;
  const size_t R = hood.resources.count;
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
                                                   *hood.emptied.at(removable[other].node));
      }
      if (s.IsSuccess() || s.IsSkip()) {
        for (size_t d = 0; d < model_nodes.size(); ++d) {
          const NodeInfo* node = model_nodes[d];
          if (result.node_names && !result.node_names->contains(node->name())) continue;
          bool room = true;
          const auto& req = model.pods[mp].request;
          for (size_t k = 0; k < R && room; ++k) room = req[k] <= could_free[d][k];
          if (!room) continue;
          auto e = hood.emptied.find(node);
          const NodeInfo& view = e != hood.emptied.end() ? *e->second : *node;
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
}

void CrossNodePreemption::LogModel(const api::Pod& p, const Neighbourhood& hood) {
  if (!log::V(4)) return;  // the destination lists are built only to be logged
  const optimizer::PreemptionModel& model = hood.model;
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
                      log::KObj(hood.removable[hood.model_pods[mp]].pi->pod()), "node",
                      model.nodes[model.pods[mp].node].name, "priorityRank", model.pods[mp].priority_rank, "movable",
                      model.pods[mp].movable, "destinations", dests);
  }
}

// ---------------------------------------------------------------------------------------------
// Solve, then validate with the profile's filters; a failed check becomes a cut

std::optional<CrossNodePreemption::Outcome> CrossNodePreemption::SolveAndValidate(CycleState& state, const PodInfo& pod,
                                                                                  Neighbourhood& hood) {
  optimizer::MipOptions options;
  options.time_limit_seconds = args_.solver_timeout_seconds;
  for (int round = 0; round < 4 && !hood.validated; ++round) {
    hood.plan = optimizer::SolvePreemptionModel(hood.model, *solver_, options);
    hood.solver_seconds += hood.plan.solver_seconds;
    if (hood.plan.status != optimizer::PreemptionPlanResult::Status::kPlan) break;
    std::expected<bool, Status> valid = ValidatePlan(state, pod, hood);
    if (!valid) return Outcome{{}, Wrap(Status::Error(valid.error().Message()))};
    hood.validated = *valid;
  }
  return std::nullopt;
}

std::expected<bool, Status> CrossNodePreemption::ValidatePlan(CycleState& state, const PodInfo& pod,
                                                              Neighbourhood& hood) {
  const auto& plan = hood.plan;
  // The cluster as the plan leaves it.
  PlanWorld world(handle_, hood);
  const NodeInfo* target = hood.model_nodes[plan.node];
  auto pstate = state.Clone();
  if (Status s = world.Replay(*pstate, pod, nullptr); !s.IsSuccess()) return std::unexpected(std::move(s));
  if (Status s = handle_.RunFilterPluginsWithNominatedPods(*pstate, pod, world.CopyOf(target)); !s.IsSuccess()) {
    hood.last_failure = fmt::format("node {}: {}", target->name(), s.Message());
    hood.model.forbidden_nodes.push_back(plan.node);
    return false;
  }
  auto placed = std::make_shared<api::Pod>(pod.pod());
  placed->spec.node_name = target->name();
  PodInfoPtr placed_info = pod.WithPod(placed);
  world.CopyOf(target).AddPod(placed_info);
  world.changes.push_back({placed_info, target, true});
  return ValidateMoves(world, hood);
}

bool CrossNodePreemption::ValidateMoves(PlanWorld& world, Neighbourhood& hood) {
  const auto& plan = hood.plan;
  bool moves_ok = true;
  for (size_t i = 0; i < plan.moves.size() && moves_ok; ++i) {
    const auto [v, d] = plan.moves[i];
    NodeInfo& dest = world.CopyOf(hood.model_nodes[d]);
    dest.RemovePod(world.moved_pods[i]->pod());
    const PodInfoPtr pending = Unbound(*hood.removable[hood.model_pods[v]].pi);
    const PodInfo& original = *pending;
    auto vstate = std::make_unique<CycleState>();
    auto [result, s] = handle_.RunPreFilterPlugins(*vstate, original);
    Status verdict = s.IsSuccess() || s.IsSkip() ? world.Replay(*vstate, original, world.moved_pods[i].get()) : s;
    if (verdict.IsSuccess()) verdict = handle_.RunFilterPluginsWithNominatedPods(*vstate, original, dest);
    dest.AddPod(world.moved_pods[i]);
    if (!verdict.IsSuccess()) {
      hood.last_failure =
          fmt::format("moving {} to {}: {}", original.pod().Key(), hood.model_nodes[d]->name(), verdict.Message());
      hood.model.forbidden_moves.emplace_back(v, d);
      moves_ok = false;
    }
  }
  return moves_ok;
}

CrossNodePreemption::Outcome CrossNodePreemption::NoValidPlan(const Neighbourhood& hood, double decision_seconds) {
  {
    std::lock_guard lock(mu_);
    stats_.solver_seconds += hood.solver_seconds;
    if (stats_.decision_seconds.size() < kMaxRecordedDecisions) stats_.decision_seconds.push_back(decision_seconds);
  }
  const auto& plan = hood.plan;
  std::string why = plan.status == optimizer::PreemptionPlanResult::Status::kPlan || !hood.last_failure.empty()
                        ? "no plan passed the filters (" + hood.last_failure + ")"
                        : plan.message;
  if (plan.status == optimizer::PreemptionPlanResult::Status::kError) {
    return {{}, Wrap(Status::Error("cross-node preemption: " + why))};
  }
  return NoPlan(fmt::format("cross-node preemption found no plan: {}", why));
}

// ---------------------------------------------------------------------------------------------
// Apply: hold, nominate, evict

CrossNodePreemption::Outcome CrossNodePreemption::ApplyPlan(const PodInfo& pod, int64_t now_ns,
                                                            const Neighbourhood& hood, double decision_seconds) {
  const api::Pod& p = pod.pod();
  const auto& plan = hood.plan;
  const NodeInfo* target = hood.model_nodes[plan.node];
  std::vector<Disruption> disrupted;
  Plan applied = MakePlan(pod, now_ns, hood, disrupted);
  const auto moves_to_apply = HoldDestinations(applied);
  RecordPlan(p, std::move(applied), disrupted, hood, decision_seconds);
  KS_LOG_V(2).InfoS("Cross-node preemption: plan made", "pod", log::KObj(p), "node", target->name(), "evicted",
                    plan.evicted.size(), "moved", plan.moves.size(), "optimal", plan.optimal, "gap", plan.gap,
                    "decisionMs", decision_seconds * 1e3);
  if (Status s = EvictVictims(p, target->name(), hood, moves_to_apply); !s.IsSuccess()) {
    return {{}, Wrap(std::move(s))};
  }
  evaluator_.ClearLowerPriorityNominations(target->name(), p.Priority());
  return {{framework::NominatingMode::kOverride, target->name()}, Status()};
}

CrossNodePreemption::Plan CrossNodePreemption::MakePlan(const PodInfo& pod, int64_t now_ns, const Neighbourhood& hood,
                                                        std::vector<Disruption>& disrupted) const {
  const api::Pod& p = pod.pod();
  const auto& plan = hood.plan;
  Plan applied;
  applied.preemptor_uid = p.metadata.uid;
  applied.preemptor = pod.pod_ptr();
  applied.preemptor_info = pod.WithPod(pod.pod_ptr());
  applied.node = hood.model_nodes[plan.node]->name();
  applied.created_ns = now_ns;
  int64_t grace = 0;
  const int64_t cooldown_ns = static_cast<int64_t>(args_.disruption_cooldown_seconds * 1e9);
  for (int v : plan.evicted) {
    const PodInfo& victim = *hood.removable[hood.model_pods[v]].pi;
    applied.victims.push_back(victim.pod_ptr());
    grace = std::max(grace, GraceSeconds(victim.pod()));
    if (ControllerOf(victim.pod()) && cooldown_ns > 0) disrupted.push_back({TemplateKey(victim), now_ns, 0});
  }
  for (auto [v, d] : plan.moves) {
    const PodInfo& victim = *hood.removable[hood.model_pods[v]].pi;
    applied.victims.push_back(victim.pod_ptr());
    grace = std::max(grace, GraceSeconds(victim.pod()));
    Move m;
    m.victim = victim.pod_ptr();
    m.destination = hood.model_nodes[d]->name();
    m.template_key = TemplateKey(victim);
    m.placeholder = preemption::ReplacementPlaceholder(victim);
    if (cooldown_ns > 0) disrupted.push_back({m.template_key, now_ns, 0});
    applied.moves.push_back(std::move(m));
  }
  applied.deadline_ns = now_ns + static_cast<int64_t>((static_cast<double>(grace) + args_.plan_timeout_seconds) * 1e9);
  for (auto& d : disrupted) d.until_ns = now_ns + static_cast<int64_t>(grace) * util::kNanosPerSecond + cooldown_ns;
  return applied;
}

CrossNodePreemption::MovesToApply CrossNodePreemption::HoldDestinations(const Plan& applied) {
  // Each destination is held for the replacement the controller will create: the nominator hands
  // the hold to the first pod of the victim's controller and template created from now on.
  MovesToApply moves_to_apply;
  for (const auto& m : applied.moves) {
    preemption::HoldForReplacement(handle_.nominator(), m.placeholder, m.destination, m.victim->metadata.uid,
                                   applied.created_ns);
    moves_to_apply.emplace_back(m.victim, m.destination);
  }
  return moves_to_apply;
}

void CrossNodePreemption::RecordPlan(const api::Pod& p, Plan applied, const std::vector<Disruption>& disrupted,
                                     const Neighbourhood& hood, double decision_seconds) {
  const auto& plan = hood.plan;
  const NodeInfo* target = hood.model_nodes[plan.node];
  std::lock_guard lock(mu_);
  ++stats_.plans;
  if (plan.optimal) ++stats_.optimal;
  stats_.max_gap = std::max(stats_.max_gap, plan.gap);
  stats_.evictions += static_cast<int64_t>(plan.evicted.size());
  stats_.moves += static_cast<int64_t>(plan.moves.size());
  stats_.solver_seconds += hood.solver_seconds;
  if (stats_.decision_seconds.size() < kMaxRecordedDecisions) stats_.decision_seconds.push_back(decision_seconds);
  if (stats_.plan_records.size() < kMaxPlanRecords) {
    applied.record = stats_.plan_records.size();
    stats_.plan_records.push_back({p.Key(), target->name(), static_cast<int64_t>(plan.evicted.size()),
                                   static_cast<int64_t>(plan.moves.size()), plan.optimal, "active"});
  }
  disruptions_.insert(disruptions_.end(), disrupted.begin(), disrupted.end());
  plans_[applied.preemptor_uid] = std::move(applied);
}

Status CrossNodePreemption::EvictVictims(const api::Pod& p, const std::string& node, const Neighbourhood& hood,
                                         const MovesToApply& moves_to_apply) {
  const std::string evict_reason = fmt::format("Preempted by pod {} on node {}", p.Key(), node);
  for (int v : hood.plan.evicted) {
    if (Status s = evaluator_.Evict(hood.removable[hood.model_pods[v]].pi->pod(), p, node, evict_reason);
        !s.IsSuccess()) {
      return s;
    }
  }
  for (const auto& [victim, destination] : moves_to_apply) {
    const std::string reason =
        fmt::format("Moved to node {} by pod {} preempting on node {}", destination, p.Key(), node);
    if (Status s = evaluator_.Evict(*victim, p, node, reason, destination); !s.IsSuccess()) return s;
  }
  return Status();
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

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return std::make_unique<CrossNodePreemption>(std::move(*decoded), handle);
}

}  // namespace kubesched::plugins::cross_node_preemption
