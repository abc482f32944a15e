// The loader's expansion stage: objects numbered in creation order and sorted into
// ClusterObjects, workloads expanded into the pods their controllers would create (only the pods
// a cluster dump does not have already), and the warnings about what is not simulated.

#include <algorithm>
#include <array>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "api/loader_internal.h"
#include "util/go_quote.h"

namespace kubesched::api::loader {
namespace {

using util::GoQuote;

// The key a controller reference is filed under: the owner's uid, or (a reference without one, as
// hand-written manifests may have) its kind, namespace and name.
std::string OwnerKey(const OwnerReference& ref, const std::string& namespace_) {
  if (!ref.uid.empty()) return "uid:" + ref.uid;
  return "ref:" + ref.kind + "/" + namespace_ + "/" + ref.name;
}

const OwnerReference* ControllerRef(const ObjectMeta& meta) {
  for (const OwnerReference& ref : meta.owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::optional<LoadError> ExpandAndCollect(State& state, ClusterObjects& out) {
  std::vector<std::shared_ptr<const Node>> nodes;
  // What the input already has for a controller (a cluster dump), by OwnerKey: its pods, and the
  // Deployments whose ReplicaSets are listed. Controllers create only what is missing.
  std::unordered_map<std::string, std::vector<const Pod*>> owned_pods;
  std::unordered_set<std::string> deployments_with_replica_sets;
  for (const Entry& e : state.entries) {
    if (auto* n = std::get_if<std::shared_ptr<Node>>(&e.object)) nodes.push_back(*n);
    const OwnerReference* ref = ControllerRef(*e.meta);
    if (ref == nullptr) continue;
    if (auto* p = std::get_if<std::shared_ptr<Pod>>(&e.object)) {
      owned_pods[OwnerKey(*ref, e.meta->namespace_)].push_back(p->get());
    } else if (auto* w = std::get_if<std::shared_ptr<Workload>>(&e.object);
               w != nullptr && (*w)->kind == "ReplicaSet" && ref->kind == "Deployment") {
      deployments_with_replica_sets.insert(OwnerKey(*ref, e.meta->namespace_));
    }
  }
  auto keys_of = [](const Workload& w) {
    return std::array<std::string, 2>{"uid:" + w.metadata.uid,
                                      "ref:" + w.kind + "/" + w.metadata.namespace_ + "/" + w.metadata.name};
  };

  int64_t next_index = 0;
  std::set<std::string> declared_namespaces;
  std::vector<std::string> used_namespaces;  // in order of first use
  std::set<std::string> used_set;
  auto use_namespace = [&](const std::string& ns) {
    if (used_set.insert(ns).second) used_namespaces.push_back(ns);
  };
  auto add_pod = [&](std::shared_ptr<Pod> pod) {
    pod->metadata.creation_index = next_index++;
    if (pod->metadata.creation_timestamp_ns == 0)
      pod->metadata.creation_timestamp_ns = state.options.creation_timestamp_ns;
    out.pods.push_back(std::move(pod));
  };
  std::vector<std::string> cron_jobs;

  for (size_t i = 0; i < state.entries.size(); ++i) {
    Entry& e = state.entries[i];
    if (e.kind->namespaced) use_namespace(e.meta->namespace_);
    std::visit(
        [&](auto& obj) {
          using T = std::decay_t<decltype(*obj)>;
          if constexpr (!std::is_same_v<T, Pod>) obj->metadata.creation_index = next_index++;
          if constexpr (std::is_same_v<T, Node>) {
            out.nodes.push_back(obj);
          } else if constexpr (std::is_same_v<T, Pod>) {
            ApplyMatchLabelKeys(*obj);
            add_pod(obj);
          } else if constexpr (std::is_same_v<T, Namespace>) {
            declared_namespaces.insert(obj->metadata.name);
            out.namespaces.push_back(obj);
          } else if constexpr (std::is_same_v<T, PriorityClass>) {
            out.priority_classes.push_back(obj);
          } else if constexpr (std::is_same_v<T, PodDisruptionBudget>) {
            out.pdbs.push_back(obj);
          } else if constexpr (std::is_same_v<T, PodGroup>) {
            out.pod_groups.push_back(obj);
          } else if constexpr (std::is_constructible_v<ResourceObject, std::shared_ptr<const T>>) {
            out.resources.push_back(ResourceObject(std::shared_ptr<const T>(obj)));
          } else if constexpr (!std::is_same_v<T, Workload>) {
            out.storage.push_back(StorageObject(std::shared_ptr<const T>(obj)));
          } else if (obj->kind == "CronJob") {
            cron_jobs.push_back(obj->metadata.namespace_ + "/" + obj->metadata.name);
          } else {
            out.workloads.push_back(obj);
          }
        },
        e.object);
    if (out.pods.size() > state.options.max_pods) {
      return state.ErrorAt(
          i, "", "more than " + std::to_string(state.options.max_pods) + " pods in total (LoadOptions.max_pods)");
    }

    auto* wp = std::get_if<std::shared_ptr<Workload>>(&e.object);
    if (wp == nullptr || !state.options.expand_workloads) continue;
    const Workload& w = **wp;
    if (w.kind == "CronJob") continue;
    std::vector<const Pod*> owned;
    bool has_replica_sets = false;
    for (const std::string& key : keys_of(w)) {
      if (auto it = owned_pods.find(key); it != owned_pods.end()) {
        for (const Pod* p : it->second) {
          if (std::find(owned.begin(), owned.end(), p) == owned.end()) owned.push_back(p);
        }
      }
      has_replica_sets = has_replica_sets || deployments_with_replica_sets.contains(key);
    }
    // A Deployment whose ReplicaSets are in the input creates no pods itself: its ReplicaSets do.
    if (w.kind == "Deployment" && has_replica_sets) continue;
    int64_t expected = w.kind == "DaemonSet" ? static_cast<int64_t>(nodes.size()) : w.replicas;
    if (w.kind == "Job") expected = std::min<int64_t>(w.replicas, w.completions);
    if (out.pods.size() + static_cast<size_t>(std::max<int64_t>(expected, 0)) > state.options.max_pods) {
      const std::string field = w.kind == "Job" ? "spec.parallelism" : "spec.replicas";
      return state.ErrorAt(i, field,
                           std::to_string(expected) + " pods would make more than " +
                               std::to_string(state.options.max_pods) + " pods in total (LoadOptions.max_pods)");
    }
    for (std::shared_ptr<Pod> pod : ExpandWorkload(w, nodes, state.rng, owned)) {
      std::string key = "Pod/" + pod->metadata.namespace_ + "/" + pod->metadata.name;
      while (state.keys.contains(key)) {
        if (w.kind == "StatefulSet") {
          return state.ErrorAt(i, "metadata.name",
                               "StatefulSet pod " + GoQuote(pod->metadata.name) +
                                   " clashes with a pod of the same name (first defined in " +
                                   state.Where(state.keys.at(key)) + ")");
        }
        // A random name that is taken: the controller would retry with another one.
        pod = NewPodForWorkload(w, state.rng, pod.get());
        key = "Pod/" + pod->metadata.namespace_ + "/" + pod->metadata.name;
      }
      if (w.kind == "StatefulSet") UseStatefulSetClaims(*pod, *e.dom);
      state.keys.emplace(key, i);
      state.expanded.emplace_back(pod.get(), i);
      add_pod(std::move(pod));
    }
  }

  if (!state.skipped.empty() && state.options.warn_skipped_kinds) {
    std::string kinds;
    for (const auto& [kind, count] : state.skipped)
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + kind;
    out.warnings.push_back("skipped " + kinds + (state.skipped_total == 1 ? " object" : " objects") +
                           " kubesched does not simulate");
  }
  if (!cron_jobs.empty()) {
    out.warnings.push_back((cron_jobs.size() == 1 ? "CronJob " : "CronJobs ") + JoinNames(cron_jobs) +
                           (cron_jobs.size() == 1 ? " creates" : " create") +
                           " no pods: a snapshot has no schedule to run them on");
  }

  // Namespaces used without a Namespace object exist in any cluster that accepted the objects.
  for (const std::string& ns : used_namespaces) {
    if (declared_namespaces.contains(ns)) continue;
    auto n = std::make_shared<Namespace>();
    n->metadata.name = ns;
    n->metadata.uid = GenerateUID("Namespace", "", ns);
    n->metadata.labels.Set(std::string(kLabelMetadataName), ns);
    n->metadata.creation_timestamp_ns = state.options.creation_timestamp_ns;
    n->metadata.creation_index = next_index++;
    out.namespaces.push_back(std::move(n));
  }
  return std::nullopt;
}

}  // namespace kubesched::api::loader
