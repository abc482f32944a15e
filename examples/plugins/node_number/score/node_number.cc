// NodeNumber, stage 1 (seed 001, "Score 拡張点"): scores a node 10 when the last character of the
// pod's name is a digit equal to the last character of the node's name, else 0; NormalizeScore
// then scales the best score to 100, as every score must lie in [0, 100] after normalizing.
// With nodes node0 ... node9, pod1 lands on node1 and pod9 on node9.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <sdk/plugin.h>

namespace {

using namespace kubesched;

// The digit a name ends with, if it ends with one.
std::optional<int> LastDigit(std::string_view name) {
  if (name.empty() || name.back() < '0' || name.back() > '9') return std::nullopt;
  return name.back() - '0';
}

class NodeNumber final : public framework::ScorePlugin, public framework::ScoreExtensions {
 public:
  static constexpr std::string_view kName = "NodeNumber";

  std::string_view Name() const override { return kName; }

  std::pair<int64_t, framework::Status> Score(const framework::CycleState& /*state*/, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node) override {
    const std::optional<int> pod_number = LastDigit(pod.pod().metadata.name);
    const std::optional<int> node_number = LastDigit(node.name());
    // A name without a trailing digit scores 0, as in the seed.
    if (!pod_number || !node_number) return {0, framework::Status::Success()};
    return {*pod_number == *node_number ? 10 : 0, framework::Status::Success()};
  }

  framework::ScoreExtensions* GetScoreExtensions() override { return this; }

  // The highest score becomes 100, the others in proportion.
  framework::Status NormalizeScore(const framework::CycleState& /*state*/, const framework::PodInfo& /*pod*/,
                                   framework::NodeScoreList& scores) override {
    int64_t highest = 0;
    for (const auto& s : scores) highest = std::max(highest, s.score);
    if (highest == 0) return framework::Status::Success();
    for (auto& s : scores) s.score = s.score * framework::kMaxNodeScore / highest;
    return framework::Status::Success();
  }
};

}  // namespace

KUBESCHED_PLUGIN_LIBRARY(registry) {
  auto registered = sdk::RegisterPlugin(registry, std::string(NodeNumber::kName),
                                        [](framework::Handle& /*handle*/) { return std::make_unique<NodeNumber>(); });
  if (!registered) throw std::runtime_error(registered.error());
}
