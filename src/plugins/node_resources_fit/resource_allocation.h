#pragma once
// Resource-allocation scoring shared by NodeResourcesFit (LeastAllocated, MostAllocated,
// RequestedToCapacityRatio) and NodeResourcesBalancedAllocation, as upstream's
// resourceAllocationScorer: for each configured resource, the node's allocatable and its
// requested amount with the incoming pod added, fed to a strategy's scoring function.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/status.h"
#include "plugins/node_resources_fit/args.h"

namespace kubesched::plugins::node_resources_fit {

//! Scores one node from, per configured resource (same order), the requested amount (node's plus
//! the pod's) and the node's allocatable. Resources to skip have allocatable 0. Returns a score in
//! [0, 100].
using ResourceScorerFn =
    std::function<int64_t(std::span<const int64_t> requested, std::span<const int64_t> allocatable)>;

class ResourceAllocationScorer {
 public:
  //! `use_requested` selects the node's and the pod's plain requests for cpu and memory
  //! (BalancedAllocation); otherwise the non-zero requests are used, where containers without a
  //! cpu or memory request count 100m / 200Mi (the Fit strategies).
  ResourceAllocationScorer(std::vector<ResourceSpec> resources, bool use_requested, ResourceScorerFn scorer);

  //! The built-in scoring functions, called directly rather than through a std::function (this
  //! runs for every node of every cycle).
  enum class Strategy : uint8_t { kLeastAllocated, kMostAllocated, kBalanced };
  ResourceAllocationScorer(std::vector<ResourceSpec> resources, bool use_requested, Strategy strategy);

  const std::vector<ResourceSpec>& resources() const { return resources_; }

  //! The pod's request for each configured resource, in order (computed once per cycle).
  std::vector<int64_t> PodRequests(const framework::PodInfo& pod) const;

  //! Whether every configured resource's request is zero.
  static bool IsBestEffort(std::span<const int64_t> pod_requests);

  //! Scores `node` for a pod whose PodRequests are `pod_requests`. Error when no resource is
  //! configured. Allocation-free for up to 16 resources.
  std::pair<int64_t, framework::Status> Score(const framework::NodeInfo& node,
                                              std::span<const int64_t> pod_requests) const;

 private:
  enum class Kind : uint8_t { kCpu, kMemory, kEphemeralStorage, kScalar, kOther };

  std::vector<ResourceSpec> resources_;
  std::vector<Kind> kinds_;
  std::vector<int64_t> weights_;  // by resource
  bool use_requested_;
  std::optional<Strategy> strategy_;  // when unset, scorer_
  ResourceScorerFn scorer_;
};

//! (capacity - requested) * 100 / capacity; 0 when requested exceeds capacity or capacity is 0.
int64_t LeastRequestedScore(int64_t requested, int64_t capacity);
//! requested * 100 / capacity with requested capped at capacity; 0 when capacity is 0.
int64_t MostRequestedScore(int64_t requested, int64_t capacity);

//! Weighted mean of LeastRequestedScore over resources with allocatable > 0 (integer division).
ResourceScorerFn LeastAllocatedScorer(std::vector<ResourceSpec> resources);
//! Weighted mean of MostRequestedScore over resources with allocatable > 0 (integer division).
ResourceScorerFn MostAllocatedScorer(std::vector<ResourceSpec> resources);
//! RequestedToCapacityRatio: each resource's utilization percentage (100 when over capacity)
//! mapped through the shape (scores scaled ×10); resources scoring 0 are left out of the weighted
//! mean, which is rounded.
ResourceScorerFn RequestedToCapacityRatioScorer(std::vector<ResourceSpec> resources,
                                                const std::vector<UtilizationShapePoint>& shape);
//! BalancedAllocation: (1 - std) * 100 over the requested/allocatable fractions (capped at 1) of
//! the resources with allocatable > 0, truncated.
int64_t BalancedResourceScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable);

//! Upstream's helper.BuildBrokenLinearFunction: piecewise linear through the points (integer
//! arithmetic), constant before the first and after the last point. Points are sorted by
//! utilization (validated).
class BrokenLinearFunction {
 public:
  struct Point {
    int64_t utilization = 0;
    int64_t score = 0;
  };
  explicit BrokenLinearFunction(std::vector<Point> points) : points_(std::move(points)) {}
  int64_t operator()(int64_t p) const;

 private:
  std::vector<Point> points_;
};

}  // namespace kubesched::plugins::node_resources_fit
