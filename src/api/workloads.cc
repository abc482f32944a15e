#include "api/workloads.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "api/json.h"

namespace kubesched::api {
namespace {

// Upstream's generateName keeps the base to 63 - 5 characters.
constexpr size_t kMaxGeneratedNameBaseLength = 58;

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

// FNV-1a over a canonical, unambiguous serialisation: every string is length-prefixed and every
// optional or list announces itself, so different templates cannot serialise to the same bytes.
class Hasher {
 public:
  explicit Hasher(uint64_t offset = kFnvOffset) : hash_(offset) {}
  uint64_t hash() const { return hash_; }

  void Bytes(std::string_view s) {
    for (unsigned char c : s) {
      hash_ ^= c;
      hash_ *= kFnvPrime;
    }
  }
  void Int(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) {
      hash_ ^= (u >> (8 * i)) & 0xff;
      hash_ *= kFnvPrime;
    }
  }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Bytes(s);
  }
  void Tag(std::string_view field) { Str(field); }
  void Bool(bool b) { Int(b ? 1 : 0); }
  template <typename T>
  void Opt(const std::optional<T>& v) {
    Bool(v.has_value());
    if (v) Value(*v);
  }

  void Value(int64_t v) { Int(v); }
  void Value(int32_t v) { Int(v); }
  void Value(const std::string& s) { Str(s); }
  void Value(TaintEffect e) { Int(static_cast<int64_t>(e)); }
  void Value(PreemptionPolicy p) { Int(static_cast<int64_t>(p)); }
  void Value(NodeInclusionPolicy p) { Int(static_cast<int64_t>(p)); }
  void Value(const Labels& labels) {
    Int(static_cast<int64_t>(labels.size()));
    for (const auto& [k, v] : labels) {
      Str(k);
      Str(v);
    }
  }
  void Value(const std::vector<std::string>& list) {
    Int(static_cast<int64_t>(list.size()));
    for (const auto& s : list) Str(s);
  }
  void Value(const ResourceList& list) {
    Int(static_cast<int64_t>(list.size()));
    for (const auto& [name, q] : list) {
      Str(name);
      Str(q.text());
    }
  }
  void Value(const SelectorRequirement& r) {
    Str(r.key);
    Int(static_cast<int64_t>(r.op));
    Value(r.values);
  }
  void Value(const std::vector<SelectorRequirement>& list) {
    Int(static_cast<int64_t>(list.size()));
    for (const auto& r : list) Value(r);
  }
  void Value(const LabelSelector& s) {
    Value(s.match_labels);
    Value(s.match_expressions);
  }
  void Value(const NodeSelectorTerm& t) {
    Value(t.match_expressions);
    Value(t.match_fields);
  }
  void Value(const NodeSelector& s) {
    Int(static_cast<int64_t>(s.terms.size()));
    for (const auto& t : s.terms) Value(t);
  }
  void Value(const NodeAffinity& a) {
    Opt(a.required);
    Int(static_cast<int64_t>(a.preferred.size()));
    for (const auto& p : a.preferred) {
      Int(p.weight);
      Value(p.preference);
    }
  }
  void Value(const PodAffinityTerm& t) {
    Opt(t.label_selector);
    Value(t.namespaces);
    Opt(t.namespace_selector);
    Str(t.topology_key);
    Value(t.match_label_keys);
    Value(t.mismatch_label_keys);
  }
  void Value(const PodAffinity& a) {
    Int(static_cast<int64_t>(a.required.size()));
    for (const auto& t : a.required) Value(t);
    Int(static_cast<int64_t>(a.preferred.size()));
    for (const auto& w : a.preferred) {
      Int(w.weight);
      Value(w.term);
    }
  }
  void Value(const Affinity& a) {
    Opt(a.node_affinity);
    Opt(a.pod_affinity);
    Opt(a.pod_anti_affinity);
  }
  void Value(const Toleration& t) {
    Str(t.key);
    Int(static_cast<int64_t>(t.op));
    Str(t.value);
    Opt(t.effect);
    Opt(t.toleration_seconds);
  }
  void Value(const Container& c) {
    Str(c.name);
    Str(c.image);
    Value(c.resources.requests);
    Value(c.resources.limits);
    Int(static_cast<int64_t>(c.ports.size()));
    for (const auto& p : c.ports) {
      Str(p.name);
      Int(p.container_port);
      Int(p.host_port);
      Str(p.protocol);
      Str(p.host_ip);
    }
    Opt(c.restart_policy);
  }
  void Value(const TopologySpreadConstraint& c) {
    Int(c.max_skew);
    Str(c.topology_key);
    Int(static_cast<int64_t>(c.when_unsatisfiable));
    Opt(c.label_selector);
    Opt(c.min_domains);
    Opt(c.node_affinity_policy);
    Opt(c.node_taints_policy);
    Value(c.match_label_keys);
  }
  void Value(const PodSpec& s) {
    Tag("nodeName");
    Str(s.node_name);
    Tag("nodeSelector");
    Value(s.node_selector);
    Tag("affinity");
    Opt(s.affinity);
    Tag("tolerations");
    Int(static_cast<int64_t>(s.tolerations.size()));
    for (const auto& t : s.tolerations) Value(t);
    Tag("schedulerName");
    Str(s.scheduler_name);
    Tag("priority");
    Opt(s.priority);
    Str(s.priority_class_name);
    Opt(s.preemption_policy);
    Tag("schedulingGates");
    Value(s.scheduling_gates);
    Tag("containers");
    Int(static_cast<int64_t>(s.containers.size()));
    for (const auto& c : s.containers) Value(c);
    Tag("initContainers");
    Int(static_cast<int64_t>(s.init_containers.size()));
    for (const auto& c : s.init_containers) Value(c);
    Tag("overhead");
    Value(s.overhead);
    Tag("topologySpreadConstraints");
    Int(static_cast<int64_t>(s.topology_spread_constraints.size()));
    for (const auto& c : s.topology_spread_constraints) Value(c);
    Tag("hostNetwork");
    Bool(s.host_network);
  }

 private:
  uint64_t hash_;
};

std::string EncodeSafe(uint64_t value, size_t length) {
  std::string out;
  out.reserve(length);
  for (size_t i = 0; i < length; ++i) {
    out += kNameSuffixAlphabet[value % kNameSuffixAlphabet.size()];
    value /= kNameSuffixAlphabet.size();
  }
  return out;
}

std::string_view ApiVersionOf(std::string_view kind) {
  if (kind == "Job") return "batch/v1";
  if (kind == "ReplicationController") return "v1";
  return "apps/v1";
}

// The pod every controller starts from: template metadata and spec, workload namespace, a
// controller owner reference.
std::shared_ptr<Pod> PodFromTemplate(const Workload& w, std::string name, std::string generate_name,
                                     std::string_view owner_kind, std::string_view owner_name,
                                     std::string_view owner_uid) {
  auto pod = std::make_shared<Pod>();
  pod->metadata.name = std::move(name);
  pod->metadata.generate_name = std::move(generate_name);
  pod->metadata.namespace_ = w.metadata.namespace_.empty() ? std::string(kNamespaceDefault) : w.metadata.namespace_;
  pod->metadata.labels = w.template_.metadata.labels;
  pod->metadata.annotations = w.template_.metadata.annotations;
  pod->metadata.uid = GenerateUID("Pod", pod->metadata.namespace_, pod->metadata.name);
  pod->metadata.owner_references.push_back(OwnerReference{
      .api_version = std::string(ApiVersionOf(owner_kind)),
      .kind = std::string(owner_kind),
      .name = std::string(owner_name),
      .uid = std::string(owner_uid),
      .controller = true,
  });
  pod->spec = w.template_.spec;
  return pod;
}

std::string WorkloadUID(const Workload& w) {
  if (!w.metadata.uid.empty()) return w.metadata.uid;
  return GenerateUID(w.kind, w.metadata.namespace_.empty() ? kNamespaceDefault : w.metadata.namespace_,
                     w.metadata.name);
}

void AddDaemonSetTolerations(PodSpec& spec) {
  for (Toleration& t : DaemonSetTolerations(spec.host_network)) {
    if (std::find(spec.tolerations.begin(), spec.tolerations.end(), t) == spec.tolerations.end()) {
      spec.tolerations.push_back(std::move(t));
    }
  }
}

// Upstream's ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes exactly
// one term pinning the pod to the node; preferred terms and pod (anti-)affinity stay.
void PinToNode(PodSpec& spec, const std::string& node_name) {
  NodeSelector pin;
  pin.terms.push_back(NodeSelectorTerm{
      .match_expressions = {},
      .match_fields = {SelectorRequirement{std::string(kFieldNodeName), SelectorOperator::kIn, {node_name}}},
  });
  if (!spec.affinity) spec.affinity.emplace();
  if (!spec.affinity->node_affinity) spec.affinity->node_affinity.emplace();
  spec.affinity->node_affinity->required = std::move(pin);
}

std::shared_ptr<Pod> DeploymentPod(const Workload& w, Rng& rng) {
  const std::string hash = ComputePodTemplateHash(w.template_);
  const std::string rs_name = w.metadata.name + "-" + hash;
  const std::string base = rs_name + "-";
  const std::string ns = w.metadata.namespace_.empty() ? std::string(kNamespaceDefault) : w.metadata.namespace_;
  auto pod =
      PodFromTemplate(w, GenerateName(base, rng), base, "ReplicaSet", rs_name, GenerateUID("ReplicaSet", ns, rs_name));
  pod->metadata.labels.Set(std::string(kLabelPodTemplateHash), hash);
  return pod;
}

// A ReplicaSet's or ReplicationController's pod.
std::shared_ptr<Pod> ReplicaSetPod(const Workload& w, Rng& rng) {
  const std::string base = w.metadata.name + "-";
  return PodFromTemplate(w, GenerateName(base, rng), base, w.kind, w.metadata.name, WorkloadUID(w));
}

std::shared_ptr<Pod> StatefulSetPod(const Workload& w, int64_t ordinal) {
  const std::string name = w.metadata.name + "-" + std::to_string(ordinal);
  auto pod = PodFromTemplate(w, name, "", "StatefulSet", w.metadata.name, WorkloadUID(w));
  pod->metadata.labels.Set(std::string(kLabelStatefulSetPodName), name);
  pod->metadata.labels.Set(std::string(kLabelPodIndex), std::to_string(ordinal));
  pod->metadata.labels.Set(std::string(kLabelControllerRevisionHash),
                           w.metadata.name + "-" + ComputePodTemplateHash(w.template_));
  return pod;
}

// index: the completion index of an Indexed Job's pod, else unused.
std::shared_ptr<Pod> JobPod(const Workload& w, Rng& rng, int64_t index) {
  const bool indexed = w.completion_mode == CompletionMode::kIndexed;
  std::string base = w.metadata.name + "-";
  if (indexed) {
    // Upstream's podGenerateNameWithIndex: the job name is cut so that "-<index>-" survives the
    // generateName limit.
    const std::string appendix = "-" + std::to_string(index) + "-";
    base = w.metadata.name.substr(
               0, kMaxGeneratedNameBaseLength - std::min(appendix.size(), kMaxGeneratedNameBaseLength)) +
           appendix;
  }
  const std::string uid = WorkloadUID(w);
  auto pod = PodFromTemplate(w, GenerateName(base, rng), base, "Job", w.metadata.name, uid);
  pod->metadata.labels.Set(std::string(kLabelJobName), w.metadata.name);
  pod->metadata.labels.Set(std::string(kLabelBatchJobName), w.metadata.name);
  pod->metadata.labels.Set(std::string(kLabelControllerUID), uid);
  pod->metadata.labels.Set(std::string(kLabelBatchControllerUID), uid);
  if (indexed) {
    pod->metadata.labels.Set(std::string(kLabelJobCompletionIndex), std::to_string(index));
    pod->metadata.annotations.Set(std::string(kLabelJobCompletionIndex), std::to_string(index));
  }
  return pod;
}

std::shared_ptr<Pod> DaemonSetPod(const Workload& w, Rng& rng, const std::string& node_name) {
  const std::string base = w.metadata.name + "-";
  auto pod = PodFromTemplate(w, GenerateName(base, rng), base, "DaemonSet", w.metadata.name, WorkloadUID(w));
  pod->metadata.labels.Set(std::string(kLabelControllerRevisionHash),
                           w.metadata.name + "-" + ComputePodTemplateHash(w.template_));
  AddDaemonSetTolerations(pod->spec);
  if (!node_name.empty()) PinToNode(pod->spec, node_name);
  return pod;
}

std::optional<int64_t> ParseIndex(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// A StatefulSet pod's ordinal: its pod-index label, else the number after its name's last '-'.
std::optional<int64_t> FindOrdinal(const Pod& pod) {
  if (const std::string* index = pod.metadata.labels.Find(kLabelPodIndex)) {
    if (auto v = ParseIndex(*index)) return *v;
  }
  const auto dash = pod.metadata.name.rfind('-');
  if (dash != std::string::npos) return ParseIndex(std::string_view(pod.metadata.name).substr(dash + 1));
  return std::nullopt;
}

int64_t OrdinalOf(const Pod& pod) { return FindOrdinal(pod).value_or(0); }

// An Indexed Job pod's completion index (annotation, else label), as the Job controller reads it.
std::optional<int64_t> CompletionIndexOf(const Pod& pod) {
  for (const Labels* map : {&pod.metadata.annotations, &pod.metadata.labels}) {
    if (const std::string* index = map->Find(kLabelJobCompletionIndex)) {
      if (auto v = ParseIndex(*index)) return v;
    }
  }
  return std::nullopt;
}

// Pods a controller counts as running or about to: not finished and not being deleted
// (upstream's controller.FilterActivePods).
bool IsActive(const Pod& pod) {
  return pod.status.phase != PodPhase::kSucceeded && pod.status.phase != PodPhase::kFailed &&
         !pod.metadata.deletion_timestamp_ns;
}

// node_name: a DaemonSet pod's node; index: an Indexed Job pod's completion index.
std::shared_ptr<Pod> NewPod(const Workload& w, Rng& rng, const Pod* replaced, const std::string& node_name,
                            int64_t index = 0) {
  std::shared_ptr<Pod> pod;
  if (w.kind == "Deployment") {
    pod = DeploymentPod(w, rng);
  } else if (w.kind == "ReplicaSet" || w.kind == "ReplicationController") {
    pod = ReplicaSetPod(w, rng);
  } else if (w.kind == "StatefulSet") {
    pod = StatefulSetPod(w, replaced != nullptr ? OrdinalOf(*replaced) : 0);
  } else if (w.kind == "Job") {
    pod = JobPod(w, rng, replaced != nullptr ? CompletionIndexOf(*replaced).value_or(0) : index);
  } else if (w.kind == "DaemonSet") {
    pod = DaemonSetPod(w, rng, replaced != nullptr ? DaemonPodTargetNode(*replaced) : node_name);
  } else {
    return nullptr;
  }
  ApplyMatchLabelKeys(*pod);
  return pod;
}

void MergeLabelKeys(std::optional<LabelSelector>& selector, const std::vector<std::string>& keys, SelectorOperator op,
                    const Labels& pod_labels) {
  if (!selector) return;
  for (const std::string& key : keys) {
    const std::string* value = pod_labels.Find(key);
    if (value == nullptr) continue;
    SelectorRequirement req{key, op, {*value}};
    // Applying twice (a replacement pod built from an already merged one) must not stack copies.
    auto& exprs = selector->match_expressions;
    if (std::find(exprs.begin(), exprs.end(), req) == exprs.end()) exprs.push_back(std::move(req));
  }
}

}  // namespace

std::string StatefulSetClaimName(std::string_view template_name, std::string_view set, int64_t ordinal) {
  return std::string(template_name) + "-" + std::string(set) + "-" + std::to_string(ordinal);
}

void UseStatefulSetClaims(Pod& pod, const json::Value& statefulset) {
  const json::Value* spec = json::Find(statefulset, "spec");
  const json::Value* templates = spec != nullptr ? json::Find(*spec, "volumeClaimTemplates") : nullptr;
  if (templates == nullptr || !templates->IsArray()) return;
  const std::string* index = pod.metadata.labels.Find(kLabelPodIndex);
  int64_t ordinal = 0;
  if (index == nullptr || std::from_chars(index->data(), index->data() + index->size(), ordinal).ec != std::errc()) {
    return;
  }
  const std::string* set = nullptr;
  for (const OwnerReference& ref : pod.metadata.owner_references) {
    if (ref.controller && ref.kind == "StatefulSet") set = &ref.name;
  }
  if (set == nullptr) return;
  for (const json::Value& t : templates->GetArray()) {
    const json::Value* meta = json::Find(t, "metadata");
    const std::string_view name = meta != nullptr ? json::GetString(*meta, "name") : std::string_view();
    if (name.empty()) continue;
    Volume v;
    v.name = std::string(name);
    v.claim_name = StatefulSetClaimName(name, *set, ordinal);
    auto same = std::find_if(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                             [&](const Volume& existing) { return existing.name == name; });
    if (same != pod.spec.volumes.end()) {
      *same = std::move(v);
    } else {
      pod.spec.volumes.push_back(std::move(v));
    }
  }
}

std::string RandomString(Rng& rng, size_t n) {
  std::string out;
  out.reserve(n);
  // rng() % 27 rather than a std distribution: distributions are implementation-defined, and
  // names must not change with the standard library. The bias (2^64 mod 27) is negligible.
  for (size_t i = 0; i < n; ++i) out += kNameSuffixAlphabet[rng() % kNameSuffixAlphabet.size()];
  return out;
}

std::string GenerateName(std::string_view base, Rng& rng) {
  if (base.size() > kMaxGeneratedNameBaseLength) base = base.substr(0, kMaxGeneratedNameBaseLength);
  return std::string(base) + RandomString(rng, kNameSuffixLength);
}

std::string GenerateUID(std::string_view kind, std::string_view namespace_, std::string_view name) {
  // Two independent FNV-1a streams give 128 bits, printed in the 8-4-4-4-12 UUID layout.
  Hasher a;
  Hasher b(kFnvOffset ^ 0x9e3779b97f4a7c15ull);
  for (Hasher* h : {&a, &b}) {
    h->Str(kind);
    h->Str(namespace_);
    h->Str(name);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint64_t v : {a.hash(), b.hash()}) {
    for (int i = 15; i >= 0; --i) hex += kHex[(v >> (4 * i)) & 0xf];
  }
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20, 12);
}

std::string ComputePodTemplateHash(const PodTemplateSpec& pod_template) {
  Hasher h;
  h.Tag("labels");
  h.Value(pod_template.metadata.labels);
  h.Tag("annotations");
  h.Value(pod_template.metadata.annotations);
  h.Value(pod_template.spec);
  return EncodeSafe(h.hash(), kPodTemplateHashLength);
}

std::string ReplicaSetNameForDeployment(const Workload& deployment) {
  return deployment.metadata.name + "-" + ComputePodTemplateHash(deployment.template_);
}

std::vector<Toleration> DaemonSetTolerations(bool host_network) {
  auto exists = [](std::string_view key, TaintEffect effect) {
    return Toleration{.key = std::string(key),
                      .op = TolerationOperator::kExists,
                      .value = "",
                      .effect = effect,
                      .toleration_seconds = std::nullopt};
  };
  std::vector<Toleration> out = {
      exists(kTaintNodeNotReady, TaintEffect::kNoExecute),
      exists(kTaintNodeUnreachable, TaintEffect::kNoExecute),
      exists(kTaintNodeDiskPressure, TaintEffect::kNoSchedule),
      exists(kTaintNodeMemoryPressure, TaintEffect::kNoSchedule),
      exists(kTaintNodePIDPressure, TaintEffect::kNoSchedule),
      exists(kTaintNodeUnschedulable, TaintEffect::kNoSchedule),
  };
  if (host_network) out.push_back(exists(kTaintNodeNetworkUnavailable, TaintEffect::kNoSchedule));
  return out;
}

DaemonPodPlacement DaemonPodPlacementOf(const PodSpec& spec) {
  DaemonPodPlacement p;
  p.node_name = spec.node_name;
  p.node_selector = spec.node_selector;
  if (spec.affinity && spec.affinity->node_affinity) p.required = spec.affinity->node_affinity->required;
  p.tolerations = spec.tolerations;
  for (Toleration& t : DaemonSetTolerations(spec.host_network)) p.tolerations.push_back(std::move(t));
  return p;
}

DaemonPodVerdict EvaluateDaemonPod(const DaemonPodPlacement& p, std::string_view node_name,
                                   const std::vector<Labels::Entry>& node_labels, std::span<const Taint> node_taints) {
  if (!p.node_name.empty() && p.node_name != node_name) return {};
  for (const auto& [key, value] : p.node_selector) {
    const std::string* have = FindLabel(node_labels, key);
    if (have == nullptr || *have != value) return {};
  }
  if (p.required && !p.required->Matches(node_name, node_labels)) return {};
  bool untolerated_no_schedule = false, untolerated_no_execute = false;
  for (const Taint& taint : node_taints) {
    if (!DoNotScheduleTaintsFilter(taint) || TolerationsTolerateTaint(p.tolerations, taint)) continue;
    (taint.effect == TaintEffect::kNoExecute ? untolerated_no_execute : untolerated_no_schedule) = true;
  }
  if (untolerated_no_schedule || untolerated_no_execute) return {false, !untolerated_no_execute};
  return {true, true};
}

bool DaemonSetShouldRunOnNode(const Workload& daemon_set, const Node& node) {
  return EvaluateDaemonPod(DaemonPodPlacementOf(daemon_set.template_.spec), node.metadata.name,
                           node.metadata.labels.entries(), node.spec.taints)
      .should_run;
}

std::string DaemonPodTargetNode(const Pod& pod) {
  const auto& affinity = pod.spec.affinity;
  if (!affinity || !affinity->node_affinity || !affinity->node_affinity->required) return "";
  for (const NodeSelectorTerm& term : affinity->node_affinity->required->terms) {
    for (const SelectorRequirement& r : term.match_fields) {
      if (r.key == kFieldNodeName && r.op == SelectorOperator::kIn && r.values.size() == 1) return r.values.front();
    }
  }
  return "";
}

void ApplyMatchLabelKeys(Pod& pod) {
  const Labels& labels = pod.metadata.labels;
  if (pod.spec.affinity) {
    for (auto* affinity : {&pod.spec.affinity->pod_affinity, &pod.spec.affinity->pod_anti_affinity}) {
      if (!*affinity) continue;
      auto merge = [&](PodAffinityTerm& term) {
        MergeLabelKeys(term.label_selector, term.match_label_keys, SelectorOperator::kIn, labels);
        MergeLabelKeys(term.label_selector, term.mismatch_label_keys, SelectorOperator::kNotIn, labels);
      };
      for (PodAffinityTerm& term : (*affinity)->required) merge(term);
      for (WeightedPodAffinityTerm& weighted : (*affinity)->preferred) merge(weighted.term);
    }
  }
  for (TopologySpreadConstraint& c : pod.spec.topology_spread_constraints) {
    MergeLabelKeys(c.label_selector, c.match_label_keys, SelectorOperator::kIn, labels);
  }
}

std::vector<std::shared_ptr<Pod>> ExpandWorkload(const Workload& workload,
                                                 const std::vector<std::shared_ptr<const Node>>& nodes, Rng& rng,
                                                 const std::vector<const Pod*>& owned) {
  std::vector<std::shared_ptr<Pod>> pods;
  std::unordered_set<std::string> taken;
  for (const Pod* p : owned) taken.insert(p->metadata.name);
  // Random suffixes can collide (27^5 names); the API server would reject the duplicate and the
  // controller retry with a new name, which is what drawing again does.
  auto add_unique = [&](auto make) {
    for (;;) {
      std::shared_ptr<Pod> pod = make();
      if (taken.insert(pod->metadata.name).second) {
        pods.push_back(std::move(pod));
        return;
      }
    }
  };
  int64_t active = 0, succeeded = 0;
  for (const Pod* p : owned) {
    if (IsActive(*p)) ++active;
    if (p->status.phase == PodPhase::kSucceeded) ++succeeded;
  }
  if (workload.kind == "DaemonSet") {
    std::unordered_set<std::string> covered;
    for (const Pod* p : owned) {
      if (IsActive(*p)) covered.insert(p->spec.node_name.empty() ? DaemonPodTargetNode(*p) : p->spec.node_name);
    }
    const DaemonPodPlacement placement = DaemonPodPlacementOf(workload.template_.spec);
    for (const auto& node : nodes) {
      if (node == nullptr || covered.contains(node->metadata.name) ||
          !EvaluateDaemonPod(placement, node->metadata.name, node->metadata.labels.entries(), node->spec.taints)
               .should_run) {
        continue;
      }
      add_unique([&] { return NewPod(workload, rng, nullptr, node->metadata.name); });
    }
    return pods;
  }
  const int64_t replicas = std::max<int32_t>(workload.replicas, 0);
  if (workload.kind == "StatefulSet") {
    std::unordered_set<int64_t> existing;
    for (const Pod* p : owned) {
      if (auto ordinal = FindOrdinal(*p); ordinal && !p->metadata.deletion_timestamp_ns) existing.insert(*ordinal);
    }
    for (int64_t i = 0; i < replicas; ++i) {
      if (existing.contains(i)) continue;
      auto pod = StatefulSetPod(workload, i);
      ApplyMatchLabelKeys(*pod);
      pods.push_back(std::move(pod));
    }
    return pods;
  }
  if (workload.kind == "Job") {
    if (workload.suspend) return pods;
    const int64_t completions = std::max<int32_t>(workload.completions, 0);
    if (workload.completion_mode == CompletionMode::kIndexed) {
      // Indexes with an active or succeeded pod are taken; the lowest free ones come next.
      std::unordered_set<int64_t> taken_indexes;
      for (const Pod* p : owned) {
        if (auto index = CompletionIndexOf(*p); index && (IsActive(*p) || p->status.phase == PodPhase::kSucceeded)) {
          taken_indexes.insert(*index);
        }
      }
      int64_t budget = replicas - active;
      for (int64_t index = 0; index < completions && budget > 0; ++index) {
        if (taken_indexes.contains(index)) continue;
        add_unique([&] { return NewPod(workload, rng, nullptr, "", index); });
        --budget;
      }
      return pods;
    }
    const int64_t count = std::min(replicas, completions - succeeded) - active;
    for (int64_t i = 0; i < count; ++i) add_unique([&] { return NewPod(workload, rng, nullptr, ""); });
    return pods;
  }
  if (workload.kind != "Deployment" && workload.kind != "ReplicaSet" && workload.kind != "ReplicationController") {
    return pods;
  }
  const int64_t count = replicas - active;
  if (count > 0) pods.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) add_unique([&] { return NewPod(workload, rng, nullptr, ""); });
  return pods;
}

std::shared_ptr<Pod> NewPodForWorkload(const Workload& workload, Rng& rng, const Pod* replaced) {
  return NewPod(workload, rng, replaced, "");
}

}  // namespace kubesched::api
