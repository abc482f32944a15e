#include "framework/extension_points.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace kubesched::framework {
namespace {

class ScoreAndBind final : public ScorePlugin, public BindPlugin, public EnqueueExtensions {
 public:
  std::string_view Name() const override { return "ScoreAndBind"; }
  std::pair<int64_t, Status> Score(const CycleState&, const PodInfo&, const NodeInfo&) override { return {0, {}}; }
  Status Bind(CycleState&, const PodInfo&, const std::string&) override { return {}; }
  std::vector<ClusterEventWithHint> EventsToRegister() const override { return {}; }
};

class Sort final : public QueueSortPlugin {
 public:
  std::string_view Name() const override { return "Sort"; }
  bool Less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
};

TEST(ExtensionPointsTest, FoundOnThePluginObject) {
  EXPECT_EQ(ExtensionPointsOf(ScoreAndBind()), (std::vector<std::string_view>{"Score", "Bind", "EnqueueExtensions"}));
  EXPECT_EQ(ExtensionPointsOf(Sort()), (std::vector<std::string_view>{"QueueSort"}));
}

TEST(ExtensionPointsTest, EveryInterfaceInCycleOrder) {
  std::vector<std::string_view> names;
  for (const auto& kind : ExtensionPointKinds()) names.push_back(kind.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter",
                                                  "PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind",
                                                  "PostBind", "EnqueueExtensions"}));
}

}  // namespace
}  // namespace kubesched::framework
