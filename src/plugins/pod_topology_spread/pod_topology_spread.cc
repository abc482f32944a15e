#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "plugins/helper/taints.h"

namespace kubesched::plugins::pod_topology_spread {

const framework::StateKey kPreFilterStateKey{"PreFilterPodTopologySpread"};
const framework::StateKey kPreScoreStateKey{"PreScorePodTopologySpread"};

namespace {

using api::NodeInclusionPolicy;
using api::UnsatisfiableConstraintAction;
using framework::Code;
using framework::Status;

// Whether the node carries every constraint's topology key.
bool NodeHasAllTopologyKeys(const api::Labels& node_labels, const std::vector<Constraint>& constraints) {
  for (const auto& c : constraints) {
    if (!node_labels.Has(c.topology_key)) return false;
  }
  return true;
}

// The pod's nodeSelector and required node affinity (upstream's GetRequiredNodeAffinity.Match).
bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node) {
  const api::Labels& labels = node.metadata.labels;
  for (const auto& [key, value] : pod.spec.node_selector) {
    const std::string* v = labels.Find(key);
    if (v == nullptr || *v != value) return false;
  }
  const auto& affinity = pod.spec.affinity;
  if (affinity && affinity->node_affinity && affinity->node_affinity->required) {
    return affinity->node_affinity->required->Matches(node.metadata.name, labels);
  }
  return true;
}

// nodeAffinityPolicy / nodeTaintsPolicy for one node, each check run at most once.
class NodeInclusion {
 public:
  NodeInclusion(const api::Pod& pod, const api::Node& node) : pod_(pod), node_(node) {}
  bool Passes(const Constraint& c) {
    if (c.node_affinity_policy == NodeInclusionPolicy::kHonor) {
      if (affinity_ < 0) affinity_ = MatchesRequiredNodeAffinity(pod_, node_) ? 1 : 0;
      if (affinity_ == 0) return false;
    }
    if (c.node_taints_policy == NodeInclusionPolicy::kHonor) {
      if (taints_ < 0)
        taints_ = helper::FindMatchingUntoleratedTaint(node_.spec.taints, pod_.spec.tolerations,
                                                       helper::DoNotScheduleTaintsFilter)
                      ? 0
                      : 1;
      if (taints_ == 0) return false;
    }
    return true;
  }

 private:
  const api::Pod& pod_;
  const api::Node& node_;
  int affinity_ = -1;
  int taints_ = -1;
};

// Pods in `ns` matching the constraint's selector, terminating pods excluded (upstream #87621).
int CountPodsMatchSelector(const std::vector<framework::PodInfoPtr>& pods, const Constraint& c, std::string_view ns) {
  if (c.selector_matches_nothing) return 0;
  int count = 0;
  for (const auto& p : pods) {
    const api::Pod& pod = p->pod();
    if (pod.metadata.deletion_timestamp_ns || pod.metadata.namespace_ != ns) continue;
    if (c.selector.Matches(pod.metadata.labels)) ++count;
  }
  return count;
}

std::string_view LabelOrEmpty(const api::Labels& labels, std::string_view key) {
  const std::string* v = labels.Find(key);
  return v ? std::string_view(*v) : std::string_view();
}

// Since <size> is at least 1 when any node is eligible, the weight lies in [log 3, log(n+2)].
double TopologyNormalizingWeight(size_t size) { return std::log(static_cast<double>(size + 2)); }

// maxSkew-1 is added so that differences between domains are watered down, making the score
// tolerate skews up to maxSkew.
double ScoreForCount(int64_t count, int32_t max_skew, double weight) {
  return static_cast<double>(count) * weight + static_cast<double>(max_skew - 1);
}

bool AnyConstraintMatches(const std::vector<Constraint>& constraints, const api::Labels& labels) {
  for (const auto& c : constraints) {
    if (c.Matches(labels)) return true;
  }
  return false;
}

template <typename V>
V& FindOrInsert(StringMap<V>& map, std::string_view key) {
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(std::string(key), V{}).first;
  return it->second;
}

constexpr int64_t kInvalidScore = -1;

}  // namespace

void UpdateCriticalPaths(CriticalPaths& p, std::string_view value, int num) {
  int i = -1;
  if (value == p[0].topology_value) {
    i = 0;
  } else if (value == p[1].topology_value) {
    i = 1;
  }
  if (i >= 0) {
    p[i].match_num = num;
    if (p[0].match_num > p[1].match_num) std::swap(p[0], p[1]);
  } else if (num < p[0].match_num) {
    p[1] = p[0];
    p[0].topology_value = std::string(value);
    p[0].match_num = num;
  } else if (num < p[1].match_num) {
    p[1].topology_value = std::string(value);
    p[1].match_num = num;
  }
}

int PreFilterState::MinMatchNum(size_t i) const {
  // With fewer eligible domains than minDomains, the global minimum is treated as 0.
  if (tp_value_to_match_num[i].size() < static_cast<size_t>((*constraints)[i].min_domains)) return 0;
  return critical_paths[i][0].match_num;
}

std::unique_ptr<framework::StateData> PreFilterState::Clone() const { return std::make_unique<PreFilterState>(*this); }

std::unique_ptr<framework::StateData> PreScoreState::Clone() const { return std::make_unique<PreScoreState>(*this); }

PodTopologySpread::PodTopologySpread(PodTopologySpreadArgs args, framework::Handle& handle) : handle_(handle) {
  if (args.defaulting_type == kSystemDefaulting) {
    default_constraints_ = SystemDefaultConstraints();
    system_defaulted_ = true;
  } else {
    default_constraints_ = std::move(args.default_constraints);
  }
}

std::vector<Constraint> PodTopologySpread::FilterConstraints(
    const std::vector<api::TopologySpreadConstraint>& constraints, const api::Labels& pod_labels,
    UnsatisfiableConstraintAction action) const {
  std::vector<Constraint> out;
  for (const auto& c : constraints) {
    if (c.when_unsatisfiable != action) continue;
    Constraint tsc;
    tsc.max_skew = c.max_skew;
    tsc.topology_key = c.topology_key;
    if (c.label_selector) {
      tsc.selector = *c.label_selector;
    } else {
      tsc.selector_matches_nothing = true;
    }
    // matchLabelKeys: the pod's values for those keys are ANDed into the selector. A null selector
    // with merged keys selects by those keys alone, as upstream's mergeLabelSetWithSelector.
    for (const auto& key : c.match_label_keys) {
      if (const std::string* v = pod_labels.Find(key)) {
        tsc.selector.match_expressions.push_back({key, api::SelectorOperator::kIn, {*v}});
        tsc.selector_matches_nothing = false;
      }
    }
    tsc.min_domains = c.min_domains.value_or(1);
    tsc.node_affinity_policy = c.node_affinity_policy.value_or(NodeInclusionPolicy::kHonor);
    tsc.node_taints_policy = c.node_taints_policy.value_or(NodeInclusionPolicy::kIgnore);
    out.push_back(std::move(tsc));
  }
  return out;
}

std::vector<Constraint> PodTopologySpread::BuildDefaultConstraints(const api::Pod& pod,
                                                                   UnsatisfiableConstraintAction action) const {
  std::vector<Constraint> constraints = FilterConstraints(default_constraints_, pod.metadata.labels, action);
  if (constraints.empty()) return constraints;
  // Upstream's helper.DefaultSelector: the selector of the pod's controller. Without one (or with an
  // empty one) default spreading does not apply.
  std::optional<api::LabelSelector> selector = handle_.client().ControllerSelector(pod);
  if (!selector || selector->Empty()) return {};
  for (auto& c : constraints) {
    c.selector = *selector;
    c.selector_matches_nothing = false;
  }
  return constraints;
}

std::vector<Constraint> PodTopologySpread::GetConstraints(const api::Pod& pod,
                                                          UnsatisfiableConstraintAction action) const {
  if (!pod.spec.topology_spread_constraints.empty()) {
    return FilterConstraints(pod.spec.topology_spread_constraints, pod.metadata.labels, action);
  }
  return BuildDefaultConstraints(pod, action);
}

// --- Filtering -------------------------------------------------------------------------------

std::pair<framework::PreFilterResult, Status> PodTopologySpread::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod_info,
    std::span<const framework::NodeInfo* const> nodes) {
  const api::Pod& pod = pod_info.pod();
  auto constraints =
      std::make_shared<std::vector<Constraint>>(GetConstraints(pod, UnsatisfiableConstraintAction::kDoNotSchedule));
  if (constraints->empty()) return {{}, Status::Skip()};

  const std::vector<Constraint>& cs = *constraints;
  const size_t nc = cs.size();
  // counts[n * nc + i]: matching pods on node n for constraint i; -1 when the node is not eligible.
  std::vector<int> counts(nodes.size() * nc, -1);
  handle_.parallelizer().Until(static_cast<int>(nodes.size()), [&](int n) {
    const api::Node* node = nodes[n]->node();
    if (node == nullptr || !NodeHasAllTopologyKeys(node->metadata.labels, cs)) return;
    NodeInclusion inclusion(pod, *node);
    for (size_t i = 0; i < nc; ++i) {
      if (!inclusion.Passes(cs[i])) continue;
      counts[n * nc + i] = CountPodsMatchSelector(nodes[n]->pods(), cs[i], pod.metadata.namespace_);
    }
  });

  auto s = std::make_unique<PreFilterState>();
  s->tp_value_to_match_num.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    if (cs[i].topology_key == api::kLabelHostname) s->tp_value_to_match_num[i].reserve(nodes.size());
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (size_t i = 0; i < nc; ++i) {
      int count = counts[n * nc + i];
      if (count < 0) continue;
      std::string_view value = LabelOrEmpty(nodes[n]->node()->metadata.labels, cs[i].topology_key);
      FindOrInsert(s->tp_value_to_match_num[i], value) += count;
    }
  }
  s->critical_paths.resize(nc);
  auto self_match = std::make_shared<std::vector<bool>>(nc);
  for (size_t i = 0; i < nc; ++i) {
    for (const auto& [value, num] : s->tp_value_to_match_num[i]) UpdateCriticalPaths(s->critical_paths[i], value, num);
    (*self_match)[i] = cs[i].Matches(pod.metadata.labels);
  }
  s->constraints = std::move(constraints);
  s->self_match = std::move(self_match);
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, Status()};
}

void PodTopologySpread::UpdateWithPod(PreFilterState& s, const api::Pod& updated_pod, const api::Pod& preemptor,
                                      const api::Node* node, int delta) const {
  if (node == nullptr || updated_pod.metadata.namespace_ != preemptor.metadata.namespace_) return;
  const std::vector<Constraint>& cs = *s.constraints;
  const api::Labels& node_labels = node->metadata.labels;
  if (!NodeHasAllTopologyKeys(node_labels, cs)) return;
  NodeInclusion inclusion(preemptor, *node);
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].Matches(updated_pod.metadata.labels) || !inclusion.Passes(cs[i])) continue;
    std::string_view value = LabelOrEmpty(node_labels, cs[i].topology_key);
    int& num = FindOrInsert(s.tp_value_to_match_num[i], value);
    num += delta;
    UpdateCriticalPaths(s.critical_paths[i], value, num);
  }
}

Status PodTopologySpread::AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                                 const framework::PodInfo& pod_to_add, const framework::NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  UpdateWithPod(*s, pod_to_add.pod(), pod_to_schedule.pod(), node_info.node(), 1);
  return Status();
}

Status PodTopologySpread::RemovePod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                                    const framework::PodInfo& pod_to_remove, const framework::NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  UpdateWithPod(*s, pod_to_remove.pod(), pod_to_schedule.pod(), node_info.node(), -1);
  return Status();
}

Status PodTopologySpread::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  const api::Node* node = node_info.node();
  if (node == nullptr) return Status::Error("node not found");
  const std::vector<Constraint>& cs = *s->constraints;
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string* value = node->metadata.labels.Find(cs[i].topology_key);
    if (value == nullptr) {
      return Status(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonNodeLabelNotMatch));
    }
    // Existing matching pods + the pod itself (when it matches) - global minimum <= maxSkew.
    const auto& domains = s->tp_value_to_match_num[i];
    auto it = domains.find(std::string_view(*value));
    int64_t match_num = it == domains.end() ? 0 : it->second;
    int64_t skew = match_num + ((*s->self_match)[i] ? 1 : 0) - s->MinMatchNum(i);
    if (skew > cs[i].max_skew) return Status(Code::kUnschedulable, std::string(kErrReasonConstraintsNotMatch));
  }
  return Status();
}

// --- Scoring ---------------------------------------------------------------------------------

Status PodTopologySpread::PreScore(framework::CycleState& state, const framework::PodInfo& pod_info,
                                   std::span<const framework::NodeInfo* const> filtered_nodes) {
  const api::Pod& pod = pod_info.pod();
  std::span<const framework::NodeInfo* const> all_nodes = handle_.SnapshotSharedLister().List();
  if (all_nodes.empty()) return Status::Skip();

  auto s = std::make_unique<PreScoreState>();
  s->constraints = GetConstraints(pod, UnsatisfiableConstraintAction::kScheduleAnyway);
  if (s->constraints.empty()) return Status::Skip();
  const std::vector<Constraint>& cs = s->constraints;
  const size_t nc = cs.size();
  // Only non-system-default spreading requires every topology key, so that nodes without a zone
  // label still get hostname spreading.
  const bool require_all_topologies = !pod.spec.topology_spread_constraints.empty() || !system_defaulted_;

  s->topology_value_to_pod_counts.resize(nc);
  std::vector<size_t> topology_size(nc, 0);
  for (const framework::NodeInfo* ni : filtered_nodes) {
    const api::Node* node = ni->node();
    if (node == nullptr) continue;
    const api::Labels& labels = node->metadata.labels;
    if (require_all_topologies && !NodeHasAllTopologyKeys(labels, cs)) {
      s->ignored_nodes.insert(node->metadata.name);
      continue;
    }
    for (size_t i = 0; i < nc; ++i) {
      if (cs[i].topology_key == api::kLabelHostname) continue;  // counted per node in Score
      auto& domains = s->topology_value_to_pod_counts[i];
      std::string_view value = LabelOrEmpty(labels, cs[i].topology_key);
      if (domains.find(value) == domains.end()) {
        domains.emplace(std::string(value), 0);
        ++topology_size[i];
      }
    }
  }
  s->topology_normalizing_weight.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    size_t size = topology_size[i];
    if (cs[i].topology_key == api::kLabelHostname) size = filtered_nodes.size() - s->ignored_nodes.size();
    s->topology_normalizing_weight[i] = TopologyNormalizingWeight(size);
  }

  // Count matching pods over all nodes in domains that hold a feasible node.
  std::vector<int> counts(all_nodes.size() * nc, -1);
  handle_.parallelizer().Until(static_cast<int>(all_nodes.size()), [&](int n) {
    const api::Node* node = all_nodes[n]->node();
    if (node == nullptr) return;
    const api::Labels& labels = node->metadata.labels;
    if (require_all_topologies && !NodeHasAllTopologyKeys(labels, cs)) return;
    NodeInclusion inclusion(pod, *node);
    for (size_t i = 0; i < nc; ++i) {
      if (!inclusion.Passes(cs[i])) continue;
      const auto& domains = s->topology_value_to_pod_counts[i];
      if (domains.find(LabelOrEmpty(labels, cs[i].topology_key)) == domains.end()) continue;
      counts[n * nc + i] = CountPodsMatchSelector(all_nodes[n]->pods(), cs[i], pod.metadata.namespace_);
    }
  });
  for (size_t n = 0; n < all_nodes.size(); ++n) {
    for (size_t i = 0; i < nc; ++i) {
      int count = counts[n * nc + i];
      if (count <= 0) continue;
      auto& domains = s->topology_value_to_pod_counts[i];
      domains.find(LabelOrEmpty(all_nodes[n]->node()->metadata.labels, cs[i].topology_key))->second += count;
    }
  }
  state.Write(kPreScoreStateKey, std::move(s));
  return Status();
}

std::pair<int64_t, Status> PodTopologySpread::Score(const framework::CycleState& state,
                                                    const framework::PodInfo& pod_info,
                                                    const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return {0, Status::Error("reading \"PreScorePodTopologySpread\" from cycleState: not found")};
  const api::Node* node = node_info.node();
  if (node == nullptr) return {0, Status::Error("node not found")};
  if (s->ignored_nodes.find(std::string_view(node->metadata.name)) != s->ignored_nodes.end()) return {0, Status()};

  const api::Pod& pod = pod_info.pod();
  double score = 0;
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const Constraint& c = s->constraints[i];
    const std::string* value = node->metadata.labels.Find(c.topology_key);
    if (value == nullptr) continue;
    int64_t count = 0;
    if (c.topology_key == api::kLabelHostname) {
      count = CountPodsMatchSelector(node_info.pods(), c, pod.metadata.namespace_);
    } else {
      const auto& domains = s->topology_value_to_pod_counts[i];
      auto it = domains.find(std::string_view(*value));
      if (it != domains.end()) count = it->second;
    }
    score += ScoreForCount(count, c.max_skew, s->topology_normalizing_weight[i]);
  }
  return {std::llround(score), Status()};
}

Status PodTopologySpread::NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                         framework::NodeScoreList& scores) {
  const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return Status::Error("reading \"PreScorePodTopologySpread\" from cycleState: not found");
  int64_t min_score = INT64_MAX;
  int64_t max_score = 0;
  for (auto& ns : scores) {
    if (s->ignored_nodes.find(ns.name) != s->ignored_nodes.end()) {
      ns.score = kInvalidScore;
      continue;
    }
    min_score = std::min(min_score, ns.score);
    max_score = std::max(max_score, ns.score);
  }
  // Fewer matching pods is better: reverse, so the least crowded node gets 100.
  for (auto& ns : scores) {
    if (ns.score == kInvalidScore) {
      ns.score = 0;
    } else if (max_score == 0) {
      ns.score = framework::kMaxNodeScore;
    } else {
      ns.score = framework::kMaxNodeScore * (max_score + min_score - ns.score) / max_score;
    }
  }
  return Status();
}

// --- Queueing hints --------------------------------------------------------------------------

std::vector<framework::ClusterEventWithHint> PodTopologySpread::EventsToRegister() const {
  using namespace framework::action;
  return {
      // A pod added, deleted or relabeled may change the counts; a new toleration on the pod itself
      // matters under nodeTaintsPolicy Honor.
      {framework::ClusterEvent{framework::EventResource::kPod, kAdd | kUpdatePodLabel | kUpdatePodTolerations | kDelete,
                               "PodAdd|UpdatePodLabel|UpdatePodTolerations|Delete"},
       [this](const api::Pod& pod, const framework::EventObjects& ev) { return IsSchedulableAfterPodChange(pod, ev); }},
      // Nodes appearing, leaving or changing topology labels or taints change the domains.
      {framework::ClusterEvent{framework::EventResource::kNode, kAdd | kDelete | kUpdateNodeLabel | kUpdateNodeTaint,
                               "NodeAdd|Delete|UpdateNodeLabel|UpdateNodeTaint"},
       [this](const api::Pod& pod, const framework::EventObjects& ev) {
         return IsSchedulableAfterNodeChange(pod, ev);
       }},
  };
}

framework::QueueingHint PodTopologySpread::IsSchedulableAfterPodChange(const api::Pod& pod,
                                                                       const framework::EventObjects& ev) const {
  using framework::QueueingHint;
  const api::Pod* original = ev.old_pod;
  const api::Pod* modified = ev.new_pod;
  // Only the pod itself, or assigned pods in its namespace, take part in its spreading.
  auto involved = [&](const api::Pod& p) {
    return p.metadata.uid == pod.metadata.uid ||
           (!p.spec.node_name.empty() && p.metadata.namespace_ == pod.metadata.namespace_);
  };
  if ((modified && !involved(*modified)) || (original && !involved(*original))) return QueueingHint::kSkip;

  std::vector<Constraint> constraints = GetConstraints(pod, UnsatisfiableConstraintAction::kDoNotSchedule);
  if (modified && original) {
    if (pod.metadata.uid == modified->metadata.uid && modified->spec.tolerations != original->spec.tolerations) {
      for (const auto& c : constraints) {
        if (c.node_taints_policy == NodeInclusionPolicy::kHonor) return QueueingHint::kQueue;
      }
    }
    if (modified->metadata.labels == original->metadata.labels) return QueueingHint::kSkip;
    for (const auto& c : constraints) {
      if (c.Matches(original->metadata.labels) != c.Matches(modified->metadata.labels)) return QueueingHint::kQueue;
    }
    return QueueingHint::kSkip;
  }
  if (modified) {
    return AnyConstraintMatches(constraints, modified->metadata.labels) ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  if (original) {
    return AnyConstraintMatches(constraints, original->metadata.labels) ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  return QueueingHint::kQueue;
}

framework::QueueingHint PodTopologySpread::IsSchedulableAfterNodeChange(const api::Pod& pod,
                                                                        const framework::EventObjects& ev) const {
  using framework::QueueingHint;
  const api::Node* original = ev.old_node;
  const api::Node* modified = ev.new_node;
  std::vector<Constraint> constraints = GetConstraints(pod, UnsatisfiableConstraintAction::kDoNotSchedule);
  bool original_matching = original && NodeHasAllTopologyKeys(original->metadata.labels, constraints);
  bool modified_matching = modified && NodeHasAllTopologyKeys(modified->metadata.labels, constraints);
  if (original && modified) {
    if (original_matching != modified_matching) return QueueingHint::kQueue;
    if (modified_matching) {
      for (const auto& c : constraints) {
        if (LabelOrEmpty(original->metadata.labels, c.topology_key) !=
            LabelOrEmpty(modified->metadata.labels, c.topology_key)) {
          return QueueingHint::kQueue;
        }
      }
      if (original->spec.taints != modified->spec.taints) return QueueingHint::kQueue;
    }
    return QueueingHint::kSkip;
  }
  if (modified) return modified_matching ? QueueingHint::kQueue : QueueingHint::kSkip;
  if (original) return original_matching ? QueueingHint::kQueue : QueueingHint::kSkip;
  return QueueingHint::kQueue;
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<PodTopologySpread>(std::move(*parsed), handle);
}

}  // namespace kubesched::plugins::pod_topology_spread
