#include "store/controllers/replication_controller.h"

#include <tuple>

#include <gtest/gtest.h>

#include "store/controllers/controllers_test_util.h"

namespace kubesched::store::controllers {
namespace {

using testing::Field;

class ReplicationControllerTest : public testing::ControllerFixture {
 public:
  const ResourceType& Controllers() const { return R("", "replicationcontrollers"); }
};

TEST_F(ReplicationControllerTest, KeepsReplicasWithAPlainSelector) {
  // No selector and no labels: both default to the template's labels.
  auto rc = MustCreate(Controllers(), "default", R"({"apiVersion":"v1","kind":"ReplicationController",
    "metadata":{"name":"legacy"},"spec":{"replicas":2,
    "template":{"metadata":{"labels":{"app":"legacy"}},"spec":{"containers":[{"name":"c","image":"old:1"}]}}}})");
  EXPECT_EQ(Field(*rc, "spec.selector.app"), "legacy");
  EXPECT_EQ(Field(*rc, "metadata.labels.app"), "legacy");
  auto pods = ListPods("app=legacy");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods) {
    EXPECT_EQ(p->name.substr(0, 7), "legacy-");
    EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.apiVersion"), "v1");
    EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.kind"), "ReplicationController");
    EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.uid"), rc->uid);
  }
  ASSERT_TRUE(store->Delete(Pods(), "default", pods[0]->name, {}));
  EXPECT_EQ(ListPods("app=legacy").size(), 2u);
  auto status = MustGet(Controllers(), "default", "legacy");
  EXPECT_EQ(Field(*status, "status.replicas"), "2");
  EXPECT_EQ(Field(*status, "status.fullyLabeledReplicas"), "2");

  auto bad = store->Create(Controllers(), "default",
                           store::testing::Doc(R"({"metadata":{"name":"bad"},"spec":{"selector":{"app":"x"},
    "template":{"metadata":{"labels":{"app":"y"}},"spec":{"containers":[{"name":"c","image":"old:1"}]}}}})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().HttpCode(), 422);
}

TEST_F(ReplicationControllerTest, ServedWithItsShortName) {
  const ResourceType& rc = Controllers();
  EXPECT_EQ(rc.short_names, (std::vector<std::string>{"rc"}));
  EXPECT_EQ(rc.categories, (std::vector<std::string>{"all"}));
  EXPECT_TRUE(rc.HasSubresource("status"));
  for (auto [group, resource, short_name] :
       {std::tuple{"apps", "statefulsets", "sts"}, std::tuple{"apps", "daemonsets", "ds"}}) {
    const ResourceType& t = R(group, resource);
    EXPECT_EQ(t.short_names, (std::vector<std::string>{short_name}));
    EXPECT_TRUE(t.HasSubresource("status"));
  }
  EXPECT_EQ(R("batch", "jobs").GroupVersion(), "batch/v1");
}

}  // namespace
}  // namespace kubesched::store::controllers
