#include "plugins/node_resources_fit/resource_allocation.h"

#include <array>
#include <cmath>
#include <memory>

#include "framework/interface.h"
#include "framework/resource.h"

namespace kubesched::plugins::node_resources_fit {
namespace {

// Per-node buffers live on the stack up to this many resources; more spill to the heap.
constexpr size_t kInlineResources = 16;

constexpr int64_t kMaxUtilization = 100;

// The weighted mean of per_resource over the resources with allocatable > 0 (integer division).
template <typename PerResource>
int64_t WeightedMean(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                     std::span<const int64_t> weights, PerResource per_resource) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += per_resource(requested[i], allocatable[i]) * weights[i];
    weight_sum += weights[i];
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

}  // namespace

ResourceAllocationScorer::ResourceAllocationScorer(std::vector<ResourceSpec> resources, bool use_requested,
                                                   Strategy strategy)
    : ResourceAllocationScorer(std::move(resources), use_requested, ResourceScorerFn()) {
  strategy_ = strategy;
}

ResourceAllocationScorer::ResourceAllocationScorer(std::vector<ResourceSpec> resources, bool use_requested,
                                                   ResourceScorerFn scorer)
    : resources_(std::move(resources)), use_requested_(use_requested), scorer_(std::move(scorer)) {
  kinds_.reserve(resources_.size());
  weights_.reserve(resources_.size());
  for (const auto& r : resources_) {
    weights_.push_back(r.weight);
    if (r.name == api::kResourceCPU) {
      kinds_.push_back(Kind::kCpu);
    } else if (r.name == api::kResourceMemory) {
      kinds_.push_back(Kind::kMemory);
    } else if (r.name == api::kResourceEphemeralStorage) {
      kinds_.push_back(Kind::kEphemeralStorage);
    } else if (framework::IsScalarResourceName(r.name)) {
      kinds_.push_back(Kind::kScalar);
    } else {
      // Not accounted for on nodes (e.g. "pods"): upstream scores it as (0, 0), i.e. skips it.
      kinds_.push_back(Kind::kOther);
    }
  }
}

std::vector<int64_t> ResourceAllocationScorer::PodRequests(const framework::PodInfo& pod) const {
  std::vector<int64_t> out(resources_.size());
  for (size_t i = 0; i < resources_.size(); ++i) {
    switch (kinds_[i]) {
      case Kind::kCpu:
        out[i] = use_requested_ ? pod.requests.milli_cpu : pod.non_zero_milli_cpu;
        break;
      case Kind::kMemory:
        out[i] = use_requested_ ? pod.requests.memory : pod.non_zero_memory;
        break;
      default:
        out[i] = pod.requests.Get(resources_[i].name);
        break;
    }
  }
  return out;
}

bool ResourceAllocationScorer::IsBestEffort(std::span<const int64_t> pod_requests) {
  for (int64_t r : pod_requests) {
    if (r != 0) return false;
  }
  return true;
}

std::pair<int64_t, framework::Status> ResourceAllocationScorer::Score(const framework::NodeInfo& node,
                                                                      std::span<const int64_t> pod_requests) const {
  const size_t n = resources_.size();
  if (n == 0) return {0, framework::Status::Error("resources not found")};
  // Not zero-initialised: every slot is written below (allocatable 0 marks a skipped resource).
  std::array<int64_t, 2 * kInlineResources> inline_buf;
  std::vector<int64_t> heap_buf;
  std::span<int64_t> buf(inline_buf);
  if (n > kInlineResources) {
    heap_buf.assign(2 * n, 0);
    buf = heap_buf;
  }
  std::span<int64_t> requested = buf.subspan(0, n);
  std::span<int64_t> allocatable = buf.subspan(n, n);

  const framework::Resource& alloc = node.allocatable();
  const framework::Resource& used = node.requested();
  for (size_t i = 0; i < n; ++i) {
    const int64_t pod_request = pod_requests[i];
    int64_t a = 0;
    int64_t r = 0;
    switch (kinds_[i]) {
      case Kind::kCpu:
        a = alloc.milli_cpu;
        r = (use_requested_ ? used.milli_cpu : node.non_zero_milli_cpu()) + pod_request;
        break;
      case Kind::kMemory:
        a = alloc.memory;
        r = (use_requested_ ? used.memory : node.non_zero_memory()) + pod_request;
        break;
      case Kind::kEphemeralStorage:
        a = alloc.ephemeral_storage;
        r = used.ephemeral_storage + pod_request;
        break;
      case Kind::kScalar:
        // An extended resource the pod does not request is left out, so that nodes are not
        // ranked by devices the pod will not use.
        if (pod_request == 0) break;
        a = alloc.Scalar(resources_[i].name);
        r = a == 0 ? 0 : used.Scalar(resources_[i].name) + pod_request;
        break;
      case Kind::kOther:
        break;
    }
    allocatable[i] = a;
    requested[i] = a == 0 ? 0 : r;
  }
  if (strategy_) {
    switch (*strategy_) {
      case Strategy::kLeastAllocated:
        return {WeightedMean(requested, allocatable, weights_,
                             [](int64_t r, int64_t c) { return LeastRequestedScore(r, c); }),
                framework::Status()};
      case Strategy::kMostAllocated:
        return {WeightedMean(requested, allocatable, weights_,
                             [](int64_t r, int64_t c) { return MostRequestedScore(r, c); }),
                framework::Status()};
      case Strategy::kBalanced:
        return {BalancedResourceScore(requested, allocatable), framework::Status()};
    }
  }
  return {scorer_(requested, allocatable), framework::Status()};
}

int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * framework::kMaxNodeScore / capacity;
}

int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Pods without requests count default requests, so requested may exceed capacity.
  if (requested > capacity) requested = capacity;
  return requested * framework::kMaxNodeScore / capacity;
}

namespace {

template <typename PerResource>
ResourceScorerFn WeightedMeanScorer(std::vector<ResourceSpec> resources, PerResource per_resource) {
  std::vector<int64_t> weights;
  weights.reserve(resources.size());
  for (const auto& r : resources) weights.push_back(r.weight);
  return [weights = std::move(weights), per_resource](std::span<const int64_t> requested,
                                                      std::span<const int64_t> allocatable) -> int64_t {
    return WeightedMean(requested, allocatable, weights, per_resource);
  };
}

}  // namespace

ResourceScorerFn LeastAllocatedScorer(std::vector<ResourceSpec> resources) {
  return WeightedMeanScorer(std::move(resources), LeastRequestedScore);
}

ResourceScorerFn MostAllocatedScorer(std::vector<ResourceSpec> resources) {
  return WeightedMeanScorer(std::move(resources), MostRequestedScore);
}

ResourceScorerFn RequestedToCapacityRatioScorer(std::vector<ResourceSpec> resources,
                                                const std::vector<UtilizationShapePoint>& shape) {
  std::vector<BrokenLinearFunction::Point> points;
  points.reserve(shape.size());
  for (const auto& p : shape) {
    // Shape scores are on a 0-10 scale; the scheduler's is 0-100.
    points.push_back({p.utilization, p.score * (framework::kMaxNodeScore / kMaxCustomPriorityScore)});
  }
  std::vector<int64_t> weights;
  weights.reserve(resources.size());
  for (const auto& r : resources) weights.push_back(r.weight);
  return [raw = BrokenLinearFunction(std::move(points)), weights = std::move(weights)](
             std::span<const int64_t> requested, std::span<const int64_t> allocatable) -> int64_t {
    int64_t node_score = 0;
    int64_t weight_sum = 0;
    for (size_t i = 0; i < requested.size(); ++i) {
      const int64_t capacity = allocatable[i];
      if (capacity == 0) continue;
      const int64_t req = requested[i];
      const int64_t resource_score = req > capacity ? raw(kMaxUtilization) : raw(req * kMaxUtilization / capacity);
      // Upstream leaves resources scoring 0 out of the mean entirely.
      if (resource_score > 0) {
        node_score += resource_score * weights[i];
        weight_sum += weights[i];
      }
    }
    if (weight_sum == 0) return 0;
    return static_cast<int64_t>(std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
  };
}

int64_t BalancedResourceScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable) {
  const size_t n = requested.size();
  // Not zero-initialised: only the first `count` entries are written and read.
  std::array<double, kInlineResources> inline_buf;
  std::unique_ptr<double[]> heap_buf;
  double* fractions = inline_buf.data();
  if (n > kInlineResources) {
    heap_buf = std::make_unique<double[]>(n);
    fractions = heap_buf.get();
  }
  size_t count = 0;
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (allocatable[i] == 0) continue;
    double fraction = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    if (fraction > 1) fraction = 1;
    total += fraction;
    fractions[count++] = fraction;
  }
  double std_dev = 0;
  // Two resources (the common case): the standard deviation is half their difference.
  if (count == 2) {
    std_dev = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (count > 2) {
    const double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
    std_dev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(framework::kMaxNodeScore));
}

int64_t BrokenLinearFunction::operator()(int64_t p) const {
  const size_t n = points_.size();
  for (size_t i = 0; i < n; ++i) {
    if (p <= points_[i].utilization) {
      if (i == 0) return points_[0].score;
      const Point& a = points_[i - 1];
      const Point& b = points_[i];
      return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
    }
  }
  return n == 0 ? 0 : points_[n - 1].score;
}

}  // namespace kubesched::plugins::node_resources_fit
