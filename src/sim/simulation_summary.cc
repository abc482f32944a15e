#include "sim/simulation_summary.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kubesched::sim {

bool IsTerminal(const api::Pod& pod) {
  return pod.status.phase == api::PodPhase::kSucceeded || pod.status.phase == api::PodPhase::kFailed;
}

std::string SchedulingMessage(const api::Pod& pod) {
  if (!pod.spec.node_name.empty()) return "";
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodScheduled" && c.status == "False") return c.message;
  }
  return "";
}

std::string HeldMessage(const api::Pod& pod, const SimulationResult& result) {
  if (!pod.spec.node_name.empty()) return "";
  auto it = result.held_messages.find(pod.metadata.uid);
  return it == result.held_messages.end() ? "" : it->second;
}

std::string GatedMessage(const api::Pod& pod) {
  return fmt::format("waiting for scheduling gates to be removed: [{}]", fmt::join(pod.spec.scheduling_gates, " "));
}

std::string OtherSchedulerMessage(const api::Pod& pod, const std::vector<std::string>& profiles) {
  if (std::ranges::find(profiles, pod.spec.scheduler_name) != profiles.end()) return "";
  return fmt::format("schedulerName \"{}\" is not a profile of this scheduler", pod.spec.scheduler_name);
}

std::string PodStatus(const api::Pod& pod) {
  if (pod.metadata.deletion_timestamp_ns) return "Terminating";
  if (pod.status.phase == api::PodPhase::kSucceeded) return "Succeeded";
  if (pod.status.phase == api::PodPhase::kFailed) return "Failed";
  if (pod.spec.node_name.empty()) return pod.spec.scheduling_gates.empty() ? "Pending" : "SchedulingGated";
  return pod.status.phase == api::PodPhase::kPending ? "Pending" : "Running";
}

SimulationSummary Summarize(const SimulationResult& result) {
  SimulationSummary s;
  for (const auto& e : result.evictions) ++(e.moved_to.empty() ? s.evictions : s.moves);
  for (const auto& p : result.pods) {
    if (IsTerminal(*p)) {
      ++s.finished;
      continue;
    }
    if (p->metadata.deletion_timestamp_ns) ++s.terminating;
    if (p->spec.node_name.empty()) {
      ++s.pending;
      if (!p->spec.scheduling_gates.empty()) ++s.gated;
      continue;
    }
    s.used_nodes.insert(p->spec.node_name);
    if (result.bound_in_input.contains(p->metadata.uid)) {
      ++s.already_running;
    } else {
      ++s.scheduled;
    }
  }
  return s;
}

}  // namespace kubesched::sim
