// Typed reads of DOM values, and the pieces every kind shares: quantities, selectors, metadata.

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "api/decode_internal.h"
#include "api/names.h"
#include "api/time_format.h"
#include "api/workloads.h"
#include "util/duration.h"

namespace kubesched::api::decode {

std::string ScalarText(const json::Value& v, const Context& ctx) {
  if (v.IsString()) return std::string(json::View(v));
  if (ctx.texts != nullptr) {
    if (auto written = ctx.texts->Find(&v)) return std::string(*written);
  }
  char buf[64];
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsInt64()) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v.GetInt64()).ptr);
  if (v.IsUint64()) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v.GetUint64()).ptr);
  if (v.IsDouble()) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v.GetDouble()).ptr);
  return "";
}

std::string Describe(const json::Value* v, const Context& ctx) {
  if (!Present(v)) return "nothing";
  if (v->IsObject()) return "a mapping";
  if (v->IsArray()) return "a list";
  std::string s = ScalarText(*v, ctx);
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return GoQuote(s);
}

void Fail(const json::Value* at, std::string path, std::string message, std::string_view reason, bool at_key) {
  throw Failure{FieldError{std::move(path), std::string(reason), std::move(message)}, at, at_key};
}

void Fail(const json::Value* at, const Path& path, std::string message, std::string_view reason, bool at_key) {
  Fail(at, path.Render(), std::move(message), reason, at_key);
}

std::string Path::Render() const {
  if (kind_ == Kind::kRoot) return std::string(key_);
  std::string out = parent_->Render();
  if (kind_ == Kind::kKey) {
    field_path::AppendField(out, key_);
  } else {
    field_path::AppendIndex(out, index_);
  }
  return out;
}

std::string ChildPath(std::string base, std::string_view key) {
  field_path::AppendField(base, key);
  return base;
}

std::string IndexPath(std::string base, size_t i) {
  field_path::AppendIndex(base, i);
  return base;
}

std::optional<int64_t> ParseInteger(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string Join(const std::vector<std::string>& messages) {
  std::string out;
  for (const std::string& m : messages) out += (out.empty() ? "" : "; ") + m;
  return out;
}

std::string ReadScalarString(const json::Value* v, const Path& path, const Context& ctx) {
  if (!Present(v)) return "";
  if (v->IsObject() || v->IsArray()) Fail(v, path, "expected a string, got " + Describe(v, ctx));
  return ScalarText(*v, ctx);
}

std::string_view ReadStringView(const json::Value* v, const Path& path, const Context& ctx, std::string& buffer) {
  if (Present(v) && v->IsString()) return json::View(*v);
  buffer = ReadString(v, path, ctx);
  return buffer;
}

int64_t ReadInt(const json::Value* v, const Path& path, int64_t min, int64_t max, const Context& ctx) {
  std::optional<int64_t> value;
  if (v != nullptr && v->IsInt64()) {
    value = v->GetInt64();
  } else if (v != nullptr && v->IsString()) {
    value = ParseInteger(json::View(*v));  // "80" reads as 80, as it did through yaml-cpp
  }
  if (!value) Fail(v, path, "expected an integer, got " + Describe(v, ctx));
  if (*value < min || *value > max) {
    Fail(v, path,
         "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(*value));
  }
  return *value;
}

namespace {

// yaml-cpp's convert<bool>: y/yes/true/on and n/no/false/off, all lower, all upper or capitalised.
std::optional<bool> ParseYamlBool(std::string_view s) {
  static constexpr std::pair<std::string_view, bool> kNames[] = {
      {"y", true},  {"yes", true}, {"true", true},   {"on", true},
      {"n", false}, {"no", false}, {"false", false}, {"off", false},
  };
  for (const auto& [name, value] : kNames) {
    if (s.size() != name.size()) continue;
    std::string lower(s), upper(s), capital(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower != name) continue;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    capital[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(capital[0])));
    if (s == name || s == upper || s == capital) return value;
  }
  return std::nullopt;
}

}  // namespace

bool ReadNonBool(const json::Value* v, const Path& path, const Context& ctx) {
  if (!Present(v)) return false;
  if (v->IsBool()) return v->GetBool();
  if (v->IsString()) {
    if (auto b = ParseYamlBool(json::View(*v))) return *b;
  }
  Fail(v, path, "expected true or false, got " + Describe(v, ctx));
}

namespace {

// s in ASCII lower case (as std::tolower in the "C" locale), copied into `buffer` only when it has
// an upper-case letter (annotation keys seldom do).
std::string_view AsciiLower(std::string_view s, std::string& buffer) {
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  if (std::none_of(s.begin(), s.end(), upper)) return s;
  buffer.assign(s);
  for (char& c : buffer) {
    if (upper(c)) c = static_cast<char>(c - 'A' + 'a');
  }
  return buffer;
}

}  // namespace

void MapView::NotAMapping() const { Fail(node_, path_, "expected a mapping of fields, got " + Describe(node_, ctx_)); }

std::string MapView::RequiredString(std::string_view key) const {
  std::string s = String(key);
  if (s.empty()) Fail(At(key), PathOf(key), "required field is missing or empty", kFieldValueRequired);
  return s;
}

std::vector<std::string> MapView::StringList(std::string_view key) const {
  std::vector<std::string> out;
  const json::Value* list = Get(key);
  if (!Present(list)) return out;
  const Path path = PathOf(key);
  if (!list->IsArray()) Fail(list, path, "expected a list, got " + Describe(list, ctx_));
  out.reserve(std::min<size_t>(list->Size(), kMaxReserved));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) out.push_back(ReadString(&(*list)[i], path.Index(i), ctx_));
  return out;
}

Labels MapView::LabelMap(std::string_view key) const {
  Labels out;
  const MapView m(Get(key), PathOf(key), ctx_);
  if (!Present(m.node_)) return out;
  std::vector<Labels::Entry> entries;
  entries.reserve(std::min<size_t>(m.node_->MemberCount(), kMaxReserved));
  for (auto it = m.node_->MemberBegin(); it != m.node_->MemberEnd(); ++it) {
    const std::string_view k = json::View(it->name);
    const json::Value* v = &it->value;
    if (!IsValidQualifiedName(k))
      Fail(v, m.path_.Child(k), "invalid label key " + GoQuote(k) + ": " + Join(IsQualifiedName(k)));
    std::string value = ReadString(v, m.path_.Child(k), ctx_);
    if (!IsValidLabelValueText(value)) {
      Fail(v, m.path_.Child(k), "invalid label value " + GoQuote(value) + ": " + Join(IsValidLabelValue(value)));
    }
    entries.emplace_back(std::string(k), std::move(value));
  }
  return Labels::FromEntries(std::move(entries));
}

Labels MapView::AnnotationMap(std::string_view key) const {
  Labels out;
  const MapView m(Get(key), PathOf(key), ctx_);
  if (!Present(m.node_)) return out;
  std::vector<Labels::Entry> entries;
  entries.reserve(std::min<size_t>(m.node_->MemberCount(), kMaxReserved));
  std::string lower;
  size_t total = 0;
  for (auto it = m.node_->MemberBegin(); it != m.node_->MemberEnd(); ++it) {
    const std::string_view k = json::View(it->name);
    const json::Value* v = &it->value;
    if (const std::string_view checked = AsciiLower(k, lower); !IsValidQualifiedName(checked)) {
      Fail(v, m.path_.Child(k), "invalid annotation key " + GoQuote(k) + ": " + Join(IsQualifiedName(checked)));
    }
    std::string value = ReadString(v, m.path_.Child(k), ctx_);
    total += k.size() + value.size();
    entries.emplace_back(std::string(k), std::move(value));
  }
  // Upstream's ValidateAnnotations: keys and values together at most 256 KiB per object.
  if (total > kMaxAnnotationBytes) {
    Fail(m.node_, m.path_, fmt::format("Too long: must have at most {} bytes", kMaxAnnotationBytes),
         kFieldValueTooLong);
  }
  return Labels::FromEntries(std::move(entries));
}

// ---------------------------------------------------------------------------------------------
// Quantities, selectors.

ResourceList ReadResourceList(const MapView& parent, std::string_view key) {
  ResourceList out;
  const Context& ctx = parent.ctx();
  parent.ForEachEntry(key, [&](std::string_view name, const json::Value* v, const Path& path) {
    if (name.empty()) Fail(v, path, "resource names must not be empty");
    if (!Present(v)) Fail(v, path, "expected a quantity such as 500m, 2 or 1Gi, got nothing");
    if (v->IsObject() || v->IsArray())
      Fail(v, path, "expected a quantity such as 500m, 2 or 1Gi, got " + Describe(v, ctx));
    // A string's text as it is (most quantities are strings), anything else as ScalarText writes it.
    std::string scalar;
    const std::string_view text = v->IsString() ? json::View(*v) : std::string_view(scalar = ScalarText(*v, ctx));
    auto q = Quantity::Parse(text);
    if (!q) Fail(v, path, q.error());
    if (q->IsNegative()) Fail(v, path, "must be greater than or equal to 0, got " + GoQuote(text));
    out.insert_or_assign(out.end(), std::string(name), std::move(*q));  // names mostly come sorted
  });
  return out;
}

namespace {

enum class RequirementKind { kLabel, kNode, kField };

constexpr std::pair<std::string_view, SelectorOperator> kLabelOperators[] = {
    {"In", SelectorOperator::kIn},
    {"NotIn", SelectorOperator::kNotIn},
    {"Exists", SelectorOperator::kExists},
    {"DoesNotExist", SelectorOperator::kDoesNotExist},
};
constexpr std::pair<std::string_view, SelectorOperator> kNodeOperators[] = {
    {"In", SelectorOperator::kIn},         {"NotIn", SelectorOperator::kNotIn},
    {"Exists", SelectorOperator::kExists}, {"DoesNotExist", SelectorOperator::kDoesNotExist},
    {"Gt", SelectorOperator::kGt},         {"Lt", SelectorOperator::kLt},
};
constexpr std::pair<std::string_view, SelectorOperator> kFieldOperators[] = {
    {"In", SelectorOperator::kIn},
    {"NotIn", SelectorOperator::kNotIn},
};

SelectorRequirement ReadRequirement(const MapView& m, RequirementKind kind) {
  SelectorRequirement r;
  r.key = m.RequiredString("key");
  if (kind == RequirementKind::kField && r.key != kFieldNodeName) {
    Fail(m.At("key"), m.PathOf("key"),
         "unsupported field " + GoQuote(r.key) + "; matchFields only supports \"metadata.name\"",
         kFieldValueNotSupported);
  }
  const Path op_path = m.PathOf("operator");
  if (!m.Has("operator")) Fail(m.At("operator"), op_path, "required field is missing or empty", kFieldValueRequired);
  switch (kind) {
    case RequirementKind::kLabel:
      r.op = m.Enum_("operator", kLabelOperators);
      break;
    case RequirementKind::kNode:
      r.op = m.Enum_("operator", kNodeOperators);
      break;
    case RequirementKind::kField:
      r.op = m.Enum_("operator", kFieldOperators);
      break;
  }
  r.values = m.StringList("values");
  const Path values_path = m.PathOf("values");
  const json::Value* values_at = m.At("values");
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (kind == RequirementKind::kField && r.values.size() != 1) {
        Fail(values_at, values_path, "must have exactly one value for a matchFields requirement");
      }
      if (r.values.empty())
        Fail(values_at, values_path, "must be non-empty when operator is In or NotIn", kFieldValueRequired);
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!r.values.empty())
        Fail(values_at, values_path, "must be empty when operator is Exists or DoesNotExist", kFieldValueForbidden);
      break;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      if (r.values.size() != 1 || !ParseInteger(r.values.front())) {
        Fail(values_at, values_path, "must be exactly one integer when operator is Gt or Lt");
      }
      break;
  }
  // Sorted and unique, as the header promises and as upstream's selectors store them.
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  return r;
}

LabelSelector ReadLabelSelector(const MapView& m) {
  LabelSelector s;
  s.match_labels = m.LabelMap("matchLabels");
  m.ForEachMap("matchExpressions", [&](const MapView& item, size_t) {
    s.match_expressions.push_back(ReadRequirement(item, RequirementKind::kLabel));
  });
  return s;
}

}  // namespace

std::optional<LabelSelector> ReadOptLabelSelector(const MapView& parent, std::string_view key) {
  const std::optional<MapView> selector = parent.OptMap(key);
  if (!selector) return std::nullopt;
  return ReadLabelSelector(*selector);
}

NodeSelectorTerm ReadNodeSelectorTerm(const MapView& m) {
  NodeSelectorTerm t;
  m.ForEachMap("matchExpressions", [&](const MapView& item, size_t) {
    t.match_expressions.push_back(ReadRequirement(item, RequirementKind::kNode));
  });
  m.ForEachMap("matchFields", [&](const MapView& item, size_t) {
    t.match_fields.push_back(ReadRequirement(item, RequirementKind::kField));
  });
  return t;
}

NodeSelector ReadNodeSelector(const MapView& m) {
  NodeSelector s;
  m.ForEachMap("nodeSelectorTerms",
               [&](const MapView& item, size_t) { s.terms.push_back(ReadNodeSelectorTerm(item)); });
  if (s.terms.empty()) {
    Fail(m.At("nodeSelectorTerms"), m.PathOf("nodeSelectorTerms"), "must have at least one node selector term",
         kFieldValueRequired);
  }
  return s;
}

std::optional<int64_t> ReadTime(const MapView& m, std::string_view key) {
  const json::Value* v = m.Get(key);
  if (!Present(v)) return std::nullopt;
  std::string buffer;
  const std::string_view text = ReadStringView(v, m.PathOf(key), m.ctx(), buffer);
  auto t = ParseRFC3339(text);
  if (!t) {
    Fail(v, m.PathOf(key), "invalid time " + GoQuote(text) + "; use RFC 3339, such as \"2024-05-01T12:00:00Z\"");
  }
  return t;
}

void CheckTimelineAnnotations(const MapView& annotations) {
  for (std::string_view key : {kAnnotationCreateAfter, kAnnotationDeleteAfter, kAnnotationRunFor}) {
    const json::Value* v = annotations.Get(key);
    if (!Present(v)) continue;
    const std::string text = ReadString(v, annotations.PathOf(key), annotations.ctx());
    auto d = util::ParseDuration(text);
    if (!d) Fail(v, annotations.PathOf(key), d.error());
    if (*d < 0) Fail(v, annotations.PathOf(key), "must not be negative, got " + GoQuote(text));
  }
}

ObjectMeta ReadMetadata(const MapView& m) {
  ObjectMeta meta;
  ReadMetadata(m, meta);
  return meta;
}

void ReadMetadata(const MapView& m, ObjectMeta& meta) {
  // Timestamps are Unix time, the clock the simulation runs on too.
  if (auto t = ReadTime(m, "creationTimestamp")) meta.creation_timestamp_ns = *t;
  meta.deletion_timestamp_ns = ReadTime(m, "deletionTimestamp");
  meta.name = m.String("name");
  meta.generate_name = m.String("generateName");
  meta.namespace_ = m.String("namespace");
  meta.uid = m.String("uid");
  meta.resource_version = m.String("resourceVersion");
  meta.generation = m.OptInt("generation").value_or(0);
  meta.deletion_grace_period_seconds = m.OptInt("deletionGracePeriodSeconds");
  meta.finalizers = m.StringList("finalizers");
  meta.labels = m.LabelMap("labels");
  meta.annotations = m.AnnotationMap("annotations");
  CheckTimelineAnnotations(m.Map("annotations"));
  m.ForEachMap("ownerReferences", [&](const MapView& o, size_t) {
    meta.owner_references.push_back(OwnerReference{
        .api_version = o.String("apiVersion"),
        .kind = o.RequiredString("kind"),
        .name = o.RequiredString("name"),
        .uid = o.String("uid"),
        .controller = o.Bool("controller"),
    });
  });
  const size_t controllers = std::count_if(meta.owner_references.begin(), meta.owner_references.end(),
                                           [](const OwnerReference& r) { return r.controller; });
  if (controllers > 1) {
    Fail(m.At("ownerReferences"), m.PathOf("ownerReferences"), "only one reference can have controller set to true");
  }
}

}  // namespace kubesched::api::decode
