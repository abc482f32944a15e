#include "cmd/output.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "api/names.h"
#include "framework/args_view.h"
#include "framework/args_writer.h"
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
  if (!(reason.starts_with("Preempted ") || reason.starts_with("Moved "))) return "";
  // A pod's preemption names the pod; a pod group's (KEP-5710) the group.
  std::string_view by = "by pod ";
  size_t at = reason.find(by);
  if (at == std::string::npos) {
    by = "by podgroup ";
    at = reason.find(by);
  }
  if (at == std::string::npos) return "";
  std::string rest = reason.substr(at + by.size());
  return rest.substr(0, rest.find(' '));
}

// A JSON string as `-o json` has always written it (nlohmann/json's escapes: control characters
// as \u00xx in lower case, UTF-8 kept as it is).
void AppendJsonString(std::string& out, std::string_view s) { out += framework::QuoteMessageString(s); }

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

// A string, or null when empty.
void StringOrNull(framework::ArgsWriter& w, std::string_view s) {
  if (s.empty()) {
    w.Null();
  } else {
    w.String(s);
  }
}

// The pods preemption deleted ("evicted" of `-o json`), in order.
void WriteEvictedJson(const sim::SimulationResult& result, framework::ArgsWriter& j) {
  j.StartArray();
  for (const auto& ev : result.evictions) {
    j.StartObject();
    j.Key("namespace").String(ev.pod->metadata.namespace_);
    j.Key("name").String(ev.pod->metadata.name);
    StringOrNull(j.Key("node"), ev.pod->spec.node_name);
    j.Key("status").String(ev.moved_to.empty() ? "Preempted" : "Moved");
    j.Key("priority").Int64(ev.pod->Priority());
    StringOrNull(j.Key("preemptedBy"), PreemptorOf(ev.reason));
    j.Key("reason").String(ev.reason);
    j.Key("replacedBy");
    if (ev.replacement) {
      j.String(ev.replacement->Key());
    } else {
      j.Null();
    }
    if (!ev.moved_to.empty()) j.Key("movedTo").String(ev.moved_to);
    j.EndObject();
  }
  j.EndArray();
}

// The run's summary object ("summary" of `-o json`).
void WriteSummaryJson(const sim::SimulationResult& result, const sim::SimulationSummary& sum,
                      framework::ArgsWriter& w) {
  const auto count = [](size_t n) { return static_cast<int64_t>(n); };
  w.StartObject();
  w.Key("scheduled").Int64(count(sum.scheduled));
  w.Key("alreadyRunning").Int64(count(sum.already_running));
  w.Key("pending").Int64(count(sum.pending));
  w.Key("gated").Int64(count(sum.gated));
  w.Key("finished").Int64(count(sum.finished));
  w.Key("evicted").Int64(count(result.evictions.size()));
  w.Key("evictions").Int64(count(sum.evictions));
  w.Key("moves").Int64(count(sum.moves));
  w.Key("nodesUsed").Int64(count(sum.used_nodes.size()));
  w.Key("nodes").Int64(count(result.nodes.size()));
  // The batch optimizer's verdict (null without BatchPlacement): proved optimal for every
  // batch, the largest relative gap to the bound, and the solver's time summed over batches.
  if (const auto& o = result.optimizer) {
    // gap: the pods the batches placed against the pattern LP's bound (largest over batches);
    // runGap: the pods scheduled in the run against the run's bound.
    w.Key("optimal").Bool(o->all_optimal);
    w.Key("gap").Double(o->max_placed_gap);
    w.Key("solverSeconds").Double(o->solver_seconds);
    w.Key("optimizer").StartObject();
    w.Key("batches").Int64(o->batches);
    w.Key("plans").Int64(o->plans);
    w.Key("pods").Int64(o->pods);
    w.Key("placed").Int64(o->placed);
    w.Key("planned").Int64(o->planned);
    w.Key("runBound").Double(o->run_bound);
    w.Key("runGap").Double(RunGap(*o, sum.scheduled));
    w.Key("stranded").Double(o->stranded);
    w.Key("objectiveGap").Double(o->max_gap);
    w.Key("seconds").Double(o->seconds);
    StringOrNull(w.Key("solver"), o->solver);
    w.EndObject();
  } else {
    w.Key("optimal").Null();
    w.Key("gap").Null();
    w.Key("solverSeconds").Null();
  }
  // Cross-node preemption's plans (null without the plugin): activePlans and heldMoves are what
  // was still in progress, and held, when the simulation ended.
  w.Key("crossNodePreemption");
  if (const auto& x = result.cross_node) {
    const auto& st = x->stats;
    w.StartObject();
    w.Key("plans").Int64(st.plans);
    w.Key("noPlan").Int64(st.no_plan);
    w.Key("completed").Int64(st.completed);
    w.Key("expired").Int64(st.expired);
    w.Key("evictions").Int64(st.evictions);
    w.Key("moves").Int64(st.moves);
    w.Key("optimal").Int64(st.optimal);
    w.Key("maxGap").Double(st.max_gap);
    w.Key("solverSeconds").Double(st.solver_seconds);
    w.Key("decisionMsP50").Double(Percentile(st.decision_seconds, 0.5) * 1e3);
    w.Key("decisionMsP99").Double(Percentile(st.decision_seconds, 0.99) * 1e3);
    w.Key("activePlans").Int64(count(x->active_plans));
    w.Key("heldMoves").Int64(count(x->held_moves));
    w.Key("protectedPods").Int64(st.protected_pods);
    // Why plans expired, by reason (an empty object when none did).
    w.Key("expiredBy").StartObject();
    for (const auto& [why, n] : st.expired_by) w.Key(why).Int64(n);
    w.EndObject();
    w.EndObject();
  } else {
    w.Null();
  }
  // Scheduling cycles run (ScheduleOne calls, retries included): what a run's time goes into.
  w.Key("attempts").Int64(count(result.attempts));
  w.EndObject();
}

// The pod groups' last decisions ("podGroups" of `-o json`, present when a group cycle ran).
void WritePodGroupsJson(const plugins::gang_scheduling::GangReport& report, framework::ArgsWriter& w) {
  w.StartObject();
  w.Key("cycles").Int64(report.stats.cycles);
  w.Key("allOptimal").Bool(report.stats.all_optimal);
  w.Key("seconds").Double(report.stats.seconds);
  w.Key("preemptions").Int64(report.stats.preemptions);
  w.Key("preemptedPods").Int64(report.stats.preempted_pods);
  w.Key("movedPods").Int64(report.stats.moved_pods);
  w.Key("groups").StartArray();
  for (const auto& [key, d] : report.groups) {
    w.StartObject();
    w.Key("name").String(key);
    w.Key("placed").Bool(d.placed);
    w.Key("minCount").Int64(d.min_count);
    StringOrNull(w.Key("domain"), d.domain);
    w.Key("optimal").Bool(d.optimal);
    StringOrNull(w.Key("message"), d.message);
    w.Key("preemptedPods").Int64(d.preempted_pods);
    w.Key("movedPods").Int64(d.moved_pods);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// One line per pod group the group cycles decided about: placed whole (and where) or pending.
std::string PodGroupsText(const plugins::gang_scheduling::GangReport& report) {
  const auto& st = report.stats;
  std::string out =
      fmt::format("pod groups: {} group cycle{}, {} placed whole, {} found no room ({})\n", st.cycles,
                  st.cycles == 1 ? "" : "s", st.placed, st.unschedulable,
                  st.all_optimal ? "every placement proved optimal" : "not every placement proved optimal");
  if (st.preemptions > 0) {
    out += fmt::format("  {} group preemption{} took {} pods of lower priority, {} of them moved\n", st.preemptions,
                       st.preemptions == 1 ? "" : "s", st.preempted_pods, st.moved_pods);
  }
  for (const auto& [key, d] : report.groups) {
    const std::string preempted =
        d.preempted_pods > 0 ? fmt::format(" after preempting {} pods ({} moved)", d.preempted_pods, d.moved_pods) : "";
    if (d.placed) {
      out +=
          fmt::format("  {}: placed whole{}{}\n", key, d.domain.empty() ? std::string() : " in " + d.domain, preempted);
    } else {
      out += fmt::format("  {}: pending: {}\n", key, d.message);
    }
  }
  return out;
}

// JSON text indented as `-o json` has always been (two spaces a level, fields in order).
std::string Indented(const framework::ArgsWriter& w) {
  auto doc = framework::ArgsDocument::Parse(w.text());
  return doc ? doc->View().EncodePretty() : w.text();
}

}  // namespace

void WriteExplanationJson(const scheduler::AttemptExplanation& e, framework::ArgsWriter& w) {
  w.StartObject();
  w.Key("pod").String(e.pod_key);
  w.Key("profile").String(e.profile);
  StringOrNull(w.Key("selectedNode"), e.selected_node);
  StringOrNull(w.Key("message"), e.message);
  // What plugins deciding outside the cycle (the batch optimizer, cross-node preemption) say.
  w.Key("plugins").StartArray();
  for (const auto& [plugin, text] : e.plugin_notes) {
    w.StartObject().Key("plugin").String(plugin).Key("note").String(text).EndObject();
  }
  w.EndArray();
  w.Key("nodes").StartArray();
  for (const auto& n : e.nodes) {
    w.StartObject();
    w.Key("name").String(n.node);
    w.Key("feasible").Bool(n.feasible);
    w.Key("evaluated").Bool(n.evaluated);
    if (!n.excluded.empty()) w.Key("excluded").String(n.excluded);
    w.Key("filters").StartArray();
    for (const auto& f : n.filters) {
      w.StartObject();
      w.Key("plugin").String(f.plugin);
      w.Key("code").String(f.status.IsSuccess() ? "Success" : framework::ToString(f.status.code()));
      if (!f.status.reasons().empty()) w.Key("reasons").StringList(f.status.reasons());
      if (!f.detail.empty()) w.Key("detail").String(f.detail);
      w.EndObject();
    }
    w.EndArray();
    w.Key("scores").StartArray();
    for (const auto& sc : n.scores) {
      w.StartObject();
      w.Key("plugin").String(sc.plugin);
      w.Key("raw").Int64(sc.raw);
      w.Key("normalized").Int64(sc.normalized);
      w.Key("weight").Int64(sc.weight);
      w.Key("weighted").Int64(sc.weighted);
      w.EndObject();
    }
    w.EndArray();
    w.Key("total");
    if (n.scores.empty()) {
      w.Null();
    } else {
      w.Int64(n.total);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
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

// The claims and volumes at the end ("persistentVolumeClaims" and "persistentVolumes" of `-o json`,
// present when the input has storage): where each claim's volume is and which node chose it.
void WriteStorageJson(const sim::SimulationResult& result, framework::ArgsWriter& j) {
  j.Key("persistentVolumeClaims").StartArray();
  for (const auto& c : result.claims) {
    j.StartObject();
    j.Key("namespace").String(c->metadata.namespace_);
    j.Key("name").String(c->metadata.name);
    j.Key("phase").String(c->phase == api::PersistentVolumeClaimPhase::kBound  ? "Bound"
                          : c->phase == api::PersistentVolumeClaimPhase::kLost ? "Lost"
                                                                               : "Pending");
    StringOrNull(j.Key("storageClassName"), std::string(c->ClassName()));
    StringOrNull(j.Key("volumeName"), c->volume_name);
    const std::string* selected = c->metadata.annotations.Find(api::kAnnotationSelectedNode);
    StringOrNull(j.Key("selectedNode"), selected != nullptr ? *selected : std::string());
    j.EndObject();
  }
  j.EndArray();
  j.Key("persistentVolumes").StartArray();
  for (const auto& v : result.volumes) {
    j.StartObject();
    j.Key("name").String(v->metadata.name);
    j.Key("capacity").String(v->capacity.text());
    StringOrNull(j.Key("storageClassName"), v->storage_class_name);
    StringOrNull(j.Key("claim"), v->claim_ref ? v->claim_ref->namespace_ + "/" + v->claim_ref->name : std::string());
    // The node labels the volume is reachable from: "key=value" for each single-value In term.
    j.Key("nodeAffinity").StartArray();
    if (v->node_affinity) {
      for (const auto& term : v->node_affinity->terms) {
        for (const auto& r : term.match_expressions) {
          for (const auto& value : r.values) j.String(r.key + "=" + value);
        }
      }
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
}

// The ResourceClaims at the end ("resourceClaims" of `-o json`, present when the input has any):
// the devices each was allocated (with the capacity consumed on shared ones) and its pods.
void WriteResourceClaimsJson(const sim::SimulationResult& result, framework::ArgsWriter& j) {
  j.Key("resourceClaims").StartArray();
  for (const auto& c : result.resource_claims) {
    j.StartObject();
    j.Key("namespace").String(c->metadata.namespace_);
    j.Key("name").String(c->metadata.name);
    j.Key("allocated").Bool(c->allocation.has_value());
    j.Key("devices").StartArray();
    if (c->allocation) {
      for (const auto& d : c->allocation->devices) {
        j.StartObject();
        j.Key("request").String(d.request);
        j.Key("driver").String(d.driver);
        j.Key("pool").String(d.pool);
        j.Key("device").String(d.device);
        if (d.share_id) j.Key("shareID").String(*d.share_id);
        if (!d.consumed_capacity.empty()) {
          j.Key("consumedCapacity").StartObject();
          for (const auto& [name, q] : d.consumed_capacity) j.Key(name.String()).String(q.text());
          j.EndObject();
        }
        j.EndObject();
      }
    }
    j.EndArray();
    j.Key("reservedFor").StartArray();
    for (const auto& r : c->reserved_for) j.String(r.name);
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
}

void PrintSimulation(const sim::SimulationResult& result, OutputFormat format, std::ostream& out) {
  const sim::SimulationSummary sum = sim::Summarize(result);

  if (format == OutputFormat::kJson) {
    // The pods (one object each, the bulk of the output) are written directly, in the layout
    // Indented gives the rest: building a JSON tree for every pod first cost more than a tenth of
    // a large simulation's run.
    framework::ArgsWriter j;
    j.StartObject();
    WriteEvictedJson(result, j.Key("evicted"));
    WriteSummaryJson(result, sum, j.Key("summary"));
    if (result.gangs) WritePodGroupsJson(*result.gangs, j.Key("podGroups"));
    if (!result.claims.empty() || !result.volumes.empty()) WriteStorageJson(result, j);
    if (!result.resource_claims.empty()) WriteResourceClaimsJson(result, j);
    if (result.explanation) WriteExplanationJson(*result.explanation, j.Key("explanation"));
    j.EndObject();
    // The indented text opens with "{\n" and the members at two spaces: the pods go first, streamed
    // (the text of a large cluster's pods would otherwise be held whole, at the run's peak of
    // memory).
    const std::string rest = Indented(j);
    constexpr size_t kFlushBytes = 64 * 1024;
    out << "{\n  \"pods\": ";
    std::string pods = result.pods.empty() ? "[]" : "[\n";
    pods.reserve(kFlushBytes + 4096);
    for (size_t i = 0; i < result.pods.size(); ++i) {
      const api::Pod& p = *result.pods[i];
      std::string msg = SchedulingMessage(p);
      if (msg.empty() && p.spec.node_name.empty() && !p.spec.scheduling_gates.empty()) msg = GatedMessage(p);
      if (msg.empty()) msg = sim::HeldMessage(p, result);
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
    if (std::string held = sim::HeldMessage(*p, result); !held.empty()) {
      line(fmt::format("{}: Pending: {}", p->Key(), held));
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
  if (const auto& g = result.gangs) out << PodGroupsText(*g);
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
    framework::ArgsWriter j;
    j.StartObject().Key("configurations").StartArray();
    for (size_t i = 0; i < runs.size(); ++i) {
      j.StartObject();
      j.Key("name").String(runs[i].name);
      j.Key("nodes").StartArray();
      for (const auto& n : nodes) {
        const NodeUse& u = use[i][n->metadata.name];
        const framework::Resource alloc = framework::Resource::FromList(n->status.allocatable);
        j.StartObject();
        j.Key("name").String(n->metadata.name);
        j.Key("pods").Int64(u.pods);
        j.Key("cpuRequested").String(Cpu(u.milli_cpu));
        j.Key("cpuAllocatable").String(Cpu(alloc.milli_cpu));
        j.Key("memoryRequested").Int64(u.memory);
        j.Key("memoryAllocatable").Int64(alloc.memory);
        j.Key("workloads").StartObject();
        for (const auto& [w, k] : u.workloads) j.Key(w).Int64(k);
        j.EndObject();
        j.EndObject();
      }
      j.EndArray();
      WriteSummaryJson(runs[i].result, sim::Summarize(runs[i].result), j.Key("summary"));
      j.EndObject();
    }
    j.EndArray().EndObject();
    out << Indented(j) << "\n";
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
