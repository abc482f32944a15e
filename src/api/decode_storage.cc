// The storage kinds (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver,
// CSIStorageCapacity) and the volume sources pods and volumes name, checked as upstream's
// pkg/apis/core/validation and pkg/apis/storage/validation check the fields the scheduler reads.

#include <algorithm>
#include <set>
#include <string>

#include "api/decode_internal.h"
#include "api/names.h"
#include "api/storage_types.h"

namespace kubesched::api::decode {
namespace {

constexpr std::pair<std::string_view, PersistentVolumeAccessMode> kAccessModes[] = {
    {"ReadWriteOnce", PersistentVolumeAccessMode::kReadWriteOnce},
    {"ReadOnlyMany", PersistentVolumeAccessMode::kReadOnlyMany},
    {"ReadWriteMany", PersistentVolumeAccessMode::kReadWriteMany},
    {"ReadWriteOncePod", PersistentVolumeAccessMode::kReadWriteOncePod},
};
constexpr std::pair<std::string_view, PersistentVolumeMode> kVolumeModes[] = {
    {"Filesystem", PersistentVolumeMode::kFilesystem},
    {"Block", PersistentVolumeMode::kBlock},
};
constexpr std::pair<std::string_view, PersistentVolumeClaimPhase> kClaimPhases[] = {
    {"Pending", PersistentVolumeClaimPhase::kPending},
    {"Bound", PersistentVolumeClaimPhase::kBound},
    {"Lost", PersistentVolumeClaimPhase::kLost},
};
constexpr std::pair<std::string_view, PersistentVolumePhase> kVolumePhases[] = {
    {"Pending", PersistentVolumePhase::kPending}, {"Available", PersistentVolumePhase::kAvailable},
    {"Bound", PersistentVolumePhase::kBound},     {"Released", PersistentVolumePhase::kReleased},
    {"Failed", PersistentVolumePhase::kFailed},
};
constexpr std::pair<std::string_view, VolumeBindingMode> kBindingModes[] = {
    {"Immediate", VolumeBindingMode::kImmediate},
    {"WaitForFirstConsumer", VolumeBindingMode::kWaitForFirstConsumer},
};
constexpr std::pair<std::string_view, std::string_view> kReclaimPolicies[] = {
    {"Retain", "Retain"}, {"Delete", "Delete"}, {"Recycle", "Recycle"}};

std::vector<PersistentVolumeAccessMode> ReadAccessModes(const MapView& m, std::string_view key) {
  std::vector<PersistentVolumeAccessMode> modes;
  m.ForEach(key, [&](const json::Value* v, const Path& path, size_t) {
    PersistentVolumeAccessMode mode = ReadEnum(v, path, kAccessModes, m.ctx());
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  });
  // ReadWriteOncePod is exclusive: upstream refuses it beside any other mode.
  if (modes.size() > 1 &&
      std::find(modes.begin(), modes.end(), PersistentVolumeAccessMode::kReadWriteOncePod) != modes.end()) {
    Fail(m.At(key), m.PathOf(key), "may not use ReadWriteOncePod with other access modes", kFieldValueForbidden);
  }
  return modes;
}

// A quantity field (CSIStorageCapacity.capacity): a string or a number, non-negative.
std::optional<Quantity> ReadOptQuantity(const MapView& m, std::string_view key) {
  const json::Value* v = m.Get(key);
  if (!Present(v)) return std::nullopt;
  if (v->IsObject() || v->IsArray()) {
    Fail(v, m.PathOf(key), "expected a quantity such as 500m, 2 or 1Gi, got " + Describe(v, m.ctx()));
  }
  const std::string text = v->IsString() ? std::string(json::View(*v)) : ScalarText(*v, m.ctx());
  auto q = Quantity::Parse(text);
  if (!q) Fail(v, m.PathOf(key), q.error());
  if (q->IsNegative()) Fail(v, m.PathOf(key), "must be greater than or equal to 0, got " + GoQuote(text));
  return *q;
}

// spec.resources.requests.storage (claims) and spec.capacity.storage (volumes).
Quantity ReadStorage(const MapView& parent, std::string_view key, bool required) {
  const ResourceList list = ReadResourceList(parent, key);
  auto it = list.find(kResourceStorage);
  if (it == list.end()) {
    if (required) {
      Fail(parent.At(key), parent.PathOf(key).Render() + "[storage]", "Required value", kFieldValueRequired);
    }
    return Quantity();
  }
  return it->second;
}

}  // namespace

// The in-tree disk sources of a volume (pod) or a PersistentVolume's spec: at most one is set.
std::optional<InlineDisk> ReadInlineDisk(const MapView& m) {
  std::optional<InlineDisk> disk;
  auto take = [&](InlineDiskType type, const MapView& source, std::string id) {
    InlineDisk d;
    d.type = type;
    d.id = std::move(id);
    d.read_only = source.Bool("readOnly");
    disk = std::move(d);
  };
  if (auto s = m.OptMap("gcePersistentDisk")) take(InlineDiskType::kGCEPersistentDisk, *s, s->RequiredString("pdName"));
  if (auto s = m.OptMap("awsElasticBlockStore")) {
    take(InlineDiskType::kAWSElasticBlockStore, *s, s->RequiredString("volumeID"));
  }
  if (auto s = m.OptMap("azureDisk")) {
    s->RequiredString("diskName");
    take(InlineDiskType::kAzureDisk, *s, s->RequiredString("diskURI"));
  }
  if (auto s = m.OptMap("cinder")) take(InlineDiskType::kCinder, *s, s->RequiredString("volumeID"));
  if (auto s = m.OptMap("iscsi")) {
    s->RequiredString("targetPortal");
    take(InlineDiskType::kISCSI, *s, s->RequiredString("iqn"));
  }
  if (auto s = m.OptMap("rbd")) {
    take(InlineDiskType::kRBD, *s, s->RequiredString("image"));
    s->ForEach("monitors", [&](const json::Value* v, const Path& path, size_t) {
      disk->monitors.push_back(ReadString(v, path, s->ctx()));
    });
    if (disk->monitors.empty()) Fail(s->At("monitors"), s->PathOf("monitors"), "Required value", kFieldValueRequired);
    disk->pool = s->String("pool");
    if (disk->pool.empty()) disk->pool = "rbd";
  }
  return disk;
}

void ReadVolumes(const MapView& spec, std::vector<Volume>& out) {
  // The sources a volume may have (core/v1 VolumeSource): exactly one.
  static constexpr std::string_view kSources[] = {"hostPath",
                                                  "emptyDir",
                                                  "gcePersistentDisk",
                                                  "awsElasticBlockStore",
                                                  "gitRepo",
                                                  "secret",
                                                  "nfs",
                                                  "iscsi",
                                                  "glusterfs",
                                                  "persistentVolumeClaim",
                                                  "rbd",
                                                  "flexVolume",
                                                  "cinder",
                                                  "cephfs",
                                                  "flocker",
                                                  "downwardAPI",
                                                  "fc",
                                                  "azureFile",
                                                  "configMap",
                                                  "vsphereVolume",
                                                  "quobyte",
                                                  "azureDisk",
                                                  "photonPersistentDisk",
                                                  "projected",
                                                  "portworxVolume",
                                                  "scaleIO",
                                                  "storageos",
                                                  "csi",
                                                  "ephemeral",
                                                  "image"};
  std::set<std::string, std::less<>> names;
  spec.ForEachMapInto("volumes", out, [&](const MapView& v, size_t) {
    Volume volume;
    volume.name = v.RequiredString("name");
    if (const std::vector<std::string> errs = IsDNS1123Label(volume.name); !errs.empty()) {
      Fail(v.At("name"), v.PathOf("name"), Join(errs));
    }
    if (!names.insert(volume.name).second) {
      Fail(v.At("name"), v.PathOf("name"), "Duplicate value: " + GoQuote(volume.name), kFieldValueDuplicate);
    }
    int sources = 0;
    for (std::string_view s : kSources) sources += v.Has(s) ? 1 : 0;
    if (sources > 1) Fail(v.node(), v.path(), "may not specify more than 1 volume type", kFieldValueForbidden);
    if (auto pvc = v.OptMap("persistentVolumeClaim")) {
      volume.claim_name = pvc->RequiredString("claimName");
      volume.claim_read_only = pvc->Bool("readOnly");
    }
    if (auto eph = v.OptMap("ephemeral")) {
      const std::optional<MapView> tmpl = eph->OptMap("volumeClaimTemplate");
      if (!tmpl) {
        Fail(eph->At("volumeClaimTemplate"), eph->PathOf("volumeClaimTemplate"), "Required value", kFieldValueRequired);
      }
      const MapView claim_spec = tmpl->Map("spec");
      ReadAccessModes(claim_spec, "accessModes");
      volume.ephemeral = true;
      volume.claim_template_json = std::make_shared<const std::string>(json::Encode(*tmpl->node()));
    }
    volume.disk = ReadInlineDisk(v);
    if (auto csi = v.OptMap("csi")) volume.csi_driver = csi->RequiredString("driver");
    out.push_back(std::move(volume));
  });
}

void ReadPersistentVolumeClaim(const MapView& obj, PersistentVolumeClaim& pvc) {
  const MapView spec = obj.Map("spec");
  pvc.access_modes = ReadAccessModes(spec, "accessModes");
  if (pvc.access_modes.empty()) {
    Fail(spec.At("accessModes"), spec.PathOf("accessModes"), "at least 1 access mode is required", kFieldValueRequired);
  }
  pvc.selector = ReadOptLabelSelector(spec, "selector");
  pvc.request = ReadStorage(spec.Map("resources"), "requests", true);
  pvc.volume_name = spec.String("volumeName");
  if (spec.Has("storageClassName")) pvc.storage_class_name = spec.String("storageClassName");
  if (auto mode = spec.OptEnum("volumeMode", kVolumeModes)) pvc.volume_mode = *mode;
  const MapView status = obj.Map("status");
  if (auto phase = status.OptEnum("phase", kClaimPhases)) pvc.phase = *phase;
  const ResourceList capacity = ReadResourceList(status, "capacity");
  if (auto it = capacity.find(kResourceStorage); it != capacity.end()) pvc.capacity = it->second;
}

void ReadPersistentVolume(const MapView& obj, PersistentVolume& pv) {
  const MapView spec = obj.Map("spec");
  pv.capacity = ReadStorage(spec, "capacity", true);
  pv.access_modes = ReadAccessModes(spec, "accessModes");
  if (pv.access_modes.empty()) {
    Fail(spec.At("accessModes"), spec.PathOf("accessModes"), "must specify at least 1 access mode",
         kFieldValueRequired);
  }
  if (auto ref = spec.OptMap("claimRef")) {
    pv.claim_ref = ObjectReference{ref->String("namespace"), ref->String("name"), ref->String("uid")};
  }
  pv.storage_class_name = spec.String("storageClassName");
  if (auto affinity = spec.OptMap("nodeAffinity")) {
    if (auto required = affinity->OptMap("required")) pv.node_affinity = ReadNodeSelector(*required);
  }
  if (spec.Has("persistentVolumeReclaimPolicy")) {
    pv.reclaim_policy = std::string(spec.Enum_("persistentVolumeReclaimPolicy", kReclaimPolicies));
  }
  if (auto mode = spec.OptEnum("volumeMode", kVolumeModes)) pv.volume_mode = *mode;
  static constexpr std::string_view kSources[] = {"gcePersistentDisk",
                                                  "awsElasticBlockStore",
                                                  "hostPath",
                                                  "glusterfs",
                                                  "nfs",
                                                  "rbd",
                                                  "iscsi",
                                                  "cinder",
                                                  "cephfs",
                                                  "fc",
                                                  "flocker",
                                                  "flexVolume",
                                                  "azureFile",
                                                  "vsphereVolume",
                                                  "quobyte",
                                                  "azureDisk",
                                                  "photonPersistentDisk",
                                                  "portworxVolume",
                                                  "scaleIO",
                                                  "local",
                                                  "storageos",
                                                  "csi"};
  int sources = 0;
  for (std::string_view s : kSources) sources += spec.Has(s) ? 1 : 0;
  if (sources == 0) Fail(spec.node(), spec.path(), "must specify a volume type", kFieldValueRequired);
  if (sources > 1) Fail(spec.node(), spec.path(), "may not specify more than 1 volume type", kFieldValueForbidden);
  pv.in_tree = ReadInlineDisk(spec);
  if (auto csi = spec.OptMap("csi")) {
    pv.csi_driver = csi->RequiredString("driver");
    pv.volume_handle = csi->RequiredString("volumeHandle");
  }
  // A local volume is reachable from one node: upstream requires nodeAffinity for it.
  if (spec.Has("local") && !pv.node_affinity) {
    Fail(spec.At("nodeAffinity"), spec.PathOf("nodeAffinity"), "Local volumes require node affinity",
         kFieldValueRequired);
  }
  if (auto phase = obj.Map("status").OptEnum("phase", kVolumePhases)) pv.phase = *phase;
}

void ReadStorageClass(const MapView& obj, StorageClass& sc) {
  sc.provisioner = obj.RequiredString("provisioner");
  if (auto mode = obj.OptEnum("volumeBindingMode", kBindingModes)) sc.volume_binding_mode = *mode;
  if (obj.Has("reclaimPolicy")) sc.reclaim_policy = std::string(obj.Enum_("reclaimPolicy", kReclaimPolicies));
  obj.ForEachEntry("parameters", [&](std::string_view key, const json::Value* v, const Path& path) {
    sc.parameters.Set(std::string(key), ReadString(v, path, obj.ctx()));
  });
  obj.ForEachMap("allowedTopologies", [&](const MapView& term, size_t) {
    std::vector<TopologySelectorRequirement> reqs;
    term.ForEachMap("matchLabelExpressions", [&](const MapView& r, size_t) {
      TopologySelectorRequirement req;
      req.key = r.RequiredString("key");
      r.ForEach("values", [&](const json::Value* v, const Path& path, size_t) {
        req.values.push_back(ReadString(v, path, r.ctx()));
      });
      if (req.values.empty()) Fail(r.At("values"), r.PathOf("values"), "must specify as least one value for the key");
      reqs.push_back(std::move(req));
    });
    if (reqs.empty()) {
      Fail(term.At("matchLabelExpressions"), term.PathOf("matchLabelExpressions"),
           "must have at least one label expression", kFieldValueRequired);
    }
    sc.allowed_topologies.push_back(std::move(reqs));
  });
}

void ReadCSINode(const MapView& obj, CSINode& node) {
  const MapView spec = obj.Map("spec");
  spec.ForEachMap("drivers", [&](const MapView& d, size_t) {
    CSINodeDriver driver;
    driver.name = d.RequiredString("name");
    driver.node_id = d.RequiredString("nodeID");
    d.ForEach("topologyKeys", [&](const json::Value* v, const Path& path, size_t) {
      driver.topology_keys.push_back(ReadString(v, path, d.ctx()));
    });
    if (auto alloc = d.OptMap("allocatable")) driver.allocatable_count = alloc->OptInt32("count", 0);
    if (node.Driver(driver.name) != nullptr) {
      Fail(d.At("name"), d.PathOf("name"), "Duplicate value: " + GoQuote(driver.name), kFieldValueDuplicate);
    }
    node.drivers.push_back(std::move(driver));
  });
}

void ReadCSIDriver(const MapView& obj, CSIDriver& driver) {
  const MapView spec = obj.Map("spec");
  driver.attach_required = !spec.Has("attachRequired") || spec.Bool("attachRequired");
  driver.storage_capacity = spec.Bool("storageCapacity");
}

void ReadCSIStorageCapacity(const MapView& obj, CSIStorageCapacity& capacity) {
  capacity.storage_class_name = obj.RequiredString("storageClassName");
  capacity.node_topology = ReadOptLabelSelector(obj, "nodeTopology");
  capacity.capacity = ReadOptQuantity(obj, "capacity");
  capacity.maximum_volume_size = ReadOptQuantity(obj, "maximumVolumeSize");
}

}  // namespace kubesched::api::decode
