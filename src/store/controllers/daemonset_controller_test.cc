#include "store/controllers/daemonset_controller.h"

#include <map>

#include <gtest/gtest.h>

#include "store/controllers/controllers_test_util.h"

namespace kubesched::store::controllers {
namespace {

using testing::Field;

std::string Node(std::string_view name, std::string_view labels = "{}", std::string_view taints = "[]") {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + std::string(name) + R"(","labels":)" +
         std::string(labels) + R"(},"spec":{"taints":)" + std::string(taints) +
         R"(},"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"}}})";
}

const char* kDaemonSet = R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent"},
  "spec":{"selector":{"matchLabels":{"app":"agent"}},
  "template":{"metadata":{"labels":{"app":"agent"}},"spec":{
    "nodeSelector":{"role":"worker"},
    "tolerations":[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}],
    "containers":[{"name":"c","image":"agent:1"}]}}}})";

class DaemonSetControllerTest : public testing::ControllerFixture {
 public:
  const ResourceType& Daemons() const { return R("apps", "daemonsets"); }
  //! Node name → the daemon pod pinned to it.
  std::map<std::string, ObjectPtr> ByNode() {
    std::map<std::string, ObjectPtr> out;
    for (const auto& p : LivePods("app=agent")) {
      out[Field(*p,
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0."
                "matchFields.0.values.0")] = p;
    }
    return out;
  }
};

TEST_F(DaemonSetControllerTest, OnePodPerEligibleNode) {
  MustCreate(Nodes(), "", Node("a", R"({"role":"worker"})"));
  MustCreate(Nodes(), "", Node("b", R"({"role":"worker"})", R"([{"key":"gpu","value":"x","effect":"NoSchedule"}])"));
  MustCreate(Nodes(), "", Node("c", R"({"role":"worker"})", R"([{"key":"dedicated","effect":"NoSchedule"}])"));
  MustCreate(Nodes(), "", Node("d", R"({"role":"infra"})"));
  MustCreate(
      Nodes(), "",
      Node("e", R"({"role":"worker"})", R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])"));
  auto ds = MustCreate(Daemons(), "default", kDaemonSet);
  auto pods = ByNode();
  std::vector<std::string> nodes;
  for (const auto& [n, p] : pods) nodes.push_back(n);
  // b: its taint is tolerated by the template; c: not tolerated; d: not selected; e: tolerated by
  // the tolerations every daemon pod gets.
  EXPECT_EQ(nodes, (std::vector<std::string>{"a", "b", "e"}));
  const ObjectPtr& p = pods["a"];
  EXPECT_EQ(p->name.substr(0, 6), "agent-");
  EXPECT_EQ(p->name.size(), 11u);
  EXPECT_EQ(Field(*p, "spec.nodeName"), "<none>");
  EXPECT_EQ(Field(*p,
                  "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0."
                  "matchFields.0.key"),
            "metadata.name");
  EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.uid"), ds->uid);
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back(Field(*p, "spec.tolerations." + std::to_string(i) + ".key"));
  EXPECT_EQ(keys, (std::vector<std::string>{"gpu", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
                                            "node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
                                            "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable",
                                            "<none>"}));
  auto status = MustGet(Daemons(), "default", "agent");
  EXPECT_EQ(Field(*status, "status.desiredNumberScheduled"), "3");
  EXPECT_EQ(Field(*status, "status.currentNumberScheduled"), "3");
  EXPECT_EQ(Field(*status, "status.numberReady"), "0");
  EXPECT_EQ(Field(*status, "status.updatedNumberScheduled"), "3");
}

TEST_F(DaemonSetControllerTest, FollowsNodesComingAndGoing) {
  MustCreate(Nodes(), "", Node("a", R"({"role":"worker"})"));
  MustCreate(Daemons(), "default", kDaemonSet);
  ASSERT_EQ(ByNode().size(), 1u);
  MustCreate(Nodes(), "", Node("b", R"({"role":"worker"})"));
  ASSERT_EQ(ByNode().size(), 2u);
  // Bind and start both, as the scheduler would.
  for (const auto& [node, p] : ByNode()) ASSERT_TRUE(store->Bind("default", p->name, p->uid, node));
  EXPECT_EQ(Field(*MustGet(Daemons(), "default", "agent"), "status.numberReady"), "2");

  // A deleted pod is replaced once it is gone, pinned to the same node.
  const ObjectPtr old = ByNode()["a"];
  ASSERT_TRUE(store->Delete(Pods(), "default", old->name, {}));
  EXPECT_EQ(ListPods("app=agent").size(), 2u);  // the terminating one still holds node a
  Advance(30);
  auto now = ByNode();
  ASSERT_TRUE(now.contains("a"));
  EXPECT_NE(now["a"]->uid, old->uid);

  // A node that goes takes its pod, which is not recreated.
  EXPECT_EQ(Field(*MustGet(Daemons(), "default", "agent"), "status.desiredNumberScheduled"), "2");
  ASSERT_TRUE(store->Delete(Nodes(), "", "b", {}));
  now = ByNode();
  EXPECT_FALSE(now.contains("b"));
  EXPECT_EQ(now.size(), 1u);
  EXPECT_EQ(Field(*MustGet(Daemons(), "default", "agent"), "status.desiredNumberScheduled"), "1");

  // A node that stops being selected loses its daemon pod.
  ASSERT_TRUE(
      store->Patch(Nodes(), "", "a", PatchType::kMergePatch, R"({"metadata":{"labels":{"role":"infra"}}})", ""));
  EXPECT_TRUE(ByNode().empty());
  EXPECT_EQ(Field(*MustGet(Daemons(), "default", "agent"), "status.desiredNumberScheduled"), "0");
}

TEST_F(DaemonSetControllerTest, UnscheduledPodOfAGoneNodeIsDeleted) {
  MustCreate(Nodes(), "", Node("a", R"({"role":"worker"})"));
  MustCreate(Daemons(), "default", kDaemonSet);
  ASSERT_EQ(ByNode().size(), 1u);
  ASSERT_TRUE(store->Delete(Nodes(), "", "a", {}));
  EXPECT_TRUE(ListPods("app=agent").empty());
}

TEST_F(DaemonSetControllerTest, DeletedDaemonSetTakesItsPods) {
  MustCreate(Nodes(), "", Node("a", R"({"role":"worker"})"));
  MustCreate(Daemons(), "default", kDaemonSet);
  ASSERT_TRUE(store->Delete(Daemons(), "default", "agent", {}));
  EXPECT_TRUE(ListPods("app=agent").empty());
}

}  // namespace
}  // namespace kubesched::store::controllers
