// The volume binder on its own, replaying upstream's binder_test.go: FindPodVolumes (static
// binding, dynamic provisioning, CSI migration, storage capacity), AssumePodVolumes and its
// revert, the API writes, checkBindings and BindPodVolumes.

#include <gtest/gtest.h>

#include <thread>

#include "plugins/volume_binding/binder.h"
#include "plugins/volume_binding/volume_binding_test_util.h"
#include "testing/printers.h"

namespace kubesched::plugins::volume_binding {
namespace {

using namespace test_env;  // NOLINT(google-build-using-namespace): the fixtures
using Claim = std::shared_ptr<api::PersistentVolumeClaim>;
using Volume = std::shared_ptr<api::PersistentVolume>;

api::InlineDisk Disk(api::InlineDiskType type, std::string id) {
  api::InlineDisk disk;
  disk.type = type;
  disk.id = std::move(id);
  return disk;
}

api::Volume EmptyDir(std::string name) {
  api::Volume v;
  v.name = std::move(name);
  return v;
}

// upstream's package-level fixtures.
struct Fixtures {
  Claim unbound_pvc = MakeTestPVC("unbound-pvc", "1G", "", ClaimState::kUnbound, "", "1", kWaitClass);
  Claim unbound_pvc2 = MakeTestPVC("unbound-pvc2", "5G", "", ClaimState::kUnbound, "", "1", kWaitClass);
  Claim prebound_pvc = MakeTestPVC("prebound-pvc", "1G", "", ClaimState::kPrebound, "pv-node1a", "1", kWaitClass);
  Claim prebound_pvc_node1a = MakeTestPVC("unbound-pvc", "1G", "", ClaimState::kPrebound, "pv-node1a", "1", kWaitClass);
  Claim bound_pvc = MakeTestPVC("bound-pvc", "1G", "", ClaimState::kBound, "pv-bound", "1", kWaitClass);
  Claim bound_pvc_node1a = MakeTestPVC("unbound-pvc", "1G", "", ClaimState::kBound, "pv-node1a", "1", kWaitClass);
  Claim immediate_unbound_pvc =
      MakeTestPVC("immediate-unbound-pvc", "1G", "", ClaimState::kUnbound, "", "1", kImmediateClass);
  Claim immediate_bound_pvc =
      MakeTestPVC("immediate-bound-pvc", "1G", "", ClaimState::kBound, "pv-bound-immediate", "1", kImmediateClass);

  Claim provisioned_pvc =
      MakeTestPVC("provisioned-pvc", "1Gi", "", ClaimState::kUnbound, "", "1", kWaitClassWithProvisioner);
  Claim provisioned_pvc2 =
      MakeTestPVC("provisioned-pvc2", "1Gi", "", ClaimState::kUnbound, "", "1", kWaitClassWithProvisioner);
  Claim provisioned_pvc_higher_version =
      MakeTestPVC("provisioned-pvc2", "1Gi", "", ClaimState::kUnbound, "", "2", kWaitClassWithProvisioner);
  Claim provisioned_pvc_bound =
      MakeTestPVC("provisioned-pvc", "1Gi", "", ClaimState::kBound, "pv-bound", "1", kWaitClassWithProvisioner);
  Claim no_provisioner_pvc = MakeTestPVC("no-provisioner-pvc", "1Gi", "", ClaimState::kUnbound, "", "1", kWaitClass);
  Claim topo_mismatch_pvc =
      MakeTestPVC("topo-mismatch-pvc", "1Gi", "", ClaimState::kUnbound, "", "1", kTopoMismatchClass);
  Claim selected_node_pvc =
      MakeTestPVC("provisioned-pvc", "1Gi", "node1", ClaimState::kSelectedNode, "", "1", kWaitClassWithProvisioner);

  Claim bound_migration_pvc =
      MakeTestPVC("pvc-migration-bound", "1G", "", ClaimState::kBound, "pv-migration-bound", "1", kWaitClass);
  Claim prov_migration_pvc_bound = MakeTestPVC("pvc-migration-provisioned", "1Gi", "", ClaimState::kBound,
                                               "pv-migration-bound", "1", kWaitClassWithProvisioner);

  Volume pv_node1a = MakeTestPV("pv-node1a", "node1", "5G", "1", nullptr, kWaitClass);
  Volume pv_node1b = MakeTestPV("pv-node1b", "node1", "10G", "1", nullptr, kWaitClass);
  Volume pv_node1c = MakeTestPV("pv-node1b", "node1", "5G", "1", nullptr, kWaitClass);
  Volume pv_node2 = MakeTestPV("pv-node2", "node2", "1G", "1", nullptr, kWaitClass);
  Volume pv_bound = MakeTestPV("pv-bound", "node1", "1G", "1", bound_pvc, kWaitClass);
  Volume pv_node1a_bound = MakeTestPV("pv-node1a", "node1", "5G", "1", unbound_pvc, kWaitClass);
  Volume pv_node1b_bound = MakeTestPV("pv-node1b", "node1", "10G", "1", unbound_pvc2, kWaitClass);
  Volume pv_bound_immediate =
      MakeTestPV("pv-bound-immediate", "node1", "1G", "1", immediate_bound_pvc, kImmediateClass);
  Volume pv_bound_immediate_node2 =
      MakeTestPV("pv-bound-immediate", "node2", "1G", "1", immediate_bound_pvc, kImmediateClass);

  // In-tree volumes (GCE PD migrates; RBD never does) with zone labels and no node affinity,
  // which the translation writes.
  Volume MigrationPV(const Claim& claim, bool migrated) const {
    auto pv = MakeTestPV("pv-migration-bound", "node1", "1G", "1", claim, kWaitClass);
    pv->node_affinity.reset();
    pv->metadata.labels = api::Labels{{std::string(api::kLabelFailureDomainZone), "us-east-1"},
                                      {std::string(api::kLabelFailureDomainRegion), "us-east-1a"}};
    pv->in_tree = Disk(migrated ? api::InlineDiskType::kGCEPersistentDisk : api::InlineDiskType::kRBD, "test-disk");
    return pv;
  }
  Volume migration_pv_bound = MigrationPV(bound_migration_pvc, true);
  Volume migration_pv_bound_to_unbound = MigrationPV(unbound_pvc, true);
  Volume nonmigration_pv_bound_to_unbound = MigrationPV(unbound_pvc, false);

  std::shared_ptr<api::Node> node1 = MakeNode("node1", {{kNodeLabelKey, "node1"}});
  std::shared_ptr<api::Node> node2 = MakeNode("node2", {{kNodeLabelKey, "node2"}});
  std::shared_ptr<api::Node> node1_no_labels = MakeNode("node1", {});
  std::shared_ptr<api::Node> node1_zone1 = MakeNode("node1", {{"topology.gke.io/zone", "us-east-1"}});
  std::shared_ptr<api::Node> node1_zone2 = MakeNode("node1", {{"topology.gke.io/zone", "us-east-2"}});
};

// A claim with its selected-node annotation set to node1 (upstream's addProvisionAnn).
Claim WithSelectedNode(const Claim& claim, std::string node = kNodeLabelValue) {
  auto c = std::make_shared<api::PersistentVolumeClaim>(*claim);
  c->metadata.annotations.Set(std::string(api::kAnnotationSelectedNode), std::move(node));
  return c;
}

// A pod in testns with a generic ephemeral volume, and its claim (owned by the pod or not).
struct Ephemeral {
  std::shared_ptr<api::Pod> pod{};
  Claim claim{};
};
Ephemeral MakeEphemeral(const std::string& volume, const std::string& claim_volume, bool owned) {
  Ephemeral e;
  e.pod = testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1").EphemeralVolume(volume).Obj();
  e.claim = MakeTestPVC("test-pod-" + claim_volume, "1G", "", ClaimState::kBound, "pv-bound", "1", kImmediateClass);
  if (owned) e.claim->metadata.owner_references.push_back({"v1", "Pod", "test-pod", e.pod->metadata.uid, true});
  return e;
}

std::string BindingsString(const std::vector<BindingInfo>& bindings) {
  std::string out;
  for (const auto& b : bindings) out += b.pvc->metadata.name + "->" + b.pv->metadata.name + " ";
  return out;
}

std::string ProvisionsString(const std::vector<DynamicProvision>& provisions) {
  std::string out;
  for (const auto& p : provisions) {
    out += p.pvc->metadata.name;
    if (p.node_capacity) out += "@" + p.node_capacity->metadata.name;
    out += " ";
  }
  return out;
}

// upstream's findPodVolumes: GetPodVolumeClaims, refuse unbound immediate claims, FindPodVolumes.
std::expected<FindResult, std::string> FindVolumes(const VolumeBinder& binder, const api::Pod& pod,
                                                   const api::Node& node) {
  auto claims = binder.GetPodVolumeClaims(pod);
  if (!claims) return std::unexpected(claims.error());
  if (!claims->unbound_claims_immediate.empty()) {
    return std::unexpected(std::string("pod has unbound immediate PersistentVolumeClaims"));
  }
  return binder.FindPodVolumes(pod, *claims, node);
}

struct FindCase {
  std::string name{};
  std::vector<Volume> pvs{};
  std::vector<Claim> pod_pvcs{};
  std::optional<std::vector<Claim>> cache_pvcs{};  // nullopt: the pod's claims
  std::shared_ptr<api::Pod> pod{};                 // null: a pod with pod_pvcs
  std::string want_bindings{};
  std::string want_provisions{};
  ConflictReasons want_reasons = 0;
  bool should_fail = false;
  bool needs_capacity = false;
};

void RunFindCase(const FindCase& c, const std::shared_ptr<api::CSIDriver>& driver,
                 const std::shared_ptr<api::Node>& node,
                 const std::vector<std::shared_ptr<api::CSINode>>& csi_nodes = {}) {
  VolumeTestHandle handle({node});
  handle.Add(Classes());
  handle.Add(c.pvs);
  handle.Add(c.cache_pvcs ? *c.cache_pvcs : c.pod_pvcs);
  handle.Add(csi_nodes);
  if (driver) handle.Add(driver);
  VolumeBinder binder(handle, 10);
  auto pod = c.pod ? c.pod : MakePodWithClaims(c.pod_pvcs);

  auto got = FindVolumes(binder, *pod, *node);
  if (c.should_fail) {
    EXPECT_FALSE(got.has_value());
    return;
  }
  ASSERT_TRUE(got.has_value()) << got.error();
  ConflictReasons want_reasons = c.want_reasons;
  std::string want_provisions = c.want_provisions;
  if (c.needs_capacity && driver && driver->storage_capacity) {
    // Without CSIStorageCapacity objects, provisioning is blocked.
    want_reasons |= kNotEnoughSpace;
    want_provisions.clear();
  }
  EXPECT_EQ(ReasonMessages(got->reasons), ReasonMessages(want_reasons));
  EXPECT_EQ(BindingsString(got->volumes.static_bindings), c.want_bindings);
  EXPECT_EQ(ProvisionsString(got->volumes.dynamic_provisions), want_provisions);
}

std::vector<std::pair<std::string, std::shared_ptr<api::CSIDriver>>> DriverVariants() {
  return {{"no CSIDriver", nullptr},
          {"CSIDriver with capacity tracking", testing::MakeCSIDriver(kProvisioner, true)},
          {"CSIDriver without capacity tracking", testing::MakeCSIDriver(kProvisioner, false)}};
}

// upstream's TestFindPodVolumesWithoutProvisioning.
TEST(VolumeBinderTest, FindPodVolumesWithoutProvisioning) {
  Fixtures f;
  auto generic_ok = MakeEphemeral("test-volume", "test-volume", true);
  auto generic_wrong = MakeEphemeral("test-volume", "test-volume", false);
  auto generic_none = MakeEphemeral("no-such-pvc", "test-volume", true);
  auto pv_bound_generic = MakeTestPV("pv-bound", "node1", "1G", "1", generic_ok.claim, kWaitClass);
  auto empty_dir =
      testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1").Volume(EmptyDir("tmp")).Obj();
  const std::vector<FindCase> cases = {
      {.name = "no-volumes", .pod = testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1").Obj()},
      {.name = "no-pvcs", .pod = empty_dir},
      {.name = "pvc-not-found", .pod_pvcs = {f.bound_pvc}, .cache_pvcs = std::vector<Claim>{}, .should_fail = true},
      {.name = "bound-pvc", .pvs = {f.pv_bound}, .pod_pvcs = {f.bound_pvc}},
      {.name = "bound-pvc,pv-not-exists", .pod_pvcs = {f.bound_pvc}, .want_reasons = kPVNotExist},
      {.name = "prebound-pvc", .pvs = {f.pv_node1a_bound}, .pod_pvcs = {f.prebound_pvc}, .should_fail = true},
      {.name = "unbound-pvc,pv-same-node",
       .pvs = {f.pv_node2, f.pv_node1a, f.pv_node1b},
       .pod_pvcs = {f.unbound_pvc},
       .want_bindings = "unbound-pvc->pv-node1a "},
      {.name = "unbound-pvc,pv-different-node",
       .pvs = {f.pv_node2},
       .pod_pvcs = {f.unbound_pvc},
       .want_reasons = kBindConflict},
      {.name = "two-unbound-pvcs",
       .pvs = {f.pv_node1a, f.pv_node1b},
       .pod_pvcs = {f.unbound_pvc, f.unbound_pvc2},
       .want_bindings = "unbound-pvc->pv-node1a unbound-pvc2->pv-node1b "},
      {.name = "two-unbound-pvcs,order-by-size",
       .pvs = {f.pv_node1a, f.pv_node1b},
       .pod_pvcs = {f.unbound_pvc2, f.unbound_pvc},
       .want_bindings = "unbound-pvc->pv-node1a unbound-pvc2->pv-node1b "},
      {.name = "two-unbound-pvcs,partial-match",
       .pvs = {f.pv_node1a},
       .pod_pvcs = {f.unbound_pvc, f.unbound_pvc2},
       .want_bindings = "unbound-pvc->pv-node1a ",
       .want_reasons = kBindConflict},
      {.name = "one-bound,one-unbound",
       .pvs = {f.pv_bound, f.pv_node1a},
       .pod_pvcs = {f.unbound_pvc, f.bound_pvc},
       .want_bindings = "unbound-pvc->pv-node1a "},
      {.name = "one-bound,one-unbound,no-match",
       .pvs = {f.pv_bound, f.pv_node2},
       .pod_pvcs = {f.unbound_pvc, f.bound_pvc},
       .want_reasons = kBindConflict},
      {.name = "one-prebound,one-unbound",
       .pvs = {f.pv_node1a, f.pv_node1b},
       .pod_pvcs = {f.unbound_pvc, f.prebound_pvc},
       .should_fail = true},
      {.name = "immediate-bound-pvc", .pvs = {f.pv_bound_immediate}, .pod_pvcs = {f.immediate_bound_pvc}},
      {.name = "immediate-bound-pvc-wrong-node",
       .pvs = {f.pv_bound_immediate_node2},
       .pod_pvcs = {f.immediate_bound_pvc},
       .want_reasons = kNodeConflict},
      {.name = "immediate-unbound-pvc", .pod_pvcs = {f.immediate_unbound_pvc}, .should_fail = true},
      {.name = "immediate-unbound-pvc,delayed-mode-bound",
       .pvs = {f.pv_bound},
       .pod_pvcs = {f.immediate_unbound_pvc, f.bound_pvc},
       .should_fail = true},
      {.name = "immediate-unbound-pvc,delayed-mode-unbound",
       .pod_pvcs = {f.immediate_unbound_pvc, f.unbound_pvc},
       .should_fail = true},
      {.name = "generic-ephemeral,no-pvc", .pod = generic_none.pod, .should_fail = true},
      {.name = "generic-ephemeral,with-pvc",
       .pvs = {pv_bound_generic},
       .cache_pvcs = std::vector<Claim>{generic_ok.claim},
       .pod = generic_ok.pod},
      {.name = "generic-ephemeral,wrong-pvc",
       .pvs = {pv_bound_generic},
       .cache_pvcs = std::vector<Claim>{generic_wrong.claim},
       .pod = generic_wrong.pod,
       .should_fail = true},
  };
  for (const auto& [description, driver] : DriverVariants()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(description + ": " + c.name);
      RunFindCase(c, driver, f.node1);
    }
  }
}

// upstream's TestFindPodVolumesWithProvisioning.
TEST(VolumeBinderTest, FindPodVolumesWithProvisioning) {
  Fixtures f;
  const std::vector<FindCase> cases = {
      {.name = "one-provisioned",
       .pod_pvcs = {f.provisioned_pvc},
       .want_provisions = "provisioned-pvc ",
       .needs_capacity = true},
      {.name = "two-unbound-pvcs,one-matched,one-provisioned",
       .pvs = {f.pv_node1a},
       .pod_pvcs = {f.unbound_pvc, f.provisioned_pvc},
       .want_bindings = "unbound-pvc->pv-node1a ",
       .want_provisions = "provisioned-pvc ",
       .needs_capacity = true},
      {.name = "one-bound,one-provisioned",
       .pvs = {f.pv_bound},
       .pod_pvcs = {f.bound_pvc, f.provisioned_pvc},
       .want_provisions = "provisioned-pvc ",
       .needs_capacity = true},
      {.name = "one-binding,one-selected-node",
       .pvs = {f.pv_bound},
       .pod_pvcs = {f.bound_pvc, f.selected_node_pvc},
       .want_provisions = "provisioned-pvc ",
       .needs_capacity = true},
      {.name = "immediate-unbound-pvc", .pod_pvcs = {f.immediate_unbound_pvc}, .should_fail = true},
      {.name = "one-immediate-bound,one-provisioned",
       .pvs = {f.pv_bound_immediate},
       .pod_pvcs = {f.immediate_bound_pvc, f.provisioned_pvc},
       .want_provisions = "provisioned-pvc ",
       .needs_capacity = true},
      {.name = "invalid-provisioner", .pod_pvcs = {f.no_provisioner_pvc}, .want_reasons = kBindConflict},
      {.name = "volume-topology-unsatisfied", .pod_pvcs = {f.topo_mismatch_pvc}, .want_reasons = kBindConflict},
  };
  for (const auto& [description, driver] : DriverVariants()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(description + ": " + c.name);
      RunFindCase(c, driver, f.node1);
    }
  }
}

TEST(VolumeBinderTest, FindPodVolumesSelectedNodeElsewhere) {
  Fixtures f;
  // Provisioning was started for another node: only that node can take the claim.
  FindCase c{.name = "selected-node-other", .pod_pvcs = {f.selected_node_pvc}, .want_reasons = kBindConflict};
  RunFindCase(c, nullptr, f.node2);
}

// upstream's TestFindPodVolumesWithCSIMigration: the bound in-tree volume's zone labels become
// node affinity on the CSI driver's topology key when the node's CSINode says it migrated.
TEST(VolumeBinderTest, FindPodVolumesWithCSIMigration) {
  Fixtures f;
  auto migrated = MakeCSINode("node1", "kubernetes.io/gce-pd");
  auto not_migrated = MakeCSINode("node1", "");
  struct Case {
    std::string name{};
    std::shared_ptr<api::Node> node{};
    std::vector<std::shared_ptr<api::CSINode>> csi_nodes{};
    ConflictReasons want_reasons = 0;
  };
  const std::vector<Case> cases = {
      {"pvc-bound", f.node1_zone1, {migrated}},
      {"pvc-bound,csinode-not-migrated", f.node1_zone1, {not_migrated}},
      {"pvc-bound,missing-csinode", f.node1_zone1, {}},
      {"pvc-bound,node-different-zone", f.node1_zone2, {migrated}, kNodeConflict},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FindCase fc{.name = c.name,
                .pvs = {f.migration_pv_bound},
                .pod_pvcs = {f.bound_migration_pvc},
                .want_reasons = c.want_reasons};
    RunFindCase(fc, nullptr, c.node, c.csi_nodes);
  }
}

// upstream's TestCapacity, with the driver opting into capacity tracking or not.
TEST(VolumeBinderTest, Capacity) {
  Fixtures f;
  auto network_attached = MakeCapacity("net", kWaitClassWithProvisioner, nullptr, "1Gi", "");
  auto node1_capacity = MakeCapacity("net", kWaitClassWithProvisioner, f.node1.get(), "1Gi", "");
  struct Case {
    std::string name{};
    std::vector<std::shared_ptr<api::CSIStorageCapacity>> capacities{};
    std::string want_provisions{};  // with capacity tracking
    ConflictReasons want_reasons = 0;
  };
  const std::vector<Case> cases = {
      {"network-attached", {network_attached}, "provisioned-pvc@net "},
      {"local-storage", {node1_capacity}, "provisioned-pvc@net "},
      {"multiple",
       {MakeCapacity("net-a", kWaitClassWithProvisioner, f.node2.get(), "1Gi", ""),
        MakeCapacity("net-b", kWaitClassWithProvisioner, f.node1.get(), "1Gi", "")},
       "provisioned-pvc@net-b "},
      {"no-storage", {}, "", kNotEnoughSpace},
      {"wrong-node", {MakeCapacity("net", kWaitClassWithProvisioner, f.node2.get(), "1Gi", "")}, "", kNotEnoughSpace},
      {"wrong-storage-class", {MakeCapacity("net", kWaitClass, f.node1.get(), "1Gi", "")}, "", kNotEnoughSpace},
      {"insufficient-storage",
       {MakeCapacity("net", kWaitClassWithProvisioner, f.node1.get(), "1Mi", "")},
       "",
       kNotEnoughSpace},
      {"insufficient-volume-size",
       {MakeCapacity("net", kWaitClassWithProvisioner, f.node1.get(), "1Gi", "1Mi")},
       "",
       kNotEnoughSpace},
      {"zero-storage", {MakeCapacity("net", kWaitClassWithProvisioner, f.node1.get(), "0Mi", "")}, "", kNotEnoughSpace},
      {"zero-volume-size",
       {MakeCapacity("net", kWaitClassWithProvisioner, f.node1.get(), "", "0Mi")},
       "",
       kNotEnoughSpace},
      {"nil-storage", {MakeCapacity("net", kWaitClassWithProvisioner, f.node1.get(), "", "")}, "", kNotEnoughSpace},
  };
  for (bool opt_in : {true, false}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string("CSIDriver.StorageCapacity=") + (opt_in ? "true: " : "false: ") + c.name);
      VolumeTestHandle handle({f.node1});
      handle.Add(Classes());
      handle.Add(testing::MakeCSIDriver(kProvisioner, opt_in));
      handle.Add(c.capacities);
      handle.Add(f.provisioned_pvc);
      VolumeBinder binder(handle, 10);
      auto got = FindVolumes(binder, *MakePodWithClaims({f.provisioned_pvc}), *f.node1);
      ASSERT_TRUE(got.has_value()) << got.error();
      // Without the driver's opt-in, capacity is not checked (and not recorded).
      EXPECT_EQ(ReasonMessages(got->reasons), ReasonMessages(opt_in ? c.want_reasons : 0));
      EXPECT_EQ(ProvisionsString(got->volumes.dynamic_provisions),
                opt_in ? c.want_provisions : std::string("provisioned-pvc "));
    }
  }
}

// Smallest fitting volume, volume mode, selector, access modes, phase, deletion and pre-binding:
// upstream's FindMatchingVolume (component-helpers/storage/volume), through FindPodVolumes.
TEST(VolumeBinderTest, FindMatchingVolume) {
  auto claim = MakeTestPVC("claim", "5G", "", ClaimState::kUnbound, "", "1", kWaitClass);
  auto selector_claim = std::make_shared<api::PersistentVolumeClaim>(*claim);
  selector_claim->selector = api::LabelSelector{api::Labels{{"tier", "gold"}}, {}};
  auto rwx_claim = std::make_shared<api::PersistentVolumeClaim>(*claim);
  rwx_claim->access_modes = {api::PersistentVolumeAccessMode::kReadWriteMany};
  auto block_claim = std::make_shared<api::PersistentVolumeClaim>(*claim);
  block_claim->volume_mode = api::PersistentVolumeMode::kBlock;

  auto pv = [](std::string name, std::string size) {
    return MakeTestPV(std::move(name), "node1", std::move(size), "1", nullptr, kWaitClass);
  };
  auto small = pv("pv-small", "1G");
  auto fits = pv("pv-fits", "5G");
  auto large = pv("pv-large", "50G");
  auto gold = pv("pv-gold", "10G");
  gold->metadata.labels.Set("tier", "gold");
  auto rwx = pv("pv-rwx", "20G");
  rwx->access_modes = {api::PersistentVolumeAccessMode::kReadWriteMany};
  auto block = pv("pv-block", "30G");
  block->volume_mode = api::PersistentVolumeMode::kBlock;
  auto released = pv("pv-released", "5G");
  released->phase = api::PersistentVolumePhase::kReleased;
  auto deleting = pv("pv-deleting", "5G");
  deleting->metadata.deletion_timestamp_ns = 1;
  auto other_claim = pv("pv-other-claim", "5G");
  other_claim->claim_ref = api::ObjectReference{kNamespace, "someone-else", "uid-x"};
  auto prebound = pv("pv-prebound", "50G");
  prebound->claim_ref = api::ObjectReference{kNamespace, "claim", ""};
  prebound->phase = api::PersistentVolumePhase::kReleased;  // pre-bound volumes skip the phase check
  auto prebound_node2 = MakeTestPV("pv-prebound", "node2", "50G", "1", nullptr, kWaitClass);
  prebound_node2->claim_ref = api::ObjectReference{kNamespace, "claim", ""};
  auto other_class = MakeTestPV("pv-other-class", "node1", "5G", "1", nullptr, kWaitClassWithProvisioner);

  struct Case {
    std::string name{};
    Claim claim{};
    std::vector<Volume> pvs{};
    std::string want_bindings{};
  };
  const std::vector<Case> cases = {
      {"smallest that fits", claim, {large, small, fits, gold}, "claim->pv-fits "},
      {"too small", claim, {small}, ""},
      {"selector", selector_claim, {fits, gold}, "claim->pv-gold "},
      {"access modes", rwx_claim, {fits, rwx}, "claim->pv-rwx "},
      {"volume mode", block_claim, {fits, block}, "claim->pv-block "},
      {"not available", claim, {released, large}, "claim->pv-large "},
      {"being deleted", claim, {deleting, large}, "claim->pv-large "},
      {"claimed by another claim", claim, {other_claim, large}, "claim->pv-large "},
      {"pre-bound wins over smaller", claim, {fits, prebound}, "claim->pv-prebound "},
      {"pre-bound elsewhere: no match", claim, {fits, prebound_node2}, ""},
      {"other class", claim, {other_class}, ""},
  };
  Fixtures f;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    VolumeTestHandle handle({f.node1});
    handle.Add(Classes());
    handle.Add(c.pvs);
    handle.Add(c.claim);
    VolumeBinder binder(handle, 10);
    auto got = FindVolumes(binder, *MakePodWithClaims({c.claim}), *f.node1);
    ASSERT_TRUE(got.has_value()) << got.error();
    EXPECT_EQ(BindingsString(got->volumes.static_bindings), c.want_bindings);
    EXPECT_EQ(got->reasons, c.want_bindings.empty() ? kBindConflict : 0);
  }
}

// Claims of one class and one pod never share a volume; volumes assumed for another pod's claim
// are not offered again (upstream's TestFindAssumeVolumes).
TEST(VolumeBinderTest, FindAssumeVolumes) {
  Fixtures f;
  VolumeTestHandle handle({f.node1});
  handle.Add(Classes());
  handle.Add(std::vector<Volume>{f.pv_node2, f.pv_node1a, f.pv_node1c});
  handle.Add(f.unbound_pvc);
  VolumeBinder binder(handle, 10);
  auto pod = MakePodWithClaims({f.unbound_pvc});

  auto found = FindVolumes(binder, *pod, *f.node1);
  ASSERT_TRUE(found.has_value()) << found.error();
  ASSERT_EQ(found->reasons, 0);
  PodVolumes volumes = found->volumes;
  auto all_bound = binder.AssumePodVolumes(*pod, "node1", volumes);
  ASSERT_TRUE(all_bound.has_value()) << all_bound.error();
  EXPECT_FALSE(*all_bound);
  const std::string chosen = volumes.static_bindings.at(0).pv->metadata.name;
  auto assumed = handle.storage().Volume(chosen);
  ASSERT_TRUE(assumed->claim_ref.has_value());
  EXPECT_EQ(assumed->claim_ref->name, "unbound-pvc");

  // The same pod finds the volume assumed for its claim again (it is pre-bound to it now).
  for (int i = 0; i < 10; ++i) {
    auto again = FindVolumes(binder, *pod, *f.node1);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(BindingsString(again->volumes.static_bindings), "unbound-pvc->" + chosen + " ");
  }
  // Another claim of the same class gets the other volume.
  auto other = MakeTestPVC("other-pvc", "1G", "", ClaimState::kUnbound, "", "1", kWaitClass);
  other->metadata.uid = "other-uid";
  handle.Add(other);
  auto other_found = FindVolumes(binder, *MakePodWithClaims({other}), *f.node1);
  ASSERT_TRUE(other_found.has_value());
  ASSERT_EQ(other_found->volumes.static_bindings.size(), 1u);
  EXPECT_NE(other_found->volumes.static_bindings[0].pv->metadata.name, chosen);
}

// upstream's TestAssumePodVolumes.
TEST(VolumeBinderTest, AssumePodVolumes) {
  Fixtures f;
  struct Case {
    std::string name{};
    std::vector<Claim> pod_pvcs{};
    std::vector<Volume> pvs{};
    std::vector<BindingInfo> bindings{};
    std::vector<DynamicProvision> provisions{};
    bool should_fail = false;
    bool want_all_bound = false;
    std::string want_provisions{};
  };
  auto bind = [](const Claim& c, const Volume& v) { return BindingInfo{c, v}; };
  const std::vector<Case> cases = {
      {.name = "all-bound", .pod_pvcs = {f.bound_pvc}, .pvs = {f.pv_bound}, .want_all_bound = true},
      {.name = "one-binding",
       .pod_pvcs = {f.unbound_pvc},
       .pvs = {f.pv_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a)}},
      {.name = "two-bindings",
       .pod_pvcs = {f.unbound_pvc, f.unbound_pvc2},
       .pvs = {f.pv_node1a, f.pv_node1b},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a), bind(f.unbound_pvc2, f.pv_node1b)}},
      {.name = "pv-already-bound",
       .pod_pvcs = {f.unbound_pvc},
       .pvs = {f.pv_node1a_bound},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)}},
      {.name = "tmpupdate-failed",
       .pod_pvcs = {f.unbound_pvc},
       .pvs = {f.pv_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a), bind(f.unbound_pvc2, f.pv_node1b)},
       .should_fail = true},
      {.name = "one-binding, one-pvc-provisioned",
       .pod_pvcs = {f.unbound_pvc, f.provisioned_pvc},
       .pvs = {f.pv_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a)},
       .provisions = {{f.provisioned_pvc, nullptr}},
       .want_provisions = "provisioned-pvc "},
      {.name = "one-binding, one-provision-tmpupdate-failed",
       .pod_pvcs = {f.unbound_pvc, f.provisioned_pvc_higher_version},
       .pvs = {f.pv_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a)},
       .provisions = {{f.provisioned_pvc2, nullptr}},
       .should_fail = true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    VolumeTestHandle handle({f.node1});
    handle.Add(Classes());
    handle.Add(c.pod_pvcs);
    handle.Add(c.pvs);
    VolumeBinder binder(handle, 10);
    auto pod = MakePodWithClaims(c.pod_pvcs);
    PodVolumes volumes{c.bindings, c.provisions};

    auto got = binder.AssumePodVolumes(*pod, "node1", volumes);
    StorageBackend& storage = handle.storage();
    if (c.should_fail) {
      EXPECT_FALSE(got.has_value());
      // Nothing stays assumed.
      for (const auto& b : c.bindings) {
        EXPECT_EQ(storage.Volume(b.pv->metadata.name), storage.ApiVolume(b.pv->metadata.name));
      }
      for (const auto& p : c.provisions) {
        auto claim = storage.Claim(kNamespace, p.pvc->metadata.name);
        ASSERT_NE(claim, nullptr);
        EXPECT_FALSE(claim->metadata.annotations.Has(api::kAnnotationSelectedNode));
      }
      continue;
    }
    ASSERT_TRUE(got.has_value()) << got.error();
    EXPECT_EQ(*got, c.want_all_bound);
    if (c.want_all_bound) continue;
    // The bindings now hold the volumes as assumed (claimRef set), and the cache serves them.
    ASSERT_EQ(volumes.static_bindings.size(), c.bindings.size());
    for (size_t i = 0; i < c.bindings.size(); ++i) {
      const auto& pv = volumes.static_bindings[i].pv;
      ASSERT_TRUE(pv->claim_ref.has_value());
      EXPECT_EQ(pv->claim_ref->name, c.bindings[i].pvc->metadata.name);
      EXPECT_EQ(pv->claim_ref->uid, "pvc-uid");
      EXPECT_EQ(*pv->metadata.annotations.Find(api::kAnnotationBoundByController), "yes");
      auto cached = storage.Volume(pv->metadata.name);
      ASSERT_TRUE(cached->claim_ref.has_value());
      EXPECT_EQ(cached->claim_ref->name, c.bindings[i].pvc->metadata.name);
    }
    EXPECT_EQ(ProvisionsString(volumes.dynamic_provisions), c.want_provisions);
    for (const auto& p : volumes.dynamic_provisions) {
      EXPECT_EQ(*p.pvc->metadata.annotations.Find(api::kAnnotationSelectedNode), "node1");
      auto cached = storage.Claim(kNamespace, p.pvc->metadata.name);
      EXPECT_EQ(*cached->metadata.annotations.Find(api::kAnnotationSelectedNode), "node1");
    }
  }
}

// upstream's TestRevertAssumedPodVolumes.
TEST(VolumeBinderTest, RevertAssumedPodVolumes) {
  Fixtures f;
  VolumeTestHandle handle({f.node1});
  handle.Add(Classes());
  handle.Add(std::vector<Claim>{f.unbound_pvc, f.provisioned_pvc});
  handle.Add(f.pv_node1a);
  VolumeBinder binder(handle, 10);
  auto pod = MakePodWithClaims({f.unbound_pvc, f.provisioned_pvc});
  PodVolumes volumes{{{f.unbound_pvc, f.pv_node1a}}, {{f.provisioned_pvc, nullptr}}};
  auto all_bound = binder.AssumePodVolumes(*pod, "node1", volumes);
  ASSERT_TRUE(all_bound.has_value());
  EXPECT_FALSE(*all_bound);
  EXPECT_TRUE(handle.storage().Volume("pv-node1a")->claim_ref.has_value());
  EXPECT_TRUE(
      handle.storage().Claim(kNamespace, "provisioned-pvc")->metadata.annotations.Has(api::kAnnotationSelectedNode));

  binder.RevertAssumedPodVolumes(volumes);
  EXPECT_EQ(handle.storage().Volume("pv-node1a"), handle.storage().ApiVolume("pv-node1a"));
  EXPECT_FALSE(handle.storage().Volume("pv-node1a")->claim_ref.has_value());
  EXPECT_FALSE(
      handle.storage().Claim(kNamespace, "provisioned-pvc")->metadata.annotations.Has(api::kAnnotationSelectedNode));
}

// upstream's TestBindAPIUpdate: what is written, and what is reverted when a write fails.
TEST(VolumeBinderTest, BindAPIUpdate) {
  Fixtures f;
  struct Case {
    std::string name{};
    std::vector<std::pair<Claim, Volume>> bindings{};  // claim, cached volume (assumed bound to it)
    std::vector<Claim> provisions{};
    int fail_after = -1;  // -1: no failure
    std::vector<std::string> want_writes{};
  };
  const std::vector<Case> cases = {
      {.name = "nothing-to-bind-empty"},
      {.name = "one-binding",
       .bindings = {{f.unbound_pvc, f.pv_node1a}},
       .want_writes = {"bind pv-node1a testns/unbound-pvc"}},
      {.name = "two-bindings",
       .bindings = {{f.unbound_pvc, f.pv_node1a}, {f.unbound_pvc2, f.pv_node1b}},
       .want_writes = {"bind pv-node1a testns/unbound-pvc", "bind pv-node1b testns/unbound-pvc2"}},
      {.name = "api-already-updated",
       .bindings = {{f.unbound_pvc, f.pv_node1a_bound}},
       .want_writes = {"bind pv-node1a testns/unbound-pvc"}},
      {.name = "api-update-failed",
       .bindings = {{f.unbound_pvc, f.pv_node1a}, {f.unbound_pvc2, f.pv_node1b}},
       .fail_after = 1,
       .want_writes = {"bind pv-node1a testns/unbound-pvc"}},
      {.name = "one-provisioned-pvc",
       .provisions = {f.provisioned_pvc},
       .want_writes = {"select testns/provisioned-pvc node1"}},
      {.name = "provision-api-update-failed",
       .provisions = {f.provisioned_pvc, f.provisioned_pvc2},
       .fail_after = 1,
       .want_writes = {"select testns/provisioned-pvc node1"}},
      {.name = "binding-succeed, provision-api-update-failed",
       .bindings = {{f.unbound_pvc, f.pv_node1a}},
       .provisions = {f.provisioned_pvc, f.provisioned_pvc2},
       .fail_after = 2,
       .want_writes = {"bind pv-node1a testns/unbound-pvc", "select testns/provisioned-pvc node1"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    VolumeTestHandle handle({f.node1});
    handle.Add(Classes());
    PodVolumes volumes;
    std::vector<Claim> claims;
    for (const auto& [claim, volume] : c.bindings) {
      handle.Add(volume);
      claims.push_back(claim);
      volumes.static_bindings.push_back({claim, volume});
    }
    for (const auto& claim : c.provisions) {
      claims.push_back(claim);
      volumes.dynamic_provisions.push_back({claim, nullptr});
    }
    handle.Add(claims);
    auto& client = handle.volume_client();
    if (c.fail_after >= 0) {
      client.write_error = framework::Status::Error("conflict");
      client.fail_after = c.fail_after;
    }
    VolumeBinder binder(handle, 10);
    auto pod = MakePodWithClaims(claims);
    ASSERT_TRUE(binder.AssumePodVolumes(*pod, "node1", volumes).has_value());

    framework::Status st = binder.BindPodVolumes(*pod, f.node1.get(), "node1", volumes);
    EXPECT_EQ(client.writes(), c.want_writes);
    if (c.fail_after >= 0) {
      EXPECT_EQ(st, framework::Status::Error("conflict"));
      // What was not written is no longer assumed; what was written is the informer's now.
      for (const auto& b : volumes.static_bindings) {
        EXPECT_EQ(handle.storage().Volume(b.pv->metadata.name), handle.storage().ApiVolume(b.pv->metadata.name));
      }
      for (const auto& p : volumes.dynamic_provisions) {
        EXPECT_EQ(handle.storage().Claim(kNamespace, p.pvc->metadata.name),
                  handle.storage().ApiClaim(kNamespace, p.pvc->metadata.name));
      }
    }
  }
}

// upstream's TestCheckBindings. The binding writes are over; the informer's objects are checked.
// Our client does not return the written object, so a volume or claim still at the version its
// binding was assumed from reads as "not written yet": where upstream's cases put the reset
// objects at that same version, here they come at the next one, as after a real update.
TEST(VolumeBinderTest, CheckBindings) {
  Fixtures f;
  auto no_uid = std::make_shared<api::PersistentVolume>(*f.pv_node1a_bound);
  no_uid->claim_ref->uid.clear();
  auto empty_annotations = std::make_shared<api::PersistentVolumeClaim>(*f.provisioned_pvc);
  empty_annotations->metadata.annotations = api::Labels();
  struct Case {
    std::string name{};
    std::vector<Volume> init_pvs{};
    std::vector<Claim> init_pvcs{};
    std::vector<BindingInfo> bindings{};
    std::vector<Claim> provisions{};
    std::vector<Volume> api_pvs{};
    std::vector<Claim> api_pvcs{};
    bool delete_pvs = false;
    bool delete_pvcs = false;
    bool should_fail = false;
    bool want_bound = false;
  };
  auto bind = [](const Claim& c, const Volume& v) { return BindingInfo{c, v}; };
  const std::vector<Case> cases = {
      {.name = "nothing-to-bind", .want_bound = true},
      {.name = "binding-bound",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.bound_pvc_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)},
       .want_bound = true},
      {.name = "binding-prebound",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.prebound_pvc_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)}},
      {.name = "binding-unbound",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.unbound_pvc},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)}},
      {.name = "binding-pvc-not-exists",
       .init_pvs = {f.pv_node1a_bound},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)},
       .should_fail = true},
      {.name = "binding-pv-not-exists",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.bound_pvc_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)},
       .delete_pvs = true,
       .should_fail = true},
      {.name = "binding-claimref-nil",
       .init_pvs = {f.pv_node1a},
       .init_pvcs = {f.bound_pvc_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)},
       .api_pvs = {WithVersion(f.pv_node1a, "2")},
       .should_fail = true},
      {.name = "binding-claimref-uid-empty",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.bound_pvc_node1a},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)},
       .api_pvs = {WithVersion(no_uid, "2")},
       .should_fail = true},
      {.name = "binding-one-bound,one-unbound",
       .init_pvs = {f.pv_node1a_bound, f.pv_node1b_bound},
       .init_pvcs = {f.bound_pvc_node1a, f.unbound_pvc2},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound), bind(f.unbound_pvc2, f.pv_node1b_bound)}},
      {.name = "provisioning-pvc-bound",
       .init_pvs = {f.pv_bound},
       .init_pvcs = {f.provisioned_pvc_bound},
       .provisions = {WithSelectedNode(f.provisioned_pvc)},
       .api_pvcs = {WithSelectedNode(WithVersion(f.provisioned_pvc_bound, "2"))},
       .want_bound = true},
      {.name = "provisioning-pvc-unbound",
       .init_pvcs = {WithSelectedNode(f.provisioned_pvc)},
       .provisions = {WithSelectedNode(f.provisioned_pvc)}},
      {.name = "provisioning-pvc-not-exists",
       .init_pvcs = {f.provisioned_pvc},
       .provisions = {WithSelectedNode(f.provisioned_pvc)},
       .delete_pvcs = true,
       .should_fail = true},
      {.name = "provisioning-pvc-annotations-nil",
       .init_pvcs = {f.provisioned_pvc},
       .provisions = {WithSelectedNode(f.provisioned_pvc)},
       .api_pvcs = {WithVersion(f.provisioned_pvc, "2")},
       .should_fail = true},
      {.name = "provisioning-pvc-selected-node-dropped",
       .init_pvcs = {f.provisioned_pvc},
       .provisions = {WithSelectedNode(f.provisioned_pvc)},
       .api_pvcs = {WithVersion(empty_annotations, "2")},
       .should_fail = true},
      {.name = "provisioning-pvc-selected-node-wrong-node",
       .init_pvcs = {f.provisioned_pvc},
       .provisions = {WithSelectedNode(f.provisioned_pvc)},
       .api_pvcs = {WithSelectedNode(WithVersion(f.provisioned_pvc, "2"), "wrong-node")},
       .should_fail = true},
      {.name = "binding-bound-provisioning-unbound",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.bound_pvc_node1a, WithSelectedNode(f.provisioned_pvc)},
       .bindings = {bind(f.unbound_pvc, f.pv_node1a_bound)},
       .provisions = {WithSelectedNode(f.provisioned_pvc)}},
      {.name = "tolerate-provisioning-pvc-bound-pv-not-found",
       .init_pvs = {f.pv_node1a},
       .init_pvcs = {f.provisioned_pvc},
       .provisions = {WithSelectedNode(f.provisioned_pvc)},
       .api_pvcs = {WithSelectedNode(WithVersion(f.provisioned_pvc_bound, "2"))},
       .delete_pvs = true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    VolumeTestHandle handle({f.node1});
    handle.Add(Classes());
    handle.Add(c.init_pvs);
    handle.Add(c.init_pvcs);
    StorageBackend& storage = handle.storage();
    PodVolumes volumes{c.bindings, {}};
    for (const auto& b : c.bindings) {
      if (storage.ApiVolume(b.pv->metadata.name)) {
        ASSERT_TRUE(storage.AssumeVolume(b.pv).IsSuccess());
      }
    }
    for (const auto& p : c.provisions) {
      volumes.dynamic_provisions.push_back({p, nullptr});
      if (storage.ApiClaim(kNamespace, p->metadata.name)) {
        ASSERT_TRUE(storage.AssumeClaim(p).IsSuccess());
      }
    }
    if (c.delete_pvs) {
      for (const auto& pv : c.init_pvs) storage.Remove(std::shared_ptr<const api::PersistentVolume>(pv));
    }
    if (c.delete_pvcs) {
      for (const auto& pvc : c.init_pvcs) storage.Remove(std::shared_ptr<const api::PersistentVolumeClaim>(pvc));
    }
    handle.Add(c.api_pvs);
    handle.Add(c.api_pvcs);
    VolumeBinder binder(handle, 10);

    auto got = binder.CheckBindings(f.node1.get(), "node1", volumes);
    if (c.should_fail) {
      EXPECT_FALSE(got.has_value());
      continue;
    }
    ASSERT_TRUE(got.has_value()) << got.error();
    EXPECT_EQ(*got, c.want_bound);
  }
}

TEST(VolumeBinderTest, CheckBindingsMessages) {
  Fixtures f;
  VolumeTestHandle handle({f.node1});
  handle.Add(std::vector<Claim>{f.bound_pvc_node1a});
  handle.Add(WithVersion(f.pv_node1a, "2"));
  VolumeBinder binder(handle, 10);
  PodVolumes volumes{{{f.unbound_pvc, f.pv_node1a_bound}}, {}};
  auto got = binder.CheckBindings(f.node1.get(), "node1", volumes);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error(), "ClaimRef got reset for pv \"pv-node1a\"");

  got = binder.CheckBindings(nullptr, "node9", volumes);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error(), "failed to get node \"node9\": node \"node9\" not found");

  handle.Add(f.pv_node1a_bound);
  got = binder.CheckBindings(f.node1_no_labels.get(), "node1", volumes);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error(), "pv \"pv-node1a\" node affinity doesn't match node \"node1\": no matching NodeSelectorTerms");
}

// upstream's TestCheckBindingsWithCSIMigration.
TEST(VolumeBinderTest, CheckBindingsWithCSIMigration) {
  Fixtures f;
  auto migrated = MakeCSINode("node1", "kubernetes.io/gce-pd");
  auto not_migrated = MakeCSINode("node1", "");
  struct Case {
    std::string name{};
    std::vector<Volume> init_pvs{};
    std::vector<Claim> init_pvcs{};
    std::shared_ptr<api::Node> node{};
    std::vector<std::shared_ptr<api::CSINode>> csi_nodes{};
    std::vector<BindingInfo> bindings{};
    std::vector<Claim> provisions{};
    std::vector<Claim> api_pvcs{};
    bool should_fail = false;
    bool want_bound = false;
  };
  const std::vector<Case> cases = {
      {.name = "provisioning-pvc-bound",
       .init_pvs = {f.migration_pv_bound},
       .init_pvcs = {f.prov_migration_pvc_bound},
       .node = f.node1_zone1,
       .csi_nodes = {migrated},
       .provisions = {WithSelectedNode(f.prov_migration_pvc_bound)},
       .api_pvcs = {WithSelectedNode(WithVersion(f.prov_migration_pvc_bound, "2"))},
       .want_bound = true},
      {.name = "binding-node-pv-same-zone",
       .init_pvs = {f.migration_pv_bound_to_unbound},
       .init_pvcs = {f.unbound_pvc},
       .node = f.node1_zone1,
       .csi_nodes = {migrated},
       .bindings = {{f.unbound_pvc, f.migration_pv_bound_to_unbound}}},
      {.name = "binding-without-csinode",
       .init_pvs = {f.migration_pv_bound_to_unbound},
       .init_pvcs = {f.unbound_pvc},
       .node = f.node1_zone1,
       .bindings = {{f.unbound_pvc, f.migration_pv_bound_to_unbound}}},
      {.name = "binding-non-migrated-plugin",
       .init_pvs = {f.migration_pv_bound_to_unbound},
       .init_pvcs = {f.unbound_pvc},
       .node = f.node1_zone1,
       .csi_nodes = {not_migrated},
       .bindings = {{f.unbound_pvc, f.migration_pv_bound_to_unbound}}},
      {.name = "binding-node-pv-in-different-zones",
       .init_pvs = {f.migration_pv_bound_to_unbound},
       .init_pvcs = {f.unbound_pvc},
       .node = f.node1_zone2,
       .csi_nodes = {migrated},
       .bindings = {{f.unbound_pvc, f.migration_pv_bound_to_unbound}},
       .should_fail = true},
      {.name = "binding-node-pv-different-zones-migration-off",
       .init_pvs = {f.nonmigration_pv_bound_to_unbound},
       .init_pvcs = {f.unbound_pvc},
       .node = f.node1_zone2,
       .csi_nodes = {migrated},
       .bindings = {{f.unbound_pvc, f.nonmigration_pv_bound_to_unbound}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    VolumeTestHandle handle({c.node});
    handle.Add(Classes());
    handle.Add(c.init_pvs);
    handle.Add(c.init_pvcs);
    handle.Add(c.csi_nodes);
    PodVolumes volumes{c.bindings, {}};
    for (const auto& p : c.provisions) {
      volumes.dynamic_provisions.push_back({p, nullptr});
      ASSERT_TRUE(handle.storage().AssumeClaim(p).IsSuccess());
    }
    handle.Add(c.api_pvcs);
    VolumeBinder binder(handle, 10);
    auto got = binder.CheckBindings(c.node.get(), "node1", volumes);
    if (c.should_fail) {
      EXPECT_FALSE(got.has_value());
      continue;
    }
    ASSERT_TRUE(got.has_value()) << got.error();
    EXPECT_EQ(*got, c.want_bound);
  }
}

// CSI migration of each in-tree plugin (csi-translation-lib), and its errors.
TEST(VolumeBinderTest, TranslateInTreeVolume) {
  auto pv = [](api::InlineDiskType type, std::string id) {
    return testing::MakePV().Name("pv").InTree(Disk(type, std::move(id))).Obj();
  };
  auto gce = pv(api::InlineDiskType::kGCEPersistentDisk, "disk");
  gce->node_affinity =
      api::NodeSelector{{api::NodeSelectorTerm{{{"topology.kubernetes.io/zone", api::SelectorOperator::kIn, {"z1"}},
                                                {"other", api::SelectorOperator::kIn, {"x"}}},
                                               {}}}};
  CSIMigration m = TranslateInTreeVolume(*gce);
  EXPECT_EQ(m.plugin, "kubernetes.io/gce-pd");
  EXPECT_EQ(m.error, "");
  ASSERT_TRUE(m.affinity.has_value());
  EXPECT_EQ(m.affinity->terms[0].match_expressions[0].key, "topology.gke.io/zone");
  EXPECT_EQ(m.affinity->terms[0].match_expressions[1].key, "other");

  // Zone and beta region labels without node affinity: a term with the CSI key; regions stay.
  auto ebs = pv(api::InlineDiskType::kAWSElasticBlockStore, "aws://us-east-1a/vol-123");
  ebs->metadata.labels.Set(std::string(api::kLabelFailureDomainZone), "us-east-1a__us-east-1b");
  m = TranslateInTreeVolume(*ebs);
  EXPECT_EQ(m.plugin, "kubernetes.io/aws-ebs");
  EXPECT_EQ(m.error, "");
  ASSERT_TRUE(m.affinity.has_value());
  EXPECT_EQ(m.affinity->terms[0].match_expressions[0],
            (api::SelectorRequirement{
                "topology.ebs.csi.aws.com/zone", api::SelectorOperator::kIn, {"us-east-1a", "us-east-1b"}}));

  // A beta region in the affinity becomes the GA one.
  auto cinder = pv(api::InlineDiskType::kCinder, "v");
  cinder->node_affinity = api::NodeSelector{
      {api::NodeSelectorTerm{{{std::string(api::kLabelFailureDomainZone), api::SelectorOperator::kIn, {"nova"}},
                              {std::string(api::kLabelFailureDomainRegion), api::SelectorOperator::kIn, {"r1"}}},
                             {}}}};
  m = TranslateInTreeVolume(*cinder);
  EXPECT_EQ(m.affinity->terms[0].match_expressions[0].key, "topology.cinder.csi.openstack.org/zone");
  EXPECT_EQ(m.affinity->terms[0].match_expressions[1].key, "topology.kubernetes.io/region");

  auto azure = pv(api::InlineDiskType::kAzureDisk, "uri");
  azure->node_affinity = gce->node_affinity;
  m = TranslateInTreeVolume(*azure);
  EXPECT_EQ(m.plugin, "kubernetes.io/azure-disk");
  EXPECT_EQ(m.affinity, azure->node_affinity);  // translated without touching the topology

  EXPECT_EQ(TranslateInTreeVolume(*pv(api::InlineDiskType::kRBD, "img")).plugin, "");
  EXPECT_EQ(TranslateInTreeVolume(*testing::MakePV().Name("csi").CSI("d", "h").Obj()).plugin, "");

  EXPECT_EQ(TranslateInTreeVolume(*pv(api::InlineDiskType::kAWSElasticBlockStore, "aws://zone/bad")).error,
            "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
            "(aws://zone/bad)");
  auto regional = pv(api::InlineDiskType::kGCEPersistentDisk, "d");
  regional->metadata.labels.Set(std::string(api::kLabelFailureDomainZone), "us-east1-a__europe-west1-b");
  EXPECT_EQ(TranslateInTreeVolume(*regional).error,
            "could not translate pv: failed to get region from zones: multiple or no regions gotten from zones, got: "
            "map[europe-west1:{} us-east1:{}]");
}

// A virtual-clock handle's BindPodVolumes (simulate): the PV controller acts within the writes.
// upstream's TestBindPodVolumes, with its delayed functions run as that controller.
TEST(VolumeBinderTest, BindPodVolumes) {
  Fixtures f;
  // The simulated PV controller: binds the claim a volume was bound to, or provisions a volume
  // on the selected node for a claim, in the cache.
  auto bind_claim = [](StorageBackend& storage, const api::PersistentVolume& pv) {
    auto claim = storage.ApiClaim(pv.claim_ref->namespace_, pv.claim_ref->name);
    auto bound = std::make_shared<api::PersistentVolumeClaim>(*claim);
    bound->volume_name = pv.metadata.name;
    bound->metadata.annotations.Set(std::string(api::kAnnotationBindCompleted), "yes");
    bound->metadata.resource_version = NextVersion(claim->metadata.resource_version);
    storage.Apply(std::shared_ptr<const api::PersistentVolumeClaim>(bound));
  };
  auto provision = [](std::string node) {
    return [node](StorageBackend& storage, const api::PersistentVolumeClaim& claim) {
      auto pvc = std::make_shared<api::PersistentVolumeClaim>(claim);
      auto pv = MakeTestPV("dynamic-pv", node, "1G", "1", pvc, kWaitClass);
      storage.Apply(std::shared_ptr<const api::PersistentVolume>(pv));
      pvc->volume_name = pv->metadata.name;
      pvc->metadata.annotations.Set(std::string(api::kAnnotationBindCompleted), "yes");
      pvc->metadata.resource_version = NextVersion(claim.metadata.resource_version);
      storage.Apply(std::shared_ptr<const api::PersistentVolumeClaim>(pvc));
    };
  };
  auto delete_claim = [](StorageBackend& storage, const api::PersistentVolume& pv) {
    storage.Remove(storage.ApiClaim(pv.claim_ref->namespace_, pv.claim_ref->name));
  };
  using VolumeHook = std::function<void(StorageBackend&, const api::PersistentVolume&)>;
  using ClaimHook = std::function<void(StorageBackend&, const api::PersistentVolumeClaim&)>;
  struct Case {
    std::string name{};
    std::shared_ptr<api::Node> node{};
    std::vector<Volume> init_pvs{};
    std::vector<Claim> init_pvcs{};
    std::optional<BindingInfo> binding{};
    Claim claim_to_provision{};
    VolumeHook on_volume_bound{};
    ClaimHook on_node_selected{};
    std::optional<framework::Status> write_error{};
    std::string want_error{};  // "" on success
  };
  const std::vector<Case> cases = {
      {.name = "nothing-to-bind-empty"},
      {.name = "already-bound",
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.bound_pvc_node1a},
       .binding = BindingInfo{f.unbound_pvc, f.pv_node1a_bound}},
      {.name = "binding-static-pv-succeeds-after-time",
       .init_pvs = {f.pv_node1a},
       .init_pvcs = {f.unbound_pvc},
       .binding = BindingInfo{f.unbound_pvc, f.pv_node1a_bound},
       .on_volume_bound = bind_claim},
      {.name = "binding-dynamic-pv-succeeds-after-time",
       .init_pvcs = {f.provisioned_pvc},
       .claim_to_provision = WithSelectedNode(f.provisioned_pvc),
       .on_node_selected = provision("node1")},
      {.name = "binding-times-out",
       .init_pvs = {f.pv_node1a},
       .init_pvcs = {f.unbound_pvc},
       .binding = BindingInfo{f.unbound_pvc, f.pv_node1a_bound},
       .want_error = "binding volumes: context deadline exceeded"},
      {.name = "binding-fails",
       .init_pvs = {f.pv_node1b},
       .init_pvcs = {f.unbound_pvc2},
       .binding = BindingInfo{f.unbound_pvc2, f.pv_node1b_bound},
       .write_error = framework::Status::Error("Operation cannot be fulfilled on persistentvolumes \"pv-node1b\""),
       .want_error = "Operation cannot be fulfilled on persistentvolumes \"pv-node1b\""},
      {.name = "check-fails",
       .init_pvs = {f.pv_node1a},
       .init_pvcs = {f.unbound_pvc},
       .binding = BindingInfo{f.unbound_pvc, f.pv_node1a_bound},
       .on_volume_bound = delete_claim,
       .want_error =
           "binding volumes: failed to check binding: PersistentVolumeClaim \"testns/unbound-pvc\" not found"},
      {.name = "node-affinity-fails",
       .node = f.node1_no_labels,
       .init_pvs = {f.pv_node1a_bound},
       .init_pvcs = {f.bound_pvc_node1a},
       .binding = BindingInfo{f.unbound_pvc, f.pv_node1a_bound},
       .want_error = "binding volumes: pv \"pv-node1a\" node affinity doesn't match node \"node1\": no matching "
                     "NodeSelectorTerms"},
      {.name = "node-affinity-fails-dynamic-provisioning",
       .init_pvs = {f.pv_node1a, f.pv_node2},
       .init_pvcs = {f.selected_node_pvc},
       .claim_to_provision = f.selected_node_pvc,
       .on_node_selected = provision("node2"),
       .want_error = "binding volumes: pv \"dynamic-pv\" node affinity doesn't match node \"node1\": no matching "
                     "NodeSelectorTerms"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node = c.node ? c.node : f.node1;
    VolumeTestHandle handle({node});
    handle.Add(Classes());
    handle.Add(c.init_pvs);
    handle.Add(c.init_pvcs);
    auto& client = handle.volume_client();
    client.on_volume_bound = c.on_volume_bound;
    client.on_node_selected = c.on_node_selected;
    client.write_error = c.write_error;
    PodVolumes volumes;
    if (c.binding) {
      volumes.static_bindings.push_back(*c.binding);
      ASSERT_TRUE(handle.storage().AssumeVolume(c.binding->pv).IsSuccess());
    }
    if (c.claim_to_provision) {
      volumes.dynamic_provisions.push_back({c.claim_to_provision, nullptr});
      ASSERT_TRUE(handle.storage().AssumeClaim(c.claim_to_provision).IsSuccess());
    }
    VolumeBinder binder(handle, 10);
    auto pod = testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1").Obj();
    framework::Status st = binder.BindPodVolumes(*pod, node.get(), "node1", volumes);
    if (c.want_error.empty()) {
      EXPECT_TRUE(st.IsSuccess()) << st.Message();
    } else {
      EXPECT_EQ(st, framework::Status::Error(c.want_error));
    }
  }
}

// On a real clock (kubesched run) PreBind polls until the controller has bound the claim.
TEST(VolumeBinderTest, BindPodVolumesPollsOnARealClock) {
  Fixtures f;
  VolumeTestHandle handle({f.node1}, /*real_clock=*/true);
  handle.Add(Classes());
  handle.Add(f.pv_node1a);
  handle.Add(f.unbound_pvc);
  ASSERT_TRUE(handle.storage().AssumeVolume(f.pv_node1a_bound).IsSuccess());
  PodVolumes volumes{{{f.unbound_pvc, f.pv_node1a_bound}}, {}};
  VolumeBinder binder(handle, 5);
  auto pod = testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1").Obj();

  // The controller binds the claim a while after the write.
  std::thread controller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto bound = WithVersion(f.bound_pvc_node1a, "2");
    handle.storage().Apply(std::shared_ptr<const api::PersistentVolumeClaim>(bound));
  });
  const auto start = std::chrono::steady_clock::now();
  framework::Status st = binder.BindPodVolumes(*pod, f.node1.get(), "node1", volumes);
  controller.join();
  EXPECT_TRUE(st.IsSuccess()) << st.Message();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(VolumeBinderTest, BindPodVolumesTimesOutOnARealClock) {
  Fixtures f;
  VolumeTestHandle handle({f.node1}, /*real_clock=*/true);
  handle.Add(Classes());
  handle.Add(f.pv_node1a);
  handle.Add(f.unbound_pvc);
  PodVolumes volumes{{{f.unbound_pvc, f.pv_node1a_bound}}, {}};
  VolumeBinder binder(handle, 1);
  auto pod = testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1").Obj();
  const auto start = std::chrono::steady_clock::now();
  framework::Status st = binder.BindPodVolumes(*pod, f.node1.get(), "node1", volumes);
  EXPECT_EQ(st, framework::Status::Error("binding volumes: context deadline exceeded"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));

  // bindTimeoutSeconds 0: the wait expires before the first check.
  VolumeBinder no_wait(handle, 0);
  EXPECT_EQ(no_wait.BindPodVolumes(*pod, f.node1.get(), "node1", PodVolumes{}),
            framework::Status::Error("binding volumes: context deadline exceeded"));
}

}  // namespace
}  // namespace kubesched::plugins::volume_binding
