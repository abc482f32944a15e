#include "plugins/queue_sort/queue_sort.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::queue_sort {
namespace {

using testing::MakePod;

framework::QueuedPodInfo Queued(int32_t priority, int64_t timestamp_ns) {
  framework::QueuedPodInfo q;
  q.pod_info = MakePod().Priority(priority).Info();
  q.timestamp_ns = timestamp_ns;
  return q;
}

// Mirrors upstream's queuesort TestLess.
TEST(PrioritySortTest, Less) {
  struct Case {
    std::string name;
    framework::QueuedPodInfo a;
    framework::QueuedPodInfo b;
    bool want;
  };
  const int64_t t = 1'000'000'000;
  const std::vector<Case> cases = {
      {"p1.priority less than p2.priority", Queued(10, t), Queued(100, t), false},
      {"p1.priority greater than p2.priority", Queued(100, t), Queued(10, t), true},
      {"equal priority. p1 is added to schedulingQ earlier than p2", Queued(100, t), Queued(100, t + 1), true},
      {"equal priority. p2 is added to schedulingQ earlier than p1", Queued(100, t + 1), Queued(100, t), false},
      {"equal priority and timestamp is not less", Queued(100, t), Queued(100, t), false},
  };
  testing::FakeHandle handle;
  auto plugin = New({}, handle);
  ASSERT_TRUE(plugin.has_value());
  auto* sorter = dynamic_cast<framework::QueueSortPlugin*>(plugin->get());
  ASSERT_NE(sorter, nullptr);
  EXPECT_EQ(sorter->Name(), "PrioritySort");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(sorter->Less(c.a, c.b), c.want);
  }
}

TEST(PrioritySortTest, UnsetPriorityCountsAsZero) {
  PrioritySort sorter;
  framework::QueuedPodInfo no_priority;
  no_priority.pod_info = MakePod().Info();
  no_priority.timestamp_ns = 5;
  EXPECT_TRUE(sorter.Less(Queued(1, 10), no_priority));
  EXPECT_FALSE(sorter.Less(Queued(-1, 0), no_priority));
}

}  // namespace
}  // namespace kubesched::plugins::queue_sort
