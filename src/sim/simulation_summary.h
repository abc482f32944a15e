#pragma once
// What a simulation's outcome adds up to, for every printer of a SimulationResult (the text and
// JSON output of `simulate`, the HTML report): each pod's status as kubectl shows it, the
// FailedScheduling message, and the summary's counts.

#include <cstddef>
#include <set>
#include <string>

#include "api/types.h"
#include "sim/simulation.h"

namespace kubesched::sim {

//! Whether the pod has finished (phase Succeeded or Failed): it holds no resources.
bool IsTerminal(const api::Pod& pod);
//! The FailedScheduling message recorded on a pending pod, or "" when there is none.
std::string SchedulingMessage(const api::Pod& pod);
//! Why a pod with scheduling gates waits (the gates, in order).
std::string GatedMessage(const api::Pod& pod);
//! Why a PreEnqueue plugin holds the pending pod back (SimulationResult::held_messages), or "".
std::string HeldMessage(const api::Pod& pod, const SimulationResult& result);
//! Why an unbound pod is left alone because it names a scheduler none of `profiles` is:
//! `schedulerName "x" is not a profile of this scheduler`; "" when a profile has its name.
std::string OtherSchedulerMessage(const api::Pod& pod, const std::vector<std::string>& profiles);
//! The pod's STATUS as kubectl shows it: Running, Pending, SchedulingGated, Succeeded, Failed,
//! Terminating.
std::string PodStatus(const api::Pod& pod);

struct SimulationSummary {
  size_t scheduled = 0;        //!< bound during this run
  size_t already_running = 0;  //!< bound in the input
  size_t pending = 0;
  size_t gated = 0;
  size_t finished = 0;  //!< Succeeded or Failed
  size_t terminating = 0;
  size_t evictions = 0;  //!< deleted by preemption
  size_t moves = 0;      //!< deleted by preemption for a move to another node (Eviction.moved_to)
  std::set<std::string> used_nodes;
};

SimulationSummary Summarize(const SimulationResult& result);

}  // namespace kubesched::sim
