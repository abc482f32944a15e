#pragma once
// Rendering a simulation's outcome: a kubectl-like table, a wide table, or JSON.

#include <ostream>
#include <string>

#include "scheduler/simulation.h"

namespace kubesched::cmd {

enum class OutputFormat { kTable, kWide, kJson };

//! Parses "table", "wide" or "json".
std::optional<OutputFormat> ParseOutputFormat(const std::string& text);

//! The FailedScheduling message recorded on a pending pod, or "" when there is none.
std::string SchedulingMessage(const api::Pod& pod);

void PrintSimulation(const scheduler::SimulationResult& result, OutputFormat format, std::ostream& out);
void PrintExplanation(const scheduler::AttemptExplanation& explanation, std::ostream& out);

}  // namespace kubesched::cmd
