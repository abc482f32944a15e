// End-to-end tests of Dynamic Resource Allocation through `simulate` (issue 36): DeviceClasses,
// ResourceSlices, ResourceClaims and templates read from manifests; the resourceclaim controller
// making claims from templates; DynamicResources in the default profile allocating whole,
// shared (consumable capacity) and partitionable devices; the claims' status in `-o json`.

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/dra_manifests.h"
#include "e2e/run_kubesched.h"
#include "e2e/simulate_json.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
using namespace dra;

json Simulate(const std::string& manifests, const std::string& name, const std::string& config = "") {
  return SimulateJson(manifests, name, config);
}

std::map<std::string, std::string> Placement(const json& j) { return PodPlacement(j); }
std::map<std::string, std::string> Messages(const json& j) { return PodMessages(j); }

// The claim whose reservedFor holds `pod` (the claims from templates have generated names).
json ClaimOf(const json& j, const std::string& pod) {
  for (const auto& c : j.value("resourceClaims", json::array())) {
    for (const auto& r : c["reservedFor"]) {
      if (r == pod) return c;
    }
  }
  return json();
}

TEST(DraE2E, APodWhoseClaimNoNodeCanSatisfyStaysPendingWithUpstreamsMessage) {
  const json j = Simulate(DraNode("node-a") + DraNode("node-b") + GpuClass() + WholeGpus("node-b", 1) +
                              GpuTemplate("one-gpu") + ClaimPod("first", "one-gpu") + ClaimPod("second", "one-gpu"),
                          "lacking");
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(placement.at("first"), "node-b");
  EXPECT_EQ(placement.at("second"), "");
  // Upstream's Filter reason, then the PostFilter plugins' (DynamicResources', preemption's).
  EXPECT_TRUE(Messages(j).at("second").starts_with("0/2 nodes are available: 2 cannot allocate all claims. "))
      << Messages(j).at("second");
  EXPECT_NE(Messages(j).at("second").find("preemption: 0/2 nodes are available: 2 Preemption is not helpful"),
            std::string::npos)
      << Messages(j).at("second");
  // The first pod's claim, made from the template for it, holds the node's GPU.
  const json claim = ClaimOf(j, "first");
  ASSERT_TRUE(claim.is_object()) << j.dump(2);
  EXPECT_TRUE(claim["name"].get<std::string>().starts_with("first-gpu-")) << claim.dump();
  ASSERT_EQ(claim["devices"].size(), 1u);
  EXPECT_EQ(claim["devices"][0]["device"], "gpu-0");
  EXPECT_EQ(claim["devices"][0]["pool"], "node-b");
  EXPECT_EQ(claim["devices"][0]["request"], "gpu");
}

// kube-scheduler's effective configuration with every default plugin loads unchanged, and
// DynamicResources allocates under it as under kubesched's defaults.
TEST(DraE2E, TheEffectiveConfigurationWithEveryDefaultPluginLoadsAndSchedules) {
  const std::string config = EffectiveConfigWithEveryDefaultPlugin();
  ASSERT_NE(config.find("name: DynamicResources"), std::string::npos);
  ASSERT_NE(config.find("name: NodeDeclaredFeatures"), std::string::npos);
  const json j = Simulate(DraNode("node-a") + DraNode("node-b") + GpuClass() + WholeGpus("node-b", 1) +
                              GpuTemplate("one-gpu") + ClaimPod("first", "one-gpu") + ClaimPod("second", "one-gpu"),
                          "effective", config);
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(placement.at("first"), "node-b") << Messages(j)["first"];
  EXPECT_EQ(placement.at("second"), "");
  EXPECT_TRUE(Messages(j).at("second").starts_with("0/2 nodes are available: 2 cannot allocate all claims. "))
      << Messages(j).at("second");
}

TEST(DraE2E, ACelSelectorPicksTheNodeWithTheModelAsked) {
  const json j = Simulate(DraNode("node-a") + DraNode("node-b") + GpuClass() + WholeGpus("node-a", 2, "t4") +
                              WholeGpus("node-b", 2, "h100") +
                              GpuTemplate("h100", "device.attributes[\"gpu.example.com\"].model == \"h100\"") +
                              ClaimPod("big", "h100"),
                          "selector");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(Placement(j).at("big"), "node-b") << Messages(j)["big"];
}

TEST(DraE2E, TwoPodsSharingOneClaimLandOnTheNodeOfItsDevice) {
  std::string pods;
  for (const char* p : {"reader-1", "reader-2"}) pods += ClaimPod(p, "", "shared");
  const json j = Simulate(DraNode("node-a") + DraNode("node-b") + DraNode("node-c") + GpuClass() +
                              WholeGpus("node-b", 1) + WholeGpus("node-c", 1) + GpuClaim("shared") + pods,
                          "shared");
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  ASSERT_FALSE(placement.at("reader-1").empty()) << Messages(j)["reader-1"];
  EXPECT_EQ(placement.at("reader-2"), placement.at("reader-1"));
  const json claim = ClaimOf(j, "reader-1");
  ASSERT_TRUE(claim.is_object()) << j.dump(2);
  EXPECT_EQ(claim["name"], "shared");
  EXPECT_EQ(claim["reservedFor"], json::array({"reader-1", "reader-2"}));
  EXPECT_EQ(claim["devices"][0]["pool"], placement.at("reader-1"));
}

// The GPU-sharing case the scalar model gets wrong: node-a's two GPUs have 500 gpu-milli free each
// (1000 in total), yet a pod asking 600 of one GPU cannot use either; node-b's free GPU takes it.
// The pod comes 10 s after the two halves are placed.
TEST(DraE2E, SixHundredGpuMilliDoNotFitTwoGpusWithFiveHundredFreeEach) {
  const std::string manifests = DraNode("node-a") + DraNode("node-b") + GpuClass() + SharedGpus("node-a", 2, 0) +
                                SharedGpus("node-b", 1, 2) +
                                GpuTemplate("half-of-0", "device.attributes[\"gpu.example.com\"].index == 0", "500") +
                                GpuTemplate("half-of-1", "device.attributes[\"gpu.example.com\"].index == 1", "500") +
                                GpuTemplate("six-tenths", "", "600") + ClaimPod("half-0", "half-of-0") +
                                ClaimPod("half-1", "half-of-1") + ClaimPod("big-share", "six-tenths", "", "10s");
  const json j = Simulate(manifests, "gpu-milli");
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(placement.at("half-0"), "node-a") << Messages(j)["half-0"];
  EXPECT_EQ(placement.at("half-1"), "node-a") << Messages(j)["half-1"];
  EXPECT_EQ(placement.at("big-share"), "node-b") << Messages(j)["big-share"];
  // Each claim shows the capacity it consumed and a share of its GPU.
  for (const auto& [pod, device, milli] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"half-0", "gpu-0", "500"}, {"half-1", "gpu-1", "500"}, {"big-share", "gpu-0", "600"}}) {
    const json claim = ClaimOf(j, pod);
    ASSERT_TRUE(claim.is_object()) << pod << ": " << j.dump(2);
    ASSERT_EQ(claim["devices"].size(), 1u) << claim.dump();
    EXPECT_EQ(claim["devices"][0]["device"], device) << pod;
    EXPECT_EQ(claim["devices"][0]["consumedCapacity"]["gpu.example.com/gpuMilli"], milli) << claim.dump();
    EXPECT_TRUE(claim["devices"][0].contains("shareID")) << claim.dump();
  }
  // Without node-b, the pod stays pending rather than landing on node-a's split capacity.
  const json alone = Simulate(DraNode("node-a") + GpuClass() + SharedGpus("node-a", 2, 0) +
                                  GpuTemplate("half-of-0", "device.attributes[\"gpu.example.com\"].index == 0", "500") +
                                  GpuTemplate("half-of-1", "device.attributes[\"gpu.example.com\"].index == 1", "500") +
                                  GpuTemplate("six-tenths", "", "600") + ClaimPod("half-0", "half-of-0") +
                                  ClaimPod("half-1", "half-of-1") + ClaimPod("big-share", "six-tenths", "", "10s"),
                              "gpu-milli-alone");
  ASSERT_FALSE(alone.is_discarded());
  EXPECT_EQ(Placement(alone).at("big-share"), "");
  EXPECT_TRUE(Messages(alone).at("big-share").starts_with("0/1 nodes are available: 1 cannot allocate all claims."))
      << Messages(alone).at("big-share");
}

// kubesched's DeviceFragmentation (FGD's fragmentation gradient over the devices' gpuMilli): with a
// whole-GPU pod in the workload, the second 400 share goes onto the GPU the first one started
// rather than breaking into another whole GPU, so a later whole-GPU pod still finds one. The
// default profile spreads the shares (LeastAllocated) and leaves that pod pending.
TEST(DraE2E, DeviceFragmentationKeepsAWholeGpuForTheWholeGpuPod) {
  const std::string manifests = DraNode("node-a") + DraNode("node-b") + DraNode("node-c") + GpuClass() +
                                SharedGpus("node-a", 1, 0) + SharedGpus("node-b", 1, 1) + SharedGpus("node-c", 1, 2) +
                                GpuTemplate("whole", "", "1000") + GpuTemplate("share", "", "400") +
                                ClaimPod("whole-1", "whole") + ClaimPod("share-1", "share", "", "10s") +
                                ClaimPod("share-2", "share", "", "20s") + ClaimPod("whole-2", "whole", "", "30s");
  const std::string config =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    preScore:\n      enabled: [{name: "
      "DeviceFragmentation}]\n"
      "    score:\n      disabled: [{name: \"*\"}]\n"
      "      enabled: [{name: DeviceFragmentation}]\n  pluginConfig:\n  - name: DeviceFragmentation\n"
      "    args: {capacity: gpu.example.com/gpuMilli}\n";
  const json j = Simulate(manifests, "fragmentation", config);
  ASSERT_FALSE(j.is_discarded());
  auto placement = Placement(j);
  EXPECT_EQ(placement.at("share-1"), placement.at("share-2")) << j.dump(2);
  EXPECT_NE(placement.at("whole-2"), "") << Messages(j)["whole-2"];
  EXPECT_NE(placement.at("whole-2"), placement.at("whole-1"));

  const json spread = Simulate(manifests, "fragmentation-default");
  ASSERT_FALSE(spread.is_discarded());
  placement = Placement(spread);
  EXPECT_NE(placement.at("share-1"), placement.at("share-2"));
  EXPECT_EQ(placement.at("whole-2"), "");
}

// Partitionable devices: one GPU offered whole or as two halves, all drawing on one counter set.
// Two pods take the halves; a third asking the whole GPU then finds the counters spent.
TEST(DraE2E, PartitionableDevicesRespectTheirCounters) {
  const std::string manifests = DraNode("node-a") + GpuClass() + PartitionableGpu("node-a") +
                                GpuTemplate("half", "device.attributes[\"gpu.example.com\"].partition") +
                                GpuTemplate("whole", "!device.attributes[\"gpu.example.com\"].partition") +
                                ClaimPod("part-a", "half") + ClaimPod("part-b", "half") +
                                ClaimPod("whole-gpu", "whole", "", "10s");
  const json j = Simulate(manifests, "partitions");
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(placement.at("part-a"), "node-a") << Messages(j)["part-a"];
  EXPECT_EQ(placement.at("part-b"), "node-a") << Messages(j)["part-b"];
  EXPECT_EQ(placement.at("whole-gpu"), "");
  EXPECT_TRUE(Messages(j).at("whole-gpu").starts_with("0/1 nodes are available: 1 cannot allocate all claims."))
      << Messages(j).at("whole-gpu");
  std::set<std::string> devices;
  for (const char* pod : {"part-a", "part-b"}) devices.insert(ClaimOf(j, pod)["devices"][0]["device"]);
  EXPECT_EQ(devices, (std::set<std::string>{"gpu-0-part-0", "gpu-0-part-1"}));
}

TEST(DraE2E, APodWhoseClaimIsMissingWaitsWithUpstreamsReason) {
  const json j =
      Simulate(DraNode("node-a") + GpuClass() + WholeGpus("node-a", 1) + ClaimPod("orphan", "", "nowhere"), "missing");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(Placement(j).at("orphan"), "");
  EXPECT_NE(Messages(j).at("orphan").find("resourceclaim.resource.k8s.io \"nowhere\" not found"), std::string::npos)
      << Messages(j).at("orphan");
}

// The README's example: the same GPU-sharing scenario from examples/dra/.
TEST(DraE2E, TheReadmesGpuSharingExample) {
  RunResult r = RunKubesched({"simulate", "-f", SourcePath("examples/dra/gpu-sharing.yaml"), "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(placement.at("half-0"), "node-a");
  EXPECT_EQ(placement.at("half-1"), "node-a");
  EXPECT_EQ(placement.at("big-share"), "node-b");
  EXPECT_EQ(j["resourceClaims"].size(), 3u);
}

TEST(DraE2E, AnInvalidSliceIsRefusedWithItsFieldPath) {
  const std::string file = WriteTempFile(
      "bad-slice.yaml",
      DraNode("node-a") +
          "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: bad\nspec:\n"
          "  driver: gpu.example.com\n  pool: {name: p, resourceSliceCount: 1}\n  devices:\n  - name: gpu-0\n");
  RunResult r = RunKubesched({"simulate", "-f", file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(
      r.err.find("spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"),
      std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace kubesched::e2e
