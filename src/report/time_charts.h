#pragma once
// The report's charts of the runs over time (sim/timeseries.h): allocation per resource, device
// fragmentation (with DRA devices), pods running, pods pending, nodes used, and evictions and the optimizer's batches
// when there were any; one line per run (`--compare`), evictions, moves and batches marked on the time axis. Inline
// SVG, drawn only when some run spans more than one time point.
//
// DOM contract (the end-to-end test reads it): `#timeline` holds one `svg.tchart[data-chart]`
// per chart, with a `polyline[data-run]` per run (its `data-last` the run's last value) and
// `line.mark[data-run][data-kind]` per marked event (eviction, move, batch).

#include <span>
#include <string>
#include <vector>

#include "report/html_writer.h"
#include "report/report.h"

namespace kubesched::report::charts {

inline constexpr double kWidth = 640, kHeight = 170;
inline constexpr double kLeft = 52, kRight = 12, kTop = 10, kBottom = 34;
//! At most this many points per line: past it, each horizontal pixel keeps its lowest and highest
//! value (peaks survive).
inline constexpr size_t kMaxPoints = 1400;

struct Line {
  size_t run = 0;
  std::string points;  //!< SVG polyline points, as a step line (a value holds until the next sample)
  double last = 0;     //!< the run's last value, in the chart's unit
};

struct Mark {
  size_t run = 0;
  std::string kind;  //!< eviction, move or batch
  double x = 0;
};

struct Tick {
  double at = 0;  //!< in SVG units
  std::string label;
};

struct Chart {
  std::string key;    //!< data-chart: alloc-<resource>, running, pending, nodes, evictions, batches
  std::string title;  //!< "cpu requested / allocatable (%)"
  std::vector<Line> lines;
  std::vector<Mark> marks;
  std::vector<Tick> x_ticks, y_ticks;
};

//! The charts of the runs that recorded a time series; empty when none spans more than one time
//! point.
std::vector<Chart> BuildCharts(std::span<const Run> runs);
//! "90s", "15m", "2h30m", "3d 4h": a tick label for `ns` of virtual time.
std::string DurationLabel(int64_t ns);

//! The `#timeline` section (nothing when `charts` is empty).
void WriteCharts(HtmlWriter& w, std::span<const Run> runs, const std::vector<Chart>& charts);

}  // namespace kubesched::report::charts
