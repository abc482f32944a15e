// Tests of the HTML report: escaping, the summary's numbers, the bars, the heat map, the
// comparison of two runs. (The page in a browser:
// tests/e2e/report_e2e_test.cc.)

#include "report/report.h"

#include <gtest/gtest.h>

#include "api/json_quote.h"
#include "testing/args.h"
#include "testing/builders.h"

namespace kubesched::report {
namespace {

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::shared_ptr<api::Pod> Pending(std::string name, std::string message) {
  auto p = testing::MakePod().Name(std::move(name)).Req({{"cpu", "1"}}).Obj();
  p->status.conditions.push_back({"PodScheduled", "False", "Unschedulable", std::move(message)});
  return p;
}

std::string Render(const sim::SimulationResult& r, ReportOptions options = {}) {
  const report::Run run{"default", &r};
  return RenderReport(std::span<const report::Run>(&run, 1), options);
}

TEST(Report, EscapeHtml) {
  struct Case {
    std::string in;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"plain-name.1", "plain-name.1"},
           {"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
           {"a&b \"q\" 'q'", "a&amp;b &quot;q&quot; &#39;q&#39;"},
           {"&amp;", "&amp;amp;"},
           {"", ""},
       }) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(EscapeHtml(c.in), c.want);
  }
}

TEST(Report, EscapesEveryNameLabelAndMessage) {
  const std::string evil = "<script>alert(\"x\")</script>&'";
  const std::string escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;";
  sim::SimulationResult r;
  auto node =
      testing::MakeNode().Name("n&<e1>").Label("topology.kubernetes.io/zone", evil).Capacity({{"cpu", "4"}}).Obj();
  r.nodes = {node};
  r.pods = {testing::MakePod().Name(evil).Namespace("ns<e2>").Node("n&<e1>").Req({{"cpu", "1"}}).Obj(),
            Pending("pending-" + evil, "0/1 nodes are available: " + evil)};
  r.profiles = {"default-scheduler"};
  sim::SimulationResult::ProfileConfig config;
  config.scheduler_name = "sched<e3>";
  config.plugins = {{"filter", {"Plug<e4>"}}};
  config.score_weights = {{"Score<e5>", 2}};
  std::string args;
  api::json::AppendQuoted(args, evil, api::json::Quoting::kPlain);
  config.plugin_args.emplace_back("A<e6>", testing::ArgsJson("{\"k\":" + args + "}"));
  r.profile_configs.push_back(std::move(config));
  const std::string html = Render(r);
  EXPECT_EQ(Count(html, "<script"), 1u) << "only the report's own script";
  EXPECT_EQ(Count(html, "alert(\""), 0u);
  EXPECT_EQ(Count(html, "<e1>"), 0u);
  EXPECT_EQ(Count(html, "<e2>"), 0u);
  EXPECT_EQ(Count(html, "<e3>"), 0u);
  EXPECT_EQ(Count(html, "<e4>"), 0u);
  EXPECT_EQ(Count(html, "<e5>"), 0u);
  EXPECT_EQ(Count(html, "<e6>"), 0u);
  EXPECT_GE(Count(html, escaped), 4u) << "pod, zone, pending pod and message at least";
  EXPECT_NE(html.find("data-pod=\"ns&lt;e2&gt;/" + escaped + "\""), std::string::npos);
  EXPECT_NE(html.find("data-node=\"n&amp;&lt;e1&gt;\""), std::string::npos);
  for (std::string_view shown : {"sched&lt;e3&gt;", "Plug&lt;e4&gt;", "Score&lt;e5&gt;", "A&lt;e6&gt;"}) {
    EXPECT_NE(html.find(shown), std::string::npos) << shown;
  }
}

TEST(Report, IsSelfContained) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj()};
  const std::string html = Render(r);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_NE(html.find("size:A4 landscape"), std::string::npos);
  for (std::string_view external : {"http:", "https:", "<link rel=\"stylesheet\"", "src=\"", "@import"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
}

TEST(Report, SummaryNumbers) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj(),
             testing::MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj(),
             testing::MakeNode().Name("n2").Capacity({{"cpu", "4"}}).Obj()};
  auto running = testing::MakePod().Name("running").UID("u-running").Node("n1").Req({{"cpu", "1"}}).Obj();
  r.bound_in_input = {"u-running"};
  r.pods = {testing::MakePod().Name("a").UID("u-a").Node("n0").Req({{"cpu", "1"}}).Obj(),
            testing::MakePod().Name("b").UID("u-b").Node("n0").Req({{"cpu", "1"}}).Obj(),
            running,
            Pending("c", "0/3 nodes are available: 3 Insufficient cpu."),
            Pending("d", "0/3 nodes are available: 3 Insufficient cpu."),
            Pending("e", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."),
            testing::MakePod().Name("done").Node("n2").Phase(api::PodPhase::kSucceeded).Obj()};
  r.evictions.push_back(
      {testing::MakePod().Name("victim").Node("n0").Obj(), "Preempted by pod default/a on node n0", nullptr, ""});
  // What the simulation records of their last attempts: the reasons the table counts.
  r.failed_attempts[r.pods[3]->metadata.uid].filter_reasons = {{"Insufficient cpu", 3}};
  r.failed_attempts[r.pods[4]->metadata.uid].filter_reasons = {{"Insufficient cpu", 3}};
  r.failed_attempts[r.pods[5]->metadata.uid].filter_reasons = {
      {"node(s) didn't match Pod's node affinity/selector", 3}};
  r.attempts = 9;
  r.profiles = {"default-scheduler"};
  const std::string html = Render(r);
  EXPECT_NE(html.find("data-k=\"scheduled\">2<"), std::string::npos);
  EXPECT_NE(html.find("data-k=\"pending\">3<"), std::string::npos);
  EXPECT_NE(html.find("data-k=\"alreadyRunning\">1<"), std::string::npos);
  EXPECT_NE(html.find("data-k=\"nodesUsed\">2 of 3<"), std::string::npos) << "a finished pod uses no node";
  EXPECT_NE(html.find("data-k=\"evictions\">1<"), std::string::npos);
  EXPECT_NE(html.find("data-k=\"finished\">1<"), std::string::npos);
  EXPECT_NE(html.find("data-k=\"attempts\">9<"), std::string::npos);
  // Pending pods grouped by their message, the largest group first.
  const size_t cpu = html.find("<b>2 pods</b>: <span class=\"msg\">0/3 nodes are available: 3 Insufficient cpu.");
  const size_t affinity = html.find("<b>1 pod</b>: <span class=\"msg\">0/3 nodes are available: 3 node(s) didn&#39;t");
  ASSERT_NE(cpu, std::string::npos);
  ASSERT_NE(affinity, std::string::npos);
  EXPECT_LT(cpu, affinity);
  EXPECT_EQ(Count(html, "<li data-pod="), 3u);
  // And what keeps them pending, reason by reason across messages.
  EXPECT_NE(html.find("<tr><td>Insufficient cpu</td><td class=\"n\">2</td><td class=\"n\">3</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>node(s) didn&#39;t match Pod&#39;s node affinity/selector</td><td class=\"n\">1</td>"),
            std::string::npos);
  // The eviction is listed.
  EXPECT_NE(html.find("<tr data-pod=\"default/victim\">"), std::string::npos);
  // n2 holds only a finished pod: it is empty.
  EXPECT_NE(html.find("<div class=\"node empty\" data-node=\"n2\""), std::string::npos);
  EXPECT_EQ(html.find("<div class=\"node empty\" data-node=\"n0\""), std::string::npos);
}

TEST(Report, ReasonTableCountsTheRecordedReasons) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj()};
  r.profiles = {"default-scheduler"};
  // A reason with ", " in it: the message's text would split it in two.
  const std::string taint = "node(s) had untolerated taint {a: b, c: d}";
  r.pods = {Pending("a", "0/3 nodes are available: 2 " + taint + ", 1 Insufficient cpu."),
            Pending("b", "0/3 nodes are available: 3 Insufficient cpu.")};
  r.failed_attempts[r.pods[0]->metadata.uid].filter_reasons = {{taint, 2}, {"Insufficient cpu", 1}};
  r.failed_attempts[r.pods[1]->metadata.uid].filter_reasons = {{"Insufficient cpu", 3}};
  const std::string html = Render(r);
  EXPECT_NE(html.find("<tr><td>Insufficient cpu</td><td class=\"n\">2</td><td class=\"n\">3</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>" + taint + "</td><td class=\"n\">1</td><td class=\"n\">2</td></tr>"),
            std::string::npos);
  EXPECT_EQ(Count(html, "<tr><td>c: d}"), 0u);
}

TEST(Report, BarsPerResourceWithPodSegments) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("gpu").Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "2"}}).Obj(),
             testing::MakeNode().Name("cpu-only").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()};
  auto web = testing::MakePod()
                 .Name("web-7d9f-abcde")
                 .Label("pod-template-hash", "7d9f")
                 .OwnerReference("ReplicaSet", "web-7d9f")
                 .Node("gpu")
                 .Req({{"cpu", "1"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}})
                 .Obj();
  web->metadata.owner_references.front().controller = true;
  // More cpu than the node has (bound in the input): the bar says so.
  auto big = testing::MakePod().Name("big").Node("cpu-only").Req({{"cpu", "3"}}).Obj();
  r.pods = {web, big};
  r.profiles = {"default-scheduler"};
  const std::string html = Render(r);
  // The GPU node has a GPU bar; the other has none.
  const size_t gpu_card = html.find("<div class=\"node\" data-node=\"gpu\"");
  const size_t cpu_card = html.find("<div class=\"node\" data-node=\"cpu-only\"");
  ASSERT_NE(gpu_card, std::string::npos);
  ASSERT_NE(cpu_card, std::string::npos);
  const std::string gpu_html = html.substr(gpu_card, cpu_card > gpu_card ? cpu_card - gpu_card : std::string::npos);
  EXPECT_NE(gpu_html.find(">nvidia.com/gpu</span>"), std::string::npos);
  EXPECT_NE(gpu_html.find(">1 / 2</span>"), std::string::npos) << "GPUs requested of allocatable";
  EXPECT_NE(gpu_html.find("title=\"web-7d9f-abcde: 1\" style=\"width:25%\">web</i>"), std::string::npos)
      << "1 of 4 cpu, labelled with the Deployment's name";
  EXPECT_NE(gpu_html.find("style=\"width:50%\">web</i>"), std::string::npos) << "1 of 2 GPUs, 2 of 8 Gi";
  EXPECT_NE(gpu_html.find("data-pod=\"default/web-7d9f-abcde\" title=\"web-7d9f-abcde (Deployment web)\""),
            std::string::npos);
  const std::string cpu_html = html.substr(cpu_card);
  EXPECT_EQ(cpu_html.substr(0, cpu_html.find("</div></div>")).find("nvidia.com/gpu"), std::string::npos);
  EXPECT_NE(cpu_html.find("<span class=\"v over\">3 / 2 over!</span>"), std::string::npos);
  EXPECT_NE(cpu_html.find("style=\"width:100%\">big</i>"), std::string::npos) << "scaled to the requests";
}

TEST(Report, NodesGroupedByZone) {
  sim::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("b1").Label("topology.kubernetes.io/zone", "zone-b").Obj(),
             testing::MakeNode().Name("a1").Label("topology.kubernetes.io/zone", "zone-a").Obj(),
             testing::MakeNode().Name("none").Obj(),
             testing::MakeNode().Name("b2").Label("topology.kubernetes.io/zone", "zone-b").Obj()};
  const std::string html = Render(r);
  const size_t za = html.find(">zone zone-a<"), zb = html.find(">zone zone-b<"), zn = html.find(">no zone<");
  const size_t a1 = html.find("data-node=\"a1\""), b1 = html.find("data-node=\"b1\""),
               b2 = html.find("data-node=\"b2\""), none = html.find("data-node=\"none\"");
  ASSERT_NE(za, std::string::npos);
  ASSERT_NE(zb, std::string::npos);
  ASSERT_NE(zn, std::string::npos);
  EXPECT_LT(za, a1);
  EXPECT_LT(a1, zb);
  EXPECT_LT(zb, b1);
  EXPECT_LT(b1, b2);
  EXPECT_LT(b2, zn);
  EXPECT_LT(zn, none);
}

TEST(Report, HeatMapPastTheThreshold) {
  sim::SimulationResult r;
  for (int i = 0; i < 5; ++i) {
    r.nodes.push_back(testing::MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", "10"}}).Obj());
  }
  r.pods = {testing::MakePod().Name("p").Node("n1").Req({{"cpu", "7"}}).Obj()};
  ReportOptions options;
  options.heat_map_threshold = 10;
  const std::string small = Render(r, options);
  EXPECT_EQ(small.find("class=\"hm\""), std::string::npos);
  EXPECT_NE(small.find("<div class=\"nodes\">"), std::string::npos);
  options.heat_map_threshold = 4;
  const std::string big = Render(r, options);
  EXPECT_NE(big.find("<div class=\"nodes big\">"), std::string::npos);
  EXPECT_EQ(Count(big, "<a href=\"#n"), 5u) << "a cell per node";
  EXPECT_NE(big.find("class=\"h7\" data-node=\"n1\" title=\"n1: 70%, 1 pod\""), std::string::npos);
  EXPECT_NE(big.find("class=\"e\" data-node=\"n0\""), std::string::npos) << "empty nodes hatched";
  EXPECT_EQ(Count(big, "<div class=\"nrow off\""), 5u) << "each node's bars shown when picked";
}

TEST(Report, CompareDifferences) {
  auto nodes =
      std::vector<std::shared_ptr<const api::Node>>{testing::MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj(),
                                                    testing::MakeNode().Name("n1").Capacity({{"cpu", "4"}}).Obj(),
                                                    testing::MakeNode().Name("n2").Capacity({{"cpu", "4"}}).Obj()};
  sim::SimulationResult a, b;
  a.nodes = b.nodes = nodes;
  a.profiles = b.profiles = {"default-scheduler"};
  a.pods = {testing::MakePod().Name("p1").Node("n0").Req({{"cpu", "1"}}).Obj(),
            testing::MakePod().Name("p2").Node("n1").Req({{"cpu", "1"}}).Obj(),
            testing::MakePod().Name("p3").Node("n2").Req({{"cpu", "1"}}).Obj(), Pending("p4", "no room")};
  b.pods = {testing::MakePod().Name("p1").Node("n0").Req({{"cpu", "1"}}).Obj(),
            testing::MakePod().Name("p2").Node("n0").Req({{"cpu", "1"}}).Obj(),
            testing::MakePod().Name("p3").Node("n0").Req({{"cpu", "1"}}).Obj(),
            testing::MakePod().Name("p4").Node("n1").Req({{"cpu", "1"}}).Obj()};
  b.evictions.push_back(
      {testing::MakePod().Name("v").Node("n1").Obj(), "Preempted by pod default/p4 on node n1", nullptr, ""});
  b.evictions.push_back({testing::MakePod().Name("m").Node("n1").Obj(), "Moved", nullptr, "n0"});

  const Differences d = Compare(a, b);
  EXPECT_EQ(d.nodes_saved, 1);
  EXPECT_EQ(d.scheduled_gain, 1);
  EXPECT_EQ(d.placed_only_by_b, std::vector<std::string>{"default/p4"});
  EXPECT_TRUE(d.placed_only_by_a.empty());
  EXPECT_EQ(d.nodes_only_a, std::vector<std::string>{"n2"});
  EXPECT_TRUE(d.nodes_only_b.empty());
  EXPECT_EQ(d.evictions_a, 0u);
  EXPECT_EQ(d.evictions_b, 1u);
  EXPECT_EQ(d.moves_b, 1u);
  const Differences reverse = Compare(b, a);
  EXPECT_EQ(reverse.nodes_saved, -1);
  EXPECT_EQ(reverse.placed_only_by_a, std::vector<std::string>{"default/p4"});

  const std::vector<report::Run> runs = {{"default", &a}, {"optimizer.yaml", &b}};
  const std::string html = RenderReport(runs, {});
  EXPECT_NE(html.find("<body style=\"--runs:2\">"), std::string::npos);
  EXPECT_NE(html.find("<b class=\"better\">optimizer.yaml saves 1 node</b> against default: used only by default: "
                      "<code>n2</code>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr data-k=\"nodesUsed\"><th>nodes used</th><td class=\"n\"><span class=\"worse\">3</span></td>"
                      "<td class=\"n\"><span class=\"better\">2</span></td><td>-1 node</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr data-k=\"evictions\"><th>evictions</th><td class=\"n\"><span class=\"better\">0</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<b class=\"better\">1 pod placed by optimizer.yaml that default left pending</b>: "
                      "<code>default/p4</code>"),
            std::string::npos);
  // Both placements, node by node.
  EXPECT_EQ(Count(html, "data-node=\"n2\" data-run=\"0\""), 1u);
  EXPECT_EQ(Count(html, "data-node=\"n2\" data-run=\"1\""), 1u);
  EXPECT_NE(html.find("<div class=\"node empty\" data-node=\"n2\" data-run=\"1\">"), std::string::npos);
  EXPECT_NE(html.find("<div id=\"pending-0\" data-run=\"0\"><h3>default: 1 pending</h3>"), std::string::npos);
  EXPECT_NE(html.find("<div id=\"pending-1\" data-run=\"1\"><h3>optimizer.yaml: 0 pending</h3>"), std::string::npos);
}

}  // namespace
}  // namespace kubesched::report
