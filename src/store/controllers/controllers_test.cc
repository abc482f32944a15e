#include <thread>

#include <gtest/gtest.h>

#include "store/controllers/controller.h"
#include "store/controllers/deployment_controller.h"
#include "store/controllers/realtime_runner.h"
#include "store/meta.h"
#include "store/store_test_util.h"

namespace kubesched::store::controllers {
namespace {

using namespace std::chrono_literals;
using testing::Field;
using testing::NodeJson;
using testing::PodJson;

class ControllersTest : public testing::StoreFixture {
 public:
  ControllersTest() : manager(NewDefaultControllerManager(*store, clock)) { manager->Start(); }
  std::vector<ObjectPtr> ListPods(std::string_view label_selector = "") {
    auto r = store->List(Pods(), "", ListOptions{.selectors = {std::string(label_selector), ""}});
    EXPECT_TRUE(r.has_value());
    return r ? r->items : std::vector<ObjectPtr>{};
  }
  void Advance(int64_t seconds) {
    clock.Advance(seconds * util::kNanosPerSecond);
    manager->FireEvents();
  }

  std::unique_ptr<ControllerManager> manager;
};

const char* kReplicaSet = R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web"},
  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})";

const char* kDeployment = R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"},
  "spec":{"replicas":2,"selector":{"matchLabels":{"app":"api"}},
  "template":{"metadata":{"labels":{"app":"api"}},"spec":{"containers":[{"name":"c","image":"api:1"}]}}}})";

TEST_F(ControllersTest, BoundPodStartsOnItsNode) {
  MustCreate(Nodes(), "", NodeJson("n1", "192.168.0.10"));
  auto pod = MustCreate(Pods(), "default", PodJson("p"));
  ASSERT_TRUE(store->Bind("default", "p", pod->uid, "n1"));
  auto running = MustGet(Pods(), "default", "p");
  EXPECT_EQ(Field(*running, "status.phase"), "Running");
  EXPECT_EQ(Field(*running, "status.hostIP"), "192.168.0.10");
  EXPECT_EQ(Field(*running, "status.podIP"), "10.244.0.2");
  EXPECT_EQ(Field(*running, "status.startTime"), "2024-05-01T12:00:00Z");
  std::vector<std::string> types;
  for (int i = 0; i < 4; ++i) types.push_back(Field(*running, "status.conditions." + std::to_string(i) + ".type"));
  EXPECT_EQ(types, (std::vector<std::string>{"Initialized", "Ready", "ContainersReady", "PodScheduled"}));
  EXPECT_EQ(Field(*running, "status.containerStatuses.0.ready"), "true");
  EXPECT_EQ(running->View<api::Pod>()->status.phase, api::PodPhase::kRunning);
}

// A started pod reports its containers, and keeps the conditions others set (read from its JSON,
// which the typed view does not keep whole) after the kubelet's.
TEST_F(ControllersTest, StartedPodKeepsOtherConditionsAndReportsItsContainers) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Pods(), "default",
             R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1","containers":[{"name":"a","image":"img:1"},
      {"name":"b","image":"img:2"}]},"status":{"conditions":[{"type":"DisruptionTarget","status":"True",
      "reason":"PreemptionByScheduler","lastTransitionTime":"2024-05-01T11:00:00Z"}]}})");
  auto running = MustGet(Pods(), "default", "p");
  EXPECT_EQ(Field(*running, "status.phase"), "Running");
  EXPECT_EQ(Field(*running, "status.conditions.0.type"), "DisruptionTarget");
  EXPECT_EQ(Field(*running, "status.conditions.0.lastTransitionTime"), "2024-05-01T11:00:00Z");
  EXPECT_EQ(Field(*running, "status.conditions.4.type"), "PodScheduled");
  EXPECT_EQ(Field(*running, "status.containerStatuses.0.name"), "a");
  EXPECT_EQ(Field(*running, "status.containerStatuses.1.image"), "img:2");
  EXPECT_EQ(Field(*running, "status.containerStatuses.2.name"), "<none>");
}

TEST_F(ControllersTest, PodWaitsForItsNode) {
  MustCreate(Pods(), "default", PodJson("p", R"(,"nodeName":"later")"));
  EXPECT_EQ(Field(*MustGet(Pods(), "default", "p"), "status.phase"), "Pending");
  MustCreate(Nodes(), "", NodeJson("later"));
  EXPECT_EQ(Field(*MustGet(Pods(), "default", "p"), "status.phase"), "Running");
}

TEST_F(ControllersTest, TerminatingPodGoesWhenItsTimeComes) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Pods(), "default", PodJson("p", R"(,"nodeName":"n1","terminationGracePeriodSeconds":10)"));
  ASSERT_TRUE(store->Delete(Pods(), "default", "p", {}));
  EXPECT_EQ(manager->NextEventNs(), testing::kStartNs + 10 * util::kNanosPerSecond);
  Advance(9);
  EXPECT_TRUE(store->Get(Pods(), "default", "p").has_value());
  Advance(1);
  EXPECT_FALSE(store->Get(Pods(), "default", "p").has_value());
  EXPECT_EQ(manager->NextEventNs(), std::nullopt);
}

TEST_F(ControllersTest, DeletedNodesPodsAreRemoved) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Nodes(), "", NodeJson("n2", "10.0.0.2"));
  MustCreate(Pods(), "default", PodJson("a", R"(,"nodeName":"n1")"));
  MustCreate(Pods(), "default", PodJson("b", R"(,"nodeName":"n2")"));
  ASSERT_TRUE(store->Delete(Nodes(), "", "n1", {}));
  EXPECT_FALSE(store->Get(Pods(), "default", "a").has_value());
  EXPECT_TRUE(store->Get(Pods(), "default", "b").has_value());
}

TEST_F(ControllersTest, ReplicaSetKeepsItsReplicas) {
  const auto& rs_type = R("apps", "replicasets");
  auto rs = MustCreate(rs_type, "default", kReplicaSet);
  auto pods = ListPods("app=web");
  ASSERT_EQ(pods.size(), 3u);
  for (const auto& p : pods) {
    EXPECT_EQ(p->name.substr(0, 4), "web-");
    EXPECT_EQ(p->name.size(), 9u);
    EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.uid"), rs->uid);
    EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.controller"), "true");
  }
  auto status = MustGet(rs_type, "default", "web");
  EXPECT_EQ(Field(*status, "status.replicas"), "3");
  EXPECT_EQ(Field(*status, "status.readyReplicas"), "0");
  EXPECT_EQ(Field(*status, "status.observedGeneration"), "1");

  // A deleted pod is replaced; a terminating one does not count.
  MustCreate(Nodes(), "", NodeJson("n1"));
  ASSERT_TRUE(store->Bind("default", pods[0]->name, "", "n1"));
  ASSERT_TRUE(store->Delete(Pods(), "default", pods[0]->name, {}));
  auto now = ListPods("app=web");
  EXPECT_EQ(now.size(), 4u);  // three active and the terminating one
  EXPECT_EQ(Field(*MustGet(rs_type, "default", "web"), "status.replicas"), "3");

  ASSERT_TRUE(store->Patch(rs_type, "default", "web", PatchType::kMergePatch, R"({"spec":{"replicas":1}})", ""));
  int active = 0;
  for (const auto& p : ListPods("app=web")) active += Field(*p, "metadata.deletionTimestamp") == "<none>";
  EXPECT_EQ(active, 1);
  EXPECT_EQ(Field(*MustGet(rs_type, "default", "web"), "status.observedGeneration"), "2");

  ASSERT_TRUE(store->Delete(rs_type, "default", "web", {}));
  for (const auto& p : ListPods("app=web")) EXPECT_NE(Field(*p, "metadata.deletionTimestamp"), "<none>");
}

TEST_F(ControllersTest, DeploymentOwnsOneReplicaSetPerTemplate) {
  const auto& deployments = R("apps", "deployments");
  const auto& rs_type = R("apps", "replicasets");
  MustCreate(Nodes(), "", NodeJson("n1"));
  auto d = MustCreate(deployments, "default", kDeployment);
  auto sets = store->List(rs_type, "default", {});
  ASSERT_EQ(sets->items.size(), 1u);
  const ObjectPtr rs = sets->items[0];
  const std::string hash = Field(*rs, "metadata.labels.pod-template-hash");
  EXPECT_EQ(rs->name, "api-" + hash);
  EXPECT_LE(hash.size(), 10u);
  EXPECT_EQ(Field(*rs, "spec.selector.matchLabels.pod-template-hash"), hash);
  EXPECT_EQ(Field(*rs, "metadata.ownerReferences.0.uid"), d->uid);
  auto pods = ListPods("app=api");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods) {
    EXPECT_EQ(p->name.substr(0, rs->name.size() + 1), rs->name + "-");
    EXPECT_EQ(Field(*p, "metadata.labels.pod-template-hash"), hash);
    ASSERT_TRUE(store->Bind("default", p->name, "", "n1"));
  }
  auto status = MustGet(deployments, "default", "api");
  EXPECT_EQ(Field(*status, "status.replicas"), "2");
  EXPECT_EQ(Field(*status, "status.readyReplicas"), "2");
  EXPECT_EQ(Field(*status, "status.availableReplicas"), "2");
  EXPECT_EQ(Field(*status, "status.updatedReplicas"), "2");

  // A new template: a new ReplicaSet; the old one goes to zero.
  ASSERT_TRUE(store->Patch(deployments, "default", "api", PatchType::kStrategicMergePatch,
                           R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"api:2"}]}}}})", ""));
  sets = store->List(rs_type, "default", {});
  ASSERT_EQ(sets->items.size(), 2u);
  for (const auto& s : sets->items) {
    EXPECT_EQ(Field(*s, "spec.replicas"), s->name == rs->name ? "0" : "2") << s->name;
  }
  EXPECT_EQ(Field(*MustGet(deployments, "default", "api"), "status.observedGeneration"), "2");
}

// deployment.kubernetes.io/revision, as upstream numbers a rollout's ReplicaSets: each new
// template's ReplicaSet one past the highest, the Deployment carrying its current one's; going
// back to an old template (what `kubectl rollout undo` patches in) makes that ReplicaSet current
// again with the next revision, and no new ReplicaSet.
TEST_F(ControllersTest, DeploymentRevisionsNumberTheRolloutAndARollbackReusesItsReplicaSet) {
  const auto& deployments = R("apps", "deployments");
  const auto& rs_type = R("apps", "replicasets");
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(deployments, "default", kDeployment);
  // The annotation's key has dots, which Field reads as steps.
  auto revision_of = [](const Object& o) {
    api::json::Document doc;
    if (!api::json::Parse(o.json, doc)) return std::string("<unparsable>");
    const api::json::Value* a = api::json::Find(doc["metadata"], "annotations");
    return a ? std::string(api::json::GetString(*a, "deployment.kubernetes.io/revision")) : std::string("<none>");
  };
  auto revisions = [&] {
    std::map<std::string, std::string> out;
    auto sets = store->List(rs_type, "default", {});
    for (const auto& s : sets->items) {
      out[Field(*s, "spec.template.spec.containers.0.image")] = revision_of(*s) + "/" + Field(*s, "spec.replicas");
    }
    return out;
  };
  auto set_image = [&](const std::string& image) {
    ASSERT_TRUE(
        store->Patch(deployments, "default", "api", PatchType::kStrategicMergePatch,
                     R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":")" + image + R"("}]}}}})", ""));
  };
  const std::string first =
      Field(*store->List(rs_type, "default", {})->items[0], "spec.template.spec.containers.0.image");
  EXPECT_EQ(revisions(), (std::map<std::string, std::string>{{first, "1/2"}}));
  EXPECT_EQ(revision_of(*MustGet(deployments, "default", "api")), "1");

  set_image("api:2");
  EXPECT_EQ(revisions(), (std::map<std::string, std::string>{{first, "1/0"}, {"api:2", "2/2"}}));
  EXPECT_EQ(revision_of(*MustGet(deployments, "default", "api")), "2");

  set_image(first);  // the rollback
  EXPECT_EQ(revisions(), (std::map<std::string, std::string>{{first, "3/2"}, {"api:2", "2/0"}}));
  EXPECT_EQ(revision_of(*MustGet(deployments, "default", "api")), "3");
}

TEST_F(ControllersTest, DisruptionBudgetGuardsEvictions) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  for (const char* n : {"a", "b"}) MustCreate(Pods(), "default", PodJson(n, R"(,"nodeName":"n1")", R"({"app":"db"})"));
  const auto& pdbs = R("policy", "poddisruptionbudgets");
  MustCreate(pdbs, "default",
             R"({"metadata":{"name":"db"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"db"}}}})");
  auto pdb = MustGet(pdbs, "default", "db");
  EXPECT_EQ(Field(*pdb, "status.expectedPods"), "2");
  EXPECT_EQ(Field(*pdb, "status.currentHealthy"), "2");
  EXPECT_EQ(Field(*pdb, "status.desiredHealthy"), "1");
  EXPECT_EQ(Field(*pdb, "status.disruptionsAllowed"), "1");
  EXPECT_EQ(Field(*pdb, "status.conditions.0.reason"), "SufficientPods");
  ASSERT_TRUE(store->Evict("default", "a", {}));
  auto second = store->Evict("default", "b", {});
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().HttpCode(), 429);
  pdb = MustGet(pdbs, "default", "db");
  EXPECT_EQ(Field(*pdb, "status.disruptionsAllowed"), "0");
  EXPECT_EQ(Field(*pdb, "status.currentHealthy"), "1");
  // Once the evicted pod is gone and the budget has room again, the eviction goes through.
  MustCreate(Pods(), "default", PodJson("c", R"(,"nodeName":"n1")", R"({"app":"db"})"));
  EXPECT_TRUE(store->Evict("default", "b", {}).has_value());

  MustCreate(
      pdbs, "default",
      R"({"metadata":{"name":"pct"},"spec":{"maxUnavailable":"50%","selector":{"matchLabels":{"app":"none"}}}})");
  EXPECT_EQ(Field(*MustGet(pdbs, "default", "pct"), "status.disruptionsAllowed"), "0");
}

TEST(ControllersDeterminismTest, SameSeedSameNames) {
  auto run = [] {
    util::VirtualClock clock(testing::kStartNs);
    StoreOptions options;
    options.seed = 42;
    auto store = NewBuiltinStore(clock, options);
    auto manager = NewDefaultControllerManager(*store, clock, 42);
    manager->Start();
    (void)store->Create(*store->FindResource("apps", "deployments"), "default", testing::Doc(kDeployment));
    std::vector<std::string> names;
    auto listed = store->List(*store->FindResource("", "pods"), "", {});
    for (const auto& p : listed->items) names.push_back(p->name + p->uid);
    return names;
  };
  auto first = run();
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(first, run());
}

// What the loader leaves in the store before the controllers start: a Deployment, its ReplicaSet
// named with the loader's own hash, and that ReplicaSet's pods, all owned by uid.
class LoadedClusterTest : public testing::StoreFixture {
 public:
  ObjectPtr CreateOwned(const ResourceType& type, std::string text, const ObjectPtr& owner, std::string_view kind) {
    auto doc = testing::Doc(text);
    auto& a = doc.GetAllocator();
    api::json::Value ref(rapidjson::kObjectType);
    api::json::Set(ref, "apiVersion", api::json::MakeString("apps/v1", a), a);
    api::json::Set(ref, "kind", api::json::MakeString(kind, a), a);
    api::json::Set(ref, "name", api::json::MakeString(owner->name, a), a);
    api::json::Set(ref, "uid", api::json::MakeString(owner->uid, a), a);
    api::json::Set(ref, "controller", api::json::Value(true), a);
    api::json::Value refs(rapidjson::kArrayType);
    refs.PushBack(ref, a);
    api::json::Set(api::json::Child(doc, "metadata", a), "ownerReferences", std::move(refs), a);
    auto r = store->Create(type, "default", std::move(doc));
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r ? *r : nullptr;
  }
  ObjectPtr LoadDeployment() {
    auto d = MustCreate(R("apps", "deployments"), "default", kDeployment);
    auto rs = CreateOwned(R("apps", "replicasets"), R"({"metadata":{"name":"api-loaderhash","labels":{"app":"api",
      "pod-template-hash":"loaderhash"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"api",
      "pod-template-hash":"loaderhash"}},"template":{"metadata":{"labels":{"app":"api","pod-template-hash":"loaderhash"}},
      "spec":{"containers":[{"name":"c","image":"api:1"}]}}}})",
                          d, "Deployment");
    for (const char* name : {"api-loaderhash-aaaaa", "api-loaderhash-bbbbb"}) {
      CreateOwned(Pods(), std::string(R"({"metadata":{"name":")") + name + R"(","labels":{"app":"api",
        "pod-template-hash":"loaderhash"}},"spec":{"containers":[{"name":"c","image":"api:1"}]}})",
                  rs, "ReplicaSet");
    }
    return d;
  }
};

TEST_F(LoadedClusterTest, DeploymentAdoptsTheLoadersReplicaSet) {
  LoadDeployment();
  auto manager = NewDefaultControllerManager(*store, clock, 7);
  manager->Start();
  auto sets = store->List(R("apps", "replicasets"), "default", {});
  ASSERT_EQ(sets->items.size(), 1u);
  EXPECT_EQ(sets->items[0]->name, "api-loaderhash");
  EXPECT_EQ(Field(*sets->items[0], "spec.replicas"), "2");
  EXPECT_EQ(store->List(Pods(), "default", {})->items.size(), 2u);
  EXPECT_EQ(Field(*MustGet(R("apps", "deployments"), "default", "api"), "status.replicas"), "2");
  EXPECT_EQ(Field(*MustGet(R("apps", "deployments"), "default", "api"), "status.updatedReplicas"), "2");
  // A scale goes to the adopted ReplicaSet.
  ASSERT_TRUE(store->Patch(R("apps", "deployments"), "default", "api", PatchType::kMergePatch,
                           R"({"spec":{"replicas":3}})", ""));
  EXPECT_EQ(Field(*MustGet(R("apps", "replicasets"), "default", "api-loaderhash"), "spec.replicas"), "3");
  EXPECT_EQ(store->List(Pods(), "default", {})->items.size(), 3u);
}

TEST_F(LoadedClusterTest, ReplacementNamesAreSimulatedClustersNames) {
  LoadDeployment();
  auto manager = NewDefaultControllerManager(*store, clock, 7);
  manager->Start();
  // SimulatedCluster seeds its Rng with seed ^ 0x9e3779b97f4a7c15 and draws one name per
  // replacement through api::NewPodForWorkload (api::GenerateName of `<rs>-`).
  api::Rng rng(7 ^ 0x9e3779b97f4a7c15ULL);
  for (const char* victim : {"api-loaderhash-aaaaa", "api-loaderhash-bbbbb"}) {
    const std::string expected = api::GenerateName("api-loaderhash-", rng);
    ASSERT_TRUE(store->Delete(Pods(), "default", victim, {}));  // unbound: gone at once
    auto replacement = store->Get(Pods(), "default", expected);
    ASSERT_TRUE(replacement.has_value()) << expected;
    EXPECT_EQ(Field(**replacement, "metadata.generateName"), "api-loaderhash-");
    EXPECT_EQ(Field(**replacement, "metadata.labels.pod-template-hash"), "loaderhash");
    EXPECT_EQ(Field(**replacement, "metadata.ownerReferences.0.blockOwnerDeletion"), "true");
  }
  EXPECT_EQ(store->List(Pods(), "default", {})->items.size(), 2u);
}

TEST(PodTemplateHashTest, DependsOnTheTemplate) {
  auto a = testing::Doc(R"({"spec":{"containers":[{"name":"c","image":"x:1"}]}})");
  auto b = testing::Doc(R"({"spec":{"containers":[{"name":"c","image":"x:2"}]}})");
  EXPECT_EQ(PodTemplateHash(a), PodTemplateHash(a));
  EXPECT_NE(PodTemplateHash(a), PodTemplateHash(b));
  for (char c : PodTemplateHash(a)) EXPECT_NE(api::kNameSuffixAlphabet.find(c), std::string_view::npos);
}

TEST(RealTimeRunnerTest, RemovesTerminatingPodsOnTime) {
  util::SystemClock clock;
  auto store = NewBuiltinStore(clock);
  auto manager = NewDefaultControllerManager(*store, clock);
  manager->Start();
  RealTimeRunner runner(*manager, 20ms);
  runner.Start();
  const ResourceType& pods = *store->FindResource("", "pods");
  ASSERT_TRUE(store->Create(*store->FindResource("", "nodes"), "", testing::Doc(NodeJson("n1"))));
  ASSERT_TRUE(store->Create(pods, "default", testing::Doc(PodJson("p", R"(,"nodeName":"n1")"))));
  ASSERT_TRUE(store->Delete(pods, "default", "p", DeleteOptions{.grace_period_seconds = 1}));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (store->Get(pods, "default", "p").has_value() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_FALSE(store->Get(pods, "default", "p").has_value());
  runner.Stop();
}

}  // namespace
}  // namespace kubesched::store::controllers
