#include "cmd/output.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kubesched::cmd {

std::optional<OutputFormat> ParseOutputFormat(const std::string& text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  return std::nullopt;
}

std::string SchedulingMessage(const api::Pod& pod) {
  if (!pod.spec.node_name.empty()) return "";
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodScheduled" && c.status == "False") return c.message;
  }
  return "";
}

std::string GatedMessage(const api::Pod& pod) {
  return fmt::format("waiting for scheduling gates to be removed: [{}]", fmt::join(pod.spec.scheduling_gates, " "));
}

namespace {

bool Terminal(const api::Pod& pod) {
  return pod.status.phase == api::PodPhase::kSucceeded || pod.status.phase == api::PodPhase::kFailed;
}

void PrintRows(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& r : rows) {
    if (widths.size() < r.size()) widths.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(widths[i] - r[i].size() + 3, ' ');
    }
    out << line << "\n";
  }
}

// "Preempted by pod <ns/name> on node <node>" (DefaultPreemption's reason): the preemptor.
std::string PreemptorOf(const std::string& reason) {
  constexpr std::string_view kPrefix = "Preempted by pod ";
  if (!reason.starts_with(kPrefix)) return "";
  std::string rest = reason.substr(kPrefix.size());
  return rest.substr(0, rest.find(' '));
}

std::string EvictionLine(const cluster::Eviction& e) {
  std::string line = fmt::format("{}: Preempted: {}", e.pod->Key(), e.reason);
  if (e.replacement) line += fmt::format("; recreated as {}", e.replacement->Key());
  return line;
}

struct Summary {
  size_t scheduled = 0;        // bound during this run
  size_t already_running = 0;  // bound in the input
  size_t pending = 0;
  size_t gated = 0;
  size_t finished = 0;  // Succeeded or Failed
  size_t terminating = 0;
  std::set<std::string> used_nodes;
};

Summary Summarize(const scheduler::SimulationResult& result) {
  Summary s;
  for (const auto& p : result.pods) {
    if (Terminal(*p)) {
      ++s.finished;
      continue;
    }
    if (p->metadata.deletion_timestamp_ns) ++s.terminating;
    if (p->spec.node_name.empty()) {
      ++s.pending;
      if (!p->spec.scheduling_gates.empty()) ++s.gated;
      continue;
    }
    s.used_nodes.insert(p->spec.node_name);
    if (result.bound_in_input.contains(p->metadata.uid)) {
      ++s.already_running;
    } else {
      ++s.scheduled;
    }
  }
  return s;
}

}  // namespace

std::string PodStatus(const api::Pod& pod) {
  if (pod.metadata.deletion_timestamp_ns) return "Terminating";
  if (pod.status.phase == api::PodPhase::kSucceeded) return "Succeeded";
  if (pod.status.phase == api::PodPhase::kFailed) return "Failed";
  if (pod.spec.node_name.empty()) return pod.spec.scheduling_gates.empty() ? "Pending" : "SchedulingGated";
  return pod.status.phase == api::PodPhase::kPending ? "Pending" : "Running";
}

nlohmann::ordered_json ExplanationJson(const scheduler::AttemptExplanation& e) {
  using nlohmann::ordered_json;
  auto or_null = [](const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); };
  ordered_json j;
  j["pod"] = e.pod_key;
  j["profile"] = e.profile;
  j["selectedNode"] = or_null(e.selected_node);
  j["message"] = or_null(e.message);
  j["nodes"] = ordered_json::array();
  for (const auto& n : e.nodes) {
    ordered_json node;
    node["name"] = n.node;
    node["feasible"] = n.feasible;
    node["evaluated"] = n.evaluated;
    if (!n.excluded.empty()) node["excluded"] = n.excluded;
    node["filters"] = ordered_json::array();
    for (const auto& f : n.filters) {
      ordered_json fj;
      fj["plugin"] = f.plugin;
      fj["code"] = std::string(f.status.IsSuccess() ? "Success" : framework::ToString(f.status.code()));
      if (!f.status.reasons().empty()) fj["reasons"] = f.status.reasons();
      if (!f.detail.empty()) fj["detail"] = f.detail;
      node["filters"].push_back(std::move(fj));
    }
    node["scores"] = ordered_json::array();
    for (const auto& sc : n.scores) {
      node["scores"].push_back({{"plugin", sc.plugin},
                                {"raw", sc.raw},
                                {"normalized", sc.normalized},
                                {"weight", sc.weight},
                                {"weighted", sc.weighted}});
    }
    node["total"] = n.scores.empty() ? ordered_json(nullptr) : ordered_json(n.total);
    j["nodes"].push_back(std::move(node));
  }
  return j;
}

void PrintSimulation(const scheduler::SimulationResult& result, OutputFormat format, std::ostream& out) {
  const Summary sum = Summarize(result);

  if (format == OutputFormat::kJson) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["pods"] = ordered_json::array();
    for (const auto& p : result.pods) {
      ordered_json e;
      e["namespace"] = p->metadata.namespace_;
      e["name"] = p->metadata.name;
      e["node"] = p->spec.node_name.empty() ? ordered_json(nullptr) : ordered_json(p->spec.node_name);
      e["status"] = PodStatus(*p);
      e["phase"] = std::string(api::ToString(p->status.phase));
      e["priority"] = p->Priority();
      e["nominatedNodeName"] =
          p->status.nominated_node_name.empty() ? ordered_json(nullptr) : ordered_json(p->status.nominated_node_name);
      e["boundInInput"] = result.bound_in_input.contains(p->metadata.uid);
      std::string msg = SchedulingMessage(*p);
      if (msg.empty() && p->spec.node_name.empty() && !p->spec.scheduling_gates.empty()) msg = GatedMessage(*p);
      e["message"] = msg.empty() ? ordered_json(nullptr) : ordered_json(msg);
      j["pods"].push_back(std::move(e));
    }
    j["evicted"] = ordered_json::array();
    for (const auto& ev : result.evictions) {
      ordered_json e;
      e["namespace"] = ev.pod->metadata.namespace_;
      e["name"] = ev.pod->metadata.name;
      e["node"] = ev.pod->spec.node_name.empty() ? ordered_json(nullptr) : ordered_json(ev.pod->spec.node_name);
      e["status"] = "Preempted";
      e["priority"] = ev.pod->Priority();
      const std::string by = PreemptorOf(ev.reason);
      e["preemptedBy"] = by.empty() ? ordered_json(nullptr) : ordered_json(by);
      e["reason"] = ev.reason;
      e["replacedBy"] = ev.replacement ? ordered_json(ev.replacement->Key()) : ordered_json(nullptr);
      j["evicted"].push_back(std::move(e));
    }
    j["summary"] = {{"scheduled", sum.scheduled},
                    {"alreadyRunning", sum.already_running},
                    {"pending", sum.pending},
                    {"gated", sum.gated},
                    {"finished", sum.finished},
                    {"evicted", result.evictions.size()},
                    {"nodesUsed", sum.used_nodes.size()},
                    {"nodes", result.nodes.size()}};
    if (result.explanation) j["explanation"] = ExplanationJson(*result.explanation);
    out << j.dump(2) << "\n";
    return;
  }

  std::set<std::string> namespaces;
  for (const auto& p : result.pods) namespaces.insert(p->metadata.namespace_);
  for (const auto& e : result.evictions) namespaces.insert(e.pod->metadata.namespace_);
  const bool show_ns = namespaces.size() > 1;
  const bool wide = format == OutputFormat::kWide;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  if (show_ns) header.push_back("NAMESPACE");
  header.insert(header.end(), {"NAME", "STATUS", "NODE"});
  if (wide) header.insert(header.end(), {"NOMINATED NODE", "PRIORITY", "SCHEDULER"});
  rows.push_back(header);
  auto row = [&](const api::Pod& p, const std::string& status) {
    std::vector<std::string> r;
    if (show_ns) r.push_back(p.metadata.namespace_);
    r.push_back(p.metadata.name);
    r.push_back(status);
    r.push_back(p.spec.node_name.empty() ? "<none>" : p.spec.node_name);
    if (wide) {
      r.push_back(p.status.nominated_node_name.empty() ? "<none>" : p.status.nominated_node_name);
      r.push_back(std::to_string(p.Priority()));
      r.push_back(p.spec.scheduler_name);
    }
    rows.push_back(std::move(r));
  };
  for (const auto& p : result.pods) row(*p, PodStatus(*p));
  for (const auto& e : result.evictions) row(*e.pod, "Preempted");
  PrintRows(rows, out);

  bool first = true;
  auto line = [&](const std::string& text) {
    if (first) {
      out << "\n";
      first = false;
    }
    out << text << "\n";
  };
  for (const auto& p : result.pods) {
    if (!p->spec.node_name.empty() || Terminal(*p)) continue;
    std::string msg = SchedulingMessage(*p);
    if (!msg.empty()) {
      line(fmt::format("{}: FailedScheduling: {}", p->Key(), msg));
      continue;
    }
    if (!p->spec.scheduling_gates.empty()) {
      line(fmt::format("{}: SchedulingGated: {}", p->Key(), GatedMessage(*p)));
      continue;
    }
    if (p->metadata.deletion_timestamp_ns) {
      line(fmt::format("{}: not scheduled: the pod is being deleted", p->Key()));
      continue;
    }
    bool ours =
        std::find(result.profiles.begin(), result.profiles.end(), p->spec.scheduler_name) != result.profiles.end();
    if (!ours && wide) {
      line(fmt::format("{}: not scheduled: schedulerName \"{}\" is not a profile of this scheduler", p->Key(),
                       p->spec.scheduler_name));
    }
  }
  for (const auto& e : result.evictions) line(EvictionLine(e));

  std::string summary = fmt::format("{} scheduled, {} pending", sum.scheduled, sum.pending);
  if (sum.already_running > 0) summary += fmt::format(", {} already running", sum.already_running);
  if (sum.finished > 0) summary += fmt::format(", {} finished", sum.finished);
  if (!result.evictions.empty()) summary += fmt::format(", {} preempted", result.evictions.size());
  summary += fmt::format(", {} nodes used (of {})", sum.used_nodes.size(), result.nodes.size());
  out << "\n" << summary << "\n";
}

void PrintExplanation(const scheduler::AttemptExplanation& e, std::ostream& out) {
  out << fmt::format("Last scheduling attempt of {} (profile {}):\n", e.pod_key, e.profile);
  if (!e.selected_node.empty()) out << fmt::format("  selected node: {}\n", e.selected_node);
  if (!e.message.empty()) out << fmt::format("  FailedScheduling: {}\n", e.message);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NODE", "FILTER", "SCORES (plugin=raw>normalized*weight)", "TOTAL"});
  bool any_unevaluated = false;
  for (const auto& n : e.nodes) {
    std::string filters;
    if (!n.excluded.empty()) {
      filters = "excluded by PreFilter: " + n.excluded;
    } else if (n.feasible) {
      filters = "passed";
    } else {
      for (const auto& f : n.filters) {
        if (f.status.IsSuccess() || f.status.IsSkip()) continue;
        if (!filters.empty()) filters += "; ";
        filters += fmt::format("{}: {}", f.plugin, f.status.Message());
        if (!f.detail.empty()) filters += fmt::format(" [{}]", f.detail);
      }
    }
    if (!n.evaluated && n.excluded.empty()) {
      filters += " *";
      any_unevaluated = true;
    }
    std::string scores;
    for (const auto& sc : n.scores) {
      if (!scores.empty()) scores += ", ";
      scores += fmt::format("{}={}>{}*{}", sc.plugin, sc.raw, sc.normalized, sc.weight);
    }
    rows.push_back({n.node, filters, scores.empty() ? "-" : scores, n.scores.empty() ? "-" : std::to_string(n.total)});
  }
  PrintRows(rows, out);
  if (any_unevaluated) {
    out << "* not filtered by the scheduling cycle (node sampling stopped before it, or the nominated node was "
           "chosen); filtered here for display only\n";
  }
}

}  // namespace kubesched::cmd
