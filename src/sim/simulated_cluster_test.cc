// Tests of the simulated cluster as an API server: graceful deletion on the virtual clock, the
// controllers' replacements, moves, and the scenario timeline.

#include "sim/simulated_cluster.h"

#include <utility>

#include <gtest/gtest.h>

#include "api/manifest.h"
#include "util/duration.h"

namespace kubesched::sim {
namespace {

constexpr int64_t kStart = 1'000 * util::kNanosPerSecond;
constexpr int64_t kSecond = util::kNanosPerSecond;

// Records what an informer would see, one line each ("update default/a", "delete default/a").
class Recorder final : public cluster::EventHandler {
 public:
  void OnNodeAdd(std::shared_ptr<const api::Node> n) override { log.push_back("node-add " + n->metadata.name); }
  void OnNodeUpdate(std::shared_ptr<const api::Node>, std::shared_ptr<const api::Node> n) override {
    log.push_back("node-update " + n->metadata.name);
  }
  void OnNodeDelete(std::shared_ptr<const api::Node> n) override { log.push_back("node-delete " + n->metadata.name); }
  void OnPodAdd(std::shared_ptr<const api::Pod> p) override {
    log.push_back("add " + p->Key());
    last = p;
  }
  void OnPodUpdate(std::shared_ptr<const api::Pod>, std::shared_ptr<const api::Pod> p) override {
    log.push_back("update " + p->Key());
    last = p;
  }
  void OnPodDelete(std::shared_ptr<const api::Pod> p) override {
    log.push_back("delete " + p->Key());
    last = p;
  }
  //! The log since the last call.
  std::vector<std::string> Take() { return std::exchange(log, {}); }

  std::vector<std::string> log;
  std::shared_ptr<const api::Pod> last;
};

api::ClusterObjects Load(const std::string& yaml) {
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  return objects ? std::move(*objects) : api::ClusterObjects{};
}

const std::string kNodes = R"(apiVersion: v1
kind: Node
metadata: {name: n0}
status: {capacity: {cpu: "4", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", pods: "110"}}
---
)";

std::string Pod(const std::string& name, const std::string& spec = "", const std::string& meta = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" + meta +
         "spec:\n  containers: [{name: c, image: x}]\n" + spec + "---\n";
}

struct Fixture {
  explicit Fixture(const std::string& yaml, uint64_t seed = 1) : clock(kStart), cluster(Load(yaml), clock, seed) {
    cluster.Subscribe(&rec);
    rec.Take();
  }
  std::shared_ptr<const api::Pod> Get(const std::string& name) const {
    for (const auto& p : cluster.Pods()) {
      if (p->metadata.name == name) return p;
    }
    return nullptr;
  }
  //! Advances the clock to `t` and fires what is due.
  void RunTo(int64_t t) {
    clock.AdvanceTo(t);
    cluster.FireEvents();
  }

  util::VirtualClock clock;
  SimulatedCluster cluster;
  Recorder rec;
};

// --- Graceful deletion -------------------------------------------------------------------------

TEST(GracefulDeletion, MarksTheVictimThenRemovesItAfterItsGracePeriod) {
  Fixture f(kNodes + Pod("victim", "  nodeName: n0\n  terminationGracePeriodSeconds: 10\n"));
  auto victim = f.Get("victim");
  ASSERT_TRUE(f.cluster.DeletePod(*victim, "Preempted by pod default/p on node n0").IsSuccess());

  // As upstream's preemption: the DisruptionTarget condition (a status write), then the deletion.
  EXPECT_EQ(f.rec.Take(), (std::vector<std::string>{"update default/victim", "update default/victim"}));
  const auto& marked = *f.rec.last;
  ASSERT_TRUE(marked.metadata.deletion_timestamp_ns.has_value());
  EXPECT_EQ(*marked.metadata.deletion_timestamp_ns, kStart + 10 * kSecond);
  ASSERT_FALSE(marked.status.conditions.empty());
  const api::PodCondition& c = marked.status.conditions.back();
  EXPECT_EQ(c.type, "DisruptionTarget");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "PreemptionByScheduler");
  EXPECT_EQ(c.message, "Preempted by pod default/p on node n0");
  EXPECT_EQ(marked.spec.node_name, "n0") << "still bound, holding its resources";
  ASSERT_EQ(f.cluster.Evictions().size(), 1u);
  EXPECT_EQ(f.cluster.Evictions()[0].reason, "Preempted by pod default/p on node n0");
  EXPECT_TRUE(f.cluster.Evictions()[0].moved_to.empty());

  EXPECT_EQ(f.cluster.NextEventNs(), kStart + 10 * kSecond);
  f.RunTo(kStart + 10 * kSecond - 1);
  EXPECT_TRUE(f.rec.Take().empty());
  EXPECT_NE(f.Get("victim"), nullptr);
  f.RunTo(kStart + 10 * kSecond);
  EXPECT_EQ(f.rec.Take(), std::vector<std::string>{"delete default/victim"});
  EXPECT_EQ(f.Get("victim"), nullptr);
  EXPECT_EQ(f.cluster.NextEventNs(), std::nullopt);
}

TEST(GracefulDeletion, DefaultGracePeriodIsThirtySeconds) {
  Fixture f(kNodes + Pod("victim", "  nodeName: n0\n"));
  ASSERT_TRUE(f.cluster.DeletePod(*f.Get("victim"), "r").IsSuccess());
  EXPECT_EQ(f.cluster.NextEventNs(), kStart + 30 * kSecond);
}

TEST(GracefulDeletion, ZeroGraceAndUnboundPodsGoAtOnce) {
  struct Case {
    std::string name;
    std::string spec;
  };
  for (const Case& c : {Case{"grace 0", "  nodeName: n0\n  terminationGracePeriodSeconds: 0\n"},
                        Case{"unbound", "  terminationGracePeriodSeconds: 60\n"}}) {
    SCOPED_TRACE(c.name);
    Fixture f(kNodes + Pod("victim", c.spec));
    ASSERT_TRUE(f.cluster.DeletePod(*f.Get("victim"), "r").IsSuccess());
    EXPECT_EQ(f.rec.Take(), (std::vector<std::string>{"update default/victim", "delete default/victim"}));
    EXPECT_EQ(f.Get("victim"), nullptr);
    EXPECT_EQ(f.cluster.NextEventNs(), std::nullopt);
    EXPECT_EQ(f.cluster.Evictions().size(), 1u);
  }
}

TEST(GracefulDeletion, DeletingATerminatingPodChangesNothing) {
  Fixture f(kNodes + Pod("victim", "  nodeName: n0\n"));
  auto victim = f.Get("victim");
  ASSERT_TRUE(f.cluster.DeletePod(*victim, "first").IsSuccess());
  f.rec.Take();
  f.clock.Advance(5 * kSecond);
  EXPECT_TRUE(f.cluster.DeletePod(*victim, "second").IsSuccess());
  EXPECT_TRUE(f.cluster.DeletePodForMove(*victim, "n1", "third").IsSuccess());
  EXPECT_TRUE(f.rec.Take().empty());
  EXPECT_EQ(f.cluster.Evictions().size(), 1u);
  EXPECT_EQ(*f.Get("victim")->metadata.deletion_timestamp_ns, kStart + 30 * kSecond);
  EXPECT_EQ(f.cluster.NextEventNs(), kStart + 30 * kSecond);
}

TEST(GracefulDeletion, MissingPodIsAnError) {
  Fixture f(kNodes + Pod("victim", "  nodeName: n0\n  terminationGracePeriodSeconds: 0\n"));
  auto victim = f.Get("victim");
  ASSERT_TRUE(f.cluster.DeletePod(*victim, "r").IsSuccess());
  framework::Status s = f.cluster.DeletePod(*victim, "r");
  EXPECT_FALSE(s.IsSuccess());
  EXPECT_EQ(s.Message(), "pods \"victim\" not found");
}

TEST(GracefulDeletion, DeletePodForMoveRecordsTheDestination) {
  Fixture f(kNodes + Pod("victim", "  nodeName: n0\n  terminationGracePeriodSeconds: 0\n"));
  ASSERT_TRUE(f.cluster.DeletePodForMove(*f.Get("victim"), "n1", "moved by p").IsSuccess());
  ASSERT_EQ(f.cluster.Evictions().size(), 1u);
  EXPECT_EQ(f.cluster.Evictions()[0].moved_to, "n1");
  EXPECT_EQ(f.cluster.Evictions()[0].reason, "moved by p");
  EXPECT_EQ(f.cluster.Evictions()[0].pod->metadata.name, "victim");
}

// --- Controllers' replacements -----------------------------------------------------------------

std::string Workload(const std::string& kind, const std::string& api_version, const std::string& extra = "",
                     const std::string& name = "w") {
  return "apiVersion: " + api_version + "\nkind: " + kind + "\nmetadata: {name: " + name + "}\nspec:\n" + extra +
         "  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata: {labels: {app: " + name +
         "}}\n"
         "    spec: {terminationGracePeriodSeconds: 20, containers: [{name: c, image: x}]}\n---\n";
}

// The node a DaemonSet's pod is pinned to (by its required node affinity on metadata.name).
std::optional<std::string> PinnedNode(const api::Pod& pod) {
  const auto& affinity = pod.spec.affinity;
  if (!affinity || !affinity->node_affinity || !affinity->node_affinity->required) return std::nullopt;
  for (const auto& term : affinity->node_affinity->required->terms) {
    for (const auto& r : term.match_fields) {
      if (!r.values.empty()) return r.values.front();
    }
  }
  return std::nullopt;
}

// A Job's pods must not restart (OnFailure or Never), as the API server checks.
std::string JobPodsNeverRestart(std::string job) {
  const std::string grace = "terminationGracePeriodSeconds: 20,";
  return job.replace(job.find(grace), grace.size(), "restartPolicy: Never, " + grace);
}

TEST(Controllers, ReplaceAtDeletionStartOrAfterRemovalByKind) {
  struct Case {
    std::string name;
    std::string yaml;
    bool at_start;  // the replacement comes when the deletion starts (else: at the removal)
  };
  const std::vector<Case> cases = {
      {"Deployment", Workload("Deployment", "apps/v1", "  replicas: 1\n"), true},
      {"ReplicaSet", Workload("ReplicaSet", "apps/v1", "  replicas: 1\n"), true},
      {"Job", JobPodsNeverRestart(Workload("Job", "batch/v1", "  parallelism: 1\n")), true},
      {"StatefulSet", Workload("StatefulSet", "apps/v1", "  replicas: 1\n"), false},
      {"DaemonSet", Workload("DaemonSet", "apps/v1"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto objects = Load(kNodes + c.yaml);
    ASSERT_FALSE(objects.pods.empty());
    for (auto& p : objects.pods) {
      p->spec.node_name = PinnedNode(*p).value_or("n0");  // running (a DaemonSet's on its node)
      p->json.reset();                                    // its kept JSON no longer says what it is
    }
    util::VirtualClock clock(kStart);
    SimulatedCluster cluster(std::move(objects), clock, 1);
    Recorder rec;
    cluster.Subscribe(&rec);
    rec.Take();
    auto victim = cluster.Pods().front();
    ASSERT_TRUE(cluster.DeletePod(*victim, "r").IsSuccess());
    auto log = rec.Take();
    ASSERT_FALSE(log.empty());
    // The DisruptionTarget condition, the deletion's start, and perhaps the replacement.
    EXPECT_EQ(log[0], "update " + victim->Key());
    EXPECT_EQ(log[1], "update " + victim->Key());
    EXPECT_EQ(log.size(), c.at_start ? 3u : 2u);
    EXPECT_EQ(cluster.Evictions()[0].replacement != nullptr, c.at_start);

    clock.AdvanceTo(kStart + 20 * kSecond);
    EXPECT_TRUE(cluster.FireEvents());
    log = rec.Take();
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log[0], "delete " + victim->Key());
    EXPECT_EQ(log.size(), c.at_start ? 1u : 2u);
    auto replacement = cluster.Evictions()[0].replacement;
    ASSERT_NE(replacement, nullptr);
    EXPECT_TRUE(replacement->spec.node_name.empty());
    EXPECT_FALSE(replacement->metadata.deletion_timestamp_ns.has_value());
    EXPECT_NE(replacement->metadata.uid, victim->metadata.uid);
    EXPECT_EQ(replacement->metadata.creation_timestamp_ns, c.at_start ? kStart : kStart + 20 * kSecond);
    if (c.name == "StatefulSet") {
      EXPECT_EQ(replacement->metadata.name, victim->metadata.name);
    }
    if (!c.at_start) {
      EXPECT_EQ(log[1], "add " + replacement->Key());
    }
  }
}

// --- Scenario timeline -------------------------------------------------------------------------

TEST(Timeline, CreatesAndDeletesPodsLater) {
  Fixture f(kNodes + Pod("late", "", "  annotations: {simulate.kubesched.io/create-after: 1m30s}\n") +
            Pod("short-lived", "  nodeName: n0\n  terminationGracePeriodSeconds: 5\n",
                "  annotations: {simulate.kubesched.io/delete-after: 10s}\n"));
  EXPECT_EQ(f.Get("late"), nullptr) << "does not exist at the start";
  EXPECT_NE(f.Get("short-lived"), nullptr);
  EXPECT_EQ(f.cluster.NextEventNs(), kStart + 10 * kSecond);

  f.RunTo(kStart + 10 * kSecond);
  EXPECT_EQ(f.rec.Take(), std::vector<std::string>{"update default/short-lived"});
  for (const auto& c : f.rec.last->status.conditions) {
    EXPECT_NE(c.type, "DisruptionTarget") << "not preempted";
  }
  EXPECT_TRUE(f.cluster.Evictions().empty()) << "not an eviction";
  f.RunTo(kStart + 15 * kSecond);
  EXPECT_EQ(f.rec.Take(), std::vector<std::string>{"delete default/short-lived"});

  EXPECT_EQ(f.cluster.NextEventNs(), kStart + 90 * kSecond);
  f.RunTo(kStart + 90 * kSecond);
  EXPECT_EQ(f.rec.Take(), std::vector<std::string>{"add default/late"});
  ASSERT_NE(f.Get("late"), nullptr);
  EXPECT_EQ(f.Get("late")->metadata.creation_timestamp_ns, kStart + 90 * kSecond);
  EXPECT_EQ(f.cluster.NextEventNs(), std::nullopt);
}

TEST(Timeline, CreatesAndDeletesNodesWithTheirPods) {
  const std::string yaml = R"(apiVersion: v1
kind: Node
metadata:
  name: spare
  annotations: {simulate.kubesched.io/create-after: 500ms}
status: {capacity: {cpu: "4", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata:
  name: doomed
  annotations: {simulate.kubesched.io/delete-after: 2s}
status: {capacity: {cpu: "4", pods: "110"}}
---
)" + Workload("ReplicaSet", "apps/v1", "  replicas: 1\n") +
                           Workload("DaemonSet", "apps/v1", "", "ds") + Pod("bare", "  nodeName: doomed\n");
  auto objects = Load(yaml);
  for (auto& p : objects.pods) {
    p->spec.node_name = "doomed";
    p->json.reset();  // its kept JSON no longer says what it is
  }
  const size_t pods = objects.pods.size();
  ASSERT_GE(pods, 3u);
  util::VirtualClock clock(kStart);
  SimulatedCluster cluster(std::move(objects), clock, 1);
  Recorder rec;
  cluster.Subscribe(&rec);
  EXPECT_EQ(rec.log.front(), "node-add doomed") << "spare does not exist yet";
  EXPECT_EQ(cluster.Nodes().size(), 1u);
  rec.Take();

  clock.AdvanceTo(kStart + 500'000'000);
  EXPECT_TRUE(cluster.FireEvents());
  // The DaemonSet controller makes a pod for the new node at once.
  auto added = rec.Take();
  ASSERT_EQ(added.size(), 2u) << ::testing::PrintToString(added);
  EXPECT_EQ(added[0], "node-add spare");
  EXPECT_TRUE(added[1].starts_with("add default/ds-")) << added[1];
  EXPECT_EQ(cluster.Nodes().size(), 2u);

  clock.AdvanceTo(kStart + 2 * kSecond);
  EXPECT_TRUE(cluster.FireEvents());
  auto log = rec.Take();
  // The node goes, then its pods (the ReplicaSet's, the DaemonSet's, the bare one) at once, as
  // the pod garbage collector removes them, without grace; only the ReplicaSet's pod comes back
  // (the DaemonSet's node is gone, the bare pod has no controller).
  ASSERT_EQ(log.size(), pods + 2) << ::testing::PrintToString(log);
  EXPECT_EQ(log[0], "node-delete doomed");
  size_t deletes = 0, replacements = 0;
  for (size_t i = 1; i < log.size(); ++i) {
    deletes += log[i].starts_with("delete ");
    replacements += log[i].starts_with("add default/w-");
  }
  EXPECT_EQ(deletes, pods) << ::testing::PrintToString(log);
  EXPECT_EQ(replacements, 1u) << ::testing::PrintToString(log);
  EXPECT_EQ(cluster.Nodes().size(), 1u);
  EXPECT_TRUE(cluster.Evictions().empty());
  // The ReplicaSet's replacement, pending, and the DaemonSet's pod on spare.
  std::shared_ptr<const api::Pod> replacement;
  for (const auto& p : cluster.Pods()) {
    if (p->metadata.name.starts_with("w-")) replacement = p;
  }
  ASSERT_EQ(cluster.Pods().size(), 2u);
  ASSERT_NE(replacement, nullptr);
  EXPECT_TRUE(replacement->spec.node_name.empty());
  EXPECT_TRUE(cluster.Bind(*replacement, "spare").IsSuccess());
}

TEST(Timeline, BadDurationIsAManifestError) {
  struct Case {
    std::string name;
    std::string value;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"unknown unit", "5x",
            "test.yaml: document 1 (Pod default/p): "
            "metadata.annotations[simulate.kubesched.io/create-after]: invalid duration \"5x\": unknown unit \"x\" "
            "(use "
            "ns, us, ms, s, m or h) (line 5)"},
           {"no unit", "30",
            "test.yaml: document 1 (Pod default/p): "
            "metadata.annotations[simulate.kubesched.io/create-after]: invalid duration \"30\": missing unit (use ns, "
            "us, ms, s, m or h) (line 5)"},
           {"negative", "-1s",
            "test.yaml: document 1 (Pod default/p): "
            "metadata.annotations[simulate.kubesched.io/create-after]: must not be negative, got \"-1s\" (line 5)"},
       }) {
    SCOPED_TRACE(c.name);
    auto r = api::LoadManifestsFromString(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "  annotations: {simulate.kubesched.io/create-after: \"" +
            c.value + "\"}\nspec: {containers: [{name: c, image: x}]}\n",
        "test.yaml");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().ToString(), c.error);
  }
}

TEST(Timeline, DurationSyntax) {
  struct Case {
    std::string text;
    int64_t ns;
  };
  for (const Case& c : std::vector<Case>{{"30s", 30 * kSecond},
                                         {"1m30s", 90 * kSecond},
                                         {"500ms", kSecond / 2},
                                         {"2h", 7200 * kSecond},
                                         {"1.5h", 5400 * kSecond},
                                         {"0", 0},
                                         {"10us", 10'000},
                                         {"7ns", 7}}) {
    SCOPED_TRACE(c.text);
    auto d = util::ParseDuration(c.text);
    ASSERT_TRUE(d.has_value()) << d.error();
    EXPECT_EQ(*d, c.ns);
  }
  for (std::string bad : {"", "s", "1", ".s", "3d", "1m30"}) EXPECT_FALSE(util::ParseDuration(bad).has_value()) << bad;
}

}  // namespace
}  // namespace kubesched::sim
