#include "report/report.h"

#include <algorithm>

#include <fmt/format.h>

#include "framework/args_view.h"
#include "report/html_writer.h"
#include "report/report_model.h"
#include "report/time_charts.h"

namespace kubesched::report {
namespace {

// --- the page's own CSS and script ------------------------------------------------------------

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
#timeline .tgrid{display:grid;gap:4px 16px;grid-template-columns:repeat(auto-fill,minmax(520px,1fr))}
.tfig{margin:0}.tfig figcaption{font-weight:600;color:var(--muted);font-size:12px}
.tchart{width:100%;height:auto;max-width:640px}.tchart text{font-size:10px;fill:var(--muted)}
.tchart .yl{text-anchor:end}.tchart .xl{text-anchor:middle}
.tchart .grid{stroke:var(--soft)}.tchart .axis{stroke:var(--line)}.tchart .frame{fill:none;stroke:var(--line)}
.tchart .mark{stroke-width:1.2}.tchart .mark.move{stroke-dasharray:2 1}.tchart .mark.batch{stroke-dasharray:1 1}
.sw{display:inline-block;width:14px;height:4px;margin-right:4px;vertical-align:middle}
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

std::string Fixed1(double v) { return fmt::format("{:.1f}", v); }

// A profile's pluginConfig as its <pre> shows it: {"<plugin>": args, ...}, two spaces a level.
std::string PluginConfigText(const sim::SimulationResult::ProfileConfig& pc) {
  std::string args = "{";
  for (const auto& [n, a] : pc.plugin_args) {
    args += fmt::format("{}\n  {}: {}", args.size() > 1 ? "," : "", framework::QuoteMessageString(n),
                        a.View().EncodePretty(1));
  }
  args += pc.plugin_args.empty() ? "}" : "\n}";
  return args;
}

std::string Plural(size_t n) { return n == 1 ? "" : "s"; }

// Walks the model with the writer: the page's structure, nothing computed.
class Renderer {
 public:
  explicit Renderer(const model::ReportModel& m) : m_(m) {}

  std::string Render() {
    w_.Raw("<!DOCTYPE html>\n");
    w_.Open("html", {{"lang", "en"}});
    Head();
    w_.Open("body", {{"style", fmt::format("--runs:{}", m_.runs.size())}});
    w_.Newline();
    Header();
    if (m_.differences) Differences(*m_.differences);
    Summaries();
    TimeCharts();
    Nodes();
    Placement();
    Pending();
    Evictions();
    PodGroups();
    for (const model::ExplanationView& e : m_.explanations) Explanation(e);
    Configuration();
    w_.Open("script");
    w_.Raw(kScript);
    w_.Close();
    w_.Newline();
    w_.Close();  // body
    w_.Close();  // html
    w_.Newline();
    return w_.Take();
  }

 private:
  void TimeCharts() {
    std::vector<Run> runs;
    for (const model::RunData& r : m_.runs) runs.push_back({r.name, r.result});
    charts::WriteCharts(w_, runs, charts::BuildCharts(runs));
  }

  void Head() {
    w_.Open("head");
    w_.Void("meta", {{"charset", "utf-8"}});
    w_.Newline();
    // The policy's quotes are written as is, as browsers and the tests read it.
    w_.Raw("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    w_.Raw(kCsp);
    w_.Raw("\">\n");
    w_.Void("meta", {{"name", "viewport"}, {"content", "width=device-width,initial-scale=1"}});
    w_.Newline();
    w_.Void("meta", {{"name", "generator"}, {"content", "kubesched simulate --report"}});
    w_.Newline();
    w_.Void("link", {{"rel", "icon"}, {"href", "data:,"}});  // no favicon request
    w_.Newline();
    w_.Element("title", m_.title);
    w_.Newline();
    w_.Open("style");
    w_.Raw(kStyle);
    w_.Close();
    w_.Element("style", {{"id", "hl"}}, "");
    w_.Close();  // head
    w_.Newline();
  }

  void Header() {
    w_.Open("header");
    w_.Element("h1", m_.title);
    w_.Newline();
    w_.Open("p", {{"class", "meta"}});
    w_.Text("Manifests: ");
    w_.Element("code", m_.inputs);
    w_.RawNumbers(" · seed {} · {} nodes, {} pods · simulated time {:.1f} s", m_.seed, m_.node_count, m_.pod_count,
                  m_.simulated_seconds);
    w_.Close();
    w_.Close();
    w_.Newline();
  }

  // A section holding a column per run.
  void OpenColumns(Markup id, Markup heading) {
    w_.Open("section", {{"id", id.text()}});
    w_.Element("h2", heading.text());
    w_.Open("div", {{"class", "cols"}});
    w_.Newline();
  }
  void CloseColumns() {
    w_.Close();
    w_.Close();
    w_.Newline();
  }

  // --- differences (two runs) ---------------------------------------------------------------

  // Up to 50 names as code, else "none".
  void CodeList(const std::vector<std::string>& items) {
    if (items.empty()) w_.Text("none");
    for (size_t i = 0; i < items.size() && i < 50; ++i) {
      if (i) w_.Text(", ");
      w_.Element("code", items[i]);
    }
    if (items.size() > 50) w_.RawNumbers(" and {} more", items.size() - 50);
  }

  void PlacedOnly(const model::PlacedOnly& p) {
    w_.Open("li", {{"data-k", "placedOnlyBy"}, {"data-run", p.run}});
    w_.Open("b", {Attr::When(!p.pods.empty(), "class", "better")});
    w_.Text(
        fmt::format("{} pod{} placed by {} that {} left pending", p.pods.size(), Plural(p.pods.size()), p.by, p.other));
    w_.Close();
    if (!p.pods.empty()) {
      w_.Text(": ");
      CodeList(p.pods);
    }
    w_.Close();
    w_.Newline();
  }

  void Differences(const model::DifferencesView& d) {
    w_.Open("section", {{"id", "differences"}});
    w_.Element("h2", "Differences");
    w_.Newline();
    w_.Open("table");
    w_.Open("tr");
    w_.Element("th", "");
    w_.Element("th", d.name_a);
    w_.Element("th", d.name_b);
    w_.Element("th", "difference");
    w_.Close();
    w_.Newline();
    for (const model::DifferenceRow& r : d.rows) {
      w_.Open("tr", {{"data-k", r.key}});
      w_.Element("th", r.label);
      w_.Open("td", {{"class", "n"}});
      w_.Element("span", {Attr::When(!r.class_a.empty(), "class", r.class_a)}, std::to_string(r.a));
      w_.Close();
      w_.Open("td", {{"class", "n"}});
      w_.Element("span", {Attr::When(!r.class_b.empty(), "class", r.class_b)}, std::to_string(r.b));
      w_.Close();
      w_.Element("td", r.difference);
      w_.Close();
      w_.Newline();
    }
    w_.Close();  // table
    w_.Newline();
    w_.Open("ul", {{"class", "diffs"}});
    w_.Newline();
    w_.Open("li", {{"data-k", "nodesSaved"}});
    if (d.nodes_saved > 0) {
      w_.Element("b", {{"class", "better"}},
                 fmt::format("{} saves {} node{}", d.saver, d.nodes_saved, Plural(d.nodes_saved)));
      w_.Text(fmt::format(" against {}: ", d.against));
    } else {
      w_.Text("Both use as many nodes. ");
    }
    w_.Text(fmt::format("used only by {}: ", d.name_a));
    CodeList(d.nodes_only_a);
    w_.Text(fmt::format("; used only by {}: ", d.name_b));
    CodeList(d.nodes_only_b);
    w_.Close();
    w_.Newline();
    PlacedOnly(d.only_b);
    PlacedOnly(d.only_a);
    w_.Close();  // ul
    w_.Close();  // section
    w_.Newline();
  }

  // --- summary ------------------------------------------------------------------------------

  void Summaries() {
    OpenColumns("summary", "Summary");
    for (size_t r = 0; r < m_.summaries.size(); ++r) Summary(r, m_.summaries[r]);
    CloseColumns();
  }

  void Summary(size_t run, const model::RunSummary& s) {
    w_.Open("div", {{"class", "sum"}, {"data-run", run}});
    w_.Element("h3", s.name);
    w_.Open("dl", {{"class", "kpi"}});
    for (const model::Kpi& k : s.kpis) {
      w_.Open("div");
      w_.Element("dt", k.label);
      w_.Element("dd", {{"data-k", k.key}, Attr::When(!k.verdict.empty(), "class", k.verdict)}, k.value);
      w_.Close();
    }
    w_.Close();
    w_.Newline();
    PodsChart(s);
    for (const std::string* line : {&s.optimizer, &s.cross_node}) {
      if (line->empty()) continue;
      w_.Element("p", *line);
      w_.Newline();
    }
    w_.Close();
    w_.Newline();
  }

  // A stacked bar of the pods: scheduled in this run, already running, pending (inline SVG, each
  // part labelled with its count so it reads without colour).
  void PodsChart(const model::RunSummary& s) {
    if (s.chart.empty()) return;
    w_.RawNumbers(
        "<svg class=\"chart\" role=\"img\" aria-label=\"pods: {} scheduled, {} already running, {} pending\" "
        "width=\"{}\" height=\"36\" viewBox=\"0 0 {} 36\">",
        s.scheduled, s.already_running, s.pending, model::kChartRoom, model::kChartRoom);
    w_.Raw(
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"6\" fill=\"#0004\"/></pattern></defs>");
    for (const model::ChartPart& p : s.chart) {
      w_.SelfClosing("rect", {{"x", Fixed1(p.x)},
                              {"y", "0"},
                              {"width", Fixed1(p.width)},
                              {"height", "18"},
                              {"fill", p.fill},
                              {"stroke", "#fff"}});
      if (p.hatched) {
        w_.SelfClosing(
            "rect",
            {{"x", Fixed1(p.x)}, {"y", "0"}, {"width", Fixed1(p.width)}, {"height", "18"}, {"fill", "url(#hatch)"}});
      }
      w_.Element("text", {{"x", Fixed1(p.text_x)}, {"y", "31"}}, fmt::format("{} {}", p.count, p.label));
    }
    w_.Raw("</svg>\n");
  }

  // --- nodes --------------------------------------------------------------------------------

  void Legend() {
    const model::NodesView& v = m_.nodes;
    if (v.legend_crowded)
      w_.Element("p", {{"class", "note"}}, "Bare pods are each coloured as a workload of their own.");
    w_.Open("div", {{"class", "legend"}});
    for (size_t i : v.legend) {
      const model::Workload& wl = m_.workloads[i];
      w_.Open("span", {{"data-w", i}});
      w_.Element("i", {{"class", fmt::format("c{} p{}", wl.colour, wl.pattern)}}, "");
      w_.Text(wl.name);
      w_.Text(" ");
      w_.Element("span", {{"class", "note"}}, wl.kind);
      w_.Close();
    }
    if (v.legend_more > 0) {
      w_.Element("span", {{"class", "note"}}, fmt::format("and {} more workloads", v.legend_more));
    }
    w_.Close();
    w_.Newline();
  }

  void Zone(const std::string& zone) {
    w_.Element("div", {{"class", "zone"}}, zone.empty() ? std::string("no zone") : "zone " + zone);
  }

  void HeatMap() {
    const model::NodesView& v = m_.nodes;
    w_.RawNumbers(
        "<p class=\"note\">{} nodes: the heat map shows each node's highest requested share of any resource "
        "(the filled height; hatched: empty). Pick a node or search to see its pods.</p>\n",
        v.rows.size());
    w_.Open("div", {{"class", "hkey"}});
    w_.Text("0%");
    for (int b = 0; b <= 10; b += 2) w_.RawNumbers("<a class=\"h{}\"></a>", b);
    w_.Raw("100% <a class=\"e\"></a> empty");
    w_.Close();
    w_.Newline();
    w_.Open("div", {{"class", "cols"}});
    for (size_t r = 0; r < v.heat.size(); ++r) {
      w_.Open("div", {{"class", "heat"}, {"data-run", r}});
      w_.Element("h3", m_.runs[r].name);
      for (const model::ZoneGroup& z : v.zones) {
        if (v.zoned) Zone(z.zone);
        w_.Open("div", {{"class", "hm"}});
        for (size_t n : z.nodes) {
          const model::HeatCell& c = v.heat[r][n];
          w_.Element("a",
                     {{"href", fmt::format("#n{}", n)},
                      {"class", c.css_class},
                      {"data-node", v.rows[n].name},
                      {"title", c.title}},
                     "");
        }
        w_.Close();
      }
      w_.Close();
    }
    w_.Close();
    w_.Newline();
    w_.Open("style");
    for (int b = 0; b <= 10; ++b) {
      // From pale yellow to dark red as the node fills; the filled height says the same.
      const int g = 230 - b * 18, bl = 150 - b * 14;
      w_.RawNumbers(".hm a.h{0},.hkey a.h{0}{{background:linear-gradient(to top,rgb(220,{1},{2}) {3}%,#fff {3}%)}}", b,
                    g, std::max(bl, 0), b * 10);
    }
    w_.Close();
    w_.Newline();
  }

  void Nodes() {
    const model::NodesView& v = m_.nodes;
    w_.Open("section", {{"id", "nodes"}});
    w_.Element("h2", "Nodes");
    w_.Newline();
    w_.Element("p", {{"class", "note"}},
               "Per node and resource, the requests of its pods against allocatable; each segment is a pod, coloured "
               "and patterned by its workload (hover for the pod; a thick outline marks pods already running before "
               "the simulation). Hover a workload to see all its pods.");
    w_.Newline();
    Legend();
    w_.Open("div", {{"class", "tools"}});
    w_.Void("input", {{"id", "q"},
                      {"type", "search"},
                      {"placeholder", "search nodes, labels, pods"},
                      {"aria-label", "search nodes, labels and pods"}});
    w_.Element("span", {{"id", "qn"}, {"class", "note"}}, "");
    w_.Close();
    w_.Newline();
    if (v.big) HeatMap();
    w_.Open("div", {{"class", v.big ? "nodes big" : "nodes"}});
    w_.Newline();
    // Which column is which run.
    w_.Open("div", {{"class", "nhead"}});
    w_.Element("span", "node");
    for (const model::RunData& run : m_.runs) w_.Element("span", run.name);
    w_.Close();
    w_.Newline();
    for (const model::ZoneGroup& z : v.zones) {
      if (v.zoned && !v.big) {
        Zone(z.zone);
        w_.Newline();
      }
      for (size_t n : z.nodes) NodeRow(v.rows[n]);
    }
    w_.Close();
    w_.Close();
    w_.Newline();
  }

  void NodeRow(const model::NodeRow& row) {
    w_.Open("div", {{"class", m_.nodes.big ? "nrow off" : "nrow"},
                    {"id", fmt::format("n{}", row.index)},
                    {"data-node", row.name}});
    w_.Open("div", {{"class", "nh"}});
    w_.Element("b", row.name);
    if (!row.labels.empty()) w_.Element("div", {{"class", "lbl"}}, row.labels);
    if (!row.taints.empty()) w_.Element("div", {{"class", "taint"}}, "taints: " + row.taints);
    w_.Close();
    for (const model::NodeCard& card : row.cards) NodeCard(card);
    w_.Close();
    w_.Newline();
  }

  void NodeCard(const model::NodeCard& card) {
    const model::NodeUse& use = *card.use;
    w_.Open("div", {{"class", use.pods.empty() ? "node empty" : "node"},
                    {"data-node", use.node->metadata.name},
                    {"data-run", card.run}});
    for (const model::ResourceBar& bar : card.bars) {
      w_.Element("span", {{"class", bar.over ? "k over" : "k"}, {"title", bar.resource}}, bar.resource);
      w_.Open("div", {{"class", bar.over ? "bar over" : "bar"}});
      for (const model::Segment& s : bar.segments) Segment(card.run, bar, s);
      w_.Close();
      w_.Element("span", {{"class", bar.over ? "v over" : "v"}},
                 fmt::format("{} / {}{}", model::FormatAmount(bar.resource, bar.requested),
                             model::FormatAmount(bar.resource, bar.allocatable), bar.over ? " over!" : ""));
    }
    if (use.pods.empty()) w_.Element("span", {{"class", "none"}}, "empty: no pods");
    w_.Close();
  }

  void Segment(size_t run, const model::ResourceBar& bar, const model::Segment& s) {
    const model::PlacedPod& pod = m_.runs[run].pods[s.pod];
    const model::Workload& wl = m_.workloads[pod.workload];
    const std::string who = m_.qualified_names ? pod.pod->Key() : pod.pod->metadata.name;
    const bool pods_bar = bar.resource == "pods";
    const std::string title =
        pods_bar ? fmt::format("{} ({}{})", who, wl.kind == "Pod" ? std::string("bare pod") : wl.kind + " " + wl.name,
                               pod.already_running ? ", already running" : "")
                 : fmt::format("{}: {}", who, model::FormatAmount(bar.resource, s.amount));
    w_.Open("i", {{"class", fmt::format("c{} p{}{}", wl.colour, wl.pattern, pod.already_running ? " pre" : "")},
                  {"data-w", pod.workload},
                  Attr::When(pods_bar, "data-pod", pods_bar ? pod.pod->Key() : std::string()),
                  {"title", title},
                  {"style", "width:" + model::Percent(s.share)}});
    // A label where it fits (about 6 characters): the workload's name, for reading without colour.
    if (s.share >= 0.07) w_.Text(wl.name);
    w_.Close();
  }

  // --- node × workload table --------------------------------------------------------------

  void Placement() {
    const model::PlacementView& v = m_.placement;
    w_.Open("section", {{"id", "placement"}});
    w_.Element("h2", "Placement by node and workload");
    w_.Newline();
    if (v.bare_column) {
      w_.Element(
          "p", {{"class", "note"}},
          fmt::format("{} workloads: bare pods are counted together{}.", m_.workloads.size(),
                      v.other_column ? fmt::format(", and the workloads past the {} largest", v.columns.size()) : ""));
      w_.Newline();
    }
    w_.Open("div", {{"class", "cols"}});
    for (size_t r = 0; r < v.runs.size(); ++r) PlacementTable(r, v);
    w_.Close();
    w_.Close();
    w_.Newline();
  }

  void PlacementTable(size_t run, const model::PlacementView& v) {
    w_.Open("div", {{"class", "scroll"}});
    w_.Element("h3", m_.runs[run].name);
    w_.Open("table", {{"class", "wl"}, {"data-run", run}});
    w_.Open("tr");
    w_.Element("th", "node");
    for (size_t i : v.columns) {
      const model::Workload& wl = m_.workloads[i];
      w_.Element("th", {{"data-w", i}, {"title", wl.kind + " " + wl.name}}, wl.name);
    }
    if (v.bare_column) w_.Element("th", "bare pods");
    if (v.other_column) w_.Element("th", "other");
    w_.Element("th", "cpu");
    w_.Element("th", "memory");
    w_.Close();
    w_.Newline();
    for (const model::PlacementRow& row : v.runs[run]) {
      const model::NodeUse& use = *row.use;
      w_.Open("tr");
      w_.Element("th", {{"class", "mono"}}, use.node->metadata.name);
      for (int c : row.counts) {
        if (c == 0) {
          w_.Element("td", {{"class", "z"}}, "·");
        } else {
          w_.Element("td", {{"class", "n"}}, std::to_string(c));
        }
      }
      w_.Element("td", {{"class", "n"}},
                 fmt::format("{} / {}", model::FormatAmount("cpu", use.requested.milli_cpu),
                             model::FormatAmount("cpu", use.allocatable.milli_cpu)));
      w_.Element("td", {{"class", "n"}},
                 fmt::format("{} / {}", model::FormatAmount("memory", use.requested.memory),
                             model::FormatAmount("memory", use.allocatable.memory)));
      w_.Close();
      w_.Newline();
    }
    w_.Close();
    w_.Close();
  }

  // --- pending pods -------------------------------------------------------------------------

  void Pending() {
    OpenColumns("pending", "Pending pods");
    for (size_t r = 0; r < m_.pending.size(); ++r) {
      const model::PendingView& v = m_.pending[r];
      w_.Open("div", {{"id", fmt::format("pending-{}", r)}, {"data-run", r}});
      w_.Element("h3", fmt::format("{}: {} pending", m_.runs[r].name, v.pending));
      if (v.groups.empty()) w_.Element("p", {{"class", "note"}}, "Every pod was placed.");
      if (v.groups.size() > 1) ReasonTable(v.reasons);
      for (const model::PendingGroup& g : v.groups) {
        w_.Open("details", {{"class", "reason"}, {"data-reason", g.message}, Attr::Flag("open")});
        w_.Open("summary");
        w_.Element("b", fmt::format("{} pod{}", g.pods.size(), Plural(g.pods.size())));
        w_.Text(": ");
        w_.Element("span", {{"class", "msg"}}, g.message);
        w_.Close();
        w_.Open("ul");
        for (const model::PendingPod& p : g.pods) {
          w_.Open("li", {{"data-pod", p.key}});
          w_.Element("code", p.name);
          w_.Close();
        }
        w_.Close();
        w_.Close();
        w_.Newline();
      }
      w_.Close();
      w_.Newline();
    }
    CloseColumns();
  }

  // What keeps the pods pending, reason by reason across messages: the pods that met each Filter
  // reason on their last attempt, and on how many nodes at most.
  void ReasonTable(const std::vector<model::ReasonTally>& reasons) {
    if (reasons.empty()) return;
    w_.Raw("<table class=\"reasons\"><tr><th>reason</th><th>pending pods</th><th>nodes (at most)</th></tr>\n");
    for (const model::ReasonTally& t : reasons) {
      w_.Open("tr");
      w_.Element("td", t.reason);
      w_.Element("td", {{"class", "n"}}, std::to_string(t.pods));
      w_.Element("td", {{"class", "n"}}, std::to_string(t.max_nodes));
      w_.Close();
      w_.Newline();
    }
    w_.Raw("</table>\n");
  }

  // --- evictions, pod groups ---------------------------------------------------------------

  // A section of one table per run: `header` (constant markup) opens each table, `row` writes a
  // row; a run without rows says `none`.
  template <typename Row, typename WriteRow>
  void TablesPerRun(Markup id, Markup heading, const std::vector<std::vector<Row>>& per_run, std::string_view none,
                    Markup header, WriteRow row) {
    if (per_run.empty()) return;
    OpenColumns(id, heading);
    for (size_t r = 0; r < per_run.size(); ++r) {
      w_.Open("div", {{"data-run", r}});
      w_.Element("h3", m_.runs[r].name);
      if (per_run[r].empty()) {
        w_.Element("p", {{"class", "note"}}, none);
      } else {
        w_.Raw(header);
        for (const Row& x : per_run[r]) {
          row(x);
          w_.Newline();
        }
        w_.Raw("</table>");
      }
      w_.Close();
      w_.Newline();
    }
    CloseColumns();
  }

  void Evictions() {
    TablesPerRun("evictions", "Evictions and moves", m_.evictions, "None.",
                 "<table><tr><th>pod</th><th>node</th><th></th><th>reason</th><th>recreated as</th></tr>\n",
                 [this](const model::EvictionRow& e) {
                   w_.Open("tr", {{"data-pod", e.pod_key}});
                   w_.Open("td");
                   w_.Element("code", e.pod_name);
                   w_.Close();
                   w_.Element("td", {{"class", "mono"}}, e.node);
                   w_.Element("td", e.action);
                   w_.Element("td", e.reason);
                   w_.Element("td", e.replacement);
                   w_.Close();
                 });
  }

  void PodGroups() {
    TablesPerRun("podgroups", "Pod groups", m_.pod_groups, "No group cycle.",
                 "<table><tr><th>pod group</th><th>minCount</th><th></th><th>domain</th><th>preempted (moved)</th>"
                 "<th>why pending</th></tr>\n",
                 [this](const model::PodGroupRow& g) {
                   w_.Open("tr", {{"data-group", g.name}});
                   w_.Open("td");
                   w_.Element("code", g.name);
                   w_.Close();
                   w_.Element("td", {{"class", "n"}}, std::to_string(g.min_count));
                   w_.Element("td", g.outcome + (g.optimal ? "" : " (not proved optimal)"));
                   w_.Element("td", {{"class", "mono"}}, g.domain);
                   w_.Element("td", {{"class", "n"}}, fmt::format("{} ({})", g.preempted, g.moved));
                   w_.Element("td", {{"class", "msg"}}, g.message);
                   w_.Close();
                 });
  }

  // --- --explain ----------------------------------------------------------------------------

  void Explanation(const model::ExplanationView& v) {
    const scheduler::AttemptExplanation& e = *v.attempt;
    w_.Open("section", {{"id", fmt::format("explain-{}", v.run)}, {"class", "explain"}, {"data-pod", e.pod_key}});
    w_.Element("h2", fmt::format("Why {} went where it went", e.pod_key));
    w_.Newline();
    w_.Open("p");
    w_.Text("Last scheduling attempt (profile ");
    w_.Element("code", e.profile);
    w_.Text("): ");
    if (!e.selected_node.empty()) {
      w_.Text("selected node ");
      w_.Element("b", {{"class", "mono"}}, e.selected_node);
      w_.Text(".");
    }
    if (!e.message.empty()) {
      w_.Text("FailedScheduling: ");
      w_.Element("span", {{"class", "msg"}}, e.message);
    }
    if (!e.pre_filter_message.empty()) w_.Text(" PreFilter: " + e.pre_filter_message);
    w_.Close();
    w_.Newline();
    w_.Open("div", {{"class", "scroll"}});
    w_.Open("table", {{"class", "xp"}});
    w_.Raw("<tr><th>node</th><th>Filter</th>");
    for (const auto& p : v.score_plugins) {
      w_.Open("th");
      w_.Text(p);
      w_.Raw("<br><span class=\"note\">raw → weighted (normalized×weight)</span>");
      w_.Close();
    }
    w_.Raw("<th>total</th></tr>\n");
    for (const model::ExplainedNode& n : v.nodes) ExplanationRow(n);
    w_.Close();
    w_.Close();
    w_.Newline();
    if (v.any_unevaluated) {
      w_.Element("p", {{"class", "note"}},
                 "* not filtered by the scheduling cycle (node sampling stopped before it, or the nominated node was "
                 "chosen); filtered here for display only.");
      w_.Newline();
    }
    w_.Close();
    w_.Newline();
  }

  void ExplanationRow(const model::ExplainedNode& row) {
    const scheduler::AttemptExplanation::NodeDetail& n = *row.node;
    w_.Open("tr", {{"data-node", n.node}, Attr::When(row.selected, "class", "sel")});
    w_.Element("th", {{"class", "mono"}}, row.selected ? n.node + " (selected)" : n.node);
    w_.Open("td");
    if (!n.excluded.empty()) {
      w_.Element("span", {{"class", "rej"}}, "excluded by PreFilter: " + n.excluded);
    } else if (n.feasible) {
      w_.Element("span", {{"class", "ok"}}, "passed");
    }
    for (const auto* f : row.rejections) {
      w_.Open("div", {{"class", "rej"}});
      w_.Element("b", f->plugin);
      w_.Text(": " + f->status.Message());
      if (!f->detail.empty()) {
        w_.Text(" ");
        w_.Element("span", {{"class", "note"}}, "[" + f->detail + "]");
      }
      w_.Close();
    }
    if (row.unevaluated) w_.Text(" *");
    w_.Close();
    for (const auto* score : row.scores) {
      if (!score) {
        w_.Element("td", {{"class", "z"}}, "-");
        continue;
      }
      w_.RawNumbers(
          "<td class=\"n\" title=\"raw {0}, normalized {1}, weight {2}\">{0} → <b>{3}</b> "
          "<span class=\"note\">({1}×{2})</span></td>",
          score->raw, score->normalized, score->weight, score->weighted);
    }
    if (n.scores.empty()) {
      w_.Element("td", {{"class", "z"}}, "-");
    } else {
      w_.Open("td", {{"class", "n"}});
      w_.Element("b", std::to_string(n.total));
      w_.Close();
    }
    w_.Close();
    w_.Newline();
  }

  // --- configuration ------------------------------------------------------------------------

#include "framework/args_view.h"
  void Configuration() {
    OpenColumns("configuration", "Configuration");
    for (size_t r = 0; r < m_.runs.size(); ++r) {
      w_.Open("div", {{"data-run", r}});
      w_.Element("h3", m_.runs[r].name);
      for (const auto& pc : m_.runs[r].result->profile_configs) Profile(pc);
      w_.Close();
      w_.Newline();
    }
    CloseColumns();
  }

  void Profile(const sim::SimulationResult::ProfileConfig& pc) {
    w_.Open("table", {{"class", "cfg"}});
    w_.Open("tr");
    w_.Open("th", {{"colspan", "2"}});
    w_.Text("profile ");
    w_.Element("code", pc.scheduler_name);
    w_.Close();
    w_.Close();
    w_.Newline();
    for (const auto& [point, names] : pc.plugins) {
      w_.Open("tr");
      w_.Element("td", point);
      w_.Element("td", fmt::format("{}", fmt::join(names, ", ")));
      w_.Close();
      w_.Newline();
    }
    if (!pc.score_weights.empty()) {
      w_.Open("tr");
      w_.Element("td", "score (weight)");
      w_.Open("td");
      for (size_t i = 0; i < pc.score_weights.size(); ++i) {
        if (i) w_.Text(", ");
        w_.Text(pc.score_weights[i].first);
        w_.RawNumbers(" <b>×{}</b>", pc.score_weights[i].second);
      }
      w_.Close();
      w_.Close();
      w_.Newline();
    }
    w_.Open("tr");
    w_.Element("td", "percentageOfNodesToScore");
    w_.Open("td");
    if (pc.percentage_of_nodes_to_score) {
      w_.RawNumbers("{}%", *pc.percentage_of_nodes_to_score);
    } else {
      w_.Raw("adaptive (upstream's default)");
    }
    w_.Close();
    w_.Close();
    w_.Newline();
    w_.Close();
    w_.Newline();
    if (!pc.plugin_args.empty()) {
      w_.Raw("<details class=\"cfg\"><summary>pluginConfig</summary>");
      w_.Element("pre", PluginConfigText(pc));
      w_.Raw("</details>\n");
    }
  }

  const model::ReportModel& m_;
  HtmlWriter w_;
};

}  // namespace

std::string RenderReport(std::span<const Run> runs, const ReportOptions& options) {
  const model::ReportModel m = model::BuildModel(runs, options);
  return Renderer(m).Render();
}

}  // namespace kubesched::report
