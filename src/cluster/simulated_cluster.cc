#include "cluster/simulated_cluster.h"

#include <algorithm>

#include <fmt/format.h>

#include "api/workloads.h"
#include "util/duration.h"

namespace kubesched::cluster {

using framework::Status;

SimulatedCluster::SimulatedCluster(api::ClusterObjects objects, const util::Clock& clock, uint64_t seed,
                                   CreationOrder creation_order)
    : clock_(clock),
      rng_(seed ^ 0x9e3779b97f4a7c15ULL),
      creation_rng_(seed ^ 0x2545f4914f6cdd1dULL),
      creation_order_(creation_order) {
  const int64_t start_ns = clock_.NowNs();
  // The timeline's annotations were checked when the manifests were loaded; a value that does
  // not parse (an object built in code) is ignored.
  auto after = [&](const api::ObjectMeta& m, std::string_view key) -> std::optional<int64_t> {
    const std::string* text = m.annotations.Find(std::string(key));
    if (!text) return std::nullopt;
    auto d = util::ParseDuration(*text);
    if (!d || *d < 0) return std::nullopt;
    return start_ns + *d;
  };
  for (auto& n : objects.nodes) {
    const std::string name = n->metadata.name;
    const auto create_at = after(n->metadata, api::kAnnotationCreateAfter);
    const auto delete_at = after(n->metadata, api::kAnnotationDeleteAfter);
    if (create_at) {
      events_.emplace(*create_at, TimedEvent{TimedEvent::Kind::kCreateNode, name});
      future_nodes_[name] = std::move(n);
    } else {
      node_names_.insert(name);
      nodes_.push_back(std::move(n));
    }
    if (delete_at) events_.emplace(*delete_at, TimedEvent{TimedEvent::Kind::kDeleteNode, name});
  }
  std::vector<std::string> namespaces_used;
  for (auto& p : objects.pods) {
    std::string uid = p->metadata.uid;
    namespaces_used.push_back(p->metadata.namespace_);
    auto create_at = after(p->metadata, api::kAnnotationCreateAfter);
    auto delete_at = after(p->metadata, api::kAnnotationDeleteAfter);
    if (create_at) {
      events_.emplace(*create_at, TimedEvent{TimedEvent::Kind::kCreatePod, uid});
      future_pods_[uid] = PodEntry{std::move(p), next_order_++};
    } else {
      pods_[uid] = PodEntry{std::move(p), next_order_++};
    }
    if (delete_at) events_.emplace(*delete_at, TimedEvent{TimedEvent::Kind::kDeletePod, uid});
  }
  for (auto& ns : objects.namespaces) namespaces_[ns->metadata.name] = ns->metadata.labels;
  for (auto& pdb : objects.pdbs) pdbs_.push_back(std::move(pdb));
  for (auto& w : objects.workloads) workloads_.push_back(std::move(w));
  // Namespaces that pods use exist implicitly, with the label the API server sets on every one.
  auto ensure = [&](const std::string& ns) {
    auto [it, inserted] = namespaces_.try_emplace(ns);
    it->second.Set("kubernetes.io/metadata.name", ns);
  };
  for (const auto& ns : namespaces_used) ensure(ns);
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
  return Delete(pod, Deletion{.record_eviction = true, .reason = std::string(reason), .moved_to = ""});
}

Status SimulatedCluster::DeletePodForMove(const api::Pod& pod, const std::string& destination_node,
                                          std::string_view reason) {
  return Delete(pod, Deletion{.record_eviction = true, .reason = std::string(reason), .moved_to = destination_node});
}

Status SimulatedCluster::Delete(const api::Pod& pod, const Deletion& deletion) {
  std::vector<Notice> notices;
  EventHandler* handler = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!pods_.contains(pod.metadata.uid)) {
      return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
    }
    Status s = StartDeletionLocked(pod.metadata.uid, deletion, notices);
    if (!s.IsSuccess()) return s;
    handler = handler_;
  }
  Deliver(handler, notices);
  return {};
}

namespace {

// Controllers that do not count terminating pods, so replace one as soon as its deletion starts
// (upstream's ReplicaSet and Job controllers filter them out of their active pods).
bool ReplacesAtDeletionStart(const api::Workload& w) {
  return w.kind == "Deployment" || w.kind == "ReplicaSet" || w.kind == "ReplicationController" || w.kind == "Job";
}

}  // namespace

Status SimulatedCluster::StartDeletionLocked(const std::string& uid, const Deletion& deletion,
                                             std::vector<Notice>& notices) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return Status::Error(fmt::format("pod uid {} not found", uid));
  const std::shared_ptr<const api::Pod> original = it->second.pod;
  // Deleting a pod that is already terminating changes nothing (the API server keeps the earlier,
  // or shortens to a smaller, grace period; preemption asks with the pod's own).
  if (original->metadata.deletion_timestamp_ns) return {};
  if (deletion.record_eviction) {
    eviction_of_[uid] = evictions_.size();
    evictions_.push_back(Eviction{original, deletion.reason, nullptr, deletion.moved_to});
  }
  const int64_t grace_seconds = original->spec.TerminationGracePeriodSeconds();
  if (original->spec.node_name.empty() || grace_seconds == 0) {
    // No kubelet has to stop it: the API server removes the object at once.
    RemovePodLocked(uid, /*node_gone=*/false, notices);
    return {};
  }
  const int64_t now = clock_.NowNs();
  const int64_t remove_at = now + grace_seconds * util::kNanosPerSecond;
  std::shared_ptr<const api::Pod> old_pod;
  auto marked = ReplacePod(
      uid,
      [&](api::Pod& p) {
        p.metadata.deletion_timestamp_ns = remove_at;
        if (deletion.record_eviction) {
          // Upstream's preemption marks its victims before deleting them (PodDisruptionConditions).
          std::erase_if(p.status.conditions, [](const api::PodCondition& c) { return c.type == "DisruptionTarget"; });
          p.status.conditions.push_back({"DisruptionTarget", "True", "PreemptionByScheduler", deletion.reason});
        }
      },
      &old_pod);
  notices.push_back(Notice{Notice::Kind::kPodUpdate, nullptr, old_pod, marked});
  events_.emplace(remove_at, TimedEvent{TimedEvent::Kind::kRemovePod, uid});
  const api::Workload* w = OwnerWorkload(*original);
  if (w && ReplacesAtDeletionStart(*w)) CreateReplacementLocked(*original, *w, notices);
  return {};
}

void SimulatedCluster::RemovePodLocked(const std::string& uid, bool node_gone, std::vector<Notice>& notices) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  const std::shared_ptr<const api::Pod> removed = it->second.pod;
  pods_.erase(it);
  notices.push_back(Notice{Notice::Kind::kPodDelete, nullptr, nullptr, removed});
  const api::Workload* w = OwnerWorkload(*removed);
  if (!w) return;
  if (replaced_.contains(uid)) return;  // when its deletion started
  if (w->kind == "DaemonSet" && node_gone) return;
  CreateReplacementLocked(*removed, *w, notices);
}

void SimulatedCluster::CreateReplacementLocked(const api::Pod& deleted, const api::Workload& w,
                                               std::vector<Notice>& notices) {
  // The owning controller notices one replica fewer and creates a new pod.
  std::shared_ptr<api::Pod> fresh;
  if (w.kind == "StatefulSet") {
    // StatefulSet pods keep their identity (name and ordinal).
    fresh = std::make_shared<api::Pod>();
    fresh->metadata = deleted.metadata;
    fresh->spec = deleted.spec;
    fresh->spec.node_name.clear();
  } else {
    fresh = api::NewPodForWorkload(w, rng_, &deleted);  // an Indexed Job's pod keeps its index
    // Keep the controller reference the evicted pod had (a Deployment's ReplicaSet).
    fresh->metadata.owner_references = deleted.metadata.owner_references;
    if (w.kind == "Deployment") {
      if (const std::string* hash = deleted.metadata.labels.Find("pod-template-hash")) {
        fresh->metadata.labels.Set("pod-template-hash", *hash);
      }
    }
    if (w.kind == "DaemonSet") {
      fresh->spec = deleted.spec;  // pinned to the same node (by affinity), not yet bound
      fresh->spec.node_name.clear();
    }
  }
  fresh->metadata.uid = fmt::format("{}-r{}", deleted.metadata.uid, next_order_);
  fresh->metadata.creation_timestamp_ns = clock_.NowNs();
  fresh->metadata.deletion_timestamp_ns.reset();
  fresh->status = api::PodStatus{};
  pods_[fresh->metadata.uid] = PodEntry{fresh, next_order_++};
  replaced_.insert(deleted.metadata.uid);
  if (auto e = eviction_of_.find(deleted.metadata.uid); e != eviction_of_.end()) {
    evictions_[e->second].replacement = fresh;
  }
  notices.push_back(Notice{Notice::Kind::kPodAdd, nullptr, nullptr, fresh});
}

std::optional<int64_t> SimulatedCluster::NextEventNs() const {
  std::lock_guard lock(mu_);
  if (events_.empty()) return std::nullopt;
  return events_.begin()->first;
}

bool SimulatedCluster::FireEvents() {
  bool fired = false;
  while (true) {
    std::vector<Notice> notices;
    EventHandler* handler = nullptr;
    {
      std::lock_guard lock(mu_);
      const int64_t now = clock_.NowNs();
      if (events_.empty() || events_.begin()->first > now) break;
      // Everything due now, in time order; events these schedule for now run in the next round.
      std::vector<TimedEvent> due;
      while (!events_.empty() && events_.begin()->first <= now) {
        due.push_back(std::move(events_.begin()->second));
        events_.erase(events_.begin());
      }
      for (const TimedEvent& e : due) FireLocked(e, notices);
      handler = handler_;
    }
    fired = true;
    Deliver(handler, notices);
  }
  return fired;
}

void SimulatedCluster::FireLocked(const TimedEvent& event, std::vector<Notice>& notices) {
  const int64_t now = clock_.NowNs();
  switch (event.kind) {
    case TimedEvent::Kind::kRemovePod: {
      auto it = pods_.find(event.key);
      // Gone already (its node was deleted), or a pod the input had terminating.
      if (it == pods_.end() || !it->second.pod->metadata.deletion_timestamp_ns) return;
      RemovePodLocked(event.key, /*node_gone=*/false, notices);
      return;
    }
    case TimedEvent::Kind::kCreatePod: {
      auto it = future_pods_.find(event.key);
      if (it == future_pods_.end()) return;
      PodEntry entry = std::move(it->second);
      future_pods_.erase(it);
      auto created = std::make_shared<api::Pod>(*entry.pod);
      created->metadata.creation_timestamp_ns = now;  // the API server stamps it now
      entry.pod = created;
      pods_[event.key] = entry;
      const bool terminal =
          created->status.phase == api::PodPhase::kSucceeded || created->status.phase == api::PodPhase::kFailed;
      if (!terminal) notices.push_back(Notice{Notice::Kind::kPodAdd, nullptr, nullptr, created});
      return;
    }
    case TimedEvent::Kind::kDeletePod: {
      if (future_pods_.erase(event.key) > 0) return;  // deleted before it was created: never is
      if (pods_.contains(event.key)) (void)StartDeletionLocked(event.key, Deletion{}, notices);
      return;
    }
    case TimedEvent::Kind::kCreateNode: {
      auto it = future_nodes_.find(event.key);
      if (it == future_nodes_.end()) return;
      auto created = std::make_shared<api::Node>(*it->second);
      future_nodes_.erase(it);
      created->metadata.creation_timestamp_ns = now;
      node_names_.insert(event.key);
      nodes_.push_back(created);
      notices.push_back(Notice{Notice::Kind::kNodeAdd, created, nullptr, nullptr});
      return;
    }
    case TimedEvent::Kind::kDeleteNode: {
      if (future_nodes_.erase(event.key) > 0) return;
      auto node =
          std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n->metadata.name == event.key; });
      if (node == nodes_.end()) return;
      // The pods bound to it go at once (pod garbage collection of a node that is gone), in
      // creation order; their controllers recreate them elsewhere.
      std::vector<std::pair<uint64_t, std::string>> bound;
      for (const auto& [uid, e] : pods_) {
        if (e.pod->spec.node_name == event.key) bound.emplace_back(e.order, uid);
      }
      std::sort(bound.begin(), bound.end());
      const std::shared_ptr<const api::Node> deleted = *node;
      nodes_.erase(node);
      node_names_.erase(event.key);
      std::vector<Notice> pod_notices;
      for (const auto& [order, uid] : bound) RemovePodLocked(uid, /*node_gone=*/true, pod_notices);
      // The pods' deletions first, so the scheduler's cache releases them from a node it still
      // knows, then the node, then the replacements.
      for (auto& n : pod_notices) {
        if (n.kind == Notice::Kind::kPodDelete) notices.push_back(n);
      }
      notices.push_back(Notice{Notice::Kind::kNodeDelete, deleted, nullptr, nullptr});
      for (auto& n : pod_notices) {
        if (n.kind != Notice::Kind::kPodDelete) notices.push_back(std::move(n));
      }
      return;
    }
  }
}

void SimulatedCluster::Deliver(EventHandler* handler, const std::vector<Notice>& notices) const {
  if (!handler) return;
  for (const Notice& n : notices) {
    switch (n.kind) {
      case Notice::Kind::kNodeAdd:
        handler->OnNodeAdd(n.node);
        break;
      case Notice::Kind::kNodeDelete:
        handler->OnNodeDelete(n.node);
        break;
      case Notice::Kind::kPodAdd:
        handler->OnPodAdd(n.pod);
        break;
      case Notice::Kind::kPodUpdate:
        handler->OnPodUpdate(n.old_pod, n.pod);
        break;
      case Notice::Kind::kPodDelete:
        handler->OnPodDelete(n.pod);
        break;
    }
  }
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
