// NodeNumber, stage 2 (seed 001, "PreScore 拡張点で動作するプラグインを開発してみよう"): the pod's
// trailing digit is read once per scheduling cycle, at PreScore, and kept in the CycleState for
// Score, which runs once per node (concurrently). A pod whose name has no trailing digit makes
// PreScore return Skip, so Score does not run for it at all (the seed's Score failed on the missing
// state instead).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <sdk/plugin.h>

namespace {

using namespace kubesched;

std::optional<int> LastDigit(std::string_view name) {
  if (name.empty() || name.back() < '0' || name.back() > '9') return std::nullopt;
  return name.back() - '0';
}

// What PreScore computed, for Score (the seed's preScoreState).
struct PreScoreState final : framework::StateData {
  int pod_suffix_number = 0;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

// A key per plugin and piece of state, defined at namespace scope (its slot is fixed at load).
const framework::StateKey kPreScoreStateKey("PreScoreNodeNumber");

class NodeNumber final : public framework::PreScorePlugin,
                         public framework::ScorePlugin,
                         public framework::ScoreExtensions {
 public:
  static constexpr std::string_view kName = "NodeNumber";

  std::string_view Name() const override { return kName; }

  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> /*nodes*/) override {
    const std::optional<int> pod_number = LastDigit(pod.pod().metadata.name);
    if (!pod_number) return framework::Status::Skip();
    auto data = std::make_unique<PreScoreState>();
    data->pod_suffix_number = *pod_number;
    state.Write(kPreScoreStateKey, std::move(data));
    return framework::Status::Success();
  }

  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                              const framework::NodeInfo& node) override {
    const auto* data = state.Get<PreScoreState>(kPreScoreStateKey);
    if (data == nullptr) return {0, framework::Status::Error("NodeNumber: no PreScore state for this cycle")};
    const std::optional<int> node_number = LastDigit(node.name());
    if (!node_number) return {0, framework::Status::Success()};
    return {data->pod_suffix_number == *node_number ? 10 : 0, framework::Status::Success()};
  }

  framework::ScoreExtensions* GetScoreExtensions() override { return this; }

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
