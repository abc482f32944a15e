#include "store/controllers/pod_informer.h"

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace kubesched::store::controllers {
namespace {

using testing::PodJson;

class PodInformerTest : public testing::StoreFixture {
 public:
  PodInformerTest() : informer(Pods()) {
    store->AddObserver([this](const WatchEvent& e) { informer.Apply(e); });
  }
  std::vector<std::string> Names(const PodsBySeq& pods) {
    std::vector<std::string> out;
    for (const auto& [seq, p] : pods) out.push_back(p->name());
    return out;
  }
  PodInformer informer;
};

TEST_F(PodInformerTest, IndexesByOwnerAndNodeInCreationOrder) {
  const std::string owner =
      R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u1","controller":true}])";
  auto pod = [&](std::string_view name, std::string_view spec) {
    std::string text = PodJson(name, spec);
    text.insert(text.find("\"labels\""), std::string(owner.substr(1)) + ",");
    return MustCreate(Pods(), "default", text);
  };
  pod("zeta", R"(,"nodeName":"n1")");
  pod("alpha", "");
  MustCreate(Pods(), "default", PodJson("loose", R"(,"nodeName":"n1")"));
  EXPECT_EQ(Names(informer.OwnedBy("u1")), (std::vector<std::string>{"zeta", "alpha"}));
  EXPECT_EQ(Names(informer.OnNode("n1")), (std::vector<std::string>{"zeta", "loose"}));
  EXPECT_TRUE(informer.OwnedBy("nobody").empty());

  // A binding moves the pod into its node's index, keeping its place in creation order.
  auto alpha = MustGet(Pods(), "default", "alpha");
  ASSERT_TRUE(store->Bind("default", "alpha", alpha->uid, "n1"));
  EXPECT_EQ(Names(informer.OnNode("n1")), (std::vector<std::string>{"zeta", "alpha", "loose"}));
  EXPECT_EQ(informer.Previous()->node_name, "");
  EXPECT_EQ(informer.Current()->node_name, "n1");

  ASSERT_TRUE(store->Delete(Pods(), "default", "zeta", DeleteOptions{.grace_period_seconds = 0}));
  EXPECT_EQ(informer.Current(), nullptr);
  EXPECT_EQ(informer.Previous()->name(), "zeta");
  EXPECT_EQ(Names(informer.OwnedBy("u1")), (std::vector<std::string>{"alpha"}));
  EXPECT_EQ(informer.size(), 2u);
}

TEST_F(PodInformerTest, ParsesWhatControllersRead) {
  auto p = MustCreate(Pods(), "default",
                      R"({"metadata":{"name":"web-3","labels":{"apps.kubernetes.io/pod-index":"3"},
      "annotations":{"batch.kubernetes.io/job-completion-index":"7"}},
      "spec":{"hostNetwork":true,"containers":[{"name":"c","image":"x:1"}],
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchFields":[{"key":"metadata.name","operator":"In","values":["n9"]}]}]}}}}})");
  PodFacts info = ParsePodFacts(p);
  EXPECT_EQ(info.ordinal, 3);
  EXPECT_EQ(info.completion_index, 7);
  EXPECT_TRUE(info.host_network);
  EXPECT_EQ(info.pinned_node, "n9");
  EXPECT_EQ(info.TargetNode(), "n9");
  EXPECT_EQ(info.phase, "Pending");
  EXPECT_TRUE(info.Active());
  EXPECT_EQ(info.created_ns, testing::kStartNs);
  EXPECT_FALSE(ParsePodFacts(MustCreate(Pods(), "default", PodJson("plain"))).ordinal.has_value());
}

TEST_F(PodInformerTest, FillNumbersByResourceVersion) {
  PodInformer late(Pods());
  MustCreate(Pods(), "default", PodJson("b", R"(,"nodeName":"n1")"));
  MustCreate(Pods(), "default", PodJson("a", R"(,"nodeName":"n1")"));
  late.Fill(store->List(Pods(), "", {})->items);  // listed a, b
  EXPECT_EQ(Names(late.OnNode("n1")), (std::vector<std::string>{"b", "a"}));
}

}  // namespace
}  // namespace kubesched::store::controllers
