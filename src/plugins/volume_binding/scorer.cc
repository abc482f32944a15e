#include "plugins/volume_binding/scorer.h"

#include <cmath>

#include "framework/interface.h"
#include "plugins/node_resources_fit/resource_allocation.h"

namespace kubesched::plugins::volume_binding {
namespace {

constexpr int64_t kMaxUtilization = 100;

}  // namespace

VolumeCapacityScorer BuildScorerFunction(const std::vector<UtilizationShapePoint>& shape) {
  std::vector<node_resources_fit::BrokenLinearFunction::Point> points;
  points.reserve(shape.size());
  for (const auto& p : shape) {
    points.push_back({p.utilization, p.score * (framework::kMaxNodeScore / kMaxCustomPriorityScore)});
  }
  return [raw = node_resources_fit::BrokenLinearFunction(std::move(points))](const ClassResourceMap& classes) {
    if (classes.empty()) return int64_t{0};
    int64_t node_score = 0;
    for (const auto& [name, r] : classes) {
      node_score += r.capacity == 0 || r.requested > r.capacity ? raw(kMaxUtilization)
                                                                : raw(r.requested * kMaxUtilization / r.capacity);
    }
    return static_cast<int64_t>(std::round(static_cast<double>(node_score) / static_cast<double>(classes.size())));
  };
}

}  // namespace kubesched::plugins::volume_binding
