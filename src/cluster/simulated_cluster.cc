#include "cluster/simulated_cluster.h"

#include <algorithm>

#include <fmt/format.h>

#include "api/workloads.h"

namespace kubesched::cluster {

using framework::Status;

SimulatedCluster::SimulatedCluster(api::ClusterObjects objects, const util::Clock& clock, uint64_t seed,
                                   CreationOrder creation_order)
    : clock_(clock),
      rng_(seed ^ 0x9e3779b97f4a7c15ULL),
      creation_rng_(seed ^ 0x2545f4914f6cdd1dULL),
      creation_order_(creation_order) {
  for (auto& n : objects.nodes) {
    node_names_.insert(n->metadata.name);
    nodes_.push_back(std::move(n));
  }
  for (auto& p : objects.pods) {
    std::string uid = p->metadata.uid;
    pods_[uid] = PodEntry{std::move(p), next_order_++};
  }
  for (auto& ns : objects.namespaces) namespaces_[ns->metadata.name] = ns->metadata.labels;
  for (auto& pdb : objects.pdbs) pdbs_.push_back(std::move(pdb));
  for (auto& w : objects.workloads) workloads_.push_back(std::move(w));
  // Namespaces that pods use exist implicitly, with the label the API server sets on every one.
  auto ensure = [&](const std::string& ns) {
    auto [it, inserted] = namespaces_.try_emplace(ns);
    it->second.Set("kubernetes.io/metadata.name", ns);
  };
  for (const auto& [uid, e] : pods_) ensure(e.pod->metadata.namespace_);
  ensure(std::string(api::kNamespaceDefault));
  ensure(std::string(api::kNamespaceSystem));
}

void SimulatedCluster::Subscribe(EventHandler* handler) {
  std::vector<std::shared_ptr<const api::Node>> nodes;
  std::vector<PodEntry> pods;
  {
    std::lock_guard lock(mu_);
    handler_ = handler;
    nodes = nodes_;
    for (const auto& [uid, e] : pods_) pods.push_back(e);
  }
  std::sort(pods.begin(), pods.end(), [](const PodEntry& a, const PodEntry& b) { return a.order < b.order; });
  auto terminal = [](const api::Pod& p) {
    return p.status.phase == api::PodPhase::kSucceeded || p.status.phase == api::PodPhase::kFailed;
  };
  for (const auto& n : nodes) handler->OnNodeAdd(n);
  for (const auto& e : pods) {
    if (!e.pod->spec.node_name.empty() && !terminal(*e.pod)) handler->OnPodAdd(e.pod);
  }
  std::vector<const PodEntry*> pending;
  std::vector<PendingPodOrigin> origins;
  for (const auto& e : pods) {
    if (!e.pod->spec.node_name.empty() || terminal(*e.pod)) continue;
    pending.push_back(&e);
    PendingPodOrigin origin;
    if (const api::Workload* w = OwnerWorkload(*e.pod)) {
      origin.controller = fmt::format("{}/{}/{}", w->kind, w->metadata.namespace_, w->metadata.name);
    }
    origins.push_back(std::move(origin));
  }
  for (size_t i : PodCreationOrder(origins, creation_order_, creation_rng_)) handler->OnPodAdd(pending[i]->pod);
}

std::shared_ptr<const api::Pod> SimulatedCluster::ReplacePod(const std::string& uid,
                                                             std::function<void(api::Pod&)> mutate,
                                                             std::shared_ptr<const api::Pod>* old_out) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return nullptr;
  auto copy = std::make_shared<api::Pod>(*it->second.pod);
  mutate(*copy);
  *old_out = it->second.pod;
  it->second.pod = copy;
  return copy;
}

Status SimulatedCluster::Bind(const api::Pod& pod, const std::string& node_name) {
  std::shared_ptr<const api::Pod> old_pod, new_pod;
  EventHandler* handler = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it == pods_.end()) return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
    if (!it->second.pod->spec.node_name.empty()) {
      return Status::Error(
          fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} is already assigned "
                      "to node \"{}\"",
                      pod.metadata.name, pod.metadata.name, it->second.pod->spec.node_name));
    }
    if (!node_names_.contains(node_name)) return Status::Error(fmt::format("nodes \"{}\" not found", node_name));
    const int64_t now = clock_.NowNs();
    new_pod = ReplacePod(
        pod.metadata.uid,
        [&](api::Pod& p) {
          p.spec.node_name = node_name;
          p.status.phase = api::PodPhase::kRunning;
          p.status.start_time_ns = now;
          p.status.nominated_node_name.clear();
          std::erase_if(p.status.conditions, [](const api::PodCondition& c) { return c.type == "PodScheduled"; });
          p.status.conditions.push_back({"PodScheduled", "True", "", ""});
        },
        &old_pod);
    handler = handler_;
  }
  if (handler) handler->OnPodUpdate(old_pod, new_pod);
  return {};
}

const api::Workload* SimulatedCluster::OwnerWorkload(const api::Pod& pod) const {
  const api::OwnerReference* owner = nullptr;
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) owner = &ref;
  }
  if (!owner) return nullptr;
  // The owner itself, by uid (a cluster dump's ReplicaSet owns its pods by uid).
  if (!owner->uid.empty()) {
    for (const auto& w : workloads_) {
      if (w->metadata.uid == owner->uid) return w.get();
    }
  }
  for (const auto& w : workloads_) {
    if (w->metadata.namespace_ != pod.metadata.namespace_) continue;
    // A Deployment's pods are owned by its ReplicaSet "<deployment>-<hash>".
    bool name_match = owner->name == w->metadata.name || (w->kind == "Deployment" && owner->kind == "ReplicaSet" &&
                                                          owner->name.starts_with(w->metadata.name + "-") &&
                                                          owner->name.size() == w->metadata.name.size() + 1 + 10);
    bool kind_match = owner->kind == w->kind || (w->kind == "Deployment" && owner->kind == "ReplicaSet");
    if (name_match && kind_match) return w.get();
  }
  return nullptr;
}

Status SimulatedCluster::DeletePod(const api::Pod& pod, std::string_view reason) {
  std::shared_ptr<const api::Pod> deleted;
  std::shared_ptr<const api::Pod> replacement;
  EventHandler* handler = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it == pods_.end()) return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
    deleted = it->second.pod;
    pods_.erase(it);
    // The owning controller notices one replica fewer and creates a new pod.
    if (const api::Workload* w = OwnerWorkload(*deleted)) {
      std::shared_ptr<api::Pod> fresh;
      if (w->kind == "StatefulSet") {
        // StatefulSet pods keep their identity (name and ordinal).
        fresh = std::make_shared<api::Pod>();
        fresh->metadata = deleted->metadata;
        fresh->spec = deleted->spec;
        fresh->spec.node_name.clear();
      } else {
        fresh = api::NewPodForWorkload(*w, rng_, deleted.get());  // an Indexed Job's pod keeps its index
        // Keep the controller reference the evicted pod had (a Deployment's ReplicaSet).
        fresh->metadata.owner_references = deleted->metadata.owner_references;
        if (w->kind == "Deployment") {
          if (const std::string* hash = deleted->metadata.labels.Find("pod-template-hash")) {
            fresh->metadata.labels.Set("pod-template-hash", *hash);
          }
        }
        if (w->kind == "DaemonSet") {
          fresh->spec = deleted->spec;  // pinned to the same node (by affinity), not yet bound
          fresh->spec.node_name.clear();
        }
      }
      fresh->metadata.uid = fmt::format("{}-r{}", deleted->metadata.uid, next_order_);
      fresh->metadata.creation_timestamp_ns = clock_.NowNs();
      fresh->status = api::PodStatus{};
      replacement = fresh;
      pods_[fresh->metadata.uid] = PodEntry{fresh, next_order_++};
    }
    evictions_.push_back(Eviction{deleted, std::string(reason), replacement});
    handler = handler_;
  }
  if (handler) {
    handler->OnPodDelete(deleted);
    if (replacement) handler->OnPodAdd(replacement);
  }
  return {};
}

Status SimulatedCluster::SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) {
  std::shared_ptr<const api::Pod> old_pod, new_pod;
  EventHandler* handler = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!pods_.contains(pod.metadata.uid))
      return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
    new_pod = ReplacePod(
        pod.metadata.uid, [&](api::Pod& p) { p.status.nominated_node_name = node_name; }, &old_pod);
    handler = handler_;
  }
  if (handler) handler->OnPodUpdate(old_pod, new_pod);
  return {};
}

Status SimulatedCluster::SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) {
  std::shared_ptr<const api::Pod> old_pod, new_pod;
  {
    std::lock_guard lock(mu_);
    if (!pods_.contains(pod.metadata.uid))
      return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
    new_pod = ReplacePod(
        pod.metadata.uid,
        [&](api::Pod& p) {
          std::erase_if(p.status.conditions, [&](const api::PodCondition& c) { return c.type == condition.type; });
          p.status.conditions.push_back(condition);
        },
        &old_pod);
  }
  // A status-only change: the scheduler ignores it for unscheduled pods (no requeue), so the
  // event is not delivered, which also keeps the simulation free of self-triggered retries.
  return {};
}

std::optional<api::Labels> SimulatedCluster::NamespaceLabels(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = namespaces_.find(name);
  if (it == namespaces_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::shared_ptr<const api::PodDisruptionBudget>> SimulatedCluster::ListPodDisruptionBudgets() const {
  std::lock_guard lock(mu_);
  return pdbs_;
}

std::optional<api::LabelSelector> SimulatedCluster::ControllerSelector(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  const api::Workload* w = OwnerWorkload(pod);
  if (!w) return std::nullopt;
  // Upstream's default spreading selects siblings through Services, ReplicationControllers,
  // ReplicaSets and StatefulSets (a Deployment's pods through its ReplicaSet).
  if (w->kind != "Deployment" && w->kind != "ReplicaSet" && w->kind != "ReplicationController" &&
      w->kind != "StatefulSet") {
    return std::nullopt;
  }
  if (w->selector) {
    api::LabelSelector sel = *w->selector;
    if (w->kind == "Deployment") {
      if (const std::string* hash = pod.metadata.labels.Find("pod-template-hash")) {
        sel.match_labels.Set("pod-template-hash", *hash);
      }
    }
    return sel;
  }
  api::LabelSelector sel;
  sel.match_labels = w->template_.metadata.labels;
  return sel;
}

std::vector<std::shared_ptr<const api::Pod>> SimulatedCluster::Pods() const {
  std::vector<PodEntry> entries;
  {
    std::lock_guard lock(mu_);
    for (const auto& [uid, e] : pods_) entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(), [](const PodEntry& a, const PodEntry& b) { return a.order < b.order; });
  std::vector<std::shared_ptr<const api::Pod>> out;
  out.reserve(entries.size());
  for (auto& e : entries) out.push_back(std::move(e.pod));
  return out;
}

std::vector<std::shared_ptr<const api::Node>> SimulatedCluster::Nodes() const {
  std::lock_guard lock(mu_);
  return nodes_;
}

std::vector<Eviction> SimulatedCluster::Evictions() const {
  std::lock_guard lock(mu_);
  return evictions_;
}

}  // namespace kubesched::cluster
