// DeviceFragmentation: the fragmentation measure (FGD's F_n(M)) on hand-computed nodes, and its
// args. Its placements through the DRA path are tested end to end in tests/e2e/dra_e2e_test.cc.

#include "plugins/device_fragmentation/device_fragmentation.h"

#include <gtest/gtest.h>

#include "testing/args.h"

namespace kubesched::plugins::device_fragmentation {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TaskShape Share(int64_t milli, int64_t cpu = 1000, int64_t memory = kGi) { return {cpu, memory, 1, milli}; }
TaskShape Whole(int32_t n, int64_t cpu = 1000, int64_t memory = kGi) { return {cpu, memory, n, 1000}; }
NodeRoom Room(std::vector<int64_t> free, int64_t cpu = 32000, int64_t memory = 64 * kGi) {
  return {cpu, memory, std::move(free)};
}

TEST(DeviceFragmentationMeasure, AShareStrandsTheDevicesWithLessFreeThanItAsks) {
  Workload w;
  w.Add(Share(500), 1);
  // 300 and 200 free are below 500: stranded for this kind; 800 is not.
  EXPECT_EQ(w.Fragmentation(Room({300, 800, 200})), 500);
  EXPECT_EQ(w.Fragmentation(Room({500, 1000})), 0);
}

TEST(DeviceFragmentationMeasure, AKindTheNodeCannotTakeStrandsAllItsFreeCapacity) {
  Workload w;
  w.Add(Whole(2), 1);
  // One whole device free of the two asked: all 1,300 free is stranded.
  EXPECT_EQ(w.Fragmentation(Room({1000, 300, 0})), 1300);
  // Two whole devices: only the partly used one is stranded.
  EXPECT_EQ(w.Fragmentation(Room({1000, 300, 1000})), 300);
  // The devices fit but the cpu does not.
  EXPECT_EQ(w.Fragmentation(Room({1000, 300, 1000}, /*cpu=*/500)), 2300);
}

TEST(DeviceFragmentationMeasure, KindsAreWeightedByHowOftenTheyArrived) {
  Workload w;
  w.Add(Share(400), 3);
  w.Add(Whole(1), 1);
  w.Add({1000, kGi, 0, 0}, 5);  // no device asked: left out
  EXPECT_EQ(w.total(), 4);
  // free {600, 1000}: shares strand nothing; a whole device strands the 600.
  EXPECT_EQ(w.Fragmentation(Room({600, 1000})), 3 * 0 + 1 * 600);
  // free {200, 1000}: shares strand 200 each.
  EXPECT_EQ(w.Fragmentation(Room({200, 1000})), 3 * 200 + 1 * 200);
  // Shapes of one demand with different cpu: only the one that does not fit strands everything.
  Workload cpu;
  cpu.Add(Share(400, /*cpu=*/1000), 1);
  cpu.Add(Share(400, /*cpu=*/8000), 1);
  EXPECT_EQ(cpu.Fragmentation(Room({600, 200}, /*cpu=*/4000)), 200 + 800);
}

TEST(DeviceFragmentationMeasure, TheSteepestDescentKeepsWholeDevicesWhole) {
  // A 400 share on a device with 600 free, or on an untouched one, with whole-device pods in the
  // workload: the first keeps the untouched device whole (no rise), the second strands 600.
  Workload w;
  w.Add(Share(400), 2);
  w.Add(Whole(1), 1);
  const int64_t same = w.Fragmentation(Room({200, 1000})) - w.Fragmentation(Room({600, 1000}));
  const int64_t other = w.Fragmentation(Room({600, 600})) - w.Fragmentation(Room({600, 1000}));
  EXPECT_LT(same, other);
}

TEST(DeviceFragmentationArgsTest, DecodesValidatesAndEncodes) {
  auto doc = testing::ArgsJson(R"({"capacity": "gpu.example.com/gpuMilli", "workloadWindow": 500})");
  auto args = DecodeArgs(doc.View(), "args");
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->capacity, "gpu.example.com/gpuMilli");
  EXPECT_EQ(args->workload_window, 500);
  EXPECT_EQ(EncodeArgs(*args), R"({"capacity":"gpu.example.com/gpuMilli","workloadWindow":500})");

  // No capacity: every device, weighed whole; the default window.
  auto defaults = DecodeArgs(testing::ArgsJson("{}").View(), "args");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->capacity, "");
  EXPECT_EQ(defaults->workload_window, 10000);
  EXPECT_EQ(EncodeArgs(*defaults), R"({"workloadWindow":10000})");
  auto unqualified = DecodeArgs(testing::ArgsJson(R"({"capacity": "gpu-milli"})").View(), "args");
  ASSERT_FALSE(unqualified.has_value());
  EXPECT_EQ(unqualified.error().errors.at(0),
            "args.capacity: Invalid value: \"gpu-milli\": must be a domain and a C identifier separated by a slash");
  auto window = DecodeArgs(testing::ArgsJson(R"({"capacity": "a.b/c", "workloadWindow": 0})").View(), "args");
  ASSERT_FALSE(window.has_value());
  EXPECT_EQ(window.error().errors.at(0), "args.workloadWindow: Invalid value: 0: not in valid range [1, 1000000]");
  auto unknown = DecodeArgs(testing::ArgsJson(R"({"capacity": "a.b/c", "window": 3})").View(), "args");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_TRUE(unknown.error().decoding);
}

}  // namespace
}  // namespace kubesched::plugins::device_fragmentation
