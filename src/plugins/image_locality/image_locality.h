#pragma once
// ImageLocality: favours nodes that already hold the pod's container images, as upstream's
// imagelocality plugin. Each present image contributes its size scaled by the fraction of nodes
// holding it (so images present everywhere do not pull every pod to the same nodes); the sum is
// clamped to [23MB, 1000MB x containers] and mapped linearly onto [0, 100].

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::image_locality {

inline constexpr int64_t kMB = 1024 * 1024;
//! Bounds of the image score range: about the 90th percentile of image sizes on Docker Hub.
inline constexpr int64_t kMinThreshold = 23 * kMB;
inline constexpr int64_t kMaxContainerThreshold = 1000 * kMB;

class ImageLocality final : public framework::ScorePlugin {
 public:
  static constexpr std::string_view kName = "ImageLocality";

  explicit ImageLocality(framework::Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }

  //! Score in [0, 100] from the sizes of the pod's images (init containers included) present on
  //! the node, each scaled by numNodesWithImage / totalNodes of the cycle's snapshot.
  bool ScoreIsNodeLocal() const override { return true; }
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;

 private:
  framework::Handle& handle_;
};

//! Maps the summed image score onto [0, 100] (upstream's calculatePriority).
int64_t CalculatePriority(int64_t sum_scores, int num_containers);

//! Factory: ImageLocality takes no args.
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::image_locality
