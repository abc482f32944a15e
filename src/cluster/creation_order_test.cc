#include "cluster/creation_order.h"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

namespace kubesched::cluster {
namespace {

std::vector<PendingPodOrigin> Origins(std::initializer_list<std::pair<const char*, int>> groups) {
  std::vector<PendingPodOrigin> out;
  for (const auto& [controller, n] : groups) {
    for (int i = 0; i < n; ++i) out.push_back({controller});
  }
  return out;
}

TEST(SlowStartBatches, DoublesAndKeepsTheRestForTheLastBatch) {
  EXPECT_EQ(SlowStartBatches(0), (std::vector<size_t>{}));
  EXPECT_EQ(SlowStartBatches(1), (std::vector<size_t>{1}));
  EXPECT_EQ(SlowStartBatches(4), (std::vector<size_t>{1, 2, 1}));
  EXPECT_EQ(SlowStartBatches(8), (std::vector<size_t>{1, 2, 4, 1}));
  EXPECT_EQ(SlowStartBatches(30), (std::vector<size_t>{1, 2, 4, 8, 15}));
}

TEST(PodCreationOrder, ManifestOrderIsTheIdentity) {
  std::mt19937_64 rng(1);
  auto origins = Origins({{"", 2}, {"Deployment/default/a", 3}, {"Deployment/default/b", 2}});
  EXPECT_EQ(PodCreationOrder(origins, CreationOrder::kManifest, rng), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(PodCreationOrder, ControllersKeepDirectPodsFirstAndEachControllersBatchesWhole) {
  // a: pods 1..4 (batches [1] [2 3] [4]); direct pods 0 and 5; b: pods 6..13 ([6] [7 8] [9..12] [13]).
  std::vector<PendingPodOrigin> origins = Origins({{"", 1}, {"a", 4}, {"", 1}, {"b", 8}});
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    auto order = PodCreationOrder(origins, CreationOrder::kControllers, rng);
    ASSERT_EQ(order.size(), origins.size());
    EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), origins.size()) << "a permutation";
    EXPECT_EQ(order[0], 0u);
    EXPECT_EQ(order[1], 5u);
    // Each controller's pods appear in their own order, and its batches are contiguous runs.
    std::map<std::string, std::vector<size_t>> seen;
    for (size_t i : order) seen[origins[i].controller].push_back(i);
    EXPECT_EQ(seen["a"], (std::vector<size_t>{1, 2, 3, 4}));
    EXPECT_EQ(seen["b"], (std::vector<size_t>{6, 7, 8, 9, 10, 11, 12, 13}));
    auto position = [&](size_t pod) { return std::find(order.begin(), order.end(), pod) - order.begin(); };
    EXPECT_EQ(position(3), position(2) + 1) << "a's second batch (pods 2, 3) is created together";
    for (size_t pod : {10, 11, 12}) EXPECT_EQ(position(pod), position(pod - 1) + 1) << "b's third batch";
  }
}

TEST(PodCreationOrder, ControllersInterleavingDependsOnTheSeed) {
  auto origins = Origins({{"a", 4}, {"b", 4}, {"c", 4}, {"d", 8}});
  std::set<std::vector<size_t>> orders;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    orders.insert(PodCreationOrder(origins, CreationOrder::kControllers, rng));
  }
  EXPECT_GT(orders.size(), 10u);
  std::mt19937_64 again(7), first(7);
  EXPECT_EQ(PodCreationOrder(origins, CreationOrder::kControllers, again),
            PodCreationOrder(origins, CreationOrder::kControllers, first));
}

}  // namespace
}  // namespace kubesched::cluster
