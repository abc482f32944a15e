// Property tests of the optimizer configuration the README recommends (examples/optimizer.yaml:
// BatchPlacement and CrossNodePreemption together), each over hundreds of generated clusters run
// through the whole scheduler:
//   NoChurn: pods arriving while plans are applied; no pod is disrupted twice, no plan expires,
//     every preemptor with a plan runs, nothing stays held, and every run ends.
//   OptimalRunningPods: the final state keeps as many pods running as the best final state any
//     preemption could reach, by priority (one pod of a priority outweighs every pod below it),
//     against an independent brute-force oracle written here.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulation.h"
#include "sim/simulation_summary.h"

namespace kubesched::scheduler {

// The simulation (src/sim) is these tests' harness.
using sim::IsTerminal;
using sim::RunSimulation;
using sim::SimulationOptions;
using sim::SimulationResult;
namespace {

std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("KUBESCHED_SOURCE_DIR")) return dir;
  return KUBESCHED_SOURCE_DIR;
}

const framework::Registry& Registry() {
  static const framework::Registry registry = [] {
    framework::Registry r;
    plugins::RegisterInTreePlugins(r);
    return r;
  }();
  return registry;
}

const config::Configuration& RecommendedConfig() {
  static const config::Configuration cfg = [] {
    auto c = config::LoadConfigFile((SourceDir() / "examples/optimizer.yaml").string(), Registry());
    EXPECT_TRUE(c.has_value()) << c.error();
    return *c;
  }();
  return cfg;
}

// --- The generated cluster ---------------------------------------------------------------------

struct GenNode {
  std::string name;
  int zone = 0;
  int cpu = 0;  // milli
};

struct GenPod {
  std::string name;
  std::string ns = "default";
  std::string app;       // label app=<app>; the ReplicaSet's name when owned
  bool owned = false;    // by ReplicaSet <app>
  int priority = 0;      // 0, 100 or 1000
  int cpu = 0;           // milli
  int node = -1;         // running there, or pending
  std::string anti_app;  // required anti-affinity to app=<anti_app> per zone
  int create_after_s = 0;
};

struct Instance {
  std::vector<GenNode> nodes;
  std::vector<GenPod> pods;
  std::map<std::string, int> replicas;  // ReplicaSet → replicas
  std::string Manifest() const;
  std::string Describe() const;
};

std::string Instance::Manifest() const {
  std::string out = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p100}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p1000}
value: 1000
---
)";
  for (const auto& n : nodes) {
    out += fmt::format(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {0}\n  labels: {{kubernetes.io/hostname: {0}, "
        "topology.kubernetes.io/zone: z{1}}}\nstatus:\n  allocatable: {{cpu: {2}m, memory: 64Gi, pods: "
        "\"110\"}}\n---\n",
        n.name, n.zone, n.cpu);
  }
  auto priority_class = [](int p) { return p == 0 ? std::string() : fmt::format("  priorityClassName: p{}\n", p); };
  for (const auto& [rs, count] : replicas) {
    // The template's request is the first replica's (replicas of one ReplicaSet are identical).
    const GenPod* first = nullptr;
    for (const auto& p : pods) {
      if (p.owned && p.app == rs) first = first ? first : &p;
    }
    out += fmt::format(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: {0}, namespace: default}}\nspec:\n  replicas: {1}\n"
        "  selector: {{matchLabels: {{app: {0}}}}}\n  template:\n    metadata: {{labels: {{app: {0}}}}}\n    spec:\n"
        "{2}      containers: [{{name: c, image: x, resources: {{requests: {{cpu: {3}m, memory: 64Mi}}}}}}]\n---\n",
        rs, count,
        first->priority == 0 ? std::string() : fmt::format("      priorityClassName: p{}\n", first->priority),
        first->cpu);
  }
  for (const auto& p : pods) {
    out += fmt::format("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {}\n  namespace: {}\n", p.name, p.ns);
    if (!p.app.empty()) out += fmt::format("  labels: {{app: {}}}\n", p.app);
    if (p.owned) {
      out += fmt::format(
          "  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: {}, uid: \"\", controller: true}}]\n",
          p.app);
    }
    if (p.create_after_s > 0) {
      out += fmt::format("  annotations: {{simulate.kubesched.io/create-after: \"{}s\"}}\n", p.create_after_s);
    }
    out += "spec:\n";
    if (p.node >= 0) out += fmt::format("  nodeName: {}\n", nodes[p.node].name);
    out += priority_class(p.priority);
    if (!p.anti_app.empty()) {
      out += fmt::format(
          "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
          "      - labelSelector: {{matchLabels: {{app: {}}}}}\n        topologyKey: topology.kubernetes.io/zone\n",
          p.anti_app);
    }
    out += fmt::format("  containers: [{{name: c, image: x, resources: {{requests: {{cpu: {}m, memory: 64Mi}}}}}}]\n",
                       p.cpu);
    if (p.node >= 0) out += "status: {phase: Running}\n";
    out += "---\n";
  }
  return out;
}

std::string Instance::Describe() const {
  std::string out;
  for (size_t n = 0; n < nodes.size(); ++n) {
    out += fmt::format("{} (z{}, {}m):", nodes[n].name, nodes[n].zone, nodes[n].cpu);
    for (const auto& p : pods) {
      if (p.node == static_cast<int>(n)) out += fmt::format(" {}/{}m/p{}", p.name, p.cpu, p.priority);
    }
    out += "\n";
  }
  for (const auto& p : pods) {
    if (p.node < 0) {
      out += fmt::format("pending {}: {}m p{}{}{}\n", p.name, p.cpu, p.priority,
                         p.anti_app.empty() ? "" : " anti " + p.anti_app,
                         p.create_after_s ? fmt::format(" at {}s", p.create_after_s) : "");
    }
  }
  return out;
}

struct GenOptions {
  int min_nodes = 3, max_nodes = 6;
  int max_arrivals = 0;  // pods created while plans are applied
  int max_preemptors = 1;
  int max_replicas = 2;
};

// Nodes in two or three zones, filled with ReplicaSet pods of priority 0 and 100 (and a few bare
// pods of either), kube-system pods, and pending high-priority pods that fit nowhere as things
// are, some with required zone anti-affinity to a running app.
Instance Generate(uint64_t seed, const GenOptions& o) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Instance in;
  const int zones = uniform(2, 3);
  const int num_nodes = uniform(o.min_nodes, o.max_nodes);
  for (int i = 0; i < num_nodes; ++i) in.nodes.push_back({fmt::format("n{}", i), i % zones, 1000 * uniform(2, 4)});
  std::vector<int> used(num_nodes, 0);
  int apps = 0;
  int bare = 0;
  for (int n = 0; n < num_nodes; ++n) {
    if (uniform(0, 3) == 0) {  // a protected system pod
      const int cpu = 250 * uniform(1, 2);
      in.pods.push_back({fmt::format("sys-{}", n), "kube-system", "", false, 0, cpu, n, "", 0});
      used[n] += cpu;
    }
  }
  // Fill the nodes: each workload gets 1-max_replicas replicas on nodes with room, up to a fill
  // level per node (some nodes full, some with room a moved pod could use).
  std::vector<int> target(num_nodes);
  for (int n = 0; n < num_nodes; ++n)
    target[n] = uniform(0, 2) == 0 ? in.nodes[n].cpu * uniform(5, 8) / 10 : in.nodes[n].cpu;
  for (int attempt = 0; attempt < 40; ++attempt) {
    const int cpu = 500 * uniform(1, 4);
    const int priority = uniform(0, 1) * 100;
    const bool owned = uniform(0, 5) != 0;
    const int replicas = owned ? uniform(1, o.max_replicas) : 1;
    std::vector<int> room;
    for (int n = 0; n < num_nodes; ++n) {
      if (used[n] + cpu <= target[n]) room.push_back(n);
    }
    if (room.empty()) continue;
    const std::string app = owned ? fmt::format("a{}", apps++) : fmt::format("b{}", bare++);
    int placed = 0;
    for (int r = 0; r < replicas; ++r) {
      room.clear();
      for (int n = 0; n < num_nodes; ++n) {
        if (used[n] + cpu <= target[n]) room.push_back(n);
      }
      if (room.empty()) break;
      const int n = room[uniform(0, static_cast<int>(room.size()) - 1)];
      used[n] += cpu;
      in.pods.push_back({owned ? fmt::format("{}-{}", app, r) : app, "default", app, owned, priority, cpu, n, "", 0});
      ++placed;
    }
    if (owned) in.replicas[app] = placed;
  }
  // Preemptors: larger than any node's free room, so each needs preemption.
  int max_free = 0;
  for (int n = 0; n < num_nodes; ++n) max_free = std::max(max_free, in.nodes[n].cpu - used[n]);
  const int preemptors = uniform(1, o.max_preemptors);
  for (int i = 0; i < preemptors; ++i) {
    GenPod p;
    p.name = fmt::format("vip-{}", i);
    p.app = p.name;
    p.priority = 1000;
    p.cpu = std::min(4000, (max_free / 500 + uniform(1, 3)) * 500);
    if (apps > 0 && uniform(0, 1) == 0) p.anti_app = fmt::format("a{}", uniform(0, apps - 1));
    if (i > 0) p.create_after_s = uniform(1, 40);
    in.pods.push_back(p);
  }
  const int arrivals = o.max_arrivals > 0 ? uniform(0, o.max_arrivals) : 0;
  for (int i = 0; i < arrivals; ++i) {
    GenPod p;
    p.name = fmt::format("late-{}", i);
    p.app = p.name;
    p.priority = uniform(0, 1) * 100;
    p.cpu = 500 * uniform(1, 2);
    p.create_after_s = uniform(1, 45);  // while victims terminate (30 s grace) and after
    in.pods.push_back(p);
  }
  return in;
}

SimulationResult Simulate(const Instance& in, uint64_t seed) {
  auto objects = api::LoadManifestsFromString(in.Manifest(), "generated.yaml");
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  SimulationOptions opts;
  opts.scheduler.config = RecommendedConfig();
  opts.scheduler.seed = seed;
  auto r = RunSimulation(std::move(*objects), opts, Registry());
  EXPECT_TRUE(r.has_value()) << r.error();
  return std::move(*r);
}

bool IsRunning(const api::Pod& p) {
  return !p.spec.node_name.empty() && !p.metadata.deletion_timestamp_ns && !IsTerminal(p);
}

// --- NoChurn -----------------------------------------------------------------------------------

TEST(NoChurn, RandomClustersWithArrivalsDuringPlans) {
  constexpr int kCases = 240;
  int with_plans = 0, with_moves = 0, with_arrivals = 0;
  for (int i = 0; i < kCases; ++i) {
    GenOptions o;
    o.max_nodes = 8;
    o.max_arrivals = 4;
    o.max_preemptors = 2;
    o.max_replicas = 3;
    const Instance in = Generate(1000 + i, o);
    SCOPED_TRACE(fmt::format("case {}:\n{}", i, in.Describe()));
    const SimulationResult r = Simulate(in, i + 1);
    // Every run ends, well before the simulation's cap of virtual time.
    EXPECT_LT(r.virtual_time_ns - r.start_time_ns, SimulationOptions{}.max_virtual_time_ns / 2);
    ASSERT_TRUE(r.cross_node.has_value());
    const auto& st = r.cross_node->stats;
    // No pod disrupted twice within the cooldown (disruptionCooldownSeconds, 300 s by default,
    // counted from the end of the first disruption's grace period): no victim is a replacement
    // created for an earlier victim less than that before.
    std::map<std::string, int64_t> replaced_at;  // replacement uid → when its predecessor was evicted
    for (const auto& e : r.evictions) {
      const int64_t grace = e.pod->spec.TerminationGracePeriodSeconds() * util::kNanosPerSecond;
      const int64_t at = e.at_ns;
      if (auto it = replaced_at.find(e.pod->metadata.uid); it != replaced_at.end()) {
        EXPECT_GE(at - it->second, grace + 300 * util::kNanosPerSecond)
            << e.pod->Key() << " replaced a pod disrupted " << (at - it->second) / util::kNanosPerSecond
            << " s before and was disrupted again: " << e.reason;
      }
      if (e.replacement) replaced_at[e.replacement->metadata.uid] = at;
    }
    // No plan expires without a cause: no node goes away here, so the only one is a more
    // important pod taking the room a plan freed for a less important one (as upstream lets it).
    for (const auto& [reason, n] : st.expired_by) {
      EXPECT_TRUE(reason.starts_with("a more important pod took the room")) << n << " x " << reason;
    }
    // Every plan completed (its preemptor runs) or gave way to a more important pod; nothing is
    // left held.
    for (const auto& rec : st.plan_records) {
      if (rec.outcome.starts_with("expired: a more important pod")) continue;
      EXPECT_EQ(rec.outcome, "completed") << rec.preemptor;
      const auto it =
          std::find_if(r.pods.begin(), r.pods.end(), [&](const auto& p) { return p->Key() == rec.preemptor; });
      // A preemptor may be gone since: evicted in its turn by a more important pod's plan.
      const bool evicted_later = std::any_of(r.evictions.begin(), r.evictions.end(), [&](const auto& e) {
        return e.pod->Key() == rec.preemptor && e.pod->Priority() < 1000;
      });
      if (evicted_later) continue;
      EXPECT_TRUE(it != r.pods.end() && IsRunning(**it))
          << rec.preemptor << " had a plan on " << rec.node << " but is not running";
    }
    EXPECT_EQ(r.cross_node->active_plans, 0u);
    EXPECT_EQ(r.cross_node->held_moves, 0u);
    with_plans += st.plans > 0;
    with_moves += st.moves > 0;
    with_arrivals +=
        std::any_of(in.pods.begin(), in.pods.end(), [](const GenPod& p) { return p.name.starts_with("late"); });
    if (HasFailure()) {  // one case's story is enough to read
      const auto path = std::filesystem::temp_directory_path() / fmt::format("no-churn-case-{}.yaml", i);
      std::ofstream(path) << in.Manifest();
      ADD_FAILURE() << "the case's manifest: " << path.string();
      break;
    }
  }
  // The generator must exercise what the properties are about.
  EXPECT_GE(with_plans, kCases / 2);
  EXPECT_GE(with_moves, kCases / 5);
  EXPECT_GE(with_arrivals, kCases / 2);
  std::cout << "[ no churn ] " << kCases << " cases: " << with_plans << " with plans, " << with_moves << " with moves, "
            << with_arrivals << " with arrivals during plans\n";
}

// --- OptimalRunningPods: the oracle ---------------------------------------------------------------

// The best final state by brute force: every pod of lower priority than the preemptor outside
// kube-system may stay, move to any node (a ReplicaSet's pod: its replacement lands there) or be
// left without a place; the preemptor must run; capacity and the preemptor's zone anti-affinity
// hold at the end. Returns the running pods per priority (1000, 100, 0), lexicographically
// greatest, or nullopt when the preemptor cannot run at all. Sets `gave_up` (and the answer means
// nothing) when the search visits more than `max_steps` partial states.
std::optional<std::array<int, 3>> BestFinalState(const Instance& in, int64_t max_steps, bool& gave_up) {
  gave_up = false;
  int64_t steps = 0;
  const int N = static_cast<int>(in.nodes.size());
  std::vector<int> fixed_cpu(N, 0);
  std::vector<const GenPod*> movable;  // candidates
  const GenPod* preemptor = nullptr;
  std::array<int, 3> fixed_running{0, 0, 0};
  auto level = [](int priority) { return priority == 1000 ? 0 : priority == 100 ? 1 : 2; };
  for (const auto& p : in.pods) {
    if (p.priority == 1000) {
      preemptor = &p;
    } else if (p.ns == "kube-system") {
      if (p.node >= 0) fixed_cpu[p.node] += p.cpu;
    } else if (p.node >= 0) {
      movable.push_back(&p);
    }
  }
  // Larger and more important first: the bound prunes sooner.
  std::stable_sort(movable.begin(), movable.end(), [](const GenPod* a, const GenPod* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->cpu > b->cpu;
  });
  std::optional<std::array<int, 3>> best;
  std::vector<int> remaining_at(3, 0);
  for (const auto* p : movable) ++remaining_at[level(p->priority)];
  for (int pn = 0; pn < N; ++pn) {
    std::vector<int> cpu = fixed_cpu;
    cpu[pn] += preemptor->cpu;
    if (cpu[pn] > in.nodes[pn].cpu) continue;
    const int pzone = in.nodes[pn].zone;
    std::array<int, 3> running = fixed_running;
    running[0] += 1;
    std::vector<int> left = remaining_at;
    std::vector<int> choice(movable.size(), -2);
    std::function<void(size_t)> dfs = [&](size_t i) {
      if (gave_up || ++steps > max_steps) {
        gave_up = true;
        return;
      }
      // Optimistic: every remaining pod runs.
      std::array<int, 3> bound = running;
      for (int l = 0; l < 3; ++l) bound[l] += left[l];
      if (best && bound <= *best) return;
      if (i == movable.size()) {
        best = running;
        return;
      }
      const GenPod& p = *movable[i];
      const int l = level(p.priority);
      --left[l];
      // Identical pods (same priority, size, app label, ownership) take nodes in non-decreasing
      // order: their permutations are the same final state.
      int from = -1;
      if (i > 0) {
        const GenPod& q = *movable[i - 1];
        if (q.priority == p.priority && q.cpu == p.cpu && q.app == p.app && q.owned == p.owned) from = choice[i - 1];
      }
      auto allowed = [&](int n) {
        if (n != p.node && !p.owned) return false;  // a bare pod cannot move
        if (in.nodes[n].zone == pzone && !preemptor->anti_app.empty() && p.app == preemptor->anti_app) return false;
        return cpu[n] + p.cpu <= in.nodes[n].cpu;
      };
      for (int n = std::max(0, from); n < N; ++n) {
        if (!allowed(n)) continue;
        cpu[n] += p.cpu;
        ++running[l];
        choice[i] = n;
        dfs(i + 1);
        --running[l];
        cpu[n] -= p.cpu;
      }
      choice[i] = N;  // left without a place (N: after every node, for the ordering above)
      dfs(i + 1);
      ++left[l];
    };
    dfs(0);
  }
  return best;
}

TEST(OptimalRunningPods, FinalStateMatchesABruteForceOracle) {
  // KUBESCHED_ORACLE_FIRST / KUBESCHED_ORACLE_CASES run other seeds (the generator's cases past
  // these were checked the same way; see the README).
  int kCases = 1000, first = 0;
  if (const char* e = std::getenv("KUBESCHED_ORACLE_CASES")) kCases = std::atoi(e);
  if (const char* e = std::getenv("KUBESCHED_ORACLE_FIRST")) first = std::atoi(e);
  int planned = 0, no_plan = 0, moved = 0, skipped = 0, failed = 0;
  for (int i = first; i < first + kCases; ++i) {
    GenOptions o;
    o.max_nodes = 6;
    const Instance in = Generate(5000 + i, o);
    bool gave_up = false;
    // The few cases whose search passes two million partial states are skipped, and counted.
    const auto oracle = BestFinalState(in, 2'000'000, gave_up);
    if (gave_up) {
      ++skipped;
      continue;
    }
    const SimulationResult r = Simulate(in, i + 1);
    std::array<int, 3> got{0, 0, 0};
    for (const auto& p : r.pods) {
      if (p->metadata.namespace_ == "kube-system" || !IsRunning(*p)) continue;
      const int prio = p->Priority();
      ++got[prio >= 1000 ? 0 : prio >= 100 ? 1 : 2];
    }
    std::string wrong;
    if (!oracle) {
      // No final state runs the preemptor: nothing may be disrupted for it.
      if (got[0] != 0 || !r.evictions.empty()) {
        wrong = fmt::format("no state runs the preemptor, but kubesched runs {} and evicted {}", got[0],
                            r.evictions.size());
      }
      ++no_plan;
    } else {
      if (got != *oracle) {
        wrong = fmt::format("running by priority (1000, 100, 0): kubesched {}/{}/{}, best {}/{}/{}", got[0], got[1],
                            got[2], (*oracle)[0], (*oracle)[1], (*oracle)[2]);
      }
      ++planned;
    }
    moved += r.cross_node && r.cross_node->stats.moves > 0;
    if (!wrong.empty()) {
      const auto path = std::filesystem::temp_directory_path() / fmt::format("oracle-case-{}.yaml", i);
      std::ofstream(path) << in.Manifest();
      ADD_FAILURE() << fmt::format("case {}: {}; the case's manifest: {}\n{}", i, wrong, path.string(), in.Describe());
      ++failed;
    }
  }
  EXPECT_GE(planned, kCases / 2);
  EXPECT_GE(moved, kCases / 5);
  EXPECT_LE(skipped, kCases / 10) << "the oracle gave up on too many cases to mean much";
  std::cout << "[ oracle ] " << kCases << " cases: " << planned << " with a best state running the preemptor, "
            << no_plan << " without, " << moved << " with moves, " << skipped << " skipped (oracle too large), "
            << failed << " not optimal\n";
}

}  // namespace
}  // namespace kubesched::scheduler
