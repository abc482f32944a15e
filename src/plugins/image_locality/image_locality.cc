#include "plugins/image_locality/image_locality.h"

#include <cstring>

namespace kubesched::plugins::image_locality {
namespace {

// Calls f with the normalized image name (framework::NormalizedImageName) without allocating in
// the common case: a name with a tag or digest is used as is, and ":latest" is appended in a
// stack buffer.
template <typename F>
auto WithNormalizedName(std::string_view image, F&& f) {
  auto slash = image.rfind('/');
  auto colon = image.rfind(':');
  bool has_tag = colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  if (has_tag || image.find('@') != std::string_view::npos) return f(image);
  constexpr std::string_view kSuffix = ":latest";
  char buf[256];
  if (image.size() + kSuffix.size() <= sizeof(buf)) {
    std::memcpy(buf, image.data(), image.size());
    std::memcpy(buf + image.size(), kSuffix.data(), kSuffix.size());
    return f(std::string_view(buf, image.size() + kSuffix.size()));
  }
  std::string name = framework::NormalizedImageName(image);
  return f(std::string_view(name));
}

// An image's size scaled by how widely it has spread, mitigating the "node heating problem"
// (pods piling onto the few nodes that hold their image).
int64_t ScaledImageScore(const framework::ImageStateSummary& state, size_t total_nodes) {
  double spread = static_cast<double>(state.num_nodes) / static_cast<double>(total_nodes);
  return static_cast<int64_t>(static_cast<double>(state.size) * spread);
}

int64_t SumImageScores(const framework::NodeInfo& node_info, const std::vector<api::Container>& containers,
                       size_t total_nodes) {
  int64_t sum = 0;
  for (const auto& c : containers) {
    sum += WithNormalizedName(c.image, [&](std::string_view name) -> int64_t {
      const framework::ImageStateSummary* state = node_info.FindImage(name);
      return state ? ScaledImageScore(*state, total_nodes) : 0;
    });
  }
  return sum;
}

}  // namespace

int64_t CalculatePriority(int64_t sum_scores, int num_containers) {
  int64_t max_threshold = kMaxContainerThreshold * num_containers;
  if (sum_scores < kMinThreshold) {
    sum_scores = kMinThreshold;
  } else if (sum_scores > max_threshold) {
    sum_scores = max_threshold;
  }
  // A pod without containers has max_threshold 0 and sum clamped to the minimum: score 0.
  if (max_threshold <= kMinThreshold) return framework::kMinNodeScore;
  return framework::kMaxNodeScore * (sum_scores - kMinThreshold) / (max_threshold - kMinThreshold);
}

std::pair<int64_t, framework::Status> ImageLocality::Score(const framework::CycleState& state,
                                                           const framework::PodInfo& pod_info,
                                                           const framework::NodeInfo& node_info) {
  const api::PodSpec& spec = pod_info.pod().spec;
  const int num_containers = static_cast<int>(spec.init_containers.size() + spec.containers.size());
  // A node without images scores as if none of the pod's images were present, without
  // normalizing image names.
  if (node_info.image_states().empty()) return {CalculatePriority(0, num_containers), framework::Status()};
  size_t total_nodes = handle_.SnapshotSharedLister().NumNodes();
  if (total_nodes == 0) return {0, framework::Status()};
  int64_t sum = SumImageScores(node_info, spec.init_containers, total_nodes) +
                SumImageScores(node_info, spec.containers, total_nodes);
  return {CalculatePriority(sum, num_containers), framework::Status()};
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  return std::make_unique<ImageLocality>(handle);
}

}  // namespace kubesched::plugins::image_locality
