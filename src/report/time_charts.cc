#include "report/time_charts.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "util/clock.h"

namespace kubesched::report::charts {
namespace {

constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;

// A step of 1, 2 or 5 times a power of ten giving about `parts` parts up to `max`.
double NiceStep(double max, int parts) {
  if (max <= 0) return 1;
  const double raw = max / parts;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// A step of round virtual time giving about `parts` parts up to `max_ns`.
double TimeStep(double max_ns, int parts) {
  constexpr int64_t kS = util::kNanosPerSecond;
  static constexpr int64_t kSteps[] = {
      1 * kS,         2 * kS,         5 * kS,          10 * kS,         15 * kS,         30 * kS,
      60 * kS,        120 * kS,       300 * kS,        600 * kS,        900 * kS,        1800 * kS,
      3600 * kS,      7200 * kS,      3 * 3600 * kS,   6 * 3600 * kS,   12 * 3600 * kS,  86400 * kS,
      2 * 86400 * kS, 7 * 86400 * kS, 14 * 86400 * kS, 30 * 86400 * kS, 60 * 86400 * kS, 90 * 86400 * kS};
  if (max_ns < static_cast<double>(kS)) return NiceStep(max_ns, parts);
  for (const int64_t step : kSteps) {
    if (static_cast<double>(step) * parts >= max_ns) return static_cast<double>(step);
  }
  return NiceStep(max_ns / (86400.0 * kS), parts) * 86400.0 * kS;
}

std::string Number(double v) {
  if (v >= 1e6 && std::fmod(v, 1e6) == 0) return fmt::format("{:.0f}M", v / 1e6);
  if (v >= 1e4 && std::fmod(v, 1e3) == 0) return fmt::format("{:.0f}k", v / 1e3);
  if (v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2g}", v);
}

// What a chart plots from a sample (nullopt: the run has no such value, e.g. a resource it lacks).
using Value = std::function<std::optional<double>(const sim::TimeSeries&, const sim::TimeSample&)>;

struct Frame {
  double t_max = 1;  // ns
  double X(int64_t ns) const { return kLeft + static_cast<double>(ns) / t_max * kPlotWidth; }
};

std::string Point(double x, double y) { return fmt::format("{:.1f},{:.1f} ", x, y); }

// The run's step line through its samples, at most kMaxPoints points (per pixel: first, lowest,
// highest and last value).
Line MakeLine(size_t run, const sim::TimeSeries& series, const Value& value, const Frame& frame, double y_max) {
  Line line;
  line.run = run;
  auto y = [&](double v) { return kTop + (1 - v / y_max) * kPlotHeight; };
  const bool thin = series.samples.size() > kMaxPoints;
  std::optional<double> previous;
  size_t i = 0;
  while (i < series.samples.size()) {
    const double x = frame.X(series.samples[i].at_ns);
    // The samples in this pixel (one unless thinning).
    double first = 0, low = 0, high = 0, last = 0;
    bool any = false;
    size_t j = i;
    for (; j < series.samples.size(); ++j) {
      if (j > i && (!thin || std::floor(frame.X(series.samples[j].at_ns)) != std::floor(x))) break;
      const auto v = value(series, series.samples[j]);
      if (!v) continue;
      if (!any) first = low = high = *v;
      low = std::min(low, *v);
      high = std::max(high, *v);
      last = *v;
      any = true;
    }
    i = j;
    if (!any) continue;
    if (previous) line.points += Point(x, y(*previous));
    line.points += Point(x, y(first));
    if (low != first) line.points += Point(x, y(low));
    if (high != low) line.points += Point(x, y(high));
    if (last != high) line.points += Point(x, y(last));
    previous = last;
  }
  line.last = previous.value_or(0);
  return line;
}

void AddMarks(Chart& chart, size_t run, const sim::TimeSeries& series, const Frame& frame) {
  std::set<std::pair<std::string, int>> seen;  // one mark per kind and pixel
  auto mark = [&](std::string_view kind, int64_t ns) {
    const double x = frame.X(ns);
    if (!seen.emplace(std::string(kind), static_cast<int>(x)).second) return;
    chart.marks.push_back({run, std::string(kind), x});
  };
  for (const int64_t ns : series.eviction_ns) mark("eviction", ns);
  for (const int64_t ns : series.move_ns) mark("move", ns);
  for (size_t i = 1; i < series.samples.size(); ++i) {
    if (series.samples[i].optimizer_batches > series.samples[i - 1].optimizer_batches) {
      mark("batch", series.samples[i].at_ns);
    }
  }
}

}  // namespace

std::string DurationLabel(int64_t ns) {
  const int64_t s = ns / util::kNanosPerSecond;
  if (s == 0 && ns > 0) return fmt::format("{}ms", ns / 1'000'000);
  if (s < 120) return fmt::format("{}s", s);
  if (s < 2 * 3600) return s % 60 ? fmt::format("{}m{}s", s / 60, s % 60) : fmt::format("{}m", s / 60);
  if (s < 2 * 86400)
    return s % 3600 / 60 ? fmt::format("{}h{}m", s / 3600, s % 3600 / 60) : fmt::format("{}h", s / 3600);
  return s % 86400 / 3600 ? fmt::format("{}d {}h", s / 86400, s % 86400 / 3600) : fmt::format("{}d", s / 86400);
}

std::vector<Chart> BuildCharts(std::span<const Run> runs) {
  Frame frame;
  bool spans = false;
  std::vector<std::string> resources;  // over every run, in first-seen order
  bool evictions = false, batches = false, fragmentation = false;
  for (const Run& run : runs) {
    if (!run.result->timeseries || run.result->timeseries->samples.empty()) continue;
    const sim::TimeSeries& ts = *run.result->timeseries;
    frame.t_max = std::max(frame.t_max, static_cast<double>(ts.samples.back().at_ns));
    spans = spans || ts.samples.back().at_ns > ts.samples.front().at_ns;
    for (const std::string& r : ts.resources) {
      if (std::find(resources.begin(), resources.end(), r) == resources.end()) resources.push_back(r);
    }
    evictions = evictions || !ts.eviction_ns.empty();
    batches = batches || ts.samples.back().optimizer_batches > 0;
    fragmentation = fragmentation || ts.samples.back().device_fragmentation >= 0;
  }
  if (!spans) return {};

  struct Spec {
    std::string key, title;
    Value value;
    bool percent = false;
  };
  std::vector<Spec> specs;
  for (const std::string& r : resources) {
    specs.push_back({"alloc-" + r, r + " requested / allocatable (%)",
                     [r](const sim::TimeSeries& ts, const sim::TimeSample& s) -> std::optional<double> {
                       auto it = std::find(ts.resources.begin(), ts.resources.end(), r);
                       const size_t c = it - ts.resources.begin();
                       if (it == ts.resources.end() || c >= s.allocatable.size() || s.allocatable[c] == 0) {
                         return std::nullopt;
                       }
                       return 100.0 * static_cast<double>(s.requested[c]) / static_cast<double>(s.allocatable[c]);
                     },
                     true});
  }
  auto count = [](int64_t sim::TimeSample::*field) {
    return [field](const sim::TimeSeries&, const sim::TimeSample& s) -> std::optional<double> {
      return static_cast<double>(s.*field);
    };
  };
  if (fragmentation) {
    specs.push_back({"fragmentation", "device fragmentation (%, FGD's measure)",
                     [](const sim::TimeSeries&, const sim::TimeSample& s) -> std::optional<double> {
                       if (s.device_fragmentation < 0) return std::nullopt;
                       return 100 * s.device_fragmentation;
                     },
                     false});  // scaled to its values: a few percent would be a flat line on 0-100
  }
  specs.push_back({"running", "pods running", count(&sim::TimeSample::pods_running)});
  specs.push_back(
      {"pending", "pods pending", [](const sim::TimeSeries&, const sim::TimeSample& s) -> std::optional<double> {
         return static_cast<double>(s.Pending());
       }});
  specs.push_back({"nodes", "nodes used", count(&sim::TimeSample::nodes_used)});
  if (evictions)
    specs.push_back({"evictions", "evictions so far (moves included)", count(&sim::TimeSample::evictions)});
  if (batches) specs.push_back({"batches", "optimizer batches so far", count(&sim::TimeSample::optimizer_batches)});

  std::vector<Chart> charts;
  for (const Spec& spec : specs) {
    double max = spec.percent ? 100 : 1;
    for (const Run& run : runs) {
      if (!run.result->timeseries) continue;
      for (const sim::TimeSample& s : run.result->timeseries->samples) {
        if (auto v = spec.value(*run.result->timeseries, s)) max = std::max(max, *v);
      }
    }
    const double step = NiceStep(max, 4);
    const double y_max = std::ceil(max / step) * step;
    Chart& chart = charts.emplace_back();
    chart.key = spec.key;
    chart.title = spec.title;
    for (double v = 0; v <= y_max + step / 2; v += step) {
      chart.y_ticks.push_back({kTop + (1 - v / y_max) * kPlotHeight, Number(v)});
    }
    const double t_step = TimeStep(frame.t_max, 6);
    for (double t = 0; t <= frame.t_max + t_step / 100; t += t_step) {
      chart.x_ticks.push_back({frame.X(static_cast<int64_t>(t)), DurationLabel(static_cast<int64_t>(t))});
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      if (!runs[r].result->timeseries) continue;
      const sim::TimeSeries& ts = *runs[r].result->timeseries;
      chart.lines.push_back(MakeLine(r, ts, spec.value, frame, y_max));
      AddMarks(chart, r, ts, frame);
    }
  }
  return charts;
}

namespace {

constexpr std::string_view kRunColours[] = {"#1f6fb4", "#e07b00", "#2a9d3c", "#9b3bb0"};

std::string Fixed1(double v) { return fmt::format("{:.1f}", v); }

void WriteChart(HtmlWriter& w, const Chart& c, std::span<const Run> runs) {
  w.Open("figure", {{"class", "tfig"}});
  w.Element("figcaption", c.title);
  w.Open("svg", {{"class", "tchart"},
                 {"data-chart", c.key},
                 {"role", "img"},
                 {"aria-label", c.title},
                 {"viewBox", fmt::format("0 0 {} {}", kWidth, kHeight)},
                 {"width", fmt::format("{}", kWidth)},
                 {"height", fmt::format("{}", kHeight)}});
  const double bottom = kHeight - kBottom;
  for (const Tick& t : c.y_ticks) {
    w.SelfClosing("line", {{"x1", Fixed1(kLeft)},
                           {"x2", Fixed1(kWidth - kRight)},
                           {"y1", Fixed1(t.at)},
                           {"y2", Fixed1(t.at)},
                           {"class", "grid"}});
    w.Element("text", {{"x", Fixed1(kLeft - 4)}, {"y", Fixed1(t.at + 4)}, {"class", "yl"}}, t.label);
  }
  for (const Tick& t : c.x_ticks) {
    w.SelfClosing("line", {{"x1", Fixed1(t.at)},
                           {"x2", Fixed1(t.at)},
                           {"y1", Fixed1(bottom)},
                           {"y2", Fixed1(bottom + 4)},
                           {"class", "axis"}});
    w.Element("text", {{"x", Fixed1(t.at)}, {"y", Fixed1(bottom + 26)}, {"class", "xl"}}, t.label);
  }
  for (const Mark& m : c.marks) {
    const double y0 = bottom + 4 + 4 * static_cast<double>(m.run % 2);
    w.SelfClosing("line", {{"x1", Fixed1(m.x)},
                           {"x2", Fixed1(m.x)},
                           {"y1", Fixed1(y0)},
                           {"y2", Fixed1(y0 + 6)},
                           {"class", "mark " + m.kind},
                           {"stroke", kRunColours[m.run % std::size(kRunColours)]},
                           {"data-run", m.run},
                           {"data-kind", m.kind}});
  }
  for (const Line& l : c.lines) {
    w.Open("polyline", {{"points", l.points},
                        {"fill", "none"},
                        {"stroke", kRunColours[l.run % std::size(kRunColours)]},
                        {"stroke-width", "1.5"},
                        {"data-run", l.run},
                        {"data-last", Number(std::round(l.last * 100) / 100)}});
    w.Element("title", fmt::format("{}: {} at the end", runs[l.run].name, Number(std::round(l.last * 100) / 100)));
    w.Close();
  }
  w.SelfClosing("rect", {{"x", Fixed1(kLeft)},
                         {"y", Fixed1(kTop)},
                         {"width", Fixed1(kPlotWidth)},
                         {"height", Fixed1(kPlotHeight)},
                         {"class", "frame"}});
  w.Close();  // svg
  w.Close();  // figure
  w.Newline();
}

}  // namespace

void WriteCharts(HtmlWriter& w, std::span<const Run> runs, const std::vector<Chart>& charts) {
  if (charts.empty()) return;
  w.Open("section", {{"id", "timeline"}});
  w.Element("h2", "Over time");
  w.Open("p", {{"class", "legend"}});
  for (size_t r = 0; r < runs.size(); ++r) {
    if (!runs[r].result->timeseries) continue;
    w.Open("span");
    w.Element("i", {{"class", "sw"}, {"style", fmt::format("background:{}", kRunColours[r % std::size(kRunColours)])}},
              "");
    w.Text(runs[r].name);
    w.Close();
  }
  w.Raw("<span>marks under the axis: <b>|</b> eviction, <b>¦</b> move, <b>:</b> optimizer batch</span>");
  w.Close();
  w.Open("div", {{"class", "tgrid"}});
  w.Newline();
  for (const Chart& c : charts) WriteChart(w, c, runs);
  w.Close();
  w.Close();
  w.Newline();
}

}  // namespace kubesched::report::charts
