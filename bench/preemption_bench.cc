// Whole-decision benchmark of preemption: DefaultPreemption (upstream's single-node preemption)
// against CrossNodePreemption (evictions and moves on any node, planned by a MIP) on generated
// clusters of 100, 1,000 and 5,000 nodes with about 10 running pods per node of mixed priorities
// (0, 100, 500, 1000): most pods owned by ReplicaSets (movable), some bare, some covered by
// PodDisruptionBudgets. Each case is a pending pod of priority 2000 that fits nowhere: too large
// for any node's free room, or (every third case) barred from every zone by required anti-affinity
// to a low-priority app that runs in all of them.
//
// Two scenarios per size, from the same random draws (kScenarios):
//   roomy  most nodes nearly full (0-400m CPU free), ~7% with 1-2.5 CPUs free: CrossNodePreemption
//          finds move-only plans, usually proved optimal by a lower bound without the solver.
//   full   every node nearly full: plans need evictions and the MIP solver (GLPK by default) runs.
//
//   cmake --preset release && cmake --build --preset release --target kubesched_preemption_bench
//   build/release/bench/kubesched_preemption_bench            # all sizes and scenarios (~15 s), a table at the end
//   build/release/bench/kubesched_preemption_bench --benchmark_filter=/1000/          # one size
//   build/release/bench/kubesched_preemption_bench --benchmark_filter=/1000/full/     # one size, one scenario
//
// Benchmarks are named BM_Preemption/<nodes>/<scenario>/<plugin>; filter on the whole
// <nodes>/<scenario> pair to keep the comparison counters, which need both plugins' results.
// Each case runs on the real framework runtime with the default profile, once with
// DefaultPreemption and once with CrossNodePreemption (solverTimeoutSeconds 1, allowMoves true) as
// the PostFilter, both from the same cluster state: the frameworks are built afresh for each case,
// the snapshot is never changed, and the cluster client only records evictions (DeletePod) and
// moves (DeletePodForMove). PreFilter and Filter run over every node to give the PostFilter its
// NodeToStatus (untimed); the decision time is the wall time of RunPostFilterPlugins. One
// benchmark iteration is one case (manual time), so the reported time is the mean decision time;
// the counters and the final table give p50/p99, plans found, evictions and moves per plan, and for
// CrossNodePreemption the share of plans proved optimal, the largest gap, the mean MIP solver time
// per plan (the plugin's stats: solver_seconds / plans; 0 when a lower bound made the solver
// unnecessary) and how it compares with DefaultPreemption on the same cases (fewer evictions; a
// plan where DefaultPreemption found none). Deterministic for a given seed (kSeed).

#include <algorithm>
#include <any>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "cache/snapshot.h"
#include "config/load.h"
#include "framework/client.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/registry.h"
#include "framework/runtime/framework.h"
#include "framework/runtime/waiting_pods.h"
#include "plugins/cross_node_preemption/cross_node_preemption.h"
#include "plugins/registry.h"
#include "testing/builders.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/parallelizer.h"
#include "util/percentile.h"

namespace kubesched {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::NodeToStatus;
using framework::PodInfoPtr;
using framework::Status;
using framework::runtime::Framework;
using testing::MakeNode;
using testing::MakePod;

constexpr uint64_t kSeed = 20250117;
constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kInstanceType[] = "node.kubernetes.io/instance-type";
constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kNowNs = int64_t{1'750'000'000} * 1'000'000'000;
constexpr int32_t kPreemptorPriority = 2000;
constexpr int kAntiAffinityApps = 3;  // low-priority apps with two pods in every zone
constexpr std::string_view kDefault = "DefaultPreemption";
constexpr std::string_view kCrossNode = "CrossNodePreemption";

// A scenario is the share of "roomy" nodes (1-2.5 CPUs free); every other node is nearly full.
// With roomy nodes CrossNodePreemption finds move-only plans; without them every plan needs
// evictions and the MIP solver runs. Both draw the same random numbers, so "full" is the "roomy"
// cluster of the same size with its roomy nodes filled up.
struct Scenario {
  std::string_view name;
  double roomy_fraction;
};
constexpr Scenario kScenarios[] = {{"roomy", 0.07}, {"full", 0.0}};

int CasesFor(int num_nodes) { return num_nodes >= 5000 ? 20 : 30; }

// ---------------------------------------------------------------------------------------------
// The cluster

struct NodeShape {
  const char* type;
  int64_t milli_cpu;
  int64_t memory_mi;
};
constexpr NodeShape kShapes[] = {{"c8", 8000, 32 * 1024}, {"c16", 16000, 64 * 1024}, {"m8", 8000, 64 * 1024}};
constexpr int64_t kTemplateCpu[] = {250, 500, 750, 1000, 1500, 2000, 3000};
constexpr int32_t kPriorities[] = {0, 100, 500, 1000};
constexpr double kPriorityWeights[] = {0.3, 0.3, 0.25, 0.15};
constexpr const char* kNamespaces[] = {"team-a", "team-b", "team-c"};

// A ReplicaSet: every replica has the same labels, requests and priority.
struct Template {
  std::string name;  // app label, also the ReplicaSet's name
  std::string ns;
  int64_t milli_cpu = 0;
  int64_t memory_mi = 0;
  int32_t priority = 0;
  int replicas = 0;
};

struct Cluster {
  int num_nodes = 0;
  std::string_view scenario;
  std::unique_ptr<cache::Snapshot> snapshot;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
  std::map<std::string, api::LabelSelector, std::less<>> selectors;  // by ReplicaSet uid
  std::vector<PodInfoPtr> preemptors;
  // Figures of the generated cluster, for the table.
  int pods = 0, bare_pods = 0, pdb_pods = 0, replica_sets = 0, roomy_nodes = 0;
  int64_t max_free_milli_cpu = 0;
};

int32_t PickPriority(std::mt19937_64& rng) {
  std::discrete_distribution<int> d(std::begin(kPriorityWeights), std::end(kPriorityWeights));
  return kPriorities[d(rng)];
}

std::shared_ptr<api::Pod> RunningPod(testing::PodBuilder b, const std::string& node, std::mt19937_64& rng) {
  // Started between one hour and ten days ago (MoreImportantPod breaks priority ties by age).
  const int64_t age_ns = (3600 + static_cast<int64_t>(rng() % (10 * 86400))) * 1'000'000'000;
  return b.Node(node)
      .Phase(api::PodPhase::kRunning)
      .CreationTimestamp(kNowNs - age_ns)
      .StartTime(kNowNs - age_ns)
      .Obj();
}

std::string Cpu(int64_t milli) { return std::to_string(milli) + "m"; }
std::string Mem(int64_t mi) { return std::to_string(mi) + "Mi"; }

Cluster MakeCluster(int num_nodes, const Scenario& scenario) {
  std::mt19937_64 rng(kSeed + static_cast<uint64_t>(num_nodes));
  std::uniform_real_distribution<double> unit(0, 1);
  Cluster c;
  c.num_nodes = num_nodes;
  c.scenario = scenario.name;

  // ReplicaSets: ~6 replicas each on average; 15% covered by a PDB.
  std::vector<Template> templates(static_cast<size_t>(std::max(24, num_nodes * 8 / 6)));
  std::vector<bool> covered(templates.size());
  for (size_t t = 0; t < templates.size(); ++t) {
    Template& tp = templates[t];
    tp.name = fmt::format("app-{}", t);
    tp.ns = kNamespaces[t % 3];
    tp.milli_cpu = kTemplateCpu[rng() % std::size(kTemplateCpu)];
    tp.memory_mi = tp.milli_cpu * (2 + static_cast<int64_t>(rng() % 3)) * 1024 / 1000;
    tp.priority = PickPriority(rng);
    covered[t] = unit(rng) < 0.15;
  }
  // The anti-affinity targets: priority 0, two small pods per zone on distinct random nodes.
  std::vector<std::vector<int>> agents_on(static_cast<size_t>(num_nodes));  // node → agent apps
  for (int a = 0; a < kAntiAffinityApps; ++a) {
    for (int zone = 0; zone < 3; ++zone) {
      std::vector<int> picked;
      while (picked.size() < 2) {
        const int n = zone + 3 * static_cast<int>(rng() % static_cast<uint64_t>((num_nodes - zone + 2) / 3));
        if (std::find(picked.begin(), picked.end(), n) == picked.end()) picked.push_back(n);
      }
      for (int n : picked) agents_on[static_cast<size_t>(n)].push_back(a);
    }
  }

  std::vector<std::unique_ptr<NodeInfo>> infos;
  int bare = 0;
  for (int i = 0; i < num_nodes; ++i) {
    const NodeShape& shape = kShapes[rng() % std::size(kShapes)];
    const std::string name = fmt::format("node-{}", i);
    const std::string zone = fmt::format("zone-{}", static_cast<char>('a' + i % 3));
    auto node = MakeNode()
                    .Name(name)
                    .Label(kZone, zone)
                    .Label(kInstanceType, shape.type)
                    .Capacity({{"cpu", Cpu(shape.milli_cpu)}, {"memory", Mem(shape.memory_mi)}, {"pods", "110"}})
                    .Obj();
    const bool roomy = unit(rng) < scenario.roomy_fraction;
    c.roomy_nodes += roomy ? 1 : 0;
    // Nearly full: 0-400m CPU free; roomy: 1-2.5 CPUs free (room for moved pods, never for a
    // preemptor, which asks for 3 CPUs or more or is barred by anti-affinity).
    const int64_t free_cpu = roomy ? 1000 + static_cast<int64_t>(rng() % 1501) : static_cast<int64_t>(rng() % 401);
    const double mem_fill = roomy ? 0.55 + 0.15 * unit(rng) : 0.8 + 0.15 * unit(rng);
    int64_t cpu_left = shape.milli_cpu - free_cpu;
    int64_t mem_left = static_cast<int64_t>(static_cast<double>(shape.memory_mi) * mem_fill);

    std::vector<std::shared_ptr<api::Pod>> pods;
    auto take = [&](int64_t cpu, int64_t mem) {
      cpu_left -= cpu;
      mem_left -= mem;
    };
    // A per-node agent of a DaemonSet in kube-system, more important than any preemptor.
    pods.push_back(RunningPod(MakePod()
                                  .Name("node-agent-" + name)
                                  .UID("node-agent-" + name)
                                  .Namespace("kube-system")
                                  .Label("app", "node-agent")
                                  .OwnerReference("DaemonSet", "node-agent")
                                  .Priority(2000001000)
                                  .Req({{"cpu", "100m"}, {"memory", "200Mi"}}),
                              name, rng));
    take(100, 200);
    for (int a : agents_on[static_cast<size_t>(i)]) {
      const std::string app = fmt::format("zone-agent-{}", a);
      const std::string pod = fmt::format("{}-{}", app, name);
      pods.push_back(RunningPod(MakePod()
                                    .Name(pod)
                                    .UID(pod)
                                    .Namespace("default")
                                    .Label("app", app)
                                    .OwnerReference("ReplicaSet", app, "rs-" + app)
                                    .Priority(0)
                                    .Req({{"cpu", "200m"}, {"memory", "256Mi"}}),
                                name, rng));
      take(200, 256);
    }
    // ReplicaSet pods sized to what is left per slot, then one bare pod that fills the rest.
    while (pods.size() < 9) {
      const int64_t slots = 10 - static_cast<int64_t>(pods.size());
      const int64_t avg = cpu_left / slots;
      std::vector<size_t> fitting, close;
      for (size_t k = 0; k < 48; ++k) {
        const size_t t = rng() % templates.size();
        const Template& tp = templates[t];
        if (tp.milli_cpu > cpu_left - 100 || tp.memory_mi > mem_left - 64) continue;
        fitting.push_back(t);
        if (tp.milli_cpu * 10 >= avg * 7 && tp.milli_cpu * 10 <= avg * 14) close.push_back(t);
      }
      const std::vector<size_t>& from = close.empty() ? fitting : close;
      if (from.empty()) break;
      Template& tp = templates[from[rng() % from.size()]];
      const std::string pod = fmt::format("{}-{}", tp.name, tp.replicas++);
      pods.push_back(RunningPod(MakePod()
                                    .Name(pod)
                                    .UID(pod)
                                    .Namespace(tp.ns)
                                    .Label("app", tp.name)
                                    .Label("pod-template-hash", "5d8f7c")
                                    .OwnerReference("ReplicaSet", tp.name + "-5d8f7c", "rs-" + tp.name)
                                    .Priority(tp.priority)
                                    .Req({{"cpu", Cpu(tp.milli_cpu)}, {"memory", Mem(tp.memory_mi)}}),
                                name, rng));
      take(tp.milli_cpu, tp.memory_mi);
    }
    if (cpu_left >= 100 && mem_left >= 64) {
      const std::string pod = fmt::format("bare-{}", bare++);
      pods.push_back(RunningPod(MakePod()
                                    .Name(pod)
                                    .UID(pod)
                                    .Namespace(kNamespaces[rng() % 3])
                                    .Label("app", pod)
                                    .Priority(PickPriority(rng))
                                    .Req({{"cpu", Cpu(cpu_left)}, {"memory", Mem(mem_left)}}),
                                name, rng));
      take(cpu_left, mem_left);
    }
    c.pods += static_cast<int>(pods.size());
    auto info = testing::MakeNodeInfo(std::move(node), pods);
    c.max_free_milli_cpu = std::max(c.max_free_milli_cpu, info->allocatable().milli_cpu - info->requested().milli_cpu);
    infos.push_back(std::move(info));
  }
  c.bare_pods = bare;

  for (size_t t = 0; t < templates.size(); ++t) {
    const Template& tp = templates[t];
    if (tp.replicas == 0) continue;
    ++c.replica_sets;
    api::LabelSelector selector;
    selector.match_labels.Set("app", tp.name);
    c.selectors["rs-" + tp.name] = selector;
    if (!covered[t]) continue;
    auto pdb = std::make_shared<api::PodDisruptionBudget>();
    pdb->metadata.name = tp.name;
    pdb->metadata.namespace_ = tp.ns;
    pdb->selector = selector;
    if (t % 2 == 0) {
      pdb->max_unavailable = "1";
    } else {
      pdb->min_available = "60%";
    }
    c.pdbs.push_back(std::move(pdb));
    c.pdb_pods += tp.replicas;
  }
  for (int a = 0; a < kAntiAffinityApps; ++a) {
    const std::string app = fmt::format("zone-agent-{}", a);
    c.selectors["rs-" + app].match_labels.Set("app", app);
  }
  c.snapshot = cache::Snapshot::FromNodeInfos(std::move(infos));

  // The preemptors: 3-4 CPUs (more than any node's free room), or every third one 1.5 CPUs that
  // any roomy node would take but for its anti-affinity to a zone agent.
  for (int k = 0; k < CasesFor(num_nodes); ++k) {
    const std::string name = fmt::format("urgent-{}", k);
    auto b = MakePod()
                 .Name(name)
                 .UID(name)
                 .Namespace(kNamespaces[k % 3])
                 .Label("app", "urgent")
                 .Priority(kPreemptorPriority);
    if (k % 3 == 2) {
      // In the agents' namespace: an affinity term without namespaces selects the pod's own.
      b.Namespace("default")
          .Req({{"cpu", "1500m"}, {"memory", "3Gi"}})
          .PodAntiAffinityIn("app", {fmt::format("zone-agent-{}", (k / 3) % kAntiAffinityApps)}, kZone);
    } else {
      const int64_t cpu = 3000 + 500 * static_cast<int64_t>(rng() % 3);
      b.Req({{"cpu", Cpu(cpu)}, {"memory", Mem(cpu * 2 * 1024 / 1000)}});
    }
    c.preemptors.push_back(b.Info());
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// What the PostFilter sees of the world

// Answers the listers' questions about the generated cluster and records the evictions and moves
// asked of it without changing anything, so that every case starts from the same state.
class RecordingClient final : public framework::ClusterClient {
 public:
  explicit RecordingClient(const Cluster& cluster) : cluster_(cluster) {}

  void Clear() {
    std::lock_guard lock(mu_);
    evictions_ = moves_ = 0;
  }
  int evictions() const {
    std::lock_guard lock(mu_);
    return evictions_;
  }
  int moves() const {
    std::lock_guard lock(mu_);
    return moves_;
  }

  Status Bind(const api::Pod&, const std::string&) override { return Status::Error("the benchmark binds nothing"); }
  Status DeletePod(const api::Pod&, std::string_view) override {
    std::lock_guard lock(mu_);
    ++evictions_;
    return Status();
  }
  Status DeletePodForMove(const api::Pod&, const std::string&, std::string_view) override {
    std::lock_guard lock(mu_);
    ++moves_;
    return Status();
  }
  Status SetNominatedNodeName(const api::Pod&, const std::string&) override { return Status(); }
  Status SetPodScheduledCondition(const api::Pod&, const api::PodCondition&) override { return Status(); }
  std::optional<api::Labels> NamespaceLabels(std::string_view name) const override {
    return api::Labels{{"kubernetes.io/metadata.name", std::string(name)}};
  }
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override {
    return cluster_.pdbs;
  }
  std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const override {
    for (const auto& ref : pod.metadata.owner_references) {
      if (!ref.controller || ref.kind != "ReplicaSet") continue;
      if (auto it = cluster_.selectors.find(ref.uid); it != cluster_.selectors.end()) return it->second;
    }
    return std::nullopt;
  }

 private:
  const Cluster& cluster_;
  mutable std::mutex mu_;
  int evictions_ = 0;  // guarded by mu_
  int moves_ = 0;      // guarded by mu_
};

// Holds no nominations: a plan's nominations and held room would otherwise carry over to the
// next case.
class NoNominations final : public framework::PodNominator {
 public:
  void AddNominatedPod(PodInfoPtr, const std::string&) override {}
  void DeleteNominatedPodIfExists(const api::Pod&) override {}
  std::vector<PodInfoPtr> NominatedPodsForNode(const std::string&) const override { return {}; }
  bool HasNominatedPods() const override { return false; }
};

struct CaseResult {
  bool valid = false;  // the preemptor fit nowhere before preemption (else the case is skipped)
  bool plan = false;
  int evictions = 0;
  int moves = 0;
  double seconds = 0;
  // CrossNodePreemption only.
  bool optimal = false;
  double gap = 0;
  double solver_seconds = 0;
};

// A benchmark's key: (nodes, index into kScenarios); the plugin is added for its results.
using ClusterKey = std::pair<int, int>;
using ResultKey = std::tuple<int, int, std::string>;

std::mutex results_mu;
std::map<ResultKey, std::vector<CaseResult>> results;  // guarded by results_mu

// What a benchmark's cases add up to; the comparison with DefaultPreemption is over the same
// cases (same index), CrossNodePreemption only.
struct Summary {
  int valid = 0, plans = 0, evictions = 0, moves = 0, optimal = 0;
  double p50_ms = 0, p99_ms = 0, max_gap = 0, solver_seconds = 0;
  std::optional<int> fewer_evictions, plan_only_here;

  double PerPlan(double n) const { return plans ? n / plans : 0.0; }
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return util::PercentileOfSorted(v, p);
}

Summary Summarize(const std::vector<CaseResult>& out, const std::vector<CaseResult>* default_out) {
  Summary s;
  std::vector<double> ms;
  for (const auto& r : out) {
    if (!r.valid) continue;
    ++s.valid;
    ms.push_back(r.seconds * 1e3);
    s.solver_seconds += r.solver_seconds;
    if (!r.plan) continue;
    ++s.plans;
    s.evictions += r.evictions;
    s.moves += r.moves;
    s.optimal += r.optimal ? 1 : 0;
    s.max_gap = std::max(s.max_gap, r.gap);
  }
  s.p50_ms = Percentile(ms, 0.5);
  s.p99_ms = Percentile(ms, 0.99);
  if (default_out) {
    int fewer = 0, only = 0;
    for (size_t i = 0; i < std::min(out.size(), default_out->size()); ++i) {
      const CaseResult& x = out[i];
      const CaseResult& d = (*default_out)[i];
      if (!x.valid || !d.valid || !x.plan) continue;
      if (!d.plan) {
        ++only;
      } else if (x.evictions < d.evictions) {
        ++fewer;
      }
    }
    s.fewer_evictions = fewer;
    s.plan_only_here = only;
  }
  return s;
}

const framework::Registry& InTreeRegistry() {
  static const framework::Registry* registry = [] {
    auto* r = new framework::Registry();
    plugins::RegisterInTreePlugins(*r);
    return r;
  }();
  return *registry;
}

config::Profile ProfileFor(std::string_view plugin) {
  const framework::Registry& registry = InTreeRegistry();
  if (plugin == kDefault) return config::DefaultConfiguration(registry).profiles.at(0);
  // As examples/preemption/config.yaml, with the plugin's default args besides these.
  constexpr char kConfig[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter:
      enabled:
      - name: CrossNodePreemption
    postFilter:
      enabled:
      - name: CrossNodePreemption
      disabled:
      - name: DefaultPreemption
    reserve:
      enabled:
      - name: CrossNodePreemption
  pluginConfig:
  - name: CrossNodePreemption
    args:
      solverTimeoutSeconds: 1
      allowMoves: true
)";
  auto cfg = config::LoadConfigFromString(kConfig, "preemption_bench", registry);
  if (!cfg) {
    fmt::print(stderr, "{}\n", cfg.error());
    std::abort();
  }
  return cfg->profiles.at(0);
}

std::map<ClusterKey, std::unique_ptr<Cluster>> clusters;  // built on first use

const Cluster& ClusterOf(int num_nodes, int scenario) {
  auto& c = clusters[{num_nodes, scenario}];
  if (!c) c = std::make_unique<Cluster>(MakeCluster(num_nodes, kScenarios[scenario]));
  return *c;
}

// PreFilter and Filter over every node, as a scheduling cycle in which no node fits does; nullopt
// when some node fits after all.
std::optional<NodeToStatus> FilterAll(Framework& fwk, CycleState& state, const framework::PodInfo& pod,
                                      const cache::Snapshot& snapshot, util::Parallelizer& parallelizer) {
  NodeToStatus statuses;
  auto [pre, s] = fwk.RunPreFilterPlugins(state, pod);
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) return std::nullopt;
    statuses.set_absent_status(s);
    return statuses;
  }
  std::vector<const NodeInfo*> nodes;
  for (const NodeInfo* n : snapshot.List()) {
    if (pre.AllNodes() || pre.node_names->contains(n->name())) nodes.push_back(n);
  }
  std::vector<Status> verdicts(nodes.size());
  parallelizer.Until(static_cast<int>(nodes.size()), [&](int i) {
    verdicts[static_cast<size_t>(i)] =
        fwk.RunFilterPluginsWithNominatedPods(state, pod, *nodes[static_cast<size_t>(i)]);
  });
  statuses.Reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (verdicts[i].IsSuccess()) return std::nullopt;
    statuses.Set(nodes[i]->name(), std::move(verdicts[i]));
  }
  return statuses;
}

void BM_Preemption(benchmark::State& state, int num_nodes, int scenario, std::string_view plugin) {
  log::SetVerbosity(0);  // the plugins' V(2) plan lines would swamp the table
  const Cluster& cluster = ClusterOf(num_nodes, scenario);
  const config::Profile profile = ProfileFor(plugin);
  RecordingClient client(cluster);
  NoNominations nominator;
  util::VirtualClock clock(kNowNs);
  util::Parallelizer parallelizer(static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u)));
  framework::runtime::WaitingPodsMap waiting;
  framework::runtime::FrameworkDeps deps{&client, &nominator, &clock, &parallelizer, &waiting, {}};

  std::vector<CaseResult> out;
  size_t next = 0;
  for (auto _ : state) {
    const framework::PodInfo& pod = *cluster.preemptors[next++ % cluster.preemptors.size()];
    // A fresh framework per case: a plugin's plans and its random offsets start over.
    auto fwk = Framework::Create(profile, 0, InTreeRegistry(), deps);
    if (!fwk) {
      state.SkipWithError(fwk.error().c_str());
      return;
    }
    (*fwk)->set_snapshot(cluster.snapshot.get());
    client.Clear();
    CaseResult r;
    CycleState cycle;
    std::optional<NodeToStatus> statuses = FilterAll(**fwk, cycle, pod, *cluster.snapshot, parallelizer);
    if (statuses) {
      const auto started = std::chrono::steady_clock::now();
      auto [result, status] = (*fwk)->RunPostFilterPlugins(cycle, pod, *statuses);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (status.IsError())
        KS_LOG.ErrorS(status.Message(), "PostFilter failed", "plugin", plugin, "pod", log::KObj(pod.pod()));
      r.valid = true;
      r.plan = status.IsSuccess() && !result.nominated_node_name.empty();
      r.evictions = client.evictions();
      r.moves = client.moves();
      const std::any statistics = (*fwk)->PluginStatistics(kCrossNode);
      if (const auto* report = std::any_cast<plugins::cross_node_preemption::CrossNodeReport>(&statistics)) {
        const auto& stats = report->stats;
        r.optimal = stats.optimal > 0;
        r.gap = stats.max_gap;
        r.solver_seconds = stats.solver_seconds;
      }
    }
    state.SetIterationTime(r.seconds);
    out.push_back(r);
  }

  std::lock_guard lock(results_mu);
  std::vector<CaseResult>* default_out = nullptr;
  if (plugin == kCrossNode) {
    if (auto it = results.find({num_nodes, scenario, std::string(kDefault)}); it != results.end()) {
      default_out = &it->second;
    }
  }
  const Summary s = Summarize(out, default_out);
  state.counters["cases"] = s.valid;
  state.counters["plans"] = s.plans;
  state.counters["p50_ms"] = s.p50_ms;
  state.counters["p99_ms"] = s.p99_ms;
  state.counters["evictions_per_plan"] = s.PerPlan(s.evictions);
  state.counters["moves_per_plan"] = s.PerPlan(s.moves);
  if (plugin == kCrossNode) {
    state.counters["optimal_frac"] = s.PerPlan(s.optimal);
    state.counters["max_gap"] = s.max_gap;
    state.counters["solver_ms_per_plan"] = s.PerPlan(s.solver_seconds * 1e3);
    if (s.fewer_evictions) state.counters["fewer_evictions"] = *s.fewer_evictions;
    if (s.plan_only_here) state.counters["plan_only_xnode"] = *s.plan_only_here;
  }
  state.SetLabel(fmt::format("{} pods, {} PDBs", cluster.pods, cluster.pdbs.size()));
  results[{num_nodes, scenario, std::string(plugin)}] = std::move(out);
}

void PrintTable() {
  std::lock_guard lock(results_mu);
  if (results.empty()) return;
  fmt::print("\nPreemption decisions (RunPostFilterPlugins wall time), seed {}\n", kSeed);
  for (const auto& [key, cluster] : clusters) {
    fmt::print(
        "  {} nodes, {}: {} pods ({} bare, {} under {} PDBs), {} ReplicaSets, {} roomy nodes, max free CPU {}m\n",
        key.first, cluster->scenario, cluster->pods, cluster->bare_pods, cluster->pdb_pods, cluster->pdbs.size(),
        cluster->replica_sets, cluster->roomy_nodes, cluster->max_free_milli_cpu);
  }
  fmt::print(
      "\n| nodes | scenario | plugin | plans / cases | p50 ms | p99 ms | evictions / plan | moves / plan | optimal "
      "| max gap | solver ms / plan | fewer evictions | plan only here |\n");
  fmt::print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [key, cluster] : clusters) {
    const auto [nodes, scenario] = key;
    for (std::string_view plugin : {kDefault, kCrossNode}) {
      auto found = results.find({nodes, scenario, std::string(plugin)});
      if (found == results.end()) continue;
      const std::vector<CaseResult>& out = found->second;
      const std::vector<CaseResult>* default_out = nullptr;
      if (plugin == kCrossNode) {
        if (auto it = results.find({nodes, scenario, std::string(kDefault)}); it != results.end()) {
          default_out = &it->second;
        }
      }
      const Summary s = Summarize(out, default_out);
      std::string opt = "-", gap = "-", solver = "-", fewer = "-", only = "-";
      if (plugin == kCrossNode) {
        opt = fmt::format("{:.0f}%", 100 * s.PerPlan(s.optimal));
        gap = fmt::format("{:.3f}", s.max_gap);
        if (s.plans) solver = fmt::format("{:.1f}", s.PerPlan(s.solver_seconds * 1e3));
        if (s.fewer_evictions) fewer = std::to_string(*s.fewer_evictions);
        if (s.plan_only_here) only = std::to_string(*s.plan_only_here);
      }
      fmt::print("| {} | {} | {} | {} / {} | {:.1f} | {:.1f} | {:.2f} | {:.2f} | {} | {} | {} | {} | {} |\n", nodes,
                 cluster->scenario, plugin, s.plans, s.valid, s.p50_ms, s.p99_ms, s.PerPlan(s.evictions),
                 s.PerPlan(s.moves), opt, gap, solver, fewer, only);
      if (s.valid < static_cast<int>(out.size())) {
        fmt::print("  ({} of {} cases skipped: the preemptor fit somewhere without preemption)\n",
                   out.size() - static_cast<size_t>(s.valid), out.size());
      }
    }
  }
}

void RegisterAll() {
  for (int nodes : {100, 1000, 5000}) {
    for (int scenario = 0; scenario < static_cast<int>(std::size(kScenarios)); ++scenario) {
      // DefaultPreemption first: CrossNodePreemption's comparison counters read its results.
      for (std::string_view plugin : {kDefault, kCrossNode}) {
        benchmark::RegisterBenchmark(
            fmt::format("BM_Preemption/{}/{}/{}", nodes, kScenarios[scenario].name, plugin).c_str(),
            [nodes, scenario, plugin](benchmark::State& s) { BM_Preemption(s, nodes, scenario, plugin); })
            ->Iterations(CasesFor(nodes))
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
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
  kubesched::PrintTable();
  return 0;
}
