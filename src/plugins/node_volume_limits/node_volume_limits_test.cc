#include "plugins/node_volume_limits/node_volume_limits.h"

#include <gtest/gtest.h>

#include "cache/storage_cache.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"
#include "testing/storage_builders.h"

namespace kubesched::plugins::node_volume_limits {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::MakePV;
using testing::MakePVC;
using testing::MakeStorageClass;

constexpr std::string_view kEBSDriver = "ebs.csi.aws.com";
constexpr std::string_view kGCEDriver = "pd.csi.storage.gke.io";
constexpr std::string_view kEBSInTree = "kubernetes.io/aws-ebs";
constexpr std::string_view kHostPathInTree = "kubernetes.io/hostpath";
constexpr std::string_view kClassName = "csi-sc";
constexpr std::string_view kNodeName = "node-for-max-pd-test-1";

// Where the test node's limits come from, as upstream's limitSource.
enum class Limits {
  kNoCSINode,       // no CSINode at all
  kCSINode,         // every driver with allocatable.count = max_volumes
  kCSINodeNoLimit,  // every driver listed without a count
};

api::InlineDisk Disk(api::InlineDiskType type, std::string id) {
  api::InlineDisk disk;
  disk.type = type;
  disk.id = std::move(id);
  return disk;
}

api::Volume InlineDiskVolume(api::InlineDiskType type, std::string id, std::string name = "") {
  api::Volume v;
  v.name = std::move(name);
  v.disk = Disk(type, std::move(id));
  return v;
}

api::Volume ConfigMapVolume(std::string name) {
  api::Volume v;
  v.name = std::move(name);  // a configMap / secret: no source the scheduler reads
  return v;
}

std::shared_ptr<api::PersistentVolumeClaim> OwnedClaim(const api::Pod& pod, std::string name) {
  auto claim = MakePVC().Name(std::move(name)).Namespace(pod.metadata.namespace_).Class(std::string(kClassName)).Obj();
  claim->metadata.owner_references.push_back(
      {.api_version = "v1", .kind = "Pod", .name = pod.metadata.name, .uid = pod.metadata.uid, .controller = true});
  return claim;
}

// Upstream's fixture (getFakeCSIPVLister, getFakeCSIPVCLister, getFakeCSIStorageClassLister,
// getNodeWithPodAndVolumeLimits): per driver, claims and volumes "csi-<driver>-0..3" bound to
// each other (in-tree EBS for kubernetes.io/aws-ebs, a source the plugin does not count for
// kubernetes.io/hostpath, CSI otherwise); "csi-4" unbound of class csi-sc, "csi-5" without
// class, "csi-6" of csi-sc bound to a volume that does not exist; csi-sc provisioned by the
// first driver.
void FillStorage(cache::StorageCache& storage, const std::vector<std::string>& drivers, Limits limits,
                 int32_t max_volumes) {
  for (const std::string& driver : drivers) {
    for (int j = 0; j < 4; ++j) {
      const std::string name = "csi-" + driver + "-" + std::to_string(j);
      testing::PVBuilder pv = MakePV().Name(name);
      if (driver == kEBSInTree) {
        pv.InTree(Disk(api::InlineDiskType::kAWSElasticBlockStore, name));
      } else if (driver != kHostPathInTree) {
        pv.CSI(driver, name);
      }
      storage.Apply(pv.Obj());
      storage.Apply(MakePVC().Name(name).NoClass().VolumeName(name).Obj());
    }
  }
  storage.Apply(MakePVC().Name("csi-4").Class(std::string(kClassName)).Obj());
  storage.Apply(MakePVC().Name("csi-5").NoClass().Obj());
  storage.Apply(MakePVC().Name("csi-6").Class(std::string(kClassName)).VolumeName("missing-in-action").Obj());
  storage.Apply(MakeStorageClass().Name(std::string(kClassName)).Provisioner(drivers.front()).Obj());
  if (limits == Limits::kNoCSINode) return;
  std::vector<std::pair<std::string, int32_t>> csi_drivers;
  for (const std::string& driver : drivers) {
    csi_drivers.emplace_back(driver, limits == Limits::kCSINode ? max_volumes : -1);
  }
  storage.Apply(testing::MakeCSINode(std::string(kNodeName), csi_drivers));
}

// Runs PreFilter and, unless it skips, Filter against a node holding `existing`.
struct Outcome {
  framework::Status pre_filter;
  framework::Status filter;
};
Outcome RunPlugin(framework::StorageLister& storage, const std::shared_ptr<api::Pod>& pod,
                  const std::vector<std::shared_ptr<api::Pod>>& existing) {
  testing::FakeHandle handle;
  handle.set_storage(&storage);
  auto plugin = New({}, handle);
  EXPECT_TRUE(plugin.has_value());
  auto* p = dynamic_cast<NodeVolumeLimits*>(plugin->get());
  auto node_info = testing::MakeNodeInfo(MakeNode().Name(std::string(kNodeName)).Obj(), existing);
  auto pod_info = framework::PodInfo::Create(pod);
  framework::CycleState state;
  Outcome out;
  auto [result, pre_status] = p->PreFilter(state, *pod_info, {});
  EXPECT_TRUE(result.AllNodes());
  out.pre_filter = pre_status;
  if (!pre_status.IsSkip()) out.filter = p->Filter(state, *pod_info, *node_info);
  return out;
}

// Mirrors upstream's TestCSILimits.
TEST(NodeVolumeLimitsTest, CSILimits) {
  auto running_pod = MakePod().PVC("csi-ebs.csi.aws.com-3").Obj();
  auto pending_volume_pod = MakePod().PVC("csi-4").Obj();
  // A different pod than pending_volume_pod, using the same unbound claim.
  auto unbound_pvc_pod2 = MakePod().PVC("csi-4").Obj();
  auto missing_pv_pod = MakePod().PVC("csi-6").Obj();
  auto no_sc_pvc_pod = MakePod().PVC("csi-5").Obj();
  auto gce_two_vol_pod = MakePod().PVC("csi-pd.csi.storage.gke.io-1").PVC("csi-pd.csi.storage.gke.io-2").Obj();
  auto in_tree_one_vol_pod = MakePod().PVC("csi-kubernetes.io/aws-ebs-0").Obj();
  auto in_tree_two_vol_pod = MakePod().PVC("csi-kubernetes.io/aws-ebs-1").PVC("csi-kubernetes.io/aws-ebs-2").Obj();
  auto csi_ebs_one_vol_pod = MakePod().PVC("csi-ebs.csi.aws.com-0").Obj();
  auto csi_ebs_two_vol_pod = MakePod().PVC("csi-ebs.csi.aws.com-1").PVC("csi-ebs.csi.aws.com-2").Obj();
  auto in_tree_non_migratable_one_vol_pod = MakePod().PVC("csi-kubernetes.io/hostpath-0").Obj();
  auto ephemeral_volume_pod = MakePod().Name("abc").Namespace("test").UID("12345").EphemeralVolume("xyz").Obj();
  auto ephemeral_claim = OwnedClaim(*ephemeral_volume_pod, "abc-xyz");
  auto conflicting_claim = std::make_shared<api::PersistentVolumeClaim>(*ephemeral_claim);
  conflicting_claim->metadata.owner_references.clear();
  auto ephemeral_two_volume_pod =
      MakePod().Name("abc").Namespace("test").UID("12345II").EphemeralVolume("x").EphemeralVolume("y").Obj();
  auto ephemeral_claim_x = OwnedClaim(*ephemeral_two_volume_pod, "abc-x");
  auto ephemeral_claim_y = OwnedClaim(*ephemeral_two_volume_pod, "abc-y");
  auto in_tree_inline_vol_pod =
      MakePod().Volume(InlineDiskVolume(api::InlineDiskType::kAWSElasticBlockStore, "aws-inline1")).Obj();
  auto in_tree_inline_vol_pod_with_same_csi_volume_id =
      MakePod().Volume(InlineDiskVolume(api::InlineDiskType::kAWSElasticBlockStore, "csi-ebs.csi.aws.com-1")).Obj();
  auto only_configmap_and_secret_vol_pod =
      MakePod().Volume(ConfigMapVolume("config")).Volume(ConfigMapVolume("secret")).Obj();
  auto pvc_pod_with_configmap_and_secret =
      MakePod().Volume(ConfigMapVolume("config")).Volume(ConfigMapVolume("secret")).PVC("csi-ebs.csi.aws.com-0").Obj();
  auto ephemeral_pod_with_configmap_and_secret = MakePod()
                                                     .Name("abc")
                                                     .Namespace("test")
                                                     .Volume(ConfigMapVolume("config"))
                                                     .Volume(ConfigMapVolume("secret"))
                                                     .EphemeralVolume("xyz")
                                                     .Obj();
  auto inline_migratable_pod_with_configmap_and_secret =
      MakePod()
          .Volume(ConfigMapVolume("config"))
          .Volume(ConfigMapVolume("secret"))
          .Volume(InlineDiskVolume(api::InlineDiskType::kAWSElasticBlockStore, "aws-inline1"))
          .Obj();

  const auto ok = framework::Status::Success();
  const auto exceeded = framework::Status::Unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
  const auto claim_missing = framework::Status::UnschedulableAndUnresolvable(
      "looking up PVC test/abc-xyz: persistentvolumeclaims \"abc-xyz\" not found");
  const std::string ebs(kEBSDriver);
  const std::string gce(kGCEDriver);
  const std::string ebs_in_tree(kEBSInTree);

  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> existing;
    std::vector<std::shared_ptr<api::PersistentVolumeClaim>> extra_claims;
    int32_t max_volumes = 0;
    std::vector<std::string> drivers;
    Limits limits = Limits::kNoCSINode;
    framework::Status want_filter;
    framework::Status want_pre_filter = framework::Status::Success();
  };
  // Upstream's first two cases count VolumeAttachment objects, which kubesched does not have.
  const std::vector<Case> cases = {
      {"fits when node volume limit >= new pods CSI volume",
       csi_ebs_one_vol_pod,
       {running_pod, csi_ebs_two_vol_pod},
       {},
       4,
       {ebs},
       Limits::kCSINode,
       ok},
      {"doesn't when node volume limit <= pods CSI volume",
       csi_ebs_one_vol_pod,
       {running_pod, csi_ebs_two_vol_pod},
       {},
       2,
       {ebs},
       Limits::kCSINode,
       exceeded},
      {"should when driver does not support volume limits",
       csi_ebs_one_vol_pod,
       {running_pod, csi_ebs_two_vol_pod},
       {},
       2,
       {ebs},
       Limits::kCSINodeNoLimit,
       ok},
      {"count pending PVCs towards volume limit <= pods CSI volume",
       csi_ebs_one_vol_pod,
       {pending_volume_pod, csi_ebs_two_vol_pod},
       {},
       2,
       {ebs},
       Limits::kCSINode,
       exceeded},
      // Two pods of the same pending claim count it once.
      {"count multiple pending pvcs towards volume limit >= pods CSI volume",
       csi_ebs_one_vol_pod,
       {pending_volume_pod, unbound_pvc_pod2, csi_ebs_two_vol_pod},
       {},
       4,
       {ebs},
       Limits::kCSINode,
       ok},
      {"should count PVCs with invalid PV name but valid SC",
       csi_ebs_one_vol_pod,
       {missing_pv_pod, csi_ebs_two_vol_pod},
       {},
       2,
       {ebs},
       Limits::kCSINode,
       exceeded},
      {"don't count pvcs with missing SC towards volume limit",
       csi_ebs_one_vol_pod,
       {running_pod, no_sc_pvc_pod},
       {},
       2,
       {ebs},
       Limits::kCSINode,
       ok},
      {"count pvcs with the same type towards volume limit",
       csi_ebs_one_vol_pod,
       {gce_two_vol_pod, csi_ebs_two_vol_pod},
       {},
       2,
       {ebs, gce},
       Limits::kCSINode,
       exceeded},
      {"don't count pvcs with different type towards volume limit",
       gce_two_vol_pod,
       {csi_ebs_two_vol_pod, running_pod},
       {},
       2,
       {ebs, gce},
       Limits::kCSINode,
       ok},
      // In-tree volume migration.
      {"should count in-tree volumes if migration is enabled",
       in_tree_one_vol_pod,
       {in_tree_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
      {"nil csi node",
       in_tree_inline_vol_pod,
       {in_tree_two_vol_pod},
       {},
       0,
       {ebs_in_tree, ebs},
       Limits::kNoCSINode,
       ok},
      {"should count unbound in-tree volumes if migration is enabled",
       pending_volume_pod,
       {in_tree_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
      {"should not limit pod if volume used does not report limits",
       in_tree_one_vol_pod,
       {in_tree_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINodeNoLimit,
       ok},
      {"should not count non-migratable in-tree volumes",
       in_tree_non_migratable_one_vol_pod,
       {csi_ebs_two_vol_pod},
       {},
       2,
       {std::string(kHostPathInTree), ebs},
       Limits::kCSINode,
       ok},
      {"should count in-tree inline volumes if migration is enabled",
       in_tree_inline_vol_pod,
       {in_tree_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
      // Mixed volumes.
      {"should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
       in_tree_one_vol_pod,
       {csi_ebs_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
      {"should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
       in_tree_inline_vol_pod,
       {csi_ebs_two_vol_pod, in_tree_one_vol_pod},
       {},
       3,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
      {"should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
       in_tree_inline_vol_pod_with_same_csi_volume_id,
       {csi_ebs_two_vol_pod, in_tree_one_vol_pod},
       {},
       3,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       ok},
      {"should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
       csi_ebs_one_vol_pod,
       {in_tree_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
      // Ephemeral volumes.
      {"ephemeral volume missing", ephemeral_volume_pod, {}, {}, 0, {ebs}, Limits::kCSINodeNoLimit, claim_missing},
      {"ephemeral volume not owned",
       ephemeral_volume_pod,
       {},
       {conflicting_claim},
       0,
       {ebs},
       Limits::kCSINodeNoLimit,
       framework::Status::Error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")},
      {"ephemeral volume unbound", ephemeral_volume_pod, {}, {ephemeral_claim}, 0, {ebs}, Limits::kCSINodeNoLimit, ok},
      {"ephemeral doesn't when node volume limit <= pods CSI volume",
       ephemeral_volume_pod,
       {running_pod, csi_ebs_two_vol_pod},
       {ephemeral_claim},
       2,
       {ebs},
       Limits::kCSINode,
       exceeded},
      {"ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
       csi_ebs_one_vol_pod,
       {running_pod, ephemeral_two_volume_pod},
       {ephemeral_claim_x, ephemeral_claim_y},
       2,
       {ebs},
       Limits::kCSINode,
       exceeded},
      // Upstream runs this one with the (long gone) ephemeral feature gate off; same outcome.
      {"persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral "
       "disabled",
       csi_ebs_one_vol_pod,
       {running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod},
       {ephemeral_claim},
       3,
       {ebs},
       Limits::kCSINode,
       exceeded},
      {"persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
       csi_ebs_one_vol_pod,
       {running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod},
       {ephemeral_claim},
       3,
       {ebs},
       Limits::kCSINode,
       exceeded},
      {"persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
       csi_ebs_one_vol_pod,
       {running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod},
       {ephemeral_claim},
       5,
       {ebs},
       Limits::kCSINode,
       ok},
      {"skip Filter when the pod only uses secrets and configmaps",
       only_configmap_and_secret_vol_pod,
       {},
       {},
       2,
       {ebs},
       Limits::kCSINode,
       ok,
       framework::Status::Skip()},
      {"don't skip Filter when the pod has pvcs",
       pvc_pod_with_configmap_and_secret,
       {},
       {},
       2,
       {ebs},
       Limits::kCSINode,
       ok},
      {"don't skip Filter when the pod has ephemeral volumes",
       ephemeral_pod_with_configmap_and_secret,
       {},
       {},
       0,
       {ebs},
       Limits::kCSINodeNoLimit,
       claim_missing},
      {"don't skip Filter when the pod has inline migratable volumes",
       inline_migratable_pod_with_configmap_and_secret,
       {in_tree_two_vol_pod},
       {},
       2,
       {ebs_in_tree, ebs},
       Limits::kCSINode,
       exceeded},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    cache::StorageCache storage;
    FillStorage(storage, c.drivers, c.limits, c.max_volumes);
    for (const auto& claim : c.extra_claims) storage.Apply(claim);
    auto got = RunPlugin(storage, c.pod, c.existing);
    EXPECT_EQ(got.pre_filter, c.want_pre_filter);
    if (!got.pre_filter.IsSkip()) {
      EXPECT_EQ(got.filter, c.want_filter);
    }
  }
}

// Cases of our own for what upstream's table leaves out: translation of in-tree handles, the
// class of an unbound claim, what is not counted.
TEST(NodeVolumeLimitsTest, CountingDetails) {
  const auto ok = framework::Status::Success();
  const auto exceeded = framework::Status::Unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
  auto gce_zonal_pv = MakePV()
                          .Name("gce-zonal")
                          .Label(std::string(api::kLabelTopologyZone), "us-central1-a")
                          .InTree(Disk(api::InlineDiskType::kGCEPersistentDisk, "disk-1"))
                          .Obj();
  auto gce_csi_pv = MakePV()
                        .Name("gce-csi")
                        .CSI("pd.csi.storage.gke.io", "projects/UNSPECIFIED/zones/us-central1-a/disks/disk-1")
                        .Obj();
  auto ebs_url_pv = MakePV()
                        .Name("ebs-url")
                        .InTree(Disk(api::InlineDiskType::kAWSElasticBlockStore, "aws://us-east-1a/vol-123"))
                        .Obj();
  auto ebs_csi_pv = MakePV().Name("ebs-csi").CSI("ebs.csi.aws.com", "vol-123").Obj();
  auto ebs_other_pv = MakePV().Name("ebs-other").CSI("ebs.csi.aws.com", "vol-456").Obj();
  auto iscsi_pv = MakePV().Name("iscsi").InTree(Disk(api::InlineDiskType::kISCSI, "iqn.1")).Obj();

  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Pod>> existing;
    std::vector<api::StorageObject> objects;
    framework::Status want;
  };
  auto bound = [](std::string claim, std::string volume) {
    return api::StorageObject(MakePVC().Name(std::move(claim)).NoClass().Bound(std::move(volume)).Obj());
  };
  auto limits = [](std::vector<std::pair<std::string, int32_t>> drivers) {
    return api::StorageObject(testing::MakeCSINode(std::string(kNodeName), std::move(drivers)));
  };
  auto beta_class_claim =
      MakePVC().Name("beta").NoClass().Annotation("volume.beta.kubernetes.io/storage-class", "fast").Obj();
  const std::vector<Case> cases = {
      {"a zonal in-tree GCE PD and its CSI form are one volume",
       MakePod().PVC("gce-zonal").Obj(),
       {MakePod().PVC("gce-csi").Obj()},
       {gce_zonal_pv, gce_csi_pv, bound("gce-zonal", "gce-zonal"), bound("gce-csi", "gce-csi"),
        limits({{"pd.csi.storage.gke.io", 1}})},
       ok},
      {"an inline GCE PD names no zone: counted apart from the zonal CSI volume",
       MakePod().Volume(InlineDiskVolume(api::InlineDiskType::kGCEPersistentDisk, "disk-1")).Obj(),
       {MakePod().PVC("gce-csi").Obj()},
       {gce_csi_pv, bound("gce-csi", "gce-csi"), limits({{"pd.csi.storage.gke.io", 1}})},
       exceeded},
      {"an EBS volume id in URL form is the CSI volume's handle",
       MakePod().PVC("ebs-url").Obj(),
       {MakePod().PVC("ebs-csi").Obj()},
       {ebs_url_pv, ebs_csi_pv, bound("ebs-url", "ebs-url"), bound("ebs-csi", "ebs-csi"),
        limits({{"ebs.csi.aws.com", 1}})},
       ok},
      {"an inline EBS id that is no volume id is an error where migration is on",
       MakePod()
           .Volume(InlineDiskVolume(api::InlineDiskType::kAWSElasticBlockStore, "aws://us-east-1a/disk", "data"))
           .Obj(),
       {},
       {limits({{"ebs.csi.aws.com", 5}})},
       framework::Status::Error("converting volume(data) from inline to csi: failed to translate Kubernetes ID to EBS "
                                "Volume ID Invalid format for AWS volume (aws://us-east-1a/disk)")},
      {"the same inline disk is not even translated on a node without CSINode",
       MakePod()
           .Volume(InlineDiskVolume(api::InlineDiskType::kAWSElasticBlockStore, "aws://us-east-1a/disk", "data"))
           .Obj(),
       {},
       {},
       ok},
      {"an iscsi volume never migrated: not counted",
       MakePod().PVC("iscsi").Obj(),
       {MakePod().PVC("ebs-csi").Obj()},
       {iscsi_pv, ebs_csi_pv, bound("iscsi", "iscsi"), bound("ebs-csi", "ebs-csi"), limits({{"ebs.csi.aws.com", 1}})},
       ok},
      {"the same claim twice in one pod counts once",
       MakePod()
           .PVC("ebs-csi")
           .Volume([] {
             api::Volume v;
             v.name = "again";
             v.claim_name = "ebs-csi";
             return v;
           }())
           .Obj(),
       {},
       {ebs_csi_pv, bound("ebs-csi", "ebs-csi"), limits({{"ebs.csi.aws.com", 1}})},
       ok},
      {"a driver that needs no attach still counts (upstream reads no CSIDriver)",
       MakePod().PVC("ebs-csi").Obj(),
       {MakePod().PVC("ebs-other").Obj()},
       {ebs_csi_pv, ebs_other_pv, bound("ebs-csi", "ebs-csi"), bound("ebs-other", "ebs-other"),
        testing::MakeCSIDriver("ebs.csi.aws.com", false, /*attach_required=*/false), limits({{"ebs.csi.aws.com", 1}})},
       exceeded},
      {"a limit of another driver does not limit the pod's",
       MakePod().PVC("ebs-csi").Obj(),
       {MakePod().PVC("ebs-other").Obj()},
       {ebs_csi_pv, ebs_other_pv, bound("ebs-csi", "ebs-csi"), bound("ebs-other", "ebs-other"),
        limits({{"ebs.csi.aws.com", -1}, {"pd.csi.storage.gke.io", 0}})},
       ok},
      {"the beta class annotation names an unbound claim's class",
       MakePod().PVC("beta").Obj(),
       {MakePod().PVC("ebs-csi").Obj()},
       {beta_class_claim, MakeStorageClass().Name("fast").Provisioner("ebs.csi.aws.com").Obj(), ebs_csi_pv,
        bound("ebs-csi", "ebs-csi"), limits({{"ebs.csi.aws.com", 1}})},
       exceeded},
      {"an unbound claim of a missing class is not counted",
       MakePod().PVC("beta").Obj(),
       {MakePod().PVC("ebs-csi").Obj()},
       {beta_class_claim, ebs_csi_pv, bound("ebs-csi", "ebs-csi"), limits({{"ebs.csi.aws.com", 1}})},
       ok},
      {"an unbound claim of the in-tree azure-file provisioner is not counted (migration not on)",
       MakePod().PVC("beta").Obj(),
       {},
       {beta_class_claim, MakeStorageClass().Name("fast").Provisioner("kubernetes.io/azure-file").Obj(),
        limits({{"file.csi.azure.com", 0}})},
       ok},
      {"an unbound claim of the in-tree gce-pd provisioner counts for the PD CSI driver",
       MakePod().PVC("beta").Obj(),
       {},
       {beta_class_claim, MakeStorageClass().Name("fast").Provisioner("kubernetes.io/gce-pd").Obj(),
        limits({{"pd.csi.storage.gke.io", 0}})},
       exceeded},
      {"an existing pod whose claim is gone is not counted",
       MakePod().PVC("ebs-csi").Obj(),
       {MakePod().PVC("gone").Obj()},
       {ebs_csi_pv, bound("ebs-csi", "ebs-csi"), limits({{"ebs.csi.aws.com", 1}})},
       ok},
      {"an inline CSI volume is not counted (and the pod skips Filter)",
       MakePod()
           .Volume([] {
             api::Volume v;
             v.name = "inline";
             v.csi_driver = "ebs.csi.aws.com";
             return v;
           }())
           .Obj(),
       {},
       {limits({{"ebs.csi.aws.com", 0}})},
       framework::Status::Skip()},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    cache::StorageCache storage;
    for (const auto& object : c.objects) storage.Apply(object);
    auto got = RunPlugin(storage, c.pod, c.existing);
    EXPECT_EQ(got.pre_filter.IsSkip() ? got.pre_filter : got.filter, c.want);
  }
}

TEST(NodeVolumeLimitsTest, FilterWithoutPreFilterResolvesThePod) {
  cache::StorageCache storage;
  FillStorage(storage, {std::string(kEBSDriver)}, Limits::kCSINode, 2);
  testing::FakeHandle handle;
  handle.set_storage(&storage);
  NodeVolumeLimits plugin(handle, "prefix");
  framework::CycleState state;
  auto node_info = testing::MakeNodeInfo(MakeNode().Name(std::string(kNodeName)).Obj(),
                                         {MakePod().PVC("csi-ebs.csi.aws.com-1").PVC("csi-ebs.csi.aws.com-2").Obj()});
  EXPECT_EQ(plugin.Filter(state, *MakePod().PVC("csi-ebs.csi.aws.com-0").Info(), *node_info).code(),
            framework::Code::kUnschedulable);
  EXPECT_TRUE(plugin.Filter(state, *MakePod().PVC("csi-ebs.csi.aws.com-1").Info(), *node_info).IsSuccess());
}

TEST(NodeVolumeLimitsTest, TranslateInTreeHandle) {
  using api::InlineDiskType;
  const api::Labels regional{{std::string(api::kLabelFailureDomainZone), "us-central1-a__us-central1-b"}};
  const api::Labels bad_regional{{std::string(api::kLabelTopologyZone), "zone-a__zone-b"}};
  EXPECT_EQ(TranslateInTreeHandle(Disk(InlineDiskType::kAWSElasticBlockStore, "vol-1"), nullptr), "vol-1");
  EXPECT_EQ(TranslateInTreeHandle(Disk(InlineDiskType::kAWSElasticBlockStore, "aws:///vol-1"), nullptr), "vol-1");
  EXPECT_FALSE(
      TranslateInTreeHandle(Disk(InlineDiskType::kAWSElasticBlockStore, "aws://a/b/vol-1"), nullptr).has_value());
  EXPECT_EQ(TranslateInTreeHandle(Disk(InlineDiskType::kGCEPersistentDisk, "d"), nullptr),
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d");
  EXPECT_EQ(TranslateInTreeHandle(Disk(InlineDiskType::kGCEPersistentDisk, "d"), &regional),
            "projects/UNSPECIFIED/regions/us-central1/disks/d");
  EXPECT_FALSE(TranslateInTreeHandle(Disk(InlineDiskType::kGCEPersistentDisk, "d"), &bad_regional).has_value());
  EXPECT_EQ(TranslateInTreeHandle(Disk(InlineDiskType::kAzureDisk, "uri"), nullptr), "uri");
  EXPECT_EQ(TranslateInTreeHandle(Disk(InlineDiskType::kCinder, "id"), nullptr), "id");
  EXPECT_FALSE(TranslateInTreeHandle(Disk(InlineDiskType::kRBD, "img"), nullptr).has_value());
}

TEST(NodeVolumeLimitsTest, EventsToRegister) {
  testing::FakeHandle handle;
  NodeVolumeLimits plugin(handle, "prefix");
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kCSINode);
  EXPECT_EQ(events[0].event.action, framework::action::kAdd);
  EXPECT_FALSE(events[0].hint);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kCSINode);
  EXPECT_EQ(events[1].event.action, framework::action::kUpdate);
  EXPECT_TRUE(events[1].hint);
  EXPECT_EQ(events[2].event.resource, framework::EventResource::kAssignedPod);
  EXPECT_EQ(events[2].event.action, framework::action::kDelete);
  EXPECT_TRUE(events[2].hint);
  EXPECT_EQ(events[3].event.resource, framework::EventResource::kPersistentVolumeClaim);
  EXPECT_EQ(events[3].event.action, framework::action::kAdd);
  EXPECT_TRUE(events[3].hint);
}

// Mirrors upstream's TestCSILimitsQHint.
TEST(NodeVolumeLimitsTest, IsSchedulableAfterAssignedPodDeleted) {
  auto pod = MakePod().PVC("csi-ebs.csi.aws.com-2").Obj();
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> deleted;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"return a Queue when a deleted pod has a PVC", MakePod().Node(std::string(kNodeName)).PVC("placeholder").Obj(),
       framework::QueueingHint::kQueue},
      {"return a Queue when a deleted pod has a inline migratable volume",
       MakePod()
           .Node(std::string(kNodeName))
           .Volume(InlineDiskVolume(api::InlineDiskType::kAWSElasticBlockStore, ""))
           .Obj(),
       framework::QueueingHint::kQueue},
      {"return a QueueSkip when a deleted pod doesn't have any volume", MakePod().Node(std::string(kNodeName)).Obj(),
       framework::QueueingHint::kSkip},
      {"return a QueueSkip when a deleted pod is not scheduled.", MakePod().PVC("csi-ebs.csi.aws.com-0").Obj(),
       framework::QueueingHint::kSkip},
      // Ours: a nominated pod held its volumes' place too; a non-migratable disk counts nowhere.
      {"queue when a deleted nominated pod has a PVC",
       MakePod().NominatedNodeName(std::string(kNodeName)).PVC("placeholder").Obj(), framework::QueueingHint::kQueue},
      {"skip when a deleted pod has only an iscsi disk",
       MakePod().Node(std::string(kNodeName)).Volume(InlineDiskVolume(api::InlineDiskType::kISCSI, "iqn")).Obj(),
       framework::QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsSchedulableAfterAssignedPodDeleted(*pod, {.old_pod = c.deleted.get()}), c.want);
  }
}

// Mirrors upstream's TestCSILimitsAddedPVCQHint.
TEST(NodeVolumeLimitsTest, IsSchedulableAfterPVCAdded) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::shared_ptr<api::PersistentVolumeClaim> added;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"a pod isn't in the same namespace as an added PVC", MakePod().Namespace("ns1").Obj(),
       MakePVC().Namespace("ns2").Obj(), framework::QueueingHint::kSkip},
      {"a pod is in the same namespace as an added PVC", MakePod().Namespace("ns1").PVC("pvc1").Obj(),
       MakePVC().Name("pvc1").Namespace("ns1").Obj(), framework::QueueingHint::kQueue},
      {"a pod has an ephemeral volume related to an added PVC",
       MakePod().Name("pod1").Namespace("ns1").EphemeralVolume("ephemeral").Obj(),
       MakePVC().Name("pod1-ephemeral").Namespace("ns1").Obj(), framework::QueueingHint::kQueue},
      {"a pod doesn't have the same PVC as an added PVC", MakePod().Namespace("ns1").PVC("pvc1").Obj(),
       MakePVC().Name("pvc2").Namespace("ns1").Obj(), framework::QueueingHint::kSkip},
      {"a pod doesn't have any PVC attached", MakePod().Namespace("ns1").Obj(),
       MakePVC().Name("pvc2").Namespace("ns1").Obj(), framework::QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const api::StorageObject added = c.added;
    EXPECT_EQ(IsSchedulableAfterPVCAdded(*c.pod, {.new_storage = &added}), c.want);
  }
}

// Mirrors upstream's TestCSILimitsAfterCSINodeUpdatedQHint.
TEST(NodeVolumeLimitsTest, IsSchedulableAfterCSINodeUpdated) {
  auto pod = MakePod().Name("test-pod").Namespace("ns1").PVC("csi-ebs.csi.aws.com-0").Obj();
  struct Case {
    std::string name;
    int32_t old_limit;  // -1: no count
    int32_t new_limit;
    framework::QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"limit raised, queue", 1, 2, framework::QueueingHint::kQueue},
      {"limit decreased, skip queueing", 2, 1, framework::QueueingHint::kSkip},
      {"limit unchanged, skip queueing", 1, 1, framework::QueueingHint::kSkip},
      // Ours: upstream reads an absent count as 0.
      {"count set where there was none, queue", -1, 3, framework::QueueingHint::kQueue},
      {"count removed, skip queueing", 3, -1, framework::QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const api::StorageObject old_node = testing::MakeCSINode("test-node", {{"ebs.csi.aws.com", c.old_limit}});
    const api::StorageObject new_node = testing::MakeCSINode("test-node", {{"ebs.csi.aws.com", c.new_limit}});
    EXPECT_EQ(IsSchedulableAfterCSINodeUpdated(*pod, {.old_storage = &old_node, .new_storage = &new_node}), c.want);
  }
}

}  // namespace
}  // namespace kubesched::plugins::node_volume_limits
