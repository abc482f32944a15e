#include "plugins/default_preemption/default_preemption.h"

#include <gtest/gtest.h>

#include "plugins/node_resources_fit/node_resources_fit.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins::default_preemption {
namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeToStatus;
using framework::Status;
using testing::MakeNode;
using testing::MakePod;

// Upstream's test priorities.
constexpr int32_t kNegPriority = -100;
constexpr int32_t kLowPriority = 0;
constexpr int32_t kMidPriority = 100;
constexpr int32_t kHighPriority = 1000;
constexpr int32_t kVeryHighPriority = 10000;

using Res = std::vector<std::pair<std::string, std::string>>;
const Res kOnePodRes = {{"pods", "1"}};
const Res kNodeRes = {{"cpu", "200m"}, {"memory", "400"}};
const Res kSmallRes = {{"cpu", "100m"}, {"memory", "100"}};
const Res kMediumRes = {{"cpu", "200m"}, {"memory", "200"}};
const Res kLargeRes = {{"cpu", "300m"}, {"memory", "300"}};
const Res kVeryLargeRes = {{"cpu", "500m"}, {"memory", "500"}};

constexpr std::string_view kViolatingKey = "test.kubernetes.io/is-violating-pdb";

// A FakeHandle whose PluginsRunner runs the real NodeResourcesFit plugin, plus (as upstream's
// TestPlugin) a PreFilter extension that fails on nodes labelled error=true.
class Env {
 public:
  Env(std::vector<std::shared_ptr<api::Node>> nodes, std::vector<std::shared_ptr<api::Pod>> pods)
      : handle_(nodes, pods) {
    auto fit = node_resources_fit::New({}, handle_);
    EXPECT_TRUE(fit.has_value());
    fit_plugin_ = std::move(*fit);
    auto* pre_filter = dynamic_cast<framework::PreFilterPlugin*>(fit_plugin_.get());
    auto* filter = dynamic_cast<framework::FilterPlugin*>(fit_plugin_.get());
    handle_.run_pre_filter_plugins = [pre_filter, this](CycleState& state, const framework::PodInfo& pod) {
      return pre_filter->PreFilter(state, pod, handle_.snapshot().List());
    };
    auto check_error = [](const char* what, const framework::PodInfo& pod, const framework::NodeInfo& node) {
      const std::string* v = node.node()->metadata.labels.Find("error");
      if (v && *v == "true")
        return Status::Error(std::string("failed to ") + what + " pod: " + pod.pod().metadata.name);
      return Status();
    };
    handle_.run_pre_filter_extension_add_pod = [=](CycleState&, const framework::PodInfo& pod,
                                                   const framework::PodInfo&, const framework::NodeInfo& node) {
      return check_error("add", pod, node);
    };
    handle_.run_pre_filter_extension_remove_pod = [=](CycleState&, const framework::PodInfo& pod,
                                                      const framework::PodInfo&, const framework::NodeInfo& node) {
      return check_error("remove", pod, node);
    };
    handle_.run_filter_plugins = [filter](const CycleState& state, const framework::PodInfo& pod,
                                          const framework::NodeInfo& node) { return filter->Filter(state, pod, node); };
    handle_.run_filter_plugins_with_nominated_pods = [filter](CycleState& state, const framework::PodInfo& pod,
                                                              const framework::NodeInfo& node) {
      return filter->Filter(state, pod, node);
    };
  }

  testing::FakeHandle& handle() { return handle_; }

  std::unique_ptr<DefaultPreemption> Plugin(const framework::ArgsView& args = {}) {
    auto p = New(args, handle_);
    EXPECT_TRUE(p.has_value());
    auto* dp = dynamic_cast<DefaultPreemption*>(p->release());
    dp->set_fixed_offset_for_testing(0);
    return std::unique_ptr<DefaultPreemption>(dp);
  }

  // A cycle state with the Fit plugin's PreFilter run, as at PostFilter time.
  std::unique_ptr<CycleState> State(const framework::PodInfo& pod) {
    auto state = std::make_unique<CycleState>();
    handle_.RunPreFilterPlugins(*state, pod);
    return state;
  }

 private:
  testing::FakeHandle handle_;
  std::unique_ptr<framework::Plugin> fit_plugin_;
};

std::shared_ptr<api::PodDisruptionBudget> Pdb(std::string name, std::string value, std::string min_available) {
  auto pdb = std::make_shared<api::PodDisruptionBudget>();
  pdb->metadata.name = std::move(name);
  pdb->metadata.namespace_ = "default";
  api::LabelSelector sel;
  sel.match_labels.Set(std::string(kViolatingKey), std::move(value));
  pdb->selector = sel;
  pdb->min_available = std::move(min_available);
  return pdb;
}

// ---------------------------------------------------------------------------------------------

TEST(DefaultPreemptionArgsTest, ParseAndValidate) {
  struct Case {
    std::string name;
    std::string json;
    int32_t want_pct = 0;
    int32_t want_abs = 0;
    std::string want_err;
  };
  const std::vector<Case> cases = {
      {"defaults", "null", 10, 100, ""},
      {"explicit", R"({"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 3})", 50, 3, ""},
      {"percentage zero only", R"({"minCandidateNodesPercentage": 0})", 0, 100, ""},
      {"negative percentage", R"({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100})", 0, 0,
       "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"},
      {"percentage over 100", R"({"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100})", 0, 0,
       "minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"},
      {"negative absolute", R"({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1})", 0, 0,
       "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"},
      {"all zero", R"({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})", 0, 0,
       "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
       "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time "
       "as minCandidateNodesPercentage]"},
      {"both invalid", R"({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1})", 0, 0,
       "[minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100], minCandidateNodesAbsolute: "
       "Invalid value: -1: not in valid range [0, inf)]"},
      {"unknown field", R"({"bogus": 1})", 0, 0, "unknown field \"bogus\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseArgs(testing::ArgsJson(c.json).View());
    if (!c.want_err.empty()) {
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), c.want_err);
      continue;
    }
    ASSERT_TRUE(got.has_value()) << got.error();
    EXPECT_EQ(got->min_candidate_nodes_percentage, c.want_pct);
    EXPECT_EQ(got->min_candidate_nodes_absolute, c.want_abs);
  }
}

// Upstream's TestCalculateNumCandidates.
TEST(DefaultPreemptionTest, CalculateNumCandidates) {
  struct Case {
    std::string name;
    int32_t pct, abs, nodes, want;
  };
  const std::vector<Case> cases = {
      {"no nodes", 10, 100, 0, 0},
      {"at least one", 10, 1, 1, 1},
      {"percentage dominates", 10, 50, 1000, 100},
      {"absolute dominates", 10, 100, 500, 100},
      {"all nodes", 100, 100, 50, 50},
      {"absolute larger than nodes", 0, 100, 50, 50},
  };
  testing::FakeHandle handle;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    DefaultPreemption pl({c.pct, c.abs}, handle);
    EXPECT_EQ(pl.CalculateNumCandidates(c.nodes), c.want);
    auto [offset, num] = pl.GetOffsetAndNumCandidates(c.nodes);
    EXPECT_EQ(num, c.want);
    if (c.nodes > 0) {
      EXPECT_GE(offset, 0);
      EXPECT_LT(offset, c.nodes);
    }
  }
}

// Upstream's TestPostFilter (extender and pod-group cases omitted: not supported).
TEST(DefaultPreemptionTest, PostFilter) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> pods;
    std::vector<std::shared_ptr<api::PodDisruptionBudget>> pdbs;
    std::vector<std::shared_ptr<api::Node>> nodes;
    std::map<std::string, Code> filtered;  // absent nodes: UnschedulableAndUnresolvable
    std::optional<std::string> want_node;  // nullopt: no result
    Code want_code;
    std::string want_message;
  };
  auto pod = [](std::string name) { return MakePod().Name(name).UID(name).Namespace("default"); };
  const std::vector<Case> cases = {
      {"pod with higher priority can be made schedulable",
       pod("p").Priority(kHighPriority).Obj(),
       {pod("p1").Node("node1").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulable}},
       "node1",
       Code::kSuccess,
       ""},
      {"pod with tied priority is still unschedulable",
       pod("p").Obj(),
       {pod("p1").Node("node1").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulable}},
       "",
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
      {"preemption should respect filteredNodesStatuses",
       pod("p").Priority(kHighPriority).Obj(),
       {pod("p1").Node("node1").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulableAndUnresolvable}},
       "",
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
      {"preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
       pod("p").Priority(kHighPriority).Obj(),
       {pod("p1").Node("node1").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj()},
       {},
       "",
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
      {"pod can be made schedulable on one node",
       pod("p").Priority(kMidPriority).Obj(),
       {pod("p1").Priority(kHighPriority).Node("node1").Obj(), pod("p2").Priority(kLowPriority).Node("node2").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj(), MakeNode().Name("node2").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}},
       "node2",
       Code::kSuccess,
       ""},
      {"pod can be made schedulable on minHighestPriority node",
       pod("p").Priority(kVeryHighPriority).Obj(),
       {pod("p1").Label(std::string(kViolatingKey), "non-violating").Priority(kHighPriority).Node("node1").Obj(),
        pod("p2").Label(std::string(kViolatingKey), "violating").Priority(kLowPriority).Node("node1").Obj(),
        pod("p3").Label(std::string(kViolatingKey), "violating").Priority(kMidPriority).Node("node2").Obj()},
       {Pdb("violating-pdb", "violating", "100%"), Pdb("non-violating-pdb", "non-violating", "0")},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj(), MakeNode().Name("node2").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}},
       "node2",
       Code::kSuccess,
       ""},
      {"no candidate nodes found, no enough resource after removing low priority pods",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Node("node1").Obj(), pod("p2").Node("node2").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kNodeRes).Obj(), MakeNode().Name("node2").Capacity(kNodeRes).Obj()},
       {{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}},
       "",
       Code::kUnschedulable,
       "preemption: 0/2 nodes are available: 2 Insufficient cpu."},
      {"no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Node("node1").Priority(kHighPriority).Obj(), pod("p2").Node("node2").Obj(),
        pod("p3").Node("node3").Priority(kHighPriority).Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj(), MakeNode().Name("node2").Capacity(kNodeRes).Obj(),
        MakeNode().Name("node3").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}, {"node3", Code::kUnschedulable}},
       "",
       Code::kUnschedulable,
       "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."},
      {"no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
       "enough CPU resource",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Node("node1").Obj(), pod("p2").Node("node2").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kNodeRes).Obj(), MakeNode().Name("node2").Capacity(kNodeRes).Obj(),
        MakeNode().Name("node3").Capacity(kNodeRes).Obj(), MakeNode().Name("node4").Capacity(kNodeRes).Obj()},
       {{"node1", Code::kUnschedulable},
        {"node2", Code::kUnschedulable},
        {"node4", Code::kUnschedulableAndUnresolvable}},
       "",
       Code::kUnschedulable,
       "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."},
      {"only one node but failed with TestPlugin",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Node("node1").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kLargeRes).Label("error", "true").Obj()},
       {{"node1", Code::kUnschedulable}},
       std::nullopt,
       Code::kError,
       "preemption: failed to remove pod: p"},
      {"one failed with TestPlugin and the other pass",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Node("node1").Obj(), pod("p2").Node("node2").Req(kMediumRes).Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kLargeRes).Label("error", "true").Obj(),
        MakeNode().Name("node2").Capacity(kLargeRes).Obj()},
       {{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}},
       "node2",
       Code::kSuccess,
       ""},
      {"preemptionPolicy Never is not eligible",
       pod("p").Priority(kHighPriority).PreemptionPolicy(api::PreemptionPolicy::kNever).Obj(),
       {pod("p1").Node("node1").Obj()},
       {},
       {MakeNode().Name("node1").Capacity(kOnePodRes).Obj()},
       {{"node1", Code::kUnschedulable}},
       std::nullopt,
       Code::kUnschedulable,
       "preemption: not eligible due to preemptionPolicy=Never."},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.nodes, c.pods);
    for (const auto& pdb : c.pdbs) env.handle().fake_client().AddPodDisruptionBudget(pdb);
    auto pl = env.Plugin();
    NodeToStatus statuses;
    for (const auto& [node, code] : c.filtered) statuses.Set(node, Status(code));
    auto pi = framework::PodInfo::Create(c.pod);
    auto state = env.State(*pi);
    auto [result, status] = pl->PostFilter(*state, *pi, statuses);
    EXPECT_EQ(status.code(), c.want_code) << status.Message();
    EXPECT_EQ(status.Message(), c.want_message);
    if (c.want_node) {
      EXPECT_EQ(result.mode, framework::NominatingMode::kOverride);
      EXPECT_EQ(result.nominated_node_name, *c.want_node);
    } else {
      EXPECT_EQ(result.mode, framework::NominatingMode::kNoop);
    }
  }
}

// Upstream's TestDryRunPreemption / TestSelectVictimsOnNode style cases: the victims chosen per
// node, with NodeResourcesFit deciding fits.
TEST(DefaultPreemptionTest, DryRunPreemption) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> pods;
    std::vector<std::shared_ptr<api::PodDisruptionBudget>> pdbs;
    std::vector<std::shared_ptr<api::Node>> nodes;
    // node → (victim names in order, PDB violations)
    std::vector<std::tuple<std::string, std::vector<std::string>, int64_t>> want;
    size_t want_errors = 0;  // nodes where the pod fits without preemption
  };
  auto pod = [](std::string name) { return MakePod().Name(name).UID(name).Namespace("default"); };
  auto node = [](std::string name) { return MakeNode().Name(name).Capacity(kVeryLargeRes).Obj(); };
  const std::vector<Case> cases = {
      {"a pod that does not fit on any node",
       pod("p").Priority(kHighPriority).Req({{"cpu", "600m"}}).Obj(),
       {pod("p1").Priority(kMidPriority).Req(kSmallRes).Node("node1").Obj(),
        pod("p2").Priority(kMidPriority).Req(kSmallRes).Node("node2").Obj()},
       {},
       {node("node1"), node("node2")},
       {}},
      {"a pod that fits with no preemption",
       pod("p").Priority(kHighPriority).Req(kSmallRes).Obj(),
       {pod("p1").Priority(kMidPriority).Req(kSmallRes).Node("node1").Obj(),
        pod("p2").Priority(kMidPriority).Req(kSmallRes).Node("node2").Obj()},
       {},
       {node("node1"), node("node2")},
       {},
       2},
      {"a pod that fits on one node with no preemption",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Priority(kMidPriority).Req(kSmallRes).Node("node1").Obj(),
        pod("p2").Priority(kMidPriority).Req(kMediumRes).Node("node2").Obj(),
        pod("p3").Priority(kMidPriority).Req(kSmallRes).Node("node2").Obj()},
       {},
       {node("node1"), node("node2")},
       {{"node2", {"p3"}, 0}},
       1},
      {"a pod that fits on both nodes when lower priority pods are preempted",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1").Priority(kMidPriority).Req(kLargeRes).Node("node1").Obj(),
        pod("p2").Priority(kMidPriority).Req(kLargeRes).Node("node2").Obj()},
       {},
       {node("node1"), node("node2")},
       {{"node1", {"p1"}, 0}, {"node2", {"p2"}, 0}}},
      {"a pod that would fit on the nodes, but other pods running are higher priority, no preemption",
       pod("p").Priority(kLowPriority).Req(kLargeRes).Obj(),
       {pod("p1").Priority(kMidPriority).Req(kLargeRes).Node("node1").Obj(),
        pod("p2").Priority(kMidPriority).Req(kLargeRes).Node("node2").Obj()},
       {},
       {node("node1"), node("node2")},
       {}},
      {"medium priority pod is preempted, but lower priority one stays as it is small",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p1.1").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(1).Obj(),
        pod("p1.2").Priority(kMidPriority).Req(kLargeRes).Node("node1").StartTime(1).Obj(),
        pod("p2").Priority(kMidPriority).Req(kVeryLargeRes).Node("node2").StartTime(1).Obj()},
       {},
       {node("node1"), node("node2")},
       {{"node1", {"p1.2"}, 0}, {"node2", {"p2"}, 0}}},
      {"mixed priority pods are preempted",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p2.1").Priority(kMidPriority).Req(kMediumRes).Node("node1").StartTime(1).Obj(),
        pod("p2.2").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(1).Obj(),
        pod("p2.3").Priority(kHighPriority).Req(kSmallRes).Node("node1").StartTime(1).Obj(),
        pod("p2.4").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(1).Obj(),
        pod("p2.5").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(1).Obj()},
       {},
       {node("node1")},
       // Reprieve order: p2.1 (mid) fits back? 200+100(p2.3)+300 > 500: no; the lows: one fits back.
       {{"node1", {"p2.1", "p2.4", "p2.5"}, 0}}},
      {"mixed priority pods are preempted, pick later StartTime one when priorities are equal",
       pod("p").Priority(kHighPriority).Req(kLargeRes).Obj(),
       {pod("p2.1").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(5).Obj(),
        pod("p2.2").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(4).Obj(),
        pod("p2.3").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(3).Obj(),
        pod("p2.4").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(2).Obj(),
        pod("p2.5").Priority(kLowPriority).Req(kSmallRes).Node("node1").StartTime(1).Obj()},
       {},
       {node("node1")},
       {{"node1", {"p2.3", "p2.2", "p2.1"}, 0}}},
      {"preemption with violation of the pdb with pod whose eviction was processed, the victim is a violator",
       pod("p").Priority(kHighPriority).Req(kVeryLargeRes).Obj(),
       {pod("p1.1").Label(std::string(kViolatingKey), "v").Priority(kLowPriority).Req(kSmallRes).Node("node1").Obj(),
        pod("p1.2").Label(std::string(kViolatingKey), "v").Priority(kLowPriority).Req(kSmallRes).Node("node1").Obj(),
        pod("p2.1").Label(std::string(kViolatingKey), "v").Priority(kLowPriority).Req(kSmallRes).Node("node2").Obj()},
       {Pdb("pdb", "v", "2")},
       {node("node1"), node("node2")},
       // 3 healthy, minAvailable 2: one disruption allowed.
       {{"node1", {"p1.2", "p1.1"}, 1}, {"node2", {"p2.1"}, 0}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.nodes, c.pods);
    auto pl = env.Plugin();
    auto pi = framework::PodInfo::Create(c.pod);
    auto state = env.State(*pi);
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs(c.pdbs.begin(), c.pdbs.end());
    auto budgets = ComputePdbBudgets(pdbs, env.handle().snapshot().List());
    NodeToStatus statuses;
    std::vector<std::string> errors;
    auto all = env.handle().snapshot().List();
    auto candidates =
        pl->DryRunPreemption(*state, *pi, all, budgets, 0, static_cast<int32_t>(all.size()), statuses, errors);
    EXPECT_EQ(errors.size(), c.want_errors);
    std::vector<std::tuple<std::string, std::vector<std::string>, int64_t>> got;
    for (const auto& cand : candidates) {
      std::vector<std::string> names;
      for (const auto& v : cand.victims.pods) names.push_back(v->pod().metadata.name);
      got.emplace_back(cand.node_name, names, cand.victims.num_pdb_violations);
    }
    // Non-violating candidates come first; compare as a set keyed by node for readability.
    std::sort(got.begin(), got.end());
    auto want = c.want;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
}

// A node's lowest pod priority is remembered between attempts for the node's generation: a pod
// added to it since is seen by the next dry run.
TEST(DefaultPreemptionTest, DryRunPreemptionSeesPodsAddedSinceTheLastAttempt) {
  auto pod = [](std::string name) { return MakePod().Name(name).UID(name).Namespace("default"); };
  Env env({MakeNode().Name("node1").Capacity(kNodeRes).Obj()},
          {pod("high").Priority(kHighPriority).Req(kMediumRes).Node("node1").Obj()});
  auto pl = env.Plugin();
  auto preemptor = framework::PodInfo::Create(pod("p").Priority(kMidPriority).Req(kMediumRes).Obj());
  auto dry_run = [&] {
    auto state = env.State(*preemptor);
    NodeToStatus statuses;
    std::vector<std::string> errors;
    auto all = env.handle().snapshot().List();
    auto candidates = pl->DryRunPreemption(*state, *preemptor, all, {}, 0, 1, statuses, errors);
    std::vector<std::string> victims;
    for (const auto& c : candidates) {
      for (const auto& v : c.victims.pods) victims.push_back(c.node_name + "/" + v->pod().metadata.name);
    }
    return std::pair{victims, statuses.Get("node1").Message()};
  };
  auto [none, why] = dry_run();
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(why, "No preemption victims found for incoming pod");
  // The high-priority pod leaves and a low-priority one takes its place.
  ASSERT_TRUE(env.handle().snapshot().RemovePod(*pod("high").Priority(kHighPriority).Node("node1").Obj()));
  ASSERT_TRUE(env.handle().snapshot().AddPod(pod("low").Priority(kLowPriority).Req(kMediumRes).Node("node1").Obj()));
  auto [victims, status] = dry_run();
  EXPECT_EQ(victims, std::vector<std::string>{"node1/low"}) << status;
}

TEST(DefaultPreemptionTest, SelectVictimsOnNodeStatuses) {
  // No lower-priority pods: UnschedulableAndUnresolvable; not fitting without them: the Filter status.
  Env env({MakeNode().Name("node1").Capacity(kNodeRes).Obj()},
          {MakePod().Name("p1").UID("p1").Priority(kHighPriority).Req(kSmallRes).Node("node1").Obj(),
           MakePod().Name("p2").UID("p2").Priority(kLowPriority).Req(kSmallRes).Node("node1").Obj()});
  auto pl = env.Plugin();
  const framework::NodeInfo& node = *env.handle().snapshot().List()[0];
  {
    auto pi = MakePod().Name("p").Priority(kLowPriority).Req(kSmallRes).Info();
    auto state = env.State(*pi);
    auto copy = node.Clone();
    NodeVictims victims;
    Status s = pl->SelectVictimsOnNode(*state, *pi, *copy, {}, victims);
    EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(s.Message(), kNoVictims);
  }
  {
    auto pi = MakePod().Name("p").Priority(kMidPriority).Req(kMediumRes).Info();
    auto state = env.State(*pi);
    auto copy = node.Clone();
    NodeVictims victims;
    Status s = pl->SelectVictimsOnNode(*state, *pi, *copy, {}, victims);
    EXPECT_EQ(s.code(), Code::kUnschedulable);
    EXPECT_EQ(s.Message(), "Insufficient cpu");
    // The original node is untouched.
    EXPECT_EQ(node.pods().size(), 2u);
  }
}

// Upstream's TestSelectBestCandidate criteria, on hand-built candidates.
TEST(DefaultPreemptionTest, PickOneNodeForPreemption) {
  auto v = [](std::string name, int32_t priority, int64_t start) {
    return framework::PodInfo::Create(MakePod().Name(name).Priority(priority).StartTime(start).Obj());
  };
  struct Case {
    std::string name;
    std::vector<Candidate> candidates;
    int want;
  };
  const std::vector<Case> cases = {
      {"empty", {}, -1},
      {"fewest PDB violations",
       {{"n1", {{v("a", kLowPriority, 1)}, 1}}, {"n2", {{v("b", kHighPriority, 1), v("c", kMidPriority, 1)}, 0}}},
       1},
      {"lowest highest priority",
       {{"n1", {{v("a", kMidPriority, 1)}, 0}}, {"n2", {{v("b", kLowPriority, 1), v("c", kLowPriority, 1)}, 0}}},
       1},
      {"smallest sum of priorities",
       {{"n1", {{v("a", kMidPriority, 1), v("b", kLowPriority, 1)}, 0}},
        {"n2", {{v("c", kMidPriority, 1), v("d", kNegPriority, 1)}, 0}}},
       1},
      {"more victims weigh more than their priorities in the sum",
       {{"n1", {{v("a", kMidPriority, 1), v("b", kMidPriority, 1)}, 0}},
        {"n2", {{v("c", kMidPriority, 1), v("d", kLowPriority, 1), v("e", kNegPriority, 1)}, 0}}},
       0},
      {"negative priorities still count as victims in the sum",
       {{"n1", {{v("a", kNegPriority, 1), v("b", kNegPriority, 1)}, 0}}, {"n2", {{v("c", kNegPriority, 1)}, 0}}},
       1},
      {"fewest victims",
       {{"n1", {{v("a", kMidPriority, 1), v("b", kLowPriority, 1), v("c", kLowPriority, 1)}, 0}},
        {"n2", {{v("d", kMidPriority, 1), v("e", kLowPriority, 1)}, 0}}},
       1},
      {"latest start time of the highest-priority victims",
       {{"n1", {{v("a", kMidPriority, 5), v("b", kMidPriority, 2), v("c", kLowPriority, 9)}, 0}},
        {"n2", {{v("d", kMidPriority, 3), v("e", kMidPriority, 4), v("f", kLowPriority, 0)}, 0}}},
       1},
      {"ties go to the first", {{"n1", {{v("a", kMidPriority, 1)}, 0}}, {"n2", {{v("b", kMidPriority, 1)}, 0}}}, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PickOneNodeForPreemption(c.candidates, 100), c.want);
  }
}

TEST(DefaultPreemptionTest, PodEligibleToPreemptOthers) {
  auto terminating = [](std::string name, int32_t priority) {
    auto p = MakePod().Name(name).UID(name).Priority(priority).Node("node1").Obj();
    p->metadata.deletion_timestamp_ns = 1;
    p->status.conditions.push_back({"DisruptionTarget", "True", "PreemptionByScheduler", ""});
    return p;
  };
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> pods;
    Code nominated_status;
    bool want;
    std::string want_msg;
  };
  const std::vector<Case> cases = {
      {"Pod with nominated node",
       MakePod().Name("p").Priority(kHighPriority).NominatedNodeName("node1").Obj(),
       {terminating("t", kLowPriority)},
       Code::kUnschedulable,
       false,
       "not eligible due to a terminating pod on the nominated node."},
      {"Pod with nominated node, but without terminating pod",
       MakePod().Name("p").Priority(kHighPriority).NominatedNodeName("node1").Obj(),
       {MakePod().Name("q").UID("q").Priority(kLowPriority).Node("node1").Obj()},
       Code::kUnschedulable,
       true,
       ""},
      {"Pod with nominated node, terminating pod has higher priority",
       MakePod().Name("p").Priority(kLowPriority).NominatedNodeName("node1").Obj(),
       {terminating("t", kHighPriority)},
       Code::kUnschedulable,
       true,
       ""},
      {"Pod with nominated node UnschedulableAndUnresolvable",
       MakePod().Name("p").Priority(kHighPriority).NominatedNodeName("node1").Obj(),
       {terminating("t", kLowPriority)},
       Code::kUnschedulableAndUnresolvable,
       true,
       ""},
      {"Pod with preemptionPolicy Never",
       MakePod().Name("p").Priority(kHighPriority).PreemptionPolicy(api::PreemptionPolicy::kNever).Obj(),
       {},
       Code::kUnschedulable,
       false,
       "not eligible due to preemptionPolicy=Never."},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env({MakeNode().Name("node1").Capacity(kNodeRes).Obj()}, c.pods);
    auto pl = env.Plugin();
    auto [ok, msg] = pl->PodEligibleToPreemptOthers(*c.pod, Status(c.nominated_status));
    EXPECT_EQ(ok, c.want);
    EXPECT_EQ(msg, c.want_msg);
  }
}

TEST(DefaultPreemptionTest, PreemptionEvictsVictimsAndClearsLowerNominations) {
  Env env({MakeNode().Name("node1").Capacity(kOnePodRes).Obj()},
          {MakePod().Name("p1").UID("p1").Namespace("default").Node("node1").Obj()});
  auto low = MakePod().Name("low").UID("low").Namespace("default").Priority(kLowPriority).NominatedNodeName("node1");
  auto high =
      MakePod().Name("hi").UID("hi").Namespace("default").Priority(kVeryHighPriority).NominatedNodeName("node1");
  env.handle().nominator().AddNominatedPod(low.Info(), "node1");
  env.handle().nominator().AddNominatedPod(high.Info(), "node1");
  auto pl = env.Plugin();
  auto pi = MakePod().Name("p").UID("p").Namespace("default").Priority(kHighPriority).Info();
  auto state = env.State(*pi);
  NodeToStatus statuses;
  statuses.Set("node1", Status(Code::kUnschedulable));
  auto [result, status] = pl->PostFilter(*state, *pi, statuses);
  ASSERT_TRUE(status.IsSuccess()) << status.Message();
  EXPECT_EQ(result.nominated_node_name, "node1");
  auto deletions = env.handle().fake_client().deletions();
  ASSERT_EQ(deletions.size(), 1u);
  EXPECT_EQ(deletions[0].pod_key, "default/p1");
  EXPECT_EQ(deletions[0].reason, "Preempted by pod default/p on node node1");
  auto nominations = env.handle().fake_client().nominations();
  ASSERT_EQ(nominations.size(), 1u);
  EXPECT_EQ(nominations[0].pod_key, "default/low");
  EXPECT_EQ(nominations[0].node_name, "");
  auto left = env.handle().nominator().NominatedPodsForNode("node1");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]->pod().metadata.name, "hi");
}

}  // namespace
}  // namespace kubesched::plugins::default_preemption
