#include "testing/builders.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>

namespace kubesched::testing {
namespace {
std::atomic<int> g_counter{0};
}

api::Quantity Q(std::string_view text) {
  auto q = api::Quantity::Parse(text);
  if (!q) {
    std::cerr << "test quantity " << text << ": " << q.error() << "\n";
    std::abort();
  }
  return *q;
}

api::ResourceList Resources(std::vector<std::pair<std::string, std::string>> list) {
  api::ResourceList out;
  for (auto& [k, v] : list) out[k] = Q(v);
  return out;
}

PodBuilder::PodBuilder() : pod_(std::make_shared<api::Pod>()) {
  int n = ++g_counter;
  pod_->metadata.name = "pod-" + std::to_string(n);
  pod_->metadata.namespace_ = "default";
  pod_->metadata.uid = "uid-pod-" + std::to_string(n);
}

PodBuilder& PodBuilder::Name(std::string name) {
  pod_->metadata.uid = "uid-" + pod_->metadata.namespace_ + "-" + name;
  pod_->metadata.name = std::move(name);
  return *this;
}
PodBuilder& PodBuilder::Namespace(std::string ns) {
  pod_->metadata.namespace_ = std::move(ns);
  pod_->metadata.uid = "uid-" + pod_->metadata.namespace_ + "-" + pod_->metadata.name;
  return *this;
}
PodBuilder& PodBuilder::UID(std::string uid) {
  pod_->metadata.uid = std::move(uid);
  return *this;
}
PodBuilder& PodBuilder::Label(std::string key, std::string value) {
  pod_->metadata.labels.Set(std::move(key), std::move(value));
  return *this;
}
PodBuilder& PodBuilder::Labels(std::vector<std::pair<std::string, std::string>> labels) {
  for (auto& [k, v] : labels) pod_->metadata.labels.Set(k, v);
  return *this;
}
PodBuilder& PodBuilder::Node(std::string node_name) {
  pod_->spec.node_name = std::move(node_name);
  return *this;
}
PodBuilder& PodBuilder::NominatedNodeName(std::string node_name) {
  pod_->status.nominated_node_name = std::move(node_name);
  return *this;
}
PodBuilder& PodBuilder::SchedulerName(std::string name) {
  pod_->spec.scheduler_name = std::move(name);
  return *this;
}
PodBuilder& PodBuilder::Priority(int32_t priority) {
  pod_->spec.priority = priority;
  return *this;
}
PodBuilder& PodBuilder::PreemptionPolicy(api::PreemptionPolicy policy) {
  pod_->spec.preemption_policy = policy;
  return *this;
}
PodBuilder& PodBuilder::CreationTimestamp(int64_t ns) {
  pod_->metadata.creation_timestamp_ns = ns;
  return *this;
}
PodBuilder& PodBuilder::StartTime(int64_t ns) {
  pod_->status.start_time_ns = ns;
  return *this;
}
PodBuilder& PodBuilder::Phase(api::PodPhase phase) {
  pod_->status.phase = phase;
  return *this;
}
PodBuilder& PodBuilder::Req(std::vector<std::pair<std::string, std::string>> requests) {
  api::Container c;
  c.name = "c" + std::to_string(pod_->spec.containers.size());
  c.image = "image";
  c.resources.requests = Resources(std::move(requests));
  pod_->spec.containers.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::InitReq(std::vector<std::pair<std::string, std::string>> requests, bool sidecar) {
  api::Container c;
  c.name = "init" + std::to_string(pod_->spec.init_containers.size());
  c.image = "image";
  c.resources.requests = Resources(std::move(requests));
  if (sidecar) c.restart_policy = "Always";
  pod_->spec.init_containers.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::Overhead(std::vector<std::pair<std::string, std::string>> overhead) {
  pod_->spec.overhead = Resources(std::move(overhead));
  return *this;
}
PodBuilder& PodBuilder::Container(std::string image) {
  api::Container c;
  c.name = "c" + std::to_string(pod_->spec.containers.size());
  c.image = std::move(image);
  pod_->spec.containers.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::HostPort(int32_t port, std::string protocol, std::string host_ip) {
  api::Container c;
  c.name = "c" + std::to_string(pod_->spec.containers.size());
  c.image = "image";
  api::ContainerPort p;
  p.container_port = port;
  p.host_port = port;
  p.protocol = std::move(protocol);
  p.host_ip = std::move(host_ip);
  c.ports.push_back(std::move(p));
  pod_->spec.containers.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::NodeSelector(std::vector<std::pair<std::string, std::string>> selector) {
  for (auto& [k, v] : selector) pod_->spec.node_selector.Set(k, v);
  return *this;
}

namespace {
api::NodeAffinity& MutableNodeAffinity(api::Pod& pod) {
  if (!pod.spec.affinity) pod.spec.affinity.emplace();
  if (!pod.spec.affinity->node_affinity) pod.spec.affinity->node_affinity.emplace();
  return *pod.spec.affinity->node_affinity;
}
api::PodAffinity& MutablePodAffinity(api::Pod& pod, bool anti) {
  if (!pod.spec.affinity) pod.spec.affinity.emplace();
  auto& slot = anti ? pod.spec.affinity->pod_anti_affinity : pod.spec.affinity->pod_affinity;
  if (!slot) slot.emplace();
  return *slot;
}
api::PodAffinityTerm MakeTerm(std::string key, api::SelectorOperator op, std::vector<std::string> values,
                              std::string topology_key) {
  api::PodAffinityTerm t;
  api::LabelSelector sel;
  std::sort(values.begin(), values.end());
  sel.match_expressions.push_back({std::move(key), op, std::move(values)});
  t.label_selector = std::move(sel);
  t.topology_key = std::move(topology_key);
  return t;
}
}  // namespace

PodBuilder& PodBuilder::NodeAffinityIn(std::string key, std::vector<std::string> values) {
  auto& na = MutableNodeAffinity(*pod_);
  if (!na.required) na.required.emplace();
  std::sort(values.begin(), values.end());
  api::NodeSelectorTerm term;
  term.match_expressions.push_back({std::move(key), api::SelectorOperator::kIn, std::move(values)});
  na.required->terms.push_back(std::move(term));
  return *this;
}
PodBuilder& PodBuilder::NodeAffinityNotIn(std::string key, std::vector<std::string> values) {
  auto& na = MutableNodeAffinity(*pod_);
  if (!na.required) na.required.emplace();
  std::sort(values.begin(), values.end());
  api::NodeSelectorTerm term;
  term.match_expressions.push_back({std::move(key), api::SelectorOperator::kNotIn, std::move(values)});
  na.required->terms.push_back(std::move(term));
  return *this;
}
PodBuilder& PodBuilder::RequiredNodeAffinity(api::NodeSelector selector) {
  MutableNodeAffinity(*pod_).required = std::move(selector);
  return *this;
}
PodBuilder& PodBuilder::PreferredNodeAffinity(int32_t weight, api::NodeSelectorTerm term) {
  MutableNodeAffinity(*pod_).preferred.push_back({weight, std::move(term)});
  return *this;
}
PodBuilder& PodBuilder::Toleration(api::Toleration toleration) {
  pod_->spec.tolerations.push_back(std::move(toleration));
  return *this;
}
PodBuilder& PodBuilder::SchedulingGates(std::vector<std::string> gates) {
  pod_->spec.scheduling_gates = std::move(gates);
  return *this;
}
PodBuilder& PodBuilder::PodGroup(std::string name) {
  pod_->spec.pod_group = std::move(name);
  return *this;
}
PodBuilder& PodBuilder::PodAffinityIn(std::string label_key, std::vector<std::string> values,
                                      std::string topology_key) {
  MutablePodAffinity(*pod_, false)
      .required.push_back(
          MakeTerm(std::move(label_key), api::SelectorOperator::kIn, std::move(values), std::move(topology_key)));
  return *this;
}
PodBuilder& PodBuilder::PodAntiAffinityIn(std::string label_key, std::vector<std::string> values,
                                          std::string topology_key) {
  MutablePodAffinity(*pod_, true)
      .required.push_back(
          MakeTerm(std::move(label_key), api::SelectorOperator::kIn, std::move(values), std::move(topology_key)));
  return *this;
}
PodBuilder& PodBuilder::PodAffinityExists(std::string label_key, std::string topology_key) {
  MutablePodAffinity(*pod_, false)
      .required.push_back(MakeTerm(std::move(label_key), api::SelectorOperator::kExists, {}, std::move(topology_key)));
  return *this;
}
PodBuilder& PodBuilder::PodAntiAffinityExists(std::string label_key, std::string topology_key) {
  MutablePodAffinity(*pod_, true)
      .required.push_back(MakeTerm(std::move(label_key), api::SelectorOperator::kExists, {}, std::move(topology_key)));
  return *this;
}
PodBuilder& PodBuilder::PreferredPodAffinityIn(int32_t weight, std::string label_key, std::vector<std::string> values,
                                               std::string topology_key) {
  MutablePodAffinity(*pod_, false)
      .preferred.push_back({weight, MakeTerm(std::move(label_key), api::SelectorOperator::kIn, std::move(values),
                                             std::move(topology_key))});
  return *this;
}
PodBuilder& PodBuilder::PreferredPodAntiAffinityIn(int32_t weight, std::string label_key,
                                                   std::vector<std::string> values, std::string topology_key) {
  MutablePodAffinity(*pod_, true)
      .preferred.push_back({weight, MakeTerm(std::move(label_key), api::SelectorOperator::kIn, std::move(values),
                                             std::move(topology_key))});
  return *this;
}
PodBuilder& PodBuilder::SpreadConstraint(int32_t max_skew, std::string topology_key,
                                         api::UnsatisfiableConstraintAction action, api::LabelSelector selector,
                                         std::optional<int32_t> min_domains) {
  api::TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = std::move(topology_key);
  c.when_unsatisfiable = action;
  c.label_selector = std::move(selector);
  c.min_domains = min_domains;
  pod_->spec.topology_spread_constraints.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::OwnerReference(std::string kind, std::string name, std::string uid) {
  api::OwnerReference ref;
  ref.api_version = kind == "Job" ? "batch/v1" : "apps/v1";
  ref.kind = std::move(kind);
  ref.uid = uid.empty() ? "uid-" + name : std::move(uid);
  ref.name = std::move(name);
  ref.controller = true;
  pod_->metadata.owner_references.push_back(std::move(ref));
  return *this;
}

PodBuilder& PodBuilder::PVC(std::string claim_name, bool read_only) {
  api::Volume v;
  v.name = claim_name;
  v.claim_name = std::move(claim_name);
  v.claim_read_only = read_only;
  pod_->spec.volumes.push_back(std::move(v));
  return *this;
}

PodBuilder& PodBuilder::EphemeralVolume(std::string volume_name) {
  api::Volume v;
  v.name = std::move(volume_name);
  v.ephemeral = true;
  pod_->spec.volumes.push_back(std::move(v));
  return *this;
}

PodBuilder& PodBuilder::Volume(api::Volume volume) {
  pod_->spec.volumes.push_back(std::move(volume));
  return *this;
}

std::shared_ptr<api::Pod> PodBuilder::Obj() const { return std::make_shared<api::Pod>(*pod_); }
framework::PodInfoPtr PodBuilder::Info() const { return framework::PodInfo::Create(Obj()); }

NodeBuilder::NodeBuilder() : node_(std::make_shared<api::Node>()) {
  int n = ++g_counter;
  Name("node-" + std::to_string(n));
}

NodeBuilder& NodeBuilder::Name(std::string name) {
  node_->metadata.uid = "uid-node-" + name;
  node_->metadata.labels.Set(std::string(api::kLabelHostname), name);
  node_->metadata.name = std::move(name);
  return *this;
}
NodeBuilder& NodeBuilder::Label(std::string key, std::string value) {
  node_->metadata.labels.Set(std::move(key), std::move(value));
  return *this;
}
NodeBuilder& NodeBuilder::Capacity(std::vector<std::pair<std::string, std::string>> resources) {
  bool has_pods = false;
  for (auto& [k, v] : resources) has_pods |= k == "pods";
  if (!has_pods) resources.emplace_back("pods", "110");
  node_->status.capacity = Resources(resources);
  node_->status.allocatable = node_->status.capacity;
  return *this;
}
NodeBuilder& NodeBuilder::Allocatable(std::vector<std::pair<std::string, std::string>> resources) {
  node_->status.allocatable = Resources(std::move(resources));
  return *this;
}
NodeBuilder& NodeBuilder::Taint(std::string key, std::string value, api::TaintEffect effect) {
  node_->spec.taints.push_back({std::move(key), std::move(value), effect});
  return *this;
}
NodeBuilder& NodeBuilder::Unschedulable(bool unschedulable) {
  node_->spec.unschedulable = unschedulable;
  return *this;
}
NodeBuilder& NodeBuilder::Image(std::string name, int64_t size_bytes) {
  node_->status.images.push_back({{std::move(name)}, size_bytes});
  return *this;
}
NodeBuilder& NodeBuilder::DeclaredFeatures(std::vector<std::string> features) {
  std::ranges::sort(features);
  features.erase(std::unique(features.begin(), features.end()), features.end());
  node_->status.declared_features = std::move(features);
  return *this;
}
std::shared_ptr<api::Node> NodeBuilder::Obj() const { return std::make_shared<api::Node>(*node_); }

std::unique_ptr<framework::NodeInfo> MakeNodeInfo(std::shared_ptr<const api::Node> node,
                                                  const std::vector<std::shared_ptr<api::Pod>>& pods) {
  auto info = std::make_unique<framework::NodeInfo>(std::move(node));
  for (const auto& p : pods) info->AddPod(framework::PodInfo::Create(p));
  return info;
}

const api::Pod* FindPod(const std::vector<std::shared_ptr<const api::Pod>>& pods, const std::string& name) {
  for (const auto& p : pods) {
    if (p->metadata.name == name) return p.get();
  }
  return nullptr;
}

std::string UnschedulableMessage(const api::Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodScheduled" && c.status == "False") return c.message;
  }
  return "";
}

}  // namespace kubesched::testing
