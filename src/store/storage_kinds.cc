#include "store/storage_kinds.h"

#include "api/decode.h"
#include "api/storage_types.h"
#include "store/errors.h"
#include "store/typed_view.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

void SetIfAbsent(json::Value& object, std::string_view key, json::Value value, json::Allocator& a) {
  if (json::Find(object, key) == nullptr) json::Set(object, key, std::move(value), a);
}

json::Value Str(std::string_view s, json::Allocator& a) { return json::MakeString(s, a); }

ResourceType Make(std::string group, std::string resource, std::string kind, std::string singular, bool namespaced) {
  ResourceType t;
  t.group = std::move(group);
  t.version = "v1";
  t.resource = std::move(resource);
  t.kind = std::move(kind);
  t.singular = std::move(singular);
  t.namespaced = namespaced;
  return t;
}

bool IsDefaultClass(const json::Value& sc) {
  const json::Value* meta = json::Find(sc, "metadata");
  const json::Value* annotations = meta != nullptr ? json::Find(*meta, "annotations") : nullptr;
  if (annotations == nullptr || !annotations->IsObject()) return false;
  for (std::string_view key : {api::kAnnotationDefaultStorageClass, api::kAnnotationBetaDefaultStorageClass}) {
    if (json::GetString(*annotations, key) == "true") return true;
  }
  return false;
}

}  // namespace

std::optional<Error> AdmitDefaultStorageClass(json::Document& claim, const ObjectReader& reader) {
  auto& a = claim.GetAllocator();
  json::Value& spec = json::Child(claim, "spec", a);
  if (const json::Value* given = json::Find(spec, "storageClassName"); given != nullptr && !given->IsNull()) {
    return std::nullopt;
  }
  // Upstream picks the newest default class (then by name) when several are marked default.
  std::string chosen;
  uint64_t chosen_version = 0;
  for (const ObjectPtr& sc : reader.List("storage.k8s.io", "storageclasses", "")) {
    json::Document d;
    if (!json::Parse(sc->json, d) || !IsDefaultClass(d)) continue;
    if (chosen.empty() || sc->resource_version > chosen_version) {
      chosen = sc->name;
      chosen_version = sc->resource_version;
    }
  }
  if (!chosen.empty()) json::Set(spec, "storageClassName", Str(chosen, a), a);
  return std::nullopt;
}

ResourceType PersistentVolumeClaims() {
  ResourceType t = Make("", "persistentvolumeclaims", "PersistentVolumeClaim", "persistentvolumeclaim", true);
  t.short_names = {"pvc"};
  t.subresources = {"status"};
  t.default_fields = [](json::Document& pvc) {
    auto& a = pvc.GetAllocator();
    SetIfAbsent(json::Child(pvc, "spec", a), "volumeMode", Str("Filesystem", a), a);
    SetIfAbsent(json::Child(pvc, "status", a), "phase", Str("Pending", a), a);
  };
  t.admit = AdmitDefaultStorageClass;
  SetTypedView<api::PersistentVolumeClaim, api::DecodePersistentVolumeClaim>(t);
  return t;
}

ResourceType PersistentVolumes() {
  ResourceType t = Make("", "persistentvolumes", "PersistentVolume", "persistentvolume", false);
  t.short_names = {"pv"};
  t.subresources = {"status"};
  t.default_fields = [](json::Document& pv) {
    auto& a = pv.GetAllocator();
    json::Value& spec = json::Child(pv, "spec", a);
    SetIfAbsent(spec, "persistentVolumeReclaimPolicy", Str("Retain", a), a);
    SetIfAbsent(spec, "volumeMode", Str("Filesystem", a), a);
    SetIfAbsent(json::Child(pv, "status", a), "phase", Str("Pending", a), a);
  };
  SetTypedView<api::PersistentVolume, api::DecodePersistentVolume>(t);
  return t;
}

ResourceType StorageClasses() {
  ResourceType t = Make("storage.k8s.io", "storageclasses", "StorageClass", "storageclass", false);
  t.short_names = {"sc"};
  t.default_fields = [](json::Document& sc) {
    auto& a = sc.GetAllocator();
    SetIfAbsent(sc, "reclaimPolicy", Str("Delete", a), a);
    SetIfAbsent(sc, "volumeBindingMode", Str("Immediate", a), a);
  };
  SetTypedView<api::StorageClass, api::DecodeStorageClass>(t);
  return t;
}

ResourceType CSINodes() {
  ResourceType t = Make("storage.k8s.io", "csinodes", "CSINode", "csinode", false);
  SetTypedView<api::CSINode, api::DecodeCSINode>(t);
  return t;
}

ResourceType CSIDrivers() {
  ResourceType t = Make("storage.k8s.io", "csidrivers", "CSIDriver", "csidriver", false);
  t.default_fields = [](json::Document& driver) {
    auto& a = driver.GetAllocator();
    json::Value& spec = json::Child(driver, "spec", a);
    SetIfAbsent(spec, "attachRequired", json::Value(true), a);
    SetIfAbsent(spec, "podInfoOnMount", json::Value(false), a);
    SetIfAbsent(spec, "storageCapacity", json::Value(false), a);
    SetIfAbsent(spec, "requiresRepublish", json::Value(false), a);
    SetIfAbsent(spec, "fsGroupPolicy", Str("ReadWriteOnceWithFSType", a), a);
  };
  SetTypedView<api::CSIDriver, api::DecodeCSIDriver>(t);
  return t;
}

ResourceType CSIStorageCapacities() {
  ResourceType t = Make("storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", "csistoragecapacity", true);
  SetTypedView<api::CSIStorageCapacity, api::DecodeCSIStorageCapacity>(t);
  return t;
}

}  // namespace kubesched::store
