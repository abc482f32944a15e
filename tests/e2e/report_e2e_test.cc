// `kubesched simulate --report FILE.html` opened in headless Chromium (e2e/chromium.h): through
// the DOM, every node and every pod of the simulation appears with the right node, pending pods
// list their FailedScheduling message, the page loads without console errors, exceptions or any
// request but its own file, and names are escaped. Screenshots are saved as test artefacts in
// build/<preset>/test-artifacts/. Also: the openb trace's report size (and its load time,
// printed), and a clear error for a report path that cannot be written.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/chromium.h"
#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path TempDir() {
  const fs::path dir = fs::temp_directory_path() / ("kubesched-report-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

fs::path ArtifactDir() {
  const char* env = std::getenv("KUBESCHED_BINARY_DIR");
  const fs::path dir = fs::path(env ? env : KUBESCHED_BINARY_DIR) / "test-artifacts";
  fs::create_directories(dir);
  return dir;
}

// What the page shows, read from its DOM: per run, node → its pods (sorted), pending pod → the
// reason it is listed under.
constexpr const char* kReadDom = R"js((() => {
  const runs = [];
  document.querySelectorAll('.node[data-run]').forEach(n => {
    const r = Number(n.getAttribute('data-run'));
    runs[r] = runs[r] || {nodes: {}, pending: {}};
    const pods = Array.from(n.querySelectorAll('[data-pod]')).map(e => e.getAttribute('data-pod')).sort();
    if (n.getAttribute('data-node') in runs[r].nodes) runs[r].duplicate = n.getAttribute('data-node');
    runs[r].nodes[n.getAttribute('data-node')] = pods;
  });
  runs.forEach((run, r) => {
    document.querySelectorAll('#pending-' + r + ' .reason').forEach(g => {
      g.querySelectorAll('li[data-pod]').forEach(li => { run.pending[li.getAttribute('data-pod')] = g.getAttribute('data-reason'); });
    });
  });
  return {runs: runs, title: document.title, scripts: document.scripts.length,
          text: document.body.innerText.length};
})())js";

// The placement the JSON output gives: node → pods (sorted), pending pod → message.
struct Placement {
  std::map<std::string, std::vector<std::string>> nodes;
  std::map<std::string, std::string> pending;
};

Placement FromJson(const json& d) {
  Placement p;
  for (const auto& pod : d.at("pods")) {
    const std::string key = pod.at("namespace").get<std::string>() + "/" + pod.at("name").get<std::string>();
    const std::string status = pod.at("status").get<std::string>();
    if (status == "Succeeded" || status == "Failed") continue;
    if (pod.at("node").is_null()) {
      p.pending[key] = pod.at("message").is_null() ? "" : pod.at("message").get<std::string>();
    } else {
      p.nodes[pod.at("node").get<std::string>()].push_back(key);
    }
  }
  for (auto& [n, pods] : p.nodes) std::sort(pods.begin(), pods.end());
  return p;
}

// Every node of the input, from `simulate --compare default default -o json` (the only output
// that lists nodes).
std::vector<std::string> NodeNames(const std::vector<std::string>& files) {
  std::vector<std::string> args = {"simulate", "--compare", "default", "default", "-o", "json"};
  for (const auto& f : files) args.insert(args.end(), {"-f", f});
  RunResult r = RunKubesched(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> names;
  const json d = json::parse(r.out);
  for (const auto& n : d.at("configurations").at(0).at("nodes")) names.push_back(n.at("name"));
  return names;
}

// What a loaded page must not have done: log an error, throw, or request anything but itself.
void ExpectCleanLoad(const Chromium& browser, const std::string& url) {
  size_t requests = 0;
  for (const auto& e : browser.events()) {
    const std::string method = e.value("method", "");
    const json& params = e.contains("params") ? e["params"] : json::object();
    if (method == "Runtime.consoleAPICalled") {
      const std::string type = params.value("type", "");
      EXPECT_NE(type, "error") << "console error: " << params.dump();
      EXPECT_NE(type, "assert") << "console assert: " << params.dump();
      EXPECT_NE(type, "warning") << "console warning: " << params.dump();
    } else if (method == "Runtime.exceptionThrown") {
      ADD_FAILURE() << "uncaught exception: " << params.dump();
    } else if (method == "Log.entryAdded") {
      const std::string level = params["entry"].value("level", "");
      EXPECT_NE(level, "error") << "logged error: " << params["entry"].dump();
      EXPECT_NE(level, "warning") << "logged warning: " << params["entry"].dump();
    } else if (method == "Network.requestWillBeSent") {
      ++requests;
      EXPECT_EQ(params["request"].value("url", ""), url) << "the page requested something else than itself";
    }
  }
  EXPECT_EQ(requests, 1u) << "the report's own file, and nothing else";
}

class ReportE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto binary = FindChromium();
    // scripts/install-deps.sh installs Debian's chromium: without it there is nothing to test with.
    if (!binary) GTEST_SKIP() << "no chromium on the PATH (scripts/install-deps.sh installs it)";
    auto launched = Chromium::Launch(*binary);
    ASSERT_TRUE(launched) << launched.error();
    browser_ = std::move(*launched);
  }
  std::unique_ptr<Chromium> browser_;
};

void ExpectPlacement(const json& run, const Placement& expected, const std::vector<std::string>& node_names,
                     const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(run.is_object()) << "no nodes of this run in the page";
  EXPECT_FALSE(run.contains("duplicate")) << run["duplicate"];
  std::set<std::string> shown;
  for (const auto& [node, pods] : run.at("nodes").items()) shown.insert(node);
  EXPECT_EQ(shown, std::set<std::string>(node_names.begin(), node_names.end())) << "every node, once";
  for (const std::string& node : node_names) {
    std::vector<std::string> want;
    if (auto it = expected.nodes.find(node); it != expected.nodes.end()) want = it->second;
    EXPECT_EQ(run.at("nodes").value(node, json::array()).get<std::vector<std::string>>(), want) << "pods on " << node;
  }
  std::map<std::string, std::string> pending = run.at("pending").get<std::map<std::string, std::string>>();
  EXPECT_EQ(pending, expected.pending) << "pending pods and their reasons";
}

TEST_F(ReportE2E, ExampleShowsEveryNodeAndPodAndPendingReason) {
  const std::vector<std::string> files = {SourcePath("examples/boreas/cluster.yaml"),
                                          SourcePath("examples/boreas/test-b.yaml")};
  std::vector<std::string> args = {"simulate", "-o", "json"};
  for (const auto& f : files) args.insert(args.end(), {"-f", f});
  // The pod to explain: the first pending one (test B leaves one freyja pod pending).
  RunResult plain = RunKubesched(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const Placement first = FromJson(json::parse(plain.out));
  ASSERT_FALSE(first.pending.empty()) << "test B leaves a pod pending";
  ASSERT_FALSE(first.pending.begin()->second.empty()) << "with a FailedScheduling message";
  const std::string explained = first.pending.begin()->first;

  const std::string html = (TempDir() / "boreas-b.html").string();
  args.insert(args.end(), {"--explain", explained, "--report", html});
  RunResult r = RunKubesched(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const Placement expected = FromJson(out);
  ASSERT_TRUE(fs::exists(html));

  const std::string url = "file://" + html;
  auto loaded = browser_->Load(url);
  ASSERT_TRUE(loaded) << loaded.error();
  std::cout << "[ report ] Boreas test B report: " << fs::file_size(html) << " bytes, loaded in Chromium in "
            << loaded->count() << " ms\n";
  auto dom = browser_->Evaluate(kReadDom);
  ASSERT_TRUE(dom) << dom.error();
  ASSERT_EQ((*dom)["runs"].size(), 1u);
  ExpectPlacement((*dom)["runs"][0], expected, NodeNames(files), "Boreas test B");
  EXPECT_EQ((*dom)["scripts"], 1) << "only the report's own script";

  // The explained pod: a row per node with its Filter verdict, and each plugin's scores.
  auto explain = browser_->Evaluate(R"js((() => {
    const s = document.querySelector('section.explain');
    if (!s) return null;
    const rows = {};
    s.querySelectorAll('tr[data-node]').forEach(tr => { rows[tr.getAttribute('data-node')] = tr.cells[1].innerText; });
    return {pod: s.getAttribute('data-pod'), rows: rows};
  })())js");
  ASSERT_TRUE(explain) << explain.error();
  ASSERT_TRUE(explain->is_object()) << "no explanation section";
  EXPECT_EQ((*explain)["pod"], explained);
  ASSERT_TRUE(out.contains("explanation"));
  for (const auto& n : out["explanation"]["nodes"]) {
    const std::string verdict = (*explain)["rows"].value(n["name"].get<std::string>(), "");
    if (n["feasible"].get<bool>()) {
      EXPECT_NE(verdict.find("passed"), std::string::npos) << n["name"] << ": " << verdict;
    } else {
      for (const auto& f : n["filters"]) {
        if (f["code"] == "Success" || f["code"] == "Skip") continue;
        EXPECT_NE(verdict.find(f["plugin"].get<std::string>()), std::string::npos) << n["name"] << ": " << verdict;
      }
    }
  }

  // The search box filters the nodes (the script runs).
  auto searched = browser_->Evaluate(R"js((() => {
    const q = document.getElementById('q');
    q.value = 'worker-1';
    q.dispatchEvent(new Event('input'));
    return Array.from(document.querySelectorAll('.nrow')).filter(r => getComputedStyle(r).display !== 'none')
        .map(r => r.getAttribute('data-node'));
  })())js");
  ASSERT_TRUE(searched) << searched.error();
  EXPECT_EQ(*searched, json::array({"worker-1"}));
  (void)browser_->Evaluate(
      "(() => { const q = document.getElementById('q'); q.value = ''; "
      "q.dispatchEvent(new Event('input')); return true; })()");

  const std::string png = (ArtifactDir() / "report-boreas-b.png").string();
  auto shot = browser_->Screenshot(png, 1400, 4000);
  ASSERT_TRUE(shot) << shot.error();
  EXPECT_GT(fs::file_size(png), 10000u);
  std::cout << "[ report ] screenshot: " << png << "\n";
  ExpectCleanLoad(*browser_, url);
}

TEST_F(ReportE2E, CompareShowsBothPlacementsAndTheNodesSaved) {
  const std::vector<std::string> files = {SourcePath("examples/boreas/cluster.yaml"),
                                          SourcePath("examples/boreas/test-d.yaml")};
  const std::string optimizer = SourcePath("examples/optimizer.yaml");
  std::vector<std::string> base = {"simulate", "-o", "json"};
  for (const auto& f : files) base.insert(base.end(), {"-f", f});
  RunResult a = RunKubesched(base);
  std::vector<std::string> with_config = base;
  with_config.insert(with_config.end(), {"--config", optimizer});
  RunResult b = RunKubesched(with_config);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const json ja = json::parse(a.out), jb = json::parse(b.out);

  const std::string html = (TempDir() / "boreas-d-compare.html").string();
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--compare", "default", optimizer, "--report", html});
  RunResult r = RunKubesched(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const std::string url = "file://" + html;
  auto loaded = browser_->Load(url);
  ASSERT_TRUE(loaded) << loaded.error();
  std::cout << "[ report ] Boreas test D, default beside optimizer: loaded in " << loaded->count() << " ms\n";
  auto dom = browser_->Evaluate(kReadDom);
  ASSERT_TRUE(dom) << dom.error();
  ASSERT_EQ((*dom)["runs"].size(), 2u);
  const std::vector<std::string> nodes = NodeNames(files);
  ExpectPlacement((*dom)["runs"][0], FromJson(ja), nodes, "default");
  ExpectPlacement((*dom)["runs"][1], FromJson(jb), nodes, "optimizer");

  const int saved = ja["summary"]["nodesUsed"].get<int>() - jb["summary"]["nodesUsed"].get<int>();
  ASSERT_GT(saved, 0) << "the optimizer packs test D onto fewer nodes";
  auto diff = browser_->Evaluate(R"js((() => {
    const li = document.querySelector('#differences [data-k="nodesSaved"]');
    const nodes = document.querySelectorAll('#differences tr[data-k="nodesUsed"] span');
    return {saved: li ? li.innerText : '', a: nodes[0].className, b: nodes[1].className};
  })())js");
  ASSERT_TRUE(diff) << diff.error();
  EXPECT_NE((*diff)["saved"].get<std::string>().find("saves " + std::to_string(saved) + " node"), std::string::npos)
      << (*diff)["saved"];
  EXPECT_EQ((*diff)["a"], "worse");
  EXPECT_EQ((*diff)["b"], "better");

  const std::string png = (ArtifactDir() / "report-boreas-d-compare.png").string();
  auto shot = browser_->Screenshot(png, 1400, 4000);
  ASSERT_TRUE(shot) << shot.error();
  ExpectCleanLoad(*browser_, url);
}

TEST_F(ReportE2E, NamesAreEscaped) {
  // A configuration whose file name is markup: the report names each configuration by its file.
  const fs::path dir = TempDir() / "escape";
  fs::create_directories(dir);
  const std::string name = "<script>alert(1)&\"'<img src=x onerror=alert(2)>.yaml";
  const std::string config = (dir / name).string();
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
  const std::string html = (dir / "report.html").string();
  RunResult r =
      RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "-f",
                    SourcePath("examples/boreas/test-a.yaml"), "--compare", "default", config, "--report", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string url = "file://" + html;
  auto loaded = browser_->Load(url);
  ASSERT_TRUE(loaded) << loaded.error();
  auto page = browser_->Evaluate(R"js(({title: document.title, scripts: document.scripts.length,
      images: document.images.length, heading: document.querySelector('h1').textContent}))js");
  ASSERT_TRUE(page) << page.error();
  EXPECT_EQ((*page)["scripts"], 1) << "the name did not become a script";
  EXPECT_EQ((*page)["images"], 0) << "nor an image";
  EXPECT_NE((*page)["title"].get<std::string>().find(config), std::string::npos) << "shown as text";
  EXPECT_NE((*page)["heading"].get<std::string>().find(config), std::string::npos);
  ExpectCleanLoad(*browser_, url);
}

TEST_F(ReportE2E, OpenbReportIsUnder10MB) {
#if defined(KUBESCHED_SANITIZED)
  GTEST_SKIP() << "the openb trace runs in the release build only (an order of magnitude slower here)";
#endif
  const std::string manifest = (TempDir() / "openb.yaml").string();
  std::ofstream(manifest) << Gunzip(SourcePath("tests/data/openb.yaml.gz"));
  const std::string html = (TempDir() / "openb.html").string();
  RunResult r = RunKubesched({"simulate", "-f", manifest, "-o", "json", "--report", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const auto size = fs::file_size(html);
  std::cout << "[ report ] openb report: " << size << " bytes (" << static_cast<double>(size) / (1 << 20) << " MiB)\n";
  EXPECT_LT(size, 10u * 1000 * 1000);

  const std::string url = "file://" + html;
  auto loaded = browser_->Load(url);
  ASSERT_TRUE(loaded) << loaded.error();
  // Measured, not asserted: the machine is shared.
  std::cout << "[ report ] openb report loaded in Chromium in " << loaded->count() << " ms\n";
  auto dom = browser_->Evaluate(kReadDom);
  ASSERT_TRUE(dom) << dom.error();
  const Placement expected = FromJson(out);
  const json& run = (*dom)["runs"][0];
  EXPECT_EQ(run["nodes"].size(), out["summary"]["nodes"].get<size_t>());
  size_t mismatched = 0;
  for (const auto& [node, pods] : expected.nodes) {
    if (run["nodes"].value(node, json::array()).get<std::vector<std::string>>() != pods) ++mismatched;
  }
  EXPECT_EQ(mismatched, 0u) << "nodes whose pods differ from the JSON output";
  using Reasons = std::map<std::string, std::string>;
  EXPECT_EQ(run["pending"].get<Reasons>(), expected.pending);

  // Past a few hundred nodes: a heat map, and a node's bars once searched for.
  auto searched = browser_->Evaluate(R"js((() => {
    const cells = document.querySelectorAll('.hm a').length;
    const q = document.getElementById('q');
    q.value = 'openb-node-0007';
    q.dispatchEvent(new Event('input'));
    const shown = Array.from(document.querySelectorAll('.nrow')).filter(r => getComputedStyle(r).display !== 'none')
        .map(r => r.getAttribute('data-node'));
    return {cells: cells, shown: shown};
  })())js");
  ASSERT_TRUE(searched) << searched.error();
  EXPECT_EQ((*searched)["cells"], out["summary"]["nodes"]);
  EXPECT_EQ((*searched)["shown"], json::array({"openb-node-0007"}));
  const std::string png = (ArtifactDir() / "report-openb.png").string();
  auto shot = browser_->Screenshot(png, 1400, 3000);
  ASSERT_TRUE(shot) << shot.error();
  ExpectCleanLoad(*browser_, url);
}

// The checks above can fail: a page that logs an error, throws and loads something from elsewhere
// (a closed port on loopback) is caught by each of them.
TEST_F(ReportE2E, CleanLoadCheckSeesErrorsAndRequests) {
  const std::string html = (TempDir() / "noisy.html").string();
  std::ofstream(html) << "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body>"
                         "<img src=\"http://127.0.0.1:9/x.png\"><script>console.error('boom');"
                         "setTimeout(() => { throw new Error('thrown'); }, 0);</script></body></html>";
  const std::string url = "file://" + html;
  auto loaded = browser_->Load(url);
  ASSERT_TRUE(loaded) << loaded.error();
  ASSERT_TRUE(browser_->Evaluate("new Promise(r => setTimeout(() => r(true), 100))"));
  bool console_error = false, exception = false, foreign_request = false;
  for (const auto& e : browser_->events()) {
    const std::string method = e.value("method", "");
    if (method == "Runtime.consoleAPICalled" && e["params"].value("type", "") == "error") console_error = true;
    if (method == "Runtime.exceptionThrown") exception = true;
    if (method == "Network.requestWillBeSent" && e["params"]["request"].value("url", "") != url) foreign_request = true;
  }
  EXPECT_TRUE(console_error);
  EXPECT_TRUE(exception);
  EXPECT_TRUE(foreign_request);
}

TEST(ReportPathE2E, UnwritablePathIsAClearError) {
  const std::vector<std::string> base = {"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "-f",
                                         SourcePath("examples/boreas/test-a.yaml")};
  struct Case {
    std::string name;
    std::string path;
    int exit_code;
    std::string message;
  };
  const fs::path dir = TempDir();
  const fs::path file = dir / "a-file";
  std::ofstream(file) << "x";
  const std::vector<Case> cases = {
      {"missing directory", (dir / "no-such-dir" / "r.html").string(), 2, "no such directory"},
      {"a directory", dir.string(), 2, "is a directory"},
      {"under a file", (file / "r.html").string(), 2, "no such directory"},
      // /proc takes no new files, whatever the user (root included): the write itself fails, after
      // the simulation ran.
      {"write fails", "/proc/kubesched-report.html", 1, "cannot create a file in /proc"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--report", c.path});
    RunResult r = RunKubesched(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_NE(r.err.find("error: --report: cannot write"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists("/proc/kubesched-report.html"));
}

// A day replayed over its timeline under the default profile and the recommended optimizer
// configuration: the time series has both runs' samples, and the report charts them, one line per
// run, each ending at the run's last sample (read from the DOM in Chromium).
TEST_F(ReportE2E, TimelineChartsOneLinePerConfiguration) {
  const std::string html = (TempDir() / "day.html").string();
  const std::string csv = (TempDir() / "day.csv").string();
  RunResult r = RunKubesched({"simulate", "-f", SourcePath("examples/timeline/day.yaml"), "--compare", "default",
                              SourcePath("examples/optimizer.yaml"), "--report", html, "--timeseries", csv});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The CSV: per configuration, its last pods_running and nodes_used.
  std::ifstream in(csv);
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  std::vector<std::string> columns;
  std::stringstream hs(header);
  for (std::string c; std::getline(hs, c, ',');) columns.push_back(c);
  const auto col = [&](const std::string& name) {
    return std::find(columns.begin(), columns.end(), name) - columns.begin();
  };
  ASSERT_LT(col("pods_running"), static_cast<long>(columns.size()));
  std::map<std::string, std::vector<std::string>> last;
  std::map<std::string, size_t> rows;
  for (std::string line; std::getline(in, line);) {
    // Every comma separates two cells: an empty last one (device_fragmentation without devices) too.
    std::vector<std::string> cells(1);
    for (char c : line) {
      if (c == ',') {
        cells.emplace_back();
      } else {
        cells.back().push_back(c);
      }
    }
    ASSERT_EQ(cells.size(), columns.size()) << line;
    last[cells[0]] = cells;
    ++rows[cells[0]];
  }
  const std::string optimizer = SourcePath("examples/optimizer.yaml");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_GT(rows["default"], 20u) << "a sample per time point of the day's timeline";
  EXPECT_GT(rows[optimizer], 20u);
  EXPECT_EQ(last[optimizer][col("optimizer_batches")] != "0", true) << "the optimizer ran batches";

  const std::string url = "file://" + html;
  auto loaded = browser_->Load(url);
  ASSERT_TRUE(loaded) << loaded.error();
  auto charts = browser_->Evaluate(R"js((() => {
    const out = {};
    document.querySelectorAll('#timeline svg.tchart').forEach(svg => {
      const lines = {};
      svg.querySelectorAll('polyline[data-run]').forEach(l => {
        lines[l.getAttribute('data-run')] = {last: l.getAttribute('data-last'), points: l.getAttribute('points').trim().split(/\s+/).length};
      });
      out[svg.getAttribute('data-chart')] = {lines: lines, marks: svg.querySelectorAll('line.mark').length,
                                             height: svg.getBoundingClientRect().height};
    });
    return out;
  })())js");
  ASSERT_TRUE(charts) << charts.error();
  for (const char* key : {"alloc-cpu", "alloc-memory", "alloc-pods", "running", "pending", "nodes", "batches"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(charts->contains(key)) << charts->dump();
    const json& c = (*charts)[key];
    EXPECT_GT(c["height"].get<double>(), 50) << "drawn, not collapsed";
    ASSERT_TRUE(c["lines"].contains("0") && c["lines"].contains("1")) << c.dump();
    EXPECT_GT(c["lines"]["0"]["points"].get<int>(), 20);
  }
  EXPECT_EQ((*charts)["running"]["lines"]["0"]["last"], last["default"][col("pods_running")]);
  EXPECT_EQ((*charts)["running"]["lines"]["1"]["last"], last[optimizer][col("pods_running")]);
  EXPECT_EQ((*charts)["nodes"]["lines"]["0"]["last"], last["default"][col("nodes_used")]);
  EXPECT_EQ((*charts)["nodes"]["lines"]["1"]["last"], last[optimizer][col("nodes_used")]);
  EXPECT_GT((*charts)["batches"]["marks"].get<int>(), 0) << "the optimizer's batches marked on the time axis";
  ExpectCleanLoad(*browser_, url);
  const std::string png = (ArtifactDir() / "report-timeline.png").string();
  auto shot = browser_->Screenshot(png, 1400, 2400);
  ASSERT_TRUE(shot) << shot.error();
}

}  // namespace
}  // namespace kubesched::e2e
