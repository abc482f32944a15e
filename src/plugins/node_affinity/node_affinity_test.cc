#include "plugins/node_affinity/node_affinity.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::node_affinity {
namespace {

using api::SelectorOperator;
using nlohmann::json;

api::SelectorRequirement Req(std::string key, SelectorOperator op, std::vector<std::string> values = {}) {
  return {std::move(key), op, std::move(values)};
}
api::NodeSelectorTerm Exprs(std::vector<api::SelectorRequirement> reqs) { return {std::move(reqs), {}}; }
api::NodeSelectorTerm Fields(std::vector<api::SelectorRequirement> reqs) { return {{}, std::move(reqs)}; }
api::SelectorRequirement NameIn(std::string name) {
  return Req("metadata.name", SelectorOperator::kIn, {std::move(name)});
}

std::shared_ptr<api::Pod> PodWith(std::function<void(api::Pod&)> mutate) {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = "p";
  pod->metadata.uid = "uid-p";
  mutate(*pod);
  return pod;
}

std::shared_ptr<api::Pod> PodWithRequired(std::vector<api::NodeSelectorTerm> terms) {
  return PodWith([&](api::Pod& p) {
    p.spec.affinity.emplace();
    p.spec.affinity->node_affinity.emplace();
    p.spec.affinity->node_affinity->required = api::NodeSelector{std::move(terms)};
  });
}

std::shared_ptr<api::Pod> PodWithNodeSelector(api::Labels selector) {
  return PodWith([&](api::Pod& p) { p.spec.node_selector = std::move(selector); });
}

std::shared_ptr<api::Node> NodeWith(std::string name, api::Labels labels) {
  auto node = std::make_shared<api::Node>();
  node->metadata.name = std::move(name);
  node->metadata.labels = std::move(labels);
  return node;
}

// The args as plugins read them, from the nlohmann/json values the cases below are written as.
framework::ArgsDocument ArgsOf(const nlohmann::json& j) { return testing::ArgsJson(j.dump()); }

std::unique_ptr<NodeAffinity> MakePlugin(const json& args) {
  testing::FakeHandle handle;
  auto plugin = New(ArgsOf(args).View(), handle);
  EXPECT_TRUE(plugin.has_value()) << (plugin ? "" : plugin.error());
  if (!plugin) return nullptr;
  return std::unique_ptr<NodeAffinity>(dynamic_cast<NodeAffinity*>(plugin->release()));
}

const framework::Status kPodMismatch =
    framework::Status::UnschedulableAndUnresolvable("node(s) didn't match Pod's node affinity/selector");

// Mirrors upstream's TestNodeAffinity (PreFilter and Filter).
TEST(NodeAffinityTest, PreFilterAndFilter) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    api::Labels labels;
    std::string node_name;
    framework::Status want_filter;
    framework::Status want_pre_filter;
    std::optional<std::set<std::string>> want_pre_filter_nodes;
    json args;
    bool run_pre_filter = true;
  };
  const auto ok = framework::Status::Success();
  const json added_node2 = json::parse(R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}]}}})");
  const std::vector<Case> cases = {
      {"missing labels", PodWithNodeSelector({{"foo", "bar"}}), {}, "", kPodMismatch, ok, std::nullopt, nullptr},
      {"same labels", PodWithNodeSelector({{"foo", "bar"}}), {{"foo", "bar"}}, "", ok, ok, std::nullopt, nullptr},
      {"node labels are superset",
       PodWithNodeSelector({{"foo", "bar"}}),
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"node labels are subset",
       PodWithNodeSelector({{"foo", "bar"}, {"baz", "blah"}}),
       {{"foo", "bar"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with matchExpressions using In operator that matches the existing node",
       PodWithRequired({Exprs({Req("foo", SelectorOperator::kIn, {"bar", "value2"})})}),
       {{"foo", "bar"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with matchExpressions using Gt operator that matches the existing node",
       PodWithRequired({Exprs({Req("kernel-version", SelectorOperator::kGt, {"0204"})})}),
       {{"kernel-version", "0206"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with matchExpressions using NotIn operator that matches the existing node",
       PodWithRequired({Exprs({Req("mem-type", SelectorOperator::kNotIn, {"DDR", "DDR2"})})}),
       {{"mem-type", "DDR3"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with matchExpressions using Exists operator that matches the existing node",
       PodWithRequired({Exprs({Req("GPU", SelectorOperator::kExists)})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with affinity that don't match node's labels won't schedule onto the node",
       PodWithRequired({Exprs({Req("foo", SelectorOperator::kIn, {"value1", "value2"})})}),
       {{"foo", "bar"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto "
       "the node",
       PodWithRequired({Exprs({})}),
       {{"foo", "bar"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with no Affinity will schedule onto a node",
       PodWith([](api::Pod&) {}),
       {{"foo", "bar"}},
       "",
       ok,
       framework::Status::Skip(),
       std::nullopt,
       nullptr},
      {"Pod with Affinity but nil NodeSelector will schedule onto a node",
       PodWith([](api::Pod& p) {
         p.spec.affinity.emplace();
         p.spec.affinity->node_affinity.emplace();
       }),
       {{"foo", "bar"}},
       "",
       ok,
       framework::Status::Skip(),
       std::nullopt,
       nullptr},
      {"Pod with multiple matchExpressions ANDed that matches the existing node",
       PodWithRequired(
           {Exprs({Req("GPU", SelectorOperator::kExists), Req("GPU", SelectorOperator::kNotIn, {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with multiple matchExpressions ANDed that doesn't match the existing node",
       PodWithRequired(
           {Exprs({Req("GPU", SelectorOperator::kExists), Req("GPU", SelectorOperator::kIn, {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule "
       "onto the node",
       PodWithRequired({Exprs({Req("foo", SelectorOperator::kIn, {"bar", "value2"})}),
                        Exprs({Req("diffkey", SelectorOperator::kIn, {"wrong", "value2"})})}),
       {{"foo", "bar"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
       "satisfied, will "
       "schedule onto the node",
       PodWith([](api::Pod& p) {
         p.spec.node_selector = {{"foo", "bar"}};
         p.spec.affinity.emplace();
         p.spec.affinity->node_affinity.emplace();
         p.spec.affinity->node_affinity->required = api::NodeSelector{{Exprs({Req("foo", SelectorOperator::kExists)})}};
       }),
       {{"foo", "bar"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
       "deprecating) "
       "is not satisfied, won't schedule onto the node",
       PodWith([](api::Pod& p) {
         p.spec.node_selector = {{"foo", "bar"}};
         p.spec.affinity.emplace();
         p.spec.affinity->node_affinity.emplace();
         p.spec.affinity->node_affinity->required = api::NodeSelector{{Exprs({Req("foo", SelectorOperator::kExists)})}};
       }),
       {{"foo", "barrrrrr"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with an invalid value in Affinity term won't be scheduled onto the node",
       PodWithRequired({Exprs({Req("foo", SelectorOperator::kNotIn, {"invalid value: ___@#$%^"})})}),
       {{"foo", "bar"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with matchFields using In operator that matches the existing node",
       PodWithRequired({Fields({NameIn("node1")})}),
       {},
       "node1",
       ok,
       ok,
       std::set<std::string>{"node1"},
       nullptr},
      {"Pod with matchFields using In operator that does not match the existing node",
       PodWithRequired({Fields({NameIn("node1")})}),
       {},
       "node2",
       kPodMismatch,
       ok,
       std::set<std::string>{"node1"},
       nullptr},
      {"Pod with two terms: matchFields does not match, but matchExpressions matches",
       PodWithRequired(
           {Fields({NameIn("node1"), NameIn("node2")}), Exprs({Req("foo", SelectorOperator::kIn, {"bar"})})}),
       {{"foo", "bar"}},
       "node2",
       ok,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with one term: matchFields does not match, but matchExpressions matches",
       PodWithRequired({{{Req("foo", SelectorOperator::kIn, {"bar"})}, {NameIn("node1")}}}),
       {{"foo", "bar"}},
       "node2",
       kPodMismatch,
       ok,
       std::set<std::string>{"node1"},
       nullptr},
      {"Pod with one term: both matchFields and matchExpressions match",
       PodWithRequired({{{Req("foo", SelectorOperator::kIn, {"bar"})}, {NameIn("node1")}}}),
       {{"foo", "bar"}},
       "node1",
       ok,
       ok,
       std::set<std::string>{"node1"},
       nullptr},
      {"Pod with two terms: both matchFields and matchExpressions do not match",
       PodWithRequired({Fields({NameIn("node1")}), Exprs({Req("foo", SelectorOperator::kIn, {"not-match-to-bar"})})}),
       {{"foo", "bar"}},
       "node2",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr},
      {"Pod with two terms of node.Name affinity",
       PodWithRequired({Fields({NameIn("node1")}), Fields({NameIn("node2")})}),
       {},
       "node2",
       ok,
       ok,
       std::set<std::string>{"node1", "node2"},
       nullptr},
      {"Pod with two conflicting mach field requirements",
       PodWithRequired({Fields({NameIn("node1"), NameIn("node2")})}),
       {{"foo", "bar"}},
       "node2",
       kPodMismatch,
       framework::Status::UnschedulableAndUnresolvable("pod affinity terms conflict"),
       std::nullopt,
       nullptr},
      {"Matches added affinity and Pod's node affinity",
       PodWithRequired({Exprs({Req("zone", SelectorOperator::kIn, {"foo"})})}),
       {{"zone", "foo"}},
       "node2",
       ok,
       ok,
       std::nullopt,
       added_node2},
      {"Matches added affinity but not Pod's node affinity",
       PodWithRequired({Exprs({Req("zone", SelectorOperator::kIn, {"bar"})})}),
       {{"zone", "foo"}},
       "node2",
       kPodMismatch,
       ok,
       std::nullopt,
       added_node2},
      {"Doesn't match added affinity",
       PodWith([](api::Pod&) {}),
       {{"zone", "foo"}},
       "node2",
       framework::Status::UnschedulableAndUnresolvable("node(s) didn't match scheduler-enforced node affinity"),
       ok,
       std::nullopt,
       json::parse(
           R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
           [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["bar"]}]}]}}})")},
      {"Matches node selector correctly even if PreFilter is not called",
       PodWithNodeSelector({{"foo", "bar"}}),
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr,
       /*run_pre_filter=*/false},
      {"Matches node affinity correctly even if PreFilter is not called",
       PodWithRequired(
           {Exprs({Req("GPU", SelectorOperator::kExists), Req("GPU", SelectorOperator::kNotIn, {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       ok,
       ok,
       std::nullopt,
       nullptr,
       /*run_pre_filter=*/false},
      {"Fails node affinity correctly even if PreFilter is not called",
       PodWithRequired({Exprs({Req("GPU", SelectorOperator::kIn, {"AMD"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       kPodMismatch,
       ok,
       std::nullopt,
       nullptr,
       /*run_pre_filter=*/false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto plugin = MakePlugin(c.args);
    ASSERT_NE(plugin, nullptr);
    auto node_info = testing::MakeNodeInfo(NodeWith(c.node_name, c.labels));
    auto pod_info = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    if (c.run_pre_filter) {
      auto [result, status] = plugin->PreFilter(state, *pod_info, {});
      EXPECT_EQ(status, c.want_pre_filter);
      EXPECT_EQ(result.node_names, c.want_pre_filter_nodes);
    }
    EXPECT_EQ(plugin->Filter(state, *pod_info, *node_info), c.want_filter);
  }
}

// Mirrors upstream's TestNodeAffinityPriority (PreScore, Score, NormalizeScore).
TEST(NodeAffinityTest, Score) {
  const api::Labels label1 = {{"foo", "bar"}};
  const api::Labels label2 = {{"key", "value"}};
  const api::Labels label3 = {{"az", "az1"}};
  const api::Labels label4 = {{"abc", "az11"}, {"def", "az22"}};
  const api::Labels label5 = {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  auto with_preferred = [](std::vector<api::PreferredSchedulingTerm> terms) {
    return PodWith([&](api::Pod& p) {
      p.spec.affinity.emplace();
      p.spec.affinity->node_affinity.emplace();
      p.spec.affinity->node_affinity->preferred = terms;
    });
  };
  const std::vector<api::PreferredSchedulingTerm> affinity1 = {
      {2, Exprs({Req("foo", SelectorOperator::kIn, {"bar"})})}};
  const std::vector<api::PreferredSchedulingTerm> affinity2 = {
      {2, Exprs({Req("foo", SelectorOperator::kIn, {"bar"})})},
      {4, Exprs({Req("key", SelectorOperator::kIn, {"value"})})},
      {5, Exprs({Req("foo", SelectorOperator::kIn, {"bar"}), Req("key", SelectorOperator::kIn, {"value"}),
                 Req("az", SelectorOperator::kIn, {"az1"})})},
  };
  const json added_affinity1 = json::parse(R"({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
      [{"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}]}})");
  const json added_key_value = json::parse(R"({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
      [{"weight": 3, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}}]}})");

  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Node>> nodes;
    std::vector<int64_t> want;
    json args;
    framework::Code want_pre_score = framework::Code::kSuccess;
    bool run_pre_score = true;
  };
  const std::vector<Case> cases = {
      {"all nodes are same priority as NodeAffinity is nil",
       PodWith([](api::Pod&) {}),
       {NodeWith("node1", label1), NodeWith("node2", label2), NodeWith("node3", label3)},
       {0, 0, 0},
       nullptr,
       framework::Code::kSkip},
      {"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is "
       "zero",
       with_preferred(affinity1),
       {NodeWith("node1", label4), NodeWith("node2", label2), NodeWith("node3", label3)},
       {0, 0, 0},
       nullptr},
      {"only node1 matches the preferred scheduling requirements of pod",
       with_preferred(affinity1),
       {NodeWith("node1", label1), NodeWith("node2", label2), NodeWith("node3", label3)},
       {100, 0, 0},
       nullptr},
      {"all nodes matches the preferred scheduling requirements of pod but with different priorities ",
       with_preferred(affinity2),
       {NodeWith("node1", label1), NodeWith("node5", label5), NodeWith("node2", label2)},
       {18, 100, 36},
       nullptr},
      {"added affinity",
       PodWith([](api::Pod&) {}),
       {NodeWith("node1", label1), NodeWith("node2", label2)},
       {100, 0},
       added_affinity1},
      {"added affinity and pod has default affinity",
       with_preferred(affinity1),
       {NodeWith("node1", label1), NodeWith("node2", label2), NodeWith("node3", label5)},
       {40, 60, 100},
       added_key_value},
      {"calculate the priorities correctly even if PreScore is not called",
       with_preferred(affinity2),
       {NodeWith("node1", label1), NodeWith("node5", label5), NodeWith("node2", label2)},
       {18, 100, 36},
       nullptr,
       framework::Code::kSuccess,
       /*run_pre_score=*/false},
      {"terms with weight 0 are ignored",
       with_preferred({{0, Exprs({Req("foo", SelectorOperator::kIn, {"bar"})})},
                       {1, Exprs({Req("key", SelectorOperator::kIn, {"value"})})}}),
       {NodeWith("node1", label1), NodeWith("node2", label2)},
       {0, 100},
       nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto plugin = MakePlugin(c.args);
    ASSERT_NE(plugin, nullptr);
    testing::FakeHandle handle(c.nodes, {});
    auto pod_info = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    if (c.run_pre_score) {
      EXPECT_EQ(plugin->PreScore(state, *pod_info, handle.snapshot().List()).code(), c.want_pre_score);
    }
    framework::NodeScoreList scores;
    for (const auto* n : handle.snapshot().List()) {
      auto [s, status] = plugin->Score(state, *pod_info, *n);
      ASSERT_TRUE(status.IsSuccess()) << status.Message();
      scores.push_back({n->name(), s});
    }
    ASSERT_TRUE(plugin->NormalizeScore(state, *pod_info, scores).IsSuccess());
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want);
  }
}

TEST(NodeAffinityTest, PreScoreRejectsInvalidPreferredTerm) {
  auto plugin = MakePlugin(nullptr);
  auto pod = PodWith([](api::Pod& p) {
    p.spec.affinity.emplace();
    p.spec.affinity->node_affinity.emplace();
    p.spec.affinity->node_affinity->preferred = {{1, Exprs({Req("foo", SelectorOperator::kIn, {"a b"})})}};
  });
  framework::CycleState state;
  auto status = plugin->PreScore(state, *framework::PodInfo::Create(pod), {});
  EXPECT_TRUE(status.IsError());
  EXPECT_EQ(status.Message(),
            "[0].matchExpressions[0].values[0][foo]: Invalid value: \"a b\": a valid label must be an empty string "
            "or "
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
}

TEST(NodeAffinityTest, EventsToRegister) {
  auto plugin = MakePlugin(nullptr);
  auto events = plugin->EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::action::kAdd | framework::action::kUpdateNodeLabel);
  ASSERT_TRUE(events[0].hint);
  auto pod = testing::MakePod().NodeAffinityIn("foo", {"bar"}).Obj();
  auto node = NodeWith("n", {{"foo", "bar"}});
  EXPECT_EQ(events[0].hint(*pod, {.new_node = node.get()}), framework::QueueingHint::kQueue);
}

// Mirrors upstream's Test_isSchedulableAfterNodeChange.
TEST(NodeAffinityTest, IsSchedulableAfterNodeChange) {
  const json enforced = json::parse(R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}}})");
  auto pod = testing::MakePod().NodeAffinityIn("foo", {"bar"}).Obj();
  struct Case {
    std::string name;
    json args;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Node> old_node;
    std::shared_ptr<api::Node> new_node;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"skip-queue-on-add", nullptr, pod, nullptr, NodeWith("n", {}), framework::QueueingHint::kSkip},
      {"queue-on-add", nullptr, pod, nullptr, NodeWith("n", {{"foo", "bar"}}), framework::QueueingHint::kQueue},
      {"skip-unrelated-changes", nullptr, pod, NodeWith("n", {}), NodeWith("n", {}), framework::QueueingHint::kSkip},
      {"skip-unrelated-changes-on-labels", nullptr, pod, NodeWith("n", {}), NodeWith("n", {{"k", "v"}}),
       framework::QueueingHint::kSkip},
      {"skip-labels-changes-on-suitable-node", nullptr, pod, NodeWith("n", {{"foo", "bar"}}),
       NodeWith("n", {{"foo", "bar"}, {"k", "v"}}), framework::QueueingHint::kSkip},
      {"skip-labels-changes-on-node-from-suitable-to-unsuitable", nullptr, pod, NodeWith("n", {{"foo", "bar"}}),
       NodeWith("n", {{"k", "v"}}), framework::QueueingHint::kSkip},
      {"queue-on-labels-change-makes-pod-schedulable", nullptr, pod, NodeWith("n", {}), NodeWith("n", {{"foo", "bar"}}),
       framework::QueueingHint::kQueue},
      {"skip-queue-on-add-scheduler-enforced-node-affinity", enforced, pod, nullptr, NodeWith("n", {}),
       framework::QueueingHint::kSkip},
      {"queue-on-add-scheduler-enforced-node-affinity", enforced, pod, nullptr, NodeWith("n", {{"foo", "bar"}}),
       framework::QueueingHint::kQueue},
      {"queue-on-add-for-pod-with-node-selector-only", nullptr, PodWithNodeSelector({{"foo", "bar"}}), nullptr,
       NodeWith("n", {{"foo", "bar"}}), framework::QueueingHint::kQueue},
      {"queue-when-an-invalid-term-is-involved", nullptr,
       PodWithRequired({Exprs({Req("foo", SelectorOperator::kIn, {"not valid!"})})}), nullptr, NodeWith("n", {}),
       framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto plugin = MakePlugin(c.args);
    ASSERT_NE(plugin, nullptr);
    framework::EventObjects event{.old_node = c.old_node.get(), .new_node = c.new_node.get()};
    EXPECT_EQ(plugin->IsSchedulableAfterNodeChange(*c.pod, event), c.want);
  }
}

TEST(NodeAffinityTest, NewRejectsInvalidArgs) {
  testing::FakeHandle handle;
  auto plugin = New(testing::ArgsJson(R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "Foo"}]}]}}})")
                        .View(),
                    handle);
  ASSERT_FALSE(plugin.has_value());
  EXPECT_EQ(plugin.error(),
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]."
            "operator: Unsupported value: \"Foo\": supported values: \"In\", \"NotIn\", \"Exists\", "
            "\"DoesNotExist\", "
            "\"Gt\", \"Lt\"");
}

// A nameless node has no fields, so matchFields cannot reject it (upstream's extractNodeFields).
TEST(NodeAffinityTest, MatchFieldsIgnoredOnNamelessNode) {
  auto plugin = MakePlugin(nullptr);
  auto pod_info = framework::PodInfo::Create(PodWithRequired({Fields({NameIn("node1")})}));
  framework::CycleState state;
  EXPECT_EQ(plugin->Filter(state, *pod_info, *testing::MakeNodeInfo(NodeWith("", {}))), framework::Status::Success());
}

}  // namespace
}  // namespace kubesched::plugins::node_affinity
