#include "plugins/volume_zone/volume_zone.h"

#include <gtest/gtest.h>

#include "cache/storage_cache.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"
#include "testing/storage_builders.h"

namespace kubesched::plugins::volume_zone {
namespace {

using framework::QueueingHint;
using framework::Status;
using testing::MakeNode;
using testing::MakePod;
using testing::MakePV;
using testing::MakePVC;
using testing::MakeStorageClass;

const std::string kBetaZone(api::kLabelFailureDomainZone);
const std::string kBetaRegion(api::kLabelFailureDomainRegion);
const std::string kZone(api::kLabelTopologyZone);
const std::string kRegion(api::kLabelTopologyRegion);

std::shared_ptr<api::Pod> PodWithVolume(std::string pod, std::string claim) {
  return MakePod().Name(std::move(pod)).PVC(std::move(claim)).Obj();
}

std::shared_ptr<api::PersistentVolume> PV(std::string name, std::vector<std::pair<std::string, std::string>> labels) {
  auto b = MakePV().Name(std::move(name));
  for (auto& [k, v] : labels) b.Label(k, v);
  return b.Obj();
}

std::shared_ptr<api::Node> Node(std::vector<std::pair<std::string, std::string>> labels) {
  auto b = MakeNode().Name("host1");
  for (auto& [k, v] : labels) b.Label(k, v);
  return b.Obj();
}

struct Case {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::shared_ptr<api::Node> node;
  Status want_pre_filter;
  Status want_filter;
};

// Runs PreFilter, then Filter with whatever state PreFilter left: as upstream's tables, Filter
// runs even after a PreFilter that did not succeed (it computes the topologies itself then).
void RunCases(const std::vector<Case>& cases, const std::vector<api::StorageObject>& objects) {
  cache::StorageCache cache;
  for (const auto& o : objects) cache.Apply(o);
  testing::FakeHandle handle;
  handle.set_storage(&cache);
  auto made = New({}, handle);
  ASSERT_TRUE(made.has_value());
  auto* pl = dynamic_cast<VolumeZone*>(made->get());
  ASSERT_NE(pl, nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = framework::PodInfo::Create(c.pod);
    auto node_info = testing::MakeNodeInfo(c.node);
    framework::CycleState state;
    auto [result, pre_status] = pl->PreFilter(state, *pod, {});
    EXPECT_EQ(pre_status, c.want_pre_filter);
    EXPECT_TRUE(result.AllNodes());
    EXPECT_EQ(pl->Filter(state, *pod, *node_info), c.want_filter);
  }
}

const Status kConflict = Status::UnschedulableAndUnresolvable(std::string(kErrReasonConflict));

// Upstream's TestSingleZone.
TEST(VolumeZoneTest, SingleZone) {
  const std::vector<api::StorageObject> objects = {
      PV("Vol_1", {{kBetaZone, "us-west1-a"}}),
      PV("Vol_2", {{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}}),
      PV("Vol_3", {{kBetaRegion, "us-west1"}}),
      PV("Vol_Stable_1", {{kZone, "us-west1-a"}}),
      PV("Vol_Stable_2", {{kRegion, "us-west1"}, {"uselessLabel", "none"}}),
      PV("Vol_Stable_3", {{kZone, "us-west1-a"}, {kRegion, "us-west1-a"}}),
      MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(),
      MakePVC().Name("PVC_2").VolumeName("Vol_2").Obj(),
      MakePVC().Name("PVC_3").VolumeName("Vol_3").Obj(),
      MakePVC().Name("PVC_4").VolumeName("Vol_not_exist").Obj(),
      MakePVC().Name("PVC_Stable_1").VolumeName("Vol_Stable_1").Obj(),
      MakePVC().Name("PVC_Stable_2").VolumeName("Vol_Stable_2").Obj(),
      MakePVC().Name("PVC_Stable_3").VolumeName("Vol_Stable_3").Obj(),
  };
  const std::vector<Case> cases = {
      {"pod without volume", MakePod().Name("pod_1").Obj(), Node({{kBetaZone, "us-west1-a"}}), Status::Skip(), {}},
      {"node without labels", PodWithVolume("pod_1", "PVC_1"), Node({}), {}, {}},
      {"beta zone label matched",
       PodWithVolume("pod_1", "PVC_1"),
       Node({{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}),
       {},
       {}},
      {"beta region label matched",
       PodWithVolume("pod_1", "PVC_2"),
       Node({{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}}),
       {},
       {}},
      {"beta region label doesn't match",
       PodWithVolume("pod_1", "PVC_2"),
       Node({{kBetaRegion, "no_us-west1"}, {"uselessLabel", "none"}}),
       {},
       kConflict},
      {"beta zone label doesn't match",
       PodWithVolume("pod_1", "PVC_1"),
       Node({{kBetaZone, "no_us-west1-a"}, {"uselessLabel", "none"}}),
       {},
       kConflict},
      {"zone label matched",
       PodWithVolume("pod_1", "PVC_Stable_1"),
       Node({{kZone, "us-west1-a"}, {"uselessLabel", "none"}}),
       {},
       {}},
      {"region label matched",
       PodWithVolume("pod_1", "PVC_Stable_2"),
       Node({{kRegion, "us-west1"}, {"uselessLabel", "none"}}),
       {},
       {}},
      {"region label doesn't match",
       PodWithVolume("pod_1", "PVC_Stable_2"),
       Node({{kRegion, "no_us-west1"}, {"uselessLabel", "none"}}),
       {},
       kConflict},
      {"zone label doesn't match",
       PodWithVolume("pod_1", "PVC_Stable_1"),
       Node({{kZone, "no_us-west1-a"}, {"uselessLabel", "none"}}),
       {},
       kConflict},
      {"pv with zone and region, node with only zone",
       PodWithVolume("pod_1", "PVC_Stable_3"),
       Node({{kZone, "us-west1-a"}}),
       {},
       kConflict},
      {"pv with zone,node with beta zone",
       PodWithVolume("pod_1", "PVC_Stable_1"),
       Node({{kBetaZone, "us-west1-a"}}),
       {},
       kConflict},
      {"pv with beta label,node with ga label, matched",
       PodWithVolume("pod_1", "PVC_1"),
       Node({{kZone, "us-west1-a"}}),
       {},
       {}},
      {"pv with beta label,node with ga label, don't match",
       PodWithVolume("pod_1", "PVC_1"),
       Node({{kZone, "us-west1-b"}}),
       {},
       kConflict},
      // kubesched: the bound volume must exist.
      {"bound volume not found", PodWithVolume("pod_1", "PVC_4"), Node({{kZone, "us-west1-a"}}),
       Status::UnschedulableAndUnresolvable("persistentvolume \"Vol_not_exist\" not found"),
       Status::UnschedulableAndUnresolvable("persistentvolume \"Vol_not_exist\" not found")},
      {"claim not found", PodWithVolume("pod_1", "PVC_nope"), Node({{kZone, "us-west1-a"}}),
       Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"PVC_nope\" not found"),
       Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"PVC_nope\" not found")},
  };
  RunCases(cases, objects);
}

// Upstream's TestMultiZone.
TEST(VolumeZoneTest, MultiZone) {
  const std::vector<api::StorageObject> objects = {
      PV("Vol_1", {{kBetaZone, "us-west1-a"}}),
      PV("Vol_2", {{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}),
      PV("Vol_3", {{kBetaZone, "us-west1-c__us-west1-a"}}),
      PV("Vol_Stable_1", {{kZone, "us-west1-a"}}),
      PV("Vol_Stable_2", {{kZone, "us-west1-c__us-west1-a"}}),
      MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(),
      MakePVC().Name("PVC_2").VolumeName("Vol_2").Obj(),
      MakePVC().Name("PVC_3").VolumeName("Vol_3").Obj(),
      MakePVC().Name("PVC_4").VolumeName("Vol_not_exist").Obj(),
      MakePVC().Name("PVC_Stable_1").VolumeName("Vol_Stable_1").Obj(),
      MakePVC().Name("PVC_Stable_2").VolumeName("Vol_Stable_2").Obj(),
  };
  const std::vector<Case> cases = {
      {"node without labels", PodWithVolume("pod_1", "PVC_3"), Node({}), {}, {}},
      {"beta zone label matched",
       PodWithVolume("pod_1", "PVC_3"),
       Node({{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}),
       {},
       {}},
      {"beta zone label doesn't match",
       PodWithVolume("pod_1", "PVC_1"),
       Node({{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}),
       {},
       kConflict},
      {"zone label matched",
       PodWithVolume("pod_1", "PVC_Stable_2"),
       Node({{kZone, "us-west1-a"}, {"uselessLabel", "none"}}),
       {},
       {}},
      {"zone label doesn't match",
       PodWithVolume("pod_1", "PVC_Stable_1"),
       Node({{kZone, "us-west1-b"}, {"uselessLabel", "none"}}),
       {},
       kConflict},
  };
  RunCases(cases, objects);
}

// Upstream's TestWithBinding.
TEST(VolumeZoneTest, WithBinding) {
  const std::vector<api::StorageObject> objects = {
      MakeStorageClass().Name("Class_Immediate").Immediate().Obj(),
      MakeStorageClass().Name("Class_Wait").WaitForFirstConsumer().Obj(),
      PV("Vol_1", {{kBetaZone, "us-west1-a"}}),
      MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(),
      MakePVC().Name("PVC_NoSC").Class("Class_0").Obj(),
      MakePVC().Name("PVC_EmptySC").Obj(),
      MakePVC().Name("PVC_WaitSC").Class("Class_Wait").Obj(),
      MakePVC().Name("PVC_ImmediateSC").Class("Class_Immediate").Obj(),
      // The beta annotation names the class even where spec.storageClassName is set.
      MakePVC()
          .Name("PVC_BetaWaitSC")
          .Class("Class_Immediate")
          .Annotation("volume.beta.kubernetes.io/storage-class", "Class_Wait")
          .Obj(),
  };
  auto node = Node({{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}});
  const Status no_names =
      Status::UnschedulableAndUnresolvable("PersistentVolumeClaim had no pv name and storageClass name");
  const Status no_class = Status::UnschedulableAndUnresolvable("storageclass.storage.k8s.io \"Class_0\" not found");
  // kubesched decodes an absent volumeBindingMode as Immediate (the API server's default), so
  // upstream's "VolumeBindingMode not set" cannot happen; an Immediate class gives this.
  const Status no_pv = Status::UnschedulableAndUnresolvable("PersistentVolume had no name");
  const std::vector<Case> cases = {
      {"label zone failure domain matched", PodWithVolume("pod_1", "PVC_1"), node, {}, {}},
      {"unbound volume empty storage class", PodWithVolume("pod_1", "PVC_EmptySC"), node, no_names, no_names},
      {"unbound volume no storage class", PodWithVolume("pod_1", "PVC_NoSC"), node, no_class, no_class},
      {"unbound volume immediate binding mode", PodWithVolume("pod_1", "PVC_ImmediateSC"), node, no_pv, no_pv},
      {"unbound volume wait binding mode", PodWithVolume("pod_1", "PVC_WaitSC"), node, Status::Skip(), {}},
      {"unbound volume wait binding mode by beta annotation",
       PodWithVolume("pod_1", "PVC_BetaWaitSC"),
       node,
       Status::Skip(),
       {}},
      {"ephemeral volumes are not read",
       MakePod().Name("pod_1").EphemeralVolume("scratch").Obj(),
       node,
       Status::Skip(),
       {}},
  };
  RunCases(cases, objects);
}

TEST(VolumeZoneTest, LabelZonesToSet) {
  EXPECT_EQ(LabelZonesToSet("a"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(LabelZonesToSet("b__a__b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(LabelZonesToSet(" a __ b "), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(LabelZonesToSet("a_b"), (std::vector<std::string>{"a_b"}));
  EXPECT_EQ(LabelZonesToSet(""), std::nullopt);
  EXPECT_EQ(LabelZonesToSet("a____b"), std::nullopt);
  EXPECT_EQ(LabelZonesToSet("a__"), std::nullopt);
}

TEST(VolumeZoneTest, GetPVTopologies) {
  // Beta labels first; a label that does not parse is ignored.
  auto pv = PV("v", {{kRegion, "r1"}, {kBetaZone, "z2__z1"}, {kZone, "z__"}, {"other", "x"}});
  auto got = GetPVTopologies(*pv);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (PVTopology{"v", api::kLabelFailureDomainZone, {"z1", "z2"}}));
  EXPECT_EQ(got[1], (PVTopology{"v", api::kLabelTopologyRegion, {"r1"}}));
}

TEST(VolumeZoneTest, EventsToRegister) {
  testing::FakeHandle handle;
  VolumeZone plugin(handle);
  auto events = plugin.EventsToRegister();
  namespace action = framework::action;
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kStorageClass);
  EXPECT_EQ(events[0].event.action, action::kAdd);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, action::kAdd | action::kUpdateNodeLabel);
  EXPECT_FALSE(events[1].hint);
  EXPECT_EQ(events[2].event.resource, framework::EventResource::kPersistentVolumeClaim);
  EXPECT_EQ(events[2].event.action, action::kAdd | action::kUpdate);
  EXPECT_TRUE(events[2].hint);
  EXPECT_EQ(events[3].event.resource, framework::EventResource::kPersistentVolume);
  EXPECT_EQ(events[3].event.action, action::kAdd | action::kUpdate);
  EXPECT_TRUE(events[3].hint);
}

struct HintCase {
  std::string name;
  std::shared_ptr<api::Pod> pod;
  std::optional<api::StorageObject> old_object;
  std::optional<api::StorageObject> new_object;
  QueueingHint want;
};

void RunHintCases(const std::vector<HintCase>& cases, const framework::QueueingHintFn& hint) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_storage = c.old_object ? &*c.old_object : nullptr,
                                  .new_storage = c.new_object ? &*c.new_object : nullptr};
    EXPECT_EQ(hint(*c.pod, event), c.want);
  }
}

// Upstream's TestIsSchedulableAfterPersistentVolumeClaimAdded ("error-wrong-new-object": an object
// of another kind, queued).
TEST(VolumeZoneTest, IsSchedulableAfterPersistentVolumeClaimChange) {
  const std::vector<HintCase> cases = {
      {"error-wrong-new-object", PodWithVolume("pod_1", "PVC_1"), std::nullopt,
       MakeStorageClass().Name("not-a-pvc").Obj(), QueueingHint::kQueue},
      {"pvc-was-added-but-pod-refers-no-pvc", MakePod().Name("pod_1").Obj(), std::nullopt,
       MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(), QueueingHint::kSkip},
      {"pvc-was-added-and-pod-was-bound-to-different-pvc", PodWithVolume("pod_1", "PVC_2"), std::nullopt,
       MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(), QueueingHint::kSkip},
      {"pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", PodWithVolume("pod_1", "PVC_1"), std::nullopt,
       MakePVC().Name("PVC_1").Namespace("ns1").VolumeName("Vol_1").Obj(), QueueingHint::kSkip},
      {"pvc-was-added-and-pod-was-bound-to-the-pvc", PodWithVolume("pod_1", "PVC_1"), std::nullopt,
       MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(), QueueingHint::kQueue},
      {"pvc-was-updated-and-pod-was-bound-to-the-pvc", PodWithVolume("pod_1", "PVC_1"), MakePVC().Name("PVC_1").Obj(),
       MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(), QueueingHint::kQueue},
      {"pvc-was-updated-but-pod-refers-no-pvc", MakePod().Name("pod_1").Obj(), MakePVC().Name("PVC_1").Obj(),
       MakePVC().Name("PVC_1").VolumeName("Vol_1").Obj(), QueueingHint::kSkip},
  };
  RunHintCases(cases, IsSchedulableAfterPersistentVolumeClaimChange);
}

// Upstream's TestIsSchedulableAfterStorageClassAdded.
TEST(VolumeZoneTest, IsSchedulableAfterStorageClassAdded) {
  const std::vector<HintCase> cases = {
      {"error-wrong-new-object", PodWithVolume("pod_1", "PVC_1"), std::nullopt,
       MakePVC().Name("not-a-storageclass").Obj(), QueueingHint::kQueue},
      // An absent volumeBindingMode is Immediate in kubesched.
      {"sc-doesn't-have-volume-binding-mode", PodWithVolume("pod_1", "PVC_1"), std::nullopt,
       MakeStorageClass().Name("SC_1").Obj(), QueueingHint::kSkip},
      {"new-sc-is-wait-for-first-consumer-mode", PodWithVolume("pod_1", "PVC_1"), std::nullopt,
       MakeStorageClass().Name("SC_1").WaitForFirstConsumer().Obj(), QueueingHint::kQueue},
  };
  RunHintCases(cases, IsSchedulableAfterStorageClassAdded);
}

// Upstream's TestIsSchedulableAfterPersistentVolumeChange.
TEST(VolumeZoneTest, IsSchedulableAfterPersistentVolumeChange) {
  const std::vector<HintCase> cases = {
      {"error-wrong-new-object", PodWithVolume("pod_1", "PVC_1"), std::nullopt, MakePVC().Name("not-a-pv").Obj(),
       QueueingHint::kQueue},
      {"error-wrong-old-object", PodWithVolume("pod_1", "PVC_1"), MakePVC().Name("not-a-pv").Obj(),
       MakePV().Name("Vol_1").Obj(), QueueingHint::kQueue},
      {"new-pv-was-added", PodWithVolume("pod_1", "PVC_1"), std::nullopt, PV("Vol_1", {{kBetaZone, "us-west1-b"}}),
       QueueingHint::kQueue},
      {"pv-was-updated-and-changed-topology", PodWithVolume("pod_1", "PVC_1"), PV("Vol_1", {{kBetaZone, "us-west1-a"}}),
       PV("Vol_1", {{kBetaZone, "us-west1-b"}}), QueueingHint::kQueue},
      {"pv-was-updated-and-added-topology-label", PodWithVolume("pod_1", "PVC_1"),
       PV("Vol_1", {{kBetaZone, "us-west1-a"}}), PV("Vol_1", {{kBetaZone, "us-west1-a"}, {kZone, "zone"}}),
       QueueingHint::kQueue},
      {"pv-was-updated-but-no-topology-is-changed", PodWithVolume("pod_1", "PVC_1"),
       PV("Vol_1", {{kBetaZone, "us-west1-a"}, {kZone, "zone"}}),
       PV("Vol_1", {{kBetaZone, "us-west1-a"}, {kZone, "zone"}}), QueueingHint::kSkip},
      // kubesched: a label outside the topology labels changes nothing.
      {"pv-was-updated-other-label", PodWithVolume("pod_1", "PVC_1"), PV("Vol_1", {{kZone, "zone"}}),
       PV("Vol_1", {{kZone, "zone"}, {"team", "a"}}), QueueingHint::kSkip},
  };
  RunHintCases(cases, IsSchedulableAfterPersistentVolumeChange);
}

}  // namespace
}  // namespace kubesched::plugins::volume_zone
