#pragma once
// Shared by the decoders (decode_*.cc), not part of the API: typed reads of DOM values with field
// paths, and the exception that carries a field error out of a decoder. Exceptions never leave
// the decoders: DecodeObject and friends (decode.h) turn them into FieldErrors.
//
// Reads are lenient where the yaml-cpp loader was (its behaviour is user-facing): a scalar where a
// string belongs reads as written, a string of digits where an integer belongs reads as that
// integer, absent and null read alike.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/field_error.h"
#include "api/field_path.h"
#include "api/json.h"
#include "api/resource_types.h"
#include "api/storage_types.h"
#include "api/types.h"
#include "api/yaml.h"
#include "util/go_quote.h"

namespace kubesched::api::decode {

//! Upstream's limit on an object's annotations, keys and values together
//! (apimachinery's TotalAnnotationSizeLimitB).
inline constexpr size_t kMaxAnnotationBytes = 256 * 1024;

using util::GoQuote;

//! A field error thrown by a decoder; `at` is the value to point at in messages with a line
//! (the field itself, or the nearest enclosing value when the field is absent), `at_key` when
//! it is the member's name rather than its value.
struct Failure {
  FieldError error;
  const json::Value* at = nullptr;
  bool at_key = false;
};

//! What every read consults: the written form of YAML scalars (null for JSON input).
struct Context {
  const yaml::ScalarTexts* texts = nullptr;
};

inline bool Present(const json::Value* v) { return v != nullptr && !v->IsNull(); }

//! A scalar's text: a string's own, else as written (YAML), else as JSON prints it.
std::string ScalarText(const json::Value& v, const Context& ctx);

//! "nothing", "a mapping", "a list" or the quoted scalar (cut to 40 characters), for messages
//! such as `expected a list, got a mapping`.
std::string Describe(const json::Value* v, const Context& ctx);

//! A field path, rendered only when an error reports it: a step (a key or a list index) below a
//! parent path, or a root (the object's own prefix, such as "" or "items[3]"). A path refers to its
//! parent and its key without copying them, so both must outlive it: paths are made for one
//! decode and held by MapViews that live no longer than their parents.
class Path {
 public:
  Path() = default;
  explicit Path(std::string_view root) : key_(root) {}
  Path Child(std::string_view key) const { return Path(this, key, 0, Kind::kKey); }
  Path Index(size_t i) const { return Path(this, {}, i, Kind::kIndex); }
  //! "spec.containers[0].resources.requests[nvidia.com/gpu]"
  std::string Render() const;

 private:
  enum class Kind : uint8_t { kRoot, kKey, kIndex };
  Path(const Path* parent, std::string_view key, size_t index, Kind kind)
      : parent_(parent), key_(key), index_(index), kind_(kind) {}

  const Path* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  Kind kind_ = Kind::kRoot;
};

[[noreturn]] void Fail(const json::Value* at, std::string path, std::string message,
                       std::string_view reason = kFieldValueInvalid, bool at_key = false);
[[noreturn]] void Fail(const json::Value* at, const Path& path, std::string message,
                       std::string_view reason = kFieldValueInvalid, bool at_key = false);

std::string ChildPath(std::string base, std::string_view key);
std::string IndexPath(std::string base, size_t i);
std::optional<int64_t> ParseInteger(std::string_view s);
std::string Join(const std::vector<std::string>& messages);

//! A string's own text (the common case, inline), else ReadScalarString's.
inline std::string ReadString(const json::Value* v, const Path& path, const Context& ctx);
//! The text of a scalar that is not a string ("" when absent); an error for a mapping or a list.
std::string ReadScalarString(const json::Value* v, const Path& path, const Context& ctx);
inline std::string ReadString(const json::Value* v, const Path& path, const Context& ctx) {
  if (v != nullptr && v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  return ReadScalarString(v, path, ctx);
}
//! ReadString's text without a copy when the value is a JSON string (else written into `buffer`).
std::string_view ReadStringView(const json::Value* v, const Path& path, const Context& ctx, std::string& buffer);
int64_t ReadInt(const json::Value* v, const Path& path, int64_t min, int64_t max, const Context& ctx);
inline int32_t ReadInt32(const json::Value* v, const Path& path, const Context& ctx,
                         int64_t min = std::numeric_limits<int32_t>::min(),
                         int64_t max = std::numeric_limits<int32_t>::max()) {
  return static_cast<int32_t>(ReadInt(v, path, min, max, ctx));
}
//! ReadBool of a value that is not a JSON bool.
bool ReadNonBool(const json::Value* v, const Path& path, const Context& ctx);
inline bool ReadBool(const json::Value* v, const Path& path, const Context& ctx) {
  if (v != nullptr && v->IsBool()) return v->GetBool();
  return ReadNonBool(v, path, ctx);
}

template <typename Enum, size_t N>
Enum ReadEnum(const json::Value* v, const Path& path, const std::pair<std::string_view, Enum> (&table)[N],
              const Context& ctx) {
  std::string buffer;
  const std::string_view s = ReadStringView(v, path, ctx, buffer);
  for (const auto& [text, value] : table) {
    if (s == text) return value;
  }
  std::string supported;
  for (const auto& [text, value] : table) {
    if (!supported.empty()) supported += ", ";
    supported += GoQuote(text);
  }
  Fail(v, path, "unsupported value " + GoQuote(s) + "; supported values: " + supported, kFieldValueNotSupported);
}

//! A mapping value with its field path. Lookups never insert and never throw on absent keys.
class MapView {
 public:
  MapView(const json::Value* node, Path path, const Context& ctx) : node_(node), path_(path), ctx_(ctx) {
    if (node_ != nullptr && !node_->IsObject() && !node_->IsNull()) NotAMapping();
  }

  const Path& path() const { return path_; }
  const json::Value* node() const { return node_; }
  const Context& ctx() const { return ctx_; }
  bool empty() const { return !Present(node_) || node_->MemberCount() == 0; }

  //! The member's value (the first, with duplicate keys), or nullptr.
  const json::Value* Get(std::string_view key) const {
    return Present(node_) ? json::FindMember(*node_, key) : nullptr;  // node_ is an object (checked)
  }
  bool Has(std::string_view key) const { return Present(Get(key)); }
  //! The path of a field (valid while this view lives).
  Path PathOf(std::string_view key) const { return path_.Child(key); }
  //! Where to point at for a field: the field itself, or the enclosing mapping when it is absent.
  const json::Value* At(std::string_view key) const {
    const json::Value* v = Get(key);
    return v != nullptr ? v : node_;
  }

  std::string String(std::string_view key) const {
    const json::Value* v = Get(key);
    if (v != nullptr && v->IsString()) return std::string(v->GetString(), v->GetStringLength());
    return ReadScalarString(v, PathOf(key), ctx_);
  }
  std::string RequiredString(std::string_view key) const;
  bool Bool(std::string_view key) const {
    const json::Value* v = Get(key);
    if (v != nullptr && v->IsBool()) return v->GetBool();
    return ReadNonBool(v, PathOf(key), ctx_);
  }
  std::optional<int64_t> OptInt(std::string_view key, int64_t min = std::numeric_limits<int64_t>::min(),
                                int64_t max = std::numeric_limits<int64_t>::max()) const {
    const json::Value* v = Get(key);
    if (!Present(v)) return std::nullopt;
    if (v->IsInt64() && v->GetInt64() >= min && v->GetInt64() <= max) return v->GetInt64();
    return ReadInt(v, PathOf(key), min, max, ctx_);  // the other cases and their errors
  }
  std::optional<int32_t> OptInt32(std::string_view key, int64_t min = std::numeric_limits<int32_t>::min(),
                                  int64_t max = std::numeric_limits<int32_t>::max()) const {
    auto v = OptInt(key, min, max);
    if (!v) return std::nullopt;
    return static_cast<int32_t>(*v);
  }
  template <typename Enum, size_t N>
  Enum Enum_(std::string_view key, const std::pair<std::string_view, Enum> (&table)[N]) const {
    return ReadEnum(Get(key), PathOf(key), table, ctx_);
  }
  //! Enum_ of a field that may be absent (nullopt then).
  template <typename Enum, size_t N>
  std::optional<Enum> OptEnum(std::string_view key, const std::pair<std::string_view, Enum> (&table)[N]) const {
    const json::Value* v = Get(key);  // looked up once
    if (!Present(v)) return std::nullopt;
    return ReadEnum(v, PathOf(key), table, ctx_);
  }
  //! A mapping field's view, whose path refers to this view's: only of a view that outlives it
  //! (never of a temporary).
  MapView Map(std::string_view key) const& { return MapView(Get(key), PathOf(key), ctx_); }
  MapView Map(std::string_view key) && = delete;
  std::optional<MapView> OptMap(std::string_view key) const& {
    const json::Value* v = Get(key);  // looked up once
    if (!Present(v)) return std::nullopt;
    return MapView(v, PathOf(key), ctx_);
  }
  std::optional<MapView> OptMap(std::string_view key) && = delete;

  //! Calls f(item, item_path, index) for each item of a list field.
  template <typename F>
  void ForEach(std::string_view key, F&& f) const {
    const json::Value* list = Get(key);
    if (!Present(list)) return;
    const Path path = PathOf(key);
    if (!list->IsArray()) Fail(list, path, "expected a list, got " + Describe(list, ctx_));
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) f(&(*list)[i], path.Index(i), size_t{i});
  }
  //! Calls f(item_view, index) for each item of a list of mappings.
  template <typename F>
  void ForEachMap(std::string_view key, F&& f) const {
    ForEach(key, [&](const json::Value* item, const Path& path, size_t i) { f(MapView(item, path, ctx_), i); });
  }
  //! ForEachMap for an f that appends to `out`: room for the items reserved first (for at most
  //! kMaxReserved, so a long list of bad items costs no more than before its first error).
  template <typename T, typename F>
  void ForEachMapInto(std::string_view key, std::vector<T>& out, F&& f) const {
    const json::Value* list = Get(key);
    if (!Present(list)) return;
    const Path path = PathOf(key);
    if (!list->IsArray()) Fail(list, path, "expected a list, got " + Describe(list, ctx_));
    out.reserve(out.size() + std::min<size_t>(list->Size(), kMaxReserved));
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) f(MapView(&(*list)[i], path.Index(i), ctx_), size_t{i});
  }
  static constexpr size_t kMaxReserved = 64;
  std::vector<std::string> StringList(std::string_view key) const;
  //! Calls f(key, value, value_path) for each entry of a map field.
  template <typename F>
  void ForEachEntry(std::string_view key, F&& f) const {
    MapView m = Map(key);
    if (!Present(m.node_)) return;
    for (auto it = m.node_->MemberBegin(); it != m.node_->MemberEnd(); ++it) {
      const std::string_view k = json::View(it->name);
      f(k, &it->value, m.path_.Child(k));
    }
  }
  //! A label map (metadata.labels, nodeSelector, matchLabels): keys and values checked as the API
  //! server checks labels.
  Labels LabelMap(std::string_view key) const;
  //! metadata.annotations: keys are qualified names (checked in lower case, as upstream), values
  //! free text.
  Labels AnnotationMap(std::string_view key) const;

 private:
  [[noreturn]] void NotAMapping() const;

  const json::Value* node_;
  Path path_;
  const Context& ctx_;
};

// ---------------------------------------------------------------------------------------------
// Enumerations more than one kind reads.

inline constexpr std::pair<std::string_view, TaintEffect> kTaintEffects[] = {
    {"NoSchedule", TaintEffect::kNoSchedule},
    {"PreferNoSchedule", TaintEffect::kPreferNoSchedule},
    {"NoExecute", TaintEffect::kNoExecute},
};
inline constexpr std::pair<std::string_view, PreemptionPolicy> kPreemptionPolicies[] = {
    {"PreemptLowerPriority", PreemptionPolicy::kPreemptLowerPriority},
    {"Never", PreemptionPolicy::kNever},
};

// ---------------------------------------------------------------------------------------------
// Readers shared between kinds (decode_meta.cc).

ResourceList ReadResourceList(const MapView& parent, std::string_view key);
std::optional<LabelSelector> ReadOptLabelSelector(const MapView& parent, std::string_view key);
NodeSelectorTerm ReadNodeSelectorTerm(const MapView& m);
NodeSelector ReadNodeSelector(const MapView& m);
std::optional<int64_t> ReadTime(const MapView& m, std::string_view key);
//! The scenario timeline's annotations (kAnnotationCreateAfter, kAnnotationDeleteAfter).
void CheckTimelineAnnotations(const MapView& annotations);
//! metadata, as written (no defaulting: namespace and names are the loader's).
ObjectMeta ReadMetadata(const MapView& m);
//! ReadMetadata into a default-constructed `meta` (an object's own, so nothing is moved after).
void ReadMetadata(const MapView& m, ObjectMeta& meta);

// decode_pod.cc
PodSpec ReadPodSpec(const MapView& m);
//! ReadPodSpec into a default-constructed `s`.
void ReadPodSpec(const MapView& m, PodSpec& s);
PodStatus ReadPodStatus(const MapView& m);

// decode_node.cc
void ReadNode(const MapView& obj, Node& node);

// decode_workload.cc
void ReadWorkload(const MapView& obj, Workload& w);

// decode_cluster.cc
void ReadPriorityClass(const MapView& obj, PriorityClass& pc);
//! A PodGroup's spec, with upstream's validation (pkg/apis/scheduling/validation).
void ReadPodGroup(const MapView& obj, PodGroup& pg);
void ReadCoschedulingPodGroup(const MapView& obj, PodGroup& pg);
void ReadPodDisruptionBudget(const MapView& obj, PodDisruptionBudget& pdb);

// decode_storage.cc
//! The in-tree disk source (gcePersistentDisk, awsElasticBlockStore, azureDisk, cinder, iscsi, rbd)
//! among a volume's or a PersistentVolume spec's fields, if any.
std::optional<InlineDisk> ReadInlineDisk(const MapView& m);
//! spec.volumes, checked as upstream checks the fields the scheduler reads (one source each).
void ReadVolumes(const MapView& pod_spec, std::vector<Volume>& out);
void ReadPersistentVolumeClaim(const MapView& obj, PersistentVolumeClaim& pvc);
void ReadPersistentVolume(const MapView& obj, PersistentVolume& pv);
void ReadStorageClass(const MapView& obj, StorageClass& sc);
void ReadCSINode(const MapView& obj, CSINode& node);
void ReadCSIDriver(const MapView& obj, CSIDriver& driver);
void ReadCSIStorageCapacity(const MapView& obj, CSIStorageCapacity& capacity);

// decode_resource.cc
void ReadDeviceClass(const MapView& obj, DeviceClass& dc);
void ReadResourceSlice(const MapView& obj, ResourceSlice& slice);
void ReadResourceClaim(const MapView& obj, ResourceClaim& claim);
void ReadResourceClaimTemplate(const MapView& obj, ResourceClaimTemplate& tmpl);
//! spec.resourceClaims, and the containers' resources.claims (which must name one of them): after
//! the containers are read.
void ReadPodResourceClaims(const MapView& pod_spec, PodSpec& s);
void ReadPodResourceClaimStatuses(const MapView& status, PodStatus& st);

}  // namespace kubesched::api::decode

// decode.cc and validation.cc: the steps of one object, for the loader (which reports Failures
// with line numbers) and for the public API (decode.h).
#include "api/decode.h"
#include "api/kinds.h"

namespace kubesched::api::decode {

//! The object's kind, checked against its apiVersion (unknown kinds of built-in groups are
//! errors, with a "did you mean"); nullptr for a kind kubesched skips (`kind` is set either way).
const KindInfo* CheckKind(const MapView& obj, std::string& kind);

//! Decodes a checked object: metadata (validated, namespace defaulted), then its kind's fields.
Object DecodeChecked(const MapView& obj, const KindInfo& info);

//! metadata.name or generateName present, and names as the API server checks them (validation.cc).
void ValidateMetadata(const MapView& meta_view, const KindInfo& info, const ObjectMeta& meta);

}  // namespace kubesched::api::decode
