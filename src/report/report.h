#pragma once
// The HTML report of a simulation (`kubesched simulate --report FILE.html`): one self-contained
// page, inline CSS and SVG, a Content-Security-Policy that forbids every network load, and a
// small inline script for interaction only (search, workload highlighting, showing a node of the
// heat map). It is another printer of the same SimulationResult the text and JSON output print:
// it never schedules anything itself.
//
// What it shows, per run (two runs side by side for `--compare`): the summary and the
// configuration that produced it; per node, a bar per resource (cpu, memory, pods, ephemeral
// storage and extended resources when used or offered) with the pods as segments coloured and
// patterned by workload, nodes grouped by zone, empty nodes marked; past `heat_map_threshold`
// nodes a heat map with a search box instead of every node's bars; a node × workload table; the
// pending pods grouped by their FailedScheduling message, with the Filter reasons of their last
// attempts counted (from SimulationResult::failed_attempts, not from the message's text);
// evictions; the explained pod's Filter verdicts and Score results per node.
//
// How it is made: report_model.h computes what the page shows as plain structs (no HTML), and
// the renderer here walks them with html_writer.h's HtmlWriter, which escapes every text and
// attribute value it is given: only our own constant markup and numbers are written as is.
//
// The DOM is part of the contract (the end-to-end test reads it): every node is a
// `.node[data-node][data-run]` element holding its pods as `[data-pod="ns/name"]` (in its pods
// bar); every pending pod is an `li[data-pod]` inside a `.reason[data-reason]` group of
// `#pending-<run>`.

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/simulation.h"

namespace kubesched::report {

//! One configuration's run.
struct Run {
  std::string name;  //!< "default" or the configuration file
  const sim::SimulationResult* result = nullptr;
};

struct ReportOptions {
  //! The manifests simulated (the -f arguments), shown in the header.
  std::vector<std::string> inputs;
  //! Seed of the runs, shown in the header.
  uint64_t seed = 1;
  //! Above this many nodes the nodes are shown as a heat map with a search box; each node's
  //! bars appear when it is picked or found.
  size_t heat_map_threshold = 300;
  //! At most this many workload columns in the node × workload table (the largest); the others
  //! are added up in one column.
  size_t max_workload_columns = 40;
};

//! The report of one run, or of two side by side (`--compare`): a complete HTML document.
std::string RenderReport(std::span<const Run> runs, const ReportOptions& options);

//! `text` with &, <, >, " and ' replaced by character references: safe in element content and
//! in quoted attribute values (html_writer.cc; the writer escapes with it).
std::string EscapeHtml(std::string_view text);

//! What one run achieved against another (B against A), as the report highlights it.
struct Differences {
  int64_t nodes_saved = 0;  //!< nodes A uses minus nodes B uses (positive: B uses fewer)
  int64_t scheduled_gain = 0;
  //! Pods (ns/name) that B placed and A left pending, and the reverse.
  std::vector<std::string> placed_only_by_b;
  std::vector<std::string> placed_only_by_a;
  //! Nodes A uses that B leaves empty, and the reverse.
  std::vector<std::string> nodes_only_a;
  std::vector<std::string> nodes_only_b;
  //! Preemption's deletions (evictions and moves) under A and B.
  size_t evictions_a = 0;
  size_t evictions_b = 0;
  size_t moves_a = 0;
  size_t moves_b = 0;
};

Differences Compare(const sim::SimulationResult& a, const sim::SimulationResult& b);

}  // namespace kubesched::report
