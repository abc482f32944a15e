// Tables ported from upstream's interpodaffinity filtering_test.go, scoring_test.go and
// plugin_test.go (same inputs, verdicts, reasons and scores). Upstream's default namespace "" is
// "default" here (MakePod's default); pods with invalid label syntax are not portable (rejected
// at load).

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "framework/cycle_state.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins::inter_pod_affinity {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PodInfo;
using framework::QueueingHint;
using framework::Status;
using testing::FakeHandle;
using testing::MakePod;

using PodPtr = std::shared_ptr<api::Pod>;
using NodePtr = std::shared_ptr<api::Node>;
using LabelList = std::vector<std::pair<std::string, std::string>>;
using CountMap = std::map<std::pair<std::string, std::string>, int64_t>;

constexpr const char* kDefaultNs = "default";

// ---------------------------------------------------------------------------------------------
// Object helpers (upstream's tests build raw objects; nodes carry only the labels given).

NodePtr Node(std::string name, LabelList labels = {}) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = std::move(name);
  n->metadata.uid = "uid-node-" + n->metadata.name;
  for (auto& [k, v] : labels) n->metadata.labels.Set(k, v);
  return n;
}

api::SelectorRequirement Req(std::string key, api::SelectorOperator op, std::vector<std::string> values = {}) {
  std::sort(values.begin(), values.end());
  return {std::move(key), op, std::move(values)};
}
api::SelectorRequirement In(std::string key, std::vector<std::string> values) {
  return Req(std::move(key), api::SelectorOperator::kIn, std::move(values));
}
api::SelectorRequirement NotIn(std::string key, std::vector<std::string> values) {
  return Req(std::move(key), api::SelectorOperator::kNotIn, std::move(values));
}
api::SelectorRequirement Exists(std::string key) { return Req(std::move(key), api::SelectorOperator::kExists); }
api::SelectorRequirement DoesNotExist(std::string key) {
  return Req(std::move(key), api::SelectorOperator::kDoesNotExist);
}

api::LabelSelector Selector(std::vector<api::SelectorRequirement> reqs) {
  api::LabelSelector s;
  s.match_expressions = std::move(reqs);
  return s;
}

api::PodAffinityTerm Term(std::string topology_key, std::vector<api::SelectorRequirement> reqs,
                          std::vector<std::string> namespaces = {},
                          std::optional<api::LabelSelector> namespace_selector = std::nullopt) {
  api::PodAffinityTerm t;
  t.label_selector = Selector(std::move(reqs));
  t.topology_key = std::move(topology_key);
  t.namespaces = std::move(namespaces);
  t.namespace_selector = std::move(namespace_selector);
  return t;
}

api::WeightedPodAffinityTerm Weighted(int32_t weight, api::PodAffinityTerm term) { return {weight, std::move(term)}; }

struct AffinitySpec {
  std::vector<api::PodAffinityTerm> required = {};
  std::vector<api::PodAffinityTerm> required_anti = {};
  std::vector<api::WeightedPodAffinityTerm> preferred = {};
  std::vector<api::WeightedPodAffinityTerm> preferred_anti = {};
};

api::Affinity ToAffinity(const AffinitySpec& spec) {
  api::Affinity a;
  if (!spec.required.empty() || !spec.preferred.empty()) {
    a.pod_affinity.emplace();
    a.pod_affinity->required = spec.required;
    a.pod_affinity->preferred = spec.preferred;
  }
  if (!spec.required_anti.empty() || !spec.preferred_anti.empty()) {
    a.pod_anti_affinity.emplace();
    a.pod_anti_affinity->required = spec.required_anti;
    a.pod_anti_affinity->preferred = spec.preferred_anti;
  }
  return a;
}

// A pod in namespace ns on node (may be ""), with labels and (anti-)affinity.
PodPtr Pod(std::string node, LabelList labels, const AffinitySpec& spec = {}, std::string ns = kDefaultNs) {
  auto b = MakePod().Namespace(std::move(ns)).Labels(std::move(labels));
  if (!node.empty()) b.Node(std::move(node));
  auto p = b.Obj();
  if (!spec.required.empty() || !spec.required_anti.empty() || !spec.preferred.empty() ||
      !spec.preferred_anti.empty()) {
    p->spec.affinity = ToAffinity(spec);
  }
  return p;
}

// Upstream's scoring_test namespaces.
void AddTeamNamespaces(FakeHandle& handle) {
  handle.fake_client().SetNamespaceLabels("subteam1.team1", {{"team", "team1"}});
  handle.fake_client().SetNamespaceLabels("subteam2.team1", {{"team", "team1"}});
  handle.fake_client().SetNamespaceLabels("subteam1.team2", {{"team", "team2"}});
  handle.fake_client().SetNamespaceLabels("subteam2.team2", {{"team", "team2"}});
}

// The args as plugins read them, from the nlohmann/json values the cases below are written as.
framework::ArgsDocument ArgsOf(const nlohmann::json& j) { return testing::ArgsJson(j.dump()); }

std::unique_ptr<InterPodAffinity> MakePlugin(FakeHandle& handle, nlohmann::json args = nullptr) {
  auto p = New(ArgsOf(args).View(), handle);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error());
  return std::unique_ptr<InterPodAffinity>(dynamic_cast<InterPodAffinity*>(p->release()));
}

Status AffinityMismatch() {
  return Status(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonAffinityRulesNotMatch));
}
Status AntiAffinityMismatch() { return Status(Code::kUnschedulable, std::string(kErrReasonAntiAffinityRulesNotMatch)); }
Status ExistingAntiAffinityMismatch() {
  return Status(Code::kUnschedulable, std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
}
const Status kOk = Status::Success();

// ---------------------------------------------------------------------------------------------
// Filtering

struct FilterCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  Code want_pre_filter = Code::kSuccess;
  std::vector<Status> want_filter;  // per node, when PreFilter succeeds
};

void RunFilterCases(const std::vector<FilterCase>& cases, bool team_namespaces) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHandle handle(c.nodes, c.pods);
    if (team_namespaces) AddTeamNamespaces(handle);
    handle.fake_client().SetNamespaceLabels("NS1", {});
    auto plugin = MakePlugin(handle);
    auto info = PodInfo::Create(c.pod);
    CycleState state;
    auto [result, status] = plugin->PreFilter(state, *info, handle.snapshot().List());
    EXPECT_TRUE(result.AllNodes());
    ASSERT_EQ(status.code(), c.want_pre_filter) << status.Message();
    if (!status.IsSuccess()) {
      EXPECT_EQ(GetPreFilterState(state), nullptr);
      continue;
    }
    ASSERT_EQ(c.want_filter.size(), c.nodes.size());
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      SCOPED_TRACE(c.nodes[i]->metadata.name);
      const auto* node_info = handle.snapshot().Get(c.nodes[i]->metadata.name);
      ASSERT_NE(node_info, nullptr);
      EXPECT_EQ(plugin->Filter(state, *info, *node_info), c.want_filter[i]);
    }
  }
}

TEST(InterPodAffinityFilter, RequiredAffinitySingleNode) {
  const LabelList pod_label = {{"service", "securityscan"}};
  const LabelList pod_label2 = {{"security", "S1"}};
  auto node1 = [] { return Node("node1", {{"region", "r1"}, {"zone", "z11"}}); };
  auto existing = [&] { return Pod("node1", pod_label); };
  const auto team1 = Selector({In("team", {"team1"})});

  std::vector<FilterCase> cases = {
      {"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing "
       "pods",
       Pod("", {}),
       {},
       {node1()},
       Code::kSkip,
       {}},
      {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
       "matches the existing pod",
       Pod("", pod_label2, {.required = {Term("region", {In("service", {"securityscan", "value2"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {kOk}},
      {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
       "operator "
       "in labelSelector that matches the existing pod",
       Pod("", pod_label2, {.required = {Term("region", {NotIn("service", {"securityscan3", "value3"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {kOk}},
      {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
       Pod("", pod_label2, {.required = {Term("", {In("service", {"securityscan", "value2"})}, {"DiffNameSpace"})}}),
       {Pod("node1", {{"service", "securityscan"}}, {}, "ns")},
       {node1()},
       Code::kSuccess,
       {AffinityMismatch()}},
      {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
       Pod("", pod_label, {.required = {Term("", {In("service", {"antivirusscan", "value2"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {AffinityMismatch()}},
      {"satisfies the PodAffinity with different label Operators in multiple "
       "RequiredDuringSchedulingIgnoredDuringExecution ",
       Pod("", pod_label2,
           {.required = {Term("region", {Exists("service"), DoesNotExist("wrongkey")}),
                         Term("region", {In("service", {"securityscan"}), NotIn("service", {"WrongValue"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {kOk}},
      {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto "
       "the node "
       "because one of the matchExpression item don't match.",
       Pod("", pod_label2,
           {.required = {Term("region", {Exists("service"), DoesNotExist("wrongkey")}),
                         Term("region", {In("service", {"securityscan2"}), NotIn("service", {"WrongValue"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {AffinityMismatch()}},
      {"satisfies the PodAffinity and PodAntiAffinity with the existing pod",
       Pod("", pod_label2,
           {.required = {Term("region", {In("service", {"securityscan", "value2"})})},
            .required_anti = {Term("node", {In("service", {"antivirusscan", "value2"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {kOk}},
      {"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
       Pod("", pod_label2,
           {.required = {Term("region", {In("service", {"securityscan", "value2"})})},
            .required_anti = {Term("node", {In("service", {"antivirusscan", "value2"})})}}),
       {Pod("node1", pod_label, {.required_anti = {Term("node", {In("service", {"antivirusscan", "value2"})})}})},
       {node1()},
       Code::kSuccess,
       {kOk}},
      {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
       Pod("", pod_label2,
           {.required = {Term("region", {In("service", {"securityscan", "value2"})})},
            .required_anti = {Term("zone", {In("service", {"securityscan", "value2"})})}}),
       {existing()},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
       "existing pod",
       Pod("", pod_label,
           {.required = {Term("region", {In("service", {"securityscan", "value2"})})},
            .required_anti = {Term("node", {In("service", {"antivirusscan", "value2"})})}}),
       {Pod("node1", pod_label, {.required_anti = {Term("zone", {In("service", {"securityscan", "value2"})})}})},
       {node1()},
       Code::kSuccess,
       {ExistingAntiAffinityMismatch()}},
      {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
       Pod("", pod_label, {.required = {Term("region", {NotIn("service", {"securityscan", "value2"})})}}),
       {Pod("node2", {{"service", "securityscan"}})},
       {node1()},
       Code::kSuccess,
       {AffinityMismatch()}},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
       "doesn't "
       "satisfy PodAntiAffinity symmetry with the existing pod",
       Pod("", pod_label),
       {Pod("node1", pod_label, {.required_anti = {Term("zone", {In("service", {"securityscan", "value2"})})}})},
       {node1()},
       Code::kSuccess,
       {ExistingAntiAffinityMismatch()}},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
       "satisfy PodAntiAffinity symmetry with the existing pod",
       Pod("", pod_label),
       {Pod("node1", pod_label, {.required_anti = {Term("zone", {NotIn("service", {"securityscan", "value2"})})}})},
       {node1()},
       Code::kSkip,
       {}},
      {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
       "incoming "
       "pod",
       Pod("", pod_label,
           {.required_anti = {Term("region", {Exists("service")}), Term("region", {Exists("security")})}}),
       {Pod("node1", pod_label2, {.required_anti = {Term("zone", {Exists("security")})}})},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
       "AffinityTerms",
       Pod("", pod_label, {.required_anti = {Term("zone", {Exists("service")}), Term("zone", {Exists("security")})}}),
       {Pod("node1", pod_label2, {.required_anti = {Term("zone", {Exists("security")})}})},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
       "AffinityTerms",
       Pod("", pod_label2, {.required_anti = {Term("zone", {Exists("security")})}}),
       {Pod("node1", pod_label,
            {.required_anti = {Term("zone", {Exists("service")}), Term("zone", {Exists("security")})}})},
       {node1()},
       Code::kSuccess,
       {ExistingAntiAffinityMismatch()}},
      {"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
       "AffinityTerms",
       Pod("", {{"abc", ""}, {"xyz", ""}},
           {.required_anti = {Term("zone", {Exists("abc")}), Term("zone", {Exists("def")})}}),
       {Pod("node1", {{"def", ""}, {"xyz", ""}},
            {.required_anti = {Term("zone", {Exists("abc")}), Term("zone", {Exists("def")})}})},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
       "AffinityTerms",
       Pod("", {{"def", ""}, {"xyz", ""}},
           {.required_anti = {Term("zone", {Exists("abc")}), Term("zone", {Exists("def")})}}),
       {Pod("node1", {{"abc", ""}, {"xyz", ""}},
            {.required_anti = {Term("zone", {Exists("abc")}), Term("zone", {Exists("def")})}})},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"affinity with NamespaceSelector",
       Pod("", pod_label2, {.required = {Term("region", {In("service", {"securityscan", "value2"})}, {}, team1)}}),
       {Pod("node1", pod_label, {}, "subteam1.team1")},
       {node1()},
       Code::kSuccess,
       {kOk}},
      {"affinity with non-matching NamespaceSelector",
       Pod("", pod_label2, {.required = {Term("region", {In("service", {"securityscan", "value2"})}, {}, team1)}}),
       {Pod("node1", pod_label, {}, "subteam1.team2")},
       {node1()},
       Code::kSuccess,
       {AffinityMismatch()}},
      {"anti-affinity with matching NamespaceSelector",
       Pod("", pod_label2, {.required_anti = {Term("zone", {In("service", {"securityscan", "value2"})}, {}, team1)}},
           "subteam1.team1"),
       {Pod("node1", pod_label, {}, "subteam2.team1")},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"anti-affinity with matching all NamespaceSelector",
       Pod("", pod_label2,
           {.required_anti = {Term("zone", {In("service", {"securityscan", "value2"})}, {}, api::LabelSelector{})}},
           "subteam1.team1"),
       {Pod("node1", pod_label, {}, "subteam2.team1")},
       {node1()},
       Code::kSuccess,
       {AntiAffinityMismatch()}},
      {"anti-affinity with non-matching NamespaceSelector",
       Pod("", pod_label2, {.required_anti = {Term("zone", {In("service", {"securityscan", "value2"})}, {}, team1)}},
           "subteam1.team1"),
       {Pod("node1", pod_label, {}, "subteam1.team2")},
       {node1()},
       Code::kSuccess,
       {kOk}},
  };
  RunFilterCases(cases, /*team_namespaces=*/true);
}

TEST(InterPodAffinityFilter, RequiredAffinityMultipleNodes) {
  const LabelList rg_china = {{"region", "China"}};
  const LabelList rg_china_az1 = {{"region", "China"}, {"az", "az1"}};
  const LabelList rg_india = {{"region", "India"}};
  auto abc_nodes = [](std::string za, std::string zb) {
    return std::vector<NodePtr>{Node("nodeA", {{"region", "r1"}, {"zone", za}, {"hostname", "nodeA"}}),
                                Node("nodeB", {{"region", "r1"}, {"zone", zb}, {"hostname", "nodeB"}})};
  };

  std::vector<FilterCase> cases = {
      {"A pod can be scheduled onto all the nodes that have the same topology key & label value with one of "
       "them "
       "has an existing pod that matches the affinity rules",
       Pod("", {}, {.required = {Term("region", {In("foo", {"bar"})})}}),
       {Pod("node1", {{"foo", "bar"}})},
       {Node("node1", rg_china), Node("node2", rg_china_az1), Node("node3", rg_india)},
       Code::kSuccess,
       {kOk, kOk, AffinityMismatch()}},
      {"The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod "
       "of the "
       "collection should not be blocked from being scheduled onto any node, even there's no existing pod "
       "that "
       "matches the rule anywhere.",
       Pod("", {{"foo", "bar"}, {"service", "securityscan"}},
           {.required = {Term("zone", {In("foo", {"bar"})}), Term("zone", {In("service", {"securityscan"})})}}),
       {Pod("nodeA", {{"foo", "bar"}})},
       {Node("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}), Node("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})},
       Code::kSuccess,
       {kOk, kOk}},
      {"The first pod of the collection can only be scheduled on nodes labelled with the requested topology "
       "keys",
       Pod("", {{"foo", "bar"}, {"service", "securityscan"}},
           {.required = {Term("zone", {In("foo", {"bar"})}), Term("zone", {In("service", {"securityscan"})})}}),
       {Pod("nodeA", {{"foo", "bar"}})},
       {Node("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}),
        Node("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})},
       Code::kSuccess,
       {AffinityMismatch(), AffinityMismatch()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
       "inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
       Pod("", {}, {.required_anti = {Term("region", {In("foo", {"abc"})})}}),
       {Pod("nodeA", {{"foo", "abc"}})},
       {Node("nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}),
        Node("nodeB", {{"region", "r1"}, {"hostname", "nodeB"}})},
       Code::kSuccess,
       {AntiAffinityMismatch(), AntiAffinityMismatch()}},
      {"This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a "
       "pod.",
       Pod("", {},
           {.required_anti = {Term("region", {In("foo", {"abc"})}), Term("zone", {In("service", {"securityscan"})})}}),
       {Pod("nodeA", {{"foo", "abc"}, {"service", "securityscan"}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {AntiAffinityMismatch(), AntiAffinityMismatch()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
       "inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
       Pod("", {}, {.required_anti = {Term("region", {In("foo", {"abc"})})}}),
       {Pod("nodeA", {{"foo", "abc"}})},
       {Node("nodeA", rg_china), Node("nodeB", rg_china_az1), Node("nodeC", rg_india)},
       Code::kSuccess,
       {AntiAffinityMismatch(), AntiAffinityMismatch(), kOk}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
       "inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC "
       "(NodeC has "
       "an existing pod that match the inter pod affinity rule but in different namespace)",
       Pod("", {{"foo", "123"}}, {.required_anti = {Term("region", {In("foo", {"bar"})})}}, "NS1"),
       {Pod("nodeA", {{"foo", "bar"}}, {}, "NS1"),
        Pod("nodeC", {}, {.required_anti = {Term("region", {In("foo", {"123"})})}}, "NS2")},
       {Node("nodeA", rg_china), Node("nodeB", rg_china_az1), Node("nodeC", rg_india)},
       Code::kSuccess,
       {AntiAffinityMismatch(), AntiAffinityMismatch(), kOk}},
      {"Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
       "labelSelector of "
       "the term is firstly checked, and then topologyKey of the term is also checked",
       Pod("", {{"foo", ""}}),
       {Pod("nodeA", {}, {.required_anti = {Term("invalid-node-label", {Exists("foo")})}})},
       abc_nodes("z1", "z1"),
       Code::kSkip,
       {}},
      {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey "
       "matches",
       Pod("nodeA", {}, {.required_anti = {Term("invalid-node-label", {Exists("foo")})}}),
       {Pod("nodeA", {{"foo", ""}})},
       abc_nodes("z1", "z1"),
       Code::kSuccess,
       {kOk, kOk}},
      {"Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
       "existingPod's terms on all nodes",
       Pod("", {{"foo", ""}, {"bar", ""}}),
       {Pod("nodeA", {}, {.required_anti = {Term("zone", {Exists("foo")})}}),
        Pod("nodeA", {}, {.required_anti = {Term("region", {Exists("bar")})}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {ExistingAntiAffinityMismatch(), ExistingAntiAffinityMismatch()}},
      {"Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates "
       "one "
       "anti-affinity rule of existingPod",
       Pod("", {}, {.required_anti = {Term("zone", {Exists("foo")}), Term("region", {Exists("bar")})}}),
       {Pod("nodeA", {{"foo", ""}}), Pod("nodeB", {{"bar", ""}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {AntiAffinityMismatch(), AntiAffinityMismatch()}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
       "as a "
       "single term match - case when one term has invalid topologyKey",
       Pod("", {{"foo", ""}, {"bar", ""}}),
       {Pod("nodeA", {},
            {.required_anti = {Term("invalid-node-label", {Exists("foo")}), Term("zone", {Exists("bar")})}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {ExistingAntiAffinityMismatch(), kOk}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
       "as a "
       "single term match - case when one term has invalid topologyKey",
       Pod("", {}, {.required_anti = {Term("invalid-node-label", {Exists("foo")}), Term("zone", {Exists("bar")})}}),
       {Pod("nodeA", {{"foo", ""}, {"bar", ""}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {AntiAffinityMismatch(), kOk}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
       "as a "
       "single term match - case when all terms have valid topologyKey",
       Pod("", {{"foo", ""}, {"bar", ""}}),
       {Pod("nodeA", {}, {.required_anti = {Term("region", {Exists("foo")}), Term("zone", {Exists("bar")})}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {ExistingAntiAffinityMismatch(), ExistingAntiAffinityMismatch()}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
       "as a "
       "single term match - case when all terms have valid topologyKey",
       Pod("", {}, {.required_anti = {Term("region", {Exists("foo")}), Term("zone", {Exists("bar")})}}),
       {Pod("nodeA", {{"foo", ""}, {"bar", ""}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {AntiAffinityMismatch(), AntiAffinityMismatch()}},
      {"Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity "
       "term "
       "matches incoming pod, so incoming pod can only be scheduled to nodeC",
       Pod("", {{"foo", ""}, {"bar", ""}}),
       {Pod("nodeA", {}, {.required_anti = {Term("zone", {Exists("foo")}), Term("zone", {Exists("labelA")})}}),
        Pod("nodeB", {}, {.required_anti = {Term("zone", {Exists("bar")}), Term("zone", {Exists("labelB")})}})},
       {Node("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        Node("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}}),
        Node("nodeC", {{"region", "r1"}, {"zone", "z3"}, {"hostname", "nodeC"}})},
       Code::kSuccess,
       {ExistingAntiAffinityMismatch(), ExistingAntiAffinityMismatch(), kOk}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
       "topologyKeys "
       "match",
       Pod("", {}, {.required = {Term("region", {Exists("foo")}), Term("zone", {Exists("bar")})}}),
       {Pod("nodeA", {{"foo", ""}, {"bar", ""}})},
       abc_nodes("z1", "z1"),
       Code::kSuccess,
       {kOk, kOk}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
       "topologyKeys "
       "match, and the match logic should be satisfied on the same pod",
       Pod("", {}, {.required = {Term("region", {Exists("foo")}), Term("zone", {Exists("bar")})}}),
       {Pod("nodeA", {{"foo", ""}}), Pod("nodeB", {{"bar", ""}})},
       abc_nodes("z1", "z2"),
       Code::kSuccess,
       {AffinityMismatch(), AffinityMismatch()}},
  };
  RunFilterCases(cases, /*team_namespaces=*/false);
}

TEST(InterPodAffinityFilter, FilterWithoutPreFilterIsAnError) {
  FakeHandle handle;
  auto plugin = MakePlugin(handle);
  CycleState state;
  auto node = testing::MakeNodeInfo(Node("n"));
  auto info = PodInfo::Create(Pod("", {}));
  EXPECT_EQ(plugin->Filter(state, *info, *node),
            Status::Error("error reading \"PreFilterInterPodAffinity\" from cycleState: not found"));
  EXPECT_EQ(plugin->AddPod(state, *info, *info, *node).code(), Code::kError);
  EXPECT_EQ(plugin->RemovePod(state, *info, *info, *node).code(), Code::kError);
}

// Upstream's TestGetTPMapMatchingIncomingAffinityAntiAffinity, read through PreFilter's state.
TEST(InterPodAffinityFilter, IncomingAffinityAntiAffinityCounts) {
  auto normal = [](LabelList labels) { return Pod("nodeA", std::move(labels)); };
  const CountMap host_a1 = {{{"hostname", "nodeA"}, 1}};
  struct Case {
    std::string name;
    std::vector<PodPtr> existing;
    PodPtr pod;
    CountMap want_affinity;
    CountMap want_anti_affinity;
  };
  std::vector<Case> cases = {
      {"nil test", {}, Pod("", {}), {}, {}},
      {"incoming pod without affinity/anti-affinity causes a no-op", {normal({{"aaa", ""}})}, Pod("", {}), {}, {}},
      {"no pod has label that violates incoming pod's affinity and anti-affinity",
       {normal({{"bbb", ""}})},
       Pod("", {},
           {.required = {Term("hostname", {Exists("aaa")})}, .required_anti = {Term("hostname", {Exists("aaa")})}}),
       {},
       {}},
      {"existing pod matches incoming pod's affinity and anti-affinity - single term case",
       {normal({{"aaa", ""}})},
       Pod("", {},
           {.required = {Term("hostname", {Exists("aaa")})}, .required_anti = {Term("hostname", {Exists("aaa")})}}),
       host_a1,
       host_a1},
      {"existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
       {normal({{"aaa", ""}, {"bbb", ""}})},
       Pod("", {},
           {.required = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("bbb")})},
            .required_anti = {Term("hostname", {Exists("aaa")})}}),
       {{{"hostname", "nodeA"}, 2}},
       host_a1},
      {"existing pod not match incoming pod's affinity but matches anti-affinity",
       {normal({{"aaa", ""}})},
       Pod("", {},
           {.required = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("bbb")})},
            .required_anti = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("bbb")})}}),
       {},
       host_a1},
      {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
       {normal({{"aaa", ""}, {"bbb", ""}})},
       Pod("", {},
           {.required = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("ccc")})},
            .required_anti = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("ccc")})}}),
       {},
       host_a1},
      {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
       {normal({{"bbb", ""}})},
       Pod("", {},
           {.required = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("bbb")})},
            .required_anti = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("bbb")})}}),
       {},
       host_a1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHandle handle({Node("nodeA", {{"hostname", "nodeA"}})}, c.existing);
    auto plugin = MakePlugin(handle);
    auto info = PodInfo::Create(c.pod);
    CycleState state;
    auto [result, status] = plugin->PreFilter(state, *info, handle.snapshot().List());
    const PreFilterState* s = GetPreFilterState(state);
    CountMap affinity = s ? s->affinity_counts.ToMap() : CountMap{};
    CountMap anti = s ? s->anti_affinity_counts.ToMap() : CountMap{};
    EXPECT_EQ(affinity, c.want_affinity);
    EXPECT_EQ(anti, c.want_anti_affinity);
  }
}

// Upstream's TestPreFilterStateAddRemovePod: AddPod brings the state to what PreFilter computes
// with the pod present; RemovePod brings it back.
TEST(InterPodAffinityFilter, PreFilterStateAddRemovePod) {
  const LabelList label1 = {{"region", "r1"}, {"zone", "z11"}};
  const LabelList label2 = {{"region", "r1"}, {"zone", "z12"}};
  const LabelList label3 = {{"region", "r2"}, {"zone", "z21"}};
  const LabelList selector1 = {{"foo", "bar"}};
  const auto anti_foo_bar = std::vector<api::PodAffinityTerm>{Term("region", {In("foo", {"bar"})})};
  const auto complex = std::vector<api::PodAffinityTerm>{Term("region", {In("foo", {"bar", "buzz"})}),
                                                         Term("zone", {NotIn("service", {"bar", "security", "test"})})};
  auto named = [](PodPtr p, std::string name) {
    p->metadata.name = name;
    p->metadata.uid = "uid-" + name;
    return p;
  };
  struct Case {
    std::string name;
    PodPtr pending;
    std::vector<PodPtr> existing;
    PodPtr added;
    CountMap want_anti_affinity;
    CountMap want_affinity;
  };
  std::vector<Case> cases = {
      {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
       named(Pod("", selector1, {.required_anti = anti_foo_bar}), "pending"),
       {named(Pod("nodeA", selector1), "p1"), named(Pod("nodeC", {}, {.required_anti = anti_foo_bar}), "p2")},
       named(Pod("nodeB", selector1, {.required_anti = anti_foo_bar}), "addedPod"),
       {{{"region", "r1"}, 2}},
       {}},
      {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
       named(Pod("", selector1, {.required_anti = complex}), "pending"),
       {named(Pod("nodeA", selector1), "p1"), named(Pod("nodeC", {}, {.required_anti = anti_foo_bar}), "p2")},
       named(Pod("nodeA", selector1, {.required_anti = complex}), "addedPod"),
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}, {{"zone", "z21"}, 1}},
       {}},
      {"preFilterState matching pod affinity and anti-affinity are updated correctly after adding and "
       "removing a pod",
       named(Pod("", selector1, {.required = complex}), "pending"),
       {named(Pod("nodeA", selector1), "p1"),
        named(Pod("nodeC", {}, {.required = complex, .required_anti = anti_foo_bar}), "p2")},
       named(Pod("nodeA", selector1, {.required_anti = complex}), "addedPod"),
       {},
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}}},
  };
  auto nodes = [&] {
    return std::vector<NodePtr>{Node("nodeA", label1), Node("nodeB", label2), Node("nodeC", label3)};
  };
  auto snapshot_of = [](const PreFilterState& s) {
    return std::vector<CountMap>{s.existing_anti_affinity_counts.ToMap(), s.affinity_counts.ToMap(),
                                 s.anti_affinity_counts.ToMap()};
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto pending = PodInfo::Create(c.pending);

    // The state PreFilter computes when the added pod already exists.
    std::vector<PodPtr> all = c.existing;
    all.push_back(c.added);
    FakeHandle all_handle(nodes(), all);
    auto all_plugin = MakePlugin(all_handle);
    CycleState all_state;
    ASSERT_TRUE(all_plugin->PreFilter(all_state, *pending, all_handle.snapshot().List()).second.IsSuccess());
    auto want_all = snapshot_of(*GetPreFilterState(all_state));

    FakeHandle handle(nodes(), c.existing);
    auto plugin = MakePlugin(handle);
    CycleState state;
    ASSERT_TRUE(plugin->PreFilter(state, *pending, handle.snapshot().List()).second.IsSuccess());
    auto original = snapshot_of(*GetPreFilterState(state));
    auto clone = state.Clone();

    auto added = PodInfo::Create(c.added);
    const auto* node_info = handle.snapshot().Get(c.added->spec.node_name);
    ASSERT_TRUE(plugin->AddPod(state, *pending, *added, *node_info).IsSuccess());
    const PreFilterState* s = GetPreFilterState(state);
    EXPECT_EQ(s->anti_affinity_counts.ToMap(), c.want_anti_affinity);
    EXPECT_EQ(s->affinity_counts.ToMap(), c.want_affinity);
    EXPECT_EQ(snapshot_of(*s), want_all);
    // The clone taken before AddPod is unaffected.
    EXPECT_EQ(snapshot_of(*GetPreFilterState(*clone)), original);

    ASSERT_TRUE(plugin->RemovePod(state, *pending, *added, *node_info).IsSuccess());
    EXPECT_EQ(snapshot_of(*GetPreFilterState(state)), original);
  }
}

// AddPod for a nominated pod in a namespace no snapshot pod is in: the namespaceSelector is
// resolved for it on the spot.
TEST(InterPodAffinityFilter, AddPodResolvesNewNamespaces) {
  FakeHandle handle({Node("n1", {{"zone", "z1"}}), Node("n2", {{"zone", "z2"}})}, {});
  AddTeamNamespaces(handle);
  auto plugin = MakePlugin(handle);
  auto pending = PodInfo::Create(
      Pod("", {}, {.required_anti = {Term("zone", {Exists("app")}, {}, Selector({In("team", {"team1"})}))}}));
  CycleState state;
  ASSERT_TRUE(plugin->PreFilter(state, *pending, handle.snapshot().List()).second.IsSuccess());
  const auto* n1 = handle.snapshot().Get("n1");
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), kOk);

  auto in_team1 = PodInfo::Create(Pod("n1", {{"app", "x"}}, {}, "subteam2.team1"));
  auto in_team2 = PodInfo::Create(Pod("n2", {{"app", "x"}}, {}, "subteam1.team2"));
  ASSERT_TRUE(plugin->AddPod(state, *pending, *in_team1, *n1).IsSuccess());
  ASSERT_TRUE(plugin->AddPod(state, *pending, *in_team2, *handle.snapshot().Get("n2")).IsSuccess());
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), AntiAffinityMismatch());
  EXPECT_EQ(plugin->Filter(state, *pending, *handle.snapshot().Get("n2")), kOk);
  ASSERT_TRUE(plugin->RemovePod(state, *pending, *in_team1, *n1).IsSuccess());
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), kOk);
}

// Many nodes (so the parallel precomputation really runs on several threads): Filter must agree
// with a brute-force evaluation of the rules.
TEST(InterPodAffinityFilter, ManyNodesMatchBruteForce) {
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  for (int i = 0; i < 300; ++i) {
    std::string name = "n" + std::to_string(i);
    nodes.push_back(Node(name, {{"zone", "z" + std::to_string(i % 12)}, {"hostname", name}}));
    if (i % 7 == 0) pods.push_back(Pod(name, {{"app", "db"}}));
    if (i % 11 == 0) pods.push_back(Pod(name, {{"app", "web"}}));
    if (i % 29 == 0)
      pods.push_back(Pod(name, {{"app", "cache"}}, {.required_anti = {Term("zone", {In("app", {"web"})})}}));
  }
  FakeHandle handle(nodes, pods);
  auto plugin = MakePlugin(handle);
  auto pod =
      Pod("", {{"app", "web"}},
          {.required = {Term("zone", {In("app", {"db"})})}, .required_anti = {Term("hostname", {In("app", {"web"})})}});
  auto info = PodInfo::Create(pod);
  CycleState state;
  ASSERT_TRUE(plugin->PreFilter(state, *info, handle.snapshot().List()).second.IsSuccess());
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE(i);
    int zone = i % 12;
    bool db_in_zone = false, cache_in_zone = false;
    for (int j = 0; j < 300; ++j) {
      if (j % 12 != zone) continue;
      db_in_zone |= j % 7 == 0;
      cache_in_zone |= j % 29 == 0;
    }
    Status want = !db_in_zone     ? AffinityMismatch()
                  : i % 11 == 0   ? AntiAffinityMismatch()
                  : cache_in_zone ? ExistingAntiAffinityMismatch()
                                  : kOk;
    EXPECT_EQ(plugin->Filter(state, *info, *handle.snapshot().Get("n" + std::to_string(i))), want);
  }
}

// AddPod/RemovePod and Filter with a NodeInfo from outside the snapshot (as preemption's what-ifs
// may pass) whose topology value no snapshot node has: counted in an extra slot, and clones taken
// before or after stay independent.
TEST(InterPodAffinityFilter, AddRemovePodOnNodeOutsideSnapshot) {
  FakeHandle handle({Node("n1", {{"zone", "z1"}, {"hostname", "n1"}})}, {});
  auto plugin = MakePlugin(handle);
  auto pending = PodInfo::Create(Pod("", {{"app", "web"}}, {.required_anti = {Term("zone", {In("app", {"web"})})}}));
  CycleState state;
  ASSERT_TRUE(plugin->PreFilter(state, *pending, handle.snapshot().List()).second.IsSuccess());
  const auto* n1 = handle.snapshot().Get("n1");
  framework::NodeInfo outside(Node("n9", {{"zone", "z9"}, {"hostname", "n9"}}));
  framework::NodeInfo outside_same_zone(Node("n8", {{"zone", "z9"}}));
  EXPECT_EQ(plugin->Filter(state, *pending, outside), kOk);
  auto before = state.Clone();

  // A web pod on the outside node repels the pending pod from zone z9 only.
  auto web = PodInfo::Create(Pod("n9", {{"app", "web"}}));
  ASSERT_TRUE(plugin->AddPod(state, *pending, *web, outside).IsSuccess());
  EXPECT_EQ(GetPreFilterState(state)->anti_affinity_counts.ToMap(), (CountMap{{{"zone", "z9"}, 1}}));
  EXPECT_EQ(plugin->Filter(state, *pending, outside), AntiAffinityMismatch());
  EXPECT_EQ(plugin->Filter(state, *pending, outside_same_zone), AntiAffinityMismatch());
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), kOk);

  // A pod whose required anti-affinity on a key PreFilter never met ("rack") matches the pending
  // pod: the symmetric check rejects nodes in its rack.
  framework::NodeInfo rack_node(Node("n7", {{"zone", "z1"}, {"rack", "r1"}}));
  auto repeller = PodInfo::Create(Pod("n7", {{"app", "db"}}, {.required_anti = {Term("rack", {In("app", {"web"})})}}));
  ASSERT_TRUE(plugin->AddPod(state, *pending, *repeller, rack_node).IsSuccess());
  EXPECT_EQ(GetPreFilterState(state)->existing_anti_affinity_counts.ToMap(), (CountMap{{{"rack", "r1"}, 1}}));
  framework::NodeInfo other_rack(Node("n6", {{"zone", "z1"}, {"rack", "r2"}}));
  EXPECT_EQ(plugin->Filter(state, *pending, rack_node), ExistingAntiAffinityMismatch());
  EXPECT_EQ(plugin->Filter(state, *pending, other_rack), kOk);

  // Clones: the one taken before is unaffected; one taken now diverges independently.
  EXPECT_EQ(GetPreFilterState(*before)->anti_affinity_counts.ToMap(), CountMap{});
  EXPECT_EQ(plugin->Filter(*before, *pending, outside), kOk);
  auto after = state.Clone();
  ASSERT_TRUE(plugin->RemovePod(*after, *pending, *web, outside).IsSuccess());
  ASSERT_TRUE(plugin->RemovePod(*after, *pending, *repeller, rack_node).IsSuccess());
  EXPECT_EQ(plugin->Filter(*after, *pending, outside), kOk);
  EXPECT_EQ(plugin->Filter(*after, *pending, rack_node), kOk);
  EXPECT_EQ(plugin->Filter(state, *pending, outside), AntiAffinityMismatch());
  EXPECT_EQ(plugin->Filter(state, *pending, rack_node), ExistingAntiAffinityMismatch());

  // Counts that return to zero leave nothing behind.
  ASSERT_TRUE(plugin->RemovePod(state, *pending, *web, outside).IsSuccess());
  ASSERT_TRUE(plugin->RemovePod(state, *pending, *repeller, rack_node).IsSuccess());
  EXPECT_TRUE(GetPreFilterState(state)->anti_affinity_counts.empty());
  EXPECT_TRUE(GetPreFilterState(state)->existing_anti_affinity_counts.empty());
  EXPECT_EQ(plugin->Filter(state, *pending, outside), kOk);
}

// Required affinity with the "first pod of a group" rule after AddPod/RemovePod on an outside
// node: once a matching pod is counted anywhere, only its domain is allowed; when it is removed
// again, the rule applies again.
TEST(InterPodAffinityFilter, AffinityCountsReturnToEmptyOutsideSnapshot) {
  FakeHandle handle({Node("n1", {{"zone", "z1"}})}, {});
  auto plugin = MakePlugin(handle);
  auto pending = PodInfo::Create(Pod("", {{"app", "web"}}, {.required = {Term("zone", {In("app", {"web"})})}}));
  CycleState state;
  ASSERT_TRUE(plugin->PreFilter(state, *pending, handle.snapshot().List()).second.IsSuccess());
  const auto* n1 = handle.snapshot().Get("n1");
  framework::NodeInfo outside(Node("n9", {{"zone", "z9"}}));
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), kOk);  // matches its own terms
  auto web = PodInfo::Create(Pod("n9", {{"app", "web"}}));
  ASSERT_TRUE(plugin->AddPod(state, *pending, *web, outside).IsSuccess());
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), AffinityMismatch());
  EXPECT_EQ(plugin->Filter(state, *pending, outside), kOk);
  ASSERT_TRUE(plugin->RemovePod(state, *pending, *web, outside).IsSuccess());
  EXPECT_EQ(plugin->Filter(state, *pending, *n1), kOk);
}

// Pods stamped from one template share interned ids; the memoized matches must still tell apart
// pods whose labels or namespaces differ, and existing pods' terms that differ only in namespace.
TEST(InterPodAffinityFilter, MemoizedMatchesDistinguishLabelSetsAndTerms) {
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  for (int i = 0; i < 40; ++i) {
    std::string name = "n" + std::to_string(i);
    nodes.push_back(Node(name, {{"hostname", name}}));
    if (i % 4 == 0) pods.push_back(Pod(name, {{"app", "web"}}));
    if (i % 4 == 1) pods.push_back(Pod(name, {{"app", "web"}}, {}, "other"));
    if (i % 4 == 2) pods.push_back(Pod(name, {{"app", "db"}}));
    if (i % 8 == 3) {
      pods.push_back(Pod(name, {}, {.required_anti = {Term("hostname", {In("app", {"api"})}, {"default"})}}));
    }
    if (i % 8 == 7) {
      pods.push_back(Pod(name, {}, {.required_anti = {Term("hostname", {In("app", {"api"})}, {"other"})}}));
    }
  }
  FakeHandle handle(nodes, pods);
  auto plugin = MakePlugin(handle);
  auto info = PodInfo::Create(Pod("", {{"app", "api"}}, {.required_anti = {Term("hostname", {In("app", {"web"})})}}));
  CycleState state;
  ASSERT_TRUE(plugin->PreFilter(state, *info, handle.snapshot().List()).second.IsSuccess());
  for (int i = 0; i < 40; ++i) {
    SCOPED_TRACE(i);
    Status want = kOk;
    if (i % 4 == 0) want = AntiAffinityMismatch();          // web in the pod's namespace
    if (i % 8 == 3) want = ExistingAntiAffinityMismatch();  // term on the pod's namespace
    EXPECT_EQ(plugin->Filter(state, *info, *handle.snapshot().Get("n" + std::to_string(i))), want);
  }
}

// One plugin over many cycles (its per-node counts are reused while nodes keep their
// generation): after pods come and go, nodes are replaced, and pods with other terms are
// scheduled in between, PreFilter must count what a fresh plugin counts.
TEST(InterPodAffinityFilter, CountsReusedAcrossCyclesMatchFreshPlugin) {
  auto nodes = [](int n, const std::string& prefix) {
    std::vector<NodePtr> out;
    for (int i = 0; i < n; ++i) {
      std::string name = prefix + std::to_string(i);
      out.push_back(Node(name, {{"zone", "z" + std::to_string(i % 3)}, {"hostname", name}}));
    }
    return out;
  };
  FakeHandle handle(nodes(12, "n"), {});
  auto plugin = MakePlugin(handle);
  auto web = PodInfo::Create(Pod(
      "", {{"app", "web"}},
      {.required = {Term("zone", {In("app", {"db"})})}, .required_anti = {Term("hostname", {In("app", {"web"})})}}));
  auto db = PodInfo::Create(Pod("", {{"app", "db"}}, {.required_anti = {Term("zone", {In("app", {"cache"})})}}));
  auto counts = [](const CycleState& state) {
    const PreFilterState* s = GetPreFilterState(state);
    return s ? std::vector<CountMap>{s->existing_anti_affinity_counts.ToMap(), s->affinity_counts.ToMap(),
                                     s->anti_affinity_counts.ToMap()}
             : std::vector<CountMap>{};
  };
  auto check = [&](const std::string& step) {
    SCOPED_TRACE(step);
    for (const auto& pod : {web, web, db, db, web}) {
      CycleState state;
      plugin->PreFilter(state, *pod, handle.snapshot().List());
      auto fresh = MakePlugin(handle);
      CycleState fresh_state;
      fresh->PreFilter(fresh_state, *pod, handle.snapshot().List());
      EXPECT_EQ(counts(state), counts(fresh_state));
      for (const auto* n : handle.snapshot().List()) {
        EXPECT_EQ(plugin->Filter(state, *pod, *n), fresh->Filter(fresh_state, *pod, *n));
      }
    }
  };
  check("empty");
  std::vector<PodPtr> added;
  for (int i = 0; i < 12; i += 2) {
    added.push_back(Pod("n" + std::to_string(i), {{"app", i % 4 == 0 ? "web" : "db"}}));
    added.back()->metadata.name = "p" + std::to_string(i);
    added.back()->metadata.uid = "uid-p" + std::to_string(i);
    ASSERT_TRUE(handle.snapshot().AddPod(added.back()));
  }
  // Existing pods whose anti-affinity repels web pods, by plain namespaces or by the namespace's
  // labels.
  for (int i : {1, 5, 9}) {
    auto p = Pod("n" + std::to_string(i), {{"app", "guard"}},
                 {.required_anti = {Term(i == 5 ? "hostname" : "zone", {In("app", {"web"})}),
                                    Term("zone", {In("app", {"web"})}, {}, Selector({In("team", {"a"})}))}});
    p->metadata.name = "guard" + std::to_string(i);
    p->metadata.uid = "uid-guard" + std::to_string(i);
    ASSERT_TRUE(handle.snapshot().AddPod(p));
  }
  handle.snapshot().RebuildLists();
  check("pods added");
  handle.fake_client().SetNamespaceLabels(kDefaultNs, {{"team", "a"}});
  check("namespace labels changed");
  ASSERT_TRUE(handle.snapshot().RemovePod(*added[0]));
  // Nodes that had pods before and after (the counts must not come from before).
  for (auto [node, app] :
       {std::pair{"n4", "db"}, std::pair{"n2", "web"}, std::pair{"n6", "cache"}, std::pair{"n9", "db"}}) {
    auto p = Pod(node, {{"app", app}},
                 {.required_anti = {Term("zone", {In("app", {app == std::string("db") ? "web" : "x"})})}});
    p->metadata.name = std::string("more-") + node;
    p->metadata.uid = std::string("uid-more-") + node;
    ASSERT_TRUE(handle.snapshot().AddPod(p));
  }
  handle.snapshot().RebuildLists();
  check("pods changed");
  // Other nodes at the same snapshot indexes.
  std::vector<PodPtr> pods = {Pod("m1", {{"app", "web"}}), Pod("m2", {{"app", "db"}}), Pod("m5", {{"app", "db"}})};
  handle.snapshot().Reset(nodes(8, "m"), pods);
  check("nodes replaced");
}

// ---------------------------------------------------------------------------------------------
// Scoring

struct ScoreCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  std::vector<int64_t> want_scores;
  Code want_pre_score = Code::kSuccess;
  bool ignore_preferred_terms_of_existing_pods = false;
  int32_t hard_pod_affinity_weight = 1;
};

void RunScoreCases(const std::vector<ScoreCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHandle handle(c.nodes, c.pods);
    AddTeamNamespaces(handle);
    auto plugin =
        MakePlugin(handle, {{"hardPodAffinityWeight", c.hard_pod_affinity_weight},
                            {"ignorePreferredTermsOfExistingPods", c.ignore_preferred_terms_of_existing_pods}});
    auto info = PodInfo::Create(c.pod);
    CycleState state;
    Status status = plugin->PreScore(state, *info, handle.snapshot().List());
    ASSERT_EQ(status.code(), c.want_pre_score) << status.Message();
    if (!status.IsSuccess()) continue;
    framework::NodeScoreList scores;
    for (const auto& n : c.nodes) {
      auto [score, st] = plugin->Score(state, *info, *handle.snapshot().Get(n->metadata.name));
      ASSERT_TRUE(st.IsSuccess()) << st.Message();
      scores.push_back({n->metadata.name, score});
    }
    ASSERT_TRUE(plugin->NormalizeScore(state, *info, scores).IsSuccess());
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want_scores);
  }
}

TEST(InterPodAffinityScore, PreferredAffinity) {
  const LabelList rg_china = {{"region", "China"}};
  const LabelList rg_india = {{"region", "India"}};
  const LabelList az1 = {{"az", "az1"}};
  const LabelList az2 = {{"az", "az2"}};
  const LabelList rg_china_az1 = {{"region", "China"}, {"az", "az1"}};
  const LabelList s1 = {{"security", "S1"}};
  const LabelList s2 = {{"security", "S2"}};
  const std::vector<std::string> no_ns;
  const auto team1 = Selector({In("team", {"team1"})});

  const AffinitySpec stay_with_s1_in_region = {.preferred = {Weighted(5, Term("region", {In("security", {"S1"})}))}};
  const AffinitySpec stay_with_s2_in_region = {.preferred = {Weighted(6, Term("region", {In("security", {"S2"})}))}};
  const AffinitySpec affinity3 = {
      .preferred = {Weighted(8, Term("region", {NotIn("security", {"S1"}), In("security", {"S2"})})),
                    Weighted(2, Term("region", {Exists("security"), DoesNotExist("wrongkey")}))}};
  const AffinitySpec hard_affinity = {.required = {Term("region", {In("security", {"S1", "value2"})}),
                                                   Term("region", {Exists("security"), DoesNotExist("wrongkey")})}};
  const AffinitySpec away_from_s1_in_az = {.preferred_anti = {Weighted(5, Term("az", {In("security", {"S1"})}))}};
  const AffinitySpec away_from_s2_in_az = {.preferred_anti = {Weighted(5, Term("az", {In("security", {"S2"})}))}};
  const AffinitySpec stay_with_s1_in_region_away_from_s2_in_az = {
      .preferred = {Weighted(8, Term("region", {In("security", {"S1"})}))},
      .preferred_anti = {Weighted(5, Term("az", {In("security", {"S2"})}))}};
  const AffinitySpec affinity_namespace_selector = {
      .preferred = {Weighted(5, Term("region", {In("security", {"S1"})}, {"subteam2.team2"}, team1))}};
  const AffinitySpec anti_affinity_namespace_selector = {
      .preferred_anti = {Weighted(5, Term("region", {In("security", {"S1"})}, {"subteam2.team2"}, team1))}};

  auto n3 = [&] { return std::vector<NodePtr>{Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)}; };

  std::vector<ScoreCase> cases = {
      {"all nodes are same priority as Affinity is nil", Pod("", s1), {}, n3(), {}, Code::kSkip},
      {"Affinity: pod that matches topology key & pods in nodes will get high score comparing to others "
       "which "
       "doesn't match either pods in nodes or in topology key",
       Pod("", s1, stay_with_s1_in_region),
       {Pod("node1", s1), Pod("node2", s2), Pod("node3", s1)},
       n3(),
       {100, 0, 0}},
      {"All the nodes that have the same topology key & label value with one of them has an existing pod "
       "that "
       "match the affinity rules, have the same score",
       Pod("", {}, stay_with_s1_in_region),
       {Pod("node1", s1)},
       {Node("node1", rg_china), Node("node2", rg_china_az1), Node("node3", rg_india)},
       {100, 100, 0}},
      {"Affinity: nodes in one region has more matching pods comparing to other region, so the region which "
       "has "
       "more matches will get high score",
       Pod("", s1, stay_with_s2_in_region),
       {Pod("node1", s2), Pod("node1", s2), Pod("node2", s2), Pod("node3", s2), Pod("node4", s2), Pod("node5", s2)},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", rg_china), Node("node4", rg_china),
        Node("node5", rg_india)},
       {100, 0, 100, 100, 0}},
      {"Affinity: different Label operators and values for pod affinity scheduling preference, including "
       "some "
       "match failures ",
       Pod("", s1, affinity3),
       {Pod("node1", s1), Pod("node2", s2), Pod("node3", s1)},
       n3(),
       {20, 100, 0}},
      {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod "
       "affinity "
       "symmetry",
       Pod("", s2),
       {Pod("node1", s1, stay_with_s1_in_region), Pod("node2", s2, stay_with_s2_in_region)},
       n3(),
       {0, 100, 0}},
      {"Affinity symmetry with namespace selector",
       Pod("", s1, {}, "subteam1.team1"),
       {Pod("node1", s1, affinity_namespace_selector), Pod("node2", s2, stay_with_s2_in_region)},
       n3(),
       {100, 0, 0}},
      {"AntiAffinity symmetry with namespace selector",
       Pod("", s1, {}, "subteam1.team1"),
       {Pod("node1", s1, anti_affinity_namespace_selector), Pod("node2", s2, stay_with_s2_in_region)},
       n3(),
       {0, 100, 100}},
      {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity "
       "symmetry",
       Pod("", s1),
       {Pod("node1", s1, hard_affinity), Pod("node2", s2, hard_affinity)},
       n3(),
       {100, 100, 0}},
      {"Anti Affinity: pod that does not match existing pods in node will get high score ",
       Pod("", s1, away_from_s1_in_az),
       {Pod("node1", s1), Pod("node2", s2)},
       {Node("node1", az1), Node("node2", rg_china)},
       {0, 100}},
      {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
       "comparing to others ",
       Pod("", s1, away_from_s1_in_az),
       {Pod("node1", s1), Pod("node2", s1)},
       {Node("node1", az1), Node("node2", rg_china)},
       {0, 100}},
      {"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
       "unmatches will get high score",
       Pod("", s1, away_from_s1_in_az),
       {Pod("node1", s1), Pod("node1", s1), Pod("node2", s2)},
       {Node("node1", az1), Node("node2", rg_india)},
       {0, 100}},
      {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
       Pod("", s2),
       {Pod("node1", s1, away_from_s2_in_az), Pod("node2", s2, away_from_s1_in_az)},
       {Node("node1", az1), Node("node2", az2)},
       {0, 100}},
      {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both "
       "pod "
       "affinity & anti affinity",
       Pod("", s1, stay_with_s1_in_region_away_from_s2_in_az),
       {Pod("node1", s1), Pod("node2", s1)},
       {Node("node1", rg_china), Node("node2", az1)},
       {100, 0}},
      {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
       "existing "
       "pods have the same labels",
       Pod("", s1, stay_with_s1_in_region_away_from_s2_in_az),
       {Pod("node1", s1), Pod("node1", s1), Pod("node2", s1), Pod("node3", s1), Pod("node3", s1), Pod("node4", s1),
        Pod("node5", s1)},
       {Node("node1", rg_china_az1), Node("node2", rg_india), Node("node3", rg_china), Node("node4", rg_china),
        Node("node5", rg_india)},
       {100, 0, 100, 100, 0}},
      {"Affinity and Anti Affinity and symmetry: considered only "
       "preferredDuringSchedulingIgnoredDuringExecution "
       "in both pod affinity & anti affinity & symmetry",
       Pod("", s1, stay_with_s1_in_region_away_from_s2_in_az),
       {Pod("node1", s1), Pod("node2", s2), Pod("node3", {}, stay_with_s1_in_region_away_from_s2_in_az),
        Pod("node4", {}, away_from_s1_in_az)},
       {Node("node1", rg_china), Node("node2", az1), Node("node3", rg_india), Node("node4", az2)},
       {100, 0, 100, 0}},
      {"Avoid panic when partial nodes in a topology don't have pods with affinity",
       Pod("", s1),
       {Pod("node1", s1), Pod("node2", {}, stay_with_s1_in_region_away_from_s2_in_az)},
       {Node("node1", rg_china), Node("node2", rg_china)},
       {0, 0}},
      {"Affinity with pods matching NamespaceSelector",
       Pod("", s1, affinity_namespace_selector, "subteam1.team1"),
       {Pod("node1", s1, {}, "subteam1.team1"), Pod("node1", s1, {}, "subteam1.team1"),
        Pod("node1", s1, {}, "subteam1.team2"), Pod("node2", s1, {}, "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {100, 0}},
      {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
       Pod("", s1, affinity_namespace_selector, "subteam1.team1"),
       {Pod("node1", s1, {}, "subteam1.team1"), Pod("node1", s1, {}, "subteam1.team1"),
        Pod("node1", s1, {}, "subteam2.team2"), Pod("node2", s1, {}, "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {100, 0}},
      {"Anti-affinity with pods matching NamespaceSelector",
       Pod("", s1, anti_affinity_namespace_selector, "subteam1.team1"),
       {Pod("node1", s1, {}, "subteam1.team1"), Pod("node1", s1, {}, "subteam1.team1"),
        Pod("node1", s1, {}, "subteam1.team2"), Pod("node2", s1, {}, "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {0, 100}},
      {"Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
       Pod("", s1, anti_affinity_namespace_selector, "subteam1.team1"),
       {Pod("node1", s1, {}, "subteam1.team1"), Pod("node1", s1, {}, "subteam1.team1"),
        Pod("node1", s1, {}, "subteam2.team2"), Pod("node2", s1, {}, "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {0, 100}},
      {"Ignore preferred terms of existing pods",
       Pod("", s2),
       {Pod("node1", s1, stay_with_s1_in_region_away_from_s2_in_az), Pod("node2", s2, stay_with_s2_in_region)},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {},
       Code::kSkip,
       true},
      {"Do not ignore preferred terms of existing pods",
       Pod("", s2),
       {Pod("node1", s1, stay_with_s1_in_region_away_from_s2_in_az), Pod("node2", s2, stay_with_s2_in_region)},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {0, 100},
       Code::kSuccess,
       false},
      {"No nodes to score", Pod("", s2), {}, {}, {}, Code::kSkip},
  };
  RunScoreCases(cases);
}

TEST(InterPodAffinityScore, PreferredAffinityWithHardPodAffinitySymmetricWeight) {
  const LabelList service_s1 = {{"service", "S1"}};
  const AffinitySpec hard_pod_affinity = {.required = {
                                              Term("region", {In("service", {"S1"})}),
                                          }};
  AffinitySpec hard = hard_pod_affinity;
  hard.required[0].namespaces = {kDefaultNs, "subteam2.team2"};
  hard.required[0].namespace_selector = Selector({In("team", {"team1"})});
  auto nodes = [] {
    return std::vector<NodePtr>{Node("node1", {{"region", "China"}}), Node("node2", {{"region", "India"}}),
                                Node("node3", {{"az", "az1"}})};
  };
  auto existing = [&] { return std::vector<PodPtr>{Pod("node1", {}, hard), Pod("node2", {}, hard)}; };
  std::vector<ScoreCase> cases = {
      {"with default weight", Pod("", service_s1), existing(), nodes(), {100, 100, 0}, Code::kSuccess, false, 1},
      {"with zero weight", Pod("", service_s1), existing(), nodes(), {}, Code::kSkip, false, 0},
      {"with no matching namespace",
       Pod("", service_s1, {}, "subteam1.team2"),
       existing(),
       nodes(),
       {},
       Code::kSkip,
       false,
       1},
      {"with matching NamespaceSelector",
       Pod("", service_s1, {}, "subteam1.team1"),
       existing(),
       nodes(),
       {100, 100, 0},
       Code::kSuccess,
       false,
       1},
      {"with matching Namespaces",
       Pod("", service_s1, {}, "subteam2.team2"),
       existing(),
       nodes(),
       {100, 100, 0},
       Code::kSuccess,
       false,
       1},
  };
  RunScoreCases(cases);
}

// Score for NodeInfos from outside the snapshot: a zone the snapshot has scores as its nodes do;
// a zone it lacks holds no counted pods.
TEST(InterPodAffinityScore, NodesOutsideSnapshot) {
  FakeHandle handle({Node("n1", {{"zone", "z1"}}), Node("n2", {{"zone", "z2"}})},
                    {Pod("n1", {{"app", "db"}}), Pod("n1", {{"app", "db"}}), Pod("n2", {{"app", "web"}})});
  auto plugin = MakePlugin(handle);
  auto info = PodInfo::Create(Pod("", {},
                                  {.preferred = {Weighted(5, Term("zone", {In("app", {"db"})}))},
                                   .preferred_anti = {Weighted(3, Term("zone", {In("app", {"web"})}))}}));
  CycleState state;
  ASSERT_TRUE(plugin->PreScore(state, *info, handle.snapshot().List()).IsSuccess());
  auto score = [&](const framework::NodeInfo& n) {
    auto [s, st] = plugin->Score(state, *info, n);
    EXPECT_TRUE(st.IsSuccess());
    return s;
  };
  EXPECT_EQ(score(*handle.snapshot().Get("n1")), 10);
  EXPECT_EQ(score(*handle.snapshot().Get("n2")), -3);
  EXPECT_EQ(score(framework::NodeInfo(Node("n3", {{"zone", "z1"}}))), 10);
  EXPECT_EQ(score(framework::NodeInfo(Node("n4", {{"zone", "z9"}}))), 0);
  EXPECT_EQ(score(framework::NodeInfo(Node("n5"))), 0);
}

TEST(InterPodAffinityScore, ScoreWithoutPreScoreIsAnError) {
  FakeHandle handle;
  auto plugin = MakePlugin(handle);
  CycleState state;
  auto node = testing::MakeNodeInfo(Node("n"));
  auto info = PodInfo::Create(Pod("", {}));
  EXPECT_EQ(plugin->Score(state, *info, *node).second,
            Status::Error("failed to read \"PreScoreInterPodAffinity\" from cycleState: not found"));
  framework::NodeScoreList scores;
  EXPECT_EQ(plugin->NormalizeScore(state, *info, scores).code(), Code::kError);
}

TEST(InterPodAffinityScore, NormalizeTruncatesLikeUpstream) {
  // Raw scores -5, 0, 7: (s - min) * 100 / 12, truncated toward zero.
  FakeHandle handle({Node("a", {{"zone", "a"}}), Node("b", {{"zone", "b"}}), Node("c", {{"zone", "c"}})},
                    {Pod("a", {{"app", "x"}}), Pod("c", {{"app", "y"}})});
  auto plugin = MakePlugin(handle);
  auto info = PodInfo::Create(Pod("", {},
                                  {.preferred = {Weighted(7, Term("zone", {In("app", {"y"})}))},
                                   .preferred_anti = {Weighted(5, Term("zone", {In("app", {"x"})}))}}));
  CycleState state;
  ASSERT_TRUE(plugin->PreScore(state, *info, handle.snapshot().List()).IsSuccess());
  framework::NodeScoreList scores;
  for (const char* n : {"a", "b", "c"})
    scores.push_back({n, plugin->Score(state, *info, *handle.snapshot().Get(n)).first});
  EXPECT_EQ(scores[0].score, -5);
  EXPECT_EQ(scores[1].score, 0);
  EXPECT_EQ(scores[2].score, 7);
  ASSERT_TRUE(plugin->NormalizeScore(state, *info, scores).IsSuccess());
  EXPECT_EQ(scores[0].score, 0);
  EXPECT_EQ(scores[1].score, 41);  // 100 * 5 / 12 = 41.67
  EXPECT_EQ(scores[2].score, 100);
}

// ---------------------------------------------------------------------------------------------
// Args

TEST(InterPodAffinityArgs, DefaultsAndValidation) {
  struct Case {
    std::string name;
    nlohmann::json args;
    std::optional<InterPodAffinityArgs> want;
    std::string want_error;
  };
  std::vector<Case> cases = {
      {"null means defaults", nullptr, InterPodAffinityArgs{1, false}, ""},
      {"empty object means defaults", nlohmann::json::object(), InterPodAffinityArgs{1, false}, ""},
      {"typed envelope",
       {{"apiVersion", "kubescheduler.config.k8s.io/v1"}, {"kind", "InterPodAffinityArgs"}},
       InterPodAffinityArgs{1, false},
       ""},
      {"explicit values",
       {{"hardPodAffinityWeight", 0}, {"ignorePreferredTermsOfExistingPods", true}},
       InterPodAffinityArgs{0, true},
       ""},
      {"upper bound", {{"hardPodAffinityWeight", 100}}, InterPodAffinityArgs{100, false}, ""},
      {"negative weight",
       {{"hardPodAffinityWeight", -1}},
       std::nullopt,
       "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"},
      {"weight above range",
       {{"hardPodAffinityWeight", 101}},
       std::nullopt,
       "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
      {"unknown field", {{"hardPodAffinityWeights", 1}}, std::nullopt, "unknown field \"hardPodAffinityWeights\""},
      {"wrong type",
       {{"ignorePreferredTermsOfExistingPods", "yes"}},
       std::nullopt,
       "ignorePreferredTermsOfExistingPods: Invalid type: expected bool, got string"},
      {"every error",
       {{"hardPodAffinityWeight", "high"}, {"ignorePreferredTermsOfExistingPods", 1}, {"x", 1}},
       std::nullopt,
       "[unknown field \"x\", hardPodAffinityWeight: Invalid type: expected int32, got string, "
       "ignorePreferredTermsOfExistingPods: Invalid type: expected bool, got integer]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(ArgsOf(c.args).View());
    if (c.want) {
      ASSERT_TRUE(got.has_value()) << got.error();
      EXPECT_EQ(got->hard_pod_affinity_weight, c.want->hard_pod_affinity_weight);
      EXPECT_EQ(got->ignore_preferred_terms_of_existing_pods, c.want->ignore_preferred_terms_of_existing_pods);
    } else {
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), c.want_error);
    }
  }
  FakeHandle handle;
  EXPECT_FALSE(New(ArgsOf({{"hardPodAffinityWeight", 200}}).View(), handle).has_value());
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value());
  EXPECT_EQ((*plugin)->Name(), "InterPodAffinity");
}

// ---------------------------------------------------------------------------------------------
// Queueing hints (upstream's plugin_test.go)

PodPtr HintPod(std::string uid, std::string node, LabelList labels, const AffinitySpec& spec = {}) {
  auto p = Pod(std::move(node), std::move(labels), spec);
  p->metadata.name = uid.empty() ? "p" : uid;
  p->metadata.uid = std::move(uid);
  return p;
}

TEST(InterPodAffinityHints, EventsToRegister) {
  FakeHandle handle;
  auto plugin = MakePlugin(handle);
  auto events = plugin->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action,
            framework::action::kAdd | framework::action::kUpdatePodLabel | framework::action::kDelete);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, framework::action::kAdd | framework::action::kUpdateNodeLabel);
  EXPECT_TRUE(events[1].hint);
}

TEST(InterPodAffinityHints, IsSchedulableAfterPodChange) {
  const AffinitySpec affinity = {.required = {Term("region", {In("service", {"securityscan", "value2"})})}};
  const AffinitySpec anti = {.required_anti = {Term("region", {In("service", {"securityscan", "value2"})})}};
  const AffinitySpec multi = {.required = {Term("hostname", {Exists("aaa")}), Term("hostname", {Exists("bbb")})}};
  struct Case {
    std::string name;
    PodPtr pod;
    PodPtr old_pod;
    PodPtr new_pod;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"add a pod which matches the pod affinity", HintPod("p", "", {}, affinity), nullptr,
       HintPod("other", "fake-node", {{"service", "securityscan"}}), QueueingHint::kQueue},
      {"add an un-scheduled pod", HintPod("p", "", {}, affinity), nullptr,
       HintPod("other", "", {{"service", "securityscan"}}), QueueingHint::kSkip},
      {"add a pod which doesn't match the pod affinity", HintPod("p", "", {}, affinity), nullptr,
       HintPod("other", "fake-node", {{"aaa", "a"}}), QueueingHint::kSkip},
      {"update a pod from non-match to match pod affinity", HintPod("p", "", {}, affinity),
       HintPod("other", "fake-node", {{"aaa", "a"}}), HintPod("other", "fake-node", {{"service", "securityscan"}}),
       QueueingHint::kQueue},
      {"the updating pod matches target pod's affinity both before and after label changes",
       HintPod("p", "", {}, affinity), HintPod("other", "fake-node", {{"service", "value2"}}),
       HintPod("other", "fake-node", {{"service", "securityscan"}}), QueueingHint::kSkip},
      {"update an un-scheduled pod", HintPod("p", "", {}, affinity), HintPod("other", "", {{"aaa", "a"}}),
       HintPod("other", "", {{"service", "securityscan"}}), QueueingHint::kSkip},
      {"update a pod from match to non-match the pod affinity", HintPod("p", "", {}, affinity),
       HintPod("other", "fake-node", {{"service", "securityscan"}}), HintPod("other", "fake-node", {{"aaa", "a"}}),
       QueueingHint::kSkip},
      {"update a pod from match to non-match pod's affinity - multiple terms case", HintPod("p", "", {}, multi),
       HintPod("other", "fake-node", {{"aaa", "a"}}), HintPod("other", "fake-node", {{"service", "securityscan"}}),
       QueueingHint::kSkip},
      {"update a pod from non-match to match pod's affinity - multiple terms case", HintPod("p", "", {}, multi),
       HintPod("other", "fake-node", {{"aaa", "a"}}), HintPod("other", "fake-node", {{"aaa", ""}, {"bbb", ""}}),
       QueueingHint::kQueue},
      {"updated pod is the target pod", HintPod("p", "", {{"foo", "baz"}}), HintPod("p", "", {{"foo", "bar"}}),
       HintPod("p", "", {{"foo", "baz"}}), QueueingHint::kQueue},
      {"modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
       HintPod("p", "", {}, anti), HintPod("other", "fake-node", {{"service", "securityscan"}}),
       HintPod("other", "fake-node", {{"service", "aaaa"}}), QueueingHint::kQueue},
      {"modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
       HintPod("p", "", {}, anti), HintPod("other", "fake-node", {{"service", "bbb"}}),
       HintPod("other", "fake-node", {{"service", "securityscan"}}), QueueingHint::kSkip},
      {"delete a pod which doesn't match pod's anti-affinity", HintPod("p", "", {}, anti),
       HintPod("other", "fake-node", {{"aaa", "a"}}), nullptr, QueueingHint::kSkip},
      {"delete a pod which matches pod's anti-affinity", HintPod("p", "", {}, anti),
       HintPod("other", "fake-node", {{"service", "securityscan"}}), nullptr, QueueingHint::kQueue},
      {"delete a pod with anti-affinity that matches pending pod", HintPod("", "", {{"service", "securityscan"}}),
       HintPod("", "fake-node", {}, anti), nullptr, QueueingHint::kQueue},
      {"delete a pod with anti-affinity that doesn't match pending pod", HintPod("", "", {{"service", "foo"}}),
       HintPod("", "fake-node", {}, anti), nullptr, QueueingHint::kSkip},
      {"delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't "
       "match "
       "pending pod",
       HintPod("", "", {{"service", "foo"}}, anti), HintPod("", "fake-node", {{"service", "foo"}}, anti), nullptr,
       QueueingHint::kSkip},
      // Any matched anti-affinity term repels, so a deleted pod matching one of several terms helps.
      {"delete a pod which matches one of several anti-affinity terms",
       HintPod("p", "", {}, {.required_anti = {Term("zone", {Exists("aaa")}), Term("zone", {Exists("bbb")})}}),
       HintPod("other", "fake-node", {{"aaa", ""}}), nullptr, QueueingHint::kQueue},
  };
  FakeHandle handle;
  auto plugin = MakePlugin(handle);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects ev{c.old_pod.get(), c.new_pod.get(), nullptr, nullptr};
    EXPECT_EQ(plugin->IsSchedulableAfterPodChange(*c.pod, ev), c.want);
  }
  // Through the registered hint as the queue calls it.
  auto events = plugin->EventsToRegister();
  auto pending = HintPod("p", "", {}, affinity);
  auto added = HintPod("other", "fake-node", {{"service", "securityscan"}});
  EXPECT_EQ(events[0].hint(*pending, {nullptr, added.get(), nullptr, nullptr}), QueueingHint::kQueue);
}

TEST(InterPodAffinityHints, IsSchedulableAfterNodeChange) {
  const AffinitySpec zone_affinity = {.required = {Term("zone", {In("service", {"securityscan", "value2"})})}};
  const AffinitySpec region_affinity = {.required = {Term("region", {In("service", {"securityscan", "value2"})})}};
  const AffinitySpec zone_anti = {.required_anti = {Term("zone", {In("another", {"label"})})}};
  struct Case {
    std::string name;
    AffinitySpec spec;
    NodePtr old_node;
    NodePtr new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"add a new node with matched pod affinity topologyKey", zone_affinity, nullptr,
       Node("node-a", {{"zone", "zone1"}}), QueueingHint::kQueue},
      {"add a new node without matched topologyKey", region_affinity, nullptr, Node("node-a", {{"zone", "zone1"}}),
       QueueingHint::kSkip},
      {"update node label but not topologyKey", zone_affinity, Node("node-a", {{"aaa", "a"}}),
       Node("node-a", {{"aaa", "b"}}), QueueingHint::kSkip},
      {"update node label that isn't related to the pod affinity", zone_affinity, Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"zone", "zone1"}, {"unrelated-label", "unrelated"}}), QueueingHint::kSkip},
      {"update node with different affinity topologyKey value", zone_affinity, Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"zone", "zone2"}}), QueueingHint::kQueue},
      {"update node to have the affinity topology label", zone_affinity, Node("node-a", {{"aaa", "a"}}),
       Node("node-a", {{"zone", "zone1"}}), QueueingHint::kQueue},
      {"add a new node with matched pod anti-affinity topologyKey", zone_anti, nullptr,
       Node("node-a", {{"zone", "zone1"}}), QueueingHint::kQueue},
      {"add a new node without matched pod anti-affinity topologyKey", zone_anti, nullptr, Node("node-a"),
       QueueingHint::kQueue},
      {"update node label that isn't related to the pod anti-affinity", zone_anti, Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"zone", "zone1"}, {"unrelated-label", "unrelated"}}), QueueingHint::kSkip},
      {"update node with different anti-affinity topologyKey value", zone_anti, Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"zone", "zone2"}}), QueueingHint::kQueue},
      {"update node to have the anti-affinity topology label", zone_anti, Node("node-a", {{"aaa", "a"}}),
       Node("node-a", {{"zone", "zone1"}}), QueueingHint::kSkip},
      {"update node label not to have anti-affinity topology label", zone_anti, Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"aaa", "a"}}), QueueingHint::kQueue},
  };
  FakeHandle handle;
  auto plugin = MakePlugin(handle);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = HintPod("p", "", {}, c.spec);
    framework::EventObjects ev{nullptr, nullptr, c.old_node.get(), c.new_node.get()};
    EXPECT_EQ(plugin->IsSchedulableAfterNodeChange(*pod, ev), c.want);
  }
}

// ---------------------------------------------------------------------------------------------
// FakeHandle basics other helpers rely on.

TEST(FakeHandle, SnapshotListsAndRunnerDefaults) {
  FakeHandle handle({Node("a"), Node("b")},
                    {Pod("a", {}, {.required_anti = {Term("zone", {Exists("x")})}}), Pod("b", {}), Pod("zz", {})});
  EXPECT_EQ(handle.snapshot().List().size(), 2u);
  EXPECT_EQ(handle.snapshot().HavePodsWithAffinityList().size(), 1u);
  EXPECT_EQ(handle.snapshot().HavePodsWithRequiredAntiAffinityList().size(), 1u);
  EXPECT_EQ(handle.snapshot().Get("b")->pods().size(), 1u);
  EXPECT_EQ(handle.snapshot().Get("zz"), nullptr);
  CycleState state;
  auto info = PodInfo::Create(Pod("", {}));
  EXPECT_EQ(handle.RunFilterPlugins(state, *info, *handle.snapshot().Get("a")),
            Status::Error("not supported by FakeHandle"));
  handle.run_filter_plugins = [](const CycleState&, const PodInfo&, const framework::NodeInfo&) {
    return Status::Unschedulable("x");
  };
  EXPECT_EQ(handle.RunFilterPlugins(state, *info, *handle.snapshot().Get("a")), Status::Unschedulable("x"));
  EXPECT_EQ(handle.parallelizer().parallelism(), 2);
  EXPECT_TRUE(handle.clock().IsVirtual());
  auto pod = Pod("a", {});
  EXPECT_TRUE(handle.client().Bind(*pod, "a").IsSuccess());
  ASSERT_EQ(handle.fake_client().binds().size(), 1u);
  EXPECT_EQ(handle.fake_client().binds()[0].node_name, "a");
}

}  // namespace
}  // namespace kubesched::plugins::inter_pod_affinity
