// End-to-end tests of the batch optimizer's solvers on real manifests: the application mix of
// tests/data/third_party (argo-cd, kube-prometheus, guestbook, ZooKeeper) on tests/data/app-mix's 8
// nodes, with examples/optimizer.yaml and its solver set to each back end. `simulate -o json` must
// stay JSON whatever a solver library prints, and stderr must carry no solver chatter at the
// default verbosity.

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

const std::vector<std::string> kManifests = {
    "tests/data/app-mix/cluster.yaml",
    "tests/data/third_party/argo-cd/install-workloads.yaml",
    "tests/data/third_party/kube-prometheus/prometheusOperator-deployment.yaml",
    "tests/data/third_party/kube-prometheus/kubeStateMetrics-deployment.yaml",
    "tests/data/third_party/kube-prometheus/blackboxExporter-deployment.yaml",
    "tests/data/third_party/kube-prometheus/prometheusAdapter-deployment.yaml",
    "tests/data/third_party/kube-prometheus/nodeExporter-daemonset.yaml",
    "tests/data/third_party/guestbook/guestbook-all-in-one.yaml",
    "tests/data/third_party/zookeeper/zookeeper.yaml",
};
// argo-cd 7, kube-prometheus 6 + node-exporter on each of the 8 nodes, guestbook 6, ZooKeeper 3.
constexpr size_t kPods = 29;

// examples/optimizer.yaml with BatchPlacement's solver set to `solver`.
std::string ConfigWithSolver(const std::string& solver) {
  const std::string config = ReadSource("examples/optimizer.yaml");
  const std::string with = std::regex_replace(config, std::regex("solver: cbc"), "solver: " + solver);
  EXPECT_NE(with.find("solver: " + solver), std::string::npos);
  return WriteTempFile("optimizer-" + solver + ".yaml", with);
}

RunResult Simulate(const std::string& config, const std::string& seed, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"simulate", "--config", config, "-o", "json", "--seed", seed};
  for (const auto& m : kManifests) {
    args.push_back("-f");
    args.push_back(SourcePath(m));
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return RunKubesched(args);
}

// Solver libraries' own words: CBC, CLP and CGL messages ("Cbc0012I", "Clp0006I", "Coin0506I"),
// CBC's C interface, GLPK's terminal output.
bool LooksLikeSolverChatter(const std::string& line) {
  static const std::regex chatter(
      R"((Cbc|Clp|Cgl|Coin)\d{4}[IWE]|Cbc_C_Interface|ERROR:|glp_|GLPK|Integer optimization begins|Welcome to the CBC)");
  return std::regex_search(line, chatter);
}

void ExpectEveryPodAccountedFor(const RunResult& r) {
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(r.out)) << "stdout is not JSON:\n" << r.out.substr(0, 2000);
  ASSERT_TRUE(j["pods"].is_array());
  EXPECT_EQ(j["pods"].size(), kPods);
  std::set<std::string> names;
  for (const auto& pod : j["pods"]) {
    names.insert(pod["namespace"].get<std::string>() + "/" + pod["name"].get<std::string>());
    // Every pod runs or says why not.
    if (pod["node"].is_null()) {
      EXPECT_TRUE(pod["message"].is_string()) << pod.dump();
    } else {
      EXPECT_EQ(pod["status"], "Running") << pod.dump();
    }
  }
  EXPECT_EQ(names.size(), kPods);
  const json& s = j["summary"];
  EXPECT_EQ(s["scheduled"].get<size_t>() + s["pending"].get<size_t>(), kPods) << s.dump();
  // The mix fits: every pod placed, on every node (node-exporter runs on all eight).
  EXPECT_EQ(s["scheduled"], kPods) << s.dump();
  EXPECT_EQ(s["optimizer"]["placed"], kPods) << s.dump();
}

void ExpectNoSolverChatter(const RunResult& r) {
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    EXPECT_FALSE(LooksLikeSolverChatter(line)) << line;
    // At the default verbosity stderr holds only kubesched's own warnings about the input.
    EXPECT_TRUE(line.empty() || line.rfind("warning: ", 0) == 0) << line;
  }
}

class SolversE2E : public testing::TestWithParam<std::string> {};

TEST_P(SolversE2E, ApplicationMixGivesJsonAndNoChatter) {
  const std::string config =
      GetParam() == "default" ? SourcePath("examples/optimizer.yaml") : ConfigWithSolver(GetParam());
  for (const char* seed : {"1", "2", "3"}) {
    SCOPED_TRACE(std::string("seed ") + seed);
    RunResult r = Simulate(config, seed);
    ExpectEveryPodAccountedFor(r);
    ExpectNoSolverChatter(r);
  }
}

TEST_P(SolversE2E, SolverOutputGoesToTheLogAtVerbosityFour) {
  const std::string config =
      GetParam() == "default" ? SourcePath("examples/optimizer.yaml") : ConfigWithSolver(GetParam());
  RunResult r = Simulate(config, "1", {"-v", "4"});
  ExpectEveryPodAccountedFor(r);
  // Whatever a solver printed is a log line now, never a bare line.
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    if (LooksLikeSolverChatter(line)) EXPECT_NE(line.find("\"Solver output\""), std::string::npos) << line;
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, SolversE2E, testing::Values("default", "cbc", "glpk"),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace kubesched::e2e
