// Whole-run benchmarks of the batch placement optimizer (optimizer::PlaceBatch) with each MIP back
// end on generated clusters of 100, 500 and 2,000 nodes and a constrained batch of about two pods
// per node: self anti-affinity, affinity to running pods (per host and per zone), a zone spread,
// anti-affinity between groups, and batch jobs of mixed sizes, loading the cluster to ~85% CPU.
//   cmake --build build/release --target kubesched_optimizer_bench
//   build/release/bench/kubesched_optimizer_bench --benchmark_format=console
// Each benchmark runs one placement (Iterations(1)) and reports the placement's figures as
// counters, next to the spreading greedy's (what one-by-one scheduling does). `violations`
// counts broken constraints found by an independent check of the final placement (expected 0).
// BM_SmallBatch: a replay's small batches, by enumeration against the solver.

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "optimizer/placement.h"
#include "testing/builders.h"

namespace kubesched {
namespace {

using testing::MakeNode;
using testing::MakePod;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kInstanceType[] = "node.kubernetes.io/instance-type";

struct NodeShape {
  const char* type;
  const char* cpu;
  const char* memory;
};
constexpr NodeShape kShapes[] = {{"small", "4", "16Gi"}, {"medium", "8", "32Gi"}, {"large", "16", "64Gi"}};

struct Cluster {
  std::vector<std::unique_ptr<framework::NodeInfo>> owned;
  std::vector<const framework::NodeInfo*> list;
  int db_pods = 0;
};

// Mixed node shapes in three zones; 30% of the nodes run one or two pods of the "db" app.
Cluster MakeCluster(int num_nodes, std::mt19937_64& rng) {
  Cluster c;
  std::uniform_int_distribution<int> shape(0, 2);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < num_nodes; ++i) {
    const NodeShape& s = kShapes[shape(rng)];
    const std::string name = "node-" + std::to_string(i);
    auto node = MakeNode()
                    .Name(name)
                    .Label(kZone, "zone-" + std::string(1, static_cast<char>('a' + i % 3)))
                    .Label(kInstanceType, s.type)
                    .Capacity({{"cpu", s.cpu}, {"memory", s.memory}, {"pods", "110"}})
                    .Obj();
    std::vector<std::shared_ptr<api::Pod>> running;
    if (unit(rng) < 0.3) {
      const int n = 1 + static_cast<int>(rng() % 2);
      for (int k = 0; k < n; ++k) {
        const std::string pod = "db-" + std::to_string(c.db_pods++);
        running.push_back(MakePod()
                              .Name(pod)
                              .UID(pod)
                              .Label("app", "db")
                              .OwnerReference("StatefulSet", "db")
                              .Node(name)
                              .Req({{"cpu", "1"}, {"memory", "4Gi"}})
                              .Obj());
      }
    }
    c.owned.push_back(testing::MakeNodeInfo(std::move(node), running));
    c.list.push_back(c.owned.back().get());
  }
  return c;
}

// One workload of the batch: `fraction` replicas per node of the cluster.
struct Workload {
  const char* app;
  double fraction;
  const char* cpu;
  const char* memory;
  std::function<void(testing::PodBuilder&)> constrain;
};

std::vector<framework::PodInfoPtr> MakeBatch(int num_nodes) {
  api::LabelSelector cache_selector;
  cache_selector.match_labels.Set("app", "cache");
  const std::vector<Workload> workloads = {
      // One web replica per host.
      {"web", 0.25, "1", "2Gi", [](auto& b) { b.PodAntiAffinityIn("app", {"web"}, kHostname); }},
      // Next to the running database: in its zone, or on its host.
      {"api", 0.20, "3", "6Gi", [](auto& b) { b.PodAffinityIn("app", {"db"}, kZone); }},
      {"db-proxy", 0.10, "1", "2Gi", [](auto& b) { b.PodAffinityIn("app", {"db"}, kHostname); }},
      // Evenly over the zones.
      {"cache", 0.20, "2", "12Gi",
       [&](auto& b) {
         b.SpreadConstraint(1, kZone, api::UnsatisfiableConstraintAction::kDoNotSchedule, cache_selector);
       }},
      // Never on a host that runs web.
      {"worker", 0.15, "3", "6Gi", [](auto& b) { b.PodAntiAffinityIn("app", {"web"}, kHostname); }},
      // Batch jobs of mixed sizes; the largest only on large nodes.
      {"batch-s", 0.35, "1500m", "3Gi", {}},
      {"batch-m", 0.30, "4", "10Gi", {}},
      {"batch-l", 0.25, "6", "16Gi", {}},
      {"batch-xl", 0.20, "12", "32Gi",
       [](auto& b) {
         b.NodeSelector({{kInstanceType, "large"}});
       }},
  };
  std::vector<framework::PodInfoPtr> pods;
  for (const auto& w : workloads) {
    const int n = std::max(1, static_cast<int>(std::lround(w.fraction * num_nodes)));
    for (int i = 0; i < n; ++i) {
      const std::string name = std::string(w.app) + "-" + std::to_string(i);
      auto b = MakePod()
                   .Name(name)
                   .UID(name)
                   .Label("app", w.app)
                   .OwnerReference("ReplicaSet", w.app)
                   .Req({{"cpu", w.cpu}, {"memory", w.memory}});
      if (w.constrain) w.constrain(b);
      pods.push_back(b.Info());
    }
  }
  return pods;
}

// The profile's non-coupling filters, cheaply: the pod's requests fit the node's free allocatable
// (NodeResourcesFit) and its node selector matches (NodeAffinity).
std::function<std::string(const framework::NodeInfo&)> StaticFit(const framework::PodInfo& pod) {
  return [&pod](const framework::NodeInfo& node) -> std::string {
    for (const auto& [key, value] : pod.pod().spec.node_selector) {
      const std::string* v = node.node()->metadata.labels.Find(key);
      if (v == nullptr || *v != value) return "node(s) didn't match Pod's node affinity/selector";
    }
    const framework::Resource& alloc = node.allocatable();
    const framework::Resource& used = node.requested();
    if (pod.requests.milli_cpu > alloc.milli_cpu - used.milli_cpu) return "Insufficient cpu";
    if (pod.requests.memory > alloc.memory - used.memory) return "Insufficient memory";
    if (static_cast<int64_t>(node.pods().size()) + 1 > alloc.allowed_pod_number) return "Too many pods";
    return "";
  };
}

const std::string& App(const api::Pod& pod) {
  static const std::string kNone;
  const std::string* app = pod.metadata.labels.Find("app");
  return app ? *app : kNone;
}

// Constraints the final placement breaks, checked independently of the optimizer's model.
int CountViolations(const Cluster& c, const optimizer::PlacementResult& r, size_t batch_size) {
  int violations = 0;
  if (r.plan.size() != batch_size) ++violations;
  std::map<std::string, const framework::NodeInfo*> by_name;
  for (const auto* n : c.list) by_name[n->name()] = n;
  struct Load {
    int64_t cpu = 0, memory = 0;
    std::map<std::string, int> apps;
  };
  std::map<std::string, Load> load;
  std::map<std::string, int> db_zones, cache_per_zone;
  for (const auto* n : c.list) {
    for (const auto& p : n->pods()) {
      if (App(p->pod()) == "db") ++db_zones[*n->node()->metadata.labels.Find(kZone)];
    }
  }
  int placed = 0;
  for (const auto& p : r.plan) {
    if (p.node.empty()) continue;
    ++placed;
    auto it = by_name.find(p.node);
    if (it == by_name.end()) {
      ++violations;
      continue;
    }
    Load& l = load[p.node];
    l.cpu += p.pod->requests.milli_cpu;
    l.memory += p.pod->requests.memory;
    ++l.apps[App(p.pod->pod())];
    for (const auto& [key, value] : p.pod->pod().spec.node_selector) {
      const std::string* v = it->second->node()->metadata.labels.Find(key);
      if (v == nullptr || *v != value) ++violations;
    }
  }
  if (placed != r.placed) ++violations;
  for (const auto& [name, l] : load) {
    const framework::NodeInfo& n = *by_name[name];
    if (l.cpu > n.allocatable().milli_cpu - n.requested().milli_cpu) ++violations;
    if (l.memory > n.allocatable().memory - n.requested().memory) ++violations;
    auto count = [&](const char* app) {
      auto it = l.apps.find(app);
      return it == l.apps.end() ? 0 : it->second;
    };
    if (count("web") > 1) ++violations;
    if (count("worker") > 0 && count("web") > 0) ++violations;
    bool db_here = false;
    for (const auto& p : n.pods()) db_here = db_here || App(p->pod()) == "db";
    if (count("db-proxy") > 0 && !db_here) ++violations;
    const std::string& zone = *n.node()->metadata.labels.Find(kZone);
    if (count("api") > 0 && db_zones[zone] == 0) ++violations;
    cache_per_zone[zone] += count("cache");
  }
  int lo = 1 << 30, hi = 0;
  for (const char* zone : {"zone-a", "zone-b", "zone-c"}) {
    lo = std::min(lo, cache_per_zone[zone]);
    hi = std::max(hi, cache_per_zone[zone]);
  }
  if (hi - lo > 1) ++violations;
  return violations;
}

void BM_PlaceBatch(benchmark::State& state, const std::string& solver, int num_nodes) {
  std::mt19937_64 rng(20240601);
  Cluster cluster = MakeCluster(num_nodes, rng);
  const std::vector<framework::PodInfoPtr> pods = MakeBatch(num_nodes);

  optimizer::PlacementInput input;
  input.pods = pods;
  input.nodes = cluster.list;
  input.static_fit = StaticFit;
  optimizer::PlacementOptions options;
  options.solver = solver;
  options.timeout_seconds = num_nodes >= 2000 ? 30 : 10;

  optimizer::PlacementResult r;
  for (auto _ : state) {
    r = optimizer::PlaceBatch(input, options);
    benchmark::DoNotOptimize(r.placed);
  }

  int64_t allocatable_cpu = 0, requested_cpu = 0;
  for (const auto* n : cluster.list) {
    allocatable_cpu += n->allocatable().milli_cpu;
    requested_cpu += n->requested().milli_cpu;
  }
  for (const auto& p : pods) requested_cpu += p->requests.milli_cpu;
  state.counters["pods"] = static_cast<double>(pods.size());
  // CPU requested by running pods and the whole batch, over the cluster's allocatable CPU.
  state.counters["cpu_load"] = static_cast<double>(requested_cpu) / static_cast<double>(allocatable_cpu);
  state.counters["placed"] = r.placed;
  state.counters["greedy_placed"] = r.greedy_placed;
  state.counters["new_nodes"] = r.new_nodes_used;
  state.counters["greedy_new_nodes"] = r.greedy_new_nodes;
  state.counters["optimal"] = r.optimal ? 1 : 0;
  state.counters["gap"] = r.gap;
  state.counters["solver_s"] = r.solver_seconds;
  state.counters["total_s"] = r.seconds;
  state.counters["groups"] = r.groups;
  state.counters["node_classes"] = r.node_classes;
  state.counters["violations"] = CountViolations(cluster, r, pods.size());
  state.SetLabel(r.stopped_by);
}

// A GPU cluster like openb's: cpu-only and GPU nodes of a few sizes, half of them running a pod
// that takes part of their cpu and GPUs (so that free room, stranding and new nodes differ).
Cluster MakeGpuCluster(int num_nodes, std::mt19937_64& rng) {
  Cluster c;
  for (int i = 0; i < num_nodes; ++i) {
    const int cpu = std::vector<int>{32, 64, 96}[rng() % 3];
    const int gpus = std::vector<int>{0, 0, 2, 8}[rng() % 4];
    const std::string name = "node-" + std::to_string(i);
    std::vector<std::pair<std::string, std::string>> capacity = {
        {"cpu", std::to_string(cpu)}, {"memory", "256Gi"}, {"pods", "110"}};
    if (gpus > 0) capacity.emplace_back("example.com/gpu", std::to_string(gpus));
    std::vector<std::shared_ptr<api::Pod>> running;
    if (rng() % 2 == 0) {
      std::vector<std::pair<std::string, std::string>> req = {{"cpu", std::to_string(4 * (1 + rng() % 6))}};
      if (gpus > 0) req.emplace_back("example.com/gpu", std::to_string(1 + rng() % gpus));
      running.push_back(MakePod().Name("run-" + name).UID("run-" + name).Node(name).Req(req).Obj());
    }
    c.owned.push_back(testing::MakeNodeInfo(MakeNode().Name(name).Capacity(capacity).Obj(), running));
    c.list.push_back(c.owned.back().get());
  }
  return c;
}

// A replay's arrivals: a batch of one to four pods, GPU and cpu-only (the heuristics' bound cannot
// prove their stranding), on a 2,000-node GPU cluster, proved optimal by enumeration
// (optimizer/enumerate.h) or, with it off, by the solver. An iteration places the whole batch
// (grouping, heuristics, bound, proof).
void BM_SmallBatch(benchmark::State& state, int num_pods, bool enumerate) {
  std::mt19937_64 rng(20240601);
  Cluster cluster = MakeGpuCluster(2000, rng);
  const char* shapes[][3] = {{"8", "32Gi", "1"}, {"16", "64Gi", ""}, {"12", "48Gi", "2"}, {"24", "16Gi", ""}};
  std::vector<framework::PodInfoPtr> pods;
  for (int i = 0; i < num_pods; ++i) {
    const std::string name = "job-" + std::to_string(i);
    std::vector<std::pair<std::string, std::string>> req = {{"cpu", shapes[i][0]}, {"memory", shapes[i][1]}};
    if (*shapes[i][2] != 0) req.emplace_back("example.com/gpu", shapes[i][2]);
    pods.push_back(MakePod().Name(name).UID(name).Req(req).Info());
  }
  optimizer::PlacementInput input;
  input.pods = pods;
  input.nodes = cluster.list;
  input.static_fit = StaticFit;
  optimizer::PlacementOptions options;
  options.enumerate = enumerate;
  optimizer::PlacementResult r;
  for (auto _ : state) {
    r = optimizer::PlaceBatch(input, options);
    benchmark::DoNotOptimize(r.placed);
  }
  state.counters["placed"] = r.placed;
  state.counters["stranded"] = r.stranded;
  state.counters["new_nodes"] = r.new_nodes_used;
  state.counters["optimal"] = r.optimal ? 1 : 0;
  state.counters["node_classes"] = r.node_classes;
  state.SetLabel(r.stopped_by);
}

void RegisterAll() {
  for (int pods : {1, 2, 3, 4}) {
    for (bool enumerate : {true, false}) {
      benchmark::RegisterBenchmark(
          (std::string("BM_SmallBatch/") + (enumerate ? "enumerated" : "solver") + "/" + std::to_string(pods)).c_str(),
          [pods, enumerate](benchmark::State& s) { BM_SmallBatch(s, pods, enumerate); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const char* solver : {"cbc", "glpk"}) {
    for (int nodes : {100, 500, 2000}) {
      benchmark::RegisterBenchmark((std::string("BM_PlaceBatch/") + solver + "/" + std::to_string(nodes)).c_str(),
                                   [solver, nodes](benchmark::State& s) { BM_PlaceBatch(s, solver, nodes); })
          ->Iterations(1)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace kubesched

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  kubesched::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
