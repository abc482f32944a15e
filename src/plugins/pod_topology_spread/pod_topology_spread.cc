#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <span>

#include "api/taints.h"
#include "util/parallelizer.h"

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
        taints_ =
            api::FindMatchingUntoleratedTaint(node_.spec.taints, pod_.spec.tolerations, api::DoNotScheduleTaintsFilter)
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

// Pods in `ns` matching the selector, terminating pods excluded (upstream #87621).
int CountPodsMatchSelector(const std::vector<framework::PodInfoPtr>& pods, const api::LabelSelector& selector,
                           std::string_view ns) {
  int count = 0;
  for (const auto& p : pods) {
    const api::Pod& pod = p->pod();
    if (pod.metadata.deletion_timestamp_ns || pod.metadata.namespace_ != ns) continue;
    if (selector.Matches(pod.metadata.labels)) ++count;
  }
  return count;
}

int CountPodsMatchSelector(const std::vector<framework::PodInfoPtr>& pods, const Constraint& c, std::string_view ns) {
  return c.selector_matches_nothing ? 0 : CountPodsMatchSelector(pods, c.selector, ns);
}

// Whether any constraint's node inclusion policy can exclude a node for this pod: taints are
// honored, or node affinity is honored and the pod has a nodeSelector or required node affinity.
bool NeedsInclusionCheck(const api::Pod& pod, const std::vector<Constraint>& constraints) {
  const auto& affinity = pod.spec.affinity;
  const bool has_node_affinity =
      !pod.spec.node_selector.empty() || (affinity && affinity->node_affinity && affinity->node_affinity->required);
  for (const auto& c : constraints) {
    if (c.node_taints_policy == NodeInclusionPolicy::kHonor) return true;
    if (c.node_affinity_policy == NodeInclusionPolicy::kHonor && has_node_affinity) return true;
  }
  return false;
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

constexpr int64_t kInvalidScore = -1;

// Upstream's criticalPaths.update, for either kind of domain name; `name` projects a path onto
// its domain name.
template <typename Paths, typename Value, typename Name>
void UpdatePaths(Paths& p, const Value& value, int num, Name name) {
  int i = -1;
  if (value == name(p[0])) {
    i = 0;
  } else if (value == name(p[1])) {
    i = 1;
  }
  if (i >= 0) {
    p[i].match_num = num;
    if (p[0].match_num > p[1].match_num) std::swap(p[0], p[1]);
  } else if (num < p[0].match_num) {
    p[1] = p[0];
    name(p[0]) = value;
    p[0].match_num = num;
  } else if (num < p[1].match_num) {
    name(p[1]) = value;
    p[1].match_num = num;
  }
}

}  // namespace

void UpdateCriticalPaths(CriticalPaths& p, std::string_view value, int num) {
  UpdatePaths(p, value, num, [](CriticalPath& path) -> std::string& { return path.topology_value; });
}

void UpdateCriticalPaths(DomainCriticalPaths& p, int32_t slot, int num) {
  UpdatePaths(p, slot, num, [](DomainCriticalPath& path) -> int32_t& { return path.slot; });
}

// --- MatchCountCache ----------------------------------------------------------------------------

// Matching-pod counts per node for (namespace, selector) pairs, kept across cycles: most pods of a
// workload share their constraints' selector, and between two cycles only a node or two change.
// Node generations are global and move on every change of a node or its pods (NodeInfo::Touch),
// and copies keep them, so a node whose generation equals the one recorded still has the counted
// pods. Slots are snapshot indexes. Used by PreFilter and PreScore only, under mu.
class MatchCountCache {
 public:
  struct Entry {
    std::string ns;
    api::LabelSelector selector;
    std::vector<int64_t> generation;  // by snapshot index; 0: not counted
    std::vector<int32_t> count;       // by snapshot index
    uint64_t last_used = 0;

    // The count for `node`: the recorded one, or counted now (and recorded) when the node changed
    // since; nodes outside the snapshot are counted every time.
    int Count(const framework::NodeInfo& node) {
      const int32_t i = node.snapshot_index();
      const int64_t g = node.generation();
      if (i < 0 || static_cast<size_t>(i) >= generation.size() || g == 0 || generation[i] != g) return Recount(node);
      return count[i];
    }

    // Kept out of line: the common path above stays small in the per-node loops.
    [[gnu::noinline]] int Recount(const framework::NodeInfo& node) {
      const int c = CountPodsMatchSelector(node.pods(), selector, ns);
      const int32_t i = node.snapshot_index();
      const int64_t g = node.generation();
      if (i >= 0 && static_cast<size_t>(i) < generation.size() && g != 0) {
        count[i] = c;
        generation[i] = g;
      }
      return c;
    }
  };

  std::mutex mu;

  //! Starts a cycle: entries used in it are not evicted until the next one.
  void BeginCycle() { ++clock_; }

  //! The entry for (ns, selector). A new one (or one that grew) is filled for `nodes` at once, in
  //! parallel; afterwards Count recounts the few nodes that changed between cycles inline, so a
  //! cycle reads each node once.
  Entry& Get(std::string_view ns, const api::LabelSelector& selector, std::span<const framework::NodeInfo* const> nodes,
             util::Parallelizer& parallelizer) {
    Entry& e = Find(ns, selector);
    e.last_used = clock_;
    // Snapshot indexes lie below the snapshot's size; nodes beyond the entry are counted uncached.
    if (e.generation.size() >= nodes.size()) return e;
    e.generation.resize(nodes.size(), 0);
    e.count.resize(nodes.size(), 0);
    // Fill the new entry; kPending marks an index already taken by an earlier node of `nodes` (a
    // clone sharing it), which Count then handles.
    stale_.clear();
    for (size_t n = 0; n < nodes.size(); ++n) {
      const int32_t i = nodes[n]->snapshot_index();
      if (i < 0 || static_cast<size_t>(i) >= nodes.size() || nodes[n]->generation() == 0 ||
          e.generation[i] == nodes[n]->generation() || e.generation[i] == kPending) {
        continue;
      }
      e.generation[i] = kPending;
      stale_.push_back(static_cast<int32_t>(n));
    }
    auto recount = [&](size_t k) {
      const framework::NodeInfo& node = *nodes[stale_[k]];
      const int32_t i = node.snapshot_index();
      e.count[i] = CountPodsMatchSelector(node.pods(), e.selector, e.ns);
      e.generation[i] = node.generation();
    };
    if (stale_.size() >= kParallelRecount) {
      parallelizer.Until(static_cast<int>(stale_.size()), [&](int k) { recount(static_cast<size_t>(k)); });
    } else {
      for (size_t k = 0; k < stale_.size(); ++k) recount(k);
    }
    return e;
  }

 private:
  static constexpr int64_t kPending = -1;
  // Below this many nodes to recount, waking the workers costs more than it saves.
  static constexpr size_t kParallelRecount = 256;
  static constexpr size_t kMaxEntries = 16;

  Entry& Find(std::string_view ns, const api::LabelSelector& selector) {
    for (auto& e : entries_) {
      if (e->ns == ns && e->selector == selector) return *e;
    }
    // Evict the least recently used entry not used this cycle (entries handed out stay valid).
    if (entries_.size() >= kMaxEntries) {
      auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                     [](const auto& a, const auto& b) { return a->last_used < b->last_used; });
      if ((*oldest)->last_used != clock_) entries_.erase(oldest);
    }
    auto e = std::make_unique<Entry>();
    e->ns = std::string(ns);
    e->selector = selector;
    entries_.push_back(std::move(e));
    return *entries_.back();
  }

  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<int32_t> stale_;
  uint64_t clock_ = 0;
};

int PreFilterState::MinMatchNum(size_t i) const {
  // With fewer eligible domains than minDomains, the global minimum is treated as 0.
  if (tp_value_to_match_num[i].num_present < static_cast<size_t>((*constraints)[i].min_domains)) return 0;
  return critical_paths[i][0].match_num;
}

std::unique_ptr<framework::StateData> PreFilterState::Clone() const { return std::make_unique<PreFilterState>(*this); }

std::unique_ptr<framework::StateData> PreScoreState::Clone() const { return std::make_unique<PreScoreState>(*this); }

PodTopologySpread::PodTopologySpread(PodTopologySpreadArgs args, framework::Handle& handle)
    : handle_(handle), match_counts_(std::make_unique<MatchCountCache>()) {
  if (args.defaulting_type == kSystemDefaulting) {
    default_constraints_ = SystemDefaultConstraints();
    system_defaulted_ = true;
  } else {
    default_constraints_ = std::move(args.default_constraints);
  }
}

PodTopologySpread::~PodTopologySpread() = default;

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
  const std::string& ns = pod.metadata.namespace_;
  auto s = std::make_unique<PreFilterState>();
  s->tp_value_to_match_num.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    s->tp_value_to_match_num[i].Init(handle_.SnapshotSharedLister().Domains(cs[i].topology_key));
  }
  const bool check_inclusion = NeedsInclusionCheck(pod, cs);

  {
    std::lock_guard lock(match_counts_->mu);
    match_counts_->BeginCycle();
    std::vector<MatchCountCache::Entry*> entries(nc, nullptr);  // null: the selector matches nothing
    for (size_t i = 0; i < nc; ++i) {
      if (!cs[i].selector_matches_nothing) {
        entries[i] = &match_counts_->Get(ns, cs[i].selector, nodes, handle_.parallelizer());
      }
    }
    // One serial pass: with counts cached it is a few loads per node, cheaper than waking workers.
    // The arrays it writes are held in locals (byte stores would otherwise make the compiler
    // reload every vector's data pointer), refreshed when a slot is added; presence is recorded
    // without counting, and num_present derived afterwards.
    struct Lane {
      int* counts;
      Presence* present;
    };
    std::vector<Lane> lanes(nc);
    auto refresh_lane = [&](size_t i) {
      lanes[i] = {s->tp_value_to_match_num[i].counts.data(), s->tp_value_to_match_num[i].present.data()};
    };
    for (size_t i = 0; i < nc; ++i) refresh_lane(i);
    std::vector<int32_t> slots(nc);
    for (const framework::NodeInfo* ni : nodes) {
      const api::Node* node = ni->node();
      if (node == nullptr) continue;
      // Only nodes carrying every topology key count.
      bool has_all_keys = true;
      for (size_t i = 0; i < nc && has_all_keys; ++i) {
        DomainCounts<int>& domains = s->tp_value_to_match_num[i];
        const int32_t slot = domains.AddSlot(*ni);
        if (static_cast<size_t>(slot) >= domains.domains->size()) refresh_lane(i);  // an extra slot, or none
        slots[i] = slot;
        has_all_keys = slot != framework::TopologyDomains::kNoDomain;
      }
      if (!has_all_keys) continue;
      NodeInclusion inclusion(pod, *node);
      for (size_t i = 0; i < nc; ++i) {
        if (check_inclusion && !inclusion.Passes(cs[i])) continue;
        lanes[i].counts[slots[i]] += entries[i] != nullptr ? entries[i]->Count(*ni) : 0;
        lanes[i].present[slots[i]] = Presence::kPresent;
      }
    }
    for (auto& domains : s->tp_value_to_match_num) domains.RecountPresent();
  }

  s->critical_paths.resize(nc);
  auto self_match = std::make_shared<std::vector<bool>>(nc);
  for (size_t i = 0; i < nc; ++i) {
    const DomainCounts<int>& domains = s->tp_value_to_match_num[i];
    for (size_t slot = 0; slot < domains.counts.size(); ++slot) {
      if (domains.present[slot] == Presence::kPresent) {
        UpdateCriticalPaths(s->critical_paths[i], static_cast<int32_t>(slot), domains.counts[slot]);
      }
    }
    (*self_match)[i] = cs[i].Matches(pod.metadata.labels);
  }
  s->constraints = std::move(constraints);
  s->self_match = std::move(self_match);
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, Status()};
}

void PodTopologySpread::UpdateWithPod(PreFilterState& s, const api::Pod& updated_pod, const api::Pod& preemptor,
                                      const framework::NodeInfo& node_info, int delta) const {
  const api::Node* node = node_info.node();
  if (node == nullptr || updated_pod.metadata.namespace_ != preemptor.metadata.namespace_) return;
  const std::vector<Constraint>& cs = *s.constraints;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (s.tp_value_to_match_num[i].domains->DomainOf(node_info) == framework::TopologyDomains::kNoDomain) return;
  }
  NodeInclusion inclusion(preemptor, *node);
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].Matches(updated_pod.metadata.labels) || !inclusion.Passes(cs[i])) continue;
    DomainCounts<int>& domains = s.tp_value_to_match_num[i];
    const int32_t slot = domains.AddSlot(node_info);
    int& num = domains.counts[slot];
    num += delta;
    domains.MarkPresent(slot);
    UpdateCriticalPaths(s.critical_paths[i], slot, num);
  }
}

Status PodTopologySpread::AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                                 const framework::PodInfo& pod_to_add, const framework::NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  UpdateWithPod(*s, pod_to_add.pod(), pod_to_schedule.pod(), node_info, 1);
  return Status();
}

Status PodTopologySpread::RemovePod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                                    const framework::PodInfo& pod_to_remove, const framework::NodeInfo& node_info) {
  auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  UpdateWithPod(*s, pod_to_remove.pod(), pod_to_schedule.pod(), node_info, -1);
  return Status();
}

Status PodTopologySpread::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  if (node_info.node() == nullptr) return Status::Error("node not found");
  const std::vector<Constraint>& cs = *s->constraints;
  for (size_t i = 0; i < cs.size(); ++i) {
    const DomainCounts<int>& domains = s->tp_value_to_match_num[i];
    const int32_t slot = domains.FindSlot(node_info);
    if (slot == framework::TopologyDomains::kNoDomain) {
      static const framework::StaticReasons kReasons{kErrReasonNodeLabelNotMatch};
      return Status(Code::kUnschedulableAndUnresolvable, kReasons);
    }
    // Existing matching pods + the pod itself (when it matches) - global minimum <= maxSkew.
    int64_t skew = int64_t{domains.CountAt(slot)} + ((*s->self_match)[i] ? 1 : 0) - s->MinMatchNum(i);
    static const framework::StaticReasons kReasons{kErrReasonConstraintsNotMatch};
    if (skew > cs[i].max_skew) return Status(Code::kUnschedulable, kReasons);
  }
  return Status();
}

// --- Scoring ---------------------------------------------------------------------------------

Status PodTopologySpread::PreScore(framework::CycleState& state, const framework::PodInfo& pod_info,
                                   std::span<const framework::NodeInfo* const> filtered_nodes) {
  const api::Pod& pod = pod_info.pod();
  const framework::NodeInfoLister& lister = handle_.SnapshotSharedLister();
  std::span<const framework::NodeInfo* const> all_nodes = lister.List();
  if (all_nodes.empty()) return Status::Skip();

  auto s = std::make_unique<PreScoreState>();
  s->constraints = GetConstraints(pod, UnsatisfiableConstraintAction::kScheduleAnyway);
  if (s->constraints.empty()) return Status::Skip();
  const std::vector<Constraint>& cs = s->constraints;
  const size_t nc = cs.size();
  const std::string& ns = pod.metadata.namespace_;
  // Only non-system-default spreading requires every topology key, so that nodes without a zone
  // label still get hostname spreading.
  const bool require_all_topologies = !pod.spec.topology_spread_constraints.empty() || !system_defaulted_;

  // Hostname domains are counted per node in Score: they only need their domains (to tell
  // whether a node has the key), not arrays.
  std::vector<uint8_t> is_hostname(nc);
  s->topology_value_to_pod_counts.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    is_hostname[i] = cs[i].topology_key == api::kLabelHostname ? 1 : 0;
    auto domains = lister.Domains(cs[i].topology_key);
    if (is_hostname[i] != 0) {
      s->topology_value_to_pod_counts[i].domains = std::move(domains);
    } else {
      s->topology_value_to_pod_counts[i].Init(std::move(domains));
    }
  }
  // The domains holding a feasible node.
  std::vector<int32_t> slots(nc);
  auto find_slots = [&](const framework::NodeInfo& ni) {
    bool has_all_keys = true;
    for (size_t i = 0; i < nc; ++i) {
      slots[i] = s->topology_value_to_pod_counts[i].FindSlot(ni);
      has_all_keys = has_all_keys && slots[i] != framework::TopologyDomains::kNoDomain;
    }
    return has_all_keys;
  };
  for (const framework::NodeInfo* ni : filtered_nodes) {
    const api::Node* node = ni->node();
    if (node == nullptr) continue;
    if (!find_slots(*ni) && require_all_topologies) {
      s->ignored_nodes.insert(node->metadata.name);
      continue;
    }
    for (size_t i = 0; i < nc; ++i) {
      if (is_hostname[i] != 0) continue;
      DomainCounts<int64_t>& domains = s->topology_value_to_pod_counts[i];
      int32_t slot = slots[i];
      if (slot == framework::TopologyDomains::kNoDomain) {
        // Without require_all_topologies; upstream reads the missing label as the empty value.
        slot = domains.AddSlotOfValue("");
      } else if (slot == framework::TopologyDomains::kUnknownDomain) {
        slot = domains.AddSlot(*ni);
      }
      domains.MarkPresent(slot);
    }
  }
  s->topology_normalizing_weight.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    size_t size = s->topology_value_to_pod_counts[i].num_present;
    if (is_hostname[i] != 0) size = filtered_nodes.size() - s->ignored_nodes.size();
    s->topology_normalizing_weight[i] = TopologyNormalizingWeight(size);
  }

  // Count matching pods over all nodes in domains that hold a feasible node.
  const bool check_inclusion = NeedsInclusionCheck(pod, cs);
  {
    std::lock_guard lock(match_counts_->mu);
    match_counts_->BeginCycle();
    std::vector<MatchCountCache::Entry*> entries(nc, nullptr);  // null: nothing to count
    bool any = false;
    for (size_t i = 0; i < nc; ++i) {
      if (is_hostname[i] == 0 && !cs[i].selector_matches_nothing) {
        entries[i] = &match_counts_->Get(ns, cs[i].selector, all_nodes, handle_.parallelizer());
        any = true;
      }
    }
    // As in PreFilter, one serial pass with what it touches in locals. Slots are only looked up
    // here (a domain without a feasible node is not counted), the empty value's once.
    struct Lane {
      const framework::TopologyDomains* domains = nullptr;
      int64_t* counts = nullptr;  // null: nothing to count
      const Presence* present = nullptr;
      int32_t empty_value_slot = framework::TopologyDomains::kUnknownDomain;  // where nodes lacking the key count
    };
    std::vector<Lane> lanes(nc);
    for (size_t i = 0; i < nc; ++i) {
      DomainCounts<int64_t>& domains = s->topology_value_to_pod_counts[i];
      lanes[i].domains = domains.domains.get();
      if (entries[i] == nullptr) continue;
      lanes[i] = {domains.domains.get(), domains.counts.data(), domains.present.data(), domains.FindSlotOfValue("")};
    }
    for (size_t n = 0; any && n < all_nodes.size(); ++n) {
      const framework::NodeInfo& ni = *all_nodes[n];
      const api::Node* node = ni.node();
      if (node == nullptr) continue;
      bool has_all_keys = true;
      for (size_t i = 0; i < nc; ++i) {
        int32_t slot = lanes[i].domains->DomainOf(ni);
        if (slot == framework::TopologyDomains::kNoDomain) {
          has_all_keys = false;
          slot = lanes[i].empty_value_slot;
        } else if (slot == framework::TopologyDomains::kUnknownDomain && entries[i] != nullptr) {
          slot = s->topology_value_to_pod_counts[i].FindSlot(ni);
        }
        slots[i] = slot;
      }
      if (!has_all_keys && require_all_topologies) continue;
      NodeInclusion inclusion(pod, *node);
      for (size_t i = 0; i < nc; ++i) {
        const int32_t slot = slots[i];
        if (entries[i] == nullptr || slot < 0 || lanes[i].present[slot] != Presence::kPresent) continue;
        if (check_inclusion && !inclusion.Passes(cs[i])) continue;
        lanes[i].counts[slot] += entries[i]->Count(ni);
      }
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
  if (!s->ignored_nodes.empty() && s->ignored_nodes.contains(std::string_view(node->metadata.name))) {
    return {0, Status()};
  }

  const api::Pod& pod = pod_info.pod();
  double score = 0;
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const Constraint& c = s->constraints[i];
    const DomainCounts<int64_t>& domains = s->topology_value_to_pod_counts[i];
    const int32_t d = domains.domains->DomainOf(node_info);
    if (d == framework::TopologyDomains::kNoDomain) continue;
    int64_t count = 0;
    if (c.topology_key == api::kLabelHostname) {
      count = CountPodsMatchSelector(node_info.pods(), c, pod.metadata.namespace_);
    } else {
      const int32_t slot = d >= 0 ? d : domains.FindSlot(node_info);
      if (domains.IsPresent(slot)) count = domains.counts[slot];
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
  const bool any_ignored = !s->ignored_nodes.empty();
  for (auto& ns : scores) {
    if (any_ignored && s->ignored_nodes.contains(ns.name)) {
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

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<PodTopologySpread>(std::move(*parsed), handle);
}

}  // namespace kubesched::plugins::pod_topology_spread
