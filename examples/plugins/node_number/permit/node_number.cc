// NodeNumber, stage 3 (seed 001, "Permit 拡張点で動作するプラグインを開発してみよう"): stage 2's
// scoring, plus a Permit that delays binding by as many seconds as the chosen node's trailing
// digit (node2: two seconds). Permit returns Wait; the seed then allows the pod from a timer
// (time.AfterFunc). Here the timer is the scheduler's clock: the plugin is also a TimedPlugin, so
// the scheduler calls Tick when the earliest delay is up (on the virtual clock of `simulate` as
// on the real one), and Tick allows the waiting pods that are due through the Handle. The Wait's
// own timeout, a little longer than the delay, rejects a pod that was never allowed.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sdk/plugin.h>

namespace {

using namespace kubesched;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

std::optional<int> LastDigit(std::string_view name) {
  if (name.empty() || name.back() < '0' || name.back() > '9') return std::nullopt;
  return name.back() - '0';
}

struct PreScoreState final : framework::StateData {
  int pod_suffix_number = 0;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

const framework::StateKey kPreScoreStateKey("PreScoreNodeNumber");

class NodeNumber final : public framework::PreScorePlugin,
                         public framework::ScorePlugin,
                         public framework::ScoreExtensions,
                         public framework::PermitPlugin,
                         public framework::TimedPlugin {
 public:
  static constexpr std::string_view kName = "NodeNumber";

  explicit NodeNumber(framework::Handle& handle) : handle_(handle) {}

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

  // Waits as many seconds as the node's trailing digit; node0 (or no digit) binds at once.
  std::pair<framework::Status, std::chrono::nanoseconds> Permit(framework::CycleState& /*state*/,
                                                                const framework::PodInfo& pod,
                                                                const std::string& node_name) override {
    const std::optional<int> node_number = LastDigit(node_name);
    if (!node_number || *node_number == 0) return {framework::Status::Success(), std::chrono::nanoseconds(0)};
    const int64_t due = handle_.clock().NowNs() + *node_number * kNanosPerSecond;
    {
      std::lock_guard lock(mu_);
      due_.push_back({std::string(pod.pod().metadata.uid), due});
    }
    KS_LOG_V(2).InfoS("NodeNumber delays binding", "pod", kubesched::log::KObj(pod.pod()), "node", node_name, "seconds",
                      *node_number);
    // Rejected by the framework if nothing allows it by then.
    return {framework::Status::Wait(), std::chrono::seconds(*node_number + 10)};
  }

  std::optional<int64_t> NextTickNs() const override {
    std::lock_guard lock(mu_);
    std::optional<int64_t> next;
    for (const auto& d : due_) {
      if (!next || d.at_ns < *next) next = d.at_ns;
    }
    return next;
  }

  // Allows every waiting pod whose delay is up.
  void Tick(const std::vector<framework::PodInfoPtr>& /*held*/) override {
    const int64_t now = handle_.clock().NowNs();
    std::vector<std::string> ready;
    {
      std::lock_guard lock(mu_);
      auto it = std::partition(due_.begin(), due_.end(), [&](const Due& d) { return d.at_ns > now; });
      for (auto r = it; r != due_.end(); ++r) ready.push_back(std::move(r->uid));
      due_.erase(it, due_.end());
    }
    for (const std::string& uid : ready) {
      if (auto waiting = handle_.GetWaitingPod(uid)) {
        KS_LOG_V(2).InfoS("NodeNumber allows binding", "pod", kubesched::log::KObj(waiting->pod()));
        waiting->Allow(kName);
      }
    }
  }

 private:
  struct Due {
    std::string uid;
    int64_t at_ns;
  };

  framework::Handle& handle_;
  mutable std::mutex mu_;
  std::vector<Due> due_;
};

}  // namespace

KUBESCHED_PLUGIN_LIBRARY(registry) {
  auto registered = sdk::RegisterPlugin(registry, std::string(NodeNumber::kName),
                                        [](framework::Handle& handle) { return std::make_unique<NodeNumber>(handle); });
  if (!registered) throw std::runtime_error(registered.error());
}
