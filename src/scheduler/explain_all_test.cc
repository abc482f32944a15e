// SchedulerOptions::explain_all and on_explained (run --record-plugin-results): every attempt of
// every pod is explained and handed to the sink, whatever its outcome (scheduled, no node fits,
// PreFilter rejected, a plugin's error, Permit rejected the chosen node, no nodes at all), and
// explaining changes no placement.

#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/simulation.h"
#include "testing/builders.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::scheduler {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;
using Result = AttemptExplanation::Result;

// Rejects at PreFilter pods labelled prefilter-reject, fails Filter for those labelled
// filter-error and rejects at Permit those labelled permit-reject.
class Outcomes final : public framework::PreFilterPlugin,
                       public framework::FilterPlugin,
                       public framework::PermitPlugin {
 public:
  explicit Outcomes(framework::Handle&) {}
  std::string_view Name() const override { return "Outcomes"; }
  std::pair<framework::PreFilterResult, Status> PreFilter(CycleState&, const PodInfo& pod,
                                                          std::span<const NodeInfo* const>) override {
    if (pod.pod().metadata.labels.Has("prefilter-reject")) {
      return {{}, Status::UnschedulableAndUnresolvable("rejected at PreFilter")};
    }
    return {{}, {}};
  }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo&) override {
    if (pod.pod().metadata.labels.Has("filter-error")) return Status::Error("filter failed");
    return {};
  }
  std::pair<Status, std::chrono::nanoseconds> Permit(CycleState&, const PodInfo& pod, const std::string&) override {
    if (pod.pod().metadata.labels.Has("permit-reject")) {
      return {Status::Unschedulable("rejected at Permit"), std::chrono::nanoseconds(0)};
    }
    return {{}, std::chrono::nanoseconds(0)};
  }
};

const framework::Registry& Registry() {
  static const framework::Registry registry = [] {
    framework::Registry r;
    plugins::RegisterInTreePlugins(r);
    (void)r.Register("Outcomes",
                     [](const framework::ArgsView&,
                        framework::Handle& h) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                       return std::make_unique<Outcomes>(h);
                     });
    return r;
  }();
  return registry;
}

struct Attempt {
  Result result;
  std::string selected_node;
  std::string message;
  std::string pre_filter;
  size_t nodes = 0;
};

// Simulates `yaml` with every attempt explained; the attempts by pod name.
std::map<std::string, std::vector<Attempt>> ExplainAll(const std::string& yaml, sim::SimulationResult* out = nullptr) {
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  EXPECT_TRUE(objects.has_value());
  std::map<std::string, std::vector<Attempt>> attempts;
  sim::SimulationOptions opts;
  opts.max_virtual_time_ns = 30 * util::kNanosPerSecond;
  opts.scheduler.config = config::DefaultConfiguration(Registry());
  auto& plugins = opts.scheduler.config.profiles[0].plugins;
  plugins.pre_filter.enabled.push_back({"Outcomes", 0});
  plugins.filter.enabled.push_back({"Outcomes", 0});
  plugins.permit.enabled.push_back({"Outcomes", 0});
  opts.scheduler.explain_all = true;
  opts.scheduler.on_explained = [&](const api::Pod& pod, const AttemptExplanation& e) {
    EXPECT_EQ(e.pod_key, pod.Key());
    attempts[pod.metadata.name].push_back({e.result, e.selected_node, e.message, e.pre_filter_message, e.nodes.size()});
  };
  auto r = sim::RunSimulation(std::move(*objects), opts, Registry());
  EXPECT_TRUE(r.has_value()) << r.error();
  if (out && r) *out = std::move(*r);
  return attempts;
}

std::string Pod(const std::string& name, const std::string& cpu, const std::string& label = "") {
  std::string meta = label.empty() ? "" : "\n  labels: {" + label + ": \"yes\"}";
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default" + meta +
         "\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n---\n";
}

TEST(ExplainAll, EveryOutcomeReachesTheSink) {
  const auto attempts = ExplainAll(testing::NumberedNodes(2) + Pod("fits", "1") + Pod("huge", "64") +
                                   Pod("prefiltered", "1", "prefilter-reject") + Pod("failing", "1", "filter-error") +
                                   Pod("permit", "1", "permit-reject"));
  struct Case {
    std::string pod;
    Result result;
    bool selected;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"fits", Result::kScheduled, true, ""},
      {"huge", Result::kUnschedulable, false, "0/2 nodes are available"},
      {"prefiltered", Result::kUnschedulable, false, "rejected at PreFilter"},
      {"failing", Result::kError, false, "filter failed"},
      {"permit", Result::kUnschedulable, true, "rejected at Permit"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pod);
    ASSERT_TRUE(attempts.contains(c.pod));
    const Attempt& a = attempts.at(c.pod).front();
    EXPECT_EQ(a.result, c.result);
    EXPECT_EQ(!a.selected_node.empty(), c.selected);
    EXPECT_NE(a.message.find(c.message_part), std::string::npos) << a.message;
    EXPECT_EQ(a.nodes, 2u);
  }
  EXPECT_EQ(attempts.at("prefiltered").front().pre_filter, "rejected at PreFilter");
  // Failed pods are tried again (the flush, backoff): each attempt is explained.
  EXPECT_GT(attempts.at("failing").size(), 1u);
}

TEST(ExplainAll, NoNodesAtAll) {
  const auto attempts = ExplainAll(Pod("alone", "1"));
  ASSERT_TRUE(attempts.contains("alone"));
  EXPECT_EQ(attempts.at("alone").front().result, Result::kUnschedulable);
  EXPECT_EQ(attempts.at("alone").front().message, "no nodes available to schedule pods");
}

TEST(ExplainAll, ChangesNoPlacement) {
  // 300 nodes: sampling looks at some of them only, and ties are broken at random.
  std::string yaml = testing::NumberedNodes(300, "8");
  for (int i = 0; i < 40; ++i) yaml += Pod("p" + std::to_string(i), "500m");
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  ASSERT_TRUE(objects.has_value());
  sim::SimulationOptions plain_opts;
  plain_opts.scheduler.config = config::DefaultConfiguration(Registry());
  auto plain = sim::RunSimulation(std::move(*objects), plain_opts, Registry());
  ASSERT_TRUE(plain.has_value());
  sim::SimulationResult explained;
  const auto attempts = ExplainAll(yaml, &explained);
  ASSERT_EQ(plain->pods.size(), explained.pods.size());
  for (size_t i = 0; i < plain->pods.size(); ++i) {
    const std::string& name = plain->pods[i]->metadata.name;
    EXPECT_EQ(plain->pods[i]->spec.node_name, explained.pods[i]->spec.node_name) << name;
    ASSERT_TRUE(attempts.contains(name));
    EXPECT_EQ(attempts.at(name).back().selected_node, explained.pods[i]->spec.node_name) << name;
  }
}

}  // namespace
}  // namespace kubesched::scheduler
