#include "api/decode.h"

#include <algorithm>

#include "api/decode_internal.h"
#include "api/kinds.h"

namespace kubesched::api {
namespace decode {

const KindInfo* CheckKind(const MapView& obj, std::string& kind) {
  if (!Present(obj.node())) {
    Fail(obj.node(), obj.path(), "expected an object with apiVersion and kind, got nothing", kFieldValueRequired);
  }
  kind = obj.RequiredString("kind");
  const std::string api_version = obj.RequiredString("apiVersion");
  const auto slash = api_version.find('/');
  const std::string_view group =
      slash == std::string::npos ? std::string_view() : std::string_view(api_version).substr(0, slash);
  const std::string_view version =
      slash == std::string::npos ? std::string_view(api_version) : std::string_view(api_version).substr(slash + 1);
  if (version.empty() || group.empty() != (slash == std::string::npos)) {
    Fail(obj.At("apiVersion"), obj.PathOf("apiVersion"),
         "invalid apiVersion " + GoQuote(api_version) +
             "; expected \"version\" or \"group/version\", such as \"apps/v1\"");
  }
  const BuiltinGroup* builtin = LookupBuiltinGroup(group);
  const KindInfo* info = builtin == nullptr ? LookupCustomKind(group, kind) : LookupKind(kind);
  if (builtin == nullptr && info == nullptr) return nullptr;  // a custom resource kubesched does not read
  if (info == nullptr) {
    const std::vector<std::string_view> served = Words(builtin->kinds);
    if (std::find(served.begin(), served.end(), kind) != served.end()) return nullptr;
    std::string message = "no kind " + GoQuote(kind) + " is served by apiVersion " + GoQuote(api_version);
    if (std::string_view close = field_path::Closest(kind, served); !close.empty()) {
      message += " (did you mean " + GoQuote(close) + "?)";
    }
    Fail(obj.At("kind"), obj.PathOf("kind"), message, kFieldValueNotSupported);
  }
  const std::string want =
      info->group.empty() ? std::string(info->version) : std::string(info->group) + "/" + std::string(info->version);
  if (group != info->group) {
    Fail(obj.At("apiVersion"), obj.PathOf("apiVersion"),
         "apiVersion " + GoQuote(api_version) + " does not serve kind " + kind + "; use " + GoQuote(want),
         kFieldValueNotSupported);
  }
  // Every kind kubesched reads is served at one version (v1 but for the alpha PodGroup): the beta
  // versions (batch/v1beta1 CronJob, apps/v1beta2 StatefulSet, policy/v1beta1
  // PodDisruptionBudget, ...) were removed upstream, and kubectl refuses them as "no matches for
  // kind".
  if (version != info->version) {
    Fail(obj.At("apiVersion"), obj.PathOf("apiVersion"),
         "no matches for kind " + GoQuote(kind) + " in version " + GoQuote(api_version) +
             (info->version == "v1" ? " (Kubernetes no longer serves it); use " : "; use ") + GoQuote(want),
         kFieldValueNotSupported);
  }
  return info;
}

namespace {

// An object of a kind that needs nothing beyond its metadata and its own fields.
template <typename T, typename ReadMeta>
std::shared_ptr<T> DecodeSimple(const ReadMeta& read_metadata, const MapView& obj, void (*read)(const MapView&, T&)) {
  auto o = std::make_shared<T>();
  read_metadata(o->metadata);
  read(obj, *o);
  return o;
}

}  // namespace

Object DecodeChecked(const MapView& obj, const KindInfo& info) {
  // The object is made first and its metadata read into it (then checked and defaulted), before
  // its kind's fields.
  const MapView meta_view = obj.Map("metadata");
  auto read_metadata = [&](ObjectMeta& meta) {
    ReadMetadata(meta_view, meta);
    ValidateMetadata(meta_view, info, meta);
    if (info.namespaced) {
      if (meta.namespace_.empty()) meta.namespace_ = kNamespaceDefault;
    } else {
      meta.namespace_.clear();  // cluster-scoped: a namespace in the manifest means nothing
    }
  };
  Object out;
  const std::string_view kind = info.kind;
  if (kind == "Node") {
    auto n = std::make_shared<Node>();
    read_metadata(n->metadata);
    ReadNode(obj, *n);
    out = std::move(n);
  } else if (kind == "Pod") {
    auto p = std::make_shared<Pod>();
    read_metadata(p->metadata);
    const std::optional<MapView> spec = obj.OptMap("spec");
    if (!spec) Fail(obj.At("spec"), obj.PathOf("spec"), "required field is missing", kFieldValueRequired);
    ReadPodSpec(*spec, p->spec);
    p->status = ReadPodStatus(obj.Map("status"));
    out = std::move(p);
  } else if (kind == "Namespace") {
    auto ns = std::make_shared<Namespace>();
    read_metadata(ns->metadata);
    out = std::move(ns);
  } else if (kind == "PriorityClass") {
    auto pc = std::make_shared<PriorityClass>();
    read_metadata(pc->metadata);
    ReadPriorityClass(obj, *pc);
    out = std::move(pc);
  } else if (kind == "PodDisruptionBudget") {
    auto pdb = std::make_shared<PodDisruptionBudget>();
    read_metadata(pdb->metadata);
    ReadPodDisruptionBudget(obj, *pdb);
    out = std::move(pdb);
  } else if (kind == "PodGroup") {
    auto pg = std::make_shared<PodGroup>();
    read_metadata(pg->metadata);
    if (info.group == "scheduling.x-k8s.io") {
      ReadCoschedulingPodGroup(obj, *pg);
    } else {
      ReadPodGroup(obj, *pg);
    }
    out = std::move(pg);
  } else if (kind == "PersistentVolumeClaim") {
    out = DecodeSimple<PersistentVolumeClaim>(read_metadata, obj, ReadPersistentVolumeClaim);
  } else if (kind == "PersistentVolume") {
    out = DecodeSimple<PersistentVolume>(read_metadata, obj, ReadPersistentVolume);
  } else if (kind == "StorageClass") {
    out = DecodeSimple<StorageClass>(read_metadata, obj, ReadStorageClass);
  } else if (kind == "CSINode") {
    out = DecodeSimple<CSINode>(read_metadata, obj, ReadCSINode);
  } else if (kind == "CSIDriver") {
    out = DecodeSimple<CSIDriver>(read_metadata, obj, ReadCSIDriver);
  } else if (kind == "CSIStorageCapacity") {
    out = DecodeSimple<CSIStorageCapacity>(read_metadata, obj, ReadCSIStorageCapacity);
  } else if (kind == "DeviceClass") {
    out = DecodeSimple<DeviceClass>(read_metadata, obj, ReadDeviceClass);
  } else if (kind == "ResourceSlice") {
    out = DecodeSimple<ResourceSlice>(read_metadata, obj, ReadResourceSlice);
  } else if (kind == "ResourceClaim") {
    out = DecodeSimple<ResourceClaim>(read_metadata, obj, ReadResourceClaim);
  } else if (kind == "ResourceClaimTemplate") {
    out = DecodeSimple<ResourceClaimTemplate>(read_metadata, obj, ReadResourceClaimTemplate);
  } else {
    auto w = std::make_shared<Workload>();
    w->kind = std::string(kind);
    read_metadata(w->metadata);
    ReadWorkload(obj, *w);
    out = std::move(w);
  }
  return out;
}

}  // namespace decode

namespace {

ObjectJson KeepJson(const json::Value& object, const DecodeOptions& options) {
  if (!options.keep_json) return nullptr;
  return std::make_shared<const std::string>(json::Encode(object));
}

void SetJson(Object& object, ObjectJson json) {
  std::visit([&](auto& o) { o->json = std::move(json); }, object);
}

std::expected<Object, FieldErrors> DecodeAny(const json::Value& object, const std::string& prefix,
                                             const DecodeOptions& options) {
  const decode::Context ctx{options.texts};
  try {
    const decode::MapView obj(&object, decode::Path(prefix), ctx);
    std::string kind;
    const KindInfo* info = decode::CheckKind(obj, kind);
    if (info == nullptr) {
      return std::unexpected(
          FieldErrors{FieldError{decode::ChildPath(prefix, "kind"), std::string(kFieldValueNotSupported),
                                 "kind " + util::GoQuote(kind) + " is not one kubesched reads"}});
    }
    Object out = decode::DecodeChecked(obj, *info);
    SetJson(out, KeepJson(object, options));
    return out;
  } catch (decode::Failure& f) {
    return std::unexpected(FieldErrors{std::move(f.error)});
  }
}

template <typename T>
Decoded<T> DecodeAs(const json::Value& object, const DecodeOptions& options, std::string_view what) {
  auto any = DecodeAny(object, "", options);
  if (!any) return std::unexpected(std::move(any.error()));
  if (auto* p = std::get_if<std::shared_ptr<T>>(&*any)) return std::move(*p);
  return std::unexpected(FieldErrors{
      FieldError{"kind", std::string(kFieldValueInvalid),
                 "expected " + std::string(what) + ", got " + util::GoQuote(json::GetString(object, "kind"))}});
}

}  // namespace

Decoded<Pod> DecodePod(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<Pod>(object, options, "a Pod");
}
Decoded<Node> DecodeNode(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<Node>(object, options, "a Node");
}
Decoded<Namespace> DecodeNamespace(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<Namespace>(object, options, "a Namespace");
}
Decoded<PriorityClass> DecodePriorityClass(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<PriorityClass>(object, options, "a PriorityClass");
}
Decoded<PodDisruptionBudget> DecodePodDisruptionBudget(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<PodDisruptionBudget>(object, options, "a PodDisruptionBudget");
}
Decoded<PodGroup> DecodePodGroup(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<PodGroup>(object, options, "a PodGroup");
}
Decoded<PersistentVolumeClaim> DecodePersistentVolumeClaim(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<PersistentVolumeClaim>(object, options, "a PersistentVolumeClaim");
}
Decoded<PersistentVolume> DecodePersistentVolume(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<PersistentVolume>(object, options, "a PersistentVolume");
}
Decoded<StorageClass> DecodeStorageClass(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<StorageClass>(object, options, "a StorageClass");
}
Decoded<CSINode> DecodeCSINode(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<CSINode>(object, options, "a CSINode");
}
Decoded<CSIDriver> DecodeCSIDriver(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<CSIDriver>(object, options, "a CSIDriver");
}
Decoded<CSIStorageCapacity> DecodeCSIStorageCapacity(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<CSIStorageCapacity>(object, options, "a CSIStorageCapacity");
}
Decoded<DeviceClass> DecodeDeviceClass(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<DeviceClass>(object, options, "a DeviceClass");
}
Decoded<ResourceSlice> DecodeResourceSlice(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<ResourceSlice>(object, options, "a ResourceSlice");
}
Decoded<ResourceClaim> DecodeResourceClaim(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<ResourceClaim>(object, options, "a ResourceClaim");
}
Decoded<ResourceClaimTemplate> DecodeResourceClaimTemplate(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<ResourceClaimTemplate>(object, options, "a ResourceClaimTemplate");
}
Decoded<Workload> DecodeWorkload(const json::Value& object, const DecodeOptions& options) {
  return DecodeAs<Workload>(object, options, "a workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ...)");
}

std::expected<PodStatus, FieldErrors> DecodePodStatus(const json::Value& pod) {
  const decode::Context ctx{};
  try {
    // From the root, as DecodeChecked reads it, so a cause names "status.conditions[0].type".
    const decode::MapView obj(&pod, decode::Path(""), ctx);
    return decode::ReadPodStatus(obj.Map("status"));
  } catch (decode::Failure& f) {
    return std::unexpected(FieldErrors{std::move(f.error)});
  }
}

std::expected<Object, FieldErrors> DecodeObject(const json::Value& object, const DecodeOptions& options) {
  return DecodeAny(object, "", options);
}

std::vector<std::expected<Object, FieldErrors>> DecodeList(const json::Value& list, const DecodeOptions& options) {
  std::vector<std::expected<Object, FieldErrors>> out;
  const json::Value* items = json::Find(list, "items");
  if (items == nullptr || items->IsNull()) {
    out.push_back(std::unexpected(
        FieldErrors{FieldError{"items", std::string(kFieldValueRequired), "required field is missing"}}));
    return out;
  }
  if (!items->IsArray()) {
    out.push_back(
        std::unexpected(FieldErrors{FieldError{"items", std::string(kFieldValueInvalid), "expected a list"}}));
    return out;
  }
  out.reserve(items->Size());
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    out.push_back(DecodeAny((*items)[i], decode::IndexPath("items", i), options));
  }
  return out;
}

ObjectMeta& MetaOf(const Object& object) {
  return std::visit([](const auto& o) -> ObjectMeta& { return o->metadata; }, object);
}

}  // namespace kubesched::api
