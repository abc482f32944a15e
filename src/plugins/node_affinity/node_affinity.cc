#include "plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <set>

#include "plugins/helper/normalize_score.h"

namespace kubesched::plugins::node_affinity {
namespace {

const framework::StateKey kPreFilterStateKey{"PreFilterNodeAffinity"};
const framework::StateKey kPreScoreStateKey{"PreScoreNodeAffinity"};

// The pod's parsed required node affinity. Holds the pod so the parsed terms' pointers stay valid
// for the whole cycle, including clones made for preemption.
struct PreFilterState final : framework::StateData {
  explicit PreFilterState(std::shared_ptr<const api::Pod> p) : pod(std::move(p)), required(*pod) {}
  std::shared_ptr<const api::Pod> pod;
  RequiredNodeAffinity required;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(pod); }
};

struct PreScoreState final : framework::StateData {
  std::shared_ptr<const api::Pod> pod;
  std::optional<PreferredSchedulingTerms> preferred;  // nullopt: the pod has no preferred terms
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

const api::NodeAffinity* PodNodeAffinity(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a && a->node_affinity ? &*a->node_affinity : nullptr;
}

// The pod's preferred terms parsed, nullopt when it has none (validation paths start at "[i]" as
// upstream parses them without a path).
std::expected<std::optional<PreferredSchedulingTerms>, std::string> PodPreferredTerms(const api::Pod& pod) {
  const api::NodeAffinity* na = PodNodeAffinity(pod);
  if (na == nullptr || na->preferred.empty()) return std::optional<PreferredSchedulingTerms>();
  auto terms = PreferredSchedulingTerms::Create(na->preferred, "");
  if (!terms) return std::unexpected(terms.error());
  return std::optional<PreferredSchedulingTerms>(std::move(*terms));
}

}  // namespace

NodeAffinity::NodeAffinity(NodeAffinityArgs args) : args_(std::move(args)) {
  if (!args_.added_affinity) return;
  const api::NodeAffinity& added = *args_.added_affinity;
  if (added.required) added_node_selector_.emplace(*added.required, "", /*collect_errors=*/false);
  if (!added.preferred.empty()) {
    // Validated by ParseArgs; an invalid term would simply be dropped here.
    auto terms = PreferredSchedulingTerms::Create(added.preferred, "");
    if (terms) added_preferred_ = std::move(*terms);
  }
}

std::pair<framework::PreFilterResult, framework::Status> NodeAffinity::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod_info,
    std::span<const framework::NodeInfo* const> /*nodes*/) {
  const api::Pod& pod = pod_info.pod();
  const api::NodeAffinity* na = PodNodeAffinity(pod);
  const bool no_required = na == nullptr || !na->required;
  if (no_required && !added_node_selector_ && pod.spec.node_selector.empty()) {
    return {{}, framework::Status::Skip()};
  }
  state.Write(kPreFilterStateKey, std::make_unique<PreFilterState>(pod_info.pod_ptr()));
  if (no_required || na->required->terms.empty()) return {{}, framework::Status::Success()};

  // Terms are ORed and requirements within a term ANDed: the candidate nodes are the union over
  // terms of the intersection of their metadata.name In lists, provided every term has one.
  std::set<std::string> node_names;
  for (const auto& term : na->required->terms) {
    std::optional<std::set<std::string>> term_names;
    for (const auto& r : term.match_fields) {
      if (r.key != "metadata.name" || r.op != api::SelectorOperator::kIn) continue;
      std::set<std::string> values(r.values.begin(), r.values.end());
      if (!term_names) {
        term_names = std::move(values);
      } else {
        std::erase_if(*term_names, [&](const std::string& n) { return !values.contains(n); });
      }
    }
    if (!term_names) return {{}, framework::Status::Success()};  // this term may match any node
    node_names.merge(*term_names);
  }
  if (node_names.empty()) {
    return {{}, framework::Status::UnschedulableAndUnresolvable(std::string(kErrReasonConflict))};
  }
  framework::PreFilterResult result;
  result.node_names = std::move(node_names);
  return {std::move(result), framework::Status::Success()};
}

framework::Status NodeAffinity::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                       const framework::NodeInfo& node_info) {
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  if (added_node_selector_ && !added_node_selector_->Match(*node)) {
    static const framework::StaticReasons kEnforced{kErrReasonEnforced};
    return framework::Status(framework::Code::kUnschedulableAndUnresolvable, kEnforced);
  }
  bool match;
  if (const auto* s = state.Get<PreFilterState>(kPreFilterStateKey)) {
    match = s->required.Match(*node);
  } else {
    // PreFilter did not run (or was disabled): parse here, as upstream falls back to.
    match = RequiredNodeAffinity(pod.pod()).Match(*node);
  }
  static const framework::StaticReasons kPod{kErrReasonPod};
  if (!match) return framework::Status(framework::Code::kUnschedulableAndUnresolvable, kPod);
  return framework::Status::Success();
}

framework::Status NodeAffinity::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                         std::span<const framework::NodeInfo* const> /*nodes*/) {
  auto preferred = PodPreferredTerms(pod.pod());
  if (!preferred) return framework::Status::Error(preferred.error());
  if (!*preferred && !added_preferred_) return framework::Status::Skip();
  auto s = std::make_unique<PreScoreState>();
  s->pod = pod.pod_ptr();
  s->preferred = std::move(*preferred);
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status::Success();
}

std::pair<int64_t, framework::Status> NodeAffinity::Score(const framework::CycleState& state,
                                                          const framework::PodInfo& pod,
                                                          const framework::NodeInfo& node_info) {
  const api::Node* node = node_info.node();
  if (node == nullptr) return {0, framework::Status::Error("node not found")};
  int64_t count = added_preferred_ ? added_preferred_->Score(*node) : 0;
  if (const auto* s = state.Get<PreScoreState>(kPreScoreStateKey)) {
    if (s->preferred) count += s->preferred->Score(*node);
    return {count, framework::Status::Success()};
  }
  // PreScore did not run: parse here, as upstream falls back to.
  auto preferred = PodPreferredTerms(pod.pod());
  if (!preferred) return {0, framework::Status::Error(preferred.error())};
  if (*preferred) count += (*preferred)->Score(*node);
  return {count, framework::Status::Success()};
}

framework::Status NodeAffinity::NormalizeScore(const framework::CycleState& /*state*/,
                                               const framework::PodInfo& /*pod*/, framework::NodeScoreList& scores) {
  return helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/false, scores);
}

framework::QueueingHint NodeAffinity::IsSchedulableAfterNodeChange(const api::Pod& pod,
                                                                   const framework::EventObjects& event) const {
  const api::Node* modified = event.new_node;
  if (modified == nullptr) return framework::QueueingHint::kQueue;
  if (added_node_selector_ && !added_node_selector_->Match(*modified)) return framework::QueueingHint::kSkip;

  RequiredNodeAffinity required(pod);
  bool parse_error = false;
  // Upstream returns an error (and Queue) when an invalid term was involved in a non-match.
  if (!required.Match(*modified, &parse_error)) {
    return parse_error ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
  }
  if (event.old_node == nullptr) return framework::QueueingHint::kQueue;  // a matching node was added
  // An update matters only when the node did not match before.
  bool was_matched = required.Match(*event.old_node, &parse_error);
  if (parse_error) return framework::QueueingHint::kQueue;
  return was_matched ? framework::QueueingHint::kSkip : framework::QueueingHint::kQueue;
}

std::vector<framework::ClusterEventWithHint> NodeAffinity::EventsToRegister() const {
  return {{{framework::EventResource::kNode, framework::action::kAdd | framework::action::kUpdateNodeLabel,
            "NodeAdd|UpdateNodeLabel"},
           [this](const api::Pod& pod, const framework::EventObjects& event) {
             return IsSchedulableAfterNodeChange(pod, event);
           }}};
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& /*handle*/) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<NodeAffinity>(std::move(*parsed));
}

}  // namespace kubesched::plugins::node_affinity
