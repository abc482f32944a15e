#include "plugins/helper/placement_input.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "api/taints.h"
#include "plugins/node_affinity/node_selector.h"

namespace kubesched::plugins::helper {

using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

std::string Uid(const api::Pod& pod) { return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid; }

}  // namespace

PodInfoPtr RelaxedForPlacement(const PodInfo& pi) {
  auto pod = std::make_shared<api::Pod>(pi.pod());
  if (pod->spec.affinity && pod->spec.affinity->pod_affinity) pod->spec.affinity->pod_affinity->required.clear();
  std::erase_if(pod->spec.topology_spread_constraints, [](const api::TopologySpreadConstraint& c) {
    return c.when_unsatisfiable == api::UnsatisfiableConstraintAction::kDoNotSchedule;
  });
  return PodInfo::Create(std::move(pod));
}

optimizer::PlacementInput MakePlacementInput(framework::Handle& handle, const std::vector<PodInfoPtr>& pods,
                                             std::span<const framework::NodeInfo* const> nodes) {
  optimizer::PlacementInput in;
  in.pods = pods;
  in.nodes = nodes;
  framework::Handle* h = &handle;
  in.static_fit = [h](const PodInfo& pod) -> std::function<std::string(const framework::NodeInfo&)> {
    PodInfoPtr relaxed = RelaxedForPlacement(pod);
    auto state = std::make_shared<framework::CycleState>();
    auto [pre, status] = h->RunPreFilterPlugins(*state, *relaxed);
    if (!status.IsSuccess()) {
      std::string why = status.Message();
      return [why](const framework::NodeInfo&) { return why; };
    }
    return [h, relaxed, state, pre](const framework::NodeInfo& node) -> std::string {
      if (!pre.AllNodes() && !pre.node_names->contains(node.name())) return "excluded by PreFilter";
      Status s = h->RunFilterPlugins(*state, *relaxed, node);
      if (s.IsSuccess()) return "";
      return s.Message().empty() ? std::string("rejected by a filter") : s.Message();
    };
  };
  // The profile's scores of each node class for the group, as the pod's own cycle would rank them
  // on the snapshot before the placement: the tie-break between otherwise equal placements.
  in.scores = [h](const PodInfo& pod, std::span<const framework::NodeInfo* const> nodes) -> std::vector<int64_t> {
    PodInfoPtr relaxed = RelaxedForPlacement(pod);
    framework::CycleState state;
    auto [pre, status] = h->RunPreFilterPlugins(state, *relaxed);
    if (!status.IsSuccess()) return {};
    auto [totals, s] = h->RunScoreTotals(state, *relaxed, nodes);
    if (!s.IsSuccess()) return {};
    return totals;
  };
  in.spread_node_eligible = [](const PodInfo& pod, const framework::NodeInfo& node, bool honor_affinity,
                               bool honor_taints) {
    if (honor_affinity && !node_affinity::RequiredNodeAffinity(pod.pod()).Match(*node.node())) return false;
    if (honor_taints && api::FindMatchingUntoleratedTaint(node.node()->spec.taints, pod.pod().spec.tolerations,
                                                          api::DoNotScheduleTaintsFilter) != nullptr) {
      return false;
    }
    return true;
  };
  in.namespace_labels = [h, cache = std::make_shared<std::map<std::string, std::optional<api::Labels>, std::less<>>>()](
                            std::string_view ns) -> const api::Labels* {
    auto it = cache->find(ns);
    if (it == cache->end()) it = cache->emplace(std::string(ns), h->client().NamespaceLabels(ns)).first;
    return it->second ? &*it->second : nullptr;
  };
  // Room promised to pods outside this placement: nominations (preemption) and earlier plans.
  std::set<std::string> placing;
  for (const auto& p : pods) placing.insert(Uid(p->pod()));
  in.reserved = [h, placing = std::move(placing)](const framework::NodeInfo& node) {
    framework::Resource r;
    for (const auto& p : h->nominator().NominatedPodsForNode(node.name())) {
      if (placing.contains(Uid(p->pod()))) continue;
      r.Add(p->requests);
      r.allowed_pod_number += 1;
    }
    return r;
  };
  return in;
}

}  // namespace kubesched::plugins::helper
