// End-to-end tests of `kubesched extender`: kubesched (simulate, or run against `kubesched
// apiserver`) configured with `extenders:` calling a kubesched extender process on loopback, for
// each verb (filter, prioritize with its weight, preempt, bind), nodeCacheCapable both ways,
// managedResources, an ignorable extender that is down, and a timeout; and the extender's own
// view of a cluster fed by a watch (--kubeconfig), which sees the pods running there.

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/apiserver_process.h"
#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A `kubesched extender` process on a free loopback port.
class Extender {
 public:
  explicit Extender(std::vector<std::string> extra = {}) {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("kubesched-extender-e2e-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir_);
    std::vector<std::string> argv = {KubeschedPath(), "extender", "--listen", "127.0.0.1:0", "--v", "5"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    child_ = Spawn(argv, dir_ / "extender.err", dir_.string());
    const std::string prefix = "Serving the scheduler extender on ";
    std::string line = ReadUntil(
        child_.out_fd, [](const std::string& t) { return t.find('\n') != std::string::npos; }, 60s);
    if (line.starts_with(prefix)) url_ = line.substr(prefix.size(), line.find('\n') - prefix.size());
  }
  ~Extender() {
    if (child_.pid > 0) StopChild(child_, SIGKILL);
  }
  const std::string& Url() const { return url_; }
  std::string Log() const { return Slurp(dir_ / "extender.err"); }
  int Stop(int sig) { return StopChild(child_, sig); }
  std::string WriteFile(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  fs::path dir_;
  Child child_;
  std::string url_;
};

// A loopback port that accepts connections (the kernel completes them) and never answers: an
// extender that hangs.
class SilentPort {
 public:
  SilentPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd_, 16) != 0) return;
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A loopback port nothing listens on (bound, then released).
int ClosedPort() {
  SilentPort p;
  return p.port();
}

std::string Node(const std::string& name, const std::string& cpu, const std::string& extra_status = "",
                 const std::string& spec = "") {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {kubernetes.io/hostname: " + name + "}\n" + (spec.empty() ? "" : "spec:\n" + spec) +
         "status:\n  capacity: {cpu: \"" + cpu + "\", memory: 16Gi, pods: \"110\"" + extra_status + "}\n";
}

std::string TaintedSpec() { return "  taints: [{key: dedicated, value: batch, effect: NoSchedule}]\n"; }

std::string Pod(const std::string& name, const std::string& requests, const std::string& extra_spec = "",
                const std::string& labels = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         (labels.empty() ? "" : "\n  labels: " + labels) + "\nspec:\n" + extra_spec +
         "  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests: " + requests +
         "\n      limits: " + requests + "\n";
}

// A KubeSchedulerConfiguration with one extender (`extender` is its YAML mapping's body,
// indented for the list item) and optionally the default profile's plugins.
std::string Config(const std::string& extender, const std::string& plugins = "") {
  std::string out =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: default-scheduler\n";
  if (!plugins.empty()) out += plugins;
  if (!extender.empty()) out += "extenders:\n- " + extender;
  return out;
}

// The default profile without TaintToleration: kubesched alone would place pods on tainted
// nodes, so a pod kept off them was kept off by the extender's filter.
const std::string kNoTaintToleration = "  plugins:\n    multiPoint:\n      disabled:\n      - name: TaintToleration\n";

std::string FilterExtender(const std::string& url, bool node_cache_capable = false) {
  return "urlPrefix: " + url +
         "\n  filterVerb: filter\n  nodeCacheCapable: " + (node_cache_capable ? "true" : "false") + "\n";
}

struct Placement {
  std::string node;  // "" while pending
  std::string message;
};

// `kubesched simulate -o json`: pod name → placement.
std::map<std::string, Placement> Simulate(const std::string& manifests, const std::string& config,
                                          RunResult* raw = nullptr) {
  const std::string m = WriteTempFile("extender-e2e.yaml", manifests);
  const std::string c = WriteTempFile("extender-e2e-config.yaml", config);
  RunResult r = RunKubesched({"simulate", "-f", m, "--config", c, "-o", "json"});
  if (raw) *raw = r;
  std::map<std::string, Placement> out;
  if (r.exit_code != 0) {
    ADD_FAILURE() << "simulate: " << r.exit_code << " " << r.err;
    return out;
  }
  const json doc = json::parse(r.out);
  for (const json& p : doc["pods"]) {
    Placement pl;
    if (p["node"].is_string()) pl.node = p["node"];
    if (p["message"].is_string()) pl.message = p["message"];
    out[p["name"].get<std::string>()] = pl;
  }
  return out;
}

TEST(ExtenderE2E, StartsAndServesHealthz) {
  Extender ext;
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  EXPECT_NE(ext.Log().find("Serving the scheduler extender on " + ext.Url()), std::string::npos) << ext.Log();
  EXPECT_EQ(ext.Stop(SIGTERM), 0) << ext.Log();
}

TEST(ExtenderE2E, FilterKeepsPodsOffNodesTheExtendersPluginsReject) {
  Extender ext;
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  const std::string nodes = Node("tainted", "8", "", TaintedSpec()) + Node("plain", "2");
  const std::string pods = Pod("a", "{cpu: \"1\"}") + Pod("b", "{cpu: \"1\"}");
  // Without the extender, the profile (no TaintToleration) uses the tainted node too.
  auto alone = Simulate(nodes + Pod("big", "{cpu: \"4\"}"), Config("", kNoTaintToleration));
  EXPECT_EQ(alone["big"].node, "tainted");
  auto placed = Simulate(nodes + pods, Config(FilterExtender(ext.Url()), kNoTaintToleration));
  EXPECT_EQ(placed["a"].node, "plain");
  EXPECT_EQ(placed["b"].node, "plain");
  // With no other node, the extender's reason is the pod's.
  auto pending = Simulate(Node("tainted", "8", "", TaintedSpec()) + Pod("c", "{cpu: \"1\"}"),
                          Config(FilterExtender(ext.Url()), kNoTaintToleration));
  EXPECT_EQ(pending["c"].node, "");
  EXPECT_NE(pending["c"].message.find("untolerated taint"), std::string::npos) << pending["c"].message;
  EXPECT_NE(ext.Log().find("verb=\"filter\""), std::string::npos) << ext.Log();
}

TEST(ExtenderE2E, ServesHttpsWithASelfSignedCertificate) {
  Extender ext({"--tls"});
  ASSERT_TRUE(ext.Url().starts_with("https://")) << ext.Url() << ext.Log();
  const std::string extender = FilterExtender(ext.Url()) + "  enableHTTPS: true\n  tlsConfig:\n    insecure: true\n";
  auto placed = Simulate(Node("tainted", "8", "", TaintedSpec()) + Node("plain", "2") + Pod("a", "{cpu: \"1\"}"),
                         Config(extender, kNoTaintToleration));
  EXPECT_EQ(placed["a"].node, "plain") << placed["a"].message;
  // Plain HTTP to it gets no answer it can read: the port serves TLS only.
  const std::string plain_url = "http://" + ext.Url().substr(std::string("https://").size());
  auto refused = Simulate(Node("plain", "2") + Pod("a", "{cpu: \"1\"}"), Config(FilterExtender(plain_url)));
  EXPECT_EQ(refused["a"].node, "");
  EXPECT_FALSE(refused["a"].message.empty());
}

TEST(ExtenderE2E, NodeCacheCapableWithoutAWatchKnowsNoNode) {
  Extender ext;
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  auto placed = Simulate(Node("n1", "4") + Pod("a", "{cpu: \"1\"}"), Config(FilterExtender(ext.Url(), true)));
  EXPECT_EQ(placed["a"].node, "");
  EXPECT_NE(placed["a"].message.find("not known to the kubesched extender"), std::string::npos) << placed["a"].message;
}

TEST(ExtenderE2E, PrioritizeWeightDecidesAgainstTheProfilesOwnScores) {
  Extender ext;
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  // The profile packs (MostAllocated, weight 10, prefers the small node); the extender's default
  // profile spreads (LeastAllocated prefers the big one, 10 to the small one's less). A light
  // extender loses; a heavy one wins.
  const std::string packing =
      "  plugins:\n    score:\n      enabled:\n      - name: NodeResourcesFit\n        weight: 10\n"
      "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n";
  const std::string manifests = Node("small", "4") + Node("big", "64") + Pod("a", "{cpu: \"2\", memory: 1Gi}");
  auto prioritize = [&](int weight) {
    return "urlPrefix: " + ext.Url() + "\n  prioritizeVerb: prioritize\n  weight: " + std::to_string(weight) + "\n";
  };
  EXPECT_EQ(Simulate(manifests, Config("", packing))["a"].node, "small");
  EXPECT_EQ(Simulate(manifests, Config(prioritize(1), packing))["a"].node, "small");
  EXPECT_EQ(Simulate(manifests, Config(prioritize(100), packing))["a"].node, "big");
  EXPECT_NE(ext.Log().find("verb=\"prioritize\""), std::string::npos) << ext.Log();
}

TEST(ExtenderE2E, ManagedResourcesSendOnlyThePodsThatUseThem) {
  Extender ext;
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  const std::string extender = FilterExtender(ext.Url()) + "  managedResources:\n  - name: example.com/gpu\n";
  const std::string manifests = Node("tainted", "8", ", example.com/gpu: \"4\"", TaintedSpec()) +
                                Pod("plain", "{cpu: \"1\"}") + Pod("gpu", "{cpu: \"1\", example.com/gpu: \"1\"}");
  auto placed = Simulate(manifests, Config(extender, kNoTaintToleration));
  EXPECT_EQ(placed["plain"].node, "tainted");  // not the extender's: never sent
  EXPECT_EQ(placed["gpu"].node, "");           // the extender's: its filter rejects the node
  EXPECT_NE(placed["gpu"].message.find("untolerated taint"), std::string::npos) << placed["gpu"].message;
}

TEST(ExtenderE2E, AnIgnorableExtenderThatIsDownIsSkipped) {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  const std::string manifests = Node("n1", "4") + Pod("a", "{cpu: \"1\"}");
  auto ignored = Simulate(manifests, Config(FilterExtender(url) + "  ignorable: true\n"));
  EXPECT_EQ(ignored["a"].node, "n1");
  auto failed = Simulate(manifests, Config(FilterExtender(url)));
  EXPECT_EQ(failed["a"].node, "");
  EXPECT_FALSE(failed["a"].message.empty());
}

TEST(ExtenderE2E, AnExtenderThatDoesNotAnswerTimesOut) {
  SilentPort silent;
  ASSERT_GT(silent.port(), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(silent.port());
  const std::string manifests = Node("n1", "4") + Pod("a", "{cpu: \"1\"}");
  const std::string extender = FilterExtender(url) + "  httpTimeout: 300ms\n";
  // Every attempt waits out the timeout in real time: long backoffs keep the attempts few.
  const std::string few_attempts = "podInitialBackoffSeconds: 600\npodMaxBackoffSeconds: 600\n";
  auto failed = Simulate(manifests, few_attempts + Config(extender));
  EXPECT_EQ(failed["a"].node, "");
  EXPECT_NE(failed["a"].message.find("timed out"), std::string::npos) << failed["a"].message;
  auto ignored = Simulate(manifests, few_attempts + Config(extender + "  ignorable: true\n"));
  EXPECT_EQ(ignored["a"].node, "n1");
}

TEST(ExtenderE2E, BindWithoutAClusterFailsWithTheReason) {
  Extender ext;
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  const std::string extender = "urlPrefix: " + ext.Url() + "\n  bindVerb: bind\n";
  RunResult raw;
  auto placed = Simulate(Node("n1", "4") + Pod("a", "{cpu: \"1\"}"), Config(extender), &raw);
  EXPECT_EQ(placed["a"].node, "") << raw.out;
  EXPECT_NE(raw.out.find("no cluster to bind in"), std::string::npos) << raw.out;
  EXPECT_NE(ext.Log().find("verb=\"bind\""), std::string::npos) << ext.Log();
}

// --- With a cluster: the extender watches `kubesched apiserver` ---------------------------------

// The pods as the API server has them: name → node ("" while unbound), or nullopt when gone.
std::optional<std::string> PodNode(ApiServer& server, const std::string& name) {
  RunResult r = server.Kubectl({"get", "pod", name, "-o", "json", "--ignore-not-found"});
  if (r.exit_code != 0 || r.out.empty()) return std::nullopt;
  return json::parse(r.out)["spec"].value("nodeName", "");
}

// Polls until `check` holds, or `timeout`.
bool Eventually(const std::function<bool()>& check, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return check();
}

TEST(ExtenderE2E, AWatchFedExtenderSeesThePodsRunningInTheCluster) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  // db runs on n1; web must not share a node with it.
  const std::string cluster =
      Node("n1", "8") + Node("n2", "8") + Pod("db", "{cpu: \"1\"}", "  nodeName: n1\n", "{app: db}");
  ApiServer server({"-f", WriteTempFile("extender-e2e-cluster.yaml", cluster)});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  Extender ext({"--kubeconfig", server.Kubeconfig()});
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();

  const std::string web =
      Pod("web", "{cpu: \"1\"}",
          "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
          "      - labelSelector: {matchLabels: {app: db}}\n"
          "        topologyKey: kubernetes.io/hostname\n");
  // The simulated cluster has the same nodes but not db: only the extender's view has it. The
  // profile packs (MostAllocated), so without the extender web would go to the node listed first
  // among equals or the fuller one; with it, n1 is rejected because of db.
  const std::string sim = Node("n1", "8") + Node("n2", "8") + web;
  auto placed = Simulate(sim, Config(FilterExtender(ext.Url(), /*node_cache_capable=*/true)));
  EXPECT_EQ(placed["web"].node, "n2") << placed["web"].message;
  auto only_n1 = Simulate(Node("n1", "8") + web, Config(FilterExtender(ext.Url(), true)));
  EXPECT_EQ(only_n1["web"].node, "");
  EXPECT_NE(only_n1["web"].message.find("anti-affinity"), std::string::npos) << only_n1["web"].message;
  EXPECT_EQ(ext.Stop(SIGTERM), 0) << ext.Log();
}

// `kubesched run` against the API server, configured with the extender.
class RunProcess {
 public:
  RunProcess(ApiServer& server, const std::string& config) {
    const std::string cfg = server.WriteFile("run-config.yaml", config);
    log_ = server.Dir() / "run.err";
    child_ = Spawn({KubeschedPath(), "run", "--kubeconfig", server.Kubeconfig(), "--config", cfg,
                    "--leader-elect=false", "--secure-port", "-1", "--v", "2"},
                   log_, server.Dir().string());
  }
  ~RunProcess() {
    if (child_.pid > 0) StopChild(child_, SIGKILL);
  }
  std::string Log() const { return Slurp(log_); }

 private:
  Child child_;
  fs::path log_;
};

TEST(ExtenderE2E, RunBindsThroughTheExtenderAndPreemptsWithItsVictims) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  // n1 is full of low-priority pods; a high-priority pod needs one of them gone.
  const std::string cluster =
      Node("n1", "2") +
      Pod("low-1", "{cpu: \"1\"}", "  nodeName: n1\n  priority: 0\n  terminationGracePeriodSeconds: 0\n") +
      Pod("low-2", "{cpu: \"1\"}", "  nodeName: n1\n  priority: 0\n  terminationGracePeriodSeconds: 0\n") +
      "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n";
  ApiServer server({"-f", WriteTempFile("extender-e2e-run.yaml", cluster)});
  ASSERT_FALSE(server.Url().empty()) << server.ServerLog();
  Extender ext({"--kubeconfig", server.Kubeconfig()});
  ASSERT_FALSE(ext.Url().empty()) << ext.Log();
  const std::string extender = "urlPrefix: " + ext.Url() +
                               "\n  filterVerb: filter\n  preemptVerb: preempt\n  bindVerb: bind\n"
                               "  nodeCacheCapable: true\n";
  RunProcess run(server, Config(extender));

  // A pod that fits: bound, by the extender's bind verb.
  ASSERT_EQ(server.Kubectl({"apply", "-f", "-"}, Pod("fits", "{cpu: \"0\"}")).exit_code, 0);
  EXPECT_TRUE(Eventually([&] { return PodNode(server, "fits") == std::optional<std::string>("n1"); }, 30s))
      << run.Log() << ext.Log();
  EXPECT_NE(ext.Log().find("verb=\"bind\""), std::string::npos) << ext.Log();

  // A high-priority pod that fits only once one low pod is gone: the extender names the victim.
  ASSERT_EQ(
      server.Kubectl({"apply", "-f", "-"}, Pod("urgent", "{cpu: \"1\"}", "  priorityClassName: high\n")).exit_code, 0);
  EXPECT_TRUE(Eventually(
      [&] {
        const bool one_gone = !PodNode(server, "low-1") || !PodNode(server, "low-2");
        return one_gone && PodNode(server, "urgent") == std::optional<std::string>("n1");
      },
      60s))
      << run.Log() << ext.Log();
  EXPECT_TRUE(PodNode(server, "low-1") || PodNode(server, "low-2")) << "only one victim is needed";
  EXPECT_NE(ext.Log().find("verb=\"preempt\""), std::string::npos) << ext.Log();
}

}  // namespace
}  // namespace kubesched::e2e
