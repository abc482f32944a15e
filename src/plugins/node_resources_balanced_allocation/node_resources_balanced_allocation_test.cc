// Mirrors upstream's noderesources balanced_allocation_test.go (cases without DRA, which kubesched
// does not model), plus args defaulting and validation.

#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "framework/cycle_state.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins::node_resources_balanced_allocation {
namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::Status;
using nlohmann::json;
using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

using PodPtr = std::shared_ptr<api::Pod>;
using NodePtr = std::shared_ptr<api::Node>;

// upstream's makeNode(name, milliCPU, memory, extendedResource).
NodePtr Node(std::string name, int64_t milli_cpu, int64_t memory,
             std::vector<std::pair<std::string, int64_t>> extended = {}) {
  std::vector<std::pair<std::string, std::string>> capacity = {{"cpu", std::to_string(milli_cpu) + "m"},
                                                               {"memory", std::to_string(memory)}};
  for (auto& [k, v] : extended) capacity.emplace_back(k, std::to_string(v));
  return MakeNode().Name(std::move(name)).Capacity(std::move(capacity)).Obj();
}

// The pod specs of upstream's test: containers 1000m/2000 and 2000m/3000 (cpuAndMemory), the same
// with 3 GPUs on the second container (cpuAndMemoryAndGPU), and cpu only (cpuOnly).
PodPtr CpuAndMemory(std::string node = "") {
  return MakePod()
      .Node(std::move(node))
      .Req({{"cpu", "1000m"}, {"memory", "2000"}})
      .Req({{"cpu", "2000m"}, {"memory", "3000"}})
      .Obj();
}
PodPtr CpuAndMemoryAndGPU(std::string node) {
  return MakePod()
      .Node(std::move(node))
      .Req({{"cpu", "1000m"}, {"memory", "2000"}})
      .Req({{"cpu", "2000m"}, {"memory", "3000"}, {"nvidia.com/gpu", "3"}})
      .Obj();
}
PodPtr CpuOnly(std::string node = "") {
  return MakePod()
      .Node(std::move(node))
      .Req({{"cpu", "1000m"}, {"memory", "0"}})
      .Req({{"cpu", "2000m"}, {"memory", "0"}})
      .Obj();
}

// The args as plugins read them, from the nlohmann/json values the cases below are written as.
framework::ArgsDocument ArgsOf(const nlohmann::json& j) { return testing::ArgsJson(j.dump()); }

std::unique_ptr<BalancedAllocation> MakePlugin(const json& args) {
  auto parsed = ParseArgs(ArgsOf(args).View());
  EXPECT_TRUE(parsed.has_value()) << parsed.error();
  return std::make_unique<BalancedAllocation>(parsed.value_or(NodeResourcesBalancedAllocationArgs{}));
}

json ResourcesArgs(std::vector<std::string> names) {
  json resources = json::array();
  for (const auto& n : names) resources.push_back({{"name", n}, {"weight", 1}});
  return {{"resources", resources}};
}

TEST(NodeResourcesBalancedAllocationTest, Score) {
  struct Case {
    std::string name;
    PodPtr pod;
    std::vector<NodePtr> nodes;
    std::vector<PodPtr> existing;
    json args;
    std::vector<int64_t> want;
    bool run_pre_score = true;
    Code want_pre_score_code = Code::kSuccess;
  };
  const json defaults = ResourcesArgs({"cpu", "memory"});
  const json with_gpu = ResourcesArgs({"cpu", "memory", "nvidia.com/gpu"});
  std::vector<Case> cases = {
      {"nothing scheduled, nothing requested, skip in PreScore",
       MakePod().Obj(),
       {Node("node1", 4000, 10000), Node("node2", 4000, 10000)},
       {},
       defaults,
       {},
       true,
       Code::kSkip},
      // node1: cpu 3000/4000, memory 5000/10000, std 0.125 → 87; node2: 3000/6000, 5000/10000 → 100.
      {"nothing scheduled, resources requested, differently sized nodes",
       CpuAndMemory(),
       {Node("node1", 4000, 10000), Node("node2", 6000, 10000)},
       {},
       defaults,
       {87, 100}},
      // node1: 6000/10000, 5000/20000, std 0.175 → 82; node2: 6000/10000, 10000/20000, std 0.05 → 95.
      {"resources requested, pods scheduled with resources",
       CpuAndMemory(),
       {Node("node1", 10000, 20000), Node("node2", 10000, 20000)},
       {CpuOnly("node1"), CpuAndMemory("node2")},
       defaults,
       {82, 95}},
      // node2: 6000/10000, 10000/50000, std 0.2 → 80.
      {"resources requested, pods scheduled with resources, differently sized nodes",
       CpuAndMemory(),
       {Node("node1", 10000, 20000), Node("node2", 10000, 50000)},
       {CpuOnly("node1"), CpuAndMemory("node2")},
       defaults,
       {82, 80}},
      // node1: 6000/6000, 0/10000, std 0.5 → 50; node2: 6000/6000, 5000/10000, std 0.25 → 75.
      {"requested resources at node capacity",
       CpuOnly(),
       {Node("node1", 6000, 10000), Node("node2", 6000, 10000)},
       {CpuOnly("node1"), CpuAndMemory("node2")},
       defaults,
       {50, 75}},
      // node1: 3000/3500, 5000/40000, 4/8 → std 0.3002 → 70; node2: 3000/3500, 5000/40000, 1/8 → 65.
      {"include scalar resource on a node for balanced resource allocation",
       MakePod().Req({{"memory", "0"}, {"nvidia.com/gpu", "1"}}).Obj(),
       {Node("node1", 3500, 40000, {{"nvidia.com/gpu", 8}}), Node("node2", 3500, 40000, {{"nvidia.com/gpu", 8}})},
       {CpuAndMemory("node2"), CpuAndMemoryAndGPU("node1")},
       with_gpu,
       {70, 65}},
      // The pod requests no GPU, so the GPU is left out on both nodes: 3000/3500, 5000/40000 → 63.
      {"node without the scalar resource should skip the scalar resource",
       CpuAndMemory(),
       {Node("node1", 3500, 40000, {{"nvidia.com/gpu", 8}}), Node("node2", 3500, 40000)},
       {},
       with_gpu,
       {63, 63}},
      {"resources requested, pods scheduled with resources if PreScore not called",
       CpuAndMemory(),
       {Node("node1", 10000, 20000), Node("node2", 10000, 20000)},
       {CpuOnly("node1"), CpuAndMemory("node2")},
       defaults,
       {82, 95},
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto plugin = MakePlugin(c.args);
    std::vector<std::unique_ptr<NodeInfo>> infos;
    std::vector<const NodeInfo*> list;
    for (const auto& n : c.nodes) {
      std::vector<PodPtr> on_node;
      for (const auto& p : c.existing) {
        if (p->spec.node_name == n->metadata.name) on_node.push_back(p);
      }
      infos.push_back(MakeNodeInfo(n, on_node));
      list.push_back(infos.back().get());
    }
    auto pod = framework::PodInfo::Create(c.pod);
    CycleState state;
    if (c.run_pre_score) {
      Status s = plugin->PreScore(state, *pod, list);
      EXPECT_EQ(framework::ToString(s.code()), framework::ToString(c.want_pre_score_code));
      if (s.IsSkip()) continue;
    }
    framework::NodeScoreList scores;
    for (const NodeInfo* n : list) {
      auto [score, status] = plugin->Score(state, *pod, *n);
      EXPECT_TRUE(status.IsSuccess()) << status.Message();
      scores.push_back({n->name(), score});
    }
    if (auto* ext = plugin->GetScoreExtensions()) ext->NormalizeScore(state, *pod, scores);
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want);
  }
}

TEST(NodeResourcesBalancedAllocationTest, BestEffortPodScoresZeroWithoutPreScore) {
  auto plugin = MakePlugin(nullptr);
  auto pod = framework::PodInfo::Create(MakePod().Container("image").Obj());
  auto node = MakeNodeInfo(Node("node1", 4000, 10000), {CpuOnly("node1")});
  CycleState state;
  auto [score, status] = plugin->Score(state, *pod, *node);
  EXPECT_TRUE(status.IsSuccess());
  EXPECT_EQ(score, 0);
}

TEST(NodeResourcesBalancedAllocationTest, UsesPlainRequests) {
  // Containers without requests count nothing here (unlike NodeResourcesFit's scoring): a node
  // full of request-less pods looks empty, and a pod requesting only cpu is measured on cpu alone
  // against memory 0.
  auto plugin = MakePlugin(nullptr);
  auto pod = framework::PodInfo::Create(MakePod().Req({{"cpu", "1000m"}}).Obj());
  auto node = MakeNodeInfo(Node("node1", 4000, 10000), {MakePod().Node("node1").Container("image").Obj()});
  CycleState state;
  ASSERT_TRUE(plugin->PreScore(state, *pod, {}).IsSuccess());
  // cpu 1000/4000 = 0.25, memory 0 → std 0.125 → 87.
  EXPECT_EQ(plugin->Score(state, *pod, *node).first, 87);
}

TEST(NodeResourcesBalancedAllocationTest, BalancedResourceScore) {
  using node_resources_fit::BalancedResourceScore;
  struct Case {
    std::string name;
    std::vector<int64_t> requested;
    std::vector<int64_t> allocatable;
    int64_t want;
  };
  std::vector<Case> cases = {
      {"no resources", {}, {}, 100},
      {"one resource", {3, 0}, {4, 0}, 100},
      {"fractions capped at 1", {8, 5}, {4, 10}, 75},
      {"three resources", {3000, 5000, 4}, {3500, 40000, 8}, 70},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(BalancedResourceScore(c.requested, c.allocatable), c.want);
  }
}

TEST(NodeResourcesBalancedAllocationTest, Args) {
  struct Case {
    std::string name;
    json args;
    std::vector<ResourceSpec> want_resources;
    std::string want_error;
  };
  std::vector<Case> cases = {
      {"null args get cpu and memory", nullptr, {{"cpu", 1}, {"memory", 1}}, ""},
      {"empty list gets cpu and memory", json{{"resources", json::array()}}, {{"cpu", 1}, {"memory", 1}}, ""},
      {"typed object",
       json{{"apiVersion", "kubescheduler.config.k8s.io/v1"}, {"kind", "NodeResourcesBalancedAllocationArgs"}},
       {{"cpu", 1}, {"memory", 1}},
       ""},
      {"missing or zero weight becomes 1",
       json{{"resources",
             {{{"name", "cpu"}}, {{"name", "memory"}, {"weight", 0}}, {{"name", "nvidia.com/gpu"}, {"weight", 1}}}}},
       {{"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}},
       ""},
      {"duplicated resource name", ResourcesArgs({"cpu", "cpu"}), {}, "resources[1].name: Duplicate value: \"cpu\""},
      {"weight must be 1",
       json{{"resources", {{{"name", "cpu"}, {"weight", 2}}, {{"name", "memory"}, {"weight", -1}}}}},
       {},
       "[resources[0].weight: Invalid value: 2: must be 1, resources[1].weight: Invalid value: -1: must be "
       "1]"},
      {"unknown field", json{{"shape", 1}}, {}, "unknown field \"shape\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto parsed = ParseArgs(ArgsOf(c.args).View());
    if (c.want_error.empty()) {
      ASSERT_TRUE(parsed.has_value()) << parsed.error();
      EXPECT_EQ(parsed->resources, c.want_resources);
    } else {
      ASSERT_FALSE(parsed.has_value());
      EXPECT_EQ(parsed.error(), c.want_error);
    }
  }
}

TEST(NodeResourcesBalancedAllocationTest, Factory) {
  testing::FakeHandle handle;
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value()) << plugin.error();
  EXPECT_EQ((*plugin)->Name(), "NodeResourcesBalancedAllocation");
  EXPECT_NE(dynamic_cast<framework::ScorePlugin*>(plugin->get()), nullptr);
  EXPECT_NE(dynamic_cast<framework::PreScorePlugin*>(plugin->get()), nullptr);

  auto bad = New(ArgsOf(ResourcesArgs({"cpu", "cpu"})).View(), handle);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), "resources[1].name: Duplicate value: \"cpu\"");
}

}  // namespace
}  // namespace kubesched::plugins::node_resources_balanced_allocation
