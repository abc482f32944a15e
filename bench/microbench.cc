// Micro-benchmarks of scheduling hot paths: every default Filter and Score plugin over a 500-node
// snapshot, one plugin on one node, the cache-to-snapshot update, the scheduling queue, quantity
// parsing and label selector matching.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "api/labels.h"
#include "api/quantity.h"
#include "cache/cache.h"
#include "cache/snapshot.h"
#include "framework/args_view.h"
#include "framework/cycle_state.h"
#include "framework/interface.h"
#include "framework/pod_info.h"
#include "framework/registry.h"
#include "plugins/node_resources_fit/args.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/registry.h"
#include "queue/scheduling_queue.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "util/clock.h"

namespace kubesched {
namespace {

using testing::MakeNode;
using testing::MakePod;

std::shared_ptr<api::Node> PerfNode(int i) {
  return MakeNode()
      .Name("node-" + std::to_string(i))
      .Capacity({{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}})
      .Obj();
}

// NodeResourcesFit with default args: PreFilter + Filter + PreScore + Score of one pod on one
// node already running 10 pods (the per-node cost that dominates a 5000-node cycle).
void BM_NodeResourcesFitFilterScore(benchmark::State& state) {
  auto args = plugins::node_resources_fit::ParseNodeResourcesFitArgs(framework::ArgsView());
  plugins::node_resources_fit::Fit fit(*args);
  auto node = PerfNode(0);
  std::vector<std::shared_ptr<api::Pod>> running;
  for (int i = 0; i < 10; ++i) {
    running.push_back(MakePod()
                          .Name("r" + std::to_string(i))
                          .UID("r" + std::to_string(i))
                          .Node("node-0")
                          .Req({{"cpu", "100m"}, {"memory", "500Mi"}})
                          .Obj());
  }
  auto node_info = testing::MakeNodeInfo(node, running);
  auto pod = MakePod().Name("p").UID("p").Req({{"cpu", "100m"}, {"memory", "500Mi"}}).Info();
  const framework::NodeInfo* list[] = {node_info.get()};
  for (auto _ : state) {
    framework::CycleState cycle;
    auto pre = fit.PreFilter(cycle, *pod, list);
    benchmark::DoNotOptimize(pre);
    auto status = fit.Filter(cycle, *pod, *node_info);
    benchmark::DoNotOptimize(status);
    auto pre_score = fit.PreScore(cycle, *pod, list);
    benchmark::DoNotOptimize(pre_score);
    auto score = fit.Score(cycle, *pod, *node_info);
    benchmark::DoNotOptimize(score);
  }
}
BENCHMARK(BM_NodeResourcesFitFilterScore);

// Filter alone on one node, state prepared once (the innermost per-node call).
void BM_NodeResourcesFitFilterOnly(benchmark::State& state) {
  auto args = plugins::node_resources_fit::ParseNodeResourcesFitArgs(framework::ArgsView());
  plugins::node_resources_fit::Fit fit(*args);
  auto node_info = testing::MakeNodeInfo(PerfNode(0));
  auto pod = MakePod().Name("p").UID("p").Req({{"cpu", "100m"}, {"memory", "500Mi"}}).Info();
  const framework::NodeInfo* list[] = {node_info.get()};
  framework::CycleState cycle;
  (void)fit.PreFilter(cycle, *pod, list);
  for (auto _ : state) benchmark::DoNotOptimize(fit.Filter(cycle, *pod, *node_info));
}
BENCHMARK(BM_NodeResourcesFitFilterOnly);

// --- Every default plugin over a snapshot ------------------------------------------------------
// 500 nodes in 3 zones with a hostname label, 4 running pods each (of which every 4th carries
// required anti-affinity, every 5th preferred affinity, every 3rd an image). Each benchmark runs
// one plugin's PreFilter + Filter (or PreScore + Score + NormalizeScore) over all nodes for a pod
// that exercises it, as a scheduling cycle does, and reports nodes per second.

constexpr int kSnapshotNodes = 500;

struct SnapshotFixture {
  std::unique_ptr<testing::FakeHandle> handle;
  framework::Registry registry;

  SnapshotFixture() {
    plugins::RegisterInTreePlugins(registry);
    std::vector<std::shared_ptr<api::Node>> nodes;
    std::vector<std::shared_ptr<api::Pod>> pods;
    for (int i = 0; i < kSnapshotNodes; ++i) {
      auto b = MakeNode()
                   .Name("node-" + std::to_string(i))
                   .Label(std::string(api::kLabelTopologyZone), "zone-" + std::to_string(i % 3))
                   .Capacity({{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}});
      if (i % 3 == 0) b.Image("registry.k8s.io/pause:3.10.1", 700 * 1024);
      if (i % 10 == 0) b.Taint("dedicated", "batch", api::TaintEffect::kPreferNoSchedule);
      nodes.push_back(b.Obj());
      for (int k = 0; k < 4; ++k) {
        const int n = i * 4 + k;
        auto pod = MakePod()
                       .Name("run-" + std::to_string(n))
                       .UID("run-" + std::to_string(n))
                       .Node("node-" + std::to_string(i))
                       .Label("app", "app-" + std::to_string(n % 7))
                       .Req({{"cpu", "100m"}, {"memory", "500Mi"}});
        if (n % 4 == 0) pod.PodAntiAffinityIn("app", {"app-" + std::to_string(n % 7)}, "kubernetes.io/hostname");
        if (n % 5 == 0) pod.PreferredPodAffinityIn(1, "app", {"app-1"}, std::string(api::kLabelTopologyZone));
        pods.push_back(pod.Obj());
      }
    }
    handle = std::make_unique<testing::FakeHandle>(nodes, pods);
  }

  std::unique_ptr<framework::Plugin> Make(std::string_view name) {
    auto made = (*registry.Find(name))(framework::ArgsView(), *handle);
    return std::move(*made);
  }
};

SnapshotFixture& Fixture() {
  static SnapshotFixture fixture;
  return fixture;
}

// The incoming pod each plugin is measured with.
framework::PodInfoPtr PodFor(std::string_view plugin) {
  auto b = MakePod().Name("incoming").UID("incoming").Label("app", "app-3").Req({{"cpu", "100m"}, {"memory", "500Mi"}});
  b.Container("registry.k8s.io/pause:3.10.1");
  if (plugin == "NodeAffinity") b.NodeAffinityIn(std::string(api::kLabelTopologyZone), {"zone-0", "zone-1"});
  if (plugin == "NodePorts") b.HostPort(8080);
  if (plugin == "TaintToleration") {
    b.Toleration(
        {"dedicated", api::TolerationOperator::kEqual, "batch", api::TaintEffect::kPreferNoSchedule, std::nullopt});
  }
  if (plugin == "InterPodAffinity") {
    b.PodAntiAffinityIn("app", {"app-3"}, "kubernetes.io/hostname");
    b.PreferredPodAffinityIn(1, "app", {"app-1"}, std::string(api::kLabelTopologyZone));
  }
  if (plugin == "PodTopologySpread") {
    api::LabelSelector sel;
    sel.match_labels.Set("app", "app-3");
    b.SpreadConstraint(1, std::string(api::kLabelTopologyZone), api::UnsatisfiableConstraintAction::kDoNotSchedule,
                       sel);
    b.SpreadConstraint(1, "kubernetes.io/hostname", api::UnsatisfiableConstraintAction::kScheduleAnyway, sel);
  }
  return b.Info();
}

void BM_PluginFilter(benchmark::State& state, std::string_view name) {
  SnapshotFixture& f = Fixture();
  auto plugin = f.Make(name);
  auto* filter = dynamic_cast<framework::FilterPlugin*>(plugin.get());
  auto* pre_filter = dynamic_cast<framework::PreFilterPlugin*>(plugin.get());
  auto pod = PodFor(name);
  auto nodes = f.handle->snapshot().List();
  for (auto _ : state) {
    framework::CycleState cycle;
    if (pre_filter) benchmark::DoNotOptimize(pre_filter->PreFilter(cycle, *pod, nodes));
    for (const framework::NodeInfo* n : nodes) benchmark::DoNotOptimize(filter->Filter(cycle, *pod, *n));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(nodes.size()));
}

void BM_PluginScore(benchmark::State& state, std::string_view name) {
  SnapshotFixture& f = Fixture();
  auto plugin = f.Make(name);
  auto* score = dynamic_cast<framework::ScorePlugin*>(plugin.get());
  auto* pre_score = dynamic_cast<framework::PreScorePlugin*>(plugin.get());
  auto* pre_filter = dynamic_cast<framework::PreFilterPlugin*>(plugin.get());
  auto pod = PodFor(name);
  auto nodes = f.handle->snapshot().List();
  framework::NodeScoreList scores(nodes.size());
  for (auto _ : state) {
    framework::CycleState cycle;
    // Some plugins' PreScore reuses PreFilter's state, as in a real cycle.
    if (pre_filter) benchmark::DoNotOptimize(pre_filter->PreFilter(cycle, *pod, nodes));
    if (pre_score && pre_score->PreScore(cycle, *pod, nodes).IsSkip()) continue;
    for (size_t i = 0; i < nodes.size(); ++i) {
      auto [s, status] = score->Score(cycle, *pod, *nodes[i]);
      scores[i] = {nodes[i]->name(), s};
    }
    if (auto* ext = score->GetScoreExtensions()) benchmark::DoNotOptimize(ext->NormalizeScore(cycle, *pod, scores));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(nodes.size()));
}

#define KUBESCHED_PLUGIN_FILTER_BENCHMARK(name) \
  BENCHMARK_CAPTURE(BM_PluginFilter, name, #name)->Unit(benchmark::kMicrosecond)
#define KUBESCHED_PLUGIN_SCORE_BENCHMARK(name) \
  BENCHMARK_CAPTURE(BM_PluginScore, name, #name)->Unit(benchmark::kMicrosecond)

KUBESCHED_PLUGIN_FILTER_BENCHMARK(NodeUnschedulable);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(NodeName);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(TaintToleration);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(NodeAffinity);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(NodePorts);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(NodeResourcesFit);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(PodTopologySpread);
KUBESCHED_PLUGIN_FILTER_BENCHMARK(InterPodAffinity);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(TaintToleration);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(NodeAffinity);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(NodeResourcesFit);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(PodTopologySpread);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(InterPodAffinity);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(NodeResourcesBalancedAllocation);
KUBESCHED_PLUGIN_SCORE_BENCHMARK(ImageLocality);

// Cache::UpdateSnapshot over 5000 nodes (one pod each) after one pod was added or removed: the
// incremental update each scheduling cycle starts with.
void BM_UpdateSnapshot5000NodesOnePodChange(benchmark::State& state) {
  constexpr int kNodes = 5000;
  cache::Cache cache;
  for (int i = 0; i < kNodes; ++i) cache.AddNode(PerfNode(i));
  for (int i = 0; i < kNodes; ++i) {
    auto pod = MakePod()
                   .Name("init-" + std::to_string(i))
                   .UID("init-" + std::to_string(i))
                   .Node("node-" + std::to_string(i))
                   .Req({{"cpu", "100m"}, {"memory", "500Mi"}})
                   .Info();
    (void)cache.AddPod(pod);
  }
  cache::Snapshot snapshot;
  cache.UpdateSnapshot(snapshot);
  auto extra = MakePod().Name("extra").UID("extra").Node("node-2500").Req({{"cpu", "100m"}}).Info();
  bool present = false;
  for (auto _ : state) {
    state.PauseTiming();
    if (present) {
      (void)cache.RemovePod(extra->pod());
    } else {
      (void)cache.AddPod(extra);
    }
    present = !present;
    state.ResumeTiming();
    cache.UpdateSnapshot(snapshot);
    benchmark::DoNotOptimize(snapshot.List().size());
  }
}
BENCHMARK(BM_UpdateSnapshot5000NodesOnePodChange)->Unit(benchmark::kMicrosecond);

// Scheduling queue: Add 10000 pending pods, then Pop (and Done) them all.
void BM_QueueAddPop10000(benchmark::State& state) {
  constexpr int kPods = 10000;
  std::vector<framework::PodInfoPtr> pods;
  pods.reserve(kPods);
  for (int i = 0; i < kPods; ++i) {
    pods.push_back(MakePod()
                       .Name("p-" + std::to_string(i))
                       .UID("p-" + std::to_string(i))
                       .Priority(i % 3)
                       .Req({{"cpu", "100m"}})
                       .Info());
  }
  util::VirtualClock clock(0);
  auto less = [](const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) {
    int32_t pa = a.pod_info->pod().Priority(), pb = b.pod_info->pod().Priority();
    return pa != pb ? pa > pb : a.timestamp_ns < b.timestamp_ns;
  };
  for (auto _ : state) {
    std::map<std::string, queue::ProfileQueueingConfig, std::less<>> profiles;
    profiles[std::string(api::kDefaultSchedulerName)] = queue::ProfileQueueingConfig{};
    queue::SchedulingQueue q(less, clock, std::move(profiles));
    for (const auto& p : pods) q.Add(p);
    while (auto qpi = q.Pop()) q.Done(qpi->pod_info->pod().metadata.uid);
  }
  state.SetItemsProcessed(state.iterations() * kPods);
}
BENCHMARK(BM_QueueAddPop10000)->Unit(benchmark::kMillisecond);

void BM_QuantityParse(benchmark::State& state) {
  const std::vector<std::string> inputs = {"100m", "500Mi", "4", "32Gi", "1.5", "12e6", "0.18", "110"};
  size_t i = 0;
  for (auto _ : state) {
    auto q = api::Quantity::Parse(inputs[i++ % inputs.size()]);
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_QuantityParse);

// A selector with matchLabels and an In expression against a pod's labels (a hit and a miss).
void BM_LabelSelectorMatches(benchmark::State& state) {
  api::LabelSelector sel;
  sel.match_labels.Set("app", "web");
  sel.match_labels.Set("tier", "frontend");
  sel.match_expressions.push_back({"zone", api::SelectorOperator::kIn, {"a", "b", "c"}});
  api::Labels hit = {{"app", "web"}, {"pod-template-hash", "abc123"}, {"tier", "frontend"}, {"zone", "b"}};
  api::Labels miss = {{"app", "web"}, {"pod-template-hash", "abc123"}, {"tier", "frontend"}, {"zone", "d"}};
  bool flip = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel.Matches(flip ? hit : miss));
    flip = !flip;
  }
}
BENCHMARK(BM_LabelSelectorMatches);

}  // namespace
}  // namespace kubesched

BENCHMARK_MAIN();
