#include "cmd/output.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/names.h"
#include "framework/resource.h"
#include "util/percentile.h"

namespace kubesched::cmd {

std::optional<OutputFormat> ParseOutputFormat(const std::string& text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  return std::nullopt;
}

namespace {

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
// Cross-node preemption's moves read "Moved to node <node> by pod <ns/name> ...".
std::string PreemptorOf(const std::string& reason) {
  constexpr std::string_view kBy = "by pod ";
  const size_t at = reason.find(kBy);
  if (at == std::string::npos || !(reason.starts_with("Preempted ") || reason.starts_with("Moved "))) return "";
  std::string rest = reason.substr(at + kBy.size());
  return rest.substr(0, rest.find(' '));
}

// A JSON string as nlohmann's dump writes it (control characters escaped, UTF-8 kept). Text
// that is not ASCII goes through nlohmann itself, which also rejects invalid UTF-8 as before.
void AppendJsonString(std::string& out, std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      out += nlohmann::json(std::string(s)).dump();
      return;
    }
  }
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void AppendJsonStringOrNull(std::string& out, std::string_view s) {
  if (s.empty()) {
    out += "null";
  } else {
    AppendJsonString(out, s);
  }
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return util::PercentileOfSorted(v, q);
}

std::string EvictionLine(const sim::Eviction& e) {
  std::string line = fmt::format("{}: {}: {}", e.pod->Key(), e.moved_to.empty() ? "Preempted" : "Moved", e.reason);
  if (e.replacement) line += fmt::format("; recreated as {}", e.replacement->Key());
  return line;
}

nlohmann::ordered_json SummaryJson(const sim::SimulationResult& result, const sim::SimulationSummary& sum) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["summary"] = {{"scheduled", sum.scheduled},
                  {"alreadyRunning", sum.already_running},
                  {"pending", sum.pending},
                  {"gated", sum.gated},
                  {"finished", sum.finished},
                  {"evicted", result.evictions.size()},
                  {"evictions", sum.evictions},
                  {"moves", sum.moves},
                  {"nodesUsed", sum.used_nodes.size()},
                  {"nodes", result.nodes.size()}};
  // The batch optimizer's verdict (null without BatchPlacement): proved optimal for every
  // batch, the largest relative gap to the bound, and the solver's time summed over batches.
  auto& s = j["summary"];
  if (const auto& o = result.optimizer) {
    // gap: the pods the batches placed against the pattern LP's bound (largest over batches);
    // runGap: the pods scheduled in the run against the run's bound.
    s["optimal"] = o->all_optimal;
    s["gap"] = o->max_placed_gap;
    s["solverSeconds"] = o->solver_seconds;
    s["optimizer"] = {{"batches", o->batches},
                      {"plans", o->plans},
                      {"pods", o->pods},
                      {"placed", o->placed},
                      {"planned", o->planned},
                      {"runBound", o->run_bound},
                      {"runGap", RunGap(*o, sum.scheduled)},
                      {"stranded", o->stranded},
                      {"objectiveGap", o->max_gap},
                      {"seconds", o->seconds},
                      {"solver", o->solver.empty() ? ordered_json(nullptr) : ordered_json(o->solver)}};
  } else {
    s["optimal"] = nullptr;
    s["gap"] = nullptr;
    s["solverSeconds"] = nullptr;
  }
  // Cross-node preemption's plans (null without the plugin): activePlans and heldMoves are what
  // was still in progress, and held, when the simulation ended.
  if (const auto& x = result.cross_node) {
    const auto& st = x->stats;
    s["crossNodePreemption"] = {{"plans", st.plans},
                                {"noPlan", st.no_plan},
                                {"completed", st.completed},
                                {"expired", st.expired},
                                {"evictions", st.evictions},
                                {"moves", st.moves},
                                {"optimal", st.optimal},
                                {"maxGap", st.max_gap},
                                {"solverSeconds", st.solver_seconds},
                                {"decisionMsP50", Percentile(st.decision_seconds, 0.5) * 1e3},
                                {"decisionMsP99", Percentile(st.decision_seconds, 0.99) * 1e3},
                                {"activePlans", x->active_plans},
                                {"heldMoves", x->held_moves},
                                {"protectedPods", st.protected_pods}};
    // Why plans expired, by reason (an empty object when none did).
    ordered_json expired_by = ordered_json::object();
    for (const auto& [why, n] : st.expired_by) expired_by[why] = n;
    s["crossNodePreemption"]["expiredBy"] = std::move(expired_by);
  } else {
    s["crossNodePreemption"] = nullptr;
  }
  // Scheduling cycles run (ScheduleOne calls, retries included): what a run's time goes into.
  s["attempts"] = result.attempts;
  return j["summary"];
}

}  // namespace

nlohmann::ordered_json ExplanationJson(const scheduler::AttemptExplanation& e) {
  using nlohmann::ordered_json;
  auto or_null = [](const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); };
  ordered_json j;
  j["pod"] = e.pod_key;
  j["profile"] = e.profile;
  j["selectedNode"] = or_null(e.selected_node);
  j["message"] = or_null(e.message);
  // What plugins deciding outside the cycle (the batch optimizer, cross-node preemption) say.
  j["plugins"] = ordered_json::array();
  for (const auto& [plugin, text] : e.plugin_notes) j["plugins"].push_back({{"plugin", plugin}, {"note", text}});
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

double RunGap(const plugins::batch_placement::BatchStats& o, size_t scheduled) {
  if (o.run_bound <= 0) return 0;
  return std::max(0.0, (o.run_bound - static_cast<double>(scheduled)) / o.run_bound);
}

std::string OptimizerLine(const plugins::batch_placement::BatchStats& o, size_t scheduled) {
  std::string line =
      fmt::format("optimizer: {} batch{} ({} plan{}), {} pods, {} placed ({} by plans)", o.batches,
                  o.batches == 1 ? "" : "es", o.plans, o.plans == 1 ? "" : "s", o.pods, o.placed, o.planned);
  line += o.all_optimal ? ", proved optimal"
          : o.max_placed_gap < 1e-9
              ? ", pods placed proved optimal in every batch (lower levels not proved)"
              : fmt::format(", placed up to {:.2f}% under a batch's bound", 100 * o.max_placed_gap);
  line += fmt::format(", run bound {:.0f} (gap {:.2f}%)", o.run_bound, 100 * RunGap(o, scheduled));
  line += fmt::format(", {:.2f} s", o.seconds);
  if (!o.solver.empty()) line += fmt::format(" ({} {:.2f} s)", o.solver, o.solver_seconds);
  return line;
}

void PrintSimulation(const sim::SimulationResult& result, OutputFormat format, std::ostream& out) {
  const sim::SimulationSummary sum = sim::Summarize(result);

  if (format == OutputFormat::kJson) {
    using nlohmann::ordered_json;
    // The pods (one object each, the bulk of the output) are written directly, in the layout
    // nlohmann's dump(2) gives the rest: building a JSON tree for every pod first cost more than
    // a tenth of a large simulation's run.
    ordered_json j;
    j["evicted"] = ordered_json::array();
    for (const auto& ev : result.evictions) {
      ordered_json e;
      e["namespace"] = ev.pod->metadata.namespace_;
      e["name"] = ev.pod->metadata.name;
      e["node"] = ev.pod->spec.node_name.empty() ? ordered_json(nullptr) : ordered_json(ev.pod->spec.node_name);
      e["status"] = ev.moved_to.empty() ? "Preempted" : "Moved";
      e["priority"] = ev.pod->Priority();
      const std::string by = PreemptorOf(ev.reason);
      e["preemptedBy"] = by.empty() ? ordered_json(nullptr) : ordered_json(by);
      e["reason"] = ev.reason;
      e["replacedBy"] = ev.replacement ? ordered_json(ev.replacement->Key()) : ordered_json(nullptr);
      if (!ev.moved_to.empty()) e["movedTo"] = ev.moved_to;
      j["evicted"].push_back(std::move(e));
    }
    j["summary"] = SummaryJson(result, sum);
    if (result.explanation) j["explanation"] = ExplanationJson(*result.explanation);
    // j.dump(2) opens with "{\n" and the members at two spaces: the pods go first, streamed (the
    // text of a large cluster's pods would otherwise be held whole, at the run's peak of memory).
    const std::string rest = j.dump(2);
    constexpr size_t kFlushBytes = 64 * 1024;
    out << "{\n  \"pods\": ";
    std::string pods = result.pods.empty() ? "[]" : "[\n";
    pods.reserve(kFlushBytes + 4096);
    for (size_t i = 0; i < result.pods.size(); ++i) {
      const api::Pod& p = *result.pods[i];
      std::string msg = SchedulingMessage(p);
      if (msg.empty() && p.spec.node_name.empty() && !p.spec.scheduling_gates.empty()) msg = GatedMessage(p);
      if (msg.empty() && p.spec.node_name.empty() && !sim::IsTerminal(p)) {
        msg = OtherSchedulerMessage(p, result.profiles);
      }
      pods += "    {\n      \"namespace\": ";
      AppendJsonString(pods, p.metadata.namespace_);
      pods += ",\n      \"name\": ";
      AppendJsonString(pods, p.metadata.name);
      pods += ",\n      \"node\": ";
      AppendJsonStringOrNull(pods, p.spec.node_name);
      pods += ",\n      \"status\": ";
      AppendJsonString(pods, PodStatus(p));
      pods += ",\n      \"phase\": ";
      AppendJsonString(pods, api::ToString(p.status.phase));
      pods += fmt::format(",\n      \"priority\": {},\n      \"nominatedNodeName\": ", p.Priority());
      AppendJsonStringOrNull(pods, p.status.nominated_node_name);
      pods += result.bound_in_input.contains(p.metadata.uid) ? ",\n      \"boundInInput\": true"
                                                             : ",\n      \"boundInInput\": false";
      pods += ",\n      \"message\": ";
      AppendJsonStringOrNull(pods, msg);
      pods += i + 1 < result.pods.size() ? "\n    },\n" : "\n    }\n  ]";
      if (pods.size() >= kFlushBytes) {
        out << pods;
        pods.clear();
      }
    }
    out << pods << ",\n" << std::string_view(rest).substr(2) << "\n";
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
  for (const auto& e : result.evictions) row(*e.pod, e.moved_to.empty() ? "Preempted" : "Moved");
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
    if (!p->spec.node_name.empty() || sim::IsTerminal(*p)) continue;
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
    if (std::string other = OtherSchedulerMessage(*p, result.profiles); !other.empty()) {
      line(fmt::format("{}: not scheduled: {}", p->Key(), other));
    }
  }
  for (const auto& e : result.evictions) line(EvictionLine(e));

  std::string summary = fmt::format("{} scheduled, {} pending", sum.scheduled, sum.pending);
  if (sum.already_running > 0) summary += fmt::format(", {} already running", sum.already_running);
  if (sum.finished > 0) summary += fmt::format(", {} finished", sum.finished);
  // Preempted counts plain evictions; moves (cross-node preemption) are counted apart.
  if (sum.evictions > 0) summary += fmt::format(", {} preempted", sum.evictions);
  if (sum.moves > 0) summary += fmt::format(", {} moved", sum.moves);
  summary += fmt::format(", {} nodes used (of {})", sum.used_nodes.size(), result.nodes.size());
  out << "\n";
  if (const auto& o = result.optimizer) out << OptimizerLine(*o, sum.scheduled) << "\n";
  if (const auto& x = result.cross_node; x && (x->stats.plans > 0 || x->stats.no_plan > 0)) {
    const auto& st = x->stats;
    std::string line =
        fmt::format("cross-node preemption: {} plan{} ({} proved optimal), {} evicted, {} moved, {} without a plan",
                    st.plans, st.plans == 1 ? "" : "s", st.optimal, st.evictions, st.moves, st.no_plan);
    if (st.expired > 0) {
      std::string why;
      for (const auto& [reason, n] : st.expired_by) why += fmt::format("{}{} x {}", why.empty() ? "" : "; ", n, reason);
      line += fmt::format(", {} expired ({})", st.expired, why);
    }
    // Decisions that reached a model (a pod with no candidate node at all is answered at once).
    if (!st.decision_seconds.empty()) {
      line += fmt::format(", decision p50 {:.1f} ms", Percentile(st.decision_seconds, 0.5) * 1e3);
    }
    out << line << "\n";
  }
  out << summary << "\n";
}

void PrintExplanation(const scheduler::AttemptExplanation& e, std::ostream& out) {
  out << fmt::format("Last scheduling attempt of {} (profile {}):\n", e.pod_key, e.profile);
  if (!e.selected_node.empty()) out << fmt::format("  selected node: {}\n", e.selected_node);
  if (!e.message.empty()) out << fmt::format("  FailedScheduling: {}\n", e.message);
  for (const auto& [plugin, text] : e.plugin_notes) out << fmt::format("  {}: {}\n", plugin, text);
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

namespace {

std::string Cpu(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return fmt::format("{}m", milli);
}

std::string Memory(int64_t bytes) {
  if (bytes >= 1000LL * 1000 * 1000) return fmt::format("{:.2f}G", static_cast<double>(bytes) / 1e9);
  return fmt::format("{}M", (bytes + 999999) / 1000000);
}

struct NodeUse {
  int pods = 0;
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  std::map<std::string, int> workloads;
};

std::map<std::string, NodeUse> UseByNode(const sim::SimulationResult& r) {
  std::map<std::string, NodeUse> out;
  for (const auto& p : r.pods) {
    if (p->spec.node_name.empty() || sim::IsTerminal(*p)) continue;
    NodeUse& u = out[p->spec.node_name];
    const framework::Resource req = framework::ComputePodRequests(p->spec);
    ++u.pods;
    u.milli_cpu += req.milli_cpu;
    u.memory += req.memory;
    ++u.workloads[api::WorkloadName(*p)];
  }
  return out;
}

std::string Workloads(const NodeUse& u) {
  std::string s;
  for (const auto& [w, n] : u.workloads) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", w, n);
  return s;
}

}  // namespace

void PrintComparison(const std::vector<ComparedRun>& runs, OutputFormat format, std::ostream& out) {
  std::vector<std::map<std::string, NodeUse>> use;
  for (const auto& r : runs) use.push_back(UseByNode(r.result));
  // Every run sees the same nodes (the same manifests); keep the input's order.
  const auto& nodes = runs.front().result.nodes;

  if (format == OutputFormat::kJson) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["configurations"] = ordered_json::array();
    for (size_t i = 0; i < runs.size(); ++i) {
      ordered_json c;
      c["name"] = runs[i].name;
      c["nodes"] = ordered_json::array();
      for (const auto& n : nodes) {
        const NodeUse& u = use[i][n->metadata.name];
        const framework::Resource alloc = framework::Resource::FromList(n->status.allocatable);
        ordered_json e;
        e["name"] = n->metadata.name;
        e["pods"] = u.pods;
        e["cpuRequested"] = Cpu(u.milli_cpu);
        e["cpuAllocatable"] = Cpu(alloc.milli_cpu);
        e["memoryRequested"] = u.memory;
        e["memoryAllocatable"] = alloc.memory;
        e["workloads"] = ordered_json::object();
        for (const auto& [w, k] : u.workloads) e["workloads"][w] = k;
        c["nodes"].push_back(std::move(e));
      }
      c["summary"] = SummaryJson(runs[i].result, sim::Summarize(runs[i].result));
      j["configurations"].push_back(std::move(c));
    }
    out << j.dump(2) << "\n";
    return;
  }

  // Per node: one block of columns per run.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"NODE"};
  for (const auto& r : runs) {
    header.push_back(r.name);
    header.push_back("CPU");
    header.push_back("MEMORY");
  }
  rows.push_back(header);
  for (const auto& n : nodes) {
    const framework::Resource alloc = framework::Resource::FromList(n->status.allocatable);
    std::vector<std::string> row = {n->metadata.name};
    for (size_t i = 0; i < runs.size(); ++i) {
      auto it = use[i].find(n->metadata.name);
      if (it == use[i].end()) {
        row.insert(row.end(), {"-", "", ""});
        continue;
      }
      const NodeUse& u = it->second;
      row.push_back(Workloads(u));
      row.push_back(Cpu(u.milli_cpu) + "/" + Cpu(alloc.milli_cpu));
      row.push_back(Memory(u.memory) + "/" + Memory(alloc.memory));
    }
    rows.push_back(std::move(row));
  }
  auto print = [&out](const std::vector<std::vector<std::string>>& table) {
    std::vector<size_t> width;
    for (const auto& row : table) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (width.size() <= c) width.push_back(0);
        width[c] = std::max(width[c], row[c].size());
      }
    }
    for (const auto& row : table) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        line += row[c];
        if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 3, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
  };
  print(rows);

  std::vector<std::vector<std::string>> summary = {
      {"CONFIGURATION", "SCHEDULED", "PENDING", "NODES USED", "SOLVER", "OPTIMAL"}};
  for (const auto& r : runs) {
    const sim::SimulationSummary s = sim::Summarize(r.result);
    std::string solver = "-", optimal = "-";
    if (const auto& o = r.result.optimizer) {
      solver = fmt::format("{:.2f} s{}", o->solver_seconds, o->solver.empty() ? "" : " (" + o->solver + ")");
      optimal = o->all_optimal ? "yes" : fmt::format("placed gap {:.2f}%", 100 * o->max_placed_gap);
    }
    summary.push_back({r.name, std::to_string(s.scheduled), std::to_string(s.pending),
                       fmt::format("{} of {}", s.used_nodes.size(), r.result.nodes.size()), solver, optimal});
  }
  out << "\n";
  print(summary);
}

}  // namespace kubesched::cmd
