// End-to-end tests of `kubesched bench`: every scheduler_perf workload's 500-node variant runs to
// completion with every measured pod bound (correctness, not speed: no timing is asserted), and
// bad arguments are rejected.

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

const std::vector<std::string> kSmallWorkloads = {
    "SchedulingBasic/500Nodes",
    "SchedulingPodAntiAffinity/500Nodes",
    "SchedulingPodAffinity/500Nodes",
    "SchedulingPreferredPodAffinity/500Nodes",
    "SchedulingPreferredPodAntiAffinity/500Nodes",
    "SchedulingNodeAffinity/500Nodes",
    "TopologySpreading/500Nodes",
    "PreferredTopologySpreading/500Nodes",
    "MixedSchedulingBasePod/500Nodes",
    "Unschedulable/500Nodes/10Init/1kPods",
    "PreemptionBasic/500Nodes",
};

TEST(BenchE2E, EverySmallWorkloadBindsAllMeasuredPods) {
  std::vector<std::string> args = {"bench", "-o", "json"};
  for (const auto& w : kSmallWorkloads) {
    args.push_back("--workload");
    args.push_back(w);
  }
  RunResult r = RunKubesched(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  ASSERT_EQ(out.size(), kSmallWorkloads.size());
  std::set<std::string> seen;
  for (const auto& w : out) {
    const std::string name = w["workload"];
    SCOPED_TRACE(name);
    seen.insert(name);
    EXPECT_EQ(w["nodes"], 500);
    EXPECT_EQ(w["measuredPodsBound"], w["measuredPods"]);
    EXPECT_GE(w["attempts"].get<int>(), w["measuredPods"].get<int>());
    EXPECT_GT(w["podsPerSecond"].get<double>(), 0);
    EXPECT_LE(w["latencyMs"]["p50"].get<double>(), w["latencyMs"]["p99"].get<double>());
    EXPECT_GT(w["peakRssMiB"].get<double>(), 0);
    // Each 3-CPU pod needs three of the four 900m pods on a full 4-CPU node evicted.
    if (name.starts_with("PreemptionBasic")) {
      EXPECT_EQ(w["evictions"], 3 * w["measuredPods"].get<int>());
    } else {
      EXPECT_EQ(w["evictions"], 0);
    }
  }
  EXPECT_EQ(seen.size(), kSmallWorkloads.size());
}

// Tiny clusters whose counts are known: the counters come from the store's events, and count
// only measured pods (init pods left pending, and binds before the measured phase, do not).
TEST(BenchE2E, TinyClustersGiveExactCounts) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    int measured_bound;
    int evictions;
  };
  const std::vector<Case> cases = {
      // 20 4-CPU nodes hold 800 100m pods: the 500 init pods, then 300 of the 1000 measured.
      {"basic", {"--workload", "SchedulingBasic/500Nodes", "--nodes", "20", "--pods", "1000"}, 300, 0},
      // 10 nodes hold 40 of the 2000 900m init pods; each 3-CPU measured pod evicts three of them.
      {"preemption", {"--workload", "PreemptionBasic/500Nodes", "--nodes", "10", "--pods", "10"}, 10, 30},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args = {"bench", "-o", "json"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    RunResult r = RunKubesched(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json out = json::parse(r.out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]["measuredPodsBound"], c.measured_bound);
    EXPECT_EQ(out[0]["evictions"], c.evictions);
    EXPECT_GE(out[0]["attempts"].get<int>(), out[0]["measuredPods"].get<int>());
  }
}

// Dynamic Resource Allocation: claims made from templates by the resourceclaim controller and
// allocated by the scheduler. The fast variants' one DRA node has 10 devices of each driver
// (20 for the four-claim pods: two of each driver a pod), so of 11 measured pods 10 bind; the
// steady state keeps scheduling batches of ten whose claims go with them.
TEST(BenchE2E, DraWorkloadsAllocateTheNodesDevices) {
  struct Case {
    std::string workload;
    int pods;
    int measured_bound;
  };
  const std::vector<Case> cases = {
      {"SchedulingWithResourceClaimTemplate/fast_QueueingHintsEnabled", 11, 10},
      {"SchedulingWithMultipleResourceClaims/fast", 11, 10},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.workload);
    RunResult r = RunKubesched({"bench", "-o", "json", "--workload", c.workload, "--pods", std::to_string(c.pods)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json out = json::parse(r.out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]["measuredPods"], c.pods);
    EXPECT_EQ(out[0]["measuredPodsBound"], c.measured_bound);
  }
  RunResult r = RunKubesched(
      {"bench", "-o", "json", "--workload", "SteadyStateClusterResourceClaimTemplate/fast_QueueingHintsEnabled"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  ASSERT_EQ(out.size(), 1u);
  // More than one batch of ten went through the node's ten devices: deleted pods' claims freed them.
  EXPECT_GT(out[0]["measuredPodsBound"].get<int>(), 10);
  EXPECT_GE(out[0]["measuredPods"].get<int>(), out[0]["measuredPodsBound"].get<int>());
  EXPECT_GT(out[0]["podsPerSecond"].get<double>(), 0);
}

TEST(BenchE2E, UnknownWorkloadAndOutputAreRejected) {
  RunResult r = RunKubesched({"bench", "--workload", "NoSuchWorkload"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown workload \"NoSuchWorkload\""), std::string::npos) << r.err;
  r = RunKubesched({"bench", "-o", "yaml", "--workload", "SchedulingBasic/500Nodes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-o/--output"), std::string::npos) << r.err;
}

TEST(BenchE2E, ListNamesEveryWorkloadWithItsThreshold) {
  RunResult r = RunKubesched({"bench", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& w : kSmallWorkloads) EXPECT_NE(r.out.find(w), std::string::npos) << w;
  EXPECT_NE(r.out.find("SchedulingBasic/5000Nodes_10000Pods"), std::string::npos);
  EXPECT_NE(r.out.find("threshold=680"), std::string::npos);
  EXPECT_NE(r.out.find("SchedulingWithResourceClaimTemplate/5000pods_500nodes_QueueingHintsEnabled"),
            std::string::npos);
  EXPECT_NE(r.out.find("SteadyStateClusterResourceClaimTemplate/empty_500nodes_QueueingHintsEnabled"),
            std::string::npos);
  EXPECT_NE(r.out.find("threshold=56"), std::string::npos);
  EXPECT_NE(r.out.find("threshold=64"), std::string::npos);
}

}  // namespace
}  // namespace kubesched::e2e
