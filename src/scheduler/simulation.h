#pragma once
// Runs the scheduler against a simulated cluster on a virtual clock until nothing more can be
// scheduled: activeQ empty, no pod backing off, no binding in progress. Pods left in the
// unschedulable pool stay pending (retrying them changes nothing without a cluster event).

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/manifest.h"
#include "cluster/simulated_cluster.h"
#include "framework/registry.h"
#include "scheduler/scheduler.h"

namespace kubesched::scheduler {

struct SimulationOptions {
  SchedulerOptions scheduler;
  //! Stop after this much virtual time even if pods are still backing off (pods that fail
  //! with errors forever would otherwise retry forever).
  int64_t max_virtual_time_ns = 3600LL * util::kNanosPerSecond;
  //! The order in which the pending pods are created (see cluster/creation_order.h).
  cluster::CreationOrder creation_order = cluster::CreationOrder::kControllers;
};

struct SimulationResult {
  std::vector<std::shared_ptr<const api::Pod>> pods;  // final state, creation order
  std::vector<std::shared_ptr<const api::Node>> nodes;
  std::vector<std::pair<std::shared_ptr<const api::Pod>, std::string>> evictions;
  std::optional<AttemptExplanation> explanation;
  size_t attempts = 0;
  int64_t virtual_time_ns = 0;
  //! Profile names, to tell pods this scheduler is responsible for.
  std::vector<std::string> profiles;
};

std::expected<SimulationResult, std::string> RunSimulation(api::ClusterObjects objects,
                                                           const SimulationOptions& options,
                                                           const framework::Registry& registry);

}  // namespace kubesched::scheduler
