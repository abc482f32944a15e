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

namespace {

std::string StatusOf(const api::Pod& pod) { return pod.spec.node_name.empty() ? "Pending" : "Running"; }

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

}  // namespace

void PrintSimulation(const scheduler::SimulationResult& result, OutputFormat format, std::ostream& out) {
  std::set<std::string> used_nodes;
  size_t scheduled = 0, pending = 0;
  for (const auto& p : result.pods) {
    if (p->spec.node_name.empty()) {
      ++pending;
    } else {
      ++scheduled;
      used_nodes.insert(p->spec.node_name);
    }
  }

  if (format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["pods"] = nlohmann::ordered_json::array();
    for (const auto& p : result.pods) {
      nlohmann::ordered_json e;
      e["namespace"] = p->metadata.namespace_;
      e["name"] = p->metadata.name;
      e["node"] =
          p->spec.node_name.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p->spec.node_name);
      std::string msg = SchedulingMessage(*p);
      e["message"] = msg.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(msg);
      j["pods"].push_back(std::move(e));
    }
    j["summary"] = {{"scheduled", scheduled}, {"pending", pending}, {"nodesUsed", used_nodes.size()}};
    out << j.dump(2) << "\n";
    return;
  }

  std::set<std::string> namespaces;
  for (const auto& p : result.pods) namespaces.insert(p->metadata.namespace_);
  const bool show_ns = namespaces.size() > 1;
  const bool wide = format == OutputFormat::kWide;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  if (show_ns) header.push_back("NAMESPACE");
  header.insert(header.end(), {"NAME", "STATUS", "NODE"});
  if (wide) header.insert(header.end(), {"NOMINATED NODE", "PRIORITY", "SCHEDULER"});
  rows.push_back(header);
  for (const auto& p : result.pods) {
    std::vector<std::string> r;
    if (show_ns) r.push_back(p->metadata.namespace_);
    r.push_back(p->metadata.name);
    r.push_back(StatusOf(*p));
    r.push_back(p->spec.node_name.empty() ? "<none>" : p->spec.node_name);
    if (wide) {
      r.push_back(p->status.nominated_node_name.empty() ? "<none>" : p->status.nominated_node_name);
      r.push_back(std::to_string(p->Priority()));
      r.push_back(p->spec.scheduler_name);
    }
    rows.push_back(std::move(r));
  }
  PrintRows(rows, out);

  bool first = true;
  for (const auto& p : result.pods) {
    if (!p->spec.node_name.empty()) continue;
    std::string msg = SchedulingMessage(*p);
    if (msg.empty()) {
      bool ours =
          std::find(result.profiles.begin(), result.profiles.end(), p->spec.scheduler_name) != result.profiles.end();
      if (ours) continue;
      msg =
          fmt::format("not scheduled: schedulerName \"{}\" is not a profile of this scheduler", p->spec.scheduler_name);
      if (format != OutputFormat::kWide) continue;
    }
    if (first) {
      out << "\n";
      first = false;
    }
    out << fmt::format("{}/{}: FailedScheduling: {}\n", p->metadata.namespace_, p->metadata.name, msg);
  }
  if (wide && !result.evictions.empty()) {
    out << "\n";
    for (const auto& [pod, reason] : result.evictions) {
      out << fmt::format("{}/{}: Preempted: {}\n", pod->metadata.namespace_, pod->metadata.name, reason);
    }
  }
  out << fmt::format("\n{} scheduled, {} pending, {} nodes used (of {})\n", scheduled, pending, used_nodes.size(),
                     result.nodes.size());
}

void PrintExplanation(const scheduler::AttemptExplanation& e, std::ostream& out) {
  out << fmt::format("Last scheduling attempt of {} (profile {}):\n", e.pod_key, e.profile);
  if (!e.selected_node.empty()) out << fmt::format("  selected node: {}\n", e.selected_node);
  if (!e.message.empty()) out << fmt::format("  FailedScheduling: {}\n", e.message);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NODE", "FILTER", "SCORES (normalized x weight)", "TOTAL"});
  for (const auto& n : e.nodes) {
    std::string filters;
    for (const auto& [plugin, status] : n.filters) {
      if (!filters.empty()) filters += ", ";
      if (status.IsSuccess())
        filters += plugin + "=passed";
      else if (status.IsSkip())
        filters += plugin + "=skipped";
      else
        filters += fmt::format("{}={}({})", plugin, framework::ToString(status.code()), status.Message());
    }
    std::string scores;
    for (const auto& [plugin, score] : n.scores) {
      if (!scores.empty()) scores += ", ";
      scores += fmt::format("{}={}", plugin, score);
    }
    rows.push_back({n.node, n.feasible ? "passed" : filters, scores.empty() ? "-" : scores,
                    n.scores.empty() ? "-" : std::to_string(n.total)});
    if (n.feasible) rows.back()[1] = filters.empty() ? "passed" : filters;
  }
  PrintRows(rows, out);
}

}  // namespace kubesched::cmd
