#include "report/report.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "api/names.h"
#include "framework/args_view.h"
#include "framework/resource.h"
#include "sim/simulation_summary.h"

namespace kubesched::report {

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

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

namespace {

constexpr int kColours = 12;
constexpr int kPatterns = 6;

// --- what the report shows, computed from the results --------------------------------------

struct Workload {
  std::string name;  // as people name it (api::WorkloadName)
  std::string kind;  // Deployment, StatefulSet, Job, DaemonSet, ReplicaSet, ..., or Pod (a bare pod)
  std::string namespace_;
  int colour = 0;
  int pattern = 0;
  size_t pods = 0;  // over every run
};

std::string WorkloadKind(const api::Pod& pod) {
  for (const auto& o : pod.metadata.owner_references) {
    if (!o.controller && pod.metadata.owner_references.size() > 1) continue;
    // A Deployment's pods belong to a ReplicaSet named "<deployment>-<pod-template-hash>".
    if (o.kind == "ReplicaSet" && pod.metadata.labels.Has("pod-template-hash")) return "Deployment";
    return o.kind;
  }
  return "Pod";
}

// Workloads over every run, numbered in first-seen order (the same number in both columns).
class Workloads {
 public:
  size_t Of(const api::Pod& pod) {
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
  Workload& operator[](size_t i) { return list_[i]; }
  const Workload& operator[](size_t i) const { return list_[i]; }
  size_t size() const { return list_.size(); }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<Workload> list_;
};

struct PodView {
  const api::Pod* pod = nullptr;
  size_t workload = 0;
  framework::Resource requests;
  bool already_running = false;
};

struct NodeView {
  const api::Node* node = nullptr;
  framework::Resource allocatable;
  framework::Resource requested;
  std::vector<size_t> pods;  // indices into RunView::pods
};

struct RunView {
  std::string name;
  const sim::SimulationResult* result = nullptr;
  sim::SimulationSummary summary;
  std::vector<PodView> pods;    // bound, not finished, in creation order
  std::vector<NodeView> nodes;  // the input's order
  std::unordered_map<std::string, size_t> node_index;
  std::vector<const api::Pod*> unbound;  // not bound, not finished
};

RunView BuildRun(const Run& run, Workloads& workloads) {
  RunView v;
  v.name = run.name;
  v.result = run.result;
  v.summary = sim::Summarize(*run.result);
  for (const auto& n : run.result->nodes) {
    v.node_index.emplace(n->metadata.name, v.nodes.size());
    NodeView nv;
    nv.node = n.get();
    nv.allocatable = framework::Resource::FromList(n->status.allocatable);
    v.nodes.push_back(std::move(nv));
  }
  for (const auto& p : run.result->pods) {
    if (sim::IsTerminal(*p)) continue;
    if (p->spec.node_name.empty()) {
      v.unbound.push_back(p.get());
      continue;
    }
    PodView pv;
    pv.pod = p.get();
    pv.workload = workloads.Of(*p);
    ++workloads[pv.workload].pods;
    pv.requests = framework::ComputePodRequests(p->spec);
    pv.already_running = run.result->bound_in_input.contains(p->metadata.uid);
    auto it = v.node_index.find(p->spec.node_name);
    if (it != v.node_index.end()) {
      NodeView& nv = v.nodes[it->second];
      nv.pods.push_back(v.pods.size());
      nv.requested.Add(pv.requests);
    }
    v.pods.push_back(std::move(pv));
  }
  for (const api::Pod* p : v.unbound) ++workloads[workloads.Of(*p)].pods;
  return v;
}

std::string ZoneOf(const api::Node& node) {
  for (const char* key : {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
    if (const std::string* z = node.metadata.labels.Find(key)) return *z;
  }
  return "";
}

// --- formatting -----------------------------------------------------------------------------

std::string Trim(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.ends_with('0')) s.pop_back();
  if (s.ends_with('.')) s.pop_back();
  return s;
}

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

int64_t Amount(const framework::Resource& r, std::string_view name) {
  return name == "pods" ? r.allowed_pod_number : r.Get(name);
}

// The resources shown for a node: cpu, memory and pods always; ephemeral storage and scalar
// resources (GPUs, hugepages, ...) when the node offers them or a pod on it requests them, in
// any run.
std::vector<std::string> ResourcesOf(const std::vector<const NodeView*>& views) {
  std::vector<std::string> out = {"cpu", "memory", "pods"};
  std::set<std::string> extra;
  bool ephemeral = false;
  for (const NodeView* view : views) {
    const NodeView& nv = *view;
    for (const auto& [name, v] : nv.allocatable.scalar) {
      if (v > 0) extra.insert(name);
    }
    for (const auto& [name, v] : nv.requested.scalar) {
      if (v > 0) extra.insert(name);
    }
    if (nv.requested.ephemeral_storage > 0) ephemeral = true;
  }
  if (ephemeral) out.push_back("ephemeral-storage");
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// The highest share of any resource requested on the node (0 for an empty node).
double Utilisation(const NodeView& nv) {
  double u = 0;
  auto see = [&](int64_t req, int64_t alloc) {
    if (req <= 0) return;
    u = std::max(u, alloc > 0 ? static_cast<double>(req) / static_cast<double>(alloc) : 1.0);
  };
  see(nv.requested.milli_cpu, nv.allocatable.milli_cpu);
  see(nv.requested.memory, nv.allocatable.memory);
  see(static_cast<int64_t>(nv.pods.size()), nv.allocatable.allowed_pod_number);
  see(nv.requested.ephemeral_storage, nv.allocatable.ephemeral_storage);
  for (const auto& [name, v] : nv.requested.scalar) see(v, nv.allocatable.Scalar(name));
  return u;
}

// The Filter reasons of upstream's FailedScheduling message with their node counts:
// "0/7 nodes are available: 4 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption:
// ..." gives {"Insufficient cpu", 4}, {"node(s) had untolerated taint(s)", 1}. Empty for other
// messages.
std::vector<std::pair<std::string, int64_t>> FilterReasons(std::string_view message) {
  constexpr std::string_view kAvailable = " nodes are available: ";
  std::vector<std::pair<std::string, int64_t>> out;
  const size_t at = message.find(kAvailable);
  if (at == std::string_view::npos) return out;
  std::string_view rest = message.substr(at + kAvailable.size());
  if (const size_t end = rest.find(". preemption:"); end != std::string_view::npos) rest = rest.substr(0, end);
  while (rest.ends_with('.')) rest.remove_suffix(1);
  while (!rest.empty()) {
    const size_t comma = rest.find(", ");
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
    const size_t space = item.find(' ');
    int64_t count = 0;
    const auto [ptr, ec] =
        std::from_chars(item.data(), item.data() + (space == std::string_view::npos ? 0 : space), count);
    if (space == std::string_view::npos || ec != std::errc() || ptr != item.data() + space) continue;
    out.emplace_back(std::string(item.substr(space + 1)), count);
  }
  return out;
}

// --- the page -------------------------------------------------------------------------------

constexpr std::string_view kCsp =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'";

constexpr std::string_view kStyle = R"css(
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d0d5db;--bg:#fff;--soft:#f4f6f8;--good:#0a6b2d;--goodbg:#dff3e4;--bad:#9b1c1c;--badbg:#fbe3e3}
*{box-sizing:border-box}
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:16px 20px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px;border-bottom:2px solid var(--line);padding-bottom:4px}
h3{font-size:14px;margin:8px 0}
.meta{color:var(--muted);margin:0}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px}
.cols{display:grid;gap:16px;grid-template-columns:repeat(var(--runs),minmax(0,1fr))}
.kpi{display:flex;flex-wrap:wrap;gap:8px;margin:0}
.kpi div{border:1px solid var(--line);border-radius:6px;padding:4px 10px;min-width:92px}
.kpi dt{color:var(--muted);font-size:11px}.kpi dd{margin:0;font-size:18px;font-weight:600}
.better{background:var(--goodbg);color:var(--good)}.worse{background:var(--badbg);color:var(--bad)}
.better::after{content:" \25B2 better"}.worse::after{content:" \25BC worse"}
.better::after,.worse::after{font-size:11px;font-weight:600}
table{border-collapse:collapse;margin:4px 0}th,td{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
.wl td.z{color:#c4c9cf;text-align:center}
.scroll{overflow:auto;max-height:70vh}
.legend{display:flex;flex-wrap:wrap;gap:4px 12px;margin:6px 0}
.legend span{display:inline-flex;align-items:center;gap:4px}
.legend i{display:inline-block;width:22px;height:12px;border:1px solid #0006}
.tools{display:flex;gap:12px;align-items:center;margin:8px 0;flex-wrap:wrap}
#q{font:inherit;padding:4px 8px;width:320px;border:1px solid var(--line);border-radius:4px}
.zone{margin:10px 0 4px;font-weight:600}
.nrow{display:grid;grid-template-columns:minmax(180px,240px) repeat(var(--runs),minmax(0,1fr));gap:8px;border-top:1px solid var(--line);padding:4px 0}
.nhead{display:grid;grid-template-columns:minmax(180px,240px) repeat(var(--runs),minmax(0,1fr));gap:8px;font-weight:600;
  position:sticky;top:0;background:var(--bg);z-index:1;padding:4px 0;border-bottom:1px solid var(--line)}
.nodes.big .nrow.off{display:none}
.nodes.big:not(.some) .nhead{display:none}
.nodes.big .nrow.off.found{display:grid}
.nh b{font-family:ui-monospace,"DejaVu Sans Mono",monospace;word-break:break-all}
.lbl{color:var(--muted);font-size:11px;word-break:break-all}
.taint{color:var(--bad);font-size:11px}
.node{display:grid;grid-template-columns:104px minmax(0,1fr) 120px;gap:1px 6px;align-items:center}
.node .k{color:var(--muted);font-size:11px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.node .v{font-size:11px;white-space:nowrap;font-variant-numeric:tabular-nums}
.node.empty .bar{background:repeating-linear-gradient(135deg,#fff 0 4px,#eceff2 4px 8px)}
.node .none{grid-column:1/-1;color:var(--muted);font-style:italic}
.bar{display:flex;height:16px;border:1px solid #8a939d;background:#fff;overflow:hidden;position:relative}
.bar i{display:block;height:100%;border-right:1px solid #fff;font-style:normal;font-size:10px;line-height:15px;color:#000;
  padding:0 2px;white-space:nowrap;overflow:hidden;text-overflow:clip;flex:none}
.bar i.pre{box-shadow:inset 0 0 0 2px #000a}
.over .bar{border-color:var(--bad);border-width:2px}.over .v{color:var(--bad);font-weight:600}
.c0{background-color:#8dd3c7}.c1{background-color:#ffffb3}.c2{background-color:#bebada}.c3{background-color:#fb8072}
.c4{background-color:#80b1d3}.c5{background-color:#fdb462}.c6{background-color:#b3de69}.c7{background-color:#fccde5}
.c8{background-color:#d9d9d9}.c9{background-color:#bc80bd}.c10{background-color:#ccebc5}.c11{background-color:#ffed6f}
.p1{background-image:repeating-linear-gradient(45deg,#0003 0 2px,transparent 2px 6px)}
.p2{background-image:repeating-linear-gradient(-45deg,#0003 0 2px,transparent 2px 6px)}
.p3{background-image:repeating-linear-gradient(90deg,#0003 0 2px,transparent 2px 5px)}
.p4{background-image:repeating-linear-gradient(0deg,#0003 0 2px,transparent 2px 5px)}
.p5{background-image:radial-gradient(#0004 1px,transparent 1.5px);background-size:5px 5px}
.hm{display:flex;flex-wrap:wrap;gap:2px;margin:4px 0 8px}
.hm a{display:block;width:12px;height:12px;border:1px solid #8a939d;background:#fff}
.hm a.e{background:repeating-linear-gradient(135deg,#fff 0 2px,#cfd4da 2px 3px)}
.hm a.m{outline:2px solid #000;outline-offset:1px}
.hkey{display:flex;gap:6px;align-items:center;color:var(--muted);font-size:11px}
.hkey a{display:inline-block;width:12px;height:12px;border:1px solid #8a939d}
.reason{margin:6px 0;border:1px solid var(--line);border-radius:6px;padding:4px 8px}
.reason summary{cursor:pointer}.reason .msg{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;white-space:pre-wrap}
.reason ul{margin:4px 0;padding-left:18px;columns:3 220px}
.sel{background:var(--goodbg)}
.rej{color:var(--bad)}.ok{color:var(--good)}
svg text{font:11px system-ui,-apple-system,"DejaVu Sans",sans-serif}
details.cfg pre{background:var(--soft);padding:6px;overflow:auto;max-height:240px}
.note{color:var(--muted);font-size:12px}
@media print{
  @page{size:A4 landscape;margin:10mm}
  body{padding:0;font-size:10px}
  *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
  .tools,#q,.noprint{display:none}
  .nhead{position:static}
  .scroll{max-height:none;overflow:visible}
  .nrow,.reason,tr{break-inside:avoid}
  h2{break-after:avoid}
  details{display:block}details>*{display:block}
}
)css";

// Interaction only: search, picking a node on the heat map, highlighting a workload's pods.
constexpr std::string_view kScript = R"js(
(function () {
  'use strict';
  var rows = Array.prototype.slice.call(document.querySelectorAll('.nrow'));
  var nodes = document.querySelector('.nodes');
  var big = nodes && nodes.classList.contains('big');
  var index = rows.map(function (r) {
    var pods = Array.prototype.map.call(r.querySelectorAll('[data-pod]'), function (e) { return e.getAttribute('data-pod'); });
    var lbl = r.querySelector('.lbl');
    return [r, (r.getAttribute('data-node') + ' ' + (lbl ? lbl.textContent : '') + ' ' + pods.join(' ')).toLowerCase()];
  });
  var cells = Array.prototype.slice.call(document.querySelectorAll('.hm a'));
  var q = document.getElementById('q');
  var count = document.getElementById('qn');
  var limit = 200;
  function search() {
    var t = q.value.trim().toLowerCase();
    var found = {}, n = 0;
    index.forEach(function (e) {
      var hit = t !== '' && e[1].indexOf(t) >= 0;
      if (hit) { found[e[0].getAttribute('data-node')] = true; n++; }
      if (big) e[0].classList.toggle('found', hit && n <= limit);
      else e[0].style.display = (t === '' || hit) ? '' : 'none';
    });
    cells.forEach(function (c) { c.classList.toggle('m', !!found[c.getAttribute('data-node')]); });
    if (big) nodes.classList.toggle('some', n > 0);
    if (count) count.textContent = t === '' ? '' : n + ' node' + (n === 1 ? '' : 's') + (big && n > limit ? ' (first ' + limit + ' shown)' : '');
  }
  if (q) q.addEventListener('input', search);
  cells.forEach(function (c) {
    c.addEventListener('click', function (ev) {
      var row = document.getElementById(c.getAttribute('href').slice(1));
      if (!row) return;
      ev.preventDefault();
      row.classList.add('found');
      nodes.classList.add('some');
      row.scrollIntoView({block: 'center'});
    });
  });
  var hl = document.getElementById('hl');
  document.addEventListener('mouseover', function (ev) {
    var w = ev.target.closest ? ev.target.closest('[data-w]') : null;
    var id = w ? w.getAttribute('data-w') : '';
    hl.textContent = /^[0-9]+$/.test(id) ? '[data-w="' + id + '"]{outline:2px solid #000;outline-offset:-2px}' : '';
  });
})();
)js";

class Page {
 public:
  Page(std::span<const Run> runs, const ReportOptions& options) : options_(options) {
    for (const Run& r : runs) views_.push_back(BuildRun(r, workloads_));
    // Pods are named with their namespace when there is more than one.
    std::set<std::string> ns;
    for (const RunView& v : views_) {
      for (const auto& p : v.result->pods) ns.insert(p->metadata.namespace_);
    }
    multi_ns_ = ns.size() > 1;
  }

  std::string Render() {
    out_.reserve(1 << 20);
    out_ += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    out_ += fmt::format("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n", kCsp);
    out_ += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n";
    out_ += "<meta name=\"generator\" content=\"kubesched simulate --report\">\n";
    out_ += "<link rel=\"icon\" href=\"data:,\">\n";  // no favicon request
    out_ += "<title>" + EscapeHtml(Title()) + "</title>\n<style>";
    out_ += kStyle;
    out_ += "</style><style id=\"hl\"></style></head>\n";
    out_ += fmt::format("<body style=\"--runs:{}\">\n", views_.size());
    Header();
    if (views_.size() == 2) DifferencesSection();
    SummarySection();
    NodesSection();
    WorkloadTableSection();
    PendingSection();
    EvictionsSection();
    ExplanationSection();
    ConfigurationSection();
    out_ += "<script>";
    out_ += kScript;
    out_ += "</script>\n</body></html>\n";
    return std::move(out_);
  }

 private:
  std::string Title() const {
    std::string t = "kubesched simulation";
    if (views_.size() == 2) t += ": " + views_[0].name + " beside " + views_[1].name;
    return t;
  }

  std::string PodName(const api::Pod& p) const { return multi_ns_ ? p.Key() : p.metadata.name; }

  void Header() {
    out_ += "<header><h1>" + EscapeHtml(Title()) + "</h1>\n<p class=\"meta\">";
    std::string inputs;
    for (const auto& f : options_.inputs) inputs += (inputs.empty() ? "" : " ") + std::string("-f ") + f;
    out_ += "Manifests: <code>" + EscapeHtml(inputs) + "</code> · seed " + std::to_string(options_.seed);
    const auto& r = *views_.front().result;
    out_ += fmt::format(" · {} nodes, {} pods · simulated time {:.1f} s", r.nodes.size(), r.pods.size(),
                        static_cast<double>(r.virtual_time_ns - r.start_time_ns) / 1e9);
    out_ += "</p></header>\n";
  }

  // --- differences (two runs) ---------------------------------------------------------------

  void DifferencesSection() {
    const RunView& a = views_[0];
    const RunView& b = views_[1];
    const Differences d = Compare(*a.result, *b.result);
    out_ += "<section id=\"differences\"><h2>Differences</h2>\n";
    out_ += "<table><tr><th></th><th>" + EscapeHtml(a.name) + "</th><th>" + EscapeHtml(b.name) +
            "</th><th>difference</th></tr>\n";
    // lower_is_better: nodes used, pending, evictions, moves.
    auto row = [&](std::string_view what, const std::string& key, int64_t va, int64_t vb, bool lower_is_better,
                   std::string_view unit) {
      std::string ca, cb, diff = "same";
      if (va != vb) {
        const bool b_better = lower_is_better ? vb < va : vb > va;
        ca = b_better ? " class=\"worse\"" : " class=\"better\"";
        cb = b_better ? " class=\"better\"" : " class=\"worse\"";
        diff = fmt::format("{:+d} {}{}", vb - va, unit, vb - va == 1 || vb - va == -1 ? "" : "s");
      }
      out_ += fmt::format(
          "<tr data-k=\"{}\"><th>{}</th><td class=\"n\"><span{}>{}</span></td><td class=\"n\"><span{}>{}</span></td>"
          "<td>{}</td></tr>\n",
          key, what, ca, va, cb, vb, EscapeHtml(diff));
    };
    row("pods scheduled", "scheduled", static_cast<int64_t>(a.summary.scheduled),
        static_cast<int64_t>(b.summary.scheduled), false, "pod");
    row("pods pending", "pending", static_cast<int64_t>(a.summary.pending), static_cast<int64_t>(b.summary.pending),
        true, "pod");
    row("nodes used", "nodesUsed", static_cast<int64_t>(a.summary.used_nodes.size()),
        static_cast<int64_t>(b.summary.used_nodes.size()), true, "node");
    row("evictions", "evictions", static_cast<int64_t>(d.evictions_a), static_cast<int64_t>(d.evictions_b), true,
        "pod");
    row("moves", "moves", static_cast<int64_t>(d.moves_a), static_cast<int64_t>(d.moves_b), true, "pod");
    out_ += "</table>\n<ul class=\"diffs\">\n";
    if (d.nodes_saved > 0) {
      out_ += fmt::format("<li data-k=\"nodesSaved\"><b class=\"better\">{} saves {} node{}</b> against {}: ",
                          EscapeHtml(b.name), d.nodes_saved, d.nodes_saved == 1 ? "" : "s", EscapeHtml(a.name));
    } else if (d.nodes_saved < 0) {
      out_ += fmt::format("<li data-k=\"nodesSaved\"><b class=\"better\">{} saves {} node{}</b> against {}: ",
                          EscapeHtml(a.name), -d.nodes_saved, d.nodes_saved == -1 ? "" : "s", EscapeHtml(b.name));
    } else {
      out_ += "<li data-k=\"nodesSaved\">Both use as many nodes. ";
    }
    auto list = [&](const std::vector<std::string>& items) {
      std::string s;
      for (size_t i = 0; i < items.size() && i < 50; ++i)
        s += (i ? ", " : "") + std::string("<code>") + EscapeHtml(items[i]) + "</code>";
      if (items.size() > 50) s += fmt::format(" and {} more", items.size() - 50);
      return s.empty() ? std::string("none") : s;
    };
    out_ += "used only by " + EscapeHtml(a.name) + ": " + list(d.nodes_only_a) + "; used only by " +
            EscapeHtml(b.name) + ": " + list(d.nodes_only_b) + "</li>\n";
    auto placed = [&](const std::vector<std::string>& pods, const RunView& by, const RunView& other) {
      out_ +=
          fmt::format("<li data-k=\"placedOnlyBy\" data-run=\"{}\"><b{}>{} pod{} placed by {} that {} left pending</b>",
                      &by == &views_[0] ? 0 : 1, pods.empty() ? "" : " class=\"better\"", pods.size(),
                      pods.size() == 1 ? "" : "s", EscapeHtml(by.name), EscapeHtml(other.name));
      if (!pods.empty()) out_ += ": " + list(pods);
      out_ += "</li>\n";
    };
    placed(d.placed_only_by_b, b, a);
    placed(d.placed_only_by_a, a, b);
    out_ += "</ul></section>\n";
  }

  // --- summary ------------------------------------------------------------------------------

  void SummarySection() {
    out_ += "<section id=\"summary\"><h2>Summary</h2><div class=\"cols\">\n";
    for (size_t i = 0; i < views_.size(); ++i) Summary(i);
    out_ += "</div></section>\n";
  }

  void Kpi(std::string_view label, std::string_view key, const std::string& value, std::string_view cls = "") {
    out_ += fmt::format("<div><dt>{}</dt><dd data-k=\"{}\"{}>{}</dd></div>", label, key,
                        cls.empty() ? "" : fmt::format(" class=\"{}\"", cls), value);
  }

  void Summary(size_t i) {
    const RunView& v = views_[i];
    const auto& s = v.summary;
    const auto& r = *v.result;
    out_ += fmt::format("<div class=\"sum\" data-run=\"{}\"><h3>{}</h3><dl class=\"kpi\">", i, EscapeHtml(v.name));
    // Against the other run: which of the two did better on each count.
    std::string better_nodes, better_pending;
    if (views_.size() == 2) {
      const auto& o = views_[1 - i].summary;
      if (s.used_nodes.size() != o.used_nodes.size()) {
        better_nodes = s.used_nodes.size() < o.used_nodes.size() ? "better" : "worse";
      }
      if (s.pending != o.pending) better_pending = s.pending < o.pending ? "better" : "worse";
    }
    Kpi("Scheduled", "scheduled", std::to_string(s.scheduled));
    Kpi("Pending", "pending", std::to_string(s.pending), better_pending);
    Kpi("Already running", "alreadyRunning", std::to_string(s.already_running));
    Kpi("Nodes used", "nodesUsed", fmt::format("{} of {}", s.used_nodes.size(), r.nodes.size()), better_nodes);
    Kpi("Evictions", "evictions", std::to_string(s.evictions));
    if (s.moves > 0) Kpi("Moves", "moves", std::to_string(s.moves));
    if (s.gated > 0) Kpi("Gated", "gated", std::to_string(s.gated));
    if (s.finished > 0) Kpi("Finished", "finished", std::to_string(s.finished));
    Kpi("Attempts", "attempts", std::to_string(r.attempts));
    out_ += "</dl>\n";
    PodsChart(s);
    if (const auto& o = r.optimizer) {
      out_ += fmt::format(
          "<p>Batch optimizer: {} batch{} ({} plan{}), {} pods, {} placed ({} by plans), {}, run bound {:.0f}, "
          "{:.2f} s{}.</p>\n",
          o->batches, o->batches == 1 ? "" : "es", o->plans, o->plans == 1 ? "" : "s", o->pods, o->placed, o->planned,
          o->all_optimal ? std::string("proved optimal")
                         : fmt::format("placed {:.2f}% under the bound at most", 100 * o->max_placed_gap),
          o->run_bound, o->seconds,
          o->solver.empty() ? std::string() : fmt::format(" ({} {:.2f} s)", EscapeHtml(o->solver), o->solver_seconds));
    }
    if (const auto& x = r.cross_node; x && (x->stats.plans > 0 || x->stats.no_plan > 0)) {
      out_ += fmt::format("<p>Cross-node preemption: {} plan{} ({} proved optimal), {} evicted, {} moved.</p>\n",
                          x->stats.plans, x->stats.plans == 1 ? "" : "s", x->stats.optimal, x->stats.evictions,
                          x->stats.moves);
    }
    out_ += "</div>\n";
  }

  // A stacked bar of the pods: scheduled in this run, already running, pending (inline SVG, each
  // part labelled with its count so it reads without colour).
  void PodsChart(const sim::SimulationSummary& s) {
    const double total = static_cast<double>(s.scheduled + s.already_running + s.pending);
    if (total == 0) return;
    constexpr double kWidth = 420;
    constexpr double kRoom = 600;  // the labels may run past the bar
    out_ += fmt::format(
        "<svg class=\"chart\" role=\"img\" aria-label=\"pods: {} scheduled, {} already running, {} pending\" "
        "width=\"{}\" height=\"36\" viewBox=\"0 0 {} 36\">",
        s.scheduled, s.already_running, s.pending, kRoom, kRoom);
    double x = 0;
    double text_end = 0;  // where the previous label ends (about 6.5 units a character)
    auto part = [&](size_t n, std::string_view label, std::string_view fill, std::string_view pattern) {
      if (n == 0) return;
      const double w = kWidth * static_cast<double>(n) / total;
      out_ += fmt::format("<rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"18\" fill=\"{}\" stroke=\"#fff\"/>", x,
                          w, fill);
      if (!pattern.empty()) {
        out_ +=
            fmt::format("<rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"18\" fill=\"url(#{})\"/>", x, w, pattern);
      }
      const std::string text = fmt::format("{} {}", n, label);
      const double tx = std::max(x + 2, text_end + 8);
      out_ += fmt::format("<text x=\"{:.1f}\" y=\"31\">{}</text>", tx, text);
      text_end = tx + 6.5 * static_cast<double>(text.size());
      x += w;
    };
    out_ +=
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"6\" fill=\"#0004\"/></pattern></defs>";
    part(s.scheduled, "scheduled", "#4c9f70", "");
    part(s.already_running, "running", "#9fb7cf", "");
    part(s.pending, "pending", "#e07a5f", "hatch");
    out_ += "</svg>\n";
  }

  // --- nodes --------------------------------------------------------------------------------

  void Legend() {
    std::vector<size_t> order(workloads_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return workloads_[x].pods > workloads_[y].pods; });
    // With more workloads than table columns, bare pods (each its own workload) are left out.
    const bool crowded = workloads_.size() > options_.max_workload_columns;
    if (crowded) {
      std::erase_if(order, [&](size_t i) { return workloads_[i].kind == "Pod"; });
      out_ += "<p class=\"note\">Bare pods are each coloured as a workload of their own.</p>";
    }
    constexpr size_t kMax = 60;
    out_ += "<div class=\"legend\">";
    for (size_t k = 0; k < order.size() && k < kMax; ++k) {
      const Workload& w = workloads_[order[k]];
      out_ += fmt::format("<span data-w=\"{}\"><i class=\"c{} p{}\"></i>{} <span class=\"note\">{}</span></span>",
                          order[k], w.colour, w.pattern, EscapeHtml(w.name), EscapeHtml(w.kind));
    }
    if (order.size() > kMax)
      out_ += fmt::format("<span class=\"note\">and {} more workloads</span>", order.size() - kMax);
    out_ += "</div>\n";
  }

  void NodesSection() {
    const size_t node_count = views_.front().nodes.size();
    const bool big = node_count > options_.heat_map_threshold;
    out_ += "<section id=\"nodes\"><h2>Nodes</h2>\n";
    out_ +=
        "<p class=\"note\">Per node and resource, the requests of its pods against allocatable; each segment is a pod, "
        "coloured and patterned by its workload (hover for the pod; a thick outline marks pods already running "
        "before the simulation). Hover a workload to see all its pods.</p>\n";
    Legend();
    out_ +=
        "<div class=\"tools\"><input id=\"q\" type=\"search\" placeholder=\"search nodes, labels, pods\" "
        "aria-label=\"search nodes, labels and pods\"><span id=\"qn\" class=\"note\"></span></div>\n";
    // Zones, in name order (nodes without a zone last), nodes in the input's order within each.
    std::map<std::string, std::vector<size_t>> zones;
    std::vector<size_t> no_zone;
    for (size_t n = 0; n < node_count; ++n) {
      const std::string z = ZoneOf(*views_.front().nodes[n].node);
      (z.empty() ? no_zone : zones[z]).push_back(n);
    }
    std::vector<std::pair<std::string, std::vector<size_t>>> groups(zones.begin(), zones.end());
    if (!no_zone.empty()) groups.emplace_back("", std::move(no_zone));
    const bool zoned = groups.size() > 1 || !groups.front().first.empty();

    if (big) {
      out_ += fmt::format(
          "<p class=\"note\">{} nodes: the heat map shows each node's highest requested share of any resource "
          "(the filled height; hatched: empty). Pick a node or search to see its pods.</p>\n",
          node_count);
      out_ += "<div class=\"hkey\">0%";
      for (int b = 0; b <= 10; b += 2) out_ += fmt::format("<a class=\"h{}\"></a>", b);
      out_ += "100% <a class=\"e\"></a> empty</div>\n";
      out_ += "<div class=\"cols\">";
      for (size_t r = 0; r < views_.size(); ++r) {
        out_ += fmt::format("<div class=\"heat\" data-run=\"{}\"><h3>{}</h3>", r, EscapeHtml(views_[r].name));
        for (const auto& [zone, members] : groups) {
          if (zoned)
            out_ += "<div class=\"zone\">" + (zone.empty() ? std::string("no zone") : "zone " + EscapeHtml(zone)) +
                    "</div>";
          out_ += "<div class=\"hm\">";
          for (size_t n : members) {
            const NodeView& nv = views_[r].nodes[n];
            const double u = Utilisation(nv);
            const int bucket = static_cast<int>(std::min(10.0, std::ceil(u * 10)));
            const std::string& name = nv.node->metadata.name;
            out_ += fmt::format("<a href=\"#n{}\" class=\"{}\" data-node=\"{}\" title=\"{}: {}{} pod{}\"></a>", n,
                                nv.pods.empty() ? std::string("e") : fmt::format("h{}", bucket), EscapeHtml(name),
                                EscapeHtml(name), nv.pods.empty() ? "" : Percent(u) + ", ", nv.pods.size(),
                                nv.pods.size() == 1 ? "" : "s");
          }
          out_ += "</div>";
        }
        out_ += "</div>";
      }
      out_ += "</div>\n<style>";
      for (int b = 0; b <= 10; ++b) {
        // From pale yellow to dark red as the node fills; the filled height says the same.
        const int g = 230 - b * 18, bl = 150 - b * 14;
        out_ +=
            fmt::format(".hm a.h{0},.hkey a.h{0}{{background:linear-gradient(to top,rgb(220,{1},{2}) {3}%,#fff {3}%)}}",
                        b, g, std::max(bl, 0), b * 10);
      }
      out_ += "</style>\n";
    }

    out_ += fmt::format("<div class=\"nodes{}\">\n", big ? " big" : "");
    // Which column is which run.
    out_ += "<div class=\"nhead\"><span>node</span>";
    for (const RunView& v : views_) out_ += "<span>" + EscapeHtml(v.name) + "</span>";
    out_ += "</div>\n";
    for (const auto& [zone, members] : groups) {
      if (zoned && !big) {
        out_ +=
            "<div class=\"zone\">" + (zone.empty() ? std::string("no zone") : "zone " + EscapeHtml(zone)) + "</div>\n";
      }
      for (size_t n : members) NodeRow(n, big);
    }
    out_ += "</div></section>\n";
  }

  void NodeRow(size_t n, bool big) {
    const api::Node& node = *views_.front().nodes[n].node;
    const std::string name = EscapeHtml(node.metadata.name);
    out_ += fmt::format("<div class=\"nrow{}\" id=\"n{}\" data-node=\"{}\"><div class=\"nh\"><b>{}</b>",
                        big ? " off" : "", n, name, name);
    std::string labels;
    for (const auto& [k, val] : node.metadata.labels) {
      if (k == "kubernetes.io/hostname") continue;
      labels += (labels.empty() ? "" : " ") + k + "=" + val;
    }
    if (!labels.empty()) out_ += "<div class=\"lbl\">" + EscapeHtml(labels) + "</div>";
    std::string taints;
    for (const auto& t : node.spec.taints) {
      taints += (taints.empty() ? "" : ", ") + t.key + (t.value.empty() ? "" : "=" + t.value) + ":" +
                std::string(api::ToString(t.effect));
    }
    if (node.spec.unschedulable) taints += std::string(taints.empty() ? "" : ", ") + "unschedulable";
    if (!taints.empty()) out_ += "<div class=\"taint\">taints: " + EscapeHtml(taints) + "</div>";
    out_ += "</div>";
    std::vector<const NodeView*> per_run;
    for (const RunView& v : views_) per_run.push_back(&v.nodes[n]);
    const std::vector<std::string> resources = ResourcesOf(per_run);
    for (size_t r = 0; r < views_.size(); ++r) NodeCard(r, *per_run[r], resources);
    out_ += "</div>\n";
  }

  void NodeCard(size_t run, const NodeView& nv, const std::vector<std::string>& resources) {
    const RunView& v = views_[run];
    out_ += fmt::format("<div class=\"node{}\" data-node=\"{}\" data-run=\"{}\">", nv.pods.empty() ? " empty" : "",
                        EscapeHtml(nv.node->metadata.name), run);
    for (const std::string& res : resources) {
      const bool pods = res == "pods";
      const int64_t alloc = Amount(nv.allocatable, res);
      const int64_t req = pods ? static_cast<int64_t>(nv.pods.size()) : Amount(nv.requested, res);
      const bool over = req > alloc;
      const double scale = static_cast<double>(std::max<int64_t>({alloc, req, 1}));
      out_ += fmt::format("<span class=\"k{}\" title=\"{}\">{}</span><div class=\"bar{}\">", over ? " over" : "",
                          EscapeHtml(res), EscapeHtml(res), over ? " over" : "");
      for (size_t pi : nv.pods) {
        const PodView& pv = v.pods[pi];
        const int64_t amount = pods ? 1 : Amount(pv.requests, res);
        if (amount <= 0) continue;
        const double share = static_cast<double>(amount) / scale;
        const Workload& w = workloads_[pv.workload];
        const std::string who = EscapeHtml(PodName(*pv.pod));
        out_ += fmt::format("<i class=\"c{} p{}{}\" data-w=\"{}\"", w.colour, w.pattern,
                            pv.already_running ? " pre" : "", pv.workload);
        if (pods) {
          out_ += fmt::format(" data-pod=\"{}\" title=\"{} ({}{})\"", EscapeHtml(pv.pod->Key()), who,
                              w.kind == "Pod" ? std::string("bare pod") : EscapeHtml(w.kind + " " + w.name),
                              pv.already_running ? ", already running" : "");
        } else {
          out_ += fmt::format(" title=\"{}: {}\"", who, FormatAmount(res, amount));
        }
        out_ += fmt::format(" style=\"width:{}\">", Percent(share));
        // A label where it fits (about 6 characters): the workload's name, for reading without colour.
        if (share >= 0.07) out_ += EscapeHtml(w.name);
        out_ += "</i>";
      }
      out_ += fmt::format("</div><span class=\"v{}\">{} / {}{}</span>", over ? " over" : "", FormatAmount(res, req),
                          FormatAmount(res, alloc), over ? " over!" : "");
    }
    if (nv.pods.empty()) out_ += "<span class=\"none\">empty: no pods</span>";
    out_ += "</div>";
  }

  // --- node × workload table --------------------------------------------------------------

  void WorkloadTableSection() {
    out_ += "<section id=\"placement\"><h2>Placement by node and workload</h2>\n";
    // Columns: the workloads with the most pods; bare pods add up in one column when there are
    // too many workloads for a column each, and whatever is left in another.
    std::vector<size_t> order(workloads_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const bool crowded = workloads_.size() > options_.max_workload_columns;
    std::vector<size_t> columns;
    for (size_t i : order) {
      if (crowded && workloads_[i].kind == "Pod") continue;
      columns.push_back(i);
    }
    std::stable_sort(columns.begin(), columns.end(),
                     [&](size_t x, size_t y) { return workloads_[x].pods > workloads_[y].pods; });
    size_t limit = options_.max_workload_columns;
    if (crowded && columns.size() > limit) limit = limit > 0 ? limit - 1 : 0;  // room for "other"
    const bool other = columns.size() > limit;
    if (other) columns.resize(limit);
    std::vector<int> column_of(workloads_.size(), -1);
    for (size_t c = 0; c < columns.size(); ++c) column_of[columns[c]] = static_cast<int>(c);
    const bool bare_column = crowded;
    if (crowded) {
      out_ += fmt::format("<p class=\"note\">{} workloads: bare pods are counted together{}.</p>\n", workloads_.size(),
                          other ? fmt::format(", and the workloads past the {} largest", columns.size()) : "");
    }
    out_ += "<div class=\"cols\">";
    for (size_t r = 0; r < views_.size(); ++r) {
      const RunView& v = views_[r];
      out_ += fmt::format("<div class=\"scroll\"><h3>{}</h3><table class=\"wl\" data-run=\"{}\"><tr><th>node</th>",
                          EscapeHtml(v.name), r);
      for (size_t w : columns) {
        out_ += fmt::format("<th data-w=\"{}\" title=\"{} {}\">{}</th>", w, EscapeHtml(workloads_[w].kind),
                            EscapeHtml(workloads_[w].name), EscapeHtml(workloads_[w].name));
      }
      if (bare_column) out_ += "<th>bare pods</th>";
      if (other) out_ += "<th>other</th>";
      out_ += "<th>cpu</th><th>memory</th></tr>\n";
      for (const NodeView& nv : v.nodes) {
        std::vector<int> counts(columns.size() + 2, 0);
        for (size_t pi : nv.pods) {
          const size_t w = v.pods[pi].workload;
          if (column_of[w] >= 0) {
            ++counts[column_of[w]];
          } else if (bare_column && workloads_[w].kind == "Pod") {
            ++counts[columns.size()];
          } else {
            ++counts[columns.size() + 1];
          }
        }
        out_ += "<tr><th class=\"mono\">" + EscapeHtml(nv.node->metadata.name) + "</th>";
        auto cell = [&](int c) {
          out_ += c == 0 ? std::string("<td class=\"z\">·</td>") : fmt::format("<td class=\"n\">{}</td>", c);
        };
        for (size_t c = 0; c < columns.size(); ++c) cell(counts[c]);
        if (bare_column) cell(counts[columns.size()]);
        if (other) cell(counts[columns.size() + 1]);
        out_ += fmt::format("<td class=\"n\">{} / {}</td><td class=\"n\">{} / {}</td></tr>\n",
                            FormatAmount("cpu", nv.requested.milli_cpu), FormatAmount("cpu", nv.allocatable.milli_cpu),
                            FormatAmount("memory", nv.requested.memory), FormatAmount("memory", nv.allocatable.memory));
      }
      out_ += "</table></div>";
    }
    out_ += "</div></section>\n";
  }

  // --- pending pods -------------------------------------------------------------------------

  void PendingSection() {
    out_ += "<section id=\"pending\"><h2>Pending pods</h2><div class=\"cols\">\n";
    for (size_t r = 0; r < views_.size(); ++r) {
      const RunView& v = views_[r];
      out_ += fmt::format("<div id=\"pending-{}\" data-run=\"{}\"><h3>{}: {} pending</h3>", r, r, EscapeHtml(v.name),
                          v.unbound.size());
      // Grouped by the message (upstream's FailedScheduling text), largest group first.
      std::vector<std::pair<std::string, std::vector<const api::Pod*>>> groups;
      std::unordered_map<std::string, size_t> at;
      for (const api::Pod* p : v.unbound) {
        std::string reason = sim::SchedulingMessage(*p);
        if (reason.empty() && !p->spec.scheduling_gates.empty()) reason = sim::GatedMessage(*p);
        if (reason.empty() && p->metadata.deletion_timestamp_ns) reason = "not scheduled: the pod is being deleted";
        const auto& profiles = v.result->profiles;
        if (reason.empty() && std::find(profiles.begin(), profiles.end(), p->spec.scheduler_name) == profiles.end()) {
          reason = fmt::format("not scheduled: schedulerName \"{}\" is not a profile of this scheduler",
                               p->spec.scheduler_name);
        }
        if (reason.empty()) reason = "not scheduled (no attempt recorded)";
        auto [it, inserted] = at.try_emplace(reason, groups.size());
        if (inserted) groups.emplace_back(reason, std::vector<const api::Pod*>{});
        groups[it->second].second.push_back(p);
      }
      std::stable_sort(groups.begin(), groups.end(),
                       [](const auto& x, const auto& y) { return x.second.size() > y.second.size(); });
      if (groups.empty()) out_ += "<p class=\"note\">Every pod was placed.</p>";
      if (groups.size() > 1) ReasonTable(groups);
      for (const auto& [reason, pods] : groups) {
        const std::string msg = EscapeHtml(reason);
        out_ += fmt::format(
            "<details class=\"reason\" data-reason=\"{}\" open><summary><b>{} pod{}</b>: <span class=\"msg\">{}</span>"
            "</summary><ul>",
            msg, pods.size(), pods.size() == 1 ? "" : "s", msg);
        for (const api::Pod* p : pods) {
          out_ +=
              fmt::format("<li data-pod=\"{}\"><code>{}</code></li>", EscapeHtml(p->Key()), EscapeHtml(PodName(*p)));
        }
        out_ += "</ul></details>\n";
      }
      out_ += "</div>\n";
    }
    out_ += "</div></section>\n";
  }

  // The reasons upstream's messages give ("0/7 nodes are available: 4 Insufficient cpu, 3 node(s)
  // had untolerated taint(s). preemption: ..."), each with the pods that met it and on how many
  // nodes at most: what keeps the pods pending, across messages.
  void ReasonTable(const std::vector<std::pair<std::string, std::vector<const api::Pod*>>>& groups) {
    struct Tally {
      size_t pods = 0;
      int64_t max_nodes = 0;
    };
    std::vector<std::pair<std::string, Tally>> reasons;
    for (const auto& [message, pods] : groups) {
      for (const auto& [reason, nodes] : FilterReasons(message)) {
        auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == reason; });
        if (it == reasons.end()) it = reasons.insert(reasons.end(), {reason, Tally{}});
        it->second.pods += pods.size();
        it->second.max_nodes = std::max(it->second.max_nodes, nodes);
      }
    }
    if (reasons.empty()) return;
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& x, const auto& y) { return x.second.pods > y.second.pods; });
    out_ += "<table class=\"reasons\"><tr><th>reason</th><th>pending pods</th><th>nodes (at most)</th></tr>\n";
    for (const auto& [reason, t] : reasons) {
      out_ += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n", EscapeHtml(reason),
                          t.pods, t.max_nodes);
    }
    out_ += "</table>\n";
  }

  // --- evictions ----------------------------------------------------------------------------

  void EvictionsSection() {
    bool any = false;
    for (const RunView& v : views_) any = any || !v.result->evictions.empty();
    if (!any) return;
    out_ += "<section id=\"evictions\"><h2>Evictions and moves</h2><div class=\"cols\">\n";
    for (size_t r = 0; r < views_.size(); ++r) {
      const RunView& v = views_[r];
      out_ += fmt::format("<div data-run=\"{}\"><h3>{}</h3>", r, EscapeHtml(v.name));
      if (v.result->evictions.empty()) {
        out_ += "<p class=\"note\">None.</p></div>\n";
        continue;
      }
      out_ += "<table><tr><th>pod</th><th>node</th><th></th><th>reason</th><th>recreated as</th></tr>\n";
      for (const auto& e : v.result->evictions) {
        out_ += fmt::format(
            "<tr data-pod=\"{}\"><td><code>{}</code></td><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "</tr>\n",
            EscapeHtml(e.pod->Key()), EscapeHtml(PodName(*e.pod)), EscapeHtml(e.pod->spec.node_name),
            e.moved_to.empty() ? std::string("Preempted") : "Moved to " + EscapeHtml(e.moved_to), EscapeHtml(e.reason),
            e.replacement ? EscapeHtml(e.replacement->Key()) : std::string("-"));
      }
      out_ += "</table></div>\n";
    }
    out_ += "</div></section>\n";
  }

  // --- --explain ----------------------------------------------------------------------------

  void ExplanationSection() {
    for (size_t r = 0; r < views_.size(); ++r) {
      const auto& e = views_[r].result->explanation;
      if (!e) continue;
      out_ += fmt::format(
          "<section id=\"explain-{}\" class=\"explain\" data-pod=\"{}\"><h2>Why {} went where it went</h2>\n", r,
          EscapeHtml(e->pod_key), EscapeHtml(e->pod_key));
      out_ += "<p>Last scheduling attempt (profile <code>" + EscapeHtml(e->profile) + "</code>): ";
      if (!e->selected_node.empty())
        out_ += "selected node <b class=\"mono\">" + EscapeHtml(e->selected_node) + "</b>.";
      if (!e->message.empty()) out_ += "FailedScheduling: <span class=\"msg\">" + EscapeHtml(e->message) + "</span>";
      if (!e->pre_filter_message.empty()) out_ += " PreFilter: " + EscapeHtml(e->pre_filter_message);
      out_ += "</p>\n";
      // Score plugins in the order the first scored node lists them.
      std::vector<std::string> plugins;
      for (const auto& n : e->nodes) {
        for (const auto& s : n.scores) {
          if (std::find(plugins.begin(), plugins.end(), s.plugin) == plugins.end()) plugins.push_back(s.plugin);
        }
      }
      out_ += "<div class=\"scroll\"><table class=\"xp\"><tr><th>node</th><th>Filter</th>";
      for (const auto& p : plugins)
        out_ += "<th>" + EscapeHtml(p) + "<br><span class=\"note\">raw → weighted (normalized×weight)</span></th>";
      out_ += "<th>total</th></tr>\n";
      bool any_unevaluated = false;
      for (const auto& n : e->nodes) {
        const bool selected = n.node == e->selected_node;
        out_ += fmt::format("<tr data-node=\"{}\"{}><th class=\"mono\">{}{}</th><td>", EscapeHtml(n.node),
                            selected ? " class=\"sel\"" : "", EscapeHtml(n.node), selected ? " (selected)" : "");
        if (!n.excluded.empty()) {
          out_ += "<span class=\"rej\">excluded by PreFilter: " + EscapeHtml(n.excluded) + "</span>";
        } else if (n.feasible) {
          out_ += "<span class=\"ok\">passed</span>";
        } else {
          for (const auto& f : n.filters) {
            if (f.status.IsSuccess() || f.status.IsSkip()) continue;
            out_ += "<div class=\"rej\"><b>" + EscapeHtml(f.plugin) + "</b>: " + EscapeHtml(f.status.Message());
            if (!f.detail.empty()) out_ += " <span class=\"note\">[" + EscapeHtml(f.detail) + "]</span>";
            out_ += "</div>";
          }
        }
        if (!n.evaluated && n.excluded.empty()) {
          out_ += " *";
          any_unevaluated = true;
        }
        out_ += "</td>";
        for (const auto& p : plugins) {
          auto it = std::find_if(n.scores.begin(), n.scores.end(), [&](const auto& s) { return s.plugin == p; });
          if (it == n.scores.end()) {
            out_ += "<td class=\"z\">-</td>";
          } else {
            out_ += fmt::format(
                "<td class=\"n\" title=\"raw {0}, normalized {1}, weight {2}\">{0} → <b>{3}</b> "
                "<span class=\"note\">({1}×{2})</span></td>",
                it->raw, it->normalized, it->weight, it->weighted);
          }
        }
        out_ += n.scores.empty() ? std::string("<td class=\"z\">-</td>")
                                 : fmt::format("<td class=\"n\"><b>{}</b></td>", n.total);
        out_ += "</tr>\n";
      }
      out_ += "</table></div>\n";
      if (any_unevaluated) {
        out_ +=
            "<p class=\"note\">* not filtered by the scheduling cycle (node sampling stopped before it, or the "
            "nominated node was chosen); filtered here for display only.</p>\n";
      }
      out_ += "</section>\n";
    }
  }

  // --- configuration ------------------------------------------------------------------------

  void ConfigurationSection() {
    out_ += "<section id=\"configuration\"><h2>Configuration</h2><div class=\"cols\">\n";
    for (size_t r = 0; r < views_.size(); ++r) {
      const RunView& v = views_[r];
      out_ += fmt::format("<div data-run=\"{}\"><h3>{}</h3>", r, EscapeHtml(v.name));
      for (const auto& pc : v.result->profile_configs) {
        out_ += "<table class=\"cfg\"><tr><th colspan=\"2\">profile <code>" + EscapeHtml(pc.scheduler_name) +
                "</code></th></tr>\n";
        for (const auto& [point, names] : pc.plugins) {
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + EscapeHtml(n);
          out_ += "<tr><td>" + EscapeHtml(point) + "</td><td>" + list + "</td></tr>\n";
        }
        std::string scores;
        for (const auto& [n, w] : pc.score_weights) {
          scores += fmt::format("{}{} <b>×{}</b>", scores.empty() ? "" : ", ", EscapeHtml(n), w);
        }
        if (!scores.empty()) out_ += "<tr><td>score (weight)</td><td>" + scores + "</td></tr>\n";
        out_ += "<tr><td>percentageOfNodesToScore</td><td>" +
                (pc.percentage_of_nodes_to_score ? std::to_string(*pc.percentage_of_nodes_to_score) + "%"
                                                 : std::string("adaptive (upstream's default)")) +
                "</td></tr>\n</table>\n";
        if (!pc.plugin_args.empty()) {
          // {"<plugin>": args, ...} indented by two spaces a level, as it has always been shown.
          std::string args = "{";
          for (const auto& [n, a] : pc.plugin_args) {
            args += fmt::format("{}\n  {}: {}", args.size() > 1 ? "," : "", framework::QuoteMessageString(n),
                                a.View().EncodePretty(1));
          }
          args += pc.plugin_args.empty() ? "}" : "\n}";
          out_ +=
              "<details class=\"cfg\"><summary>pluginConfig</summary><pre>" + EscapeHtml(args) + "</pre></details>\n";
        }
      }
      out_ += "</div>\n";
    }
    out_ += "</div></section>\n";
  }

  const ReportOptions& options_;
  Workloads workloads_;
  std::vector<RunView> views_;
  bool multi_ns_ = false;
  std::string out_;
};

}  // namespace

std::string RenderReport(std::span<const Run> runs, const ReportOptions& options) {
  Page page(runs, options);
  return page.Render();
}

}  // namespace kubesched::report
