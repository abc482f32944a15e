// The store's controllers at scale: the cost of one pod's life-cycle events (deletion, the
// ReplicaSet's replacement, its binding, its start by the node lifecycle, and the status writes
// they cause) in clusters of 10,000 to 100,000 pods. With the informers' indexes and per-owner
// tallies it must stay flat as the cluster grows; a controller that lists or re-parses per event
// makes it grow with the cluster.
//
// Each cluster: one node per 10 pods and one ReplicaSet per 100 pods, every pod bound and running.
// Building it is reported once per size on stderr. BM_PodCycle leaves the pod and node kind hooks
// out (ResourcesWithoutDecoding): the controllers' and the store's own share. BM_PodCycleWithHooks
// serves the built-in resources as they are, validating and viewing every pod and node write
// through the codec's decoders, as `kubesched simulate` does. Counters: `writes` per cycle (every
// store change, the controllers' status writes included) and `us_per_write` (CPU).
//
//   cmake --build <dir> --target kubesched_controllers_bench && <dir>/bench/kubesched_controllers_bench

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "store/controllers/controller.h"
#include "store/resources.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::store::controllers {
namespace {

constexpr int64_t kStartNs = 1714564800LL * 1'000'000'000;
constexpr int kPodsPerNode = 10;
constexpr int kPodsPerReplicaSet = 100;

api::json::Document Doc(const std::string& text) {
  api::json::Document d;
  (void)api::json::Parse(text, d);
  return d;
}

// The built-in resources without the pod and node kind hooks (validation and typed views through
// the codec's decoders): they cost the same per write at any cluster size, and would only hide the
// controllers' share.
const std::vector<const ResourceType*>& ResourcesWithoutDecoding() {
  static const auto* types = [] {
    auto* owned = new std::vector<ResourceType>();
    for (const ResourceType* t : BuiltinResources()) owned->push_back(*t);
    for (ResourceType& t : *owned) {
      if (t.group.empty() && (t.resource == "pods" || t.resource == "nodes")) {
        t.validate = nullptr;
        t.view = nullptr;
        t.decode = nullptr;
        t.complete_view = nullptr;
      }
    }
    auto* out = new std::vector<const ResourceType*>();
    for (const ResourceType& t : *owned) out->push_back(&t);
    return out;
  }();
  return *types;
}

struct Cluster {
  util::VirtualClock clock{kStartNs};
  std::unique_ptr<Store> store;
  std::unique_ptr<ControllerManager> manager;
  const ResourceType* pods = nullptr;
  int nodes = 0;
  int next_bind = 0;
  // What the scheduler and a test client would know from a watch: the pods not bound yet, and
  // each ReplicaSet's pods (by owner name).
  std::vector<ObjectPtr> unbound;
  std::map<std::string, std::vector<std::string>> pods_of;
  uint64_t writes = 0;  // events seen: one per store change

  Cluster(int pod_count, bool hooks) {
    StoreOptions options;
    options.seed = 1;
    options.watch_history = 1000;  // nobody watches; the history only costs memory here
    store = NewMemoryStore(hooks ? BuiltinResources() : ResourcesWithoutDecoding(), clock, options);
    pods = store->FindResource("", "pods");
    store->AddObserver([this](const WatchEvent& e) {
      ++writes;
      if (e.object->type != pods) return;
      const std::string app(e.object->name.substr(0, e.object->name.rfind('-')));
      auto& names = pods_of[app];
      if (e.type == EventType::kAdded) {
        unbound.push_back(e.object);
        names.push_back(e.object->name);
      } else if (e.type == EventType::kDeleted) {
        std::erase(names, e.object->name);
      }
    });
    manager = NewDefaultControllerManager(*store, clock, 1);
    manager->Start();
    nodes = pod_count / kPodsPerNode;
    const auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < nodes; ++n) {
      (void)store->Create(*store->FindResource("", "nodes"), "",
                          Doc("{\"metadata\":{\"name\":\"node-" + std::to_string(n) +
                              "\"},\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
                              "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}]}}"));
    }
    const ResourceType& rs = *store->FindResource("apps", "replicasets");
    for (int r = 0; r < pod_count / kPodsPerReplicaSet; ++r) {
      const std::string app = "app-" + std::to_string(r);
      (void)store->Create(rs, "default",
                          Doc("{\"metadata\":{\"name\":\"" + app + "\"},\"spec\":{\"replicas\":" +
                              std::to_string(kPodsPerReplicaSet) + ",\"selector\":{\"matchLabels\":{\"app\":\"" + app +
                              "\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"" + app +
                              "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\","
                              "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}}}"));
      BindPending();
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr,
                 "cluster of %d pods on %d nodes (%s): built in %.1f s (%.1f us per pod, all events included)\n",
                 pod_count, nodes, hooks ? "pod and node hooks" : "no pod and node hooks", us / 1e6, us / pod_count);
  }

  // Binds every pod created since the last call, round-robin over the nodes (the scheduler's part).
  void BindPending() {
    std::vector<ObjectPtr> pending;
    pending.swap(unbound);
    for (const ObjectPtr& p : pending) {
      (void)store->Bind(p->namespace_, p->name, p->uid, "node-" + std::to_string(next_bind++ % nodes));
    }
  }
};

Cluster& ClusterOf(int pods, bool hooks) {
  static std::map<std::pair<int, bool>, std::unique_ptr<Cluster>> clusters;
  auto& c = clusters[{pods, hooks}];
  if (!c) c = std::make_unique<Cluster>(pods, hooks);
  return *c;
}

// One pod's cycle: deleted (grace 0, gone at once), replaced by its ReplicaSet, the replacement
// bound and started; every status the controllers keep follows.
void PodCycles(benchmark::State& state, bool hooks) {
  Cluster& c = ClusterOf(static_cast<int>(state.range(0)), hooks);
  const uint64_t writes_before = c.writes;
  const auto cpu_before = std::clock();
  int victim = 0;
  for (auto _ : state) {
    const std::string app = "app-" + std::to_string(victim++ % (state.range(0) / kPodsPerReplicaSet));
    const std::string name = c.pods_of[app].front();
    DeleteOptions d;
    d.grace_period_seconds = 0;
    (void)c.store->Delete(*c.pods, "default", name, d);
    c.BindPending();
  }
  const double cpu_us = 1e6 * static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
  const double writes = static_cast<double>(c.writes - writes_before);
  state.counters["pods"] = static_cast<double>(state.range(0));
  state.counters["writes"] = benchmark::Counter(writes, benchmark::Counter::kAvgIterations);
  state.counters["us_per_write"] = writes > 0 ? cpu_us / writes : 0;
}

void BM_PodCycle(benchmark::State& state) { PodCycles(state, false); }
void BM_PodCycleWithHooks(benchmark::State& state) { PodCycles(state, true); }
BENCHMARK(BM_PodCycle)->Arg(1000)->Arg(10'000)->Arg(30'000)->Arg(100'000)->Unit(benchmark::kMicrosecond)->MinTime(2.0);
BENCHMARK(BM_PodCycleWithHooks)->Arg(1000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace
}  // namespace kubesched::store::controllers

BENCHMARK_MAIN();
