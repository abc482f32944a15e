// The report's charts over time (report/time_charts.h) from hand-made series: when they are drawn,
// a line per run as steps, thinning of long runs that keeps the peaks, the event marks, and the
// time axis' labels.

#include "report/time_charts.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kubesched::report::charts {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

sim::TimeSample Sample(int64_t seconds, int64_t running, int64_t cpu_requested = 0) {
  sim::TimeSample s;
  s.at_ns = seconds * kSecond;
  s.requested = {cpu_requested, 0, running};
  s.allocatable = {4000, 1 << 30, 10};
  s.pods_running = running;
  s.nodes_used = running > 0 ? 1 : 0;
  return s;
}

sim::TimeSeries Series(std::vector<sim::TimeSample> samples) {
  sim::TimeSeries ts;
  ts.resources = {"cpu", "memory", "pods"};
  ts.samples = std::move(samples);
  return ts;
}

const Chart* Find(const std::vector<Chart>& charts, std::string_view key) {
  for (const Chart& c : charts) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

std::vector<std::pair<double, double>> Points(const std::string& points) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(points);
  std::string p;
  while (in >> p) out.emplace_back(std::stod(p.substr(0, p.find(','))), std::stod(p.substr(p.find(',') + 1)));
  return out;
}

TEST(TimeCharts, NoneWhenNoRunSpansMoreThanOneTimePoint) {
  sim::SimulationResult a;
  a.timeseries = Series({Sample(0, 3)});
  sim::SimulationResult none;
  const report::Run runs[] = {{"default", &a}, {"other", &none}};
  EXPECT_TRUE(BuildCharts(runs).empty());
}

TEST(TimeCharts, ALinePerRunAsSteps) {
  sim::SimulationResult a, b;
  a.timeseries = Series({Sample(0, 1, 1000), Sample(10, 3, 3000), Sample(20, 2, 2000)});
  b.timeseries = Series({Sample(0, 1, 1000), Sample(40, 4, 4000)});
  const report::Run runs[] = {{"default", &a}, {"optimizer.yaml", &b}};
  const std::vector<Chart> charts = BuildCharts(runs);
  for (const char* key : {"alloc-cpu", "alloc-memory", "alloc-pods", "running", "pending", "nodes"}) {
    ASSERT_NE(Find(charts, key), nullptr) << key;
  }
  EXPECT_EQ(Find(charts, "evictions"), nullptr);
  EXPECT_EQ(Find(charts, "batches"), nullptr);
  const Chart& running = *Find(charts, "running");
  ASSERT_EQ(running.lines.size(), 2u);
  EXPECT_EQ(running.lines[0].last, 2);
  EXPECT_EQ(running.lines[1].last, 4);
  // Steps: each sample after the first holds the previous value up to its time.
  const auto pts = Points(running.lines[0].points);
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_DOUBLE_EQ(pts[1].first, pts[2].first);
  EXPECT_DOUBLE_EQ(pts[0].second, pts[1].second);
  EXPECT_LT(pts[2].second, pts[1].second);  // 3 is higher up than 1
  // The x axis is shared: b's last sample (40s) is at the plot's right edge, a's (20s) halfway.
  EXPECT_NEAR(Points(running.lines[1].points).back().first, kWidth - kRight, 0.05);
  EXPECT_NEAR(pts.back().first, kLeft + (kWidth - kLeft - kRight) / 2, 0.05);
  EXPECT_EQ(Find(charts, "alloc-cpu")->lines[1].last, 100);
  EXPECT_EQ(Find(charts, "alloc-cpu")->y_ticks.back().label, "100");
}

TEST(TimeCharts, ThinningKeepsThePeaks) {
  std::vector<sim::TimeSample> samples;
  for (int64_t i = 0; i < 20000; ++i) samples.push_back(Sample(i, i == 12345 ? 9 : 1));
  sim::SimulationResult a;
  a.timeseries = Series(std::move(samples));
  const report::Run run{"default", &a};
  const std::vector<Chart> charts = BuildCharts(std::span<const report::Run>(&run, 1));
  const auto pts = Points(Find(charts, "running")->lines[0].points);
  EXPECT_LE(pts.size(), 4 * static_cast<size_t>(kWidth));
  double top = kHeight;
  for (const auto& [x, y] : pts) top = std::min(top, y);
  const Chart& c = *Find(charts, "running");
  // The one sample at 9 is drawn: the line reaches the height of 9 on the chart's scale.
  const double max_tick = std::stod(c.y_ticks.back().label);
  EXPECT_NEAR(top, kTop + (1 - 9 / max_tick) * (kHeight - kTop - kBottom), 0.05);
}

TEST(TimeCharts, EvictionsMovesAndBatchesAreMarked) {
  sim::SimulationResult a;
  auto ts = Series({Sample(0, 1), Sample(10, 2), Sample(20, 2)});
  ts.samples[1].optimizer_batches = 1;
  ts.samples[2].optimizer_batches = 1;
  ts.samples[2].evictions = 3;
  ts.eviction_ns = {15 * kSecond, 15 * kSecond, 16 * kSecond};
  ts.move_ns = {16 * kSecond};
  a.timeseries = ts;
  const report::Run run{"optimizer.yaml", &a};
  const std::vector<Chart> charts = BuildCharts(std::span<const report::Run>(&run, 1));
  ASSERT_NE(Find(charts, "evictions"), nullptr);
  ASSERT_NE(Find(charts, "batches"), nullptr);
  size_t evictions = 0, moves = 0, batches = 0;
  for (const Mark& m : Find(charts, "running")->marks) {
    evictions += m.kind == "eviction";
    moves += m.kind == "move";
    batches += m.kind == "batch";
  }
  EXPECT_EQ(evictions, 2u);  // two at 15s on one pixel: one mark
  EXPECT_EQ(moves, 1u);
  EXPECT_EQ(batches, 1u);
}

TEST(TimeCharts, DurationLabels) {
  EXPECT_EQ(DurationLabel(0), "0s");
  EXPECT_EQ(DurationLabel(500'000'000), "500ms");
  EXPECT_EQ(DurationLabel(90 * kSecond), "90s");
  EXPECT_EQ(DurationLabel(15 * 60 * kSecond), "15m");
  EXPECT_EQ(DurationLabel(150 * 60 * kSecond), "2h30m");
  EXPECT_EQ(DurationLabel((3 * 86400 + 4 * 3600) * kSecond), "3d 4h");
  EXPECT_EQ(DurationLabel(20 * 86400 * kSecond), "20d");
}

TEST(TimeCharts, WrittenAsSvgWithEscapedNames) {
  sim::SimulationResult a;
  a.timeseries = Series({Sample(0, 1), Sample(10, 2)});
  const report::Run run{"<b>x</b>.yaml", &a};
  const std::vector<Chart> charts = BuildCharts(std::span<const report::Run>(&run, 1));
  HtmlWriter w;
  WriteCharts(w, std::span<const report::Run>(&run, 1), charts);
  const std::string html = w.Take();
  EXPECT_NE(html.find("<section id=\"timeline\">"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"running\""), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;x&lt;/b&gt;.yaml"), std::string::npos);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos);
}

}  // namespace
}  // namespace kubesched::report::charts
