// The JSON that `run --record-plugin-results` publishes (the web UI's input), read back with
// nlohmann/json, a reader independent of the writer.

#include "scheduler/plugin_results.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "framework/status.h"

namespace kubesched::scheduler {
namespace {

using Json = nlohmann::json;
using Result = AttemptExplanation::Result;

profile::ProfileConfig DefaultLikeProfile() {
  profile::ProfileConfig p;
  p.scheduler_name = "default-scheduler";
  p.plugins = {{"queueSort", {"PrioritySort"}}, {"filter", {"NodeUnschedulable", "TaintToleration"}}};
  p.score_weights = {{"NodeResourcesFit", 1}, {"TaintToleration", 3}};
  return p;
}

AttemptExplanation::NodeDetail Feasible(std::string name, int64_t total) {
  AttemptExplanation::NodeDetail n;
  n.node = std::move(name);
  n.feasible = true;
  n.evaluated = true;
  n.filters = {{"NodeUnschedulable", framework::Status(), ""}, {"TaintToleration", framework::Status(), ""}};
  n.scores = {{.plugin = "NodeResourcesFit", .raw = total, .normalized = total, .weight = 1, .weighted = total}};
  n.total = total;
  return n;
}

AttemptExplanation::NodeDetail Tainted(std::string name) {
  AttemptExplanation::NodeDetail n;
  n.node = std::move(name);
  n.evaluated = true;
  n.filters = {
      {"NodeUnschedulable", framework::Status(), ""},
      {"TaintToleration", framework::Status::UnschedulableAndUnresolvable("node(s) had untolerated taint {a: b}"),
       "untolerated taint a=b:NoSchedule"}};
  return n;
}

AttemptExplanation Scheduled() {
  AttemptExplanation e;
  e.pod_key = "default/p";
  e.profile = "default-scheduler";
  e.result = Result::kScheduled;
  e.time_ns = int64_t{1'796'320'800} * 1'000'000'000;  // 2026-12-03T18:00:00Z
  e.selected_node = "n1";
  e.nodes = {Feasible("n1", 80), Feasible("n2", 50), Tainted("n3")};
  return e;
}

TEST(PluginResultsTest, ScheduledAttempt) {
  const profile::ProfileConfig profile = DefaultLikeProfile();
  const Json j = Json::parse(EncodePluginResults(Scheduled(), &profile));
  EXPECT_EQ(j["profile"], "default-scheduler");
  EXPECT_EQ(j["time"], "2026-12-03T18:00:00Z");
  EXPECT_EQ(j["result"], "Scheduled");
  EXPECT_EQ(j["selectedNode"], "n1");
  EXPECT_FALSE(j.contains("message"));
  EXPECT_FALSE(j.contains("preFilter"));
  EXPECT_FALSE(j.contains("notes"));
  EXPECT_EQ(j["filterPlugins"], Json::parse(R"(["NodeUnschedulable","TaintToleration"])"));
  EXPECT_EQ(j["scorePlugins"],
            Json::parse(R"([{"name":"NodeResourcesFit","weight":1},{"name":"TaintToleration","weight":3}])"));
  EXPECT_EQ(j["truncatedNodes"], 0);
  ASSERT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["nodes"][0], Json::parse(R"({"name":"n1","feasible":true,
      "score":{"NodeResourcesFit":{"raw":80,"normalized":80,"weighted":80}},"total":80})"));
  // Only the failed verdict, with its detail as simulate --explain shows it; no score or total.
  EXPECT_EQ(j["nodes"][2], Json::parse(R"({"name":"n3","feasible":false,
      "filter":{"TaintToleration":"node(s) had untolerated taint {a: b} [untolerated taint a=b:NoSchedule]"}})"));
}

TEST(PluginResultsTest, FailedAttempts) {
  struct Case {
    std::string name;
    Result result;
    std::string pre_filter;
    std::string excluded;
    std::string want_result;
  };
  const std::vector<Case> cases = {
      {"no node fits", Result::kUnschedulable, "", "", "Unschedulable"},
      {"PreFilter rejected", Result::kUnschedulable, "pod has unbound immediate PersistentVolumeClaims",
       "pod has unbound immediate PersistentVolumeClaims", "Unschedulable"},
      {"error", Result::kError, "", "", "Error"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    AttemptExplanation e = Scheduled();
    e.result = c.result;
    e.selected_node.clear();
    e.message = "0/1 nodes are available: 1 node(s) had untolerated taint {a: b}.";
    e.pre_filter_message = c.pre_filter;
    e.nodes = {Tainted("n3")};
    e.nodes[0].excluded = c.excluded;
    e.plugin_notes = {{"BatchPlacement", "planned for n9"}};
    const Json j = Json::parse(EncodePluginResults(e, nullptr));
    EXPECT_EQ(j["result"], c.want_result);
    EXPECT_FALSE(j.contains("selectedNode"));
    EXPECT_FALSE(j.contains("filterPlugins"));  // no profile given
    EXPECT_EQ(j["message"], e.message);
    EXPECT_EQ(j.value("preFilter", ""), c.pre_filter);
    EXPECT_EQ(j["nodes"][0].value("excluded", ""), c.excluded);
    EXPECT_EQ(j["notes"], Json::parse(R"([{"plugin":"BatchPlacement","text":"planned for n9"}])"));
  }
}

TEST(PluginResultsTest, TruncatesToTheLimit) {
  // 400 nodes: the selected one (scored lowest of the feasible), 199 other feasible with rising
  // scores, 200 rejected.
  AttemptExplanation e = Scheduled();
  e.nodes.clear();
  e.selected_node = "selected";
  e.nodes.push_back(Feasible("selected", 1));
  for (int i = 0; i < 199; ++i) e.nodes.push_back(Feasible(fmt::format("feasible-{:03}", i), 2 + i));
  for (int i = 0; i < 200; ++i) e.nodes.push_back(Tainted(fmt::format("rejected-{:03}", i)));
  const profile::ProfileConfig profile = DefaultLikeProfile();
  const std::string full = EncodePluginResults(e, &profile);
  ASSERT_EQ(Json::parse(full)["truncatedNodes"], 0);

  const size_t limit = full.size() / 4;
  const std::string cut = EncodePluginResults(e, &profile, limit);
  EXPECT_LE(cut.size(), limit);
  const Json j = Json::parse(cut);
  const size_t kept = j["nodes"].size();
  EXPECT_GT(kept, 10u);
  EXPECT_EQ(j["truncatedNodes"], 400 - kept);
  std::vector<std::string> feasible, rejected;
  for (const Json& n : j["nodes"]) {
    (n["feasible"].get<bool>() ? feasible : rejected).push_back(n["name"]);
  }
  ASSERT_FALSE(feasible.empty());
  ASSERT_FALSE(rejected.empty());
  // The selected node stays though it scored lowest; the other feasible ones kept are the best,
  // in their original order.
  EXPECT_EQ(feasible.front(), "selected");
  EXPECT_EQ(feasible.back(), "feasible-198");
  EXPECT_EQ(feasible[1], fmt::format("feasible-{:03}", 199 - (feasible.size() - 1)));
  EXPECT_EQ(rejected.front(), "rejected-000");

  // No room for any node: the value still parses and counts them all.
  const Json none = Json::parse(EncodePluginResults(e, &profile, 100));
  EXPECT_TRUE(none["nodes"].empty());
  EXPECT_EQ(none["truncatedNodes"], 400);
}

TEST(PluginResultsTest, ProfileConfigs) {
  profile::ProfileConfig p = DefaultLikeProfile();
  p.percentage_of_nodes_to_score = 30;
  auto args = framework::ArgsDocument::Parse(R"({"scoringStrategy":{"type":"MostAllocated"}})");
  ASSERT_TRUE(args.has_value());
  p.plugin_args = {{"NodeResourcesFit", *args}};
  profile::ProfileConfig second;
  second.scheduler_name = "other";
  const std::vector<profile::ProfileConfig> profiles = {p, second};
  const Json j = Json::parse(EncodeProfileConfigs(profiles));
  EXPECT_EQ(j, Json::parse(R"({"profiles":[
      {"schedulerName":"default-scheduler",
       "plugins":{"queueSort":["PrioritySort"],"filter":["NodeUnschedulable","TaintToleration"]},
       "scorePlugins":[{"name":"NodeResourcesFit","weight":1},{"name":"TaintToleration","weight":3}],
       "pluginConfig":[{"name":"NodeResourcesFit","args":{"scoringStrategy":{"type":"MostAllocated"}}}],
       "percentageOfNodesToScore":30},
      {"schedulerName":"other","plugins":{},"scorePlugins":[]}]})"));
}

}  // namespace
}  // namespace kubesched::scheduler
