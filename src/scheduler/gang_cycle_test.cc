// The scheduler with GangScheduling's group cycle (in the default profile): a gang that cannot
// complete is not placed, holds no room and no member waits at Permit; a gang that fits is placed
// whole and its PodGroup says so; a recreated member of a placed gang joins it on its own.

#include <gtest/gtest.h>

#include <map>

#include "api/json.h"
#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"

namespace kubesched::scheduler {
namespace {

std::string Nodes(int n, const std::string& cpu) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "apiVersion: v1\nkind: Node\nmetadata: {name: n" + std::to_string(i) + "}\nstatus: {capacity: {cpu: \"" +
           cpu + "\", memory: 8Gi, pods: \"110\"}}\n---\n";
  }
  return out;
}

std::string Gang(const std::string& name, int min_count) {
  return "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         "}\nspec: {schedulingPolicy: {gang: {minCount: " + std::to_string(min_count) + "}}}\n---\n";
}

std::string Member(const std::string& group, const std::string& name, const std::string& cpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  schedulingGroup: {podGroupName: " + group +
         "}\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n---\n";
}

std::string Members(const std::string& group, int n, const std::string& cpu) {
  std::string out;
  for (int i = 0; i < n; ++i) out += Member(group, group + "-" + std::to_string(i), cpu);
  return out;
}

struct Harness {
  framework::Registry registry;
  util::VirtualClock clock{1'700'000'000LL * util::kNanosPerSecond};
  std::unique_ptr<sim::SimulatedCluster> cluster;
  std::unique_ptr<Scheduler> sched;

  explicit Harness(const std::string& yaml) {
    plugins::RegisterInTreePlugins(registry);
    auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
    EXPECT_TRUE(objects.has_value());
    cluster = std::make_unique<sim::SimulatedCluster>(std::move(*objects), clock, 1);
    SchedulerOptions opts;
    opts.config = config::DefaultConfiguration(registry);
    auto s = Scheduler::Create(opts, *cluster, clock, registry);
    EXPECT_TRUE(s.has_value()) << s.error();
    sched = std::move(*s);
    cluster->Subscribe(sched.get());
  }
  // Cycles until nothing is active (timers fired between rounds: Permit timeouts, backoff).
  void Drain() {
    for (int round = 0; round < 10; ++round) {
      sched->FireTimers();
      while (sched->ScheduleOne()) sched->RunPendingBindings();
      sched->RunPendingBindings();
    }
  }
  std::map<std::string, std::string> Placement() const {
    std::map<std::string, std::string> out;
    for (const auto& p : cluster->Pods()) out[p->metadata.name] = p->spec.node_name;
    return out;
  }
  size_t Bound() const {
    size_t n = 0;
    for (const auto& [pod, node] : Placement()) n += node.empty() ? 0 : 1;
    return n;
  }
  size_t Waiting() {
    size_t n = 0;
    sched->FrameworkFor("default-scheduler")->IterateOverWaitingPods([&](framework::WaitingPod&) { ++n; });
    return n;
  }
  // The PodGroupScheduled condition of the group "default/<name>": "status/reason", or "".
  std::string Condition(const std::string& name) {
    store::Store& store = cluster->Store();
    auto got = store.Get(*store.FindResource("scheduling.k8s.io", "podgroups"), "default", name);
    if (!got) return "";
    api::json::Document doc;
    if (!api::json::Parse((*got)->json.str(), doc)) return "";
    const auto* status = api::json::Find(doc, "status");
    const auto* conditions = status ? api::json::Find(*status, "conditions") : nullptr;
    if (conditions == nullptr || !conditions->IsArray()) return "";
    for (const auto& c : conditions->GetArray()) {
      if (api::json::GetString(c, "type") == "PodGroupScheduled") {
        return std::string(api::json::GetString(c, "status")) + "/" + std::string(api::json::GetString(c, "reason"));
      }
    }
    return "";
  }
};

TEST(GangSchedulingCycle, AGangThatCannotCompleteHoldsNothing) {
  Harness h(Nodes(2, "1") + Gang("g", 3) + Members("g", 3, "1"));
  h.Drain();
  EXPECT_EQ(h.Bound(), 0u);
  EXPECT_EQ(h.Waiting(), 0u) << "no member waits at Permit holding room";
  EXPECT_EQ(h.Condition("g"), "False/Unschedulable");
  for (const char* node : {"n0", "n1"}) {
    EXPECT_TRUE(h.sched->queue().NominatedPodsForNode(node).empty())
        << "nothing is planned for a gang that cannot complete on " << node;
  }
}

TEST(GangSchedulingCycle, AGangThatFitsIsPlacedWholeAndItsPodGroupSaysSo) {
  Harness h(Nodes(3, "1") + Gang("g", 3) + Members("g", 3, "1"));
  h.Drain();
  EXPECT_EQ(h.Bound(), 3u);
  EXPECT_EQ(h.Waiting(), 0u);
  EXPECT_EQ(h.Condition("g"), "True/Scheduled");
}

TEST(GangSchedulingCycle, TheFirstMemberPoppedDecidesForTheWholeGroup) {
  // A quorum passes PreEnqueue: every member is in activeQ, and the first one's cycle places all.
  Harness h(Nodes(2, "2") + Gang("g", 4) + Members("g", 4, "1"));
  EXPECT_EQ(h.sched->queue().NumActive(), 4u);
  ASSERT_TRUE(h.sched->ScheduleOne());
  h.sched->RunPendingBindings();
  // The other three follow the plan the first cycle made; the fourth Permit lets all bind.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(h.sched->ScheduleOne());
    h.sched->RunPendingBindings();
  }
  EXPECT_EQ(h.Bound(), 4u);
  EXPECT_EQ(h.Waiting(), 0u);
}

TEST(GangSchedulingCycle, ARecreatedMemberOfAPlacedGangJoinsIt) {
  Harness h(Nodes(3, "1") + Gang("g", 2) + Members("g", 2, "1"));
  h.Drain();
  ASSERT_EQ(h.Bound(), 2u);
  // A third member, created later: minCount members are placed already, so it joins on its own.
  api::json::Document doc;
  ASSERT_TRUE(
      api::json::Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"g-late","namespace":"default"},)"
                       R"("spec":{"schedulingGroup":{"podGroupName":"g"},"containers":[{"name":"c","image":"x",)"
                       R"("resources":{"requests":{"cpu":"1"}}}]}})",
                       doc));
  store::Store& store = h.cluster->Store();
  ASSERT_TRUE(store.Create(*store.FindResource("", "pods"), "default", std::move(doc)).has_value());
  h.Drain();
  EXPECT_EQ(h.Bound(), 3u);
  EXPECT_FALSE(h.Placement()["g-late"].empty());
}

}  // namespace
}  // namespace kubesched::scheduler
