#include "report/report_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "api/names.h"

namespace kubesched::report {

Differences Compare(const sim::SimulationResult& a, const sim::SimulationResult& b) {
  Differences d;
  const sim::SimulationSummary sa = sim::Summarize(a);
  const sim::SimulationSummary sb = sim::Summarize(b);
  d.nodes_saved = static_cast<int64_t>(sa.used_nodes.size()) - static_cast<int64_t>(sb.used_nodes.size());
  d.scheduled_gain = static_cast<int64_t>(sb.scheduled) - static_cast<int64_t>(sa.scheduled);
  d.evictions_a = sa.evictions;
  d.evictions_b = sb.evictions;
  d.moves_a = sa.moves;
  d.moves_b = sb.moves;
  // Pods are matched by namespace/name: the same manifests and seed name them alike in both runs.
  auto split = [](const sim::SimulationResult& r, std::set<std::string>& placed, std::set<std::string>& pending) {
    for (const auto& p : r.pods) {
      if (sim::IsTerminal(*p)) continue;
      (p->spec.node_name.empty() ? pending : placed).insert(p->Key());
    }
  };
  std::set<std::string> placed_a, pending_a, placed_b, pending_b;
  split(a, placed_a, pending_a);
  split(b, placed_b, pending_b);
  for (const auto& k : pending_a) {
    if (placed_b.contains(k)) d.placed_only_by_b.push_back(k);
  }
  for (const auto& k : pending_b) {
    if (placed_a.contains(k)) d.placed_only_by_a.push_back(k);
  }
  std::set_difference(sa.used_nodes.begin(), sa.used_nodes.end(), sb.used_nodes.begin(), sb.used_nodes.end(),
                      std::back_inserter(d.nodes_only_a));
  std::set_difference(sb.used_nodes.begin(), sb.used_nodes.end(), sa.used_nodes.begin(), sa.used_nodes.end(),
                      std::back_inserter(d.nodes_only_b));
  return d;
}

namespace model {
namespace {

std::string Trim(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.ends_with('0')) s.pop_back();
  if (s.ends_with('.')) s.pop_back();
  return s;
}

std::string WorkloadKind(const api::Pod& pod) {
  for (const auto& o : pod.metadata.owner_references) {
    if (!o.controller && pod.metadata.owner_references.size() > 1) continue;
    // A Deployment's pods belong to a ReplicaSet named "<deployment>-<pod-template-hash>".
    if (o.kind == "ReplicaSet" && pod.metadata.labels.Has("pod-template-hash")) return "Deployment";
    return o.kind;
  }
  return "Pod";
}

std::string ZoneOf(const api::Node& node) {
  for (const char* key : {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
    if (const std::string* z = node.metadata.labels.Find(key)) return *z;
  }
  return "";
}

int64_t Amount(const framework::Resource& r, std::string_view name) {
  return name == "pods" ? r.allowed_pod_number : r.Get(name);
}

std::string PodName(const api::Pod& p, bool qualified) { return qualified ? p.Key() : p.metadata.name; }

// Workloads, most pods first (first seen first among equals).
std::vector<size_t> ByPods(const Workloads& workloads, std::vector<size_t> order) {
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return workloads[x].pods > workloads[y].pods; });
  return order;
}

std::vector<size_t> AllWorkloads(const Workloads& workloads) {
  std::vector<size_t> all(workloads.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

}  // namespace

std::string FormatAmount(std::string_view resource, int64_t v) {
  if (resource == "cpu") {  // cores; millicores below one
    if (v % 1000 == 0) return std::to_string(v / 1000);
    if (v < 1000) return fmt::format("{}m", v);
    return Trim(fmt::format("{:.2f}", static_cast<double>(v) / 1000));
  }
  if (resource == "memory" || resource == "ephemeral-storage" || resource.starts_with("hugepages-")) {
    const double d = static_cast<double>(v);
    if (v >= (1LL << 30)) return Trim(fmt::format("{:.2f}", d / (1LL << 30))) + "Gi";
    if (v >= (1LL << 20)) return Trim(fmt::format("{:.1f}", d / (1LL << 20))) + "Mi";
    if (v >= 1024) return Trim(fmt::format("{:.1f}", d / 1024)) + "Ki";
    return std::to_string(v);
  }
  return std::to_string(v);
}

std::string Percent(double fraction) { return Trim(fmt::format("{:.2f}", 100 * fraction)) + "%"; }

size_t Workloads::Of(const api::Pod& pod) {
  const std::string kind = WorkloadKind(pod);
  const std::string name = api::WorkloadName(pod);
  std::string key = kind + "/" + pod.metadata.namespace_ + "/" + name;
  auto [it, inserted] = index_.try_emplace(key, list_.size());
  if (inserted) {
    // Colours in turn, so that the first twelve workloads differ in colour, and patterns
    // shifted every twelve, so that the first 72 differ in colour or pattern.
    const size_t i = list_.size();
    list_.push_back({name, kind, pod.metadata.namespace_, static_cast<int>(i % kColours),
                     static_cast<int>((i + i / kColours) % kPatterns), 0});
  }
  return it->second;
}

RunData BuildRunData(const Run& run, Workloads& workloads) {
  RunData v;
  v.name = run.name;
  v.result = run.result;
  v.summary = sim::Summarize(*run.result);
  std::unordered_map<std::string, size_t> node_index;
  for (const auto& n : run.result->nodes) {
    node_index.emplace(n->metadata.name, v.nodes.size());
    NodeUse use;
    use.node = n.get();
    use.allocatable = framework::Resource::FromList(n->status.allocatable);
    v.nodes.push_back(std::move(use));
  }
  for (const auto& p : run.result->pods) {
    if (sim::IsTerminal(*p)) continue;
    if (p->spec.node_name.empty()) {
      v.unbound.push_back(p.get());
      continue;
    }
    PlacedPod placed;
    placed.pod = p.get();
    placed.workload = workloads.Of(*p);
    ++workloads[placed.workload].pods;
    placed.requests = framework::ComputePodRequests(p->spec);
    placed.already_running = run.result->bound_in_input.contains(p->metadata.uid);
    auto it = node_index.find(p->spec.node_name);
    if (it != node_index.end()) {
      NodeUse& use = v.nodes[it->second];
      use.pods.push_back(v.pods.size());
      use.requested.Add(placed.requests);
    }
    v.pods.push_back(std::move(placed));
  }
  for (const api::Pod* p : v.unbound) ++workloads[workloads.Of(*p)].pods;
  return v;
}

// --- summary and differences ----------------------------------------------------------------

std::vector<ChartPart> ChartParts(size_t scheduled, size_t already_running, size_t pending) {
  std::vector<ChartPart> parts;
  const double total = static_cast<double>(scheduled + already_running + pending);
  if (total == 0) return parts;
  double x = 0;
  double text_end = 0;  // where the previous label ends (about 6.5 units a character)
  auto part = [&](size_t n, std::string_view label, std::string_view fill, bool hatched) {
    if (n == 0) return;
    ChartPart p{n, label, fill, hatched, x, kChartWidth * static_cast<double>(n) / total, 0};
    p.text_x = std::max(x + 2, text_end + 8);
    const size_t text_size = fmt::formatted_size("{} {}", n, label);
    text_end = p.text_x + 6.5 * static_cast<double>(text_size);
    x += p.width;
    parts.push_back(p);
  };
  part(scheduled, "scheduled", "#4c9f70", false);
  part(already_running, "running", "#9fb7cf", false);
  part(pending, "pending", "#e07a5f", true);
  return parts;
}

namespace {

std::string OptimizerLine(const plugins::batch_placement::BatchStats& o) {
  return fmt::format(
      "Batch optimizer: {} batch{} ({} plan{}), {} pods, {} placed ({} by plans), {}, run bound {:.0f}, {:.2f} s{}.",
      o.batches, o.batches == 1 ? "" : "es", o.plans, o.plans == 1 ? "" : "s", o.pods, o.placed, o.planned,
      o.all_optimal ? std::string("proved optimal")
                    : fmt::format("placed {:.2f}% under the bound at most", 100 * o.max_placed_gap),
      o.run_bound, o.seconds,
      o.solver.empty() ? std::string() : fmt::format(" ({} {:.2f} s)", o.solver, o.solver_seconds));
}

RunSummary BuildSummary(std::span<const RunData> runs, size_t i) {
  const RunData& v = runs[i];
  const auto& s = v.summary;
  const auto& r = *v.result;
  RunSummary out;
  out.name = v.name;
  // Against the other run: which of the two did better on each count.
  std::string_view better_nodes, better_pending;
  if (runs.size() == 2) {
    const auto& o = runs[1 - i].summary;
    if (s.used_nodes.size() != o.used_nodes.size()) {
      better_nodes = s.used_nodes.size() < o.used_nodes.size() ? "better" : "worse";
    }
    if (s.pending != o.pending) better_pending = s.pending < o.pending ? "better" : "worse";
  }
  auto kpi = [&](std::string_view label, std::string_view key, std::string value, std::string_view verdict = "") {
    out.kpis.push_back({label, key, std::move(value), verdict});
  };
  kpi("Scheduled", "scheduled", std::to_string(s.scheduled));
  kpi("Pending", "pending", std::to_string(s.pending), better_pending);
  kpi("Already running", "alreadyRunning", std::to_string(s.already_running));
  kpi("Nodes used", "nodesUsed", fmt::format("{} of {}", s.used_nodes.size(), r.nodes.size()), better_nodes);
  kpi("Evictions", "evictions", std::to_string(s.evictions));
  if (s.moves > 0) kpi("Moves", "moves", std::to_string(s.moves));
  if (s.gated > 0) kpi("Gated", "gated", std::to_string(s.gated));
  if (s.finished > 0) kpi("Finished", "finished", std::to_string(s.finished));
  kpi("Attempts", "attempts", std::to_string(r.attempts));
  out.scheduled = s.scheduled;
  out.already_running = s.already_running;
  out.pending = s.pending;
  out.chart = ChartParts(s.scheduled, s.already_running, s.pending);
  if (r.optimizer) out.optimizer = OptimizerLine(*r.optimizer);
  if (const auto& x = r.cross_node; x && (x->stats.plans > 0 || x->stats.no_plan > 0)) {
    out.cross_node =
        fmt::format("Cross-node preemption: {} plan{} ({} proved optimal), {} evicted, {} moved.", x->stats.plans,
                    x->stats.plans == 1 ? "" : "s", x->stats.optimal, x->stats.evictions, x->stats.moves);
  }
  return out;
}

}  // namespace

std::vector<RunSummary> BuildSummaries(std::span<const RunData> runs) {
  std::vector<RunSummary> out;
  for (size_t i = 0; i < runs.size(); ++i) out.push_back(BuildSummary(runs, i));
  return out;
}

DifferencesView BuildDifferences(const RunData& a, const RunData& b) {
  const Differences d = Compare(*a.result, *b.result);
  DifferencesView v;
  v.name_a = a.name;
  v.name_b = b.name;
  auto row = [&](std::string_view label, std::string_view key, size_t va, size_t vb, bool lower_is_better,
                 std::string_view unit) {
    DifferenceRow r{label, key, static_cast<int64_t>(va), static_cast<int64_t>(vb), "", "", "same"};
    if (r.a != r.b) {
      const bool b_better = lower_is_better ? r.b < r.a : r.b > r.a;
      r.class_a = b_better ? "worse" : "better";
      r.class_b = b_better ? "better" : "worse";
      const int64_t diff = r.b - r.a;
      r.difference = fmt::format("{:+d} {}{}", diff, unit, diff == 1 || diff == -1 ? "" : "s");
    }
    v.rows.push_back(std::move(r));
  };
  row("pods scheduled", "scheduled", a.summary.scheduled, b.summary.scheduled, false, "pod");
  row("pods pending", "pending", a.summary.pending, b.summary.pending, true, "pod");
  row("nodes used", "nodesUsed", a.summary.used_nodes.size(), b.summary.used_nodes.size(), true, "node");
  row("evictions", "evictions", d.evictions_a, d.evictions_b, true, "pod");
  row("moves", "moves", d.moves_a, d.moves_b, true, "pod");
  v.nodes_saved = d.nodes_saved < 0 ? -d.nodes_saved : d.nodes_saved;
  if (d.nodes_saved != 0) {
    v.saver = d.nodes_saved > 0 ? b.name : a.name;
    v.against = d.nodes_saved > 0 ? a.name : b.name;
  }
  v.nodes_only_a = d.nodes_only_a;
  v.nodes_only_b = d.nodes_only_b;
  v.only_b = {1, b.name, a.name, d.placed_only_by_b};
  v.only_a = {0, a.name, b.name, d.placed_only_by_a};
  return v;
}

// --- nodes ----------------------------------------------------------------------------------

std::vector<ZoneGroup> GroupByZone(const RunData& run) {
  std::map<std::string, std::vector<size_t>> zones;
  std::vector<size_t> no_zone;
  for (size_t n = 0; n < run.nodes.size(); ++n) {
    const std::string z = ZoneOf(*run.nodes[n].node);
    (z.empty() ? no_zone : zones[z]).push_back(n);
  }
  std::vector<ZoneGroup> groups;
  for (auto& [zone, nodes] : zones) groups.push_back({zone, std::move(nodes)});
  if (!no_zone.empty() || groups.empty()) groups.push_back({"", std::move(no_zone)});
  return groups;
}

std::vector<std::string> ResourcesOf(std::span<const NodeUse* const> uses) {
  std::vector<std::string> out = {"cpu", "memory", "pods"};
  std::set<std::string> extra;
  bool ephemeral = false;
  for (const NodeUse* use : uses) {
    for (const auto& [name, v] : use->allocatable.scalar) {
      if (v > 0) extra.insert(name);
    }
    for (const auto& [name, v] : use->requested.scalar) {
      if (v > 0) extra.insert(name);
    }
    if (use->requested.ephemeral_storage > 0) ephemeral = true;
  }
  if (ephemeral) out.push_back("ephemeral-storage");
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

double Utilisation(const NodeUse& use) {
  double u = 0;
  auto see = [&](int64_t req, int64_t alloc) {
    if (req <= 0) return;
    u = std::max(u, alloc > 0 ? static_cast<double>(req) / static_cast<double>(alloc) : 1.0);
  };
  see(use.requested.milli_cpu, use.allocatable.milli_cpu);
  see(use.requested.memory, use.allocatable.memory);
  see(static_cast<int64_t>(use.pods.size()), use.allocatable.allowed_pod_number);
  see(use.requested.ephemeral_storage, use.allocatable.ephemeral_storage);
  for (const auto& [name, v] : use.requested.scalar) see(v, use.allocatable.Scalar(name));
  return u;
}

namespace {

ResourceBar BuildBar(const RunData& run, const NodeUse& use, const std::string& resource) {
  ResourceBar bar;
  bar.resource = resource;
  const bool pods = resource == "pods";
  bar.allocatable = Amount(use.allocatable, resource);
  bar.requested = pods ? static_cast<int64_t>(use.pods.size()) : Amount(use.requested, resource);
  bar.over = bar.requested > bar.allocatable;
  const double scale = static_cast<double>(std::max<int64_t>({bar.allocatable, bar.requested, 1}));
  for (size_t pi : use.pods) {
    const int64_t amount = pods ? 1 : Amount(run.pods[pi].requests, resource);
    if (amount <= 0) continue;
    bar.segments.push_back({pi, amount, static_cast<double>(amount) / scale});
  }
  return bar;
}

std::string NodeLabels(const api::Node& node) {
  std::string labels;
  for (const auto& [k, val] : node.metadata.labels) {
    if (k == "kubernetes.io/hostname") continue;
    labels += (labels.empty() ? "" : " ") + k + "=" + val;
  }
  return labels;
}

std::string NodeTaints(const api::Node& node) {
  std::string taints;
  for (const auto& t : node.spec.taints) {
    taints += (taints.empty() ? "" : ", ") + t.key + (t.value.empty() ? "" : "=" + t.value) + ":" +
              std::string(api::ToString(t.effect));
  }
  if (node.spec.unschedulable) taints += std::string(taints.empty() ? "" : ", ") + "unschedulable";
  return taints;
}

std::vector<HeatCell> HeatCells(const RunData& run) {
  std::vector<HeatCell> cells;
  cells.reserve(run.nodes.size());
  for (size_t n = 0; n < run.nodes.size(); ++n) {
    const NodeUse& use = run.nodes[n];
    const double u = Utilisation(use);
    const int bucket = static_cast<int>(std::min(10.0, std::ceil(u * 10)));
    const std::string& name = use.node->metadata.name;
    cells.push_back({n, use.pods.empty() ? std::string("e") : fmt::format("h{}", bucket),
                     fmt::format("{}: {}{} pod{}", name, use.pods.empty() ? "" : Percent(u) + ", ", use.pods.size(),
                                 use.pods.size() == 1 ? "" : "s")});
  }
  return cells;
}

}  // namespace

NodeRow BuildNodeRow(std::span<const RunData> runs, size_t n) {
  const api::Node& node = *runs.front().nodes[n].node;
  NodeRow row;
  row.index = n;
  row.name = node.metadata.name;
  row.labels = NodeLabels(node);
  row.taints = NodeTaints(node);
  std::vector<const NodeUse*> per_run;
  for (const RunData& run : runs) per_run.push_back(&run.nodes[n]);
  const std::vector<std::string> resources = ResourcesOf(per_run);
  for (size_t r = 0; r < runs.size(); ++r) {
    NodeCard card{r, per_run[r], {}};
    for (const std::string& res : resources) card.bars.push_back(BuildBar(runs[r], *per_run[r], res));
    row.cards.push_back(std::move(card));
  }
  return row;
}

NodesView BuildNodes(std::span<const RunData> runs, const Workloads& workloads, const ReportOptions& options) {
  NodesView v;
  const size_t node_count = runs.front().nodes.size();
  v.big = node_count > options.heat_map_threshold;
  std::vector<size_t> legend = ByPods(workloads, AllWorkloads(workloads));
  // With more workloads than table columns, bare pods (each its own workload) are left out.
  v.legend_crowded = workloads.size() > options.max_workload_columns;
  if (v.legend_crowded) std::erase_if(legend, [&](size_t i) { return workloads[i].kind == "Pod"; });
  if (legend.size() > kMaxLegend) {
    v.legend_more = legend.size() - kMaxLegend;
    legend.resize(kMaxLegend);
  }
  v.legend = std::move(legend);
  v.zones = GroupByZone(runs.front());
  v.zoned = v.zones.size() > 1 || !v.zones.front().zone.empty();
  if (v.big) {
    for (const RunData& run : runs) v.heat.push_back(HeatCells(run));
  }
  v.rows.reserve(node_count);
  for (size_t n = 0; n < node_count; ++n) v.rows.push_back(BuildNodeRow(runs, n));
  return v;
}

// --- node × workload table --------------------------------------------------------------

PlacementView BuildPlacement(std::span<const RunData> runs, const Workloads& workloads, const ReportOptions& options) {
  PlacementView v;
  // Columns: the workloads with the most pods; bare pods add up in one column when there are
  // too many workloads for a column each, and whatever is left in another.
  const bool crowded = workloads.size() > options.max_workload_columns;
  std::vector<size_t> columns;
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (crowded && workloads[i].kind == "Pod") continue;
    columns.push_back(i);
  }
  columns = ByPods(workloads, std::move(columns));
  size_t limit = options.max_workload_columns;
  if (crowded && columns.size() > limit) limit = limit > 0 ? limit - 1 : 0;  // room for "other"
  v.other_column = columns.size() > limit;
  if (v.other_column) columns.resize(limit);
  v.bare_column = crowded;
  std::vector<int> column_of(workloads.size(), -1);
  for (size_t c = 0; c < columns.size(); ++c) column_of[columns[c]] = static_cast<int>(c);
  for (const RunData& run : runs) {
    std::vector<PlacementRow>& rows = v.runs.emplace_back();
    for (const NodeUse& use : run.nodes) {
      PlacementRow row{&use, std::vector<int>(columns.size() + 2, 0)};
      for (size_t pi : use.pods) {
        const size_t w = run.pods[pi].workload;
        if (column_of[w] >= 0) {
          ++row.counts[column_of[w]];
        } else if (v.bare_column && workloads[w].kind == "Pod") {
          ++row.counts[columns.size()];
        } else {
          ++row.counts[columns.size() + 1];
        }
      }
      if (!v.other_column) row.counts.pop_back();
      if (!v.bare_column) row.counts.erase(row.counts.begin() + static_cast<ptrdiff_t>(columns.size()));
      rows.push_back(std::move(row));
    }
  }
  v.columns = std::move(columns);
  return v;
}

// --- pending pods -------------------------------------------------------------------------

std::string PendingMessage(const api::Pod& pod, const sim::SimulationResult& result) {
  std::string reason = sim::SchedulingMessage(pod);
  if (reason.empty() && !pod.spec.scheduling_gates.empty()) reason = sim::GatedMessage(pod);
  if (reason.empty()) reason = sim::HeldMessage(pod, result);
  if (reason.empty() && pod.metadata.deletion_timestamp_ns) reason = "not scheduled: the pod is being deleted";
  const auto& profiles = result.profiles;
  if (reason.empty() && std::find(profiles.begin(), profiles.end(), pod.spec.scheduler_name) == profiles.end()) {
    reason =
        fmt::format("not scheduled: schedulerName \"{}\" is not a profile of this scheduler", pod.spec.scheduler_name);
  }
  if (reason.empty()) reason = "not scheduled (no attempt recorded)";
  return reason;
}

std::vector<ReasonTally> TallyReasons(std::span<const api::Pod* const> pending, const sim::SimulationResult& result) {
  std::vector<ReasonTally> reasons;
  for (const api::Pod* p : pending) {
    auto attempt = result.failed_attempts.find(p->metadata.uid);
    if (attempt == result.failed_attempts.end()) continue;
    for (const auto& [reason, nodes] : attempt->second.filter_reasons) {
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.reason == reason; });
      if (it == reasons.end()) it = reasons.insert(reasons.end(), {reason, 0, 0});
      ++it->pods;
      it->max_nodes = std::max(it->max_nodes, nodes);
    }
  }
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& x, const auto& y) { return x.pods > y.pods; });
  return reasons;
}

PendingView BuildPending(const RunData& run, bool qualified_names) {
  PendingView v;
  v.pending = run.unbound.size();
  // Grouped by the message (upstream's FailedScheduling text), largest group first.
  std::unordered_map<std::string, size_t> at;
  for (const api::Pod* p : run.unbound) {
    std::string message = PendingMessage(*p, *run.result);
    auto [it, inserted] = at.try_emplace(message, v.groups.size());
    if (inserted) v.groups.push_back({std::move(message), {}});
    v.groups[it->second].pods.push_back({p->Key(), PodName(*p, qualified_names)});
  }
  std::stable_sort(v.groups.begin(), v.groups.end(),
                   [](const auto& x, const auto& y) { return x.pods.size() > y.pods.size(); });
  v.reasons = TallyReasons(run.unbound, *run.result);
  return v;
}

// --- evictions, explanation ---------------------------------------------------------------

std::vector<EvictionRow> BuildEvictions(const sim::SimulationResult& result, bool qualified_names) {
  std::vector<EvictionRow> rows;
  for (const auto& e : result.evictions) {
    rows.push_back({e.pod->Key(), PodName(*e.pod, qualified_names), e.pod->spec.node_name,
                    e.moved_to.empty() ? std::string("Preempted") : "Moved to " + e.moved_to, e.reason,
                    e.replacement ? e.replacement->Key() : std::string("-")});
  }
  return rows;
}

std::vector<PodGroupRow> BuildPodGroups(const sim::SimulationResult& result) {
  std::vector<PodGroupRow> rows;
  if (!result.gangs) return rows;
  for (const auto& [key, d] : result.gangs->groups) {
    rows.push_back({key, d.placed ? "placed whole" : "pending", d.domain.empty() ? std::string("-") : d.domain,
                    d.min_count, d.preempted_pods, d.moved_pods, d.optimal, d.placed ? std::string() : d.message});
  }
  return rows;
}

std::vector<std::string> ScorePlugins(const scheduler::AttemptExplanation& explanation) {
  std::vector<std::string> plugins;
  for (const auto& n : explanation.nodes) {
    for (const auto& s : n.scores) {
      if (std::find(plugins.begin(), plugins.end(), s.plugin) == plugins.end()) plugins.push_back(s.plugin);
    }
  }
  return plugins;
}

ExplanationView BuildExplanation(size_t run, const scheduler::AttemptExplanation& attempt) {
  ExplanationView v;
  v.run = run;
  v.attempt = &attempt;
  v.score_plugins = ScorePlugins(attempt);
  for (const auto& n : attempt.nodes) {
    ExplainedNode row;
    row.node = &n;
    row.selected = n.node == attempt.selected_node;
    row.unevaluated = !n.evaluated && n.excluded.empty();
    v.any_unevaluated = v.any_unevaluated || row.unevaluated;
    if (n.excluded.empty() && !n.feasible) {
      for (const auto& f : n.filters) {
        if (!f.status.IsSuccess() && !f.status.IsSkip()) row.rejections.push_back(&f);
      }
    }
    for (const std::string& plugin : v.score_plugins) {
      auto it = std::find_if(n.scores.begin(), n.scores.end(), [&](const auto& s) { return s.plugin == plugin; });
      row.scores.push_back(it == n.scores.end() ? nullptr : &*it);
    }
    v.nodes.push_back(std::move(row));
  }
  return v;
}

// --- the page -------------------------------------------------------------------------------

ReportModel BuildModel(std::span<const Run> runs, const ReportOptions& options) {
  ReportModel m;
  for (const Run& r : runs) m.runs.push_back(BuildRunData(r, m.workloads));
  // Pods are named with their namespace when there is more than one.
  std::set<std::string> namespaces;
  for (const RunData& run : m.runs) {
    for (const auto& p : run.result->pods) namespaces.insert(p->metadata.namespace_);
  }
  m.qualified_names = namespaces.size() > 1;
  m.title = "kubesched simulation";
  if (m.runs.size() == 2) m.title += ": " + m.runs[0].name + " beside " + m.runs[1].name;
  for (const auto& f : options.inputs) m.inputs += (m.inputs.empty() ? "" : " ") + std::string("-f ") + f;
  m.seed = options.seed;
  const sim::SimulationResult& first = *m.runs.front().result;
  m.node_count = first.nodes.size();
  m.pod_count = first.pods.size();
  m.simulated_seconds = static_cast<double>(first.virtual_time_ns - first.start_time_ns) / 1e9;
  if (m.runs.size() == 2) m.differences = BuildDifferences(m.runs[0], m.runs[1]);
  m.summaries = BuildSummaries(m.runs);
  m.nodes = BuildNodes(m.runs, m.workloads, options);
  m.placement = BuildPlacement(m.runs, m.workloads, options);
  bool evicted = false;
  for (const RunData& run : m.runs) {
    m.pending.push_back(BuildPending(run, m.qualified_names));
    evicted = evicted || !run.result->evictions.empty();
  }
  if (evicted) {
    for (const RunData& run : m.runs) m.evictions.push_back(BuildEvictions(*run.result, m.qualified_names));
  }
  const bool grouped = std::any_of(m.runs.begin(), m.runs.end(), [](const RunData& run) {
    return run.result->gangs && !run.result->gangs->groups.empty();
  });
  if (grouped) {
    for (const RunData& run : m.runs) m.pod_groups.push_back(BuildPodGroups(*run.result));
  }
  for (size_t r = 0; r < m.runs.size(); ++r) {
    if (const auto& e = m.runs[r].result->explanation) m.explanations.push_back(BuildExplanation(r, *e));
  }
  return m;
}

}  // namespace model
}  // namespace kubesched::report
