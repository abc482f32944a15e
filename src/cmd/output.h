#pragma once
// Rendering a simulation's outcome: a kubectl-like table, a wide table, or JSON.

#include <ostream>
#include <string>

#include "framework/args_writer.h"
#include "sim/simulation.h"
#include "sim/simulation_summary.h"

namespace kubesched::cmd {

enum class OutputFormat { kTable, kWide, kJson };

//! Parses "table", "wide" or "json".
std::optional<OutputFormat> ParseOutputFormat(const std::string& text);

// Shared with the HTML report (sim/simulation_summary.h).
using sim::GatedMessage;
using sim::OtherSchedulerMessage;
using sim::PodStatus;
using sim::SchedulingMessage;
//! Writes the explanation as one JSON object (embedded in `-o json` output).
void WriteExplanationJson(const scheduler::AttemptExplanation& explanation, framework::ArgsWriter& w);

//! "optimizer: 1 batch (1 plan), 20 pods, 20 placed (20 by plans), proved optimal, run bound 20
//! (gap 0.00%), 0.02 s (cbc 0.01 s)".
std::string OptimizerLine(const plugins::batch_placement::BatchStats& stats, size_t scheduled);
//! The pods scheduled in the run against the run's bound (BatchStats::run_bound), relative.
double RunGap(const plugins::batch_placement::BatchStats& stats, size_t scheduled);
void PrintSimulation(const sim::SimulationResult& result, OutputFormat format, std::ostream& out);
//! One configuration's run of `simulate --compare`.
struct ComparedRun {
  std::string name;  // the configuration file, or "default"
  sim::SimulationResult result;
};
//! The runs side by side: per node, each run's pods per workload with CPU and memory requested
//! against allocatable (as the Boreas thesis tabulates placements), then a summary per run:
//! scheduled, pending, nodes used, solver time, proved optimal or gap.
void PrintComparison(const std::vector<ComparedRun>& runs, OutputFormat format, std::ostream& out);
void PrintExplanation(const scheduler::AttemptExplanation& explanation, std::ostream& out);

}  // namespace kubesched::cmd
