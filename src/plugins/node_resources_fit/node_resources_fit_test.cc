// Mirrors upstream's noderesources fit_test.go, least_allocated_test.go, most_allocated_test.go and
// requested_to_capacity_ratio_test.go (cases without pod-level resources or DRA, which kubesched
// does not model), plus args defaulting and validation.

#include "plugins/node_resources_fit/node_resources_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <nlohmann/json.hpp>
#include <ostream>

#include "framework/cycle_state.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

// Counts allocations while enabled, so the hot-path test can assert Filter and Score allocate
// nothing in the common case. The replacements pair malloc with free; GCC 12 cannot see that
// through inlined callers and warns of a mismatch where there is none.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace kubesched::plugins::node_resources_fit {

void PrintTo(const InsufficientResource& r, std::ostream* os) {
  *os << "{" << r.resource_name << ", \"" << r.reason << "\", requested=" << r.requested << ", used=" << r.used
      << ", capacity=" << r.capacity << ", unresolvable=" << r.unresolvable << "}";
}

namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::Status;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

using PodPtr = std::shared_ptr<api::Pod>;
using NodePtr = std::shared_ptr<api::Node>;

constexpr std::string_view kExtendedResourceA = "example.com/aaa";
constexpr std::string_view kExtendedResourceB = "example.com/bbb";
constexpr std::string_view kKubernetesIOResourceA = "kubernetes.io/something";
constexpr std::string_view kKubernetesIOResourceB = "subdomain.kubernetes.io/something";
constexpr std::string_view kHugePageResourceA = "hugepages-2Mi";
constexpr std::string_view kExtendedResourceDRA = "extended.resource.dra.io/something";
constexpr std::string_view kExtendedRes = "abc.com/xyz";

// upstream's framework.Resource as used by newResourcePod: one container's requests.
struct Req {
  Req(int64_t milli_cpu = 0, int64_t memory = 0, int64_t ephemeral_storage = 0,
      std::vector<std::pair<std::string_view, int64_t>> scalar = {})
      : milli_cpu(milli_cpu), memory(memory), ephemeral_storage(ephemeral_storage), scalar(std::move(scalar)) {}
  int64_t milli_cpu;
  int64_t memory;
  int64_t ephemeral_storage;
  std::vector<std::pair<std::string_view, int64_t>> scalar;
};

std::vector<std::pair<std::string, std::string>> RequestList(const Req& r) {
  std::vector<std::pair<std::string, std::string>> list = {
      {"cpu", std::to_string(r.milli_cpu) + "m"},
      {"memory", std::to_string(r.memory)},
      {"pods", "0"},
      {"ephemeral-storage", std::to_string(r.ephemeral_storage)},
  };
  for (const auto& [name, q] : r.scalar) list.emplace_back(std::string(name), std::to_string(q));
  return list;
}

// upstream's newResourcePod / newResourceInitPod / newResourceOverheadPod.
PodPtr ResourcePod(std::vector<Req> containers, std::vector<Req> init = {},
                   std::vector<std::pair<std::string, std::string>> overhead = {}) {
  auto b = MakePod();
  for (const auto& c : containers) b.Req(RequestList(c));
  for (const auto& c : init) b.InitReq(RequestList(c));
  if (!overhead.empty()) b.Overhead(std::move(overhead));
  return b.Obj();
}

// upstream's makeResources(10, 20, 32, 5, 20, 5) as capacity and allocatable.
NodePtr FitTestNode() {
  return MakeNode()
      .Name("node")
      .Capacity({{"cpu", "10m"},
                 {"memory", "20"},
                 {"pods", "32"},
                 {std::string(kExtendedResourceA), "5"},
                 {"ephemeral-storage", "20"},
                 {std::string(kHugePageResourceA), "5"}})
      .Obj();
}

// The args as plugins read them, from the nlohmann/json values the cases below are written as.
framework::ArgsDocument ArgsOf(const nlohmann::json& j) { return testing::ArgsJson(j.dump()); }

std::unique_ptr<Fit> MakeFit(const json& args = nullptr) {
  auto parsed = ParseNodeResourcesFitArgs(ArgsOf(args).View());
  EXPECT_TRUE(parsed.has_value()) << parsed.error();
  return std::make_unique<Fit>(parsed.value_or(NodeResourcesFitArgs{}));
}

Status RunFilter(Fit& fit, const PodPtr& pod, const NodeInfo& node_info) {
  auto info = framework::PodInfo::Create(pod);
  CycleState state;
  auto [result, pre_status] = fit.PreFilter(state, *info, {});
  EXPECT_TRUE(pre_status.IsSuccess()) << pre_status.Message();
  EXPECT_TRUE(result.AllNodes());
  return fit.Filter(state, *info, node_info);
}

Status Unschedulable(std::vector<std::string> reasons) { return Status(Code::kUnschedulable, std::move(reasons)); }
Status Unresolvable(std::vector<std::string> reasons) {
  return Status(Code::kUnschedulableAndUnresolvable, std::move(reasons));
}

void ExpectStatus(const Status& got, const Status& want) {
  EXPECT_EQ(framework::ToString(got.code()), framework::ToString(want.code())) << got.Message();
  EXPECT_EQ(got.reasons(), want.reasons());
}

std::string Insufficient(std::string_view name) { return "Insufficient " + std::string(name); }

// --- Filter ------------------------------------------------------------------------------------

TEST(NodeResourcesFitTest, EnoughRequests) {
  struct Case {
    std::string name;
    PodPtr pod;
    std::vector<PodPtr> node_pods;
    json args = nullptr;
    Status want_status;
    std::vector<InsufficientResource> want_insufficient;
  };
  auto on_node = [](Req r) { return std::vector<PodPtr>{ResourcePod({std::move(r)})}; };
  const std::string cpu = "cpu", memory = "memory", a(kExtendedResourceA), b(kExtendedResourceB),
                    kio_a(kKubernetesIOResourceA), kio_b(kKubernetesIOResourceB), hp(kHugePageResourceA),
                    dra(kExtendedResourceDRA);
  std::vector<Case> cases = {
      {"no resources requested always fits", MakePod().Obj(), on_node({10, 20}), nullptr, {}, {}},
      {"too many resources fails",
       ResourcePod({{1, 1}}),
       on_node({10, 20}),
       nullptr,
       Unschedulable({Insufficient(cpu), Insufficient(memory)}),
       {{cpu, Insufficient(cpu), 1, 10, 10, false}, {memory, Insufficient(memory), 1, 20, 20, false}}},
      {"too many resources fails due to init container cpu",
       ResourcePod({{1, 1}}, {{3, 1}}),
       on_node({8, 19}),
       nullptr,
       Unschedulable({Insufficient(cpu)}),
       {{cpu, Insufficient(cpu), 3, 8, 10, false}}},
      {"too many resources fails due to highest init container cpu",
       ResourcePod({{1, 1}}, {{3, 1}, {2, 1}}),
       on_node({8, 19}),
       nullptr,
       Unschedulable({Insufficient(cpu)}),
       {{cpu, Insufficient(cpu), 3, 8, 10, false}}},
      {"too many resources fails due to init container memory",
       ResourcePod({{1, 1}}, {{1, 3}}),
       on_node({9, 19}),
       nullptr,
       Unschedulable({Insufficient(memory)}),
       {{memory, Insufficient(memory), 3, 19, 20, false}}},
      {"too many resources fails due to highest init container memory",
       ResourcePod({{1, 1}}, {{1, 3}, {1, 2}}),
       on_node({9, 19}),
       nullptr,
       Unschedulable({Insufficient(memory)}),
       {{memory, Insufficient(memory), 3, 19, 20, false}}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       ResourcePod({{1, 1}}, {{1, 1}}),
       on_node({9, 19}),
       nullptr,
       {},
       {}},
      {"multiple init containers fit because it's the max, not sum, of containers and init containers",
       ResourcePod({{1, 1}}, {{1, 1}, {1, 1}}),
       on_node({9, 19}),
       nullptr,
       {},
       {}},
      {"both resources fit", ResourcePod({{1, 1}}), on_node({5, 5}), nullptr, {}, {}},
      {"one resource memory fits",
       ResourcePod({{2, 1}}),
       on_node({9, 5}),
       nullptr,
       Unschedulable({Insufficient(cpu)}),
       {{cpu, Insufficient(cpu), 2, 9, 10, false}}},
      {"one resource cpu fits",
       ResourcePod({{1, 2}}),
       on_node({5, 19}),
       nullptr,
       Unschedulable({Insufficient(memory)}),
       {{memory, Insufficient(memory), 2, 19, 20, false}}},
      {"equal edge case", ResourcePod({{5, 1}}), on_node({5, 19}), nullptr, {}, {}},
      {"equal edge case for init container", ResourcePod({{4, 1}}, {{5, 1}}), on_node({5, 19}), nullptr, {}, {}},
      {"extended resource fits", ResourcePod({{0, 0, 0, {{kExtendedResourceA, 1}}}}), on_node({}), nullptr, {}, {}},
      {"extended resource fits for init container",
       ResourcePod({{}}, {{0, 0, 0, {{kExtendedResourceA, 1}}}}),
       on_node({}),
       nullptr,
       {},
       {}},
      {"extended resource capacity enforced",
       ResourcePod({{1, 1, 0, {{kExtendedResourceA, 10}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 0}}}),
       nullptr,
       Unresolvable({Insufficient(a)}),
       {{a, Insufficient(a), 10, 0, 5, true}}},
      {"extended resource capacity enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kExtendedResourceA, 10}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 0}}}),
       nullptr,
       Unresolvable({Insufficient(a)}),
       {{a, Insufficient(a), 10, 0, 5, true}}},
      {"extended resource allocatable enforced",
       ResourcePod({{1, 1, 0, {{kExtendedResourceA, 1}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 5}}}),
       nullptr,
       Unschedulable({Insufficient(a)}),
       {{a, Insufficient(a), 1, 5, 5, false}}},
      {"extended resource allocatable enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kExtendedResourceA, 1}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 5}}}),
       nullptr,
       Unschedulable({Insufficient(a)}),
       {{a, Insufficient(a), 1, 5, 5, false}}},
      {"extended resource allocatable enforced for multiple containers",
       ResourcePod({{1, 1, 0, {{kExtendedResourceA, 3}}}, {1, 1, 0, {{kExtendedResourceA, 3}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 2}}}),
       nullptr,
       Unresolvable({Insufficient(a)}),
       {{a, Insufficient(a), 6, 2, 5, true}}},
      {"extended resource allocatable admits multiple init containers",
       ResourcePod({{}}, {{1, 1, 0, {{kExtendedResourceA, 3}}}, {1, 1, 0, {{kExtendedResourceA, 3}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 2}}}),
       nullptr,
       {},
       {}},
      {"extended resource allocatable enforced for multiple init containers",
       ResourcePod({{}}, {{1, 1, 0, {{kExtendedResourceA, 6}}}, {1, 1, 0, {{kExtendedResourceA, 3}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 2}}}),
       nullptr,
       Unresolvable({Insufficient(a)}),
       {{a, Insufficient(a), 6, 2, 5, true}}},
      {"extended resource allocatable enforced for unknown resource",
       ResourcePod({{1, 1, 0, {{kExtendedResourceB, 1}}}}),
       on_node({}),
       nullptr,
       Unresolvable({Insufficient(b)}),
       {{b, Insufficient(b), 1, 0, 0, true}}},
      {"extended resource allocatable enforced for unknown resource for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kExtendedResourceB, 1}}}}),
       on_node({}),
       nullptr,
       Unresolvable({Insufficient(b)}),
       {{b, Insufficient(b), 1, 0, 0, true}}},
      {"kubernetes.io resource capacity enforced",
       ResourcePod({{1, 1, 0, {{kKubernetesIOResourceA, 10}}}}),
       on_node({}),
       nullptr,
       Unresolvable({Insufficient(kio_a)}),
       {{kio_a, Insufficient(kio_a), 10, 0, 0, true}}},
      {"kubernetes.io resource capacity enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kKubernetesIOResourceB, 10}}}}),
       on_node({}),
       nullptr,
       Unresolvable({Insufficient(kio_b)}),
       {{kio_b, Insufficient(kio_b), 10, 0, 0, true}}},
      {"hugepages resource capacity enforced",
       ResourcePod({{1, 1, 0, {{kHugePageResourceA, 10}}}}),
       on_node({0, 0, 0, {{kHugePageResourceA, 0}}}),
       nullptr,
       Unresolvable({Insufficient(hp)}),
       {{hp, Insufficient(hp), 10, 0, 5, true}}},
      {"hugepages resource capacity enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kHugePageResourceA, 10}}}}),
       on_node({0, 0, 0, {{kHugePageResourceA, 0}}}),
       nullptr,
       Unresolvable({Insufficient(hp)}),
       {{hp, Insufficient(hp), 10, 0, 5, true}}},
      {"hugepages resource allocatable enforced for multiple containers",
       ResourcePod({{1, 1, 0, {{kHugePageResourceA, 3}}}, {1, 1, 0, {{kHugePageResourceA, 3}}}}),
       on_node({0, 0, 0, {{kHugePageResourceA, 2}}}),
       nullptr,
       Unresolvable({Insufficient(hp)}),
       {{hp, Insufficient(hp), 6, 2, 5, true}}},
      {"skip checking ignored extended resource",
       ResourcePod({{1, 1, 0, {{kExtendedResourceB, 1}}}}),
       on_node({}),
       json{{"ignoredResources", {"example.com/bbb"}}},
       {},
       {}},
      {"resources + pod overhead fits",
       ResourcePod({{1, 1}}, {}, {{"cpu", "3m"}, {"memory", "13"}}),
       on_node({5, 5}),
       nullptr,
       {},
       {}},
      {"requests + overhead does not fit for memory",
       ResourcePod({{1, 1}}, {}, {{"cpu", "1m"}, {"memory", "15"}}),
       on_node({5, 5}),
       nullptr,
       Unschedulable({Insufficient(memory)}),
       {{memory, Insufficient(memory), 16, 5, 20, false}}},
      {"skip checking ignored extended resource via resource groups",
       ResourcePod({{1, 1, 0, {{kExtendedResourceB, 1}, {kKubernetesIOResourceA, 1}}}}),
       on_node({}),
       json{{"ignoredResourceGroups", {"example.com"}}},
       Unresolvable({Insufficient(kio_a)}),
       {{kio_a, Insufficient(kio_a), 1, 0, 0, true}}},
      {"skip checking extended resource request with quantity zero via resource groups",
       ResourcePod({{1, 1, 0, {{kExtendedResourceA, 0}}}}),
       on_node({0, 0, 0, {{kExtendedResourceA, 6}}}),
       nullptr,
       {},
       {}},
      {"skip checking resource request with quantity zero",
       ResourcePod({{0, 0, 0, {{kExtendedResourceA, 1}}}}),
       on_node({20, 30, 0, {{kExtendedResourceA, 1}}}),
       nullptr,
       {},
       {}},
      // With DRAExtendedResource off, a resource no device plugin advertises is simply missing.
      {"extended resource backed by DRA not enabled",
       ResourcePod({{1, 1, 0, {{kExtendedResourceDRA, 1}}}}),
       on_node({}),
       nullptr,
       Unresolvable({Insufficient(dra)}),
       {{dra, Insufficient(dra), 1, 0, 0, true}}},
      {"extended resource NOT backed by DRA",
       ResourcePod({{1, 1, 0, {{kExtendedResourceB, 1}}}}),
       on_node({}),
       nullptr,
       Unresolvable({Insufficient(b)}),
       {{b, Insufficient(b), 1, 0, 0, true}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node_info = MakeNodeInfo(FitTestNode(), c.node_pods);
    auto fit = MakeFit(c.args);
    ExpectStatus(RunFilter(*fit, c.pod, *node_info), c.want_status);

    auto info = framework::PodInfo::Create(c.pod);
    auto request =
        PruneIgnoredResources(info->requests, fit->args().ignored_resources, fit->args().ignored_resource_groups);
    EXPECT_EQ(FitsRequest(request, *node_info), c.want_insufficient);
  }
}

TEST(NodeResourcesFitTest, FilterWithoutPreFilterIsAnError) {
  auto fit = MakeFit();
  auto info = framework::PodInfo::Create(MakePod().Obj());
  auto node_info = MakeNodeInfo(MakeNode().Name("node").Obj());
  CycleState state;
  Status status = fit->Filter(state, *info, *node_info);
  EXPECT_EQ(status.code(), Code::kError);
  EXPECT_EQ(status.Message(), "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

TEST(NodeResourcesFitTest, NotEnoughRequests) {
  struct Case {
    std::string name;
    PodPtr pod;
    Req on_node;
  };
  std::vector<Case> cases = {
      {"even without specified resources, predicate fails when there's no space for additional pod",
       MakePod().Obj(),
       {10, 20}},
      {"even if both resources fit, predicate fails when there's no space for additional pod",
       ResourcePod({{1, 1}}),
       {5, 5}},
      {"even for equal edge case, predicate fails when there's no space for additional pod",
       ResourcePod({{5, 1}}),
       {5, 19}},
      {"even for equal edge case, predicate fails when there's no space for additional pod due to init "
       "container",
       ResourcePod({{5, 1}}, {{5, 1}}),
       {5, 19}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node = MakeNode()
                    .Name("node")
                    .Allocatable({{"cpu", "10m"},
                                  {"memory", "20"},
                                  {"pods", "1"},
                                  {std::string(kExtendedResourceA), "0"},
                                  {"ephemeral-storage", "0"},
                                  {std::string(kHugePageResourceA), "0"}})
                    .Obj();
    auto node_info = MakeNodeInfo(node, {ResourcePod({c.on_node})});
    auto fit = MakeFit();
    ExpectStatus(RunFilter(*fit, c.pod, *node_info), Unschedulable({"Too many pods"}));
  }
}

TEST(NodeResourcesFitTest, StorageRequests) {
  struct Case {
    std::string name;
    PodPtr pod;
    Req on_node;
    Status want;
  };
  std::vector<Case> cases = {
      {"empty storage requested, and pod fits", ResourcePod({{1, 1}}), {2, 10}, {}},
      {"storage ephemeral local storage request exceeds allocatable",
       ResourcePod({{0, 0, 25}}),
       {2, 2},
       Unresolvable({"Insufficient ephemeral-storage"})},
      {"ephemeral local storage is sufficient", ResourcePod({{0, 0, 5}}), {2, 2, 10}, {}},
      {"pod fits", ResourcePod({{0, 0, 10}}), {2, 2}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node_info = MakeNodeInfo(FitTestNode(), {ResourcePod({c.on_node})});
    auto fit = MakeFit();
    ExpectStatus(RunFilter(*fit, c.pod, *node_info), c.want);
  }
}

TEST(NodeResourcesFitTest, StorageShortageOnlyFromExistingPodsIsResolvable) {
  // 15 + 10 > 20 but 10 <= 20: evicting pods could make room.
  auto node_info = MakeNodeInfo(FitTestNode(), {ResourcePod({{0, 0, 15}})});
  auto fit = MakeFit();
  ExpectStatus(RunFilter(*fit, ResourcePod({{0, 0, 10}}), *node_info),
               Unschedulable({"Insufficient ephemeral-storage"}));
}

TEST(NodeResourcesFitTest, AllReasonsInOneStatus) {
  // A full node: pod count, cpu (resolvable) and an extended resource beyond allocatable.
  auto node = MakeNode()
                  .Name("node")
                  .Capacity({{"cpu", "10m"}, {"memory", "20"}, {"pods", "1"}, {std::string(kExtendedResourceA), "1"}})
                  .Obj();
  auto node_info = MakeNodeInfo(node, {ResourcePod({{8, 0}})});
  auto fit = MakeFit();
  ExpectStatus(RunFilter(*fit, ResourcePod({{5, 1, 0, {{kExtendedResourceA, 2}}}}), *node_info),
               Unresolvable({"Too many pods", "Insufficient cpu", Insufficient(kExtendedResourceA)}));
}

TEST(NodeResourcesFitTest, RestartableInitContainers) {
  struct Case {
    std::string name;
    PodPtr pod;
    Status want;
  };
  auto regular_and_sidecar = [](std::vector<std::pair<std::string, std::string>> regular,
                                std::vector<std::pair<std::string, std::string>> sidecar) {
    return MakePod().Req(std::move(regular)).InitReq(std::move(sidecar), /*sidecar=*/true).Obj();
  };
  std::vector<Case> cases = {
      {"allow pod without restartable init containers", MakePod().Container("image").Obj(), {}},
      {"allow pod with restartable init containers", regular_and_sidecar({}, {}), {}},
      {"allow pod if the total requested resources do not exceed the node's allocatable resources",
       regular_and_sidecar({{"cpu", "1m"}}, {{"cpu", "1m"}}),
       {}},
      {"not allow pod if the total requested resources do exceed the node's allocatable resources",
       regular_and_sidecar({{"cpu", "1m"}}, {{"cpu", "2m"}}), Unresolvable({"Insufficient cpu"})},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node = MakeNode().Name("node").Allocatable({{"cpu", "2m"}, {"memory", "0"}, {"pods", "1"}}).Obj();
    auto node_info = MakeNodeInfo(node);
    auto fit = MakeFit();
    ExpectStatus(RunFilter(*fit, c.pod, *node_info), c.want);
  }
}

// --- Score -------------------------------------------------------------------------------------

struct ScoreSetup {
  std::vector<std::unique_ptr<NodeInfo>> node_infos;
  std::vector<const NodeInfo*> list;
};

// One NodeInfo per node holding the pods bound to it, as upstream's cache.NewSnapshot.
ScoreSetup BuildNodeInfos(const std::vector<NodePtr>& nodes, const std::vector<PodPtr>& pods) {
  ScoreSetup s;
  for (const auto& n : nodes) {
    std::vector<PodPtr> on_node;
    for (const auto& p : pods) {
      if (p->spec.node_name == n->metadata.name) on_node.push_back(p);
    }
    s.node_infos.push_back(MakeNodeInfo(n, on_node));
    s.list.push_back(s.node_infos.back().get());
  }
  return s;
}

// Runs PreScore (optionally), Score on every node, then NormalizeScore if the plugin has one.
std::vector<int64_t> RunScore(Fit& fit, const PodPtr& pod, const std::vector<NodePtr>& nodes,
                              const std::vector<PodPtr>& existing, bool run_pre_score = true) {
  auto setup = BuildNodeInfos(nodes, existing);
  auto info = framework::PodInfo::Create(pod);
  CycleState state;
  if (run_pre_score) {
    Status s = fit.PreScore(state, *info, setup.list);
    EXPECT_TRUE(s.IsSuccess()) << s.Message();
  }
  framework::NodeScoreList scores;
  for (const NodeInfo* n : setup.list) {
    auto [score, status] = fit.Score(state, *info, *n);
    EXPECT_TRUE(status.IsSuccess()) << status.Message();
    scores.push_back({n->name(), score});
  }
  if (auto* ext = fit.GetScoreExtensions()) {
    Status s = ext->NormalizeScore(state, *info, scores);
    EXPECT_TRUE(s.IsSuccess()) << s.Message();
  }
  std::vector<int64_t> out;
  for (const auto& s : scores) out.push_back(s.score);
  return out;
}

json ResourcesJson(std::vector<std::pair<std::string_view, int64_t>> resources) {
  json out = json::array();
  for (const auto& [name, weight] : resources) out.push_back({{"name", name}, {"weight", weight}});
  return out;
}

json StrategyArgs(std::string_view type, std::vector<std::pair<std::string_view, int64_t>> resources,
                  std::vector<std::pair<int, int>> shape = {}) {
  json strategy = {{"type", type}, {"resources", ResourcesJson(std::move(resources))}};
  if (!shape.empty()) {
    json points = json::array();
    for (auto [u, s] : shape) points.push_back({{"utilization", u}, {"score", s}});
    strategy["requestedToCapacityRatio"] = {{"shape", points}};
  }
  return {{"scoringStrategy", strategy}};
}

const std::vector<std::pair<std::string_view, int64_t>> kDefaultResources = {{"cpu", 1}, {"memory", 1}};
const std::vector<std::pair<std::string_view, int64_t>> kExtendedResourceSet = {
    {"cpu", 1}, {"memory", 1}, {kExtendedRes, 1}};

NodePtr CapacityNode(std::string name, std::vector<std::pair<std::string, std::string>> capacity) {
  return MakeNode().Name(std::move(name)).Capacity(std::move(capacity)).Obj();
}
PodPtr PodOn(std::string node, std::vector<std::pair<std::string, std::string>> requests) {
  return MakePod().Node(std::move(node)).Req(std::move(requests)).Obj();
}

struct ScoreCase {
  std::string name;
  PodPtr pod;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> existing;
  std::vector<int64_t> want;
  std::vector<std::pair<std::string_view, int64_t>> resources = kDefaultResources;
};

void RunStrategyCases(std::string_view type, const std::vector<ScoreCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto fit = MakeFit(StrategyArgs(type, c.resources));
    EXPECT_EQ(RunScore(*fit, c.pod, c.nodes, c.existing), c.want);
  }
}

// Two containers requesting 1000/2000 and 2000/3000 (cpu in cores, as upstream's tests).
PodPtr PodCpu3kMem5k() {
  return MakePod().Req({{"cpu", "1000"}, {"memory", "2000"}}).Req({{"cpu", "2000"}, {"memory", "3000"}}).Obj();
}

TEST(NodeResourcesFitTest, LeastAllocatedScoringStrategy) {
  auto n = [](std::string name, std::string cpu, std::string mem) {
    return CapacityNode(std::move(name), {{"cpu", std::move(cpu)}, {"memory", std::move(mem)}});
  };
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested",
       MakePod().Obj(),
       {n("node1", "4000", "10000"), n("node2", "4000", "10000")},
       {},
       {100, 100}},
      {"nothing scheduled, resources requested, differently sized nodes",
       PodCpu3kMem5k(),
       {n("node1", "4000", "10000"), n("node2", "6000", "10000")},
       {},
       {37, 50}},
      {"no resources requested, pods scheduled",
       MakePod().Obj(),
       {n("node1", "4000", "10000"), n("node2", "4000", "10000")},
       {MakePod().Node("node1").Obj(), MakePod().Node("node1").Obj(), MakePod().Node("node2").Obj(),
        MakePod().Node("node2").Obj()},
       {100, 100}},
      {"no resources requested, pods scheduled with resources",
       MakePod().Obj(),
       {n("node1", "10000", "20000"), n("node2", "10000", "20000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}),
        PodOn("node2", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {70, 57}},
      {"resources requested, pods scheduled with resources",
       PodCpu3kMem5k(),
       {n("node1", "10000", "20000"), n("node2", "10000", "20000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {57, 45}},
      {"resources requested, pods scheduled with resources, differently sized nodes",
       PodCpu3kMem5k(),
       {n("node1", "10000", "20000"), n("node2", "10000", "50000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {57, 60}},
      {"requested resources exceed node capacity",
       MakePod().Req({{"cpu", "3000"}, {"memory", "0"}}).Obj(),
       {n("node1", "4000", "10000"), n("node2", "4000", "10000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {50, 25}},
      {"zero node resources, pods scheduled with resources",
       MakePod().Obj(),
       {MakeNode().Name("node1").Obj(), MakeNode().Name("node2").Obj()},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {0, 0}},
      {"nothing scheduled, resources requested with different weight on CPU and memory, differently sized "
       "nodes",
       PodCpu3kMem5k(),
       {n("node1", "4000", "10000"), n("node2", "6000", "10000")},
       {},
       {41, 50},
       {{"memory", 2}, {"cpu", 1}}},
      {"bypass extended resource if the pod does not request",
       PodCpu3kMem5k(),
       {n("node1", "6000", "10000"),
        CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "4"}})},
       {},
       {50, 50},
       kExtendedResourceSet},
      {"honor extended resource if the pod requests",
       MakePod().Req({{"cpu", "3000"}, {"memory", "5000"}, {std::string(kExtendedRes), "2"}}).Obj(),
       {CapacityNode("node1", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "4"}}),
        CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "10"}})},
       {},
       {50, 60},
       kExtendedResourceSet},
      {"if the node doesn't have a resource",
       MakePod().Req({{"cpu", "3000"}, {"memory", "4000"}}).Obj(),
       {n("node1", "6000", "10000"),
        CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "4"}})},
       {},
       {55, 55},
       {{kExtendedRes, 2}, {"cpu", 1}, {"memory", 1}}},
  };
  RunStrategyCases(kLeastAllocated, cases);
}

TEST(NodeResourcesFitTest, MostAllocatedScoringStrategy) {
  auto n = [](std::string name, std::string cpu, std::string mem) {
    return CapacityNode(std::move(name), {{"cpu", std::move(cpu)}, {"memory", std::move(mem)}});
  };
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested",
       MakePod().Obj(),
       {n("node1", "4000", "10000"), n("node2", "4000", "10000")},
       {},
       {0, 0}},
      {"nothing scheduled, resources requested, differently sized nodes",
       PodCpu3kMem5k(),
       {n("node1", "4000", "10000"), n("node2", "6000", "10000")},
       {},
       {62, 50}},
      {"no resources requested, pods scheduled with resources",
       MakePod().Obj(),
       {n("node1", "10000", "20000"), n("node2", "10000", "20000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}),
        PodOn("node2", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {30, 42}},
      {"resources requested, pods scheduled with resources",
       PodCpu3kMem5k(),
       {n("node1", "10000", "20000"), n("node2", "10000", "20000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "0"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {42, 55}},
      {"resources requested equal node capacity",
       MakePod().Req({{"cpu", "2000"}, {"memory", "4000"}}).Req({{"cpu", "3000"}, {"memory", "5000"}}).Obj(),
       {n("node1", "5000", "10000"), n("node2", "10000", "9000")},
       {},
       {95, 75}},
      {"nothing scheduled, resources requested, differently sized nodes (weighted)",
       PodCpu3kMem5k(),
       {n("node1", "4000", "10000"), n("node2", "6000", "10000")},
       {},
       {58, 50},
       {{"memory", 2}, {"cpu", 1}}},
      {"no resources requested, pods scheduled, nonzero request for resource",
       MakePod().Container("container").Obj(),
       {n("node1", "250m", "1000Mi"), n("node2", "250m", "1000Mi")},
       {MakePod().Node("node1").Container("container").Obj(), MakePod().Node("node1").Container("container").Obj()},
       {80, 30}},
      {"bypass extended resource if the pod does not request",
       PodCpu3kMem5k(),
       {n("node1", "6000", "10000"),
        CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "4"}})},
       {},
       {50, 50},
       kExtendedResourceSet},
      {"honor extended resource if the pod request",
       MakePod().Req({{"cpu", "3000"}, {"memory", "5000"}, {std::string(kExtendedRes), "2"}}).Obj(),
       {CapacityNode("node1", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "4"}}),
        CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "10"}})},
       {},
       {50, 40},
       kExtendedResourceSet},
      {"if the node doesn't have a resource",
       MakePod().Req({{"cpu", "3000"}, {"memory", "4000"}}).Obj(),
       {n("node1", "6000", "10000"),
        CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}, {std::string(kExtendedRes), "4"}})},
       {},
       {45, 45},
       {{kExtendedRes, 2}, {"cpu", 1}, {"memory", 1}}},
  };
  RunStrategyCases(kMostAllocated, cases);
}

TEST(NodeResourcesFitTest, ScoreWithoutResourcesIsAnError) {
  // Unreachable through args (an empty list gets the defaults); upstream's "Resources not set".
  ResourceAllocationScorer scorer({}, false, LeastAllocatedScorer({}));
  auto node_info = MakeNodeInfo(CapacityNode("node1", {{"cpu", "4000"}, {"memory", "10000"}}));
  auto [score, status] = scorer.Score(*node_info, {});
  EXPECT_EQ(score, 0);
  EXPECT_EQ(status.code(), Code::kError);
  EXPECT_EQ(status.Message(), "resources not found");
}

TEST(NodeResourcesFitTest, RequestedToCapacityRatioScoringStrategy) {
  auto n = [](std::string name, std::string cpu, std::string mem) {
    return CapacityNode(std::move(name), {{"cpu", std::move(cpu)}, {"memory", std::move(mem)}});
  };
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested (default - least requested nodes have priority)",
       MakePod().Obj(),
       {n("node1", "4000", "10000"), n("node2", "4000", "10000")},
       {MakePod().Node("node1").Obj(), MakePod().Node("node1").Obj()},
       {100, 100}},
      {"nothing scheduled, resources requested, differently sized nodes (default - least requested nodes "
       "have "
       "priority)",
       PodCpu3kMem5k(),
       {n("node1", "4000", "10000"), n("node2", "6000", "10000")},
       {MakePod().Node("node1").Obj(), MakePod().Node("node1").Obj()},
       {38, 50}},
      {"no resources requested, pods scheduled with resources (default - least requested nodes have "
       "priority)",
       MakePod().Obj(),
       {n("node1", "4000", "10000"), n("node2", "6000", "10000")},
       {PodOn("node1", {{"cpu", "3000"}, {"memory", "5000"}}), PodOn("node2", {{"cpu", "3000"}, {"memory", "5000"}})},
       {38, 50}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto fit = MakeFit(StrategyArgs(kRequestedToCapacityRatio, c.resources, {{0, 10}, {100, 0}}));
    EXPECT_EQ(RunScore(*fit, c.pod, c.nodes, c.existing), c.want);
  }
}

TEST(NodeResourcesFitTest, BrokenLinearFunction) {
  struct Case {
    std::vector<BrokenLinearFunction::Point> points;
    std::vector<std::pair<int64_t, int64_t>> assertions;  // p → expected
  };
  std::vector<Case> cases = {
      {{{10, 1}, {90, 9}},
       {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}}},
      {{{0, 2}, {40, 10}, {100, 0}}, {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}}},
      {{{0, 2}, {40, 2}, {100, 2}}, {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case_" + std::to_string(i));
    BrokenLinearFunction f(cases[i].points);
    for (auto [p, want] : cases[i].assertions) EXPECT_EQ(f(p), want) << "p=" << p;
  }
}

NodePtr MakeNodeWithExtended(std::string name, int64_t milli_cpu, int64_t memory,
                             std::vector<std::pair<std::string, int64_t>> extended) {
  std::vector<std::pair<std::string, std::string>> capacity = {{"cpu", std::to_string(milli_cpu) + "m"},
                                                               {"memory", std::to_string(memory)}};
  for (auto& [k, v] : extended) capacity.emplace_back(k, std::to_string(v));
  return CapacityNode(std::move(name), std::move(capacity));
}

TEST(NodeResourcesFitTest, ResourceBinPackingSingleExtended) {
  const int64_t mem = int64_t{10000} * 1024 * 1024;
  auto nodes = [&] {
    return std::vector<NodePtr>{MakeNodeWithExtended("node1", 4000, mem, {{"intel.com/foo", 8}}),
                                MakeNodeWithExtended("node2", 4000, mem, {{"intel.com/foo", 4}})};
  };
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", MakePod().Obj(), nodes(), {}, {0, 0}},
      {"resources requested, pods scheduled with less resources",
       MakePod().Req({{"intel.com/foo", "2"}}).Obj(),
       nodes(),
       {MakePod().Obj()},
       {2, 5}},
      {"resources requested, pods scheduled with resources, on node with existing pod running",
       MakePod().Req({{"intel.com/foo", "2"}}).Obj(),
       nodes(),
       {MakePod().Req({{"intel.com/foo", "2"}}).Node("node2").Obj()},
       {2, 10}},
      {"resources requested, pods scheduled with more resources",
       MakePod().Req({{"intel.com/foo", "4"}}).Obj(),
       nodes(),
       {MakePod().Obj()},
       {5, 10}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto fit = MakeFit(StrategyArgs(kRequestedToCapacityRatio, {{"intel.com/foo", 1}}, {{0, 0}, {100, 1}}));
    EXPECT_EQ(RunScore(*fit, c.pod, c.nodes, c.existing, /*run_pre_score=*/false), c.want);
  }
}

TEST(NodeResourcesFitTest, ResourceBinPackingMultipleExtended) {
  const int64_t mem = int64_t{10000} * 1024 * 1024;
  auto nodes = [&] {
    return std::vector<NodePtr>{MakeNodeWithExtended("node1", 4000, mem, {{"intel.com/foo", 8}, {"intel.com/bar", 4}}),
                                MakeNodeWithExtended("node2", 4000, mem, {{"intel.com/foo", 4}, {"intel.com/bar", 8}})};
  };
  auto pod1 = [] { return MakePod().Req({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}}); };
  auto pod2 = [] { return MakePod().Req({{"intel.com/foo", "4"}, {"intel.com/bar", "2"}}); };
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", MakePod().Obj(), nodes(), {}, {0, 0}},
      {"resources requested, pods scheduled with less resources", pod1().Obj(), nodes(), {MakePod().Obj()}, {4, 3}},
      {"resources requested, pods scheduled with resources, on node with existing pod running",
       pod1().Obj(),
       nodes(),
       {pod2().Node("node2").Obj()},
       {4, 7}},
      {"resources requested, pods scheduled with more resources", pod2().Obj(), nodes(), {MakePod().Obj()}, {5, 5}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto fit = MakeFit(
        StrategyArgs(kRequestedToCapacityRatio, {{"intel.com/foo", 3}, {"intel.com/bar", 5}}, {{0, 0}, {100, 1}}));
    EXPECT_EQ(RunScore(*fit, c.pod, c.nodes, c.existing, /*run_pre_score=*/false), c.want);
  }
}

TEST(NodeResourcesFitTest, FitScore) {
  struct Case {
    std::string name;
    PodPtr pod;
    std::vector<NodePtr> nodes;
    std::vector<PodPtr> existing;
    json args;
    std::vector<int64_t> want;
    bool run_pre_score = true;
  };
  auto nodes = [](std::string cpu2) {
    return std::vector<NodePtr>{CapacityNode("node1", {{"cpu", "4000"}, {"memory", "10000"}}),
                                CapacityNode("node2", {{"cpu", std::move(cpu2)}, {"memory", "10000"}})};
  };
  auto existing = [] {
    return std::vector<PodPtr>{PodOn("node1", {{"cpu", "2000"}, {"memory", "4000"}}),
                               PodOn("node2", {{"cpu", "1000"}, {"memory", "2000"}})};
  };
  auto with_sidecar = [] {
    return std::vector<PodPtr>{MakePod()
                                   .Node("node1")
                                   .Req({{"cpu", "1000"}, {"memory", "2000"}})
                                   .InitReq({{"cpu", "1000"}, {"memory", "2000"}}, /*sidecar=*/true)
                                   .Obj(),
                               PodOn("node2", {{"cpu", "1000"}, {"memory", "2000"}})};
  };
  auto big = [] { return MakePod().Req({{"cpu", "3000"}, {"memory", "5000"}}).Obj(); };
  auto small = [] { return MakePod().Req({{"cpu", "1000"}, {"memory", "2000"}}).Obj(); };
  const json rtcr1 = StrategyArgs(kRequestedToCapacityRatio, kDefaultResources, {{0, 10}, {100, 0}});
  const json rtcr2 = StrategyArgs(kRequestedToCapacityRatio, kDefaultResources, {{0, 0}, {100, 10}});
  const json most = StrategyArgs(kMostAllocated, kDefaultResources);
  const json least = StrategyArgs(kLeastAllocated, kDefaultResources);
  std::vector<Case> cases = {
      {"test case for ScoringStrategy RequestedToCapacityRatio case1",
       big(),
       nodes("6000"),
       existing(),
       rtcr1,
       {10, 32}},
      {"test case for ScoringStrategy RequestedToCapacityRatio case2",
       big(),
       nodes("6000"),
       existing(),
       rtcr2,
       {95, 68}},
      {"test case for ScoringStrategy MostAllocated", small(), nodes("6000"), existing(), most, {67, 36}},
      {"test case for ScoringStrategy LeastAllocated", small(), nodes("6000"), existing(), least, {32, 63}},
      {"test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
       big(),
       nodes("6000"),
       existing(),
       rtcr1,
       {10, 32},
       false},
      {"test case for ScoringStrategy MostAllocated if PreScore is not called",
       small(),
       nodes("6000"),
       existing(),
       most,
       {67, 36},
       false},
      {"test case for ScoringStrategy LeastAllocated if PreScore is not called",
       small(),
       nodes("6000"),
       existing(),
       least,
       {32, 63},
       false},
      {"test case for ScoringStrategy MostAllocated with sidecar container",
       small(),
       nodes("4000"),
       with_sidecar(),
       most,
       {67, 45}},
      {"test case for ScoringStrategy LeastAllocated with sidecar container",
       small(),
       nodes("4000"),
       with_sidecar(),
       least,
       {32, 55}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto fit = MakeFit(c.args);
    EXPECT_EQ(RunScore(*fit, c.pod, c.nodes, c.existing, c.run_pre_score), c.want);
  }
}

TEST(NodeResourcesFitTest, DefaultArgsScoreLeastAllocated) {
  auto fit = MakeFit();
  EXPECT_EQ(fit->args().scoring_strategy.type, kLeastAllocated);
  EXPECT_EQ(fit->args().scoring_strategy.resources, DefaultResources());
  auto nodes = std::vector<NodePtr>{CapacityNode("node1", {{"cpu", "4000"}, {"memory", "10000"}}),
                                    CapacityNode("node2", {{"cpu", "6000"}, {"memory", "10000"}})};
  EXPECT_EQ(RunScore(*fit, MakePod().Req({{"cpu", "1000"}, {"memory", "2000"}}).Obj(), nodes,
                     {PodOn("node1", {{"cpu", "2000"}, {"memory", "4000"}}),
                      PodOn("node2", {{"cpu", "1000"}, {"memory", "2000"}})}),
            (std::vector<int64_t>{32, 63}));
  EXPECT_EQ(fit->GetScoreExtensions(), nullptr);
}

// --- Events and queueing hints -----------------------------------------------------------------

TEST(NodeResourcesFitTest, EventsToRegister) {
  auto fit = MakeFit();
  auto events = fit->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, framework::action::kDelete | framework::action::kUpdatePodScaleDown);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, framework::action::kAdd | framework::action::kUpdateNodeAllocatable);
  EXPECT_TRUE(events[1].hint);
}

TEST(NodeResourcesFitTest, IsSchedulableAfterPodEvent) {
  using framework::QueueingHint;
  struct Case {
    std::string name;
    PodPtr pod;
    PodPtr old_pod;
    PodPtr new_pod;
    QueueingHint want;
  };
  auto cpu = [](std::string q) { return std::vector<std::pair<std::string, std::string>>{{"cpu", std::move(q)}}; };
  auto mem = [](std::string q) { return std::vector<std::pair<std::string, std::string>>{{"memory", std::move(q)}}; };
  std::vector<Case> cases = {
      {"backoff-missing-objects", MakePod().Obj(), nullptr, nullptr, QueueingHint::kQueue},
      {"queue-on-other-pod-deleted", MakePod().Name("pod1").Req(cpu("1")).Obj(),
       MakePod().Name("pod2").Req(cpu("1")).Node("fake").Obj(), nullptr, QueueingHint::kQueue},
      {"queue-on-nominated-pod-deleted", MakePod().Name("pod1").Req(cpu("1")).Obj(),
       MakePod().Name("pod2").Req(cpu("1")).NominatedNodeName("fake").Obj(), nullptr, QueueingHint::kQueue},
      {"skip-queue-on-unscheduled-pod-deleted", MakePod().Obj(), MakePod().Obj(), nullptr, QueueingHint::kSkip},
      {"skip-queue-on-other-unscheduled-pod", MakePod().Name("pod1").UID("uid0").Req(cpu("1")).Obj(),
       MakePod().Name("pod2").UID("uid1").Req(cpu("2")).Obj(), MakePod().Name("pod2").UID("uid1").Req(cpu("1")).Obj(),
       QueueingHint::kSkip},
      {"skip-queue-on-other-pod-unrelated-resource-scaled-down", MakePod().Name("pod1").UID("pod1").Req(cpu("1")).Obj(),
       MakePod().Name("pod2").UID("pod2").Req(mem("2")).Node("fake").Obj(),
       MakePod().Name("pod2").UID("pod2").Req(mem("1")).Node("fake").Obj(), QueueingHint::kSkip},
      {"queue-on-other-pod-some-resource-scale-down", MakePod().Name("pod1").UID("pod1").Req(cpu("1")).Obj(),
       MakePod().Name("pod2").UID("pod2").Req(cpu("2")).Node("fake").Obj(),
       MakePod().Name("pod2").UID("pod2").Req(cpu("1")).Node("fake").Obj(), QueueingHint::kQueue},
      {"queue-on-target-pod-some-resource-scale-down", MakePod().Name("pod1").UID("pod1").Req(cpu("1")).Obj(),
       MakePod().Name("pod1").UID("pod1").Req(cpu("2")).Obj(), MakePod().Name("pod1").UID("pod1").Req(cpu("1")).Obj(),
       QueueingHint::kQueue},
  };
  auto fit = MakeFit();
  auto events = fit->EventsToRegister();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects ev{c.old_pod.get(), c.new_pod.get(), nullptr, nullptr};
    EXPECT_EQ(IsSchedulableAfterPodEvent(*c.pod, ev), c.want);
    EXPECT_EQ(events[0].hint(*c.pod, ev), c.want);
  }
}

TEST(NodeResourcesFitTest, IsSchedulableAfterNodeChange) {
  using framework::QueueingHint;
  struct Case {
    std::string name;
    PodPtr pod;
    NodePtr old_node;
    NodePtr new_node;
    QueueingHint want;
  };
  const std::string a(kExtendedResourceA), b(kExtendedResourceB);
  auto node = [](std::vector<std::pair<std::string, std::string>> capacity) {
    return MakeNode().Capacity(std::move(capacity)).Obj();
  };
  auto mem2_a1 = [] { return ResourcePod({{0, 2, 0, {{kExtendedResourceA, 1}}}}); };
  std::vector<Case> cases = {
      {"backoff-missing-new-object", MakePod().Obj(), nullptr, nullptr, QueueingHint::kQueue},
      {"skip-queue-on-node-add-without-sufficient-resources", ResourcePod({{0, 2}}), nullptr, node({{"memory", "1"}}),
       QueueingHint::kSkip},
      {"skip-queue-on-node-add-without-required-resource-type", ResourcePod({{0, 0, 0, {{kExtendedResourceA, 1}}}}),
       nullptr, node({{b, "1"}}), QueueingHint::kSkip},
      {"queue-on-node-add-with-sufficient-resources", mem2_a1(), nullptr, node({{"memory", "4"}, {a, "2"}}),
       QueueingHint::kQueue},
      {"skip-queue-on-node-unrelated-changes", mem2_a1(), node({{"memory", "2"}, {a, "2"}}),
       node({{"memory", "2"}, {a, "1"}, {b, "2"}}), QueueingHint::kSkip},
      {"queue-on-pod-requested-resources-increase", mem2_a1(), node({{"memory", "2"}, {a, "1"}}),
       node({{"memory", "2"}, {a, "2"}}), QueueingHint::kQueue},
      {"skip-queue-on-node-changes-from-suitable-to-unsuitable", mem2_a1(), node({{"memory", "4"}, {a, "2"}}),
       node({{"memory", "1"}, {a, "2"}}), QueueingHint::kSkip},
      {"queue-on-node-changes-from-unsuitable-to-suitable", mem2_a1(), node({{"memory", "1"}, {a, "2"}}),
       node({{"memory", "4"}, {a, "2"}}), QueueingHint::kQueue},
      {"queue-on-allowed-pod-number-increase", MakePod().Obj(), node({{"pods", "1"}}), node({{"pods", "2"}}),
       QueueingHint::kQueue},
      {"skip-queue-on-node-without-room-for-a-pod", MakePod().Obj(), nullptr, node({{"pods", "0"}}),
       QueueingHint::kSkip},
  };
  auto fit = MakeFit();
  auto events = fit->EventsToRegister();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects ev{nullptr, nullptr, c.old_node.get(), c.new_node.get()};
    EXPECT_EQ(IsSchedulableAfterNodeChange(*c.pod, ev), c.want);
    EXPECT_EQ(events[1].hint(*c.pod, ev), c.want);
  }
}

// --- Args --------------------------------------------------------------------------------------

TEST(NodeResourcesFitTest, ArgsDefaults) {
  struct Case {
    std::string name;
    json args;
    std::string want_type;
    std::vector<ResourceSpec> want_resources;
  };
  std::vector<Case> cases = {
      {"null args", nullptr, "LeastAllocated", {{"cpu", 1}, {"memory", 1}}},
      {"empty object", json::object(), "LeastAllocated", {{"cpu", 1}, {"memory", 1}}},
      {"typed object",
       json{{"apiVersion", "kubescheduler.config.k8s.io/v1"}, {"kind", "NodeResourcesFitArgs"}},
       "LeastAllocated",
       {{"cpu", 1}, {"memory", 1}}},
      {"empty resources get the defaults",
       json{{"scoringStrategy", {{"type", "MostAllocated"}}}},
       "MostAllocated",
       {{"cpu", 1}, {"memory", 1}}},
      {"zero or missing weight becomes 1",
       json{{"scoringStrategy",
             {{"type", "LeastAllocated"},
              {"resources",
               {{{"name", "cpu"}, {"weight", 0}},
                {{"name", "memory"}},
                {{"name", "example.com/gpu"}, {"weight", 3}}}}}}},
       "LeastAllocated",
       {{"cpu", 1}, {"memory", 1}, {"example.com/gpu", 3}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto parsed = ParseNodeResourcesFitArgs(ArgsOf(c.args).View());
    ASSERT_TRUE(parsed.has_value()) << parsed.error();
    EXPECT_EQ(parsed->scoring_strategy.type, c.want_type);
    EXPECT_EQ(parsed->scoring_strategy.resources, c.want_resources);
    EXPECT_FALSE(parsed->scoring_strategy.shape.has_value());
  }
}

TEST(NodeResourcesFitTest, ArgsShapeIsRead) {
  auto parsed = ParseNodeResourcesFitArgs(
      ArgsOf(StrategyArgs(kRequestedToCapacityRatio, kDefaultResources, {{0, 0}, {50, 7}})).View());
  ASSERT_TRUE(parsed.has_value()) << parsed.error();
  ASSERT_TRUE(parsed->scoring_strategy.shape.has_value());
  EXPECT_EQ(*parsed->scoring_strategy.shape, (std::vector<UtilizationShapePoint>{{0, 0}, {50, 7}}));
}

TEST(NodeResourcesFitTest, ArgsValidation) {
  struct Case {
    std::string name;
    json args;
    std::string want_error;  // empty: valid
  };
  auto shape_args = [](json points) {
    return json{
        {"scoringStrategy", {{"type", "RequestedToCapacityRatio"}, {"requestedToCapacityRatio", {{"shape", points}}}}}};
  };
  std::vector<Case> cases = {
      {"IgnoredResources: valid args", json{{"ignoredResources", {"example.com"}}}, ""},
      {"IgnoredResourceGroups: valid args", json{{"ignoredResourceGroups", {"example.com"}}}, ""},
      {"IgnoredResourceGroups: name cannot contain slash", json{{"ignoredResourceGroups", {"example.com/aa"}}},
       "ignoredResourceGroups[0]: Invalid value: \"example.com/aa\": resource group name can't contain '/'"},
      {"ScoringStrategy: type is unsupported", json{{"scoringStrategy", {{"type", "Invalid"}}}},
       "scoringStrategy.type: Unsupported value: \"Invalid\": supported values: \"LeastAllocated\", "
       "\"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"ScoringStrategy: type is required", json{{"scoringStrategy", {{"resources", ResourcesJson({{"cpu", 1}})}}}},
       "scoringStrategy.type: Unsupported value: \"\": supported values: \"LeastAllocated\", "
       "\"MostAllocated\", "
       "\"RequestedToCapacityRatio\""},
      {"ScoringStrategy: resource weights are valid",
       StrategyArgs(kLeastAllocated, {{"cpu", 1}, {"memory", 100}, {"example.com/gpu", 50}}), ""},
      {"resource with negative weight", StrategyArgs(kLeastAllocated, {{"memory", -1}, {"cpu", 1}}),
       "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range "
       "(0, 100]"},
      {"resource weight larger than MaxNodeScore", StrategyArgs(kMostAllocated, {{"memory", 1}, {"cpu", 101}}),
       "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range "
       "(0, 100]"},
      {"several errors are aggregated", StrategyArgs("Invalid", {{"cpu", -1}}),
       "[scoringStrategy.type: Unsupported value: \"Invalid\": supported values: \"LeastAllocated\", "
       "\"MostAllocated\", \"RequestedToCapacityRatio\", scoringStrategy.resources[0].weight: Invalid value: "
       "-1: "
       "resource weight of cpu not in valid range (0, 100]]"},
      {"RequestedToCapacityRatio: valid shape",
       shape_args(json::array({{{"utilization", 0}, {"score", 10}}, {{"utilization", 100}, {"score", 0}}})), ""},
      {"RequestedToCapacityRatio: shape is required", json{{"scoringStrategy", {{"type", "RequestedToCapacityRatio"}}}},
       "scoringStrategy.shape: Required value: at least one point must be specified"},
      {"RequestedToCapacityRatio: empty shape", shape_args(json::array()),
       "scoringStrategy.shape: Required value: at least one point must be specified"},
      {"RequestedToCapacityRatio: utilization not sorted",
       shape_args(json::array({{{"utilization", 10}, {"score", 1}},
                               {{"utilization", 10}, {"score", 2}},
                               {{"utilization", 5}, {"score", 3}}})),
       "scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"},
      {"RequestedToCapacityRatio: utilization and score out of range",
       shape_args(json::array({{{"utilization", -10}, {"score", 1}}, {{"utilization", 110}, {"score", 11}}})),
       "[scoringStrategy.shape[0].utilization: Invalid value: -10: not in valid range [0, 100], "
       "scoringStrategy.shape[1].utilization: Invalid value: 110: not in valid range [0, 100], "
       "scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]]"},
      {"unknown field", json{{"foo", 1}}, "unknown field \"foo\""},
      {"wrong type", json{{"scoringStrategy", {{"resources", {{{"name", "cpu"}, {"weight", "1"}}}}}}},
       "scoringStrategy.resources[0].weight: Invalid type: expected int64, got string"},
      {"every decoding error",
       json{{"foo", 1},
            {"ignoredResources", {1}},
            {"scoringStrategy",
             {{"type", 2}, {"resources", {{{"name", "cpu"}, {"wieght", 1}}}}, {"requestedToCapacityRatio", 3}}}},
       "[unknown field \"foo\", ignoredResources[0]: Invalid type: expected string, got integer, "
       "scoringStrategy.type: Invalid type: expected string, got integer, unknown field "
       "\"scoringStrategy.resources[0].wieght\", scoringStrategy.requestedToCapacityRatio: Invalid type: expected "
       "object, got integer]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto parsed = ParseNodeResourcesFitArgs(ArgsOf(c.args).View());
    if (c.want_error.empty()) {
      EXPECT_TRUE(parsed.has_value()) << parsed.error();
    } else {
      ASSERT_FALSE(parsed.has_value());
      EXPECT_EQ(parsed.error(), c.want_error);
    }
  }
}

TEST(NodeResourcesFitTest, ArgsValidationQualifiedNames) {
  struct Case {
    std::string name;
    json args;
    std::string want_substr;
  };
  std::vector<Case> cases = {
      {"IgnoredResources: too long value", json{{"ignoredResources", {std::string(64, 'a')}}},
       "ignoredResources[0]: Invalid value: \"" + std::string(64, 'a') + "\": name part must be no more than 63"},
      {"IgnoredResources: name has too many slash", json{{"ignoredResources", {"example.com/aaa/bbb"}}},
       "ignoredResources[0]: Invalid value: \"example.com/aaa/bbb\": a qualified name must consist of"},
      {"IgnoredResourceGroups: name is too long", json{{"ignoredResourceGroups", {std::string(64, 'a')}}},
       "ignoredResourceGroups[0]: Invalid value: \"" + std::string(64, 'a') + "\": name part must be no more than 63"},
      {"IgnoredResourceGroups: illegal args", json{{"ignoredResourceGroups", {"example.com/"}}},
       "ignoredResourceGroups[0]: Invalid value: \"example.com/\": resource group name can't contain '/'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto parsed = ParseNodeResourcesFitArgs(ArgsOf(c.args).View());
    ASSERT_FALSE(parsed.has_value());
    EXPECT_THAT(parsed.error(), HasSubstr(c.want_substr));
  }
}

TEST(NodeResourcesFitTest, FactoryBuildsThePlugin) {
  testing::FakeHandle handle;
  auto plugin = New(ArgsOf(StrategyArgs(kMostAllocated, kDefaultResources)).View(), handle);
  ASSERT_TRUE(plugin.has_value()) << plugin.error();
  EXPECT_EQ((*plugin)->Name(), "NodeResourcesFit");
  auto* fit = dynamic_cast<Fit*>(plugin->get());
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->args().scoring_strategy.type, kMostAllocated);

  auto bad = New(ArgsOf(json{{"scoringStrategy", {{"type", "Foo"}}}}).View(), handle);
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error(), HasSubstr("scoringStrategy.type: Unsupported value: \"Foo\""));
}

TEST(NodeResourcesFitTest, HotPathsDoNotAllocate) {
  for (std::string_view type : {kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio}) {
    SCOPED_TRACE(type);
    auto fit = MakeFit(StrategyArgs(type, kExtendedResourceSet, {{0, 10}, {100, 0}}));
    auto pod = framework::PodInfo::Create(
        MakePod().Req({{"cpu", "1"}, {"memory", "1Gi"}, {std::string(kExtendedRes), "1"}}).Obj());
    auto node_info = MakeNodeInfo(
        CapacityNode("node1", {{"cpu", "8"}, {"memory", "16Gi"}, {std::string(kExtendedRes), "4"}}),
        {PodOn("node1", {{"cpu", "2"}, {"memory", "2Gi"}}), MakePod().Node("node1").Container("image").Obj()});
    CycleState state;
    fit->PreFilter(state, *pod, {});
    ASSERT_TRUE(fit->PreScore(state, *pod, {}).IsSuccess());

    g_allocations = 0;
    g_count_allocations = true;
    Status filter_status = fit->Filter(state, *pod, *node_info);
    auto [score, score_status] = fit->Score(state, *pod, *node_info);
    g_count_allocations = false;

    EXPECT_TRUE(filter_status.IsSuccess());
    EXPECT_TRUE(score_status.IsSuccess());
    EXPECT_GT(score, 0);
    EXPECT_EQ(g_allocations.load(), 0);
  }

  ResourceAllocationScorer balanced(DefaultResources(), /*use_requested=*/true, BalancedResourceScore);
  auto pod = framework::PodInfo::Create(MakePod().Req({{"cpu", "1"}, {"memory", "1Gi"}}).Obj());
  auto node_info = MakeNodeInfo(CapacityNode("node1", {{"cpu", "8"}, {"memory", "16Gi"}}));
  const std::vector<int64_t> requests = balanced.PodRequests(*pod);
  g_allocations = 0;
  g_count_allocations = true;
  auto [score, status] = balanced.Score(*node_info, requests);
  g_count_allocations = false;
  EXPECT_EQ(score, 96);  // cpu 1/8, memory 1/16: std 0.03125
  EXPECT_EQ(g_allocations.load(), 0);
}

TEST(NodeResourcesFitTest, CycleStateCloneKeepsRequest) {
  auto fit = MakeFit();
  auto pod = framework::PodInfo::Create(ResourcePod({{2, 1}}));
  CycleState state;
  fit->PreFilter(state, *pod, {});
  auto clone = state.Clone();
  auto node_info = MakeNodeInfo(FitTestNode(), {ResourcePod({{9, 5}})});
  ExpectStatus(fit->Filter(*clone, *pod, *node_info), Unschedulable({"Insufficient cpu"}));
}

}  // namespace
}  // namespace kubesched::plugins::node_resources_fit
