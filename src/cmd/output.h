#pragma once
// Rendering a simulation's outcome: a kubectl-like table, a wide table, or JSON.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/simulation.h"

namespace kubesched::cmd {

enum class OutputFormat { kTable, kWide, kJson };

//! Parses "table", "wide" or "json".
std::optional<OutputFormat> ParseOutputFormat(const std::string& text);

//! The FailedScheduling message recorded on a pending pod, or "" when there is none.
std::string SchedulingMessage(const api::Pod& pod);
//! Why a pod with scheduling gates waits (the gates, in order).
std::string GatedMessage(const api::Pod& pod);
//! The pod's STATUS as kubectl shows it: Running, Pending, SchedulingGated, Succeeded, Failed,
//! Terminating.
std::string PodStatus(const api::Pod& pod);
//! The explanation as one JSON object (embedded in `-o json` output).
nlohmann::ordered_json ExplanationJson(const scheduler::AttemptExplanation& explanation);

void PrintSimulation(const scheduler::SimulationResult& result, OutputFormat format, std::ostream& out);
void PrintExplanation(const scheduler::AttemptExplanation& explanation, std::ostream& out);

}  // namespace kubesched::cmd
