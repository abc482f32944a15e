// End-to-end tests of `kubesched simulate --config`: KubeSchedulerConfiguration files change
// decisions exactly as upstream's would.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

json Simulate(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "simulate", "-f",  SourcePath("examples/boreas/cluster.yaml"), "-f", SourcePath("examples/boreas/test-a.yaml"),
      "-o",       "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = RunKubesched(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(ConfigE2E, MostAllocatedAloneStillSpreadsBecauseOfSystemDefaultSpreading) {
  json j = Simulate({"--config", SourcePath("examples/configs/most-allocated.yaml")});
  EXPECT_EQ(j["summary"]["scheduled"], 20);
  EXPECT_EQ(j["summary"]["nodesUsed"], 6);
}

TEST(ConfigE2E, MostAllocatedWithoutDefaultSpreadingPacksTestAOnFourWorkers) {
  for (int seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    json j = Simulate(
        {"--config", SourcePath("examples/configs/most-allocated-no-spread.yaml"), "--seed", std::to_string(seed)});
    EXPECT_EQ(j["summary"]["scheduled"], 20);
    EXPECT_EQ(j["summary"]["nodesUsed"], 4);
  }
}

TEST(ConfigE2E, InvalidConfigurationIsRejectedWithItsFieldPath) {
  std::string cfg = WriteTempFile("bad-config.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Sideways
)");
  RunResult r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "--config", cfg});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("profiles[0].pluginConfig[0].args"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scoringStrategy.type"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  std::string dup = WriteTempFile("dup-config.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
- schedulerName: a
)");
  r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "--config", dup});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("profiles[1].schedulerName"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Duplicate value"), std::string::npos) << r.err;
}

TEST(ConfigE2E, EveryArgsErrorIsListedWithTheFileName) {
  std::string cfg = WriteTempFile("bad-args.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 200}
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Sideways
        resources: [{name: cpu, weight: 500}]
)");
  RunResult r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "--config", cfg});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + cfg +
                       ": profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in "
                       "valid range [0, 100]\n" +
                       cfg +
                       ": profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: \"Sideways\": "
                       "supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"\n" +
                       cfg +
                       ": profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 500: "
                       "resource weight of cpu not in valid range (0, 100]\n");
  EXPECT_TRUE(r.out.empty());

  std::string extenders = WriteTempFile("extenders.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:8888/
  prioritizeVerb: prioritize
- urlPrefix: http://127.0.0.1:8889/
  bindVerb: bind
- urlPrefix: http://127.0.0.1:8890/
  bindVerb: bind
)");
  r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "--config", extenders});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + extenders +
                       ": extenders[0].weight: Invalid value: 0: must have a positive weight applied to it\n" +
                       extenders +
                       ": extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can "
                       "implement bind\n");
}

TEST(ConfigE2E, ExplainShowsPerPluginVerdictsAndScores) {
  RunResult r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "-f",
                              SourcePath("examples/boreas/test-a.yaml"), "--explain", "default/does-not-exist"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "error: --explain: pod \"default/does-not-exist\" not found: no manifest or workload makes it (give "
            "namespace/name for another namespace)\n");
  // A pod that exists but that kubesched did not schedule (bound already): said, exit 0.
  r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "-f",
                    WriteTempFile("bound.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: bound}
spec:
  nodeName: worker-1
  containers: [{name: c, image: nginx}]
)"),
                    "--explain", "bound"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No scheduling attempt was made for default/bound"), std::string::npos) << r.out;

  std::string pod = WriteTempFile("one.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
)");
  r = RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "-f", pod, "--explain", "web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Last scheduling attempt of default/web"), std::string::npos) << r.out;
  // The control plane's taint, named; every worker's scores as raw>normalized*weight.
  EXPECT_NE(r.out.find("TaintToleration: node(s) had untolerated taint(s) [untolerated taint "
                       "node-role.kubernetes.io/control-plane:NoSchedule]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("NodeResourcesFit="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("selected node: worker-"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kubesched::e2e
