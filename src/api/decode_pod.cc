// Pods: spec (containers, affinity, tolerations, spread constraints, ...) and status.

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "api/decode_internal.h"
#include "api/names.h"

namespace kubesched::api::decode {
namespace {

constexpr std::pair<std::string_view, UnsatisfiableConstraintAction> kUnsatisfiableActions[] = {
    {"DoNotSchedule", UnsatisfiableConstraintAction::kDoNotSchedule},
    {"ScheduleAnyway", UnsatisfiableConstraintAction::kScheduleAnyway},
};
constexpr std::pair<std::string_view, NodeInclusionPolicy> kInclusionPolicies[] = {
    {"Honor", NodeInclusionPolicy::kHonor},
    {"Ignore", NodeInclusionPolicy::kIgnore},
};
constexpr std::pair<std::string_view, PodPhase> kPodPhases[] = {
    {"Pending", PodPhase::kPending}, {"Running", PodPhase::kRunning}, {"Succeeded", PodPhase::kSucceeded},
    {"Failed", PodPhase::kFailed},   {"Unknown", PodPhase::kUnknown},
};
constexpr std::pair<std::string_view, std::string_view> kProtocols[] = {
    {"TCP", "TCP"},
    {"UDP", "UDP"},
    {"SCTP", "SCTP"},
};
constexpr std::pair<std::string_view, TolerationOperator> kTolerationOperators[] = {
    {"Equal", TolerationOperator::kEqual},
    {"Exists", TolerationOperator::kExists},
};

// The names read so far, to find a duplicate: compared one by one while there are a few (a pod's
// containers), in a set beyond.
class SeenNames {
 public:
  //! Whether `name` is new (it is seen from now on).
  bool Insert(std::string_view name) {
    if (count_ < kInline) {
      for (size_t i = 0; i < count_; ++i) {
        if (inline_[i] == name) return false;
      }
      inline_[count_++] = name;
      return true;
    }
    if (rest_.empty()) rest_.insert(inline_.begin(), inline_.end());
    return rest_.emplace(name).second;
  }

 private:
  static constexpr size_t kInline = 8;
  std::array<std::string, kInline> inline_;
  size_t count_ = 0;
  std::set<std::string, std::less<>> rest_;
};

// Comparison for validation only: exact to a thousandth, which is what the scheduler reads.
bool Exceeds(const Quantity& a, const Quantity& b) { return a.MilliValue() > b.MilliValue(); }

Container ReadContainer(const MapView& m, bool init, bool host_network) {
  Container c;
  c.name = m.RequiredString("name");
  c.image = m.String("image");
  const MapView resources = m.Map("resources");
  c.resources.limits = ReadResourceList(resources, "limits");
  c.resources.requests = ReadResourceList(resources, "requests");
  // API server defaulting: a resource with a limit and no request requests its limit.
  for (const auto& [name, limit] : c.resources.limits) {
    if (!c.resources.requests.contains(name)) c.resources.requests.emplace(name, limit);
  }
  for (const auto& [name, request] : c.resources.requests) {
    auto limit = c.resources.limits.find(name);
    if (limit != c.resources.limits.end() && Exceeds(request, limit->second)) {
      const MapView requests = resources.Map("requests");
      Fail(requests.At(name), requests.PathOf(name),
           "request " + GoQuote(request.text()) + " must be less than or equal to the limit " +
               GoQuote(limit->second.text()));
    }
  }
  m.ForEachMapInto("ports", c.ports, [&](const MapView& p, size_t) {
    ContainerPort port;
    port.name = p.String("name");
    if (!p.Has("containerPort")) Fail(p.At("containerPort"), p.PathOf("containerPort"), "required field is missing");
    port.container_port = ReadInt32(p.Get("containerPort"), p.PathOf("containerPort"), p.ctx(), 1, 65535);
    port.host_port = p.OptInt32("hostPort", 0, 65535).value_or(0);
    if (auto protocol = p.OptEnum("protocol", kProtocols)) port.protocol = std::string(*protocol);
    port.host_ip = p.String("hostIP");
    if (host_network) {
      // Defaulting for host-network pods: the container port is the host port.
      if (port.host_port == 0) port.host_port = port.container_port;
      if (port.host_port != port.container_port) {
        Fail(p.At("hostPort"), p.PathOf("hostPort"), "must match containerPort when hostNetwork is true");
      }
    }
    c.ports.push_back(std::move(port));
  });
  if (init && m.Has("restartPolicy")) {
    const std::string policy = m.String("restartPolicy");
    if (policy != "Always") {
      Fail(m.At("restartPolicy"), m.PathOf("restartPolicy"),
           "unsupported value " + GoQuote(policy) + "; init containers only support \"Always\" (a sidecar)");
    }
    c.restart_policy = policy;
  }
  return c;
}

Toleration ReadToleration(const MapView& m) {
  Toleration t;
  t.key = m.String("key");
  if (auto op = m.OptEnum("operator", kTolerationOperators)) t.op = *op;
  t.value = m.String("value");
  t.effect = m.OptEnum("effect", kTaintEffects);
  t.toleration_seconds = m.OptInt("tolerationSeconds");
  if (t.key.empty() && t.op != TolerationOperator::kExists) {
    Fail(m.At("operator"), m.PathOf("operator"), "must be Exists when key is empty (which tolerates every taint)");
  }
  if (t.op == TolerationOperator::kExists && !t.value.empty()) {
    Fail(m.At("value"), m.PathOf("value"), "must be empty when operator is Exists");
  }
  if (t.toleration_seconds && t.effect != TaintEffect::kNoExecute) {
    Fail(m.At("effect"), m.PathOf("effect"), "must be NoExecute when tolerationSeconds is set");
  }
  return t;
}

void CheckLabelKeys(const MapView& m, const std::optional<LabelSelector>& selector,
                    const std::vector<std::string>& match_keys, const std::vector<std::string>& mismatch_keys) {
  auto in_selector = [&](const std::string& key) {
    if (!selector) return false;
    if (selector->match_labels.Has(key)) return true;
    return std::any_of(selector->match_expressions.begin(), selector->match_expressions.end(),
                       [&](const SelectorRequirement& r) { return r.key == key; });
  };
  for (const auto* keys : {&match_keys, &mismatch_keys}) {
    const std::string_view field = keys == &match_keys ? "matchLabelKeys" : "mismatchLabelKeys";
    if (!keys->empty() && !selector) {
      Fail(m.At(field), m.PathOf(field), "must not be set when labelSelector is not set");
    }
    const Path list_path = m.PathOf(field);
    for (size_t i = 0; i < keys->size(); ++i) {
      const std::string& key = (*keys)[i];
      const Path path = list_path.Index(i);
      if (key.empty()) Fail(m.At(field), path, "label keys must not be empty");
      if (in_selector(key))
        Fail(m.At(field), path, GoQuote(key) + " exists in both " + std::string(field) + " and labelSelector");
      if (keys == &match_keys && std::find(mismatch_keys.begin(), mismatch_keys.end(), key) != mismatch_keys.end()) {
        Fail(m.At(field), path, GoQuote(key) + " exists in both matchLabelKeys and mismatchLabelKeys");
      }
    }
  }
}

PodAffinityTerm ReadPodAffinityTerm(const MapView& m) {
  PodAffinityTerm t;
  t.label_selector = ReadOptLabelSelector(m, "labelSelector");
  t.namespaces = m.StringList("namespaces");
  t.namespace_selector = ReadOptLabelSelector(m, "namespaceSelector");
  t.topology_key = m.RequiredString("topologyKey");
  t.match_label_keys = m.StringList("matchLabelKeys");
  t.mismatch_label_keys = m.StringList("mismatchLabelKeys");
  CheckLabelKeys(m, t.label_selector, t.match_label_keys, t.mismatch_label_keys);
  return t;
}

int32_t ReadWeight(const MapView& m) {
  if (!m.Has("weight")) Fail(m.At("weight"), m.PathOf("weight"), "required field is missing");
  return ReadInt32(m.Get("weight"), m.PathOf("weight"), m.ctx(), 1, 100);
}

PodAffinity ReadPodAffinity(const MapView& m) {
  PodAffinity a;
  m.ForEachMap("requiredDuringSchedulingIgnoredDuringExecution",
               [&](const MapView& item, size_t) { a.required.push_back(ReadPodAffinityTerm(item)); });
  m.ForEachMap("preferredDuringSchedulingIgnoredDuringExecution", [&](const MapView& w, size_t) {
    WeightedPodAffinityTerm weighted;
    weighted.weight = ReadWeight(w);
    if (!w.Has("podAffinityTerm")) {
      Fail(w.At("podAffinityTerm"), w.PathOf("podAffinityTerm"), "required field is missing");
    }
    weighted.term = ReadPodAffinityTerm(w.Map("podAffinityTerm"));
    a.preferred.push_back(std::move(weighted));
  });
  return a;
}

Affinity ReadAffinity(const MapView& m) {
  Affinity a;
  if (auto na = m.OptMap("nodeAffinity")) {
    NodeAffinity node_affinity;
    if (auto req = na->OptMap("requiredDuringSchedulingIgnoredDuringExecution")) {
      node_affinity.required = ReadNodeSelector(*req);
    }
    na->ForEachMap("preferredDuringSchedulingIgnoredDuringExecution", [&](const MapView& p, size_t) {
      PreferredSchedulingTerm term;
      term.weight = ReadWeight(p);
      if (!p.Has("preference")) Fail(p.At("preference"), p.PathOf("preference"), "required field is missing");
      term.preference = ReadNodeSelectorTerm(p.Map("preference"));
      node_affinity.preferred.push_back(std::move(term));
    });
    a.node_affinity = std::move(node_affinity);
  }
  if (auto pa = m.OptMap("podAffinity")) a.pod_affinity = ReadPodAffinity(*pa);
  if (auto paa = m.OptMap("podAntiAffinity")) a.pod_anti_affinity = ReadPodAffinity(*paa);
  return a;
}

TopologySpreadConstraint ReadSpreadConstraint(const MapView& m) {
  TopologySpreadConstraint c;
  if (!m.Has("maxSkew")) Fail(m.At("maxSkew"), m.PathOf("maxSkew"), "required field is missing");
  c.max_skew = ReadInt32(m.Get("maxSkew"), m.PathOf("maxSkew"), m.ctx(), 1);
  c.topology_key = m.RequiredString("topologyKey");
  if (!m.Has("whenUnsatisfiable")) {
    Fail(m.At("whenUnsatisfiable"), m.PathOf("whenUnsatisfiable"), "required field is missing");
  }
  c.when_unsatisfiable = m.Enum_("whenUnsatisfiable", kUnsatisfiableActions);
  c.label_selector = ReadOptLabelSelector(m, "labelSelector");
  c.min_domains = m.OptInt32("minDomains", 1);
  if (c.min_domains && c.when_unsatisfiable != UnsatisfiableConstraintAction::kDoNotSchedule) {
    Fail(m.At("minDomains"), m.PathOf("minDomains"), "can only be set when whenUnsatisfiable is DoNotSchedule");
  }
  c.node_affinity_policy = m.OptEnum("nodeAffinityPolicy", kInclusionPolicies);
  c.node_taints_policy = m.OptEnum("nodeTaintsPolicy", kInclusionPolicies);
  c.match_label_keys = m.StringList("matchLabelKeys");
  CheckLabelKeys(m, c.label_selector, c.match_label_keys, {});
  return c;
}

}  // namespace

PodSpec ReadPodSpec(const MapView& m) {
  PodSpec s;
  ReadPodSpec(m, s);
  return s;
}

void ReadPodSpec(const MapView& m, PodSpec& s) {
  s.node_name = m.String("nodeName");
  s.node_selector = m.LabelMap("nodeSelector");
  s.host_network = m.Bool("hostNetwork");
  if (auto affinity = m.OptMap("affinity")) s.affinity = ReadAffinity(*affinity);
  m.ForEachMapInto("tolerations", s.tolerations,
                   [&](const MapView& item, size_t) { s.tolerations.push_back(ReadToleration(item)); });
  if (std::string name = m.String("schedulerName"); !name.empty()) s.scheduler_name = std::move(name);
  s.priority = m.OptInt32("priority");
  if (auto grace = m.OptInt("terminationGracePeriodSeconds")) {
    if (*grace < 0) {
      Fail(m.At("terminationGracePeriodSeconds"), m.PathOf("terminationGracePeriodSeconds"),
           "must be greater than or equal to 0, got " + std::to_string(*grace));
    }
    s.termination_grace_period_seconds = *grace;
  }
  s.priority_class_name = m.String("priorityClassName");
  s.preemption_policy = m.OptEnum("preemptionPolicy", kPreemptionPolicies);
  m.ForEachMap("schedulingGates", [&](const MapView& g, size_t) {
    std::string name = g.RequiredString("name");
    if (std::find(s.scheduling_gates.begin(), s.scheduling_gates.end(), name) != s.scheduling_gates.end()) {
      Fail(g.At("name"), g.PathOf("name"), "duplicate scheduling gate " + GoQuote(name));
    }
    s.scheduling_gates.push_back(std::move(name));
  });
  if (const std::optional<MapView> group = m.OptMap("schedulingGroup")) {
    // PodSchedulingGroup: exactly one way to name the group (podGroupName, today the only one).
    s.pod_group = group->RequiredString("podGroupName");
    if (const std::vector<std::string> errs = IsDNS1123Subdomain(s.pod_group); !errs.empty()) {
      Fail(group->At("podGroupName"), group->PathOf("podGroupName"), Join(errs));
    }
  }
  if (!s.scheduling_gates.empty() && !s.node_name.empty()) {
    Fail(m.At("nodeName"), m.PathOf("nodeName"), "cannot be set while the pod has schedulingGates");
  }

  SeenNames container_names;
  auto read_containers = [&](std::string_view key, bool init, std::vector<Container>& out) {
    m.ForEachMapInto(key, out, [&](const MapView& cm, size_t) {
      Container c = ReadContainer(cm, init, s.host_network);
      if (!container_names.Insert(c.name)) {
        Fail(cm.At("name"), cm.PathOf("name"), "duplicate container name " + GoQuote(c.name));
      }
      out.push_back(std::move(c));
    });
  };
  read_containers("initContainers", true, s.init_containers);
  read_containers("containers", false, s.containers);
  if (s.containers.empty()) {
    Fail(m.At("containers"), m.PathOf("containers"), "must have at least one container", kFieldValueRequired);
  }
  s.overhead = ReadResourceList(m, "overhead");
  if (auto r = m.OptMap("resources")) {
    ResourceRequirements pod_level;
    pod_level.requests = ReadResourceList(*r, "requests");
    pod_level.limits = ReadResourceList(*r, "limits");
    for (const auto& [name, q] : pod_level.requests) {
      if (name != kResourceCPU && name != kResourceMemory && !name.starts_with(kHugePagesPrefix)) {
        Fail(r->At("requests"), r->PathOf("requests").Render() + "[" + name + "]",
             "unsupported pod-level resource " + GoQuote(name) + " (supported: cpu, memory, hugepages-<size>)");
      }
      auto limit = pod_level.limits.find(name);
      if (limit != pod_level.limits.end() && Exceeds(q, limit->second)) {
        Fail(r->At("requests"), r->PathOf("requests").Render() + "[" + name + "]",
             "must be less than or equal to limit");
      }
    }
    s.resources = std::move(pod_level);
  }

  ReadVolumes(m, s.volumes);
  ReadPodResourceClaims(m, s);

  std::set<std::pair<std::string, UnsatisfiableConstraintAction>> spread_keys;
  m.ForEachMap("topologySpreadConstraints", [&](const MapView& cm, size_t) {
    TopologySpreadConstraint c = ReadSpreadConstraint(cm);
    if (!spread_keys.emplace(c.topology_key, c.when_unsatisfiable).second) {
      Fail(cm.node(), cm.path(),
           "duplicate constraint for topologyKey " + GoQuote(c.topology_key) + " and whenUnsatisfiable");
    }
    s.topology_spread_constraints.push_back(std::move(c));
  });
}

PodStatus ReadPodStatus(const MapView& m) {
  PodStatus st;
  if (auto phase = m.OptEnum("phase", kPodPhases)) st.phase = *phase;
  st.nominated_node_name = m.String("nominatedNodeName");
  st.start_time_ns = ReadTime(m, "startTime");
  ReadPodResourceClaimStatuses(m, st);
  m.ForEachMap("conditions", [&](const MapView& c, size_t) {
    st.conditions.push_back(PodCondition{
        .type = c.RequiredString("type"),
        .status = c.String("status"),
        .reason = c.String("reason"),
        .message = c.String("message"),
    });
  });
  return st;
}

}  // namespace kubesched::api::decode
