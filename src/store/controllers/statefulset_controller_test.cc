#include "store/controllers/statefulset_controller.h"

#include <gtest/gtest.h>

#include "store/controllers/controllers_test_util.h"

namespace kubesched::store::controllers {
namespace {

using testing::Field;
using testing::NodeJson;

std::string StatefulSet(std::string_view policy, int replicas) {
  return R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"replicas":)" +
         std::to_string(replicas) + R"(,"serviceName":"db-svc","podManagementPolicy":")" + std::string(policy) +
         R"(","selector":{"matchLabels":{"app":"db"}},
     "template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"pg:1"}]}}}})";
}

class StatefulSetControllerTest : public testing::ControllerFixture {
 public:
  const ResourceType& Sets() const { return R("apps", "statefulsets"); }
};

TEST_F(StatefulSetControllerTest, OrderedReadyCreatesOneAtATimeInOrdinalOrder) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  auto sts = MustCreate(Sets(), "default", StatefulSet("OrderedReady", 3));
  EXPECT_EQ(Field(*sts, "spec.podManagementPolicy"), "OrderedReady");
  auto pods = ListPods("app=db");
  ASSERT_EQ(Names(pods), (std::vector<std::string>{"db-0"}));
  const ObjectPtr& p0 = pods[0];
  EXPECT_EQ(p0->labels().size(), 4u);  // app, controller-revision-hash, pod-index, pod-name
  EXPECT_EQ(Field(*p0, "spec.hostname"), "db-0");
  EXPECT_EQ(Field(*p0, "spec.subdomain"), "db-svc");
  EXPECT_EQ(Field(*p0, "metadata.ownerReferences.0.kind"), "StatefulSet");
  EXPECT_EQ(Field(*p0, "metadata.ownerReferences.0.uid"), sts->uid);
  EXPECT_EQ(Field(*p0, "metadata.ownerReferences.0.blockOwnerDeletion"), "true");
  EXPECT_EQ(Field(*p0, "metadata.generateName"), "<none>");
  bool index = false, name = false;
  for (const auto& [k, v] : p0->labels()) {
    index |= k == "apps.kubernetes.io/pod-index" && v == "0";
    name |= k == "statefulset.kubernetes.io/pod-name" && v == "db-0";
  }
  EXPECT_TRUE(index && name);

  // db-1 only once db-0 runs and is ready, then db-2.
  BindAll("n1");
  EXPECT_EQ(Names(ListPods("app=db")), (std::vector<std::string>{"db-0", "db-1"}));
  BindAll("n1");
  EXPECT_EQ(Names(ListPods("app=db")), (std::vector<std::string>{"db-0", "db-1", "db-2"}));
  BindAll("n1");
  auto status = MustGet(Sets(), "default", "db");
  EXPECT_EQ(Field(*status, "status.replicas"), "3");
  EXPECT_EQ(Field(*status, "status.readyReplicas"), "3");
  EXPECT_EQ(Field(*status, "status.updateRevision").substr(0, 3), "db-");
}

TEST_F(StatefulSetControllerTest, ReplacementKeepsTheNameAndWaitsForTheOldPod) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Sets(), "default", StatefulSet("Parallel", 2));
  BindAll("n1");
  auto old = MustGet(Pods(), "default", "db-1");
  ASSERT_TRUE(store->Delete(Pods(), "default", "db-1", {}));  // 30 s grace
  auto terminating = MustGet(Pods(), "default", "db-1");
  EXPECT_EQ(terminating->uid, old->uid);
  EXPECT_NE(Field(*terminating, "metadata.deletionTimestamp"), "<none>");
  Advance(30);
  auto fresh = MustGet(Pods(), "default", "db-1");
  EXPECT_NE(fresh->uid, old->uid);
  EXPECT_EQ(Field(*fresh, "spec.nodeName"), "<none>");
}

TEST_F(StatefulSetControllerTest, ParallelCreatesAndRemovesAtOnce) {
  MustCreate(Sets(), "default", StatefulSet("Parallel", 3));
  EXPECT_EQ(Names(ListPods("app=db")), (std::vector<std::string>{"db-0", "db-1", "db-2"}));
  ASSERT_TRUE(store->Patch(Sets(), "default", "db", PatchType::kMergePatch, R"({"spec":{"replicas":1}})", ""));
  EXPECT_EQ(Names(ListPods("app=db")), (std::vector<std::string>{"db-0"}));  // unbound: gone at once
}

TEST_F(StatefulSetControllerTest, OrderedReadyScalesDownFromTheHighestOrdinal) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Sets(), "default", StatefulSet("OrderedReady", 3));
  for (int i = 0; i < 3; ++i) BindAll("n1");
  ASSERT_TRUE(store->Patch(Sets(), "default", "db", PatchType::kMergePatch, R"({"spec":{"replicas":1}})", ""));
  // db-2 terminates first; db-1 waits for it.
  EXPECT_EQ(Names(LivePods("app=db")), (std::vector<std::string>{"db-0", "db-1"}));
  Advance(30);
  EXPECT_EQ(Names(LivePods("app=db")), (std::vector<std::string>{"db-0"}));
  Advance(30);
  EXPECT_EQ(Names(ListPods("app=db")), (std::vector<std::string>{"db-0"}));
}

}  // namespace
}  // namespace kubesched::store::controllers
