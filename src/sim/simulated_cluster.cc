#include "sim/simulated_cluster.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "api/encode.h"
#include "api/time_format.h"
#include "api/workloads.h"
#include "sim/timeline.h"
#include "store/meta.h"
#include "store/resources.h"

namespace kubesched::sim {

namespace json = api::json;
using framework::Status;

namespace {

// The store's history serves watches that start from an older resourceVersion; a simulation has
// no watchers, so it keeps little.
constexpr size_t kSimulationWatchHistory = 1024;

std::unique_ptr<store::Store> NewSimulationStore(const util::Clock& clock, uint64_t seed) {
  store::StoreOptions options;
  options.watch_history = kSimulationWatchHistory;
  options.seed = seed;
  // The scheduler-plugins PodGroup too: a simulated cluster has the Coscheduling CRD installed.
  return store::NewMemoryStore(store::SchedulerResources(), clock, options);
}

const store::ResourceType& Resource(const store::Store& store, std::string_view group, std::string_view resource) {
  const store::ResourceType* type = store.FindResource(group, resource);
  if (type == nullptr) throw std::logic_error(fmt::format("the store does not serve {}", resource));
  return *type;
}

std::string WorkloadUid(const api::Workload& w) {
  if (!w.metadata.uid.empty()) return w.metadata.uid;
  return api::GenerateUID(w.kind, w.metadata.namespace_.empty() ? api::kNamespaceDefault : w.metadata.namespace_,
                          w.metadata.name);
}

// The workload a pod's controller reference names, among the input's workloads: by uid, else by
// kind and name (a Deployment's pods are owned by its ReplicaSet "<deployment>-<hash>").
const api::Workload* OwnerWorkload(const api::Pod& pod, const std::vector<std::shared_ptr<api::Workload>>& workloads) {
  const api::OwnerReference* owner = nullptr;
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) owner = &ref;
  }
  if (owner == nullptr) return nullptr;
  if (!owner->uid.empty()) {
    for (const auto& w : workloads) {
      if (w->metadata.uid == owner->uid) return w.get();
    }
  }
  for (const auto& w : workloads) {
    if (w->metadata.namespace_ != pod.metadata.namespace_) continue;
    const bool deployment_rs = w->kind == "Deployment" && owner->kind == "ReplicaSet" &&
                               owner->name.starts_with(w->metadata.name + "-") &&
                               owner->name.size() == w->metadata.name.size() + 1 + 10;
    if ((owner->name == w->metadata.name && owner->kind == w->kind) || deployment_rs) return w.get();
  }
  return nullptr;
}

// An object's JSON as Store::Restore takes it: its kept JSON (or the encoding of an object built
// in code) with the identity the loader gave it.
json::Document RestoreDocument(const std::string& text, const api::ObjectMeta& meta) {
  json::Document doc;
  if (!json::Parse(text, doc) || !doc.IsObject()) throw std::logic_error("an object's kept JSON does not parse");
  auto& a = doc.GetAllocator();
  json::Value& m = store::Metadata(doc);
  if (!meta.name.empty()) json::Set(m, "name", json::MakeString(meta.name, a), a);
  if (!meta.namespace_.empty()) json::Set(m, "namespace", json::MakeString(meta.namespace_, a), a);
  if (!meta.uid.empty()) json::Set(m, "uid", json::MakeString(meta.uid, a), a);
  if (meta.creation_timestamp_ns != 0) {
    json::Set(m, "creationTimestamp", json::MakeString(api::FormatRFC3339(meta.creation_timestamp_ns), a), a);
  }
  return doc;
}

std::string ObjectText(const api::ObjectJson& kept, std::string_view kind, std::string_view api_version) {
  if (kept) return *kept;
  return fmt::format(R"({{"apiVersion":"{}","kind":"{}"}})", api_version, kind);
}

// The ReplicaSet a Deployment's controller would have made for the pods the loader made: the
// Deployment's spec, its selector and template labelled with the template hash, owned by it.
json::Document ReplicaSetFor(const std::string& deployment_json, const api::ObjectMeta& deployment,
                             const std::string& name, const std::string& hash) {
  json::Document d;
  if (!json::Parse(deployment_json, d)) throw std::logic_error("a Deployment's kept JSON does not parse");
  json::Document rs;
  rs.SetObject();
  auto& a = rs.GetAllocator();
  json::Set(rs, "apiVersion", json::MakeString("apps/v1", a), a);
  json::Set(rs, "kind", json::MakeString("ReplicaSet", a), a);
  json::Value& meta = store::Metadata(rs);
  json::Set(meta, "name", json::MakeString(name, a), a);
  json::Set(meta, "namespace", json::MakeString(deployment.namespace_, a), a);
  json::Set(meta, "uid", json::MakeString(api::GenerateUID("ReplicaSet", deployment.namespace_, name), a), a);
  if (deployment.creation_timestamp_ns != 0) {
    json::Set(meta, "creationTimestamp", json::MakeString(api::FormatRFC3339(deployment.creation_timestamp_ns), a), a);
  }
  json::Value owner(rapidjson::kObjectType);
  json::Set(owner, "apiVersion", json::MakeString("apps/v1", a), a);
  json::Set(owner, "kind", json::MakeString("Deployment", a), a);
  json::Set(owner, "name", json::MakeString(deployment.name, a), a);
  json::Set(owner, "uid", json::MakeString(deployment.uid, a), a);
  json::Set(owner, "controller", json::Value(true), a);
  json::Set(owner, "blockOwnerDeletion", json::Value(true), a);
  json::Value owners(rapidjson::kArrayType);
  owners.PushBack(owner, a);
  json::Set(meta, "ownerReferences", std::move(owners), a);

  const json::Value* spec = json::Find(d, "spec");
  json::Value& rs_spec = json::Child(rs, "spec", a);
  if (spec != nullptr) {
    if (const json::Value* r = json::Find(*spec, "replicas")) json::Set(rs_spec, "replicas", json::Value(*r, a), a);
    if (const json::Value* sel = json::Find(*spec, "selector")) json::Set(rs_spec, "selector", json::Value(*sel, a), a);
    if (const json::Value* t = json::Find(*spec, "template")) json::Set(rs_spec, "template", json::Value(*t, a), a);
  }
  json::Value& selector = json::Child(rs_spec, "selector", a);
  json::Set(json::Child(selector, "matchLabels", a), "pod-template-hash", json::MakeString(hash, a), a);
  json::Value& template_meta = json::Child(json::Child(rs_spec, "template", a), "metadata", a);
  json::Value& template_labels = json::Child(template_meta, "labels", a);
  json::Set(template_labels, "pod-template-hash", json::MakeString(hash, a), a);
  // The ReplicaSet's own labels are its template's.
  json::Set(meta, "labels", json::Value(template_labels, a), a);
  return rs;
}

// The priority the loader's admission gave the pod (Store::Restore does not admit again).
void SetAdmittedPriority(json::Document& pod, const api::PodSpec& spec) {
  auto& a = pod.GetAllocator();
  json::Value& s = json::Child(pod, "spec", a);
  if (spec.priority) json::Set(s, "priority", json::Value(*spec.priority), a);
  if (spec.preemption_policy) {
    const char* policy = *spec.preemption_policy == api::PreemptionPolicy::kNever ? "Never" : "PreemptLowerPriority";
    json::Set(s, "preemptionPolicy", json::MakeString(policy, a), a);
  }
}

// A manifest may name a pod's controller without its uid (the API server would require one): the
// reference is made to carry the uid the controller has in the store, so that the controller
// owns the pod (and does not make another).
void SetControllerUid(json::Document& pod, const api::Workload& w) {
  json::Value* refs = json::Find(store::Metadata(pod), "ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return;
  auto& a = pod.GetAllocator();
  for (auto& ref : refs->GetArray()) {
    const json::Value* controller = json::Find(ref, "controller");
    if (controller == nullptr || !controller->IsTrue() || !json::GetString(ref, "uid").empty()) continue;
    std::string uid = WorkloadUid(w);
    const std::string_view kind = json::GetString(ref, "kind");
    if (w.kind == "Deployment" && kind == "ReplicaSet") {
      const std::string ns(json::GetString(store::Metadata(pod), "namespace"));
      uid = api::GenerateUID("ReplicaSet", ns, json::GetString(ref, "name"));
    }
    json::Set(ref, "uid", json::MakeString(uid, a), a);
  }
}

// A PodGroup as the store keeps it: with the priority the loader's admission resolved (KEP-5710),
// as an API server's admission stores it.
json::Document PodGroupDocument(const api::PodGroup& pg) {
  json::Document doc = RestoreDocument(ObjectText(pg.json, "PodGroup", pg.ApiVersion()), pg.metadata);
  if (pg.priority) {
    json::Set(json::Child(doc, "spec", doc.GetAllocator()), "priority", json::Value(*pg.priority), doc.GetAllocator());
  }
  return doc;
}

// The input's storage objects, in its order (classes, CSI objects, volumes and claims come before
// the pods that use them), each through `restore`.
template <typename Restore>
void RestoreStorage(const store::Store& s, const std::vector<api::StorageObject>& storage, const Restore& restore) {
  for (const api::StorageObject& object : storage) {
    std::visit(
        [&](const auto& o) {
          using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
          const store::ResourceType* type = nullptr;
          std::string_view kind, api_version = "v1";
          if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) {
            type = &Resource(s, "", "persistentvolumeclaims"), kind = "PersistentVolumeClaim";
          } else if constexpr (std::is_same_v<T, api::PersistentVolume>) {
            type = &Resource(s, "", "persistentvolumes"), kind = "PersistentVolume";
          } else if constexpr (std::is_same_v<T, api::StorageClass>) {
            type = &Resource(s, "storage.k8s.io", "storageclasses"), kind = "StorageClass";
          } else if constexpr (std::is_same_v<T, api::CSINode>) {
            type = &Resource(s, "storage.k8s.io", "csinodes"), kind = "CSINode";
          } else if constexpr (std::is_same_v<T, api::CSIDriver>) {
            type = &Resource(s, "storage.k8s.io", "csidrivers"), kind = "CSIDriver";
          } else {
            type = &Resource(s, "storage.k8s.io", "csistoragecapacities"), kind = "CSIStorageCapacity";
          }
          if constexpr (!std::is_same_v<T, api::PersistentVolumeClaim> && !std::is_same_v<T, api::PersistentVolume>) {
            api_version = "storage.k8s.io/v1";
          }
          json::Document doc = RestoreDocument(ObjectText(o->json, kind, api_version), o->metadata);
          if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) {
            // The class admission gave it (DefaultStorageClass), as the API server would store it.
            if (o->storage_class_name) {
              auto& a = doc.GetAllocator();
              json::Set(json::Child(doc, "spec", a), "storageClassName", json::MakeString(*o->storage_class_name, a),
                        a);
            }
          }
          restore(*type, o->metadata.namespace_, o->metadata.name, std::move(doc));
        },
        object);
  }
}

// The input's DeviceClasses, ResourceSlices, ResourceClaimTemplates and ResourceClaims, in its
// order, each through `restore`.
template <typename Restore>
void RestoreResources(const store::Store& s, const std::vector<api::ResourceObject>& resources,
                      const Restore& restore) {
  for (const api::ResourceObject& object : resources) {
    std::visit(
        [&](const auto& o) {
          using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
          std::string_view resource, kind;
          if constexpr (std::is_same_v<T, api::DeviceClass>) {
            resource = "deviceclasses", kind = "DeviceClass";
          } else if constexpr (std::is_same_v<T, api::ResourceSlice>) {
            resource = "resourceslices", kind = "ResourceSlice";
          } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
            resource = "resourceclaims", kind = "ResourceClaim";
          } else {
            resource = "resourceclaimtemplates", kind = "ResourceClaimTemplate";
          }
          json::Document doc = RestoreDocument(ObjectText(o->json, kind, "resource.k8s.io/v1"), o->metadata);
          restore(Resource(s, api::kResourceApiGroup, resource), o->metadata.namespace_, o->metadata.name,
                  std::move(doc));
        },
        object);
  }
}

}  // namespace

SimulatedCluster::SimulatedCluster(api::ClusterObjects objects, const util::Clock& clock, uint64_t seed,
                                   cluster::CreationOrder creation_order)
    : detail::OwnedStore{NewSimulationStore(clock, seed)}, cluster::StoreClient(*owned_store, clock), clock_(clock) {
  observer_ = owned_store->AddObserver([this](const store::WatchEvent& event) { OnStoreEvent(event); });
  Load(objects, seed, creation_order);
}

SimulatedCluster::~SimulatedCluster() {
  informer_.reset();
  controllers_.reset();
  if (observer_) owned_store->RemoveObserver(*observer_);
}

void SimulatedCluster::Load(api::ClusterObjects& objects, uint64_t seed, cluster::CreationOrder creation_order) {
  store::Store& s = *owned_store;
  auto timeline = std::make_unique<Timeline>(s, clock_);
  const int64_t start_ns = clock_.NowNs();
  auto restore = [&](const store::ResourceType& type, const std::string& ns, const std::string& name,
                     json::Document doc) {
    auto created = s.Restore(type, ns, std::move(doc));
    if (created) return;
    if (created.error().reason == store::Error::Reason::kAlreadyExists &&
        (type.resource == "namespaces" || type.resource == "priorityclasses")) {
      return;  // built in (default, kube-system, system-node-critical, ...)
    }
    // The message names the object and, for an invalid one, its causes.
    throw std::runtime_error(
        fmt::format("loading {} {}{}: {}", type.singular, ns.empty() ? "" : ns + "/", name, created.error().message));
  };

  const auto& namespaces = Resource(s, "", "namespaces");
  for (const auto& n : objects.namespaces) {
    restore(namespaces, "", n->metadata.name, RestoreDocument(ObjectText(n->json, "Namespace", "v1"), n->metadata));
  }
  const auto& priority_classes = Resource(s, "scheduling.k8s.io", "priorityclasses");
  for (const auto& pc : objects.priority_classes) {
    restore(priority_classes, "", pc->metadata.name,
            RestoreDocument(ObjectText(pc->json, "PriorityClass", "scheduling.k8s.io/v1"), pc->metadata));
  }
  const auto& pod_groups = Resource(s, "scheduling.k8s.io", "podgroups");
  const auto& coscheduling_pod_groups = Resource(s, "scheduling.x-k8s.io", "podgroups");
  for (const auto& pg : objects.pod_groups) {
    restore(pg->api == api::PodGroupApi::kScheduling ? pod_groups : coscheduling_pod_groups, pg->metadata.namespace_,
            pg->metadata.name, PodGroupDocument(*pg));
  }

  RestoreStorage(s, objects.storage, restore);
  RestoreResources(s, objects.resources, restore);

  const auto& nodes = Resource(s, "", "nodes");
  // Each loaded object is released once the store has it (the input's typed objects and the
  // store's would otherwise both be held at the peak).
  for (auto& n : objects.nodes) {
    const auto create_at = TimelineTime(n->metadata, api::kAnnotationCreateAfter, start_ns);
    const auto delete_at = TimelineTime(n->metadata, api::kAnnotationDeleteAfter, start_ns);
    json::Document doc = RestoreDocument(api::NodeJson(*n), n->metadata);
    {
      std::lock_guard lock(mu_);
      node_order_.emplace(n->metadata.name, next_order_++);
    }
    if (create_at || delete_at) {
      timeline->Add(nodes, "", n->metadata.name, create_at ? json::Encode(doc) : "", create_at, delete_at);
    }
    if (!create_at) restore(nodes, "", n->metadata.name, std::move(doc));
    n.reset();
  }

  // The workloads, and for a Deployment whose pods the loader made the ReplicaSet that owns them
  // (its controller adopts that one rather than making its own).
  std::unordered_map<std::string, bool> workload_names;  // "kind/ns/name"
  // Deployments whose ReplicaSets the input has (a cluster dump), by uid and by namespace/name: the
  // loader made none of their pods, and their controller adopts the ReplicaSet whose template is
  // theirs (upstream's FindNewReplicaSet) instead of a new one replacing the running pods.
  std::unordered_set<std::string> deployments_with_replica_sets;
  for (const auto& w : objects.workloads) {
    workload_names[fmt::format("{}/{}/{}", w->kind, w->metadata.namespace_, w->metadata.name)] = true;
    if (w->kind != "ReplicaSet") continue;
    for (const api::OwnerReference& ref : w->metadata.owner_references) {
      if (!ref.controller || ref.kind != "Deployment") continue;
      if (!ref.uid.empty()) deployments_with_replica_sets.insert("uid:" + ref.uid);
      deployments_with_replica_sets.insert(fmt::format("ref:{}/{}", w->metadata.namespace_, ref.name));
    }
  }
  for (const auto& w : objects.workloads) {
    const store::ResourceType* type = nullptr;
    if (w->kind == "Deployment") type = s.FindResource("apps", "deployments");
    if (w->kind == "ReplicaSet") type = s.FindResource("apps", "replicasets");
    if (w->kind == "StatefulSet") type = s.FindResource("apps", "statefulsets");
    if (w->kind == "DaemonSet") type = s.FindResource("apps", "daemonsets");
    if (w->kind == "ReplicationController") type = s.FindResource("", "replicationcontrollers");
    if (w->kind == "Job") type = s.FindResource("batch", "jobs");
    if (type == nullptr || !w->json) continue;
    api::ObjectMeta meta = w->metadata;
    meta.uid = WorkloadUid(*w);
    restore(*type, meta.namespace_, meta.name, RestoreDocument(*w->json, meta));
    if (w->kind != "Deployment") continue;
    if (deployments_with_replica_sets.contains("uid:" + meta.uid) ||
        deployments_with_replica_sets.contains(fmt::format("ref:{}/{}", meta.namespace_, meta.name))) {
      continue;
    }
    const std::string hash = api::ComputePodTemplateHash(w->template_);
    const std::string rs_name = w->metadata.name + "-" + hash;
    if (workload_names.contains(fmt::format("ReplicaSet/{}/{}", meta.namespace_, rs_name))) continue;
    json::Document rs = ReplicaSetFor(*w->json, meta, rs_name, hash);
    restore(Resource(s, "apps", "replicasets"), meta.namespace_, rs_name, std::move(rs));
  }

  // Pods: those already bound (or finished) in manifest order, then the pending ones in the
  // order they are created.
  const auto& pods = Resource(s, "", "pods");
  std::vector<std::shared_ptr<api::Pod>> pending;
  std::vector<cluster::PendingPodOrigin> origins;
  auto add_pod = [&](const api::Pod& p) {
    const auto create_at = TimelineTime(p.metadata, api::kAnnotationCreateAfter, start_ns);
    const auto delete_at = TimelineTime(p.metadata, api::kAnnotationDeleteAfter, start_ns);
    json::Document doc = RestoreDocument(api::PodJson(p), p.metadata);
    SetAdmittedPriority(doc, p.spec);
    if (const api::Workload* w = OwnerWorkload(p, objects.workloads)) SetControllerUid(doc, *w);
    if (create_at || delete_at) {
      timeline->Add(pods, p.metadata.namespace_, p.metadata.name, create_at ? json::Encode(doc) : "", create_at,
                    delete_at);
    }
    if (!create_at) restore(pods, p.metadata.namespace_, p.metadata.name, std::move(doc));
  };
  {
    std::lock_guard lock(mu_);
    for (const auto& p : objects.pods) pod_order_.emplace(p->metadata.uid, next_order_++);
  }
  for (auto& p : objects.pods) {
    const bool terminal = p->status.phase == api::PodPhase::kSucceeded || p->status.phase == api::PodPhase::kFailed;
    if (!p->spec.node_name.empty() || terminal) {
      add_pod(*p);
      p.reset();
      continue;
    }
    cluster::PendingPodOrigin origin;
    if (const api::Workload* w = OwnerWorkload(*p, objects.workloads)) {
      origin.controller = fmt::format("{}/{}/{}", w->kind, w->metadata.namespace_, w->metadata.name);
    }
    origins.push_back(std::move(origin));
    pending.push_back(std::move(p));
  }
  std::mt19937_64 creation_rng(seed ^ 0x2545f4914f6cdd1dULL);
  for (size_t i : cluster::PodCreationOrder(origins, creation_order, creation_rng)) {
    add_pod(*pending[i]);
    pending[i].reset();
  }

  const auto& pdbs = Resource(s, "policy", "poddisruptionbudgets");
  for (const auto& pdb : objects.pdbs) {
    restore(pdbs, pdb->metadata.namespace_, pdb->metadata.name,
            RestoreDocument(ObjectText(pdb->json, "PodDisruptionBudget", "policy/v1"), pdb->metadata));
  }

  // The input's pods already past their deletion deadline are stuck terminating: they stay.
  store::controllers::DefaultControllerOptions controller_options;
  controller_options.node_lifecycle.leave_overdue_terminating_pods = true;
  controllers_ = store::controllers::NewDefaultControllerManager(s, clock_, seed, controller_options);
  last_timeline_event_ns_ = timeline->LastEventNs();
  controllers_->Add(std::move(timeline));
  controllers_->Start();
  informer_ = std::make_unique<cluster::StoreInformer>(s);
}

void SimulatedCluster::Subscribe(cluster::EventHandler* handler) { informer_->Subscribe(handler); }

void SimulatedCluster::OnStoreEvent(const store::WatchEvent& event) {
  if (event.type != store::EventType::kAdded || !event.object) return;
  const std::string_view resource = event.object->type->resource;
  std::lock_guard lock(mu_);
  if (resource == "nodes") {
    node_order_.try_emplace(event.object->name, next_order_++);
    return;
  }
  if (resource != "pods") return;
  pod_order_.try_emplace(event.object->uid, next_order_++);
  if (awaiting_replacement_.empty()) return;
  auto pod = event.object->View<api::Pod>();
  if (!pod) return;
  for (const auto& ref : pod->metadata.owner_references) {
    if (!ref.controller) continue;
    auto it = awaiting_replacement_.find(ref.uid);
    if (it == awaiting_replacement_.end() || it->second.empty()) return;
    evictions_[it->second.front()].replacement = pod;
    it->second.erase(it->second.begin());
    if (it->second.empty()) awaiting_replacement_.erase(it);
    return;
  }
}

Status SimulatedCluster::DeletePod(const api::Pod& pod, std::string_view reason) { return Evict(pod, reason, ""); }

Status SimulatedCluster::DeletePodForMove(const api::Pod& pod, const std::string& destination_node,
                                          std::string_view reason) {
  return Evict(pod, reason, destination_node);
}

Status SimulatedCluster::Evict(const api::Pod& pod, std::string_view reason, const std::string& moved_to) {
  auto current = owned_store->Get(Resource(*owned_store, "", "pods"), pod.metadata.namespace_, pod.metadata.name);
  if (!current || (*current)->uid != pod.metadata.uid) {
    return Status::Error(fmt::format("pods \"{}\" not found", pod.metadata.name));
  }
  auto stored = (*current)->View<api::Pod>();
  // Already terminating: not evicted again (cluster::StoreClient::DeletePod changes nothing either).
  if (stored && stored->metadata.deletion_timestamp_ns) return {};
  {
    std::lock_guard lock(mu_);
    const size_t index = evictions_.size();
    evictions_.push_back(Eviction{stored ? stored : std::make_shared<const api::Pod>(pod), std::string(reason), nullptr,
                                  moved_to, clock_.NowNs()});
    for (const auto& ref : pod.metadata.owner_references) {
      if (ref.controller && !ref.uid.empty()) awaiting_replacement_[ref.uid].push_back(index);
    }
  }
  return cluster::StoreClient::DeletePod(pod, reason);
}

std::optional<int64_t> SimulatedCluster::NextEventNs() const { return controllers_->NextEventNs(); }

bool SimulatedCluster::FireEvents() { return controllers_->FireEvents(); }

template <typename T>
std::vector<std::shared_ptr<const T>> SimulatedCluster::InOrder(std::string_view resource,
                                                                const std::unordered_map<std::string, uint64_t>& order,
                                                                bool by_uid, std::string_view group) const {
  auto listed = owned_store->List(Resource(*owned_store, group, resource), "", {});
  std::vector<std::pair<uint64_t, std::shared_ptr<const T>>> ordered;
  if (listed) {
    std::lock_guard lock(mu_);
    for (const auto& object : listed->items) {
      auto view = object->View<T>();
      if (!view) continue;
      auto it = order.find(by_uid ? object->uid : object->name);
      ordered.emplace_back(it == order.end() ? UINT64_MAX : it->second, std::move(view));
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::shared_ptr<const T>> out;
  out.reserve(ordered.size());
  for (auto& [position, view] : ordered) out.push_back(std::move(view));
  return out;
}

std::vector<std::shared_ptr<const api::Pod>> SimulatedCluster::Pods() const {
  return InOrder<api::Pod>("pods", pod_order_, /*by_uid=*/true);
}

std::vector<std::shared_ptr<const api::Node>> SimulatedCluster::Nodes() const {
  return InOrder<api::Node>("nodes", node_order_, /*by_uid=*/false);
}

std::vector<std::shared_ptr<const api::PersistentVolumeClaim>> SimulatedCluster::Claims() const {
  return InOrder<api::PersistentVolumeClaim>("persistentvolumeclaims", {}, /*by_uid=*/true);
}

std::vector<std::shared_ptr<const api::PersistentVolume>> SimulatedCluster::Volumes() const {
  return InOrder<api::PersistentVolume>("persistentvolumes", {}, /*by_uid=*/false);
}

std::vector<std::shared_ptr<const api::ResourceClaim>> SimulatedCluster::ResourceClaims() const {
  return InOrder<api::ResourceClaim>("resourceclaims", {}, /*by_uid=*/true, api::kResourceApiGroup);
}

std::vector<Eviction> SimulatedCluster::Evictions() const {
  std::lock_guard lock(mu_);
  return evictions_;
}

std::vector<Eviction> SimulatedCluster::EvictionsFrom(size_t first) const {
  std::lock_guard lock(mu_);
  if (first >= evictions_.size()) return {};
  return {evictions_.begin() + static_cast<std::ptrdiff_t>(first), evictions_.end()};
}

}  // namespace kubesched::sim
