#include "store/controllers/daemon_placement.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

// A DaemonSet template's placement read from its JSON and evaluated by api::EvaluateDaemonPod, the
// one NodeShouldRunDaemonPod the loader shares: what the JSON may hold that the typed decoder
// would have refused (unknown operators and effects, other field keys) is read as upstream's
// nodeaffinity and toleration helpers read it.
namespace kubesched::store::controllers {
namespace {

namespace json = api::json;

DaemonPlacement Placement(const std::string& spec) {
  json::Document doc;
  EXPECT_TRUE(json::Parse(R"({"spec":)" + spec + "}", doc).has_value()) << spec;
  return ParseDaemonPlacement(doc);
}

const std::vector<api::Labels::Entry> kWorker = {{"role", "worker"}, {"zone", "a"}};

api::DaemonPodVerdict Evaluate(const DaemonPlacement& p, const std::vector<api::Taint>& taints = {},
                               const std::string& node = "n1") {
  return api::EvaluateDaemonPod(p, node, kWorker, taints);
}

TEST(DaemonPlacementTest, NodeNameAndNodeSelectorMustMatch) {
  EXPECT_TRUE(Evaluate(Placement(R"({"nodeSelector":{"role":"worker"}})")).should_run);
  EXPECT_FALSE(Evaluate(Placement(R"({"nodeSelector":{"role":"infra"}})")).should_run);
  EXPECT_TRUE(Evaluate(Placement(R"({"nodeName":"n1"})")).should_run);
  const auto other = Evaluate(Placement(R"({"nodeName":"n2"})"));
  EXPECT_FALSE(other.should_run);
  EXPECT_FALSE(other.should_continue);
}

TEST(DaemonPlacementTest, ATermWithAnUnknownOperatorOrFieldMatchesNoNode) {
  const std::string bogus = R"({"matchExpressions":[{"key":"zone","operator":"Near","values":["a"]}]})";
  const std::string other_field = R"({"matchFields":[{"key":"metadata.uid","operator":"In","values":["x"]}]})";
  const std::string zone_a = R"({"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]})";
  auto required = [](const std::string& terms) {
    return R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[)" +
           terms + "]}}}}";
  };
  EXPECT_FALSE(Evaluate(Placement(required(bogus))).should_run);
  EXPECT_FALSE(Evaluate(Placement(required(other_field))).should_run);
  // Terms are ORed: a valid one still selects the node.
  EXPECT_TRUE(Evaluate(Placement(required(bogus + "," + zone_a))).should_run);
  // A required affinity without terms selects nothing; matchFields on metadata.name selects by name.
  EXPECT_FALSE(Evaluate(Placement(required(""))).should_run);
  const std::string pinned = R"({"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]})";
  EXPECT_TRUE(Evaluate(Placement(required(pinned))).should_run);
  EXPECT_FALSE(Evaluate(Placement(required(pinned)), {}, "n2").should_run);
  // Gt and Lt compare integers.
  const std::string gt = R"({"matchExpressions":[{"key":"role","operator":"Gt","values":["1"]}]})";
  EXPECT_FALSE(Evaluate(Placement(required(gt))).should_run);
}

TEST(DaemonPlacementTest, TaintsDecideRunningAndStaying) {
  const api::Taint no_schedule{"dedicated", "db", api::TaintEffect::kNoSchedule};
  const api::Taint no_execute{"dedicated", "db", api::TaintEffect::kNoExecute};
  const api::Taint prefer{"dedicated", "db", api::TaintEffect::kPreferNoSchedule};
  const DaemonPlacement none = Placement("{}");
  EXPECT_TRUE(Evaluate(none, {prefer}).should_run);
  const auto scheduled = Evaluate(none, {no_schedule});
  EXPECT_FALSE(scheduled.should_run);
  EXPECT_TRUE(scheduled.should_continue);
  const auto executed = Evaluate(none, {no_execute});
  EXPECT_FALSE(executed.should_run);
  EXPECT_FALSE(executed.should_continue);

  // An empty operator is Equal; an empty effect tolerates every effect.
  EXPECT_TRUE(Evaluate(Placement(R"({"tolerations":[{"key":"dedicated","value":"db"}]})"), {no_execute}).should_run);
  EXPECT_FALSE(Evaluate(Placement(R"({"tolerations":[{"key":"dedicated","value":"web"}]})"), {no_execute}).should_run);
  EXPECT_TRUE(Evaluate(Placement(R"({"tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]})"),
                       {no_schedule})
                  .should_run);
  // An operator or effect the API does not define tolerates nothing.
  EXPECT_FALSE(
      Evaluate(Placement(R"({"tolerations":[{"key":"dedicated","operator":"Matches","value":"db"}]})"), {no_schedule})
          .should_run);
  EXPECT_FALSE(
      Evaluate(Placement(R"({"tolerations":[{"key":"dedicated","value":"db","effect":"Sometimes"}]})"), {no_schedule})
          .should_run);
}

TEST(DaemonPlacementTest, EveryDaemonPodToleratesTheNodeConditionTaints) {
  const api::Taint unschedulable{"node.kubernetes.io/unschedulable", "", api::TaintEffect::kNoSchedule};
  const api::Taint not_ready{"node.kubernetes.io/not-ready", "", api::TaintEffect::kNoExecute};
  const api::Taint network{"node.kubernetes.io/network-unavailable", "", api::TaintEffect::kNoSchedule};
  EXPECT_TRUE(Evaluate(Placement("{}"), {unschedulable, not_ready}).should_run);
  EXPECT_FALSE(Evaluate(Placement("{}"), {network}).should_run);
  EXPECT_TRUE(Evaluate(Placement(R"({"hostNetwork":true})"), {network}).should_run);
}

}  // namespace
}  // namespace kubesched::store::controllers
