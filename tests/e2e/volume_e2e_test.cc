// End-to-end tests of the volume plugins through `simulate` (issue 35): claims, volumes, classes
// and CSI objects read from manifests; the PV controller binding and provisioning; VolumeBinding,
// VolumeRestrictions, VolumeZone and NodeVolumeLimits in the default profile; and the effective
// configuration kube-scheduler prints loaded unchanged.

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"
#include "e2e/simulate_json.h"
#include "e2e/volume_manifests.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
using namespace volumes;

json Simulate(const std::string& manifests, const std::string& name, const std::string& config = "") {
  return SimulateJson(manifests, name, config);
}

std::map<std::string, std::string> Placement(const json& j) { return PodPlacement(j); }
std::map<std::string, std::string> Messages(const json& j) { return PodMessages(j); }

std::map<std::string, json> Claims(const json& j) {
  std::map<std::string, json> out;
  for (const auto& c : j.value("persistentVolumeClaims", json::array())) out[c["name"].get<std::string>()] = c;
  return out;
}

std::map<std::string, json> Volumes(const json& j) {
  std::map<std::string, json> out;
  for (const auto& v : j.value("persistentVolumes", json::array())) out[v["name"].get<std::string>()] = v;
  return out;
}

std::string ZoneOf(const std::string& node) { return node.substr(0, node.rfind('-')); }

// The first case: a StatefulSet with volumeClaimTemplates on a WaitForFirstConsumer class
// whose provisioner has capacity in two of three zones. Every pod runs in those zones, each claim
// is bound to a volume provisioned in its pod's zone, with selected-node naming the pod's node.
TEST(VolumeE2E, AStatefulSetOnAWaitForFirstConsumerClassRunsWhereItsProvisionerHasCapacity) {
  const json j = Simulate(ThreeZones() + ZonalStorage() + ZonalStatefulSet(), "sts");
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  const auto claims = Claims(j);
  const auto volumes = Volumes(j);
  for (int i = 0; i < 3; ++i) {
    const std::string pod = "db-" + std::to_string(i);
    ASSERT_TRUE(placement.contains(pod)) << j.dump(2);
    const std::string node = placement.at(pod);
    ASSERT_FALSE(node.empty()) << pod << " pending: " << Messages(j)[pod];
    EXPECT_NE(ZoneOf(node), "zone-c") << pod << " on " << node;
    const std::string claim = "data-db-" + std::to_string(i);
    ASSERT_TRUE(claims.contains(claim)) << j.dump(2);
    EXPECT_EQ(claims.at(claim)["phase"], "Bound") << claims.at(claim);
    EXPECT_EQ(claims.at(claim)["selectedNode"], node) << claims.at(claim);
    const std::string volume = claims.at(claim)["volumeName"].get<std::string>();
    ASSERT_TRUE(volumes.contains(volume)) << j.dump(2);
    EXPECT_EQ(volumes.at(volume)["claim"], "default/" + claim);
    EXPECT_EQ(volumes.at(volume)["nodeAffinity"], json::array({"topology.kubernetes.io/zone=" + ZoneOf(node)}));
  }
}

// The README's example: the same scenario from examples/volumes/.
TEST(VolumeE2E, TheBundledExampleRunsTheStatefulSetInZonesAAndB) {
  RunResult r = RunKubesched({"simulate", "-f", SourcePath("examples/volumes/zonal-statefulset.yaml"), "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  for (const auto& [pod, node] : Placement(j)) {
    EXPECT_TRUE(node.starts_with("zone-a-") || node.starts_with("zone-b-")) << pod << " on " << node;
  }
  EXPECT_EQ(j["summary"]["scheduled"], 3);
}

// Without capacity anywhere, the pods stay pending with VolumeBinding's reason.
TEST(VolumeE2E, AStatefulSetWithoutStorageCapacitySaysSo) {
  std::string storage = ZonalStorage();
  for (size_t at; (at = storage.find("capacity: 10Gi")) != std::string::npos;) storage.replace(at, 14, "capacity: 0");
  const json j = Simulate(ThreeZones() + storage + ZonalStatefulSet(), "sts-full");
  ASSERT_FALSE(j.is_discarded());
  const auto messages = Messages(j);
  ASSERT_TRUE(messages.contains("db-0")) << j.dump(2);
  EXPECT_TRUE(Placement(j)["db-0"].empty());
  EXPECT_NE(messages.at("db-0").find("6 node(s) did not have enough free storage"), std::string::npos)
      << messages.at("db-0");
}

TEST(VolumeE2E, APodWhoseClaimIsBoundToAZonalVolumeLandsInThatZone) {
  const json j = Simulate(ThreeZones() + ZonalVolumeAndClaim() + ClaimPod("app", "data"), "zonal");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(ZoneOf(Placement(j)["app"]), "zone-b") << j.dump(2);
  EXPECT_EQ(Claims(j)["data"]["phase"], "Bound");
}

TEST(VolumeE2E, APodWhoseClaimIsBoundToAFullZoneStaysPendingWithUpstreamsMessage) {
  std::string manifests = ThreeZones() + ZonalVolumeAndClaim();
  manifests += ClaimPod("busy-1", "other", "4", "zone-b-1") + ClaimPod("busy-2", "other", "4", "zone-b-2");
  // The busy pods' claim does not matter to them: they run already.
  manifests += CsiVolumeAndClaim("other");
  manifests += ClaimPod("app", "data");
  const json j = Simulate(manifests, "zonal-full");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(Placement(j)["app"].empty()) << j.dump(2);
  const std::string message = Messages(j)["app"];
  EXPECT_NE(message.find("0/6 nodes are available: 2 Insufficient cpu, 4 node(s) had volume node affinity conflict."),
            std::string::npos)
      << message;
}

TEST(VolumeE2E, APodWithAMissingClaimStaysPending) {
  const json j = Simulate(ThreeZones() + ClaimPod("app", "does-not-exist"), "missing");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(Placement(j)["app"].empty());
  EXPECT_NE(Messages(j)["app"].find("persistentvolumeclaim \"does-not-exist\" not found"), std::string::npos)
      << Messages(j)["app"];
}

TEST(VolumeE2E, AReadWriteOncePodClaimInUseKeepsTheSecondPodPending) {
  const json j = Simulate(ThreeZones() + ReadWriteOncePodClaim("solo") + ClaimPod("first", "solo", "1", "zone-a-1") +
                              ClaimPod("second", "solo"),
                          "rwop");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(Placement(j)["second"].empty()) << j.dump(2);
  EXPECT_NE(Messages(j)["second"].find(
                "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"),
            std::string::npos)
      << Messages(j)["second"];
}

// zone-a-1 attaches one volume of the driver and has one: the new pod's volume goes elsewhere.
// With every node at its limit, the pod stays pending and says why.
TEST(VolumeE2E, ANodeAtItsAttachLimitIsFilteredOut) {
  std::string manifests = ZoneNode("n1", "zone-a", "8") + ZoneNode("n2", "zone-a", "1") + AttachLimit("n1", 1) +
                          AttachLimit("n2", 1) + CsiVolumeAndClaim("used") + ClaimPod("running", "used", "0", "n1") +
                          CsiVolumeAndClaim("fresh") + ClaimPod("app", "fresh", "1");
  json j = Simulate(manifests, "limits");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(Placement(j)["app"], "n2") << j.dump(2);

  manifests += CsiVolumeAndClaim("used2") + ClaimPod("running2", "used2", "0", "n2");
  j = Simulate(manifests, "limits-full");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(Placement(j)["app"].empty());
  EXPECT_NE(Messages(j)["app"].find("2 node(s) exceed max volume count"), std::string::npos) << Messages(j)["app"];
}

TEST(VolumeE2E, TheEffectiveConfigurationKubeSchedulerPrintsLoadsAndSchedules) {
  const json j =
      Simulate(ThreeZones() + ZonalStorage() + ZonalStatefulSet() + ZonalVolumeAndClaim() + ClaimPod("app", "data"),
               "effective", kEffectiveConfig);
  ASSERT_FALSE(j.is_discarded());
  const auto placement = Placement(j);
  EXPECT_EQ(ZoneOf(placement.at("app")), "zone-b");
  for (const char* pod : {"db-0", "db-1", "db-2"}) EXPECT_FALSE(placement.at(pod).empty()) << pod;
}

}  // namespace
}  // namespace kubesched::e2e
