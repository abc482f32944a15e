#include "plugins/node_volume_limits/node_volume_limits.h"

#include <algorithm>
#include <random>
#include <set>
#include <unordered_map>
#include <variant>

#include "api/storage_types.h"

namespace kubesched::plugins::node_volume_limits {
namespace {

const framework::StateKey kPreFilterStateKey{"PreFilterNodeVolumeLimits"};

// The beta annotation naming a claim's class; it wins over spec.storageClassName (upstream's
// storagehelpers.GetPersistentVolumeClaimClass).
constexpr std::string_view kAnnotationBetaStorageClass = "volume.beta.kubernetes.io/storage-class";

// One of a pod's volumes as the plugin counts it, or the error resolving it ran into.
struct CountedVolume {
  std::string driver;
  //! "<driver>/<volume handle>": the same volume used by several pods counts once.
  std::string unique_name;
  //! An in-tree disk or in-tree provisioner counted for the CSI driver it migrated to. Upstream
  //! counts these only where CSI migration is on, which needs the node's CSINode
  //! (isCSIMigrationOn), so they are ignored on nodes without one, errors included.
  bool migrated = false;
  //! Non-success: what Filter returns when it reaches this volume (upstream stops at the first).
  framework::Status error;

  static CountedVolume Counted(std::string_view driver, std::string_view handle, bool migrated) {
    std::string unique_name;
    unique_name.reserve(driver.size() + 1 + handle.size());
    unique_name.append(driver).append("/").append(handle);
    return {std::string(driver), std::move(unique_name), migrated, framework::Status()};
  }
  static CountedVolume Failed(framework::Status error, bool migrated) {
    return {std::string(), std::string(), migrated, std::move(error)};
  }
};

struct PreFilterState final : framework::StateData {
  //! The pod's volumes in spec order; resolution stops after an error that holds on every node.
  std::vector<CountedVolume> volumes;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
};

// The in-tree provisioners csi-translation-lib can migrate, as a StorageClass names them.
struct InTreeProvisioner {
  std::string_view name;
  std::string_view csi_driver;
  //! Whether isCSIMigrationOn knows the plugin; claims of the others are not counted at all.
  bool migration_on;
};
constexpr InTreeProvisioner kInTreeProvisioners[] = {
    {"kubernetes.io/aws-ebs", "ebs.csi.aws.com", true},
    {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io", true},
    {"kubernetes.io/azure-disk", "disk.csi.azure.com", true},
    {"kubernetes.io/cinder", "cinder.csi.openstack.org", true},
    {"kubernetes.io/portworx-volume", "pxd.portworx.com", true},
    {"kubernetes.io/azure-file", "file.csi.azure.com", false},
    {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", false},
};

const InTreeProvisioner* FindInTreeProvisioner(std::string_view provisioner) {
  for (const auto& p : kInTreeProvisioners) {
    if (p.name == provisioner) return &p;
  }
  return nullptr;
}

// An inline disk the CSI translation covers (upstream's translator.IsInlineMigratable, for the
// in-tree sources kubesched models).
bool IsInlineMigratable(const api::Volume& volume) {
  return volume.disk.has_value() && !api::MigratedCSIDriver(volume.disk->type).empty();
}

// A volume whose use upstream counts or checks: a claim, an ephemeral volume's claim or a
// migratable inline disk. Inline CSI volumes (volume.csi_driver) are not counted upstream.
bool IsCountedSource(const api::Volume& volume) {
  return !volume.claim_name.empty() || volume.ephemeral || IsInlineMigratable(volume);
}

// csi-translation-lib's KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<id>", "aws:///<id>" or a
// bare id.
std::expected<std::string, std::string> EBSVolumeID(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme)) return std::string(id);
  // url.Parse: the path follows the host and ends at a query or fragment.
  std::string_view rest = id.substr(kScheme.size());
  rest = rest.substr(0, rest.find_first_of("?#"));
  const size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (path.starts_with('/')) path.remove_prefix(1);
  while (path.ends_with('/')) path.remove_suffix(1);
  // The two known forms, vol-12345678 and vol-12345678abcdef01 (^vol-[^/]*$).
  if (!path.starts_with("vol-") || path.find('/') != std::string_view::npos) {
    return std::unexpected("failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (" +
                           std::string(id) + ")");
  }
  return std::string(path);
}

// csi-translation-lib's getRegionFromZones: every zone is <locale>-<region>-<zone> in one region.
std::expected<std::string, std::string> RegionOfZones(const std::vector<std::string_view>& zones) {
  std::set<std::string, std::less<>> regions;
  for (std::string_view zone : zones) {
    const size_t first = zone.find('-');
    const size_t second = first == std::string_view::npos ? first : zone.find('-', first + 1);
    if (second == std::string_view::npos || zone.find('-', second + 1) != std::string_view::npos) {
      return std::unexpected("zone in unexpected format, expected: {locale}-{region}-{zone}, got: " +
                             std::string(zone));
    }
    regions.emplace(zone.substr(0, second));
  }
  if (regions.size() != 1) return std::unexpected(std::string("multiple or no regions gotten from zones"));
  return *regions.begin();
}

// The GCE PD CSI handle of a PersistentVolume's disk: its zone label gives the zone ("__"
// separates the zones of a regional disk).
std::expected<std::string, std::string> GCEVolumeHandle(std::string_view pd_name, const api::Labels* labels) {
  constexpr std::string_view kUnspecified = "UNSPECIFIED";
  std::string_view zones_label;
  if (labels != nullptr) {
    const std::string* zones = labels->Find(api::kLabelFailureDomainZone);
    if (zones == nullptr || zones->empty()) zones = labels->Find(api::kLabelTopologyZone);
    if (zones != nullptr) zones_label = *zones;
  }
  std::vector<std::string_view> zones;
  for (size_t start = 0;;) {
    const size_t end = zones_label.find("__", start);
    zones.push_back(zones_label.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 2;
  }
  std::string handle = "projects/";
  handle.append(kUnspecified);
  if (zones.size() == 1 && !zones[0].empty()) {
    handle.append("/zones/").append(zones[0]);
  } else if (zones.size() > 1) {
    auto region = RegionOfZones(zones);
    if (!region) return std::unexpected("failed to get region from zones: " + region.error());
    handle.append("/regions/").append(*region);
  } else {
    handle.append("/zones/").append(kUnspecified);
  }
  handle.append("/disks/").append(pd_name);
  return handle;
}

// Resolves pods' volumes to what they count for, reading claims, volumes and classes.
class VolumeResolver {
 public:
  VolumeResolver(const framework::StorageLister& storage, std::string_view random_volume_id_prefix)
      : storage_(storage), prefix_(random_volume_id_prefix) {}

  // Appends `pod`'s counted volumes to `out` (upstream's filterAttachableVolumes). For the pod
  // being scheduled (`new_pod`) a missing claim is an error; for pods already on the node it is
  // ignored: nothing says which volume it would be.
  void Resolve(const api::Pod& pod, bool new_pod, std::vector<CountedVolume>& out) const {
    for (const api::Volume& volume : pod.spec.volumes) {
      if (volume.claim_name.empty() && !volume.ephemeral) {
        if (IsInlineMigratable(volume)) AddInlineDisk(volume, out);
        continue;
      }
      const std::string claim_name = api::ClaimNameOf(pod, volume);
      auto claim = storage_.Claim(pod.metadata.namespace_, claim_name);
      if (claim == nullptr) {
        if (!new_pod) continue;
        // The pod cannot run until the claim exists: no node helps.
        out.push_back(CountedVolume::Failed(framework::Status::UnschedulableAndUnresolvable(
                                                "looking up PVC " + pod.metadata.namespace_ + "/" + claim_name +
                                                ": persistentvolumeclaims \"" + claim_name + "\" not found"),
                                            /*migrated=*/false));
        return;
      }
      if (volume.ephemeral && !IsClaimForPod(pod, *claim)) {
        // A claim of that name made by someone else: the pod's own claim cannot be created.
        out.push_back(CountedVolume::Failed(
            framework::Status::Error("PVC " + claim->metadata.namespace_ + "/" + claim->metadata.name +
                                     " was not created for pod " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                                     " (pod is not owner)"),
            /*migrated=*/false));
        return;
      }
      AddClaim(*claim, out);
    }
  }

 private:
  // ephemeral.VolumeIsForPod: the pod controls the claim.
  static bool IsClaimForPod(const api::Pod& pod, const api::PersistentVolumeClaim& claim) {
    if (claim.metadata.namespace_ != pod.metadata.namespace_) return false;
    for (const api::OwnerReference& ref : claim.metadata.owner_references) {
      if (ref.controller) return ref.uid == pod.metadata.uid;
    }
    return false;
  }

  // checkAttachableInlineVolume: a translation error is the pod's error, where migration is on.
  static void AddInlineDisk(const api::Volume& volume, std::vector<CountedVolume>& out) {
    const std::string_view driver = api::MigratedCSIDriver(volume.disk->type);
    auto handle = TranslateInTreeHandle(*volume.disk, nullptr);
    if (!handle) {
      out.push_back(CountedVolume::Failed(
          framework::Status::Error("converting volume(" + volume.name + ") from inline to csi: " + handle.error()),
          /*migrated=*/true));
      return;
    }
    out.push_back(CountedVolume::Counted(driver, *handle, /*migrated=*/true));
  }

  // getCSIDriverInfo: the bound volume's driver and handle; an unbound claim (or one whose volume
  // is gone) counts by its class.
  void AddClaim(const api::PersistentVolumeClaim& claim, std::vector<CountedVolume>& out) const {
    if (claim.volume_name.empty()) return AddByClass(claim, out);
    auto pv = storage_.Volume(claim.volume_name);
    if (pv == nullptr) return AddByClass(claim, out);
    if (!pv->csi_driver.empty()) {
      if (pv->volume_handle.empty()) return;
      out.push_back(CountedVolume::Counted(pv->csi_driver, pv->volume_handle, /*migrated=*/false));
      return;
    }
    if (!pv->in_tree) return;
    const std::string_view driver = api::MigratedCSIDriver(pv->in_tree->type);
    if (driver.empty()) return;  // iscsi, rbd: never migrated, not counted here
    auto handle = TranslateInTreeHandle(*pv->in_tree, &pv->metadata.labels);
    if (!handle) return;  // upstream logs and leaves the volume uncounted
    out.push_back(CountedVolume::Counted(driver, *handle, /*migrated=*/true));
  }

  // getCSIDriverInfoFromSC: the class's provisioner with a handle of the claim's own, so that
  // pods sharing the unbound claim count it once.
  void AddByClass(const api::PersistentVolumeClaim& claim, std::vector<CountedVolume>& out) const {
    const std::string* beta_class = claim.metadata.annotations.Find(kAnnotationBetaStorageClass);
    const std::string_view class_name = beta_class != nullptr ? std::string_view(*beta_class) : claim.ClassName();
    // Without a class the claim binds immediately (before scheduling): nothing to count.
    if (class_name.empty()) return;
    auto storage_class = storage_.Class(class_name);
    if (storage_class == nullptr) return;
    std::string handle;
    handle.reserve(prefix_.size() + claim.metadata.namespace_.size() + claim.metadata.name.size() + 2);
    handle.append(prefix_).append("-").append(claim.metadata.namespace_).append("/").append(claim.metadata.name);
    if (const InTreeProvisioner* in_tree = FindInTreeProvisioner(storage_class->provisioner)) {
      if (!in_tree->migration_on) return;
      out.push_back(CountedVolume::Counted(in_tree->csi_driver, handle, /*migrated=*/true));
      return;
    }
    out.push_back(CountedVolume::Counted(storage_class->provisioner, handle, /*migrated=*/false));
  }

  const framework::StorageLister& storage_;
  std::string_view prefix_;
};

template <typename T>
const T* StorageAs(const api::StorageObject* object) {
  if (object == nullptr) return nullptr;
  const auto* ptr = std::get_if<std::shared_ptr<const T>>(object);
  return ptr != nullptr ? ptr->get() : nullptr;
}

// rand.String(32): upstream's alphabet (no vowels, no look-alike characters).
std::string RandomVolumeIDPrefix() {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device seed;
  std::mt19937_64 gen(seed());
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string prefix(32, ' ');
  for (char& c : prefix) c = kAlphabet[pick(gen)];
  return prefix;
}

}  // namespace

std::expected<std::string, std::string> TranslateInTreeHandle(const api::InlineDisk& disk,
                                                              const api::Labels* volume_labels) {
  switch (disk.type) {
    case api::InlineDiskType::kAWSElasticBlockStore:
      return EBSVolumeID(disk.id);
    case api::InlineDiskType::kGCEPersistentDisk:
      // An inline disk names no zone: csi-translation-lib leaves it unspecified.
      return GCEVolumeHandle(disk.id, volume_labels);
    case api::InlineDiskType::kAzureDisk:  // the disk URI
    case api::InlineDiskType::kCinder:     // the volume id
      return disk.id;
    case api::InlineDiskType::kISCSI:
    case api::InlineDiskType::kRBD:
      break;
  }
  return std::unexpected(std::string("in-tree plugin has no CSI migration"));
}

NodeVolumeLimits::NodeVolumeLimits(framework::Handle& handle, std::string random_volume_id_prefix)
    : handle_(handle), random_volume_id_prefix_(std::move(random_volume_id_prefix)) {}

std::pair<framework::PreFilterResult, framework::Status> NodeVolumeLimits::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    std::span<const framework::NodeInfo* const> /*nodes*/) {
  const auto& volumes = pod.pod().spec.volumes;
  if (std::none_of(volumes.begin(), volumes.end(), IsCountedSource)) return {{}, framework::Status::Skip()};
  auto s = std::make_unique<PreFilterState>();
  VolumeResolver(handle_.Storage(), random_volume_id_prefix_).Resolve(pod.pod(), /*new_pod=*/true, s->volumes);
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, framework::Status::Success()};
}

framework::Status NodeVolumeLimits::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                           const framework::NodeInfo& node_info) {
  if (pod.pod().spec.volumes.empty()) return framework::Status::Success();
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  const framework::StorageLister& storage = handle_.Storage();
  const VolumeResolver resolver(storage, random_volume_id_prefix_);

  // Without PreFilter's state (a caller running Filter alone) the pod's volumes are resolved here.
  std::vector<CountedVolume> resolved;
  const std::vector<CountedVolume>* pod_volumes = &resolved;
  if (const auto* s = state.Get<PreFilterState>(kPreFilterStateKey)) {
    pod_volumes = &s->volumes;
  } else {
    resolver.Resolve(pod.pod(), /*new_pod=*/true, resolved);
  }

  // Without a CSINode the node reports no limits, and migration is off (migrated volumes ignored).
  const auto csi_node = storage.CSINodeOf(node->metadata.name);
  std::vector<const CountedVolume*> new_volumes;  // by unique name
  for (const CountedVolume& v : *pod_volumes) {
    if (v.migrated && csi_node == nullptr) continue;
    if (!v.error.IsSuccess()) return v.error;
    const bool seen = std::any_of(new_volumes.begin(), new_volumes.end(),
                                  [&](const CountedVolume* n) { return n->unique_name == v.unique_name; });
    if (!seen) new_volumes.push_back(&v);
  }
  if (new_volumes.empty() || csi_node == nullptr) return framework::Status::Success();
  const bool has_limits = std::any_of(csi_node->drivers.begin(), csi_node->drivers.end(),
                                      [](const api::CSINodeDriver& d) { return d.allocatable_count.has_value(); });
  if (!has_limits) return framework::Status::Success();

  // Volumes the node's pods use, each once (unique name -> driver).
  std::unordered_map<std::string, std::string> attached;
  std::vector<CountedVolume> scratch;
  for (const framework::PodInfoPtr& existing : node_info.pods()) {
    if (existing->pod().spec.volumes.empty()) continue;
    scratch.clear();
    resolver.Resolve(existing->pod(), /*new_pod=*/false, scratch);
    for (CountedVolume& v : scratch) {
      // The node has a CSINode here, so migrated volumes count too.
      if (!v.error.IsSuccess()) return v.error;
      attached.insert_or_assign(std::move(v.unique_name), std::move(v.driver));
    }
  }

  // Per driver of the pod's new volumes: those the node already uses count once.
  std::unordered_map<std::string_view, int64_t> new_count;
  for (const CountedVolume* v : new_volumes) {
    if (!attached.contains(v->unique_name)) ++new_count[v->driver];
  }
  for (const auto& [driver, count] : new_count) {
    const api::CSINodeDriver* limits = csi_node->Driver(driver);
    if (limits == nullptr || !limits->allocatable_count) continue;
    int64_t in_use = 0;
    for (const auto& [name, attached_driver] : attached) {
      if (attached_driver == driver) ++in_use;
    }
    if (in_use + count > *limits->allocatable_count) {
      static const framework::StaticReasons kReasons{kErrReasonMaxVolumeCountExceeded};
      return framework::Status(framework::Code::kUnschedulable, kReasons);
    }
  }
  return framework::Status::Success();
}

framework::QueueingHint IsSchedulableAfterAssignedPodDeleted(const api::Pod& /*pod*/,
                                                             const framework::EventObjects& event) {
  const api::Pod* deleted = event.old_pod;
  if (deleted == nullptr) return framework::QueueingHint::kQueue;
  if (deleted->spec.volumes.empty()) return framework::QueueingHint::kSkip;
  // A pod neither bound nor nominated used no node's volumes.
  if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty()) {
    return framework::QueueingHint::kSkip;
  }
  const auto& volumes = deleted->spec.volumes;
  return std::any_of(volumes.begin(), volumes.end(), IsCountedSource) ? framework::QueueingHint::kQueue
                                                                      : framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterPVCAdded(const api::Pod& pod, const framework::EventObjects& event) {
  const auto* added = StorageAs<api::PersistentVolumeClaim>(event.new_storage);
  if (added == nullptr) return framework::QueueingHint::kQueue;
  if (added->metadata.namespace_ != pod.metadata.namespace_) return framework::QueueingHint::kSkip;
  for (const api::Volume& volume : pod.spec.volumes) {
    if (volume.claim_name.empty() && !volume.ephemeral) continue;
    if (api::ClaimNameOf(pod, volume) == added->metadata.name) return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterCSINodeUpdated(const api::Pod& /*pod*/,
                                                         const framework::EventObjects& event) {
  const auto* old_node = StorageAs<api::CSINode>(event.old_storage);
  const auto* new_node = StorageAs<api::CSINode>(event.new_storage);
  if (old_node == nullptr || new_node == nullptr) return framework::QueueingHint::kQueue;
  for (const api::CSINodeDriver& d : new_node->drivers) {
    const api::CSINodeDriver* before = old_node->Driver(d.name);
    const int32_t old_limit = before != nullptr ? before->allocatable_count.value_or(0) : 0;
    // Upstream reads an absent count as 0: a driver turning unlimited does not queue.
    if (d.allocatable_count.value_or(0) > old_limit) return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> NodeVolumeLimits::EventsToRegister() const {
  return {
      // Any new CSINode may report limits that admit the pod: no hint, as upstream.
      {{framework::EventResource::kCSINode, framework::action::kAdd, "CSINodeAdd"}, nullptr},
      {{framework::EventResource::kCSINode, framework::action::kUpdate, "CSINodeUpdate"},
       IsSchedulableAfterCSINodeUpdated},
      {framework::events::AssignedPodDelete(), IsSchedulableAfterAssignedPodDeleted},
      {{framework::EventResource::kPersistentVolumeClaim, framework::action::kAdd, "PersistentVolumeClaimAdd"},
       IsSchedulableAfterPVCAdded},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& handle) {
  return std::make_unique<NodeVolumeLimits>(handle, RandomVolumeIDPrefix());
}

}  // namespace kubesched::plugins::node_volume_limits
