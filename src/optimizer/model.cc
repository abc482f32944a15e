#include "optimizer/model.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "api/names.h"

namespace kubesched::optimizer {
namespace {

constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

std::vector<HostPort> HostPortsOf(const api::Pod& pod) {
  std::vector<HostPort> out;
  auto add = [&](const std::vector<api::Container>& containers) {
    for (const auto& c : containers) {
      for (const auto& p : c.ports) {
        if (p.host_port <= 0) continue;
        out.push_back(
            {p.host_ip.empty() ? "0.0.0.0" : p.host_ip, p.protocol.empty() ? "TCP" : p.protocol, p.host_port});
      }
    }
  };
  add(pod.spec.init_containers);
  add(pod.spec.containers);
  return out;
}

bool PortsConflict(const std::vector<HostPort>& a, const std::vector<HostPort>& b) {
  for (const auto& x : a) {
    for (const auto& y : b) {
      if (x.port != y.port || x.protocol != y.protocol) continue;
      if (x.ip == y.ip || x.ip == "0.0.0.0" || y.ip == "0.0.0.0") return true;
    }
  }
  return false;
}

bool OwnedByDaemonSet(const api::Pod& pod) {
  for (const auto& o : pod.metadata.owner_references) {
    if (o.kind == "DaemonSet") return true;
  }
  return false;
}

// Whether a pod's node constraints name individual nodes (so nodes that differ only in their
// hostname label or name are not interchangeable for it).
bool NamesNodes(const api::Pod& pod) {
  if (!pod.spec.node_name.empty()) return true;
  if (pod.spec.node_selector.Has(kHostnameLabel)) return true;
  if (pod.spec.affinity && pod.spec.affinity->node_affinity) {
    const auto& na = *pod.spec.affinity->node_affinity;
    auto names = [](const api::NodeSelectorTerm& t) {
      if (!t.match_fields.empty()) return true;
      for (const auto& r : t.match_expressions) {
        if (r.key == kHostnameLabel) return true;
      }
      return false;
    };
    if (na.required) {
      for (const auto& t : na.required->terms) {
        if (names(t)) return true;
      }
    }
    for (const auto& p : na.preferred) {
      if (names(p.preference)) return true;
    }
  }
  return false;
}

size_t SpecHash(const api::Pod& pod, const framework::PodInfo& pi) {
  size_t h = std::hash<std::string>{}(pod.metadata.namespace_);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const auto& [k, v] : pod.metadata.labels) {
    mix(std::hash<std::string>{}(k));
    mix(std::hash<std::string>{}(v));
  }
  mix(std::hash<int64_t>{}(pi.requests.milli_cpu));
  mix(std::hash<int64_t>{}(pi.requests.memory));
  mix(std::hash<int32_t>{}(pod.Priority()));
  mix(std::hash<std::string>{}(pod.spec.node_name));
  return h;
}

// Adds requirement key In [value] for every matchLabelKeys key the pod has (as the API server
// merges them).
api::LabelSelector MergeMatchLabelKeys(api::LabelSelector selector, const std::vector<std::string>& keys,
                                       const api::Labels& labels) {
  for (const auto& k : keys) {
    if (const std::string* v = labels.Find(k)) {
      selector.match_expressions.push_back({k, api::SelectorOperator::kIn, {*v}});
    }
  }
  return selector;
}

std::string DescribeSelector(const api::LabelSelector& s) {
  std::string out;
  for (const auto& [k, v] : s.match_labels) {
    if (!out.empty()) out += ",";
    out += k + "=" + v;
  }
  for (const auto& r : s.match_expressions) {
    if (!out.empty()) out += ",";
    out += r.key + " " + std::string(api::ToString(r.op));
    if (!r.values.empty()) out += " [" + fmt::format("{}", fmt::join(r.values, ",")) + "]";
  }
  return out.empty() ? "everything" : out;
}

}  // namespace

bool SameSchedulingSpec(const api::Pod& a, const framework::PodInfo& ai, const api::Pod& b,
                        const framework::PodInfo& bi) {
  if (a.metadata.namespace_ != b.metadata.namespace_ || !(a.metadata.labels == b.metadata.labels)) return false;
  if (!(ai.requests == bi.requests) || a.Priority() != b.Priority()) return false;
  const auto& x = a.spec;
  const auto& y = b.spec;
  if (x.node_name != y.node_name || !(x.node_selector == y.node_selector) || !(x.affinity == y.affinity) ||
      !(x.tolerations == y.tolerations) || !(x.topology_spread_constraints == y.topology_spread_constraints) ||
      x.scheduler_name != y.scheduler_name || x.host_network != y.host_network) {
    return false;
  }
  auto ports = [](const api::Pod& p) {
    std::vector<api::ContainerPort> out;
    for (const auto& c : p.spec.init_containers) out.insert(out.end(), c.ports.begin(), c.ports.end());
    for (const auto& c : p.spec.containers) out.insert(out.end(), c.ports.begin(), c.ports.end());
    return out;
  };
  return ports(a) == ports(b);
}

namespace {

// What BuildModel's steps share: the input, the model built so far, and whether a pod of the
// batch names nodes (then a node's name and hostname label belong to its class).
struct ModelBuilder {
  explicit ModelBuilder(const PlacementInput& in) : input(in) {}

  const PlacementInput& input;
  BatchModel m;
  bool names_nodes = false;

  int32_t num_groups() const { return static_cast<int32_t>(m.groups.size()); }
  int32_t num_nodes() const { return static_cast<int32_t>(input.nodes.size()); }

  // A resource's amount in model dimension `dim`.
  int64_t Amount(const framework::Resource& r, size_t dim) const {
    const std::string& name = m.resources[dim];
    if (name == "cpu") return r.milli_cpu;
    if (name == "memory") return r.memory;
    if (name == "pods") return r.allowed_pod_number;
    if (name == "ephemeral-storage") return r.ephemeral_storage;
    return r.Scalar(name);
  }

  const api::Labels* NamespaceLabels(std::string_view ns) const {
    return input.namespace_labels ? input.namespace_labels(ns) : nullptr;
  }

  // The index of the topology key `name`, added (with its domains) on first use.
  int32_t KeyIndex(const std::string& name) {
    for (size_t i = 0; i < m.keys.size(); ++i) {
      if (m.keys[i].name == name) return static_cast<int32_t>(i);
    }
    const int32_t N = num_nodes();
    TopologyKey k;
    k.name = name;
    k.domain_of_node.assign(N, -1);
    std::map<std::string, int32_t, std::less<>> values;
    for (int32_t n = 0; n < N; ++n) {
      if (const std::string* v = input.nodes[n]->node()->metadata.labels.Find(name)) {
        auto [it, ins] = values.emplace(*v, static_cast<int32_t>(values.size()));
        k.domain_of_node[n] = it->second;
      }
    }
    k.num_domains = static_cast<int32_t>(values.size());
    int32_t labelled = 0;
    for (int32_t n = 0; n < N; ++n) labelled += k.domain_of_node[n] >= 0;
    k.per_node = labelled == k.num_domains;
    m.keys.push_back(std::move(k));
    return static_cast<int32_t>(m.keys.size() - 1);
  }
};

// --- Groups ---------------------------------------------------------------------------------
void GroupPods(ModelBuilder& b) {
  BatchModel& m = b.m;
  std::unordered_map<size_t, std::vector<int32_t>> by_hash;
  for (const auto& pi : b.input.pods) {
    const api::Pod& pod = pi->pod();
    b.names_nodes = b.names_nodes || NamesNodes(pod);
    auto& candidates = by_hash[SpecHash(pod, *pi)];
    int32_t found = -1;
    for (int32_t g : candidates) {
      const auto& rep = *m.groups[g].pods.front();
      if (SameSchedulingSpec(rep.pod(), rep, pod, *pi)) {
        found = g;
        break;
      }
    }
    if (found < 0) {
      found = static_cast<int32_t>(m.groups.size());
      candidates.push_back(found);
      Group g;
      g.name = api::WorkloadName(pod);
      g.priority = pod.Priority();
      g.ports = HostPortsOf(pod);
      m.groups.push_back(std::move(g));
    }
    m.groups[found].pods.push_back(pi);
    m.pod_group.push_back(found);
  }
}

// --- Resource dimensions --------------------------------------------------------------------
void ChooseResources(ModelBuilder& b) {
  BatchModel& m = b.m;
  m.resources = {"cpu", "memory", "pods"};
  bool storage = false;
  std::vector<std::string> scalars;
  for (const auto& g : m.groups) {
    const auto& r = g.pods.front()->requests;
    storage = storage || r.ephemeral_storage > 0;
    for (const auto& [name, v] : r.scalar) {
      if (v > 0 && std::find(scalars.begin(), scalars.end(), name) == scalars.end()) scalars.push_back(name);
    }
  }
  std::sort(scalars.begin(), scalars.end());
  if (storage) m.resources.push_back("ephemeral-storage");
  for (auto& s : scalars) m.resources.push_back(s);
  const size_t R = m.resources.size();
  for (auto& g : m.groups) {
    framework::Resource req = g.pods.front()->requests;
    req.allowed_pod_number = 1;
    g.demand.resize(R);
    for (size_t d = 0; d < R; ++d) g.demand[d] = b.Amount(req, d);
  }
}

// --- Accelerators: extended resources, with the cpu and memory their pods need per unit -----
void FindAccelerators(ModelBuilder& b) {
  BatchModel& m = b.m;
  const size_t R = m.resources.size();
  for (size_t d = 3; d < R; ++d) {
    if (m.resources[d] == "ephemeral-storage") continue;
    double amount_total = 0, pods = 0, cpu = 0, memory = 0;
    for (const auto& g : m.groups) {
      if (g.demand[d] <= 0) continue;
      amount_total += static_cast<double>(g.demand[d]) * g.count();
      cpu += static_cast<double>(g.demand[0]) * g.count();
      memory += static_cast<double>(g.demand[1]) * g.count();
      pods += g.count();
    }
    if (amount_total <= 0) continue;
    Accelerator a;
    a.dim = static_cast<int32_t>(d);
    if (cpu > 0) a.base.emplace_back(0, cpu / amount_total);
    if (memory > 0) a.base.emplace_back(1, memory / amount_total);
    a.unit = amount_total / pods;
    if (!a.base.empty()) m.accelerators.push_back(std::move(a));
  }
}

// --- Nodes and classes ----------------------------------------------------------------------

void AppendNumber(std::string& to, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  to.append(buf, r.ptr);
}

// The class key, written into `key`: everything a Filter plugin or a constraint may look at,
// except the node's name and hostname label when no pod of the batch names nodes. Built for every
// node of every batch (a replay's one-pod batches build it 1,500 times each): appended in place,
// `pods` a scratch vector kept between calls.
void NodeClassKey(const framework::NodeInfo& ni, const ModelNode& mn, bool names_nodes, std::string& key,
                  std::vector<std::string>& pods) {
  key.clear();
  const api::Node* node = ni.node();
  if (names_nodes) key += ni.name();
  key += '\x01';
  for (const auto& [k, v] : node->metadata.labels) {
    if (!names_nodes && k == kHostnameLabel) continue;
    key += k;
    key += '=';
    key += v;
    key += '\x02';
  }
  key += '\x01';
  for (const auto& t : node->spec.taints) {
    key += t.key;
    key += '=';
    key += t.value;
    key += ':';
    key += api::ToString(t.effect);
    key += '\x02';
  }
  key += node->spec.unschedulable ? "U" : "S";
  for (int64_t f : mn.free) {
    key += '|';
    AppendNumber(key, f);
  }
  for (int64_t v : {ni.allocatable().milli_cpu, ni.allocatable().memory, int64_t{mn.in_use ? 1 : 0}}) {
    key += '|';
    AppendNumber(key, v);
  }
  size_t used = 0;
  for (const auto& p : ni.pods()) {
    if (used == pods.size()) pods.emplace_back();
    std::string& s = pods[used++];
    s.clear();
    AppendNumber(s, static_cast<int64_t>(p->label_set_id));
    s += p->pod().metadata.deletion_timestamp_ns.has_value() ? "/1" : "/0";
    for (const auto& t : p->required_anti_affinity_terms) {
      s += ",a";
      AppendNumber(s, static_cast<int64_t>(t.id));
    }
    for (const auto& hp : HostPortsOf(p->pod())) s += fmt::format(",p{}/{}/{}", hp.ip, hp.protocol, hp.port);
  }
  std::sort(pods.begin(), pods.begin() + static_cast<std::ptrdiff_t>(used));
  for (size_t i = 0; i < used; ++i) {
    key += '#';
    key += pods[i];
  }
}

void DescribeNodes(ModelBuilder& b) {
  BatchModel& m = b.m;
  const int32_t N = b.num_nodes();
  const size_t R = m.resources.size();
  m.nodes.resize(N);
  std::unordered_map<std::string, int32_t> classes;
  std::string key;
  std::vector<std::string> pod_keys;
  for (int32_t n = 0; n < N; ++n) {
    const framework::NodeInfo& ni = *b.input.nodes[n];
    ModelNode& mn = m.nodes[n];
    mn.info = &ni;
    framework::Resource used = ni.requested();
    used.allowed_pod_number = static_cast<int64_t>(ni.pods().size());
    if (b.input.reserved) {
      framework::Resource extra = b.input.reserved(ni);
      used.Add(extra);
      used.allowed_pod_number += extra.allowed_pod_number;
    }
    mn.free.resize(R);
    for (size_t d = 0; d < R; ++d) {
      mn.free[d] = std::max<int64_t>(0, b.Amount(ni.allocatable(), d) - b.Amount(used, d));
    }
    for (const auto& p : ni.pods()) {
      if (!OwnedByDaemonSet(p->pod())) {
        mn.in_use = true;
        break;
      }
    }
    NodeClassKey(ni, mn, b.names_nodes, key, pod_keys);
    auto it = classes.find(key);
    if (it == classes.end()) it = classes.emplace(key, static_cast<int32_t>(classes.size())).first;
    mn.node_class = it->second;
  }
  m.num_classes = static_cast<int32_t>(classes.size());
}

// --- Static fit: once per group and class ---------------------------------------------------

// The first node of each class (the one the filters and scores are asked about).
std::vector<int32_t> ClassRepresentatives(const BatchModel& m) {
  std::vector<int32_t> rep(m.num_classes, -1);
  for (int32_t n = 0; n < static_cast<int32_t>(m.nodes.size()); ++n) {
    if (rep[m.nodes[n].node_class] < 0) rep[m.nodes[n].node_class] = n;
  }
  return rep;
}

// Scores on the class representatives that fit, scaled to [0, 1] (min to max).
void ScalePreference(ModelBuilder& b, int32_t g, const std::vector<std::string>& by_class,
                     const std::vector<int32_t>& rep) {
  BatchModel& m = b.m;
  const int32_t N = b.num_nodes();
  m.preference[g].assign(N, 0);
  if (!b.input.scores) return;
  std::vector<const framework::NodeInfo*> fitting;
  std::vector<int32_t> classes;
  for (int32_t c = 0; c < m.num_classes; ++c) {
    if (!by_class[c].empty()) continue;
    fitting.push_back(b.input.nodes[rep[c]]);
    classes.push_back(c);
  }
  const std::vector<int64_t> scores =
      fitting.empty() ? std::vector<int64_t>{} : b.input.scores(*m.groups[g].pods.front(), fitting);
  if (scores.size() != fitting.size()) return;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  if (lo == scores.end() || *hi == *lo) return;
  std::vector<double> by(m.num_classes, 0);
  for (size_t i = 0; i < classes.size(); ++i) {
    by[classes[i]] = static_cast<double>(scores[i] - *lo) / static_cast<double>(*hi - *lo);
  }
  for (int32_t n = 0; n < N; ++n) m.preference[g][n] = by[m.nodes[n].node_class];
}

void ComputeStaticFit(ModelBuilder& b) {
  BatchModel& m = b.m;
  const int32_t G = b.num_groups();
  const int32_t N = b.num_nodes();
  m.static_reason.assign(G, std::vector<std::string>(m.num_classes));
  m.fits.assign(G, std::vector<uint8_t>(N, 0));
  m.preference.assign(G, {});
  const std::vector<int32_t> rep = ClassRepresentatives(m);
  for (int32_t g = 0; g < G; ++g) {
    std::vector<std::string> by_class(m.num_classes);
    auto fit = b.input.static_fit(*m.groups[g].pods.front());
    for (int32_t c = 0; c < m.num_classes; ++c) by_class[c] = fit(*b.input.nodes[rep[c]]);
    for (int32_t n = 0; n < N; ++n) m.fits[g][n] = by_class[m.nodes[n].node_class].empty() ? 1 : 0;
    m.static_reason[g] = by_class;
    ScalePreference(b, g, by_class, rep);
  }
}

// --- Pod (anti-)affinity terms --------------------------------------------------------------
void AddTerm(ModelBuilder& b, int32_t owner, const framework::AffinityTerm& at, bool anti) {
  BatchModel& m = b.m;
  const int32_t G = b.num_groups();
  const int32_t N = b.num_nodes();
  Term t;
  t.owner = owner;
  t.anti = anti;
  t.key = b.KeyIndex(at.topology_key);
  t.description =
      fmt::format("{} on {}", at.selector_matches_nothing ? "nothing" : DescribeSelector(at.selector), at.topology_key);
  t.matches_group.assign(G, 0);
  for (int32_t h = 0; h < G; ++h) {
    const api::Pod& p = m.groups[h].pods.front()->pod();
    t.matches_group[h] = at.Matches(p, b.NamespaceLabels(p.metadata.namespace_)) ? 1 : 0;
  }
  const TopologyKey& key = m.keys[t.key];
  t.existing.assign(key.num_domains, 0);
  for (int32_t n = 0; n < N; ++n) {
    const int32_t d = key.domain_of_node[n];
    for (const auto& p : b.input.nodes[n]->pods()) {
      if (!at.Matches(p->pod(), b.NamespaceLabels(p->pod().metadata.namespace_))) continue;
      ++t.existing_total;
      if (d >= 0) ++t.existing[d];
    }
  }
  const int32_t id = static_cast<int32_t>(m.terms.size());
  m.terms.push_back(std::move(t));
  (anti ? m.groups[owner].anti_terms : m.groups[owner].affinity_terms).push_back(id);
}

void AddAffinityTerms(ModelBuilder& b) {
  BatchModel& m = b.m;
  const int32_t G = b.num_groups();
  for (int32_t g = 0; g < G; ++g) {
    const framework::PodInfo& pi = *m.groups[g].pods.front();
    for (const auto& at : pi.required_affinity_terms) AddTerm(b, g, at, false);
    for (const auto& at : pi.required_anti_affinity_terms) AddTerm(b, g, at, true);
    bool all = !m.groups[g].affinity_terms.empty();
    for (int32_t t : m.groups[g].affinity_terms) all = all && m.terms[t].matches_group[g];
    m.groups[g].matches_own_affinity = all;
  }
  for (int32_t t = 0; t < static_cast<int32_t>(m.terms.size()); ++t) {
    for (int32_t h = 0; h < G; ++h) {
      if (!m.terms[t].matches_group[h]) continue;
      m.groups[h].terms_matching.push_back(t);
      if (m.terms[t].anti) m.groups[h].anti_terms_matching.push_back(t);
    }
  }
}

// --- DoNotSchedule topology spread constraints ----------------------------------------------

// Spread constraint `c` of group g, one of the group's DoNotSchedule constraints `hard`.
Spread MakeSpread(ModelBuilder& b, int32_t g, const api::TopologySpreadConstraint* c,
                  const std::vector<const api::TopologySpreadConstraint*>& hard) {
  BatchModel& m = b.m;
  const int32_t G = b.num_groups();
  const int32_t N = b.num_nodes();
  const framework::PodInfo& pi = *m.groups[g].pods.front();
  const api::Pod& pod = pi.pod();
  Spread s;
  s.owner = g;
  s.key = b.KeyIndex(c->topology_key);
  s.max_skew = c->max_skew;
  s.min_domains = c->min_domains.value_or(1);
  const bool honor_affinity =
      c->node_affinity_policy.value_or(api::NodeInclusionPolicy::kHonor) == api::NodeInclusionPolicy::kHonor;
  const bool honor_taints =
      c->node_taints_policy.value_or(api::NodeInclusionPolicy::kIgnore) == api::NodeInclusionPolicy::kHonor;
  // A pod's constraints count only nodes that carry every one of its constraints' keys.
  s.node_counts.assign(N, 0);
  for (int32_t n = 0; n < N; ++n) {
    const auto& labels = b.input.nodes[n]->node()->metadata.labels;
    bool all_keys = true;
    for (const auto* o : hard) all_keys = all_keys && labels.Has(o->topology_key);
    s.node_counts[n] = all_keys && (!b.input.spread_node_eligible ||
                                    b.input.spread_node_eligible(pi, *b.input.nodes[n], honor_affinity, honor_taints));
  }
  const TopologyKey& key = m.keys[s.key];
  s.domain_eligible.assign(key.num_domains, 0);
  s.existing.assign(key.num_domains, 0);
  api::LabelSelector selector;
  bool selector_set = c->label_selector.has_value();
  if (selector_set) selector = MergeMatchLabelKeys(*c->label_selector, c->match_label_keys, pod.metadata.labels);
  auto matches = [&](const api::Pod& p) {
    return selector_set && p.metadata.namespace_ == pod.metadata.namespace_ && selector.Matches(p.metadata.labels);
  };
  for (int32_t n = 0; n < N; ++n) {
    if (!s.node_counts[n]) continue;
    const int32_t d = key.domain_of_node[n];
    if (d < 0) continue;
    s.domain_eligible[d] = 1;
    for (const auto& p : b.input.nodes[n]->pods()) {
      if (!p->pod().metadata.deletion_timestamp_ns && matches(p->pod())) ++s.existing[d];
    }
  }
  for (auto e : s.domain_eligible) s.num_eligible_domains += e;
  s.matches_group.assign(G, 0);
  for (int32_t h = 0; h < G; ++h) s.matches_group[h] = matches(m.groups[h].pods.front()->pod()) ? 1 : 0;
  s.self_match = s.matches_group[g];
  return s;
}

void AddSpreads(ModelBuilder& b) {
  BatchModel& m = b.m;
  const int32_t G = b.num_groups();
  for (int32_t g = 0; g < G; ++g) {
    const api::Pod& pod = m.groups[g].pods.front()->pod();
    std::vector<const api::TopologySpreadConstraint*> hard;
    for (const auto& c : pod.spec.topology_spread_constraints) {
      if (c.when_unsatisfiable == api::UnsatisfiableConstraintAction::kDoNotSchedule) hard.push_back(&c);
    }
    for (const auto* c : hard) {
      Spread s = MakeSpread(b, g, c, hard);
      const int32_t id = static_cast<int32_t>(m.spreads.size());
      m.spreads.push_back(std::move(s));
      m.groups[g].spreads.push_back(id);
    }
  }
  for (int32_t c = 0; c < static_cast<int32_t>(m.spreads.size()); ++c) {
    for (int32_t h = 0; h < G; ++h) {
      if (m.spreads[c].matches_group[h]) m.groups[h].spreads_matching.push_back(c);
    }
  }
}

// --- Host ports within the batch ------------------------------------------------------------
void FindPortConflicts(ModelBuilder& b) {
  BatchModel& m = b.m;
  const int32_t G = b.num_groups();
  m.port_conflict.assign(G, std::vector<uint8_t>(G, 0));
  m.port_conflicts_of.assign(G, {});
  for (int32_t g = 0; g < G; ++g) {
    if (m.groups[g].ports.empty()) continue;
    for (int32_t h = 0; h < G; ++h) {
      m.port_conflict[g][h] = PortsConflict(m.groups[g].ports, m.groups[h].ports);
      if (m.port_conflict[g][h]) m.port_conflicts_of[g].push_back(h);
    }
  }
}

}  // namespace

BatchModel BuildModel(const PlacementInput& input) {
  ModelBuilder b(input);
  b.m.num_pods = input.pods.size();
  GroupPods(b);
  ChooseResources(b);
  FindAccelerators(b);
  DescribeNodes(b);
  ComputeStaticFit(b);
  AddAffinityTerms(b);
  AddSpreads(b);
  FindPortConflicts(b);
  return std::move(b.m);
}

double BatchModel::Stranded(std::span<const int64_t> free) const {
  double stranded = 0;
  for (const auto& a : accelerators) {
    const double amount = static_cast<double>(free[a.dim]);
    if (amount <= 0) continue;
    double servable = amount;
    for (const auto& [b, per_unit] : a.base) servable = std::min(servable, static_cast<double>(free[b]) / per_unit);
    stranded += std::max(0.0, amount - std::max(0.0, servable)) / a.unit;
  }
  return stranded;
}

}  // namespace kubesched::optimizer
