// Tests mirror upstream's podtopologyspread filtering_test.go, scoring_test.go and plugin_test.go
// tables (same inputs, same verdicts, same scores), plus the args validation cases of
// validation_pluginargs_test.go. Upstream's Services / ReplicaSets selecting a pod are modelled by
// the fake cluster client's ControllerSelector.

#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <cmath>
#include <map>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/printers.h"

namespace kubesched::plugins::pod_topology_spread {
namespace {

using api::NodeInclusionPolicy;
using framework::Code;
using framework::QueueingHint;
using Json = nlohmann::json;
using LabelList = std::vector<std::pair<std::string, std::string>>;

constexpr auto kDNS = api::UnsatisfiableConstraintAction::kDoNotSchedule;
constexpr auto kSA = api::UnsatisfiableConstraintAction::kScheduleAnyway;
constexpr auto kHonor = NodeInclusionPolicy::kHonor;
constexpr auto kIgnore = NodeInclusionPolicy::kIgnore;
constexpr std::string_view kHostname = api::kLabelHostname;
constexpr std::string_view kZone = api::kLabelTopologyZone;
constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

// --- A minimal fake Handle: snapshot, worker pool and a client answering ControllerSelector ----

class TestSnapshot final : public framework::NodeInfoLister {
 public:
  TestSnapshot(const std::vector<std::shared_ptr<api::Node>>& nodes,
               const std::vector<std::shared_ptr<api::Pod>>& pods) {
    for (const auto& n : nodes) {
      std::vector<std::shared_ptr<api::Pod>> on_node;
      for (const auto& p : pods) {
        if (p->spec.node_name == n->metadata.name) on_node.push_back(p);
      }
      infos_.push_back(testing::MakeNodeInfo(n, on_node));
      infos_.back()->set_snapshot_index(static_cast<int32_t>(all_.size()));
      all_.push_back(infos_.back().get());
    }
  }
  std::span<const framework::NodeInfo* const> List() const override { return all_; }
  std::span<const framework::NodeInfo* const> HavePodsWithAffinityList() const override { return {}; }
  std::span<const framework::NodeInfo* const> HavePodsWithRequiredAntiAffinityList() const override { return {}; }
  const framework::NodeInfo* Get(std::string_view name) const override {
    for (const auto* ni : all_) {
      if (ni->name() == name) return ni;
    }
    return nullptr;
  }
  std::shared_ptr<const framework::TopologyDomains> Domains(std::string_view key) const override {
    return domains_.Get(key, all_);
  }

 private:
  framework::TopologyDomainsCache domains_;
  std::vector<std::unique_ptr<framework::NodeInfo>> infos_;
  std::vector<const framework::NodeInfo*> all_;
};

// Stands in for the Services / ReplicaSets / StatefulSets upstream looks up: any pod with a
// controller owner reference gets `controller_selector`.
class FakeClient final : public framework::ClusterClient {
 public:
  std::optional<api::LabelSelector> controller_selector;

  framework::Status Bind(const api::Pod&, const std::string&) override { return {}; }
  framework::Status DeletePod(const api::Pod&, std::string_view) override { return {}; }
  framework::Status SetNominatedNodeName(const api::Pod&, const std::string&) override { return {}; }
  framework::Status SetPodScheduledCondition(const api::Pod&, const api::PodCondition&) override { return {}; }
  std::optional<api::Labels> NamespaceLabels(std::string_view) const override { return std::nullopt; }
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override { return {}; }
  std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const override {
    for (const auto& ref : pod.metadata.owner_references) {
      if (ref.controller) return controller_selector;
    }
    return std::nullopt;
  }
};

class NopNominator final : public framework::PodNominator {
 public:
  void AddNominatedPod(framework::PodInfoPtr, const std::string&) override {}
  void DeleteNominatedPodIfExists(const api::Pod&) override {}
  std::vector<framework::PodInfoPtr> NominatedPodsForNode(const std::string&) const override { return {}; }
};

class TestHandle final : public framework::Handle {
 public:
  TestHandle(const std::vector<std::shared_ptr<api::Node>>& nodes, const std::vector<std::shared_ptr<api::Pod>>& pods)
      : snapshot_(nodes, pods) {}

  FakeClient& fake_client() { return client_; }
  const TestSnapshot& snapshot() const { return snapshot_; }

  std::pair<framework::PreFilterResult, framework::Status> RunPreFilterPlugins(framework::CycleState&,
                                                                               const framework::PodInfo&) override {
    return {{}, framework::Status::Error("unsupported")};
  }
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState&, const framework::PodInfo&,
                                                const framework::PodInfo&, const framework::NodeInfo&) override {
    return framework::Status::Error("unsupported");
  }
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState&, const framework::PodInfo&,
                                                   const framework::PodInfo&, const framework::NodeInfo&) override {
    return framework::Status::Error("unsupported");
  }
  framework::Status RunFilterPlugins(const framework::CycleState&, const framework::PodInfo&,
                                     const framework::NodeInfo&) override {
    return framework::Status::Error("unsupported");
  }
  framework::Status RunFilterPluginsWithNominatedPods(framework::CycleState&, const framework::PodInfo&,
                                                      const framework::NodeInfo&) override {
    return framework::Status::Error("unsupported");
  }
  const framework::NodeInfoLister& SnapshotSharedLister() const override { return snapshot_; }
  void IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>&) override {}
  std::shared_ptr<framework::WaitingPod> GetWaitingPod(std::string_view) override { return nullptr; }
  bool RejectWaitingPod(std::string_view) override { return false; }
  framework::ClusterClient& client() override { return client_; }
  framework::PodNominator& nominator() override { return nominator_; }
  const util::Clock& clock() const override { return clock_; }
  util::Parallelizer& parallelizer() override { return parallelizer_; }
  std::string_view profile_name() const override { return api::kDefaultSchedulerName; }

 private:
  TestSnapshot snapshot_;
  FakeClient client_;
  NopNominator nominator_;
  util::VirtualClock clock_;
  util::Parallelizer parallelizer_{2};
};

// --- Builders in upstream's vocabulary ---------------------------------------------------------

api::LabelSelector ExistsSel(std::string key) {
  api::LabelSelector s;
  s.match_expressions.push_back({std::move(key), api::SelectorOperator::kExists, {}});
  return s;
}
api::LabelSelector LabelsSel(LabelList labels) {
  api::LabelSelector s;
  for (auto& [k, v] : labels) s.match_labels.Set(k, v);
  return s;
}
const api::LabelSelector kFooSel = ExistsSel("foo");
const api::LabelSelector kBarSel = ExistsSel("bar");

api::TopologySpreadConstraint Spread(int32_t max_skew, std::string_view key, api::UnsatisfiableConstraintAction action,
                                     std::optional<api::LabelSelector> selector,
                                     std::optional<int32_t> min_domains = std::nullopt,
                                     std::optional<NodeInclusionPolicy> affinity_policy = std::nullopt,
                                     std::optional<NodeInclusionPolicy> taints_policy = std::nullopt,
                                     std::vector<std::string> match_label_keys = {}) {
  api::TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = std::string(key);
  c.when_unsatisfiable = action;
  c.label_selector = std::move(selector);
  c.min_domains = min_domains;
  c.node_affinity_policy = affinity_policy;
  c.node_taints_policy = taints_policy;
  c.match_label_keys = std::move(match_label_keys);
  return c;
}

// The incoming pod "p" with labels and constraints; `edit` adds anything else.
std::shared_ptr<api::Pod> Incoming(LabelList labels, std::vector<api::TopologySpreadConstraint> constraints,
                                   const std::function<void(testing::PodBuilder&)>& edit = nullptr) {
  testing::PodBuilder b = testing::MakePod().Name("p");
  b.Labels(std::move(labels));
  if (edit) edit(b);
  auto pod = b.Obj();
  pod->spec.topology_spread_constraints = std::move(constraints);
  return pod;
}

// An existing pod bound to `node`.
std::shared_ptr<api::Pod> On(std::string name, std::string node, LabelList labels, std::string ns = "default") {
  return testing::MakePod()
      .Namespace(std::move(ns))
      .Name(std::move(name))
      .Node(std::move(node))
      .Labels(std::move(labels))
      .Obj();
}
std::shared_ptr<api::Pod> Terminating(std::shared_ptr<api::Pod> pod) {
  pod->metadata.deletion_timestamp_ns = 1;
  return pod;
}

// A node with exactly these labels (no implicit hostname label, as upstream's st.MakeNode).
std::shared_ptr<api::Node> Node(std::string name, LabelList labels, bool tainted = false) {
  auto node = testing::MakeNode().Name(name).Obj();
  node->metadata.labels = api::Labels();
  for (auto& [k, v] : labels) node->metadata.labels.Set(k, v);
  if (tainted) node->spec.taints.push_back({std::string(kUnschedulableTaint), "", api::TaintEffect::kNoSchedule});
  return node;
}

api::Toleration TolerateUnschedulable() {
  api::Toleration t;
  t.key = std::string(kUnschedulableTaint);
  t.op = api::TolerationOperator::kExists;
  return t;
}

// The usual 4-node cluster: node-a, node-b in zone1; node-x, node-y in zone2.
std::vector<std::shared_ptr<api::Node>> FourNodes() {
  return {
      Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}), Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
      Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}}), Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})};
}

const Json kListArgs = {{"defaultingType", "List"}};
const Json kSystemArgs = {{"defaultingType", "System"}};

struct PluginUnderTest {
  std::unique_ptr<framework::Plugin> owner;
  PodTopologySpread* pl = nullptr;
};

// The args as plugins read them, from the nlohmann/json values the cases below are written as.
framework::ArgsDocument ArgsOf(const nlohmann::json& j) { return testing::ArgsJson(j.dump()); }

PluginUnderTest MakePlugin(TestHandle& handle, const Json& args) {
  auto created = New(ArgsOf(args).View(), handle);
  EXPECT_TRUE(created.has_value()) << (created ? "" : created.error());
  PluginUnderTest out;
  if (!created) return out;
  out.owner = std::move(*created);
  out.pl = dynamic_cast<PodTopologySpread*>(out.owner.get());
  return out;
}

std::map<std::string, int> ToMap(const StringMap<int>& m) { return {m.begin(), m.end()}; }
std::map<std::string, int64_t> ToMap(const StringMap<int64_t>& m) { return {m.begin(), m.end()}; }

// --- Filter: TestSingleConstraint / TestMultipleConstraints -----------------------------------

struct FilterCase {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::vector<std::shared_ptr<api::Node>> nodes;
  std::vector<std::shared_ptr<api::Pod>> existing;
  std::map<std::string, Code> want;
};

void RunFilterCases(const std::vector<FilterCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TestHandle handle(c.nodes, c.existing);
    auto p = MakePlugin(handle, kListArgs);
    ASSERT_NE(p.pl, nullptr);
    framework::CycleState state;
    auto pod_info = framework::PodInfo::Create(c.pod);
    auto [result, status] = p.pl->PreFilter(state, *pod_info, handle.snapshot().List());
    ASSERT_TRUE(status.IsSuccess()) << status.Message();
    EXPECT_TRUE(result.AllNodes());
    for (const auto& node : c.nodes) {
      const std::string& name = node->metadata.name;
      framework::Status s = p.pl->Filter(state, *pod_info, *handle.snapshot().Get(name));
      ASSERT_TRUE(c.want.contains(name)) << name;
      EXPECT_EQ(framework::ToString(s.code()), framework::ToString(c.want.at(name))) << name << ": " << s.Message();
      if (s.code() == Code::kUnschedulable) {
        EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(kErrReasonConstraintsNotMatch)});
      } else if (s.code() == Code::kUnschedulableAndUnresolvable) {
        EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(kErrReasonNodeLabelNotMatch)});
      }
    }
  }
}

constexpr Code kOK = Code::kSuccess;
constexpr Code kUnsched = Code::kUnschedulable;
constexpr Code kUnresolvable = Code::kUnschedulableAndUnresolvable;

TEST(PodTopologySpreadFilter, SingleConstraint) {
  const LabelList foo = {{"foo", ""}};
  auto spread_2103 = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a1", "node-a", foo), On("p-a2", "node-a", foo),
                                                  On("p-b1", "node-b", foo), On("p-y1", "node-y", foo),
                                                  On("p-y2", "node-y", foo), On("p-y3", "node-y", foo)};
  };
  auto inclusion_nodes = [](bool taint_y) {
    return std::vector<std::shared_ptr<api::Node>>{
        Node("node-a", {{"node", "node-a"}, {"foo", ""}}), Node("node-b", {{"node", "node-b"}, {"foo", ""}}),
        Node("node-x", {{"node", "node-x"}, {"foo", ""}}),
        taint_y ? Node("node-y", {{"node", "node-y"}}, true) : Node("node-y", {{"node", "node-y"}})};
  };
  auto inclusion_pods = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-b1", "node-a", foo), On("p-b2", "node-b", foo),
                                                  On("p-y1", "node-y", foo)};
  };
  std::vector<FilterCase> cases = {
      {"no existing pods",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       {},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
      {"no existing pods, incoming pod doesn't match itself",
       Incoming(foo, {Spread(1, "zone", kDNS, kBarSel)}),
       FourNodes(),
       {},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
      {"existing pods in a different namespace do not count",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       {On("p-a1", "node-a", foo, "ns1"), On("p-b1", "node-a", foo, "ns2"), On("p-x1", "node-x", foo),
        On("p-y1", "node-y", foo)},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"existing pods do not match null selector",
       Incoming(foo, {Spread(1, "zone", kDNS, std::nullopt)}),
       FourNodes(),
       {On("p-x1", "node-x", foo), On("p-y1", "node-y", foo)},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
      {"pods spread across zones as 3/3, all nodes fit",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       spread_2103(),
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}), Node("node-b", {{"zon", "zone1"}, {"node", "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       {On("p-a1", "node-a", foo), On("p-b1", "node-b", foo), On("p-x1", "node-x", foo), On("p-y1", "node-y", foo)},
       {{"node-a", kOK}, {"node-b", kUnresolvable}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       Incoming(foo, {Spread(1, "rack", kDNS, kFooSel)}),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}})},
       {},
       {{"node-a", kUnresolvable}, {"node-x", kUnresolvable}}},
      {"pods spread across nodes as 2/1/0/3, only node-x fits",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel)}),
       FourNodes(),
       spread_2103(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
       Incoming(foo, {Spread(2, "node", kDNS, kFooSel)}),
       FourNodes(),
       spread_2103(),
       {{"node-a", kUnsched}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       Incoming({{"bar", ""}}, {Spread(1, "node", kDNS, kFooSel)}),
       FourNodes(),
       spread_2103(),
       {{"node-a", kUnsched}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel)},
                [](testing::PodBuilder& b) {
                  b.NodeAffinityIn("node", {"node-a", "node-y"});
                }),
       FourNodes(),
       spread_2103(),
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"terminating Pods should be excluded",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel)}),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}})},
       {Terminating(On("p-a", "node-a", foo)), On("p-b", "node-b", foo)},
       {{"node-a", kOK}, {"node-b", kUnsched}}},
      {"incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)},
                [](testing::PodBuilder& b) { b.NodeAffinityNotIn("node", {"node-b"}); }),
       FourNodes(),
       {On("p-b1", "node-b", foo), On("p-b2", "node-b", foo), On("p-y1", "node-y", foo)},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node "
       "fits",
       Incoming(foo, {Spread(2, "node", kDNS, kFooSel, 4)}),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}})},
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), On("p-b2", "node-b", foo),
        On("p-c1", "node-c", foo)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-c", kOK}}},
      {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes "
       "fit",
       Incoming(foo, {Spread(2, "node", kDNS, kFooSel, 2)}),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}})},
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), On("p-b2", "node-b", foo),
        On("p-c1", "node-c", foo)},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-c", kOK}}},
      {"pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth "
       "nodes fit",
       Incoming(foo, {Spread(2, "zone", kDNS, kFooSel, 3)}),
       FourNodes(),
       {On("p-b1", "node-a", foo), On("p-b2", "node-b", foo), On("p-y1", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kOK}}},
      {"pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
       Incoming(foo, {Spread(2, "zone", kDNS, kFooSel, 1)}),
       FourNodes(),
       {On("p-b1", "node-a", foo), On("p-b2", "node-b", foo), On("p-y1", "node-y", foo)},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
      {"NodeAffinityPolicy honored with labelSelectors",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel)},
                [](testing::PodBuilder& b) {
                  b.NodeSelector({{"foo", ""}});
                }),
       inclusion_nodes(false),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kOK}}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel, std::nullopt, kIgnore)},
                [](testing::PodBuilder& b) {
                  b.NodeSelector({{"foo", ""}});
                }),
       inclusion_nodes(false),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel)}, [](testing::PodBuilder& b) { b.NodeAffinityIn("foo", {""}); }),
       inclusion_nodes(false),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kOK}}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel, std::nullopt, kIgnore)},
                [](testing::PodBuilder& b) { b.NodeAffinityIn("foo", {""}); }),
       inclusion_nodes(false),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"NodeTaintsPolicy honored",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel, std::nullopt, std::nullopt, kHonor)}),
       inclusion_nodes(true),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kOK}}},
      {"NodeTaintsPolicy ignored",
       Incoming(foo, {Spread(1, "node", kDNS, kFooSel)}),
       inclusion_nodes(true),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
  };
  RunFilterCases(cases);
}

TEST(PodTopologySpreadFilter, MultipleConstraints) {
  const LabelList foo = {{"foo", ""}};
  const LabelList bar = {{"bar", ""}};
  const LabelList foobar = {{"foo", ""}, {"bar", ""}};
  auto zone_node = [] {
    return std::vector<api::TopologySpreadConstraint>{Spread(1, "zone", kDNS, kFooSel),
                                                      Spread(1, "node", kDNS, kFooSel)};
  };
  auto zone_foo_node_bar = [] {
    return std::vector<api::TopologySpreadConstraint>{Spread(1, "zone", kDNS, kFooSel),
                                                      Spread(1, "node", kDNS, kBarSel)};
  };
  auto inclusion_nodes = [](bool foo_on_b) {
    return std::vector<std::shared_ptr<api::Node>>{
        Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        foo_on_b ? Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}})
                 : Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}, {"foo", ""}}, true)};
  };
  auto inclusion_pods = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a1", "node-a", foo), On("p-b1", "node-b", foo),
                                                  On("p-y1", "node-y", foo)};
  };
  auto node_selector_foo = [](testing::PodBuilder& b) { b.NodeSelector({{"foo", ""}}); };
  std::vector<FilterCase> cases = {
      {"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
       Incoming(foo, zone_node()),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), On("p-y1", "node-y", foo),
        On("p-y2", "node-y", foo), On("p-y3", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
       Incoming(foo, zone_node()),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), On("p-y1", "node-y", foo),
        On("p-y2", "node-y", foo), On("p-y3", "node-y", foo), On("p-y4", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
       Incoming(foobar, zone_foo_node_bar()),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-y1", "node-y", bar)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
       Incoming(foobar, zone_foo_node_bar()),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-x1", "node-x", bar), On("p-y1", "node-y", bar)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
       Incoming(foobar, zone_foo_node_bar()),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foobar), On("p-y1", "node-y", foo),
        On("p-y2", "node-y", foobar), On("p-y3", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kOK}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
       Incoming(bar, zone_foo_node_bar()),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-x1", "node-x", bar), On("p-y1", "node-y", bar)},
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
      {"two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
       Incoming(foo, zone_node()),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}), Node("node-x", {{"zone", "zone2"}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       {On("p-a1", "node-a", foo), On("p-y3", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kOK}, {"node-x", kUnresolvable}, {"node-y", kUnsched}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel, std::nullopt, kIgnore)},
                node_selector_foo),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, kHonor),
                      Spread(1, "node", kDNS, kFooSel)}),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}}, true)},
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
       Incoming(foo, zone_node(), node_selector_foo),
       inclusion_nodes(false),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
       Incoming(foo,
                {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, kHonor),
                 Spread(1, "node", kDNS, kFooSel, std::nullopt, kIgnore)},
                node_selector_foo),
       inclusion_nodes(false),
       inclusion_pods(),
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kUnsched}}},
      {"two Constraints on zone, spreads = [3/3, 2/1]",
       Incoming(foobar, {Spread(1, "zone", kDNS, kBarSel), Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       {On("p-a1", "node-a", foobar), On("p-a2", "node-a", foo), On("p-b1", "node-b", foobar),
        On("p-y1", "node-y", foo), On("p-y2", "node-y", foobar), On("p-y3", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kOK}}},
      {"two Constraints on zone, spreads = [3/4, 2/1]",
       Incoming(foobar, {Spread(1, "zone", kDNS, kBarSel), Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       {On("p-a1", "node-a", foobar), On("p-a2", "node-a", foo), On("p-b1", "node-b", foobar),
        On("p-y1", "node-y", foo), On("p-y2", "node-y", foobar), On("p-y3", "node-y", foo), On("p-y4", "node-y", foo)},
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kUnsched}, {"node-y", kUnsched}}},
  };
  RunFilterCases(cases);
}

TEST(PodTopologySpreadFilter, MatchLabelKeysAndDefaultConstraints) {
  const LabelList foo = {{"foo", ""}};
  // matchLabelKeys narrows the selector to pods sharing the incoming pod's value: only the two
  // "bar=a" pods count, spread 1/1, so every node fits; without the key zone2 (2 pods) would fail.
  auto pods = std::vector<std::shared_ptr<api::Pod>>{
      On("p-a1", "node-a", foo), On("p-a2", "node-a", {{"foo", ""}, {"bar", "a"}}), On("p-b1", "node-b", foo),
      On("p-y1", "node-y", {{"foo", ""}, {"bar", "a"}}), On("p-y2", "node-y", {{"bar", ""}})};
  RunFilterCases({
      {"matchLabelKeys ANDed with LabelSelector",
       Incoming({{"foo", ""}, {"bar", "a"}},
                {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, std::nullopt, {"bar"})}),
       FourNodes(),
       pods,
       {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
      {"without matchLabelKeys zone1 is over the skew",
       Incoming({{"foo", ""}, {"bar", "a"}}, {Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       pods,
       {{"node-a", kUnsched}, {"node-b", kUnsched}, {"node-x", kOK}, {"node-y", kOK}}},
  });

  // Default constraints from the args apply to pods without constraints, with the selector of
  // their controller.
  std::vector<std::shared_ptr<api::Node>> nodes = {Node("node-a", {{"zone", "zone1"}}),
                                                   Node("node-b", {{"zone", "zone2"}})};
  std::vector<std::shared_ptr<api::Pod>> existing = {On("w1", "node-a", {{"app", "web"}}),
                                                     On("w2", "node-a", {{"app", "web"}})};
  Json args = {
      {"defaultingType", "List"},
      {"defaultConstraints", {{{"maxSkew", 1}, {"topologyKey", "zone"}, {"whenUnsatisfiable", "DoNotSchedule"}}}}};
  auto owned = testing::MakePod().Name("w3").Label("app", "web").OwnerReference("ReplicaSet", "web-rs").Obj();
  {
    SCOPED_TRACE("controller selector app=web");
    TestHandle handle(nodes, existing);
    handle.fake_client().controller_selector = LabelsSel({{"app", "web"}});
    auto p = MakePlugin(handle, args);
    framework::CycleState state;
    auto pi = framework::PodInfo::Create(owned);
    auto [_, status] = p.pl->PreFilter(state, *pi, handle.snapshot().List());
    ASSERT_TRUE(status.IsSuccess());
    EXPECT_EQ(p.pl->Filter(state, *pi, *handle.snapshot().Get("node-a")).code(), Code::kUnschedulable);
    EXPECT_TRUE(p.pl->Filter(state, *pi, *handle.snapshot().Get("node-b")).IsSuccess());
  }
  {
    SCOPED_TRACE("no controller: default constraints do not apply");
    TestHandle handle(nodes, existing);
    handle.fake_client().controller_selector = LabelsSel({{"app", "web"}});
    auto p = MakePlugin(handle, args);
    framework::CycleState state;
    auto pi = framework::PodInfo::Create(testing::MakePod().Name("w4").Label("app", "web").Obj());
    EXPECT_TRUE(p.pl->PreFilter(state, *pi, handle.snapshot().List()).second.IsSkip());
  }
  {
    SCOPED_TRACE("empty controller selector: default constraints do not apply");
    TestHandle handle(nodes, existing);
    handle.fake_client().controller_selector = api::LabelSelector{};
    auto p = MakePlugin(handle, args);
    framework::CycleState state;
    EXPECT_TRUE(p.pl->PreFilter(state, *framework::PodInfo::Create(owned), handle.snapshot().List()).second.IsSkip());
  }
  {
    SCOPED_TRACE("system defaults are ScheduleAnyway only: PreFilter skips");
    TestHandle handle(nodes, existing);
    handle.fake_client().controller_selector = LabelsSel({{"app", "web"}});
    auto p = MakePlugin(handle, Json(nullptr));
    framework::CycleState state;
    EXPECT_TRUE(p.pl->PreFilter(state, *framework::PodInfo::Create(owned), handle.snapshot().List()).second.IsSkip());
  }
}

TEST(PodTopologySpreadFilter, FilterWithoutPreFilterIsAnError) {
  TestHandle handle({Node("node-a", {})}, {});
  auto p = MakePlugin(handle, kListArgs);
  framework::CycleState state;
  auto pi = framework::PodInfo::Create(Incoming({}, {Spread(1, "zone", kDNS, kFooSel)}));
  framework::Status s = p.pl->Filter(state, *pi, *handle.snapshot().Get("node-a"));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

// --- PreFilter state: TestPreFilterState ------------------------------------------------------

struct ConstraintWant {
  std::string topology_key;
  int32_t max_skew;
  std::map<std::string, int> tp_value_to_match_num;
  int min_match;  // critical_paths[i][0].match_num
};

struct PreFilterStateCase {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::vector<std::shared_ptr<api::Node>> nodes;
  std::vector<std::shared_ptr<api::Pod>> existing;
  Json args = kListArgs;
  std::optional<api::LabelSelector> controller_selector;
  bool want_skip = false;
  std::vector<ConstraintWant> want;
};

void CheckState(const PreFilterState& s, const std::vector<ConstraintWant>& want) {
  ASSERT_EQ(s.constraints->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ((*s.constraints)[i].topology_key, want[i].topology_key);
    EXPECT_EQ((*s.constraints)[i].max_skew, want[i].max_skew);
    EXPECT_EQ(ToMap(s.tp_value_to_match_num[i]), want[i].tp_value_to_match_num);
    EXPECT_EQ(s.critical_paths[i][0].match_num, want[i].min_match);
    EXPECT_LE(s.critical_paths[i][0].match_num, s.critical_paths[i][1].match_num);
  }
}

TEST(PodTopologySpreadPreFilter, State) {
  const LabelList foo = {{"foo", ""}};
  const LabelList bar = {{"bar", ""}};
  const LabelList foobar = {{"foo", ""}, {"bar", ""}};
  auto pods_32 = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a1", "node-a", foo), On("p-a2", "node-a", foo),
                                                  On("p-b1", "node-b", foo), On("p-y1", "node-y", foo),
                                                  On("p-y2", "node-y", foo)};
  };
  auto pods_34 = [&] {
    auto v = pods_32();
    v.push_back(On("p-y3", "node-y", foo));
    v.push_back(On("p-y4", "node-y", foo));
    return v;
  };
  auto pods_a = [](std::string value) {
    const LabelList l = {{"foo", value}};
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a1", "node-a", l), On("p-a2", "node-a", l),
                                                  On("p-b1", "node-b", l), On("p-y1", "node-y", l),
                                                  On("p-y2", "node-y", l)};
  };
  auto three_nodes = [] {
    return std::vector<std::shared_ptr<api::Node>>{Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                                                   Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
                                                   Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})};
  };
  auto policy_nodes = [](bool taint_c) {
    return std::vector<std::shared_ptr<api::Node>>{
        taint_c ? Node("node-a", {{"node", "node-a"}}) : Node("node-a", {{"node", "node-a"}, {"foo", ""}}),
        taint_c ? Node("node-b", {{"node", "node-b"}}) : Node("node-b", {{"node", "node-b"}, {"foo", ""}}),
        Node("node-c", {{"node", "node-c"}, {"bar", ""}}, taint_c)};
  };
  auto policy_pods = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a", "node-a", bar), On("p-b", "node-b", bar),
                                                  On("p-c", "node-b", bar), On("p-d", "node-c", {})};
  };
  auto sel_foo = [](testing::PodBuilder& b) { b.NodeSelector({{"foo", ""}}); };
  auto aff_foo = [](testing::PodBuilder& b) { b.NodeAffinityIn("foo", {""}); };
  auto tolerate = [](testing::PodBuilder& b) { b.Toleration(TolerateUnschedulable()); };
  Json defaults = {{"defaultingType", "List"},
                   {"defaultConstraints",
                    {{{"maxSkew", 3}, {"topologyKey", "node"}, {"whenUnsatisfiable", "DoNotSchedule"}},
                     {{"maxSkew", 2}, {"topologyKey", "node"}, {"whenUnsatisfiable", "ScheduleAnyway"}},
                     {{"maxSkew", 5}, {"topologyKey", "rack"}, {"whenUnsatisfiable", "DoNotSchedule"}}}}};
  auto with_owner = [](testing::PodBuilder& b) { b.OwnerReference("ReplicaSet", "rs1"); };

  std::vector<PreFilterStateCase> cases = {
      {"clean cluster with one spreadConstraint",
       Incoming(foo, {Spread(5, "zone", kDNS, LabelsSel({{"foo", "bar"}}))}),
       FourNodes(),
       {},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 5, {{"zone1", 0}, {"zone2", 0}}, 0}}},
      {"normal case with one spreadConstraint",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       pods_32(),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 2}}, 2}}},
      {"normal case with null label selector",
       Incoming(foo, {Spread(1, "zone", kDNS, std::nullopt)}),
       FourNodes(),
       pods_32(),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 0}, {"zone2", 0}}, 0}}},
      {"normal case with one spreadConstraint, on a 3-zone cluster",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       [] {
         auto n = FourNodes();
         n.push_back(Node("node-o", {{"zone", "zone3"}, {"node", "node-o"}}));
         n.push_back(Node("node-p", {{"zone", "zone3"}, {"node", "node-p"}}));
         return n;
       }(),
       pods_32(),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 2}, {"zone3", 0}}, 0}}},
      {"namespace mismatch doesn't count",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo, "ns1"), On("p-b1", "node-b", foo),
        On("p-y1", "node-y", foo, "ns2"), On("p-y2", "node-y", foo)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 2}, {"zone2", 1}}, 1}}},
      {"normal case with two spreadConstraints",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel)}),
       FourNodes(),
       pods_34(),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 4}}, 3},
        {"node", 1, {{"node-a", 2}, {"node-b", 1}, {"node-x", 0}, {"node-y", 4}}, 0}}},
      {"soft spreadConstraints should be bypassed",
       Incoming(foo, {Spread(1, "zone", kSA, kFooSel), Spread(1, "zone", kDNS, kFooSel),
                      Spread(1, "node", kSA, kFooSel), Spread(1, "node", kDNS, kFooSel)}),
       three_nodes(),
       pods_34(),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 4}}, 3}, {"node", 1, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}}, 1}}},
      {"different labelSelectors - simple version",
       Incoming(foobar, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kBarSel)}),
       three_nodes(),
       {On("p-a", "node-a", foo), On("p-b", "node-b", bar)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 1}, {"zone2", 0}}, 0}, {"node", 1, {{"node-a", 0}, {"node-b", 1}, {"node-y", 0}}, 0}}},
      {"different labelSelectors - complex pods",
       Incoming(foobar, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kBarSel)}),
       three_nodes(),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foobar), On("p-b1", "node-b", foo), On("p-y1", "node-y", foo),
        On("p-y2", "node-y", foobar), On("p-y3", "node-y", foo), On("p-y4", "node-y", foobar)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 4}}, 3}, {"node", 1, {{"node-a", 1}, {"node-b", 0}, {"node-y", 2}}, 0}}},
      {"two spreadConstraints, and with podAffinity",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel)},
                [](testing::PodBuilder& b) { b.NodeAffinityNotIn("node", {"node-x"}); }),
       FourNodes(),
       pods_34(),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 4}}, 3}, {"node", 1, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}}, 1}}},
      {"default constraints and a service",
       Incoming({{"foo", "bar"}, {"baz", "kar"}}, {}, with_owner),
       {},
       {},
       defaults,
       LabelsSel({{"foo", "bar"}}),
       false,
       {{"node", 3, {}, INT32_MAX}, {"rack", 5, {}, INT32_MAX}}},
      {"default constraints and a service that doesn't match",
       Incoming({{"foo", "bar"}}, {}),
       {},
       {},
       {{"defaultingType", "List"},
        {"defaultConstraints", {{{"maxSkew", 3}, {"topologyKey", "node"}, {"whenUnsatisfiable", "DoNotSchedule"}}}}},
       LabelsSel({{"baz", "kep"}}),
       true,
       {}},
      {"default constraints and a service, but pod has constraints",
       Incoming({{"foo", "bar"}, {"baz", "tar"}},
                {Spread(1, "zone", kDNS, LabelsSel({{"baz", "tar"}})),
                 Spread(2, "planet", kSA, LabelsSel({{"fot", "rok"}}))},
                with_owner),
       {},
       {},
       {{"defaultingType", "List"},
        {"defaultConstraints", {{{"maxSkew", 2}, {"topologyKey", "node"}, {"whenUnsatisfiable", "DoNotSchedule"}}}}},
       LabelsSel({{"foo", "bar"}}),
       false,
       {{"zone", 1, {}, INT32_MAX}}},
      {"default soft constraints and a service",
       Incoming({{"foo", "bar"}}, {}, with_owner),
       {},
       {},
       {{"defaultingType", "List"},
        {"defaultConstraints", {{{"maxSkew", 2}, {"topologyKey", "node"}, {"whenUnsatisfiable", "ScheduleAnyway"}}}}},
       LabelsSel({{"foo", "bar"}}),
       true,
       {}},
      {"NodeAffinityPolicy honored with labelSelectors",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel)}, sel_foo),
       policy_nodes(false),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}}, 1}}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel, std::nullopt, kIgnore)}, sel_foo),
       policy_nodes(false),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}, 0}}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel)}, aff_foo),
       policy_nodes(false),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}}, 1}}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel, std::nullopt, kIgnore)}, aff_foo),
       policy_nodes(false),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}, 0}}},
      {"NodeTaintsPolicy ignored",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel)}),
       policy_nodes(true),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}, 0}}},
      {"NodeTaintsPolicy honored",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel, std::nullopt, std::nullopt, kHonor)}),
       policy_nodes(true),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}}, 1}}},
      {"NodeTaintsPolicy honored with tolerated taints",
       Incoming(foo, {Spread(1, "node", kDNS, kBarSel, std::nullopt, std::nullopt, kHonor)}, tolerate),
       policy_nodes(true),
       policy_pods(),
       kListArgs,
       std::nullopt,
       false,
       {{"node", 1, {{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}, 0}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel, std::nullopt, kIgnore)},
                sel_foo),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}})},
       {On("p-b1", "node-b", foo), On("p-b2", "node-b", foo), On("p-x1", "node-x", foo)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 0}, {"zone2", 1}}, 0}, {"node", 1, {{"node-a", 0}, {"node-b", 2}, {"node-x", 1}}, 0}}},
      {"two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, kHonor),
                      Spread(1, "node", kDNS, kFooSel)}),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}, true),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}})},
       {On("p-b1", "node-b", foo), On("p-b2", "node-b", foo), On("p-x1", "node-x", foo)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 0}, {"zone2", 1}}, 0}, {"node", 1, {{"node-a", 0}, {"node-b", 2}, {"node-x", 1}}, 0}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel)}, sel_foo),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}, true),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-x1", "node-x", foo), On("p-y1", "node-y", foo)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 0}, {"zone2", 1}}, 0}, {"node", 1, {{"node-b", 0}, {"node-x", 1}}, 0}}},
      {"two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
       Incoming(foo,
                {Spread(1, "zone", kDNS, kFooSel, std::nullopt, kIgnore),
                 Spread(1, "node", kDNS, kFooSel, std::nullopt, std::nullopt, kHonor)},
                sel_foo),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}, true),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}, {"foo", ""}})},
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-x1", "node-x", foo), On("p-x2", "node-x", foo),
        On("p-y1", "node-y", foo)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 2}, {"zone2", 3}}, 2}, {"node", 1, {{"node-x", 2}, {"node-y", 1}}, 1}}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
       Incoming({{"foo", ""}, {"bar", "a"}},
                {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, std::nullopt, {"bar"})}),
       FourNodes(),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", {{"foo", ""}, {"bar", "a"}}), On("p-b1", "node-b", foo),
        On("p-y1", "node-y", {{"foo", ""}, {"bar", "a"}}), On("p-y2", "node-y", bar)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 1}, {"zone2", 1}}, 1}}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       Incoming({{"foo", "a"}},
                {Spread(1, "zone", kDNS, api::LabelSelector{}, std::nullopt, std::nullopt, std::nullopt, {"foo"})}),
       FourNodes(),
       pods_a("a"),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 2}}, 2}}},
      {"key in matchLabelKeys is ignored when LabelSelector is nil",
       Incoming(foo, {Spread(1, "zone", kDNS, std::nullopt, std::nullopt, std::nullopt, std::nullopt, {"bar"})}),
       FourNodes(),
       pods_a("a"),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 0}, {"zone2", 0}}, 0}}},
      {"key in matchLabelKeys is ignored when it isn't exist in pod.labels",
       Incoming(foo, {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, std::nullopt, {"bar"})}),
       FourNodes(),
       pods_a("a"),
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 3}, {"zone2", 2}}, 2}}},
      {"two spreadConstraints with the same topologyKey",
       Incoming(foobar, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "zone", kDNS, kBarSel)}),
       FourNodes(),
       {On("p-a1", "node-a", foobar), On("p-b1", "node-b", foo), On("p-x1", "node-x", bar),
        On("p-y1", "node-y", foobar), On("p-y2", "node-y", bar)},
       kListArgs,
       std::nullopt,
       false,
       {{"zone", 1, {{"zone1", 2}, {"zone2", 1}}, 1}, {"zone", 1, {{"zone1", 1}, {"zone2", 3}}, 1}}},
      {"skip if not specified",
       Incoming(foo, {}),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}})},
       {},
       kListArgs,
       std::nullopt,
       true,
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TestHandle handle(c.nodes, c.existing);
    handle.fake_client().controller_selector = c.controller_selector;
    auto p = MakePlugin(handle, c.args);
    ASSERT_NE(p.pl, nullptr);
    framework::CycleState state;
    auto [_, status] = p.pl->PreFilter(state, *framework::PodInfo::Create(c.pod), handle.snapshot().List());
    if (c.want_skip) {
      EXPECT_TRUE(status.IsSkip()) << framework::ToString(status.code());
      continue;
    }
    ASSERT_TRUE(status.IsSuccess()) << status.Message();
    const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
    ASSERT_NE(s, nullptr);
    CheckState(*s, c.want);
  }
}

// --- PreFilterExtensions: TestPreFilterStateAddPod / RemovePod ----------------------------------

struct UpdateCase {
  std::string name;
  std::shared_ptr<api::Pod> preemptor;
  std::vector<std::shared_ptr<api::Node>> nodes;
  std::vector<std::shared_ptr<api::Pod>> existing;
  std::shared_ptr<api::Pod> pod;  // added or removed
  std::string node;               // the node `pod` belongs to
  std::vector<ConstraintWant> want;
};

void RunUpdateCases(const std::vector<UpdateCase>& cases, bool add) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TestHandle handle(c.nodes, c.existing);
    auto p = MakePlugin(handle, kListArgs);
    framework::CycleState state;
    auto preemptor = framework::PodInfo::Create(c.preemptor);
    ASSERT_TRUE(p.pl->PreFilter(state, *preemptor, handle.snapshot().List()).second.IsSuccess());
    auto pod = framework::PodInfo::Create(c.pod);
    const framework::NodeInfo& node = *handle.snapshot().Get(c.node);
    framework::Status s =
        add ? p.pl->AddPod(state, *preemptor, *pod, node) : p.pl->RemovePod(state, *preemptor, *pod, node);
    ASSERT_TRUE(s.IsSuccess()) << s.Message();
    CheckState(*state.Get<PreFilterState>(kPreFilterStateKey), c.want);
  }
}

std::vector<std::shared_ptr<api::Node>> TwoNodes(std::string second, std::string second_zone) {
  return {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
          Node(second, {{"zone", second_zone}, {"node", second}})};
}

TEST(PodTopologySpreadPreFilterExtensions, AddPod) {
  const LabelList foo = {{"foo", ""}};
  const LabelList bar = {{"bar", ""}};
  const LabelList foobar = {{"foo", ""}, {"bar", ""}};
  auto node_only = Incoming(foo, {Spread(1, "node", kDNS, kFooSel)});
  auto zone_node = Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel)});
  auto zone_foo_node_bar = Incoming(foobar, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kBarSel)});
  auto affinity_nodes = [](bool tainted_a) {
    return std::vector<std::shared_ptr<api::Node>>{
        tainted_a ? Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}, true)
                  : Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", "bar"}}),
        tainted_a ? Node("node-b", {{"zone", "zone2"}, {"node", "node-b"}})
                  : Node("node-b", {{"zone", "zone2"}, {"node", "node-b"}, {"foo", ""}})};
  };
  const LabelList foo_z1 = {{"foo", ""}, {"zone", "zone1"}};
  const LabelList foo_z2 = {{"foo", ""}, {"zone", "zone2"}};
  auto three = [] {
    return std::vector<std::shared_ptr<api::Node>>{Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                                                   Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
                                                   Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}})};
  };
  RunUpdateCases(
      {
          {"node a and b both impact current min match",
           node_only,
           TwoNodes("node-b", "zone1"),
           {},
           On("p-a1", "node-a", foo),
           "node-a",
           {{"node", 1, {{"node-a", 1}, {"node-b", 0}}, 0}}},
          {"only node a impacts current min match",
           node_only,
           TwoNodes("node-b", "zone1"),
           {On("p-b1", "node-b", foo)},
           On("p-a1", "node-a", foo),
           "node-a",
           {{"node", 1, {{"node-a", 1}, {"node-b", 1}}, 1}}},
          {"add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
           node_only,
           TwoNodes("node-b", "zone1"),
           {On("p-b1", "node-b", foo)},
           On("p-a1", "node-a", foo, "ns1"),
           "node-a",
           {{"node", 1, {{"node-a", 0}, {"node-b", 1}}, 0}}},
          {"add pod on non-critical node won't trigger re-calculation",
           node_only,
           TwoNodes("node-b", "zone1"),
           {On("p-b1", "node-b", foo)},
           On("p-b2", "node-b", foo),
           "node-b",
           {{"node", 1, {{"node-a", 0}, {"node-b", 2}}, 0}}},
          {"node a and x both impact topologyKeyToMinPodsMap on zone and node",
           zone_node,
           TwoNodes("node-x", "zone2"),
           {},
           On("p-a1", "node-a", foo),
           "node-a",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 0}}, 0}, {"node", 1, {{"node-a", 1}, {"node-x", 0}}, 0}}},
          {"only node a impacts topologyKeyToMinPodsMap on zone and node",
           zone_node,
           TwoNodes("node-x", "zone2"),
           {On("p-x1", "node-x", foo)},
           On("p-a1", "node-a", foo),
           "node-a",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 1}}, 1}, {"node", 1, {{"node-a", 1}, {"node-x", 1}}, 1}}},
          {"node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
           zone_node,
           three(),
           {On("p-b1", "node-b", foo), On("p-b2", "node-b", foo), On("p-x1", "node-x", foo)},
           On("p-a1", "node-a", foo),
           "node-a",
           {{"zone", 1, {{"zone1", 3}, {"zone2", 1}}, 1},
            {"node", 1, {{"node-a", 1}, {"node-b", 2}, {"node-x", 1}}, 1}}},
          {"Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
           zone_foo_node_bar,
           three(),
           {On("p-b1", "node-b", foobar), On("p-x1", "node-x", foobar), On("p-x2", "node-x", bar)},
           On("p-a1", "node-a", foo),
           "node-a",
           {{"zone", 1, {{"zone1", 2}, {"zone2", 1}}, 1},
            {"node", 1, {{"node-a", 0}, {"node-b", 1}, {"node-x", 2}}, 0}}},
          {"Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
           zone_foo_node_bar,
           three(),
           {On("p-b1", "node-b", bar), On("p-x1", "node-x", foobar), On("p-x2", "node-x", bar)},
           On("p-a1", "node-a", foobar),
           "node-a",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 1}}, 1},
            {"node", 1, {{"node-a", 1}, {"node-b", 1}, {"node-x", 2}}, 1}}},
          {"add a pod when scheduling node affinity unmatched pod",
           Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)},
                    [](testing::PodBuilder& b) { b.NodeAffinityNotIn("foo", {"bar"}); }),
           affinity_nodes(false),
           {On("p-a2", "node-a", foo_z1), On("p-b1", "node-b", foo_z2)},
           On("p-a1", "node-a", foo_z1),
           "node-a",
           {{"zone", 1, {{"zone2", 1}}, 1}}},
          {"add a pod when scheduling node affinity matched pod",
           Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
           affinity_nodes(false),
           {On("p-a1", "node-a", foo_z1), On("p-b2", "node-b", foo_z2)},
           On("p-b1", "node-b", foo_z2),
           "node-b",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 2}}, 1}}},
          {"add a label selector not matched pod",
           Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}),
           affinity_nodes(false),
           {On("p-a1", "node-a", foo_z1), On("p-b2", "node-b", foo_z2)},
           On("p-b1", "node-b", {{"zone", "zone2"}}),
           "node-b",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 1}}, 1}}},
          {"add a pod when scheduling taint tolerated pod",
           Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)},
                    [](testing::PodBuilder& b) { b.Toleration(TolerateUnschedulable()); }),
           affinity_nodes(true),
           {On("p-a1", "node-a", foo_z1), On("p-b2", "node-b", foo_z2)},
           On("p-b1", "node-b", foo_z2),
           "node-b",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 2}}, 1}}},
      },
      /*add=*/true);
}

TEST(PodTopologySpreadPreFilterExtensions, RemovePod) {
  const LabelList foo = {{"foo", ""}};
  auto zone_only = Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)});
  auto three = [] {
    return std::vector<std::shared_ptr<api::Node>>{Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                                                   Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
                                                   Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}})};
  };
  auto p_a1 = On("p-a1", "node-a", foo);
  auto p_a0 = On("p-a0", "node-a", {{"bar", ""}});
  auto p_x1 = On("p-x1", "node-x", foo);
  const LabelList foo_z1 = {{"foo", ""}, {"zone", "zone1"}};
  const LabelList foo_z2 = {{"foo", ""}, {"zone", "zone2"}};
  auto affinity_nodes = [] {
    return std::vector<std::shared_ptr<api::Node>>{
        Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", "bar"}}),
        Node("node-b", {{"zone", "zone2"}, {"node", "node-b"}, {"foo", ""}})};
  };
  auto p_a1z = On("p-a1", "node-a", foo_z1);
  RunUpdateCases(
      {
          {"one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
           zone_only,
           three(),
           {p_a1, On("p-b1", "node-b", foo), On("p-x1", "node-x", foo)},
           p_a1,
           "node-a",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 1}}, 1}}},
          {"one spreadConstraint on node, topologyKeyToMinPodsMap changed",
           zone_only,
           FourNodes(),
           {p_a1, On("p-b1", "node-b", foo), On("p-x1", "node-x", foo), On("p-y1", "node-y", foo)},
           p_a1,
           "node-a",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 2}}, 1}}},
          {"delete an irrelevant pod won't help",
           zone_only,
           FourNodes(),
           {p_a0, p_a1, On("p-b1", "node-b", foo), On("p-x1", "node-x", foo), On("p-y1", "node-y", foo)},
           p_a0,
           "node-a",
           {{"zone", 1, {{"zone1", 2}, {"zone2", 2}}, 2}}},
          {"delete a non-existing pod won't help",
           zone_only,
           FourNodes(),
           {p_a1, On("p-b1", "node-b", foo), On("p-x1", "node-x", foo), On("p-y1", "node-y", foo)},
           On("p-a0", "node-a", {{"bar", ""}}),
           "node-a",
           {{"zone", 1, {{"zone1", 2}, {"zone2", 2}}, 2}}},
          {"two spreadConstraints",
           Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel)}),
           three(),
           {p_a1, On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), p_x1, On("p-x2", "node-x", foo)},
           p_x1,
           "node-x",
           {{"zone", 1, {{"zone1", 3}, {"zone2", 1}}, 1},
            {"node", 1, {{"node-a", 2}, {"node-b", 1}, {"node-x", 1}}, 1}}},
          {"remove a pod when scheduling node affinity unmatched pod",
           Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)},
                    [](testing::PodBuilder& b) { b.NodeAffinityNotIn("foo", {"bar"}); }),
           affinity_nodes(),
           {On("p-a2", "node-a", foo_z1), On("p-b1", "node-b", foo_z2)},
           On("p-a1", "node-a", foo_z1),
           "node-a",
           {{"zone", 1, {{"zone2", 1}}, 1}}},
          // As upstream's table: deletedPodIdx defaults to 0, so the pod removed from node-b's domain is
          // existingPods[0] (p-a1), not p-b1.
          {"remove a pod when scheduling node affinity matched pod",
           zone_only,
           affinity_nodes(),
           {p_a1z, On("p-b2", "node-b", foo_z2)},
           p_a1z,
           "node-b",
           {{"zone", 1, {{"zone1", 1}, {"zone2", 0}}, 0}}},
      },
      /*add=*/false);
}

TEST(PodTopologySpreadPreFilterExtensions, CloneIsIndependent) {
  const LabelList foo = {{"foo", ""}};
  TestHandle handle(TwoNodes("node-b", "zone1"), {On("p-b1", "node-b", foo)});
  auto p = MakePlugin(handle, kListArgs);
  framework::CycleState state;
  auto preemptor = framework::PodInfo::Create(Incoming(foo, {Spread(1, "node", kDNS, kFooSel)}));
  ASSERT_TRUE(p.pl->PreFilter(state, *preemptor, handle.snapshot().List()).second.IsSuccess());
  auto copy = state.Clone();
  auto added = framework::PodInfo::Create(On("p-a1", "node-a", foo));
  ASSERT_TRUE(p.pl->AddPod(*copy, *preemptor, *added, *handle.snapshot().Get("node-a")).IsSuccess());
  EXPECT_EQ(ToMap(copy->Get<PreFilterState>(kPreFilterStateKey)->tp_value_to_match_num[0]),
            (std::map<std::string, int>{{"node-a", 1}, {"node-b", 1}}));
  EXPECT_EQ(ToMap(state.Get<PreFilterState>(kPreFilterStateKey)->tp_value_to_match_num[0]),
            (std::map<std::string, int>{{"node-a", 0}, {"node-b", 1}}));
  // The clone now admits node-b (skew 1+1-1), the original does not (1+1-0).
  EXPECT_TRUE(p.pl->Filter(*copy, *preemptor, *handle.snapshot().Get("node-b")).IsSuccess());
  EXPECT_EQ(p.pl->Filter(state, *preemptor, *handle.snapshot().Get("node-b")).code(), Code::kUnschedulable);
}

// Per-node matching counts are reused across cycles while a node keeps its generation: a node whose
// pods changed (a clone with a new generation standing in for it) is recounted, and the original
// is recounted again when it comes back.
TEST(PodTopologySpreadPreFilter, CountsFollowNodeChangesAcrossCycles) {
  const LabelList foo = {{"foo", ""}};
  TestHandle handle(FourNodes(), {On("p-a1", "node-a", foo), On("p-x1", "node-x", foo), On("p-x2", "node-x", foo)});
  auto p = MakePlugin(handle, kListArgs);
  auto pod = framework::PodInfo::Create(Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}));
  auto zone_counts = [&](std::span<const framework::NodeInfo* const> nodes) {
    framework::CycleState state;
    EXPECT_TRUE(p.pl->PreFilter(state, *pod, nodes).second.IsSuccess());
    const auto* s = state.Get<PreFilterState>(kPreFilterStateKey);
    return s == nullptr ? std::map<std::string, int>{} : ToMap(s->tp_value_to_match_num[0]);
  };
  const std::map<std::string, int> original = {{"zone1", 1}, {"zone2", 2}};
  EXPECT_EQ(zone_counts(handle.snapshot().List()), original);
  EXPECT_EQ(zone_counts(handle.snapshot().List()), original);  // from the cached counts

  // node-b gains two matching pods and a non-matching one; node-x loses one.
  auto b = handle.snapshot().Get("node-b")->Clone();
  b->AddPod(framework::PodInfo::Create(On("p-b1", "node-b", foo)));
  b->AddPod(framework::PodInfo::Create(On("p-b2", "node-b", foo)));
  b->AddPod(framework::PodInfo::Create(On("p-b3", "node-b", {{"bar", ""}})));
  auto x = handle.snapshot().Get("node-x")->Clone();
  ASSERT_TRUE(x->RemovePod(x->pods()[0]->pod()));
  std::vector<const framework::NodeInfo*> changed(handle.snapshot().List().begin(), handle.snapshot().List().end());
  for (auto& ni : changed) {
    if (ni->name() == "node-b") ni = b.get();
    if (ni->name() == "node-x") ni = x.get();
  }
  EXPECT_EQ(zone_counts(changed), (std::map<std::string, int>{{"zone1", 3}, {"zone2", 1}}));
  EXPECT_EQ(zone_counts(handle.snapshot().List()), original);
}

// A node from outside the snapshot, with a zone no snapshot node has, is counted in its own domain
// by PreFilter, AddPod and Filter alike.
TEST(PodTopologySpreadPreFilter, NodeOutsideTheSnapshot) {
  const LabelList foo = {{"foo", ""}};
  TestHandle handle(FourNodes(), {On("p-a1", "node-a", foo), On("p-x1", "node-x", foo)});
  auto p = MakePlugin(handle, kListArgs);
  auto pod = framework::PodInfo::Create(Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)}));
  auto outsider =
      testing::MakeNodeInfo(Node("node-z", {{"zone", "zone3"}, {"node", "node-z"}}), {On("p-z1", "node-z", foo)});
  std::vector<const framework::NodeInfo*> nodes(handle.snapshot().List().begin(), handle.snapshot().List().end());
  nodes.push_back(outsider.get());

  framework::CycleState state;
  ASSERT_TRUE(p.pl->PreFilter(state, *pod, nodes).second.IsSuccess());
  CheckState(*state.Get<PreFilterState>(kPreFilterStateKey),
             {{"zone", 1, {{"zone1", 1}, {"zone2", 1}, {"zone3", 1}}, 1}});
  // Every zone holds one matching pod: one more anywhere is a skew of 1.
  EXPECT_TRUE(p.pl->Filter(state, *pod, *outsider).IsSuccess());
  EXPECT_TRUE(p.pl->Filter(state, *pod, *handle.snapshot().Get("node-b")).IsSuccess());

  // Without the outsider in PreFilter, its zone is unknown (0 pods) until a what-if adds one.
  framework::CycleState snapshot_only;
  ASSERT_TRUE(p.pl->PreFilter(snapshot_only, *pod, handle.snapshot().List()).second.IsSuccess());
  EXPECT_TRUE(p.pl->Filter(snapshot_only, *pod, *outsider).IsSuccess());  // 0 + 1 - 1
  auto added = framework::PodInfo::Create(On("p-z2", "node-z", foo));
  ASSERT_TRUE(p.pl->AddPod(snapshot_only, *pod, *added, *outsider).IsSuccess());
  ASSERT_TRUE(p.pl->AddPod(snapshot_only, *pod, *added, *outsider).IsSuccess());
  CheckState(*snapshot_only.Get<PreFilterState>(kPreFilterStateKey),
             {{"zone", 1, {{"zone1", 1}, {"zone2", 1}, {"zone3", 2}}, 1}});
  EXPECT_EQ(p.pl->Filter(snapshot_only, *pod, *outsider).code(), Code::kUnschedulable);  // 2 + 1 - 1
}

TEST(PodTopologySpread, CriticalPathsUpdate) {
  CriticalPaths p;
  UpdateCriticalPaths(p, "a", 3);
  UpdateCriticalPaths(p, "b", 1);
  UpdateCriticalPaths(p, "c", 2);
  EXPECT_EQ(p[0], (CriticalPath{"b", 1}));
  EXPECT_EQ(p[1], (CriticalPath{"c", 2}));
  UpdateCriticalPaths(p, "b", 4);  // an existing path grows: the paths swap
  EXPECT_EQ(p[0], (CriticalPath{"c", 2}));
  EXPECT_EQ(p[1], (CriticalPath{"b", 4}));
}

// --- Scoring: TestPodTopologySpreadScore ------------------------------------------------------

struct ScoreCase {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::vector<std::shared_ptr<api::Pod>> existing;
  std::vector<std::shared_ptr<api::Node>> nodes;         // feasible
  std::vector<std::shared_ptr<api::Node>> failed_nodes;  // nodes + failed_nodes = all nodes
  std::optional<api::LabelSelector> controller_selector = std::nullopt;
  std::vector<std::pair<std::string, int64_t>> want;
};

void RunScoreCases(const std::vector<ScoreCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto all = c.nodes;
    all.insert(all.end(), c.failed_nodes.begin(), c.failed_nodes.end());
    TestHandle handle(all, c.existing);
    handle.fake_client().controller_selector = c.controller_selector;
    auto p = MakePlugin(handle, kSystemArgs);
    ASSERT_NE(p.pl, nullptr);
    std::vector<const framework::NodeInfo*> feasible;
    for (const auto& n : c.nodes) feasible.push_back(handle.snapshot().Get(n->metadata.name));
    framework::CycleState state;
    auto pi = framework::PodInfo::Create(c.pod);
    framework::Status s = p.pl->PreScore(state, *pi, feasible);
    ASSERT_TRUE(s.IsSuccess()) << framework::ToString(s.code()) << " " << s.Message();
    framework::NodeScoreList scores;
    for (const auto* ni : feasible) {
      auto [score, status] = p.pl->Score(state, *pi, *ni);
      ASSERT_TRUE(status.IsSuccess()) << status.Message();
      scores.push_back({ni->name(), score});
    }
    ASSERT_TRUE(p.pl->GetScoreExtensions()->NormalizeScore(state, *pi, scores).IsSuccess());
    std::vector<std::pair<std::string, int64_t>> got;
    for (const auto& ns : scores) got.emplace_back(std::string(ns.name), ns.score);
    EXPECT_EQ(got, c.want);
  }
}

TEST(PodTopologySpreadScore, Scores) {
  const LabelList foo = {{"foo", ""}};
  const LabelList bar = {{"bar", ""}};
  const LabelList foobar = {{"foo", ""}, {"bar", ""}};
  const std::string host(kHostname);
  auto hosts = [&](std::vector<std::string> names) {
    std::vector<std::shared_ptr<api::Node>> out;
    for (auto& n : names) out.push_back(Node(n, {{host, n}}));
    return out;
  };
  auto spread_4321 = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{
        On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-a3", "node-a", foo), On("p-a4", "node-a", foo),
        On("p-b1", "node-b", foo), On("p-b2", "node-b", foo), On("p-b3", "node-b", foo), On("p-c1", "node-c", foo),
        On("p-c2", "node-c", foo), On("p-d1", "node-d", foo)};
  };
  auto spread_2103 = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a1", "node-a", foo), On("p-a2", "node-a", foo),
                                                  On("p-b1", "node-b", foo), On("p-d1", "node-d", foo),
                                                  On("p-d2", "node-d", foo), On("p-d3", "node-d", foo)};
  };
  auto spread_4213 = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{
        On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-a3", "node-a", foo), On("p-a4", "node-a", foo),
        On("p-b1", "node-b", foo), On("p-b2", "node-b", foo), On("p-x1", "node-x", foo), On("p-y1", "node-y", foo),
        On("p-y2", "node-y", foo), On("p-y3", "node-y", foo)};
  };
  auto zone_host = [&](std::string name, std::string zone) { return Node(name, {{"zone", zone}, {host, name}}); };
  auto inclusion_nodes = [](bool taint_c) {
    if (taint_c) {
      return std::vector<std::shared_ptr<api::Node>>{Node("node-a", {{"node", "node-a"}}),
                                                     Node("node-b", {{"node", "node-b"}}),
                                                     Node("node-c", {{"node", "node-c"}}, true)};
    }
    return std::vector<std::shared_ptr<api::Node>>{Node("node-a", {{"node", "node-a"}, {"foo", ""}}),
                                                   Node("node-b", {{"node", "node-b"}, {"foo", ""}}),
                                                   Node("node-c", {{"node", "node-c"}})};
  };
  auto inclusion_pods = [&] {
    return std::vector<std::shared_ptr<api::Pod>>{On("p-a1", "node-a", foo), On("p-a2", "node-a", foo),
                                                  On("p-b1", "node-b", foo), On("p-c1", "node-c", foo)};
  };
  auto sel_foo = [](testing::PodBuilder& b) { b.NodeSelector({{"foo", ""}}); };
  auto aff_foo = [](testing::PodBuilder& b) { b.NodeAffinityIn("foo", {""}); };
  auto zone_host_4 = [&] {
    return std::vector<std::shared_ptr<api::Node>>{zone_host("node-a", "zone1"), zone_host("node-b", "zone1"),
                                                   zone_host("node-c", "zone2"), zone_host("node-d", "zone2")};
  };

  std::vector<ScoreCase> cases = {
      {"one constraint on node, no existing pods",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       {},
       hosts({"node-a", "node-b"}),
       {},
       std::nullopt,
       {{"node-a", 100}, {"node-b", 100}}},
      {"one constraint on node, only one node is candidate",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo)},
       hosts({"node-a"}),
       hosts({"node-b"}),
       std::nullopt,
       {{"node-a", 100}}},
      {"one constraint on node, all nodes have the same number of matching pods",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       {On("p-a1", "node-a", foo), On("p-b1", "node-b", foo)},
       hosts({"node-a", "node-b"}),
       {},
       std::nullopt,
       {{"node-a", 100}, {"node-b", 100}}},
      {"one constraint on node, all 4 nodes are candidates",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       spread_2103(),
       hosts({"node-a", "node-b", "node-c", "node-d"}),
       {},
       std::nullopt,
       {{"node-a", 20}, {"node-b", 60}, {"node-c", 100}, {"node-d", 0}}},
      {"one constraint on node, null selector",
       Incoming(foo, {Spread(1, kHostname, kSA, std::nullopt)}),
       spread_2103(),
       hosts({"node-a", "node-b", "node-c", "node-d"}),
       {},
       std::nullopt,
       {{"node-a", 100}, {"node-b", 100}, {"node-c", 100}, {"node-d", 100}}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=2",
       Incoming(foo, {Spread(2, kHostname, kSA, kFooSel)}),
       spread_2103(),
       hosts({"node-a", "node-b", "node-c", "node-d"}),
       {},
       std::nullopt,
       {{"node-a", 33}, {"node-b", 66}, {"node-c", 100}, {"node-d", 16}}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=3",
       Incoming(foo, {Spread(3, kHostname, kSA, kFooSel)}),
       spread_4321(),
       hosts({"node-a", "node-b", "node-c", "node-d"}),
       {},
       std::nullopt,
       {{"node-a", 44}, {"node-b", 66}, {"node-c", 77}, {"node-d", 100}}},
      {"system defaulting, nodes don't have zone, pods match service",
       Incoming(foo, {}, [](testing::PodBuilder& b) { b.OwnerReference("ReplicaSet", "rs"); }),
       spread_4321(),
       hosts({"node-a", "node-b", "node-c", "node-d"}),
       {},
       LabelsSel({{"foo", ""}}),
       {{"node-a", 44}, {"node-b", 66}, {"node-c", 77}, {"node-d", 100}}},
      {"one constraint on node, 3 out of 4 nodes are candidates",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       spread_4213(),
       hosts({"node-a", "node-b", "node-x"}),
       hosts({"node-y"}),
       std::nullopt,
       {{"node-a", 33}, {"node-b", 83}, {"node-x", 100}}},
      {"one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       spread_4213(),
       {Node("node-a", {{host, "node-a"}}), Node("node-b", {{"n", "node-b"}}), Node("node-x", {{host, "node-x"}})},
       hosts({"node-y"}),
       std::nullopt,
       {{"node-a", 16}, {"node-b", 0}, {"node-x", 100}}},
      {"one constraint on zone, 3 out of 4 nodes are candidates",
       Incoming(foo, {Spread(1, "zone", kSA, kFooSel)}),
       spread_4213(),
       {zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2")},
       {zone_host("node-y", "zone2")},
       std::nullopt,
       {{"node-a", 75}, {"node-b", 75}, {"node-x", 100}}},
      {"two Constraints on zone and node, 2 out of 4 nodes are candidates",
       Incoming(foo, {Spread(1, "zone", kSA, kFooSel), Spread(1, kHostname, kSA, kFooSel)}),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), On("p-x1", "node-x", foo),
        On("p-x2", "node-x", foo), On("p-y1", "node-y", foo), On("p-y2", "node-y", foo), On("p-y3", "node-y", foo),
        On("p-y4", "node-y", foo)},
       {zone_host("node-a", "zone1"), zone_host("node-x", "zone2")},
       {zone_host("node-b", "zone1"), zone_host("node-y", "zone2")},
       std::nullopt,
       {{"node-a", 100}, {"node-x", 63}}},
      {"two Constraints on zone, 2 out of 4 nodes are candidates",
       Incoming(foobar, {Spread(1, "zone", kSA, kFooSel), Spread(1, "zone", kSA, kBarSel)}),
       {On("p-a1", "node-a", foobar), On("p-a2", "node-a", foo), On("p-b1", "node-b", foobar),
        On("p-y1", "node-y", foo), On("p-y2", "node-y", foobar), On("p-y3", "node-y", foo)},
       {Node("node-a", {{"zone", "zone1"}}), Node("node-x", {{"zone", "zone2"}})},
       {Node("node-b", {{"zone", "zone1"}}), Node("node-y", {{"zone", "zone2"}})},
       std::nullopt,
       {{"node-a", 85}, {"node-x", 100}}},
      {"two Constraints on zone and node, with different labelSelectors",
       Incoming(foobar, {Spread(1, "zone", kSA, kFooSel), Spread(1, kHostname, kSA, kBarSel)}),
       {On("p-a1", "node-a", foo), On("p-b1", "node-b", foobar), On("p-y1", "node-y", foo), On("p-y2", "node-y", bar)},
       {zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2"),
        zone_host("node-y", "zone2")},
       {},
       std::nullopt,
       {{"node-a", 60}, {"node-b", 20}, {"node-x", 100}, {"node-y", 60}}},
      {"two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
       Incoming(foobar, {Spread(1, "zone", kSA, kFooSel), Spread(1, kHostname, kSA, kBarSel)}),
       {On("p-b1", "node-b", bar), On("p-x1", "node-x", foo), On("p-y1", "node-y", foobar)},
       {zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2"),
        zone_host("node-y", "zone2")},
       {},
       std::nullopt,
       {{"node-a", 100}, {"node-b", 60}, {"node-x", 40}, {"node-y", 0}}},
      {"two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
       Incoming(foobar, {Spread(1, "zone", kSA, kFooSel), Spread(1, kHostname, kSA, kBarSel)}),
       {On("p-a1", "node-a", foo), On("p-b1", "node-b", foobar), On("p-y1", "node-y", foo), On("p-y2", "node-y", bar)},
       {zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2")},
       {zone_host("node-y", "zone2")},
       std::nullopt,
       {{"node-a", 50}, {"node-b", 25}, {"node-x", 100}}},
      {"existing pods in a different namespace do not count",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       {On("p-a1", "node-a", foo, "ns1"), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo),
        On("p-b2", "node-b", foo)},
       hosts({"node-a", "node-b"}),
       {},
       std::nullopt,
       {{"node-a", 100}, {"node-b", 33}}},
      {"terminating Pods should be excluded",
       Incoming(foo, {Spread(1, kHostname, kSA, kFooSel)}),
       {Terminating(On("p-a", "node-a", foo)), On("p-b", "node-b", foo)},
       hosts({"node-a", "node-b"}),
       {},
       std::nullopt,
       {{"node-a", 100}, {"node-b", 0}}},
      {"minDomains has no effect when ScheduleAnyway",
       Incoming(foo, {Spread(2, "node", kSA, kFooSel, 10)}),
       {On("p-a1", "node-a", foo), On("p-a2", "node-a", foo), On("p-b1", "node-b", foo), On("p-b2", "node-b", foo),
        On("p-c1", "node-c", foo)},
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}})},
       {},
       std::nullopt,
       {{"node-a", 75}, {"node-b", 75}, {"node-c", 100}}},
      {"NodeAffinityPolicy honoed with labelSelectors",
       Incoming(foo, {Spread(1, "node", kSA, kFooSel)}, sel_foo),
       inclusion_pods(),
       inclusion_nodes(false),
       {},
       std::nullopt,
       {{"node-a", 0}, {"node-b", 33}, {"node-c", 100}}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       Incoming(foo, {Spread(1, "node", kSA, kFooSel, std::nullopt, kIgnore)}, sel_foo),
       inclusion_pods(),
       inclusion_nodes(false),
       {},
       std::nullopt,
       {{"node-a", 66}, {"node-b", 100}, {"node-c", 100}}},
      {"NodeAffinityPolicy honoed with nodeAffinity",
       Incoming(foo, {Spread(1, "node", kSA, kFooSel)}, aff_foo),
       inclusion_pods(),
       inclusion_nodes(false),
       {},
       std::nullopt,
       {{"node-a", 0}, {"node-b", 33}, {"node-c", 100}}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       Incoming(foo, {Spread(1, "node", kSA, kFooSel, std::nullopt, kIgnore)}, aff_foo),
       inclusion_pods(),
       inclusion_nodes(false),
       {},
       std::nullopt,
       {{"node-a", 66}, {"node-b", 100}, {"node-c", 100}}},
      {"NodeTaintsPolicy honored",
       Incoming(foo, {Spread(1, "node", kSA, kFooSel, std::nullopt, std::nullopt, kHonor)}),
       inclusion_pods(),
       inclusion_nodes(true),
       {},
       std::nullopt,
       {{"node-a", 0}, {"node-b", 33}, {"node-c", 100}}},
      {"NodeTaintsPolicy ignored",
       Incoming(foo, {Spread(1, "node", kSA, kFooSel)}),
       inclusion_pods(),
       inclusion_nodes(true),
       {},
       std::nullopt,
       {{"node-a", 66}, {"node-b", 100}, {"node-c", 100}}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       Incoming(foobar,
                {Spread(1, "zone", kSA, api::LabelSelector{}, std::nullopt, std::nullopt, std::nullopt, {"foo"}),
                 Spread(1, kHostname, kSA, api::LabelSelector{}, std::nullopt, std::nullopt, std::nullopt, {"bar"})}),
       {On("p-a1", "node-a", foo), On("p-b1", "node-b", foobar), On("p-y1", "node-c", foo), On("p-y2", "node-c", bar)},
       zone_host_4(),
       {},
       std::nullopt,
       {{"node-a", 60}, {"node-b", 20}, {"node-c", 60}, {"node-d", 100}}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
       Incoming({{"foo", ""}, {"bar", ""}, {"baz", ""}},
                {Spread(1, "zone", kSA, kFooSel),
                 Spread(1, kHostname, kSA, kBarSel, std::nullopt, std::nullopt, std::nullopt, {"baz"})}),
       {On("p-a1", "node-a", foo), On("p-b1", "node-b", {{"foo", ""}, {"bar", ""}, {"baz", ""}}),
        On("p-c1", "node-c", foo), On("p-c2", "node-c", bar), On("p-d3", "node-c", {{"bar", ""}, {"baz", ""}})},
       zone_host_4(),
       {},
       std::nullopt,
       {{"node-a", 60}, {"node-b", 20}, {"node-c", 60}, {"node-d", 100}}},
  };
  RunScoreCases(cases);
}

// --- PreScore state: TestPreScoreStateEmptyNodes / TestPreScoreSkip ----------------------------

struct PreScoreCase {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::vector<std::shared_ptr<api::Node>> nodes;
  Json args = kListArgs;
  std::optional<api::LabelSelector> controller_selector;
  std::vector<std::pair<std::string, int32_t>> constraints;  // topology key, maxSkew
  std::vector<std::string> ignored;
  std::vector<std::map<std::string, int64_t>> counts;
  std::vector<size_t> weight_sizes;  // TopologyNormalizingWeight(size) per constraint
};

TEST(PodTopologySpreadPreScore, State) {
  const LabelList foo = {{"foo", ""}};
  const std::string host(kHostname);
  const std::string zone(kZone);
  auto owned = [](testing::PodBuilder& b) { b.OwnerReference("ReplicaSet", "rs1"); };
  std::vector<PreScoreCase> cases = {
      {"normal case",
       Incoming(foo, {Spread(1, "zone", kSA, kFooSel), Spread(1, kHostname, kSA, kFooSel)}),
       {Node("node-a", {{"zone", "zone1"}, {host, "node-a"}}), Node("node-b", {{"zone", "zone1"}, {host, "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {host, "node-x"}})},
       kListArgs,
       std::nullopt,
       {{"zone", 1}, {host, 1}},
       {},
       {{{"zone1", 0}, {"zone2", 0}}, {}},
       {2, 3}},
      {"null selector",
       Incoming(foo, {Spread(1, "zone", kSA, std::nullopt)}),
       {Node("node-a", {{"zone", "zone1"}, {host, "node-a"}}), Node("node-b", {{"zone", "zone1"}, {host, "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {host, "node-x"}})},
       kListArgs,
       std::nullopt,
       {{"zone", 1}},
       {},
       {{{"zone1", 0}, {"zone2", 0}}},
       {2}},
      {"node-x doesn't have label zone",
       Incoming(foo, {Spread(1, "zone", kSA, kFooSel), Spread(1, kHostname, kSA, kBarSel)}),
       {Node("node-a", {{"zone", "zone1"}, {host, "node-a"}}), Node("node-b", {{"zone", "zone1"}, {host, "node-b"}}),
        Node("node-x", {{host, "node-x"}})},
       kListArgs,
       std::nullopt,
       {{"zone", 1}, {host, 1}},
       {"node-x"},
       {{{"zone1", 0}}, {}},
       {1, 2}},
      {"system default constraints and a replicaset",
       Incoming({{"foo", "tar"}, {"baz", "sup"}}, {}, owned),
       {Node("node-a", {{host, "node-a"}, {zone, "mars"}}), Node("node-b", {{host, "node-b"}, {zone, "mars"}}),
        Node("node-c", {{host, "node-c"}}), Node("node-d", {{host, "node-d"}})},
       kSystemArgs,
       kFooSel,
       {{host, 3}, {zone, 5}},
       {},
       {{}, {{"mars", 0}, {"", 0}}},
       {4, 2}},
      {"default constraints and a replicaset",
       Incoming({{"foo", "tar"}, {"baz", "sup"}}, {}, owned),
       {Node("node-a", {{"rack", "rack1"}, {host, "node-a"}, {"planet", "mars"}})},
       {{"defaultingType", "List"},
        {"defaultConstraints",
         {{{"maxSkew", 1}, {"topologyKey", host}, {"whenUnsatisfiable", "ScheduleAnyway"}},
          {{"maxSkew", 2}, {"topologyKey", "rack"}, {"whenUnsatisfiable", "DoNotSchedule"}},
          {{"maxSkew", 2}, {"topologyKey", "planet"}, {"whenUnsatisfiable", "ScheduleAnyway"}}}}},
       kFooSel,
       {{host, 1}, {"planet", 2}},
       {},
       {{}, {{"mars", 0}}},
       {1, 1}},
      {"default constraints and a replicaset, but pod has constraints",
       Incoming({{"foo", "bar"}, {"baz", "sup"}},
                {Spread(1, "zone", kDNS, kBarSel), Spread(2, "planet", kSA, LabelsSel({{"baz", "sup"}}))}, owned),
       {Node("node-a", {{"planet", "mars"}, {"galaxy", "andromeda"}})},
       {{"defaultingType", "List"},
        {"defaultConstraints", {{{"maxSkew", 2}, {"topologyKey", "galaxy"}, {"whenUnsatisfiable", "ScheduleAnyway"}}}}},
       kFooSel,
       {{"planet", 2}},
       {},
       {{{"mars", 0}}},
       {1}},
      {"NodeAffinityPolicy honored with labelSelectors",
       Incoming(foo, {Spread(1, "zone", kSA, kBarSel)},
                [](testing::PodBuilder& b) {
                  b.NodeSelector({{"foo", ""}});
                }),
       {Node("node-a", {{"zone", "zone1"}, {"foo", ""}, {host, "node-a"}}),
        Node("node-b", {{"zone", "zone1"}, {"foo", ""}, {host, "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {host, "node-x"}})},
       kListArgs,
       std::nullopt,
       {{"zone", 1}},
       {},
       {{{"zone1", 0}, {"zone2", 0}}},
       {2}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TestHandle handle(c.nodes, {});
    handle.fake_client().controller_selector = c.controller_selector;
    auto p = MakePlugin(handle, c.args);
    ASSERT_NE(p.pl, nullptr);
    framework::CycleState state;
    ASSERT_TRUE(p.pl->PreScore(state, *framework::PodInfo::Create(c.pod), handle.snapshot().List()).IsSuccess());
    const auto* s = state.Get<PreScoreState>(kPreScoreStateKey);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(s->constraints.size(), c.constraints.size());
    for (size_t i = 0; i < c.constraints.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(s->constraints[i].topology_key, c.constraints[i].first);
      EXPECT_EQ(s->constraints[i].max_skew, c.constraints[i].second);
      EXPECT_EQ(ToMap(s->topology_value_to_pod_counts[i]), c.counts[i]);
      EXPECT_DOUBLE_EQ(s->topology_normalizing_weight[i], std::log(static_cast<double>(c.weight_sizes[i] + 2)));
    }
    std::vector<std::string> ignored(s->ignored_nodes.begin(), s->ignored_nodes.end());
    EXPECT_EQ(ignored, c.ignored);
  }
}

TEST(PodTopologySpreadPreScore, Skip) {
  {
    SCOPED_TRACE("the pod doesn't have soft topology spread Constraints");
    TestHandle handle({Node("node-a", {{std::string(kHostname), "node-a"}})}, {});
    auto p = MakePlugin(handle, kListArgs);
    framework::CycleState state;
    auto pi = framework::PodInfo::Create(Incoming({}, {}));
    EXPECT_TRUE(p.pl->PreScore(state, *pi, handle.snapshot().List()).IsSkip());
  }
  {
    SCOPED_TRACE("default constraints and a replicaset that doesn't match");
    TestHandle handle({Node("node-a", {{"planet", "mars"}})}, {});
    handle.fake_client().controller_selector = std::nullopt;  // rs2 does not exist
    Json args = {
        {"defaultingType", "List"},
        {"defaultConstraints", {{{"maxSkew", 2}, {"topologyKey", "planet"}, {"whenUnsatisfiable", "ScheduleAnyway"}}}}};
    auto p = MakePlugin(handle, args);
    framework::CycleState state;
    auto pi = framework::PodInfo::Create(Incoming(
        {{"foo", "bar"}, {"baz", "sup"}}, {}, [](testing::PodBuilder& b) { b.OwnerReference("ReplicaSet", "rs2"); }));
    EXPECT_TRUE(p.pl->PreScore(state, *pi, handle.snapshot().List()).IsSkip());
  }
  {
    SCOPED_TRACE("no nodes at all");
    TestHandle handle({}, {});
    auto p = MakePlugin(handle, kListArgs);
    framework::CycleState state;
    auto pi = framework::PodInfo::Create(Incoming({}, {Spread(1, "zone", kSA, kFooSel)}));
    EXPECT_TRUE(p.pl->PreScore(state, *pi, handle.snapshot().List()).IsSkip());
  }
}

// --- Queueing hints: Test_isSchedulableAfterNodeChange / Test_isSchedulableAfterPodChange ------

std::shared_ptr<api::Node> HintNode(LabelList labels, std::vector<api::Taint> taints = {}) {
  auto node = testing::MakeNode().Name("node-a").Obj();
  for (auto& [k, v] : labels) node->metadata.labels.Set(k, v);
  node->spec.taints = std::move(taints);
  return node;
}

TEST(PodTopologySpreadHints, NodeChange) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Node> old_node, new_node;
    QueueingHint want;
  };
  auto zone = Incoming({}, {Spread(1, "zone", kDNS, kFooSel)});
  auto zone_node = Incoming({}, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kFooSel)});
  api::Taint aaa{"aaa", "bbb", api::TaintEffect::kNoSchedule};
  api::Taint ccc{"ccc", "bbb", api::TaintEffect::kNoSchedule};
  std::vector<Case> cases = {
      {"node updates label which matches topologyKey", zone, HintNode({{"zone", "zone1"}}),
       HintNode({{"zone", "zone2"}}), QueueingHint::kQueue},
      {"node that doesn't match topologySpreadConstraints updates non-related label", zone, HintNode({{"foo", "bar1"}}),
       HintNode({{"foo", "bar2"}}), QueueingHint::kSkip},
      {"node that match topologySpreadConstraints adds non-related label", zone_node,
       HintNode({{"zone", "zone1"}, {"node", "node1"}, {"foo", "bar"}}),
       HintNode({{"zone", "zone1"}, {"node", "node1"}}), QueueingHint::kSkip},
      {"create node with non-related labels", zone, nullptr, HintNode({{"foo", "bar"}}), QueueingHint::kSkip},
      {"create node with related labels", zone, nullptr, HintNode({{"zone", "zone1"}}), QueueingHint::kQueue},
      {"delete node with non-related labels", zone, HintNode({{"foo", "bar"}}), nullptr, QueueingHint::kSkip},
      {"delete node with related labels", zone, HintNode({{"zone", "zone1"}}), nullptr, QueueingHint::kQueue},
      {"add node with related labels that only match one of topologySpreadConstraints", zone_node, nullptr,
       HintNode({{"zone", "zone1"}}), QueueingHint::kSkip},
      {"add node with related labels that match all topologySpreadConstraints", zone_node, nullptr,
       HintNode({{"zone", "zone1"}, {"node", "node1"}}), QueueingHint::kQueue},
      {"update node with related labels that only match one of topologySpreadConstraints", zone_node,
       HintNode({{"zone", "zone1"}}), HintNode({{"zone", "zone1"}}), QueueingHint::kSkip},
      {"update node with related labels that match all topologySpreadConstraints", zone_node,
       HintNode({{"zone", "zone1"}, {"node", "node1"}}), HintNode({{"zone", "zone1"}, {"node", "node2"}}),
       QueueingHint::kQueue},
      {"update node with different taints that match all topologySpreadConstraints", zone_node,
       HintNode({{"zone", "zone1"}, {"node", "node1"}}, {aaa}), HintNode({{"zone", "zone1"}, {"node", "node1"}}, {ccc}),
       QueueingHint::kQueue},
      {"update node with different taints that only match one of topologySpreadConstraints", zone_node,
       HintNode({{"node", "node1"}}, {aaa}), HintNode({{"node", "node1"}}, {ccc}), QueueingHint::kSkip},
  };
  TestHandle handle({}, {});
  auto p = MakePlugin(handle, kListArgs);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects ev;
    ev.old_node = c.old_node.get();
    ev.new_node = c.new_node.get();
    EXPECT_EQ(p.pl->IsSchedulableAfterNodeChange(*c.pod, ev), c.want);
  }
}

TEST(PodTopologySpreadHints, PodChange) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Pod> old_pod, new_pod;
    QueueingHint want;
  };
  const LabelList foo = {{"foo", ""}};
  auto p_zone = Incoming(foo, {Spread(1, "zone", kDNS, kFooSel)});
  auto p_multi = Incoming(foo, {Spread(1, "zone", kDNS, kFooSel), Spread(1, "node", kDNS, kBarSel)});
  auto p_honor = Incoming(
      foo, {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, kHonor), Spread(1, "node", kDNS, kBarSel)});
  auto p_ignore = Incoming(
      foo, {Spread(1, "zone", kDNS, kFooSel, std::nullopt, std::nullopt, kIgnore), Spread(1, "node", kDNS, kBarSel)});
  // Another pod (uid "p2"); bound to "fake-node" unless node is empty.
  auto other = [](LabelList labels, std::string node = "fake-node", std::string ns = "default") {
    auto b = testing::MakePod().Namespace(ns).UID("p2").Labels(std::move(labels));
    if (!node.empty()) b.Node(node);
    return b.Obj();
  };
  // The unschedulable pod itself (same uid as Incoming's "p").
  auto self = [](LabelList labels, bool tolerate = false) {
    auto b = testing::MakePod().Name("p").Labels(std::move(labels));
    if (tolerate) b.Toleration(TolerateUnschedulable());
    return b.Obj();
  };
  std::vector<Case> cases = {
      {"add pod with labels match topologySpreadConstraints selector", p_zone, nullptr, other(foo),
       QueueingHint::kQueue},
      {"add un-scheduled pod", p_zone, nullptr, other(foo, ""), QueueingHint::kSkip},
      {"update un-scheduled pod", p_zone, other({{"bar", ""}}, ""), other(foo, ""), QueueingHint::kSkip},
      {"delete un-scheduled pod", p_zone, other(foo, ""), nullptr, QueueingHint::kSkip},
      {"add pod with different namespace", p_zone, nullptr, other(foo, "fake-node", "fake-namespace"),
       QueueingHint::kSkip},
      {"add pod with labels don't match topologySpreadConstraints selector", p_zone, nullptr, other({{"bar", ""}}),
       QueueingHint::kSkip},
      {"delete pod with labels that match topologySpreadConstraints selector", p_zone, other(foo), nullptr,
       QueueingHint::kQueue},
      {"delete pod with labels that don't match topologySpreadConstraints selector", p_zone, other({{"bar", ""}}),
       nullptr, QueueingHint::kSkip},
      {"update pod's non-related label", p_zone, other({{"foo", ""}, {"bar", "bar1"}}),
       other({{"foo", ""}, {"bar", "bar2"}}), QueueingHint::kSkip},
      {"add pod's label that matches topologySpreadConstraints selector", p_zone, other({}), other(foo),
       QueueingHint::kQueue},
      {"delete pod label that matches topologySpreadConstraints selector", p_zone, other(foo), other({}),
       QueueingHint::kQueue},
      {"change pod's label that matches topologySpreadConstraints selector", p_zone, other({{"foo", "foo1"}}),
       other({{"foo", "foo2"}}), QueueingHint::kSkip},
      {"change pod's label that doesn't match topologySpreadConstraints selector", p_zone,
       other({{"foo", ""}, {"bar", "bar1"}}), other({{"foo", ""}, {"bar", "bar2"}}), QueueingHint::kSkip},
      {"add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints", p_multi,
       other(foo), other({{"foo", ""}, {"bar", "bar2"}}), QueueingHint::kQueue},
      {"change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
       p_multi, other(foo), other({{"foo", ""}, {"baz", ""}}), QueueingHint::kSkip},
      {"change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints", p_multi,
       other({{"foo", ""}, {"bar", ""}}), other({{"foo", ""}, {"bar", "bar2"}}), QueueingHint::kSkip},
      {"the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
       p_honor, self(foo), self(foo, true), QueueingHint::kQueue},
      {"the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new toleration",
       p_ignore, self(foo), self(foo, true), QueueingHint::kSkip},
      {"the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the "
       "constraint",
       p_ignore, self({}), self(foo), QueueingHint::kQueue},
      {"the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label", p_ignore, self({}),
       self({{"unrelated", ""}}), QueueingHint::kSkip},
  };
  TestHandle handle({}, {});
  auto p = MakePlugin(handle, kListArgs);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects ev;
    ev.old_pod = c.old_pod.get();
    ev.new_pod = c.new_pod.get();
    EXPECT_EQ(p.pl->IsSchedulableAfterPodChange(*c.pod, ev), c.want);
  }
}

TEST(PodTopologySpreadHints, EventsToRegister) {
  TestHandle handle({}, {});
  auto p = MakePlugin(handle, kListArgs);
  auto events = p.pl->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  using namespace framework::action;
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, kAdd | kUpdatePodLabel | kUpdatePodTolerations | kDelete);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, kAdd | kDelete | kUpdateNodeLabel | kUpdateNodeTaint);
  // The registered hint is the plugin's.
  auto pod = Incoming({}, {Spread(1, "zone", kDNS, kFooSel)});
  auto node = HintNode({{"zone", "zone1"}});
  framework::EventObjects ev;
  ev.new_node = node.get();
  EXPECT_EQ(events[1].hint(*pod, ev), QueueingHint::kQueue);
}

// --- Args: TestValidatePodTopologySpreadArgs ---------------------------------------------------

TEST(PodTopologySpreadArgs, Validation) {
  struct Case {
    std::string name;
    Json args;
    std::string want_err;  // empty: valid
  };
  auto constraint = [](Json max_skew, std::string key, std::string action) {
    return Json{{"maxSkew", max_skew}, {"topologyKey", key}, {"whenUnsatisfiable", action}};
  };
  std::vector<Case> cases = {
      {"valid config",
       {{"defaultConstraints", {constraint(1, "node", "DoNotSchedule"), constraint(2, "zone", "ScheduleAnyway")}},
        {"defaultingType", "List"}},
       ""},
      {"maxSkew less than zero",
       {{"defaultConstraints", {constraint(-1, "node", "DoNotSchedule")}}, {"defaultingType", "List"}},
       "defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"},
      {"empty topology key",
       {{"defaultConstraints", {constraint(1, "", "DoNotSchedule")}}, {"defaultingType", "List"}},
       "defaultConstraints[0].topologyKey: Required value: can not be empty"},
      {"invalid topology key",
       {{"defaultConstraints", {constraint(1, "a/b/c", "DoNotSchedule")}}, {"defaultingType", "List"}},
       "defaultConstraints[0].topologyKey: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric "
       "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
       "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
       "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
      {"whenUnsatisfiable is empty",
       {{"defaultConstraints", {constraint(1, "node", "")}}, {"defaultingType", "List"}},
       "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"},
      {"whenUnsatisfiable contains unsupported action",
       {{"defaultConstraints", {constraint(1, "node", "unknown action")}}, {"defaultingType", "List"}},
       "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"unknown action\": supported values: "
       "\"DoNotSchedule\", \"ScheduleAnyway\""},
      {"duplicated constraints",
       {{"defaultConstraints", {constraint(1, "node", "DoNotSchedule"), constraint(2, "node", "DoNotSchedule")}},
        {"defaultingType", "List"}},
       "defaultConstraints[1]: Duplicate value: \"{node, DoNotSchedule}\""},
      {"label selector present",
       {{"defaultConstraints",
         {{{"maxSkew", 1},
           {"topologyKey", "key"},
           {"whenUnsatisfiable", "DoNotSchedule"},
           {"labelSelector", {{"matchLabels", {{"a", "b"}}}}}}}},
        {"defaultingType", "List"}},
       "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for "
       "each "
       "pod"},
      {"list default constraints, no constraints", {{"defaultingType", "List"}}, ""},
      {"system default constraints", {{"defaultingType", "System"}}, ""},
      {"null args default to System", Json(nullptr), ""},
      {"wrong constraints",
       {{"defaultingType", "unknown"}},
       "defaultingType: Unsupported value: \"unknown\": supported values: \"System\", \"List\""},
      {"system default constraints, but has constraints",
       {{"defaultConstraints", {constraint(1, "key", "DoNotSchedule")}}, {"defaultingType", "System"}},
       "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
      {"defaultingType unset with constraints defaults to System and fails",
       {{"defaultConstraints", {constraint(1, "key", "DoNotSchedule")}}},
       "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
      {"several errors are aggregated",
       {{"defaultConstraints", {constraint(0, "", "DoNotSchedule")}}, {"defaultingType", "List"}},
       "[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
       "defaultConstraints[0].topologyKey: Required value: can not be empty]"},
      {"unknown field", {{"defaultingType", "List"}, {"foo", 1}}, "unknown field \"foo\""},
      {"wrong type",
       {{"defaultConstraints", {constraint("1", "node", "DoNotSchedule")}}, {"defaultingType", "List"}},
       "defaultConstraints[0].maxSkew: Invalid type: expected int32, got string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(ArgsOf(c.args).View());
    if (c.want_err.empty()) {
      EXPECT_TRUE(got.has_value()) << got.error();
    } else {
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), c.want_err);
    }
  }
  // Parsed values.
  auto args = ParseArgs(ArgsOf({{"defaultingType", "List"},
                                {"defaultConstraints",
                                 {{{"maxSkew", 2},
                                   {"topologyKey", "zone"},
                                   {"whenUnsatisfiable", "ScheduleAnyway"},
                                   {"minDomains", 3},
                                   {"nodeAffinityPolicy", "Ignore"},
                                   {"nodeTaintsPolicy", "Honor"},
                                   {"matchLabelKeys", {"app"}}}}}})
                            .View());
  ASSERT_TRUE(args.has_value()) << args.error();
  ASSERT_EQ(args->default_constraints.size(), 1u);
  const auto& dc = args->default_constraints[0];
  EXPECT_EQ(dc.max_skew, 2);
  EXPECT_EQ(dc.topology_key, "zone");
  EXPECT_EQ(dc.when_unsatisfiable, kSA);
  EXPECT_EQ(dc.min_domains, 3);
  EXPECT_EQ(dc.node_affinity_policy, kIgnore);
  EXPECT_EQ(dc.node_taints_policy, kHonor);
  EXPECT_EQ(dc.match_label_keys, std::vector<std::string>{"app"});
  EXPECT_EQ(ParseArgs(framework::ArgsView())->defaulting_type, "System");
}

TEST(PodTopologySpreadArgs, FactoryRejectsInvalidArgs) {
  TestHandle handle({}, {});
  auto created = New(ArgsOf({{"defaultingType", "Foo"}}).View(), handle);
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.error(), "defaultingType: Unsupported value: \"Foo\": supported values: \"System\", \"List\"");
  auto ok = New({}, handle);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ((*ok)->Name(), "PodTopologySpread");
}

}  // namespace
}  // namespace kubesched::plugins::pod_topology_spread
