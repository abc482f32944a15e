#include "plugins/volume_restrictions/volume_restrictions.h"

#include <gtest/gtest.h>

#include "cache/storage_cache.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"
#include "testing/storage_builders.h"

namespace kubesched::plugins::volume_restrictions {
namespace {

using api::InlineDiskType;
using api::PersistentVolumeAccessMode;
using framework::QueueingHint;
using framework::Status;
using testing::MakeNode;
using testing::MakePod;
using testing::MakePVC;

api::Volume DiskVolume(InlineDiskType type, std::string id, bool read_only = false) {
  api::Volume v;
  v.name = "disk";
  api::InlineDisk disk;
  disk.type = type;
  disk.id = std::move(id);
  disk.read_only = read_only;
  v.disk = std::move(disk);
  return v;
}
api::Volume Gce(std::string pd_name, bool read_only = false) {
  return DiskVolume(InlineDiskType::kGCEPersistentDisk, std::move(pd_name), read_only);
}
api::Volume Aws(std::string volume_id, bool read_only = false) {
  return DiskVolume(InlineDiskType::kAWSElasticBlockStore, std::move(volume_id), read_only);
}
api::Volume Rbd(std::vector<std::string> monitors, std::string pool, std::string image, bool read_only = false) {
  api::Volume v = DiskVolume(InlineDiskType::kRBD, std::move(image), read_only);
  v.disk->pool = std::move(pool);
  v.disk->monitors = std::move(monitors);
  return v;
}
api::Volume Iscsi(std::string iqn, bool read_only = false) {
  return DiskVolume(InlineDiskType::kISCSI, std::move(iqn), read_only);
}

// A plugin reading claims from `cache`, with a snapshot of `nodes` and `pods`.
struct Fixture {
  cache::StorageCache cache;
  testing::FakeHandle handle;
  std::unique_ptr<framework::Plugin> plugin;
  VolumeRestrictions* pl = nullptr;

  Fixture(const std::vector<std::shared_ptr<api::Node>>& nodes, const std::vector<std::shared_ptr<api::Pod>>& pods,
          const std::vector<std::shared_ptr<api::PersistentVolumeClaim>>& claims = {})
      : handle(nodes, pods) {
    for (const auto& c : claims) cache.Apply(std::shared_ptr<const api::PersistentVolumeClaim>(c));
    handle.set_storage(&cache);
    auto made = New({}, handle);
    EXPECT_TRUE(made.has_value());
    plugin = std::move(*made);
    pl = dynamic_cast<VolumeRestrictions*>(plugin.get());
  }

  std::pair<framework::PreFilterResult, Status> PreFilter(framework::CycleState& state, const framework::PodInfo& pod) {
    return pl->PreFilter(state, pod, handle.snapshot().List());
  }
};

// Upstream's TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts and
// TestISCSIDiskConflicts: one table per disk type, the same four cases each (GCE has a fifth).
TEST(VolumeRestrictionsTest, DiskConflicts) {
  struct Case {
    std::string name;
    std::vector<api::Volume> pod_volumes;
    std::vector<api::Volume> node_pod_volumes;  // empty: the node has no pod
    Status want_pre_filter;
    Status want_filter;
  };
  const Status conflict = Status::Unschedulable(std::string(kErrReasonDiskConflict));
  const Status ok, skip = Status::Skip();
  auto table = [&](const api::Volume& vol, const api::Volume& vol2) {
    return std::vector<Case>{
        {"nothing", {}, {}, skip, ok},
        {"one state", {}, {vol}, skip, ok},
        {"same state", {vol}, {vol}, ok, conflict},
        {"different state", {vol2}, {vol}, ok, ok},
    };
  };
  struct Table {
    std::string name;
    std::vector<Case> cases;
  };
  std::vector<Table> tables = {
      {"GCE", table(Gce("foo"), Gce("bar"))},
      {"AWS", table(Aws("foo"), Aws("bar"))},
      {"RBD", table(Rbd({"a", "b"}, "foo", "bar"), Rbd({"c", "d"}, "foo", "bar"))},
      {"ISCSI", table(Iscsi("iqn.2016-12.server:storage.target01"), Iscsi("iqn.2017-12.server:storage.target01"))},
  };
  api::Volume no_restriction;
  no_restriction.name = "volume with no restriction";
  tables[0].cases.push_back({"pod with a volume that doesn't have restrictions", {no_restriction}, {}, skip, ok});

  for (const auto& t : tables) {
    for (const auto& c : t.cases) {
      SCOPED_TRACE(t.name + ": " + c.name);
      Fixture f({}, {});
      auto builder = MakePod();
      for (const auto& v : c.pod_volumes) builder.Volume(v);
      auto pod = builder.Info();
      std::vector<std::shared_ptr<api::Pod>> on_node;
      if (!c.node_pod_volumes.empty()) {
        auto existing = MakePod();
        for (const auto& v : c.node_pod_volumes) existing.Volume(v);
        on_node.push_back(existing.Obj());
      }
      auto node_info = testing::MakeNodeInfo(MakeNode().Obj(), on_node);
      framework::CycleState state;
      auto [result, pre_status] = f.PreFilter(state, *pod);
      EXPECT_EQ(pre_status, c.want_pre_filter);
      EXPECT_TRUE(result.AllNodes());
      // Filter does not run after a PreFilter that did not succeed.
      if (pre_status.IsSuccess()) {
        EXPECT_EQ(f.pl->Filter(state, *pod, *node_info), c.want_filter);
      }
    }
  }
}

// Read-only mounts and the RBD identity, beyond upstream's tables.
TEST(VolumeRestrictionsTest, IsDiskConflict) {
  struct Case {
    std::string name;
    api::Volume disk;
    api::Volume existing;
    bool want;
  };
  const std::vector<Case> cases = {
      {"gce both read-only", Gce("foo", true), Gce("foo", true), false},
      {"gce one read-write", Gce("foo", true), Gce("foo", false), true},
      {"aws both read-only still conflict", Aws("foo", true), Aws("foo", true), true},
      {"iscsi both read-only", Iscsi("iqn", true), Iscsi("iqn", true), false},
      {"iscsi existing read-write", Iscsi("iqn", true), Iscsi("iqn"), true},
      {"rbd shared monitor", Rbd({"a", "b"}, "p", "img"), Rbd({"b", "c"}, "p", "img"), true},
      {"rbd both read-only", Rbd({"a"}, "p", "img", true), Rbd({"a"}, "p", "img", true), false},
      {"rbd other pool", Rbd({"a"}, "p", "img"), Rbd({"a"}, "q", "img"), false},
      {"rbd other image", Rbd({"a"}, "p", "img"), Rbd({"a"}, "p", "img2"), false},
      {"different types, same id", Gce("foo"), Aws("foo"), false},
      {"azure disks are not checked here", DiskVolume(InlineDiskType::kAzureDisk, "d"),
       DiskVolume(InlineDiskType::kAzureDisk, "d"), false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsDiskConflict(*c.disk.disk, *c.existing.disk), c.want);
  }
}

// Upstream's TestAccessModeConflicts.
TEST(VolumeRestrictionsTest, AccessModeConflicts) {
  auto pod_with_one_pvc = MakePod().Name("pod-with-one-pvc").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto pod_with_two_pvcs =
      MakePod().Name("pod-with-two-pvcs").PVC("claim-with-rwop-1").PVC("claim-with-rwop-2").Node("node-1").Obj();
  auto pod_with_one_conflict = MakePod().Name("pod-with-one-conflict").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto pod_with_two_conflicts =
      MakePod().Name("pod-with-two-conflicts").PVC("claim-with-rwop-1").PVC("claim-with-rwop-2").Node("node-1").Obj();
  auto pod_with_rwx = MakePod().Name("pod-with-rwx").PVC("claim-with-rwx").Node("node-1").Obj();
  auto node = MakeNode().Name("node-1").Obj();
  auto rwop1 = MakePVC().Name("claim-with-rwop-1").AccessModes({PersistentVolumeAccessMode::kReadWriteOncePod}).Obj();
  auto rwop2 = MakePVC().Name("claim-with-rwop-2").AccessModes({PersistentVolumeAccessMode::kReadWriteOncePod}).Obj();
  auto rwx = MakePVC().Name("claim-with-rwx").AccessModes({PersistentVolumeAccessMode::kReadWriteMany}).Obj();

  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> existing_pods;
    std::vector<std::shared_ptr<api::Node>> existing_nodes;
    std::vector<std::shared_ptr<api::PersistentVolumeClaim>> existing_claims;
    Status want_pre_filter;
    Status want_filter;
  };
  const Status rwop_conflict = Status::Unschedulable(std::string(kErrReasonReadWriteOncePodConflict));
  const std::vector<Case> cases = {
      {"nothing", MakePod().Obj(), {}, {}, {}, Status::Skip(), {}},
      {"failed to get PVC",
       pod_with_one_pvc,
       {},
       {},
       {},
       Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"claim-with-rwop-1\" not found"),
       {}},
      {"no access mode conflict", pod_with_one_pvc, {pod_with_rwx}, {node}, {rwop1, rwx}, Status::Skip(), {}},
      {"access mode conflict, unschedulable",
       pod_with_one_conflict,
       {pod_with_one_pvc, pod_with_rwx},
       {node},
       {rwop1, rwx},
       {},
       rwop_conflict},
      {"two conflicts, unschedulable",
       pod_with_two_conflicts,
       {pod_with_two_pvcs, pod_with_rwx},
       {node},
       {rwop1, rwop2, rwx},
       {},
       rwop_conflict},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f(c.existing_nodes, c.existing_pods, c.existing_claims);
    auto pod = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    auto [result, pre_status] = f.PreFilter(state, *pod);
    EXPECT_EQ(pre_status, c.want_pre_filter);
    if (!pre_status.IsSuccess()) continue;
    auto node_info = testing::MakeNodeInfo(node, c.existing_pods);
    EXPECT_EQ(f.pl->Filter(state, *pod, *node_info), c.want_filter);
  }
}

// A claim used by a pod on another node conflicts too: ReadWriteOncePod is cluster-wide.
TEST(VolumeRestrictionsTest, ReadWriteOncePodConflictIsClusterWide) {
  auto user = MakePod().Name("user").PVC("data").Node("node-2").Obj();
  auto other_ns_user = MakePod().Namespace("other").Name("user").PVC("data").Node("node-1").Obj();
  auto rwop = MakePVC().Name("data").AccessModes({PersistentVolumeAccessMode::kReadWriteOncePod}).Obj();
  auto node1 = MakeNode().Name("node-1").Obj();
  auto node2 = MakeNode().Name("node-2").Obj();
  auto pod = MakePod().Name("p").PVC("data").Info();
  {
    Fixture f({node1, node2}, {user}, {rwop});
    framework::CycleState state;
    ASSERT_TRUE(f.PreFilter(state, *pod).second.IsSuccess());
    EXPECT_EQ(f.pl->Filter(state, *pod, *f.handle.snapshot().Get("node-1")).code(), framework::Code::kUnschedulable);
  }
  {
    // The same claim name in another namespace is another claim.
    Fixture f({node1, node2}, {other_ns_user}, {rwop});
    framework::CycleState state;
    EXPECT_TRUE(f.PreFilter(state, *pod).second.IsSkip());
  }
  {
    // An ephemeral volume's claim is the pod's own: nothing to look up.
    Fixture f({node1}, {}, {});
    framework::CycleState state;
    EXPECT_TRUE(f.PreFilter(state, *MakePod().EphemeralVolume("scratch").Info()).second.IsSkip());
  }
}

// PreFilterExtensions: preemption removing the pod that holds the claim makes room.
TEST(VolumeRestrictionsTest, AddAndRemovePod) {
  auto holder = MakePod().Name("holder").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto other_ns = MakePod().Namespace("other").Name("holder").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto node = MakeNode().Name("node-1").Obj();
  auto rwop = MakePVC().Name("claim-with-rwop-1").AccessModes({PersistentVolumeAccessMode::kReadWriteOncePod}).Obj();
  Fixture f({node}, {holder}, {rwop});
  auto pod = MakePod().Name("pod").PVC("claim-with-rwop-1").Info();
  auto holder_info = framework::PodInfo::Create(holder);
  auto other_ns_info = framework::PodInfo::Create(other_ns);
  const framework::NodeInfo& node_info = *f.handle.snapshot().Get("node-1");

  framework::CycleState state;
  ASSERT_TRUE(f.PreFilter(state, *pod).second.IsSuccess());
  ASSERT_EQ(f.pl->GetPreFilterExtensions(), f.pl);
  EXPECT_EQ(f.pl->Filter(state, *pod, node_info).code(), framework::Code::kUnschedulable);

  ASSERT_TRUE(f.pl->RemovePod(state, *pod, *holder_info, node_info).IsSuccess());
  EXPECT_TRUE(f.pl->Filter(state, *pod, node_info).IsSuccess());
  // A clone made now keeps the count it was made with.
  auto clone = state.Clone();
  ASSERT_TRUE(f.pl->RemovePod(state, *pod, *other_ns_info, node_info).IsSuccess());
  EXPECT_TRUE(f.pl->Filter(state, *pod, node_info).IsSuccess());
  ASSERT_TRUE(f.pl->AddPod(state, *pod, *other_ns_info, node_info).IsSuccess());
  ASSERT_TRUE(f.pl->AddPod(state, *pod, *holder_info, node_info).IsSuccess());
  EXPECT_EQ(f.pl->Filter(state, *pod, node_info).code(), framework::Code::kUnschedulable);
  EXPECT_TRUE(f.pl->Filter(*clone, *pod, node_info).IsSuccess());

  framework::CycleState empty;
  EXPECT_EQ(f.pl->AddPod(empty, *pod, *holder_info, node_info),
            Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState"));
  EXPECT_EQ(f.pl->RemovePod(empty, *pod, *holder_info, node_info),
            Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState"));
}

TEST(VolumeRestrictionsTest, FilterWithoutPreFilter) {
  Fixture f({}, {});
  framework::CycleState state;
  auto node_info = testing::MakeNodeInfo(MakeNode().Obj(), {MakePod().Volume(Gce("foo")).Obj()});
  EXPECT_EQ(f.pl->Filter(state, *MakePod().Info(), *node_info),
            Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState"));
  // As upstream, a disk conflict is found before the missing state.
  EXPECT_EQ(f.pl->Filter(state, *MakePod().Volume(Gce("foo")).Info(), *node_info),
            Status::Unschedulable(std::string(kErrReasonDiskConflict)));
}

TEST(VolumeRestrictionsTest, EventsToRegister) {
  Fixture f({}, {});
  auto events = f.pl->EventsToRegister();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kAssignedPod);
  EXPECT_EQ(events[0].event.action, framework::action::kDelete);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, framework::action::kAdd);
  EXPECT_FALSE(events[1].hint);
  EXPECT_EQ(events[2].event.resource, framework::EventResource::kPersistentVolumeClaim);
  EXPECT_EQ(events[2].event.action, framework::action::kAdd);
  EXPECT_TRUE(events[2].hint);
}

// Upstream's Test_isSchedulableAfterPodDeleted, and the namespace rules.
TEST(VolumeRestrictionsTest, IsSchedulableAfterPodDeleted) {
  const api::Volume gce = Gce("foo"), gce2 = Gce("bar");
  const api::Volume aws = Aws("foo"), aws2 = Aws("bar");
  const api::Volume rbd = Rbd({"a", "b"}, "foo", "bar"), rbd2 = Rbd({"c", "d"}, "foo", "bar");
  const api::Volume iscsi = Iscsi("iqn.2016-12.server:storage.target01");
  const api::Volume iscsi2 = Iscsi("iqn.2017-12.server:storage.target01");
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::Pod> deleted;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"queue-new-object-gcedisk-conflict", MakePod().Volume(gce).Obj(), MakePod().Volume(gce).Obj(),
       QueueingHint::kQueue},
      {"skip-new-object-gcedisk-no-conflict", MakePod().Volume(gce).Obj(), MakePod().Volume(gce2).Obj(),
       QueueingHint::kSkip},
      {"queue-new-object-awsdisk-conflict", MakePod().Volume(aws).Obj(), MakePod().Volume(aws).Obj(),
       QueueingHint::kQueue},
      {"skip-new-object-awsdisk-no-conflict", MakePod().Volume(aws).Obj(), MakePod().Volume(aws2).Obj(),
       QueueingHint::kSkip},
      {"queue-new-object-rbddisk-conflict", MakePod().Volume(rbd).Obj(), MakePod().Volume(rbd).Obj(),
       QueueingHint::kQueue},
      {"skip-new-object-rbddisk-no-conflict", MakePod().Volume(rbd).Obj(), MakePod().Volume(rbd2).Obj(),
       QueueingHint::kSkip},
      {"queue-new-object-iscsidisk-conflict", MakePod().Volume(iscsi).Obj(), MakePod().Volume(iscsi).Obj(),
       QueueingHint::kQueue},
      {"skip-new-object-iscsidisk-no-conflict", MakePod().Volume(iscsi).Obj(), MakePod().Volume(iscsi2).Obj(),
       QueueingHint::kSkip},
      {"queue-has-same-claim", MakePod().Name("pod1").PVC("claim-rwop").Obj(),
       MakePod().Name("pod2").PVC("claim-rwop").Obj(), QueueingHint::kQueue},
      {"skip-no-same-claim", MakePod().Name("pod1").PVC("claim-1-rwop").Obj(),
       MakePod().Name("pod2").PVC("claim-2-rwop").Obj(), QueueingHint::kSkip},
      // kubesched: disks are not namespaced, claims are.
      {"queue-disk-conflict-other-namespace", MakePod().Volume(gce).Obj(),
       MakePod().Namespace("other").Volume(gce).Obj(), QueueingHint::kQueue},
      {"skip-same-claim-name-other-namespace", MakePod().Name("pod1").PVC("claim-rwop").Obj(),
       MakePod().Namespace("other").Name("pod2").PVC("claim-rwop").Obj(), QueueingHint::kSkip},
      {"skip-unrelated-pod", MakePod().Volume(gce).PVC("claim").Obj(), MakePod().Node("node-1").Obj(),
       QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_pod = c.deleted.get()};
    EXPECT_EQ(IsSchedulableAfterPodDeleted(*c.pod, event), c.want);
  }
  EXPECT_EQ(IsSchedulableAfterPodDeleted(*MakePod().Obj(), {}), QueueingHint::kQueue);
}

// Upstream's Test_isSchedulableAfterPersistentVolumeClaimChange.
TEST(VolumeRestrictionsTest, IsSchedulableAfterPersistentVolumeClaimAdded) {
  auto pod_with_one_pvc = MakePod().Name("pod-with-one-pvc").PVC("claim-with-rwx-1").Node("node-1").Obj();
  auto pod_with_two_pvcs =
      MakePod().Name("pod-with-two-pvcs").PVC("claim-with-rwx-1").PVC("claim-with-rwx-2").Node("node-1").Obj();
  auto pod_with_other_namespace = MakePod()
                                      .Namespace("kube-system")
                                      .Name("pod-with-one-pvc")
                                      .PVC("claim-with-rwx-1")
                                      .Node("claim-with-rwx-2")
                                      .Obj();
  auto pvc1 = MakePVC().Name("claim-with-rwx-1").AccessModes({PersistentVolumeAccessMode::kReadWriteMany}).Obj();
  auto pvc2 = MakePVC().Name("claim-with-rwx-2").AccessModes({PersistentVolumeAccessMode::kReadWriteMany}).Obj();
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    api::StorageObject added;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"queue-new-object-pvc-belong-pod", pod_with_two_pvcs, pvc1, QueueingHint::kQueue},
      {"skip-new-object-unused", pod_with_one_pvc, pvc2, QueueingHint::kSkip},
      {"skip-nil-old-object", pod_with_one_pvc, pvc2, QueueingHint::kSkip},
      {"skip-new-object-not-belong-pod", pod_with_one_pvc, pvc2, QueueingHint::kSkip},
      {"skip-new-object-namespace-not-equal-pod", pod_with_other_namespace, pvc1, QueueingHint::kSkip},
      // kubesched: an object of another kind cannot be judged, so the pod is queued.
      {"queue-not-a-claim", pod_with_one_pvc, testing::MakeStorageClass().Name("sc").Obj(), QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.new_storage = &c.added};
    EXPECT_EQ(IsSchedulableAfterPersistentVolumeClaimAdded(*c.pod, event), c.want);
  }
}

}  // namespace
}  // namespace kubesched::plugins::volume_restrictions
