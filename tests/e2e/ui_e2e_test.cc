// `kubesched apiserver --ui` in headless Chromium (e2e/chromium.h), with `kubesched run`
// scheduling against the same server: the page lists the test bed's nodes and pods and follows
// them live (a pod created with kubectl appears without a reload; a pod created from the page's
// textarea is scheduled and its card moves onto a node), shows a pod's details and per-plugin
// results, inserts every value as text, and loads nothing from another origin. A scenario saved
// from the page replays in `kubesched simulate` with the test bed's placements and loads back
// into another test bed's page. Every wait is a
// poll of the DOM with a deadline. A screenshot is saved in build/<preset>/test-artifacts/.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/apiserver_process.h"
#include "e2e/chromium.h"
#include "e2e/run_kubesched.h"
#include "e2e/simulate_json.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

fs::path ArtifactDir() {
  const char* env = std::getenv("KUBESCHED_BINARY_DIR");
  const fs::path dir = fs::path(env ? env : KUBESCHED_BINARY_DIR) / "test-artifacts";
  fs::create_directories(dir);
  return dir;
}

constexpr const char* kBed = R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {zone: b}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: seed}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
)";

std::string PodYaml(const std::string& name, const std::string& cpu, const std::string& extra_meta = "",
                    const std::string& extra_spec = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" + extra_meta + "spec:\n" + extra_spec +
         "  containers:\n  - name: c\n    image: busybox\n    resources: {requests: {cpu: \"" + cpu +
         "\", memory: 64Mi}}\n";
}

// A JavaScript string literal of `s` (JSON's escaping is JavaScript's).
std::string JsString(const std::string& s) { return json(s).dump(); }

bool RunRecordsPluginResults() {
  RunResult help = RunKubesched({"run", "--help"});
  return help.out.find("--record-plugin-results") != std::string::npos;
}

// A `kubesched run` process against `server`, killed with the test.
class Scheduler {
 public:
  Scheduler(ApiServer& server, std::vector<std::string> extra) {
    std::vector<std::string> argv = {KubeschedPath(), "run", "--kubeconfig",        server.Kubeconfig(),
                                     "--secure-port", "0",   "--bind-address",      "127.0.0.1",
                                     "--v",           "2",   "--leader-elect=false"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    log_ = server.Dir() / "run.err";
    child_ = Spawn(argv, log_, server.Dir().string());
  }
  ~Scheduler() {
    if (child_.pid > 0) StopChild(child_, SIGKILL);
  }
  std::string Log() const { return Slurp(log_); }

 private:
  Child child_;
  fs::path log_;
};

class UiE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto binary = FindChromium();
    if (!binary) GTEST_SKIP() << "no chromium on the PATH (scripts/install-deps.sh installs it)";
    if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
    auto launched = Chromium::Launch(*binary);
    ASSERT_TRUE(launched) << launched.error();
    browser_ = std::move(*launched);
  }

  // Evaluates `expression` until it is true, up to `timeout`; the last value otherwise.
  ::testing::AssertionResult Eventually(const std::string& expression,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    json last;
    for (;;) {
      auto v = browser_->Evaluate(expression);
      if (!v) return ::testing::AssertionFailure() << v.error();
      if (v->is_boolean() && v->get<bool>()) return ::testing::AssertionSuccess();
      last = *v;
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return ::testing::AssertionFailure() << "not true within " << timeout.count() << " ms: " << expression
                                         << " (last value " << last.dump() << ")";
  }
  json Eval(const std::string& expression) {
    auto v = browser_->Evaluate(expression);
    EXPECT_TRUE(v) << v.error();
    return v ? *v : json();
  }
  // Pastes `manifest`, clicks `button` (create or delete) and waits for the answer.
  json Submit(const std::string& manifest, const std::string& button) {
    Eval(
        "document.getElementById('apply-result').removeAttribute('data-ok');"
        "document.getElementById('manifest').value = " +
        JsString(manifest) + "; document.getElementById('" + button + "').click(); true");
    EXPECT_TRUE(Eventually("document.getElementById('apply-result').hasAttribute('data-ok')"));
    return Eval(
        "(() => { const r = document.getElementById('apply-result'); return {ok: r.getAttribute('data-ok'), "
        "status: r.getAttribute('data-status'), text: r.textContent}; })()");
  }
  void Click(const std::string& pod) {
    Eval("document.querySelector('[data-pod=\"" + pod + "\"]').click(); true");
    ASSERT_TRUE(Eventually("document.getElementById('pod-details').getAttribute('data-pod') === '" + pod + "'"));
  }

  // No console errors or warnings, no exceptions, and no request to another origin than `origin`
  // (or `also`: a second test bed the same page was loaded from).
  void ExpectCleanPage(const std::string& origin, const std::string& also = "") {
    size_t requests = 0;
    for (const json& e : browser_->events()) {
      const std::string method = e.value("method", "");
      const json params = e.contains("params") ? e["params"] : json::object();
      if (method == "Runtime.consoleAPICalled") {
        const std::string type = params.value("type", "");
        EXPECT_TRUE(type != "error" && type != "warning" && type != "assert") << params.dump();
      } else if (method == "Runtime.exceptionThrown") {
        ADD_FAILURE() << "uncaught exception: " << params.dump();
      } else if (method == "Log.entryAdded") {
        const json& entry = params["entry"];
        // The manifest the test has refused on purpose: Chromium logs every 4xx answer.
        if (entry.value("source", "") == "network" && entry.value("url", "").ends_with("/ui/apply") &&
            entry.value("text", "").find("status of 422") != std::string::npos) {
          continue;
        }
        const std::string level = entry.value("level", "");
        EXPECT_TRUE(level != "error" && level != "warning") << entry.dump();
      } else if (method == "Network.requestWillBeSent") {
        ++requests;
        const std::string url = params["request"].value("url", "");
        EXPECT_TRUE(url.starts_with(origin + "/") || (!also.empty() && url.starts_with(also + "/")))
            << "a request to another origin: " << url;
      }
    }
    EXPECT_GT(requests, 3u) << "the page, its script and style, and the API";
  }

  std::unique_ptr<Chromium> browser_;
};

constexpr const char* kMarkup = R"(<img src=x onerror="window.__xss=1"><b>bold</b>)";

TEST_F(UiE2E, FollowsTheClusterLiveCreatesFromTheTextareaAndEscapes) {
  ApiServer server({"--ui"});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_EQ(server.Kubectl({"create", "-f", server.WriteFile("bed.yaml", kBed)}).exit_code, 0);
  Scheduler scheduler(server, {});

  auto loaded = browser_->Load(server.Url() + "/ui/");
  ASSERT_TRUE(loaded) << loaded.error();
  // The test bed's nodes, and its pod scheduled onto one of them by `kubesched run`.
  EXPECT_TRUE(
      Eventually("document.querySelectorAll('#nodes [data-node]').length === 2 && "
                 "!!document.querySelector('#nodes [data-node=\"n1\"]')"));
  EXPECT_TRUE(Eventually("!!document.querySelector('#nodes [data-node] [data-pod=\"default/seed\"]')"))
      << scheduler.Log();
  // Free room: 4 CPUs less the seed's 1 on its node.
  EXPECT_TRUE(Eventually(
      "Array.from(document.querySelectorAll('#nodes [data-resource=cpu]')).map(e => e.getAttribute('data-free'))"
      ".sort().join(',') === '3,4'"));

  // Created with kubectl: appears without a reload.
  ASSERT_EQ(server.Kubectl({"create", "-f", "-"}, PodYaml("from-kubectl", "500m")).exit_code, 0);
  EXPECT_TRUE(Eventually("!!document.querySelector('[data-pod=\"default/from-kubectl\"]')"));

  // Created from the page (its markup annotation shown as text), then scheduled onto a node.
  json created =
      Submit(PodYaml("from-ui", "250m", "  annotations:\n    note: '" + std::string(kMarkup) + "'\n"), "create");
  EXPECT_EQ(created.value("ok", ""), "true") << created.dump();
  EXPECT_TRUE(Eventually("!!document.querySelector('#nodes [data-node] [data-pod=\"default/from-ui\"]')"))
      << scheduler.Log();
  Click("default/from-ui");
  EXPECT_TRUE(Eventually("document.getElementById('annotations').textContent.includes(" + JsString(kMarkup) + ")"));
  EXPECT_EQ(Eval("document.querySelectorAll('#pod-details img, #pod-details b').length"), 0);
  EXPECT_EQ(Eval("typeof window.__xss"), "undefined");
  EXPECT_TRUE(Eventually("document.getElementById('conditions').textContent.includes('PodScheduled')"));
  EXPECT_TRUE(Eventually("document.getElementById('events').textContent.includes('Scheduled')")) << scheduler.Log();

  // Too big for any node: pending with the scheduler's message.
  ASSERT_EQ(server.Kubectl({"create", "-f", "-"}, PodYaml("too-big", "100")).exit_code, 0);
  EXPECT_TRUE(
      Eventually("(() => { const li = document.querySelector('#pending [data-pending=\"default/too-big\"]');"
                 " return !!li && li.textContent.includes('Insufficient cpu'); })()"))
      << scheduler.Log();

  // An invalid manifest is refused with its place and nothing is created.
  json refused = Submit(PodYaml("ok-one", "1") + "---\n" + PodYaml("Bad_Name", "1"), "create");
  EXPECT_EQ(refused.value("ok", ""), "false");
  EXPECT_EQ(refused.value("status", ""), "422");
  EXPECT_NE(refused.value("text", "").find("document 2"), std::string::npos) << refused.dump();
  EXPECT_EQ(server.Kubectl({"get", "pod", "ok-one"}).exit_code, 1);

  // Deleted from the page: gone without a reload (a pending pod: no grace period to wait out).
  json deleted = Submit(PodYaml("too-big", "100"), "delete");
  EXPECT_EQ(deleted.value("ok", ""), "true") << deleted.dump();
  EXPECT_TRUE(Eventually("!document.querySelector('[data-pod=\"default/too-big\"]')"));

  // The configuration panel answers either way.
  EXPECT_TRUE(Eventually("document.getElementById('config').hasAttribute('data-published')"));

  auto shot = browser_->Screenshot((ArtifactDir() / "ui_e2e.png").string(), 1400, 3000);
  EXPECT_TRUE(shot) << shot.error();
  ExpectCleanPage(server.Url());
}

// The annotation's table, from a hand-written annotation of the shape `run --record-plugin-results`
// writes (a pod no scheduler serves, so the annotation stays as written).
TEST_F(UiE2E, DrawsThePluginResultsTable) {
  ApiServer server({"--ui"});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_EQ(server.Kubectl({"create", "-f", server.WriteFile("bed.yaml", kBed)}).exit_code, 0);
  const json results = {
      {"profile", "default-scheduler"},
      {"time", "2026-01-01T00:00:00Z"},
      {"result", "Scheduled"},
      {"selectedNode", "n2"},
      {"message", ""},
      {"filterPlugins", {"NodeUnschedulable", "TaintToleration"}},
      {"scorePlugins", {{{"name", "NodeResourcesFit"}, {"weight", 1}}, {{"name", "ImageLocality"}, {"weight", 2}}}},
      {"nodes",
       {{{"name", "n1"}, {"feasible", false}, {"filter", {{"TaintToleration", std::string("untolerated ") + kMarkup}}}},
        {{"name", "n2"},
         {"feasible", true},
         {"score",
          {{"NodeResourcesFit", {{"raw", 40}, {"normalized", 40}, {"weighted", 40}}},
           {"ImageLocality", {{"raw", 5}, {"normalized", 10}, {"weighted", 20}}}}},
         {"total", 60}}}},
      {"truncatedNodes", 0},
      {"notes", {{{"plugin", "ImageLocality"}, {"text", "no images"}}}}};
  json pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"explained","annotations":{}},
    "spec":{"schedulerName":"nobody","containers":[{"name":"c","image":"busybox"}]}})");
  pod["metadata"]["annotations"]["scheduler.kubesched.io/plugin-results"] = results.dump();
  ASSERT_EQ(server.Kubectl({"create", "-f", "-"}, pod.dump()).exit_code, 0);

  auto loaded = browser_->Load(server.Url() + "/ui/");
  ASSERT_TRUE(loaded) << loaded.error();
  ASSERT_TRUE(Eventually("!!document.querySelector('#pending [data-pod=\"default/explained\"]')"));
  Click("default/explained");
  ASSERT_TRUE(Eventually("!!document.querySelector('#plugin-results table')"));
  const json table = Eval(R"js((() => {
    const t = document.querySelector('#plugin-results table');
    const cell = (node, plugin) => t.querySelector('tr[data-node="' + node + '"] td[data-plugin="' + plugin + '"]');
    return {
      headers: Array.from(t.querySelectorAll('th[data-plugin]')).map(th => th.getAttribute('data-plugin')),
      selected: Array.from(t.querySelectorAll('tr.sel')).map(tr => tr.getAttribute('data-node')),
      n1Taint: cell('n1', 'TaintToleration').textContent,
      n1Unsched: cell('n1', 'NodeUnschedulable').textContent,
      n2Fit: cell('n2', 'NodeResourcesFit').textContent,
      n2Image: cell('n2', 'ImageLocality').textContent,
      n2Total: t.querySelector('tr[data-node="n2"] td[data-total]').textContent,
      markup: t.querySelectorAll('img, b').length,
      notes: document.querySelector('#plugin-results p[data-plugin="ImageLocality"]').textContent
    };
  })())js");
  EXPECT_EQ(table["headers"], json({"NodeUnschedulable", "TaintToleration", "NodeResourcesFit", "ImageLocality"}));
  EXPECT_EQ(table["selected"], json({"n2"}));
  EXPECT_EQ(table["n1Taint"], std::string("untolerated ") + kMarkup);
  EXPECT_EQ(table["n1Unsched"], "✓");
  EXPECT_EQ(table["n2Fit"], "40×1 = 40");
  EXPECT_EQ(table["n2Image"], "10×2 = 20");
  EXPECT_EQ(table["n2Total"], "60");
  EXPECT_EQ(table["markup"], 0);
  EXPECT_EQ(table["notes"], "ImageLocality: no images");
  ExpectCleanPage(server.Url());
}

// What `kubesched run --record-plugin-results` recorded, shown for a pod it scheduled.
TEST_F(UiE2E, ShowsThePluginResultsKubeschedRunRecorded) {
  if (!RunRecordsPluginResults()) GTEST_SKIP() << "kubesched run has no --record-plugin-results yet";
  ApiServer server({"--ui"});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_EQ(server.Kubectl({"create", "-f", server.WriteFile("bed.yaml", kBed)}).exit_code, 0);
  Scheduler scheduler(server, {"--record-plugin-results"});
  auto loaded = browser_->Load(server.Url() + "/ui/");
  ASSERT_TRUE(loaded) << loaded.error();
  ASSERT_TRUE(Eventually("!!document.querySelector('#nodes [data-node] [data-pod=\"default/seed\"]')"))
      << scheduler.Log();
  Click("default/seed");
  EXPECT_TRUE(Eventually(
      "(() => { const r = document.getElementById('plugin-results');"
      " return r.getAttribute('data-result') === 'Scheduled' && r.querySelectorAll('tr[data-node]').length === 2 &&"
      " r.querySelectorAll('tr.sel').length === 1 && r.querySelectorAll('th[data-plugin]').length > 0; })()"))
      << scheduler.Log();
  ExpectCleanPage(server.Url());
}

// A scheduler configuration whose placements differ from the default profile's: MostAllocated
// packs (BalancedAllocation off, so that NodeResourcesFit alone decides between nodes).
constexpr const char* kMostAllocated = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
)";

// Three sizes of node and six sizes of pod: no two nodes score the same for any pod under either
// configuration (checked with simulate --explain when the sizes were chosen), so each placement
// is determined. MostAllocated gives small,small,medium,small,small,medium; the default profile
// large,medium,large,small,medium,large.
std::string SizedNodes() {
  std::string out;
  for (auto [name, cpu, memory] :
       {std::tuple{"small", 4, 8}, std::tuple{"medium", 8, 16}, std::tuple{"large", 16, 32}}) {
    const std::string room =
        "{cpu: \"" + std::to_string(cpu) + "\", memory: " + std::to_string(memory) + "Gi, pods: \"110\"}";
    out += std::string("---\napiVersion: v1\nkind: Node\nmetadata: {name: ") + name +
           "}\nstatus:\n  capacity: " + room + "\n  allocatable: " + room + "\n";
  }
  return out;
}

std::string SizedPod(const std::string& name, const std::string& cpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  containers:\n  - name: c\n    image: busybox\n    resources: {requests: {cpu: " + cpu +
         ", memory: 256Mi}}\n";
}

// Saved from the page (GET /ui/scenario), the test bed replays in `kubesched simulate` with the
// placements it had, under the configuration `kubesched run --config` scheduled with; loaded into
// another test bed's page, its objects are created and its configuration is left out.
TEST_F(UiE2E, SavesAScenarioThatSimulateReplaysAndLoadsItBack) {
  if (!RunRecordsPluginResults()) GTEST_SKIP() << "kubesched run has no --record-plugin-results yet";
  ApiServer server({"--ui"});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  ASSERT_EQ(server.Kubectl({"create", "-f", server.WriteFile("nodes.yaml", SizedNodes())}).exit_code, 0);
  Scheduler scheduler(server, {"--record-plugin-results", "--config", server.WriteFile("config.yaml", kMostAllocated)});

  // One pod after another, each bound before the next is created, a second apart (creation
  // timestamps have whole seconds: the scenario's arrivals keep the order).
  const std::vector<std::pair<std::string, std::string>> pods = {{"p1", "1500m"}, {"p2", "700m"},  {"p3", "2300m"},
                                                                 {"p4", "300m"},  {"p5", "1100m"}, {"p6", "1900m"}};
  std::map<std::string, std::string> bed;
  for (const auto& [name, cpu] : pods) {
    ASSERT_EQ(server.Kubectl({"create", "-f", "-"}, SizedPod(name, cpu)).exit_code, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (bed[name].empty() && std::chrono::steady_clock::now() < deadline) {
      RunResult r = server.Kubectl({"get", "pod", name, "-o", "jsonpath={.spec.nodeName}"});
      if (r.exit_code == 0 && !r.out.empty()) bed[name] = r.out;
      if (bed[name].empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_FALSE(bed[name].empty()) << name << " was not bound: " << scheduler.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  }
  EXPECT_EQ(
      bed, (std::map<std::string, std::string>{
               {"p1", "small"}, {"p2", "small"}, {"p3", "medium"}, {"p4", "small"}, {"p5", "small"}, {"p6", "medium"}}))
      << "MostAllocated's placements";

  auto loaded = browser_->Load(server.Url() + "/ui/");
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(Eval("document.getElementById('save-scenario').getAttribute('href')"), "/ui/scenario");
  // Saved as the link saves it, once the configuration is published and every Scheduled event is in.
  std::string scenario;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    scenario = Eval("fetch('/ui/scenario').then(r => r.text())").get<std::string>();
    if ((scenario.find("kind: KubeSchedulerConfiguration") != std::string::npos &&
         scenario.find("nodeName:") == std::string::npos) ||
        std::chrono::steady_clock::now() > deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  SCOPED_TRACE(scenario);
  ASSERT_NE(scenario.find("MostAllocated"), std::string::npos);
  EXPECT_EQ(scenario.find("nodeName:"), std::string::npos) << "the scheduler placed every pod";
  EXPECT_NE(scenario.find("simulate.kubesched.io/create-after: "), std::string::npos);
  const std::string file = WriteTempFile("scenario.yaml", scenario);
  std::ofstream(ArtifactDir() / "ui_scenario.yaml") << scenario;

  // Replayed: the same node for every pod, and the configuration is the file's (the default
  // profile, with the configuration document cut off, places them otherwise).
  RunResult replay = RunKubesched({"simulate", "-f", file, "-o", "json", "--validate=strict"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.err.find("KubeSchedulerConfiguration"), std::string::npos)
      << "simulate skipped the scenario's configuration: " << replay.err;
  EXPECT_EQ(PodPlacement(json::parse(replay.out)), bed);
  const size_t config_at = scenario.rfind("\n---\n", scenario.find("kind: KubeSchedulerConfiguration"));
  ASSERT_NE(config_at, std::string::npos);
  RunResult defaults = RunKubesched(
      {"simulate", "-f", WriteTempFile("no-config.yaml", scenario.substr(0, config_at + 1)), "-o", "json"});
  ASSERT_EQ(defaults.exit_code, 0) << defaults.err;
  EXPECT_NE(PodPlacement(json::parse(defaults.out)), bed);

  // Loaded into another test bed's page (its file input, as a user picks the file) and created:
  // the objects are, the configuration is not (and the page says so).
  ApiServer other({"--ui"});
  ASSERT_FALSE(other.Url().empty()) << other.ServerLog();
  loaded = browser_->Load(other.Url() + "/ui/");
  ASSERT_TRUE(loaded) << loaded.error();
  auto doc = browser_->Call("DOM.getDocument");
  ASSERT_TRUE(doc) << doc.error();
  auto input =
      browser_->Call("DOM.querySelector", {{"nodeId", (*doc)["root"]["nodeId"]}, {"selector", "#load-scenario"}});
  ASSERT_TRUE(input) << input.error();
  auto set = browser_->Call("DOM.setFileInputFiles", {{"nodeId", (*input)["nodeId"]}, {"files", {file}}});
  ASSERT_TRUE(set) << set.error();
  ASSERT_TRUE(Eventually("document.getElementById('manifest').value === " + JsString(scenario)));
  EXPECT_TRUE(Eventually("document.getElementById('load-note').textContent.includes('scenario.yaml')"));
  Eval("document.getElementById('create').click(); true");
  ASSERT_TRUE(Eventually("document.getElementById('apply-result').getAttribute('data-ok') === 'true'"))
      << Eval("document.getElementById('apply-result').textContent").dump();
  EXPECT_TRUE(Eventually("!!document.querySelector('#apply-result [data-skipped=KubeSchedulerConfiguration]')"));
  RunResult got = other.Kubectl({"get", "pods", "-o", "jsonpath={.items[*].metadata.name}"});
  EXPECT_EQ(got.out, "p1 p2 p3 p4 p5 p6");
  RunResult after = other.Kubectl(
      {"get", "pod", "p6", "-o", "jsonpath={.metadata.annotations.simulate\\.kubesched\\.io/create-after}"});
  EXPECT_FALSE(after.out.empty()) << "the timeline annotation is kept";
  EXPECT_TRUE(Eventually("document.querySelectorAll('#nodes [data-node]').length === 3"));
  ExpectCleanPage(server.Url(), other.Url());
}

// A test bed with a WaitForFirstConsumer local volume on one node and a GPU published by a
// ResourceSlice on the other: the pods that use them can each go to one node only.
constexpr const char* kVolumesAndDevices = R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-n1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/a}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {requests: {storage: 1Gi}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpus}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu}}]
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}, claims: [{name: g}]}}]
  resourceClaims: [{name: g, resourceClaimTemplateName: one-gpu}]
)";

// Saved after the scheduler bound the volume and allocated the device, the scenario carries the
// volume, the claim's class, slice and template without that binding: simulate binds and
// allocates again and places both pods where the test bed did (the default profile would spread
// db onto the larger node without its volume).
TEST(UiScenarioE2E, VolumesAndDeviceClaimsReplayWithTheTestBedsPlacements) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  ApiServer server({"--ui"});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  Scheduler scheduler(server, {});
  ASSERT_EQ(server.Kubectl({"create", "-f", server.WriteFile("bed.yaml", kVolumesAndDevices)}).exit_code, 0);
  std::map<std::string, std::string> bed;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((bed["db"].empty() || bed["trainer"].empty()) && std::chrono::steady_clock::now() < deadline) {
    for (const char* pod : {"db", "trainer"}) {
      RunResult r = server.Kubectl({"get", "pod", pod, "-o", "jsonpath={.spec.nodeName}"});
      if (r.exit_code == 0) bed[pod] = r.out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(bed, (std::map<std::string, std::string>{{"db", "n1"}, {"trainer", "n2"}})) << scheduler.Log();

  RunResult saved = server.Kubectl({"get", "--raw", "/ui/scenario"});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const std::string& scenario = saved.out;
  SCOPED_TRACE(scenario);
  EXPECT_EQ(scenario.find("claimRef"), std::string::npos);
  EXPECT_EQ(scenario.find("volumeName"), std::string::npos);
  EXPECT_EQ(scenario.find("kind: ResourceClaim\n"), std::string::npos) << "the pod's claim is made again";
  RunResult replay =
      RunKubesched({"simulate", "-f", WriteTempFile("scenario.yaml", scenario), "-o", "json", "--validate=strict"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(PodPlacement(json::parse(replay.out)), bed);
}

TEST_F(UiE2E, WithoutTheFlagThereIsNoUi) {
  ApiServer server;
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  RunResult page = server.Kubectl({"get", "--raw", "/ui/"});
  EXPECT_NE(page.exit_code, 0);
  EXPECT_NE(page.err.find("NotFound"), std::string::npos) << page.err;
}

}  // namespace
}  // namespace kubesched::e2e
