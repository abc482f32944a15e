// `simulate --explain` and `run --record-plugin-results`: the detail of one pod's attempt,
// assembled after the cycle decided, from what the cycle computed (which nodes it filtered, the
// diagnosis, the scores). Nodes the cycle did not filter (sampling stopped before them, or the
// nominated node passed first) are filtered here for display only; nothing here feeds back into
// a decision.

#include <fmt/format.h>

#include "api/labels.h"
#include "api/taints.h"
#include "scheduler/scheduler.h"

namespace kubesched::scheduler {
namespace {

using framework::NodeInfo;
using framework::PodInfo;

std::string DescribeRequirement(const api::SelectorRequirement& r) {
  std::string values;
  for (const auto& v : r.values) values += (values.empty() ? "" : ",") + v;
  return values.empty() ? fmt::format("{} {}", r.key, api::ToString(r.op))
                        : fmt::format("{} {} [{}]", r.key, api::ToString(r.op), values);
}

std::string NodeLabel(const api::Node& node, const std::string& key) {
  const std::string* v = node.metadata.labels.Find(key);
  return v ? fmt::format("node has {}={}", key, *v) : fmt::format("node has no {}", key);
}

// The first thing in the pod's nodeSelector or required node affinity that the node fails.
std::string NodeAffinityDetail(const api::Pod& pod, const api::Node& node) {
  for (const auto& [key, value] : pod.spec.node_selector) {
    const std::string* v = node.metadata.labels.Find(key);
    if (!v || *v != value) return fmt::format("nodeSelector {}={}: {}", key, value, NodeLabel(node, key));
  }
  if (!pod.spec.affinity || !pod.spec.affinity->node_affinity || !pod.spec.affinity->node_affinity->required) {
    return "";
  }
  const auto& terms = pod.spec.affinity->node_affinity->required->terms;
  std::vector<std::string> misses;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (const auto& r : terms[i].match_expressions) {
      api::NodeSelectorTerm single;
      single.match_expressions.push_back(r);
      if (!single.Matches(node.metadata.name, node.metadata.labels)) {
        misses.push_back(
            fmt::format("nodeSelectorTerms[{}]: {} ({})", i, DescribeRequirement(r), NodeLabel(node, r.key)));
        break;
      }
    }
    for (const auto& r : terms[i].match_fields) {
      api::NodeSelectorTerm single;
      single.match_fields.push_back(r);
      if (!single.Matches(node.metadata.name, node.metadata.labels)) {
        misses.push_back(
            fmt::format("nodeSelectorTerms[{}]: field {} (node is {})", i, DescribeRequirement(r), node.metadata.name));
        break;
      }
    }
  }
  return fmt::format("{}", fmt::join(misses, "; "));
}

std::string FitDetail(const PodInfo& pod, const NodeInfo& node) {
  std::vector<std::string> parts;
  const framework::Resource& req = pod.requests;
  const framework::Resource& alloc = node.allocatable();
  const framework::Resource& used = node.requested();
  if (node.pods().size() + 1 > static_cast<size_t>(alloc.allowed_pod_number)) {
    parts.push_back(fmt::format("pods: {} running of {} allowed", node.pods().size(), alloc.allowed_pod_number));
  }
  auto check = [&](std::string_view name, int64_t want, int64_t have, int64_t cap, bool milli) {
    if (want == 0 || want <= cap - have) return;
    auto q = [&](int64_t v) { return milli ? fmt::format("{}m", v) : std::to_string(v); };
    parts.push_back(fmt::format("{}: requested {}, free {} of {} allocatable", name, q(want), q(cap - have), q(cap)));
  };
  check("cpu", req.milli_cpu, used.milli_cpu, alloc.milli_cpu, true);
  check("memory", req.memory, used.memory, alloc.memory, false);
  check("ephemeral-storage", req.ephemeral_storage, used.ephemeral_storage, alloc.ephemeral_storage, false);
  for (const auto& [name, want] : req.scalar) check(name, want, used.Scalar(name), alloc.Scalar(name), false);
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Pods of the snapshot in the node's domain of `key` that match `term`.
std::vector<const api::Pod*> MatchingPodsInDomain(const framework::AffinityTerm& term, const api::Node& node,
                                                  std::span<const NodeInfo* const> all, size_t limit) {
  std::vector<const api::Pod*> out;
  const std::string* domain = node.metadata.labels.Find(term.topology_key);
  if (!domain) return out;
  for (const NodeInfo* other : all) {
    const std::string* d = other->node()->metadata.labels.Find(term.topology_key);
    if (!d || *d != *domain) continue;
    for (const auto& p : other->pods()) {
      if (term.Matches(p->pod(), nullptr)) {
        out.push_back(&p->pod());
        if (out.size() >= limit) return out;
      }
    }
  }
  return out;
}

std::string InterPodAffinityDetail(const PodInfo& pod, const NodeInfo& node, std::span<const NodeInfo* const> all) {
  const api::Node& n = *node.node();
  for (size_t i = 0; i < pod.required_affinity_terms.size(); ++i) {
    const auto& t = pod.required_affinity_terms[i];
    if (!n.metadata.labels.Find(t.topology_key)) {
      return fmt::format("podAffinity term[{}]: node has no topology label {}", i, t.topology_key);
    }
    if (MatchingPodsInDomain(t, n, all, 1).empty()) {
      return fmt::format("podAffinity term[{}] ({}): no matching pod in this node's domain", i, t.topology_key);
    }
  }
  for (size_t i = 0; i < pod.required_anti_affinity_terms.size(); ++i) {
    const auto& t = pod.required_anti_affinity_terms[i];
    auto pods = MatchingPodsInDomain(t, n, all, 1);
    if (!pods.empty()) {
      return fmt::format("podAntiAffinity term[{}] ({}): pod {} runs in this node's domain", i, t.topology_key,
                         pods[0]->Key());
    }
  }
  // Existing pods whose anti-affinity terms match the incoming pod.
  for (const NodeInfo* other : all) {
    for (const auto& p : other->pods_with_required_anti_affinity()) {
      for (const auto& t : p->required_anti_affinity_terms) {
        const std::string* d = other->node()->metadata.labels.Find(t.topology_key);
        const std::string* mine = n.metadata.labels.Find(t.topology_key);
        if (d && mine && *d == *mine && t.Matches(pod.pod(), nullptr)) {
          return fmt::format("pod {} on {} has podAntiAffinity ({}) against this pod", p->pod().Key(), other->name(),
                             t.topology_key);
        }
      }
    }
  }
  return "";
}

std::string FilterDetail(std::string_view plugin, const PodInfo& pod, const NodeInfo& node,
                         std::span<const NodeInfo* const> all) {
  const api::Node& n = *node.node();
  if (plugin == "TaintToleration") {
    const api::Taint* t =
        api::FindMatchingUntoleratedTaint(n.spec.taints, pod.pod().spec.tolerations, api::DoNotScheduleTaintsFilter);
    if (t) {
      return t->value.empty() ? fmt::format("untolerated taint {}:{}", t->key, api::ToString(t->effect))
                              : fmt::format("untolerated taint {}={}:{}", t->key, t->value, api::ToString(t->effect));
    }
    return "";
  }
  if (plugin == "NodeAffinity") return NodeAffinityDetail(pod.pod(), n);
  if (plugin == "NodeResourcesFit") return FitDetail(pod, node);
  if (plugin == "InterPodAffinity") return InterPodAffinityDetail(pod, node, all);
  return "";
}

}  // namespace

void Scheduler::Explain(framework::runtime::Framework& fwk, framework::CycleState& state, const PodInfo& pod,
                        const Diagnosis& diagnosis, const std::vector<const NodeInfo*>& feasible,
                        const std::vector<framework::runtime::NodePluginScores>* scores, const std::string& selected,
                        const std::string& message) {
  AttemptExplanation e;
  e.pod_key = pod.pod().Key();
  e.profile = fwk.name();
  e.time_ns = clock_->NowNs();
  e.selected_node = selected;
  e.message = message;
  e.pre_filter_message = diagnosis.pre_filter_msg;
  e.plugin_notes = fwk.ExplainPod(pod.pod());
  std::set<std::string_view> feasible_names;
  for (const NodeInfo* n : feasible) feasible_names.insert(n->name());
  auto all = snapshot_->List();
  for (const NodeInfo* node : all) {
    AttemptExplanation::NodeDetail d;
    d.node = node->name();
    const bool failed_in_cycle = diagnosis.node_to_status.Contains(node->name());
    d.evaluated = feasible_names.contains(node->name()) || failed_in_cycle;
    if (!diagnosis.pre_filter_msg.empty()) {
      d.excluded = diagnosis.pre_filter_msg;
    } else if (explain_candidates_ && !explain_candidates_->contains(node->name())) {
      d.excluded = diagnosis.node_to_status.absent_status().Message();
    }
    if (d.excluded.empty()) {
      bool ok = true;
      for (auto& [plugin, status] : fwk.ExplainFilter(state, pod, *node)) {
        const bool passed = status.IsSuccess() || status.IsSkip();
        ok = ok && passed;
        std::string detail = passed ? "" : FilterDetail(plugin, pod, *node, all);
        d.filters.push_back({std::string(plugin), std::move(status), std::move(detail)});
      }
      // The cycle's own verdict wins for nodes it filtered (it also counted nominated pods).
      d.feasible = d.evaluated ? feasible_names.contains(node->name()) : ok;
      if (failed_in_cycle && ok) {
        const framework::Status& s = diagnosis.node_to_status.Get(node->name());
        d.filters.push_back(
            {s.plugin().empty() ? "(with nominated pods)" : std::string(s.plugin()) + " (with nominated pods)", s, ""});
      }
    }
    if (scores) {
      for (const auto& ns : *scores) {
        if (ns.node != node) continue;
        for (const auto& ps : ns.scores) {
          d.scores.push_back({std::string(ps.plugin), ps.raw, ps.normalized, ps.weight, ps.score});
        }
        d.total = ns.total;
      }
    }
    e.nodes.push_back(std::move(d));
  }
  explanation_ = std::move(e);
}

void Scheduler::FinishExplanation(const api::Pod& pod, AttemptExplanation::Result result, std::string_view message) {
  if (!explanation_) return;
  explanation_->result = result;
  if (!message.empty()) explanation_->message = message;
  if (options_.on_explained) options_.on_explained(pod, *explanation_);
}

}  // namespace kubesched::scheduler
