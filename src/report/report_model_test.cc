// Tests of the report's view model: what the page shows, computed without any HTML.

#include "report/report_model.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::report::model {
namespace {

std::shared_ptr<api::Pod> Pending(std::string name, std::string message) {
  auto p = testing::MakePod().Name(std::move(name)).Req({{"cpu", "1"}}).Obj();
  p->status.conditions.push_back({"PodScheduled", "False", "Unschedulable", std::move(message)});
  return p;
}

std::shared_ptr<api::Pod> DeploymentPod(const std::string& name, const std::string& deployment,
                                        const std::string& node) {
  auto p = testing::MakePod()
               .Name(name)
               .Label("pod-template-hash", "h")
               .OwnerReference("ReplicaSet", deployment + "-h")
               .Node(node)
               .Req({{"cpu", "500m"}})
               .Obj();
  p->metadata.owner_references.front().controller = true;
  return p;
}

TEST(ReportModel, FormatsAmountsAndShares) {
  EXPECT_EQ(FormatAmount("cpu", 2000), "2");
  EXPECT_EQ(FormatAmount("cpu", 250), "250m");
  EXPECT_EQ(FormatAmount("cpu", 1500), "1.5");
  EXPECT_EQ(FormatAmount("memory", 3LL << 30), "3Gi");
  EXPECT_EQ(FormatAmount("memory", 1536LL << 20), "1.5Gi");
  EXPECT_EQ(FormatAmount("memory", 512), "512");
  EXPECT_EQ(FormatAmount("pods", 110), "110");
  EXPECT_EQ(Percent(0.25), "25%");
  EXPECT_EQ(Percent(1.0 / 3), "33.33%");
}

TEST(ReportModel, WorkloadsNumberedInFirstSeenOrderAcrossRuns) {
  sim::SimulationResult a, b;
  a.nodes = b.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj()};
  a.pods = {DeploymentPod("web-1", "web", "n0"), testing::MakePod().Name("bare").Node("n0").Obj()};
  b.pods = {DeploymentPod("web-1", "web", "n0"), Pending("bare", "no room")};
  Workloads workloads;
  const RunData ra = BuildRunData({"a", &a}, workloads);
  const RunData rb = BuildRunData({"b", &b}, workloads);
  ASSERT_EQ(workloads.size(), 2u);
  EXPECT_EQ(workloads[0].name, "web");
  EXPECT_EQ(workloads[0].kind, "Deployment");
  EXPECT_EQ(workloads[0].pods, 2u);
  EXPECT_EQ(workloads[1].kind, "Pod");
  EXPECT_EQ(workloads[1].pods, 2u) << "the pending one counts too";
  EXPECT_EQ(workloads[1].colour, 1);
  EXPECT_EQ(ra.nodes[0].pods.size(), 2u);
  EXPECT_EQ(ra.nodes[0].requested.milli_cpu, 500) << "the bare pod requests nothing";
  EXPECT_EQ(rb.unbound.size(), 1u);
}

TEST(ReportModel, ChartPartsKeepTheirLabelsApart) {
  const std::vector<ChartPart> parts = ChartParts(1, 0, 99);
  ASSERT_EQ(parts.size(), 2u) << "no part for zero pods";
  EXPECT_EQ(parts[0].label, "scheduled");
  EXPECT_DOUBLE_EQ(parts[0].width, 4.2);
  EXPECT_DOUBLE_EQ(parts[1].x, 4.2);
  EXPECT_TRUE(parts[1].hatched);
  // "1 scheduled" is 11 characters (about 6.5 units each): the next label starts 8 units past it.
  EXPECT_DOUBLE_EQ(parts[0].text_x, 8);
  EXPECT_DOUBLE_EQ(parts[1].text_x, 8 + 6.5 * 11 + 8);
  EXPECT_TRUE(ChartParts(0, 0, 0).empty());
}

TEST(ReportModel, DifferencesSayWhichRunDidBetter) {
  sim::SimulationResult a, b;
  a.nodes = b.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj(),
                       testing::MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj()};
  a.pods = {testing::MakePod().Name("p1").Node("n0").Obj(), testing::MakePod().Name("p2").Node("n1").Obj()};
  b.pods = {testing::MakePod().Name("p1").Node("n0").Obj(), testing::MakePod().Name("p2").Node("n0").Obj()};
  Workloads workloads;
  const DifferencesView d = BuildDifferences(BuildRunData({"a", &a}, workloads), BuildRunData({"b", &b}, workloads));
  ASSERT_EQ(d.rows.size(), 5u);
  const DifferenceRow& nodes = d.rows[2];
  EXPECT_EQ(nodes.key, "nodesUsed");
  EXPECT_EQ(nodes.class_a, "worse");
  EXPECT_EQ(nodes.class_b, "better");
  EXPECT_EQ(nodes.difference, "-1 node");
  EXPECT_EQ(d.rows[0].difference, "same");
  EXPECT_EQ(d.saver, "b");
  EXPECT_EQ(d.against, "a");
  EXPECT_EQ(d.nodes_saved, 1);
  EXPECT_EQ(d.nodes_only_a, std::vector<std::string>{"n1"});
}

TEST(ReportModel, NodesGroupedByZoneAndBarsScaled) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("b1").Label("topology.kubernetes.io/zone", "zb").Capacity({{"cpu", "2"}}).Obj(),
             testing::MakeNode().Name("x").Capacity({{"cpu", "2"}}).Obj(),
             testing::MakeNode().Name("a1").Label("topology.kubernetes.io/zone", "za").Capacity({{"cpu", "2"}}).Obj()};
  r.pods = {testing::MakePod().Name("big").Node("x").Req({{"cpu", "3"}}).Obj()};
  Workloads workloads;
  const std::vector<RunData> runs = {BuildRunData({"default", &r}, workloads)};
  const std::vector<ZoneGroup> zones = GroupByZone(runs[0]);
  ASSERT_EQ(zones.size(), 3u);
  EXPECT_EQ(zones[0].zone, "za");
  EXPECT_EQ(zones[0].nodes, std::vector<size_t>{2});
  EXPECT_EQ(zones[2].zone, "") << "nodes without a zone last";
  EXPECT_EQ(zones[2].nodes, std::vector<size_t>{1});
  const NodeRow row = BuildNodeRow(runs, 1);
  ASSERT_EQ(row.cards.size(), 1u);
  const ResourceBar& cpu = row.cards[0].bars[0];
  EXPECT_EQ(cpu.resource, "cpu");
  EXPECT_TRUE(cpu.over);
  ASSERT_EQ(cpu.segments.size(), 1u);
  EXPECT_DOUBLE_EQ(cpu.segments[0].share, 1.0) << "scaled to the requests when they exceed allocatable";
  ReportOptions options;
  options.heat_map_threshold = 2;
  const NodesView nodes = BuildNodes(runs, workloads, options);
  EXPECT_TRUE(nodes.big);
  EXPECT_TRUE(nodes.zoned);
  ASSERT_EQ(nodes.heat.size(), 1u);
  EXPECT_EQ(nodes.heat[0][1].css_class, "h10");
  EXPECT_EQ(nodes.heat[0][1].title, "x: 150%, 1 pod");
  EXPECT_EQ(nodes.heat[0][0].css_class, "e");
}

TEST(ReportModel, PlacementColumnsForTheLargestWorkloads) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "8"}}).Obj()};
  r.pods = {DeploymentPod("web-1", "web", "n0"), DeploymentPod("web-2", "web", "n0"),
            DeploymentPod("api-1", "api", "n0"), testing::MakePod().Name("bare").Node("n0").Obj()};
  Workloads workloads;
  const std::vector<RunData> runs = {BuildRunData({"default", &r}, workloads)};
  ReportOptions options;
  options.max_workload_columns = 2;  // three workloads: crowded
  const PlacementView v = BuildPlacement(runs, workloads, options);
  EXPECT_TRUE(v.bare_column);
  EXPECT_FALSE(v.other_column);
  EXPECT_EQ(v.columns, (std::vector<size_t>{0, 1})) << "web (2 pods), then api";
  ASSERT_EQ(v.runs[0].size(), 1u);
  EXPECT_EQ(v.runs[0][0].counts, (std::vector<int>{2, 1, 1})) << "web, api, bare pods";
  options.max_workload_columns = 1;
  const PlacementView narrow = BuildPlacement(runs, workloads, options);
  EXPECT_TRUE(narrow.other_column);
  EXPECT_TRUE(narrow.columns.empty()) << "the one column is left for the others";
  EXPECT_EQ(narrow.runs[0][0].counts, (std::vector<int>{1, 3})) << "bare pods, other";
}

TEST(ReportModel, PendingPodsGroupedByMessageAndReasonsFromTheAttempts) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj()};
  r.profiles = {"default-scheduler"};
  // A reason with a comma, which the message's text cannot tell apart from two reasons.
  const std::string taint = "node(s) had untolerated taint {a: b, c: d}";
  r.pods = {Pending("a", "0/5 nodes are available: 5 Insufficient cpu."),
            Pending("b", "0/5 nodes are available: 5 Insufficient cpu."),
            Pending("c", "0/5 nodes are available: 2 " + taint + ", 3 Insufficient cpu."),
            testing::MakePod().Name("other").SchedulerName("elsewhere").Obj()};
  r.failed_attempts[r.pods[0]->metadata.uid].filter_reasons = {{"Insufficient cpu", 5}};
  r.failed_attempts[r.pods[1]->metadata.uid].filter_reasons = {{"Insufficient cpu", 5}};
  r.failed_attempts[r.pods[2]->metadata.uid].filter_reasons = {{taint, 2}, {"Insufficient cpu", 3}};
  Workloads workloads;
  const PendingView v = BuildPending(BuildRunData({"default", &r}, workloads), false);
  EXPECT_EQ(v.pending, 4u);
  ASSERT_EQ(v.groups.size(), 3u);
  EXPECT_EQ(v.groups[0].message, "0/5 nodes are available: 5 Insufficient cpu.");
  EXPECT_EQ(v.groups[0].pods.size(), 2u);
  EXPECT_EQ(v.groups[0].pods[0].key, "default/a");
  EXPECT_EQ(v.groups[2].message, "not scheduled: schedulerName \"elsewhere\" is not a profile of this scheduler");
  EXPECT_EQ(v.reasons, (std::vector<ReasonTally>{{"Insufficient cpu", 3, 5}, {taint, 1, 2}}));
}

TEST(ReportModel, NoReasonsWithoutARecordedAttempt) {
  sim::SimulationResult r;
  r.profiles = {"default-scheduler"};
  r.pods = {Pending("a", "0/5 nodes are available: 5 Insufficient cpu.")};
  const std::vector<const api::Pod*> pending = {r.pods[0].get()};
  EXPECT_TRUE(TallyReasons(pending, r).empty()) << "the message's text is not parsed";
}

TEST(ReportModel, ScorePluginsInFirstSeenOrder) {
  scheduler::AttemptExplanation e;
  e.nodes.resize(2);
  e.nodes[0].scores = {{"B", 1, 1, 1, 1}};
  e.nodes[1].scores = {{"A", 1, 1, 1, 1}, {"B", 1, 1, 1, 1}};
  EXPECT_EQ(ScorePlugins(e), (std::vector<std::string>{"B", "A"}));
}

TEST(ReportModel, ExplanationRowsHoldRejectionsAndScoresByColumn) {
  scheduler::AttemptExplanation e;
  e.selected_node = "b";
  e.nodes.resize(4);
  e.nodes[0].node = "a";  // rejected by one of its two Filter plugins
  e.nodes[0].evaluated = true;
  e.nodes[0].filters = {{"NodeName", framework::Status(), ""},
                        {"NodeResourcesFit", framework::Status(framework::Code::kUnschedulable, "Insufficient cpu"),
                         "cpu: requested 3, free 1"}};
  e.nodes[1].node = "b";  // selected, scored by A only
  e.nodes[1].evaluated = true;
  e.nodes[1].feasible = true;
  e.nodes[1].scores = {{"A", 5, 50, 2, 100}};
  e.nodes[2].node = "c";  // scored by both, filtered for display only
  e.nodes[2].feasible = true;
  e.nodes[2].scores = {{"B", 1, 10, 1, 10}, {"A", 1, 10, 2, 20}};
  e.nodes[3].node = "d";  // left out by PreFilter: neither rejected by Filter nor unevaluated
  e.nodes[3].excluded = "not in PreFilter's node set";
  const ExplanationView v = BuildExplanation(1, e);
  EXPECT_EQ(v.run, 1u);
  EXPECT_EQ(v.score_plugins, (std::vector<std::string>{"A", "B"}));
  ASSERT_EQ(v.nodes.size(), 4u);
  ASSERT_EQ(v.nodes[0].rejections.size(), 1u);
  EXPECT_EQ(v.nodes[0].rejections[0]->plugin, "NodeResourcesFit");
  EXPECT_FALSE(v.nodes[0].selected);
  EXPECT_TRUE(v.nodes[1].selected);
  ASSERT_EQ(v.nodes[1].scores.size(), 2u);
  EXPECT_EQ(v.nodes[1].scores[0]->weighted, 100);
  EXPECT_EQ(v.nodes[1].scores[1], nullptr);
  EXPECT_EQ(v.nodes[2].scores[0]->weighted, 20) << "columns in the table's order, not the node's";
  EXPECT_TRUE(v.nodes[2].unevaluated);
  EXPECT_FALSE(v.nodes[3].unevaluated);
  EXPECT_TRUE(v.nodes[3].rejections.empty());
  EXPECT_TRUE(v.any_unevaluated);
}

}  // namespace
}  // namespace kubesched::report::model
