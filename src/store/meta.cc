#include "store/meta.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "api/names.h"
#include "store/errors.h"

namespace kubesched::store {

namespace json = api::json;

std::string NewUid(api::Rng& rng) {
  const uint64_t hi = rng(), lo = rng();
  uint8_t b[16];
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    b[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  return fmt::format(
      "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", b[0],
      b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

json::Value& Metadata(json::Document& doc) {
  if (!doc.IsObject()) doc.SetObject();
  return json::Child(doc, "metadata", doc.GetAllocator());
}

std::optional<uint64_t> ParseResourceVersion(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace {

void PutVarint(std::string& out, size_t n) {
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
}

size_t GetVarint(std::string_view in, size_t& pos) {
  size_t n = 0;
  for (int shift = 0; pos < in.size(); shift += 7) {
    const auto b = static_cast<unsigned char>(in[pos++]);
    n |= static_cast<size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  return n;
}

// The selectable fields' values in field_selectors order; trailing empty values are left out.
void PackFields(const ResourceType& type, const json::Value& doc, std::string& out) {
  thread_local std::vector<std::pair<std::string, std::string>> fields;
  fields.clear();
  type.selectable_fields(doc, fields);
  std::string packed;
  size_t kept = 0;  // packed's size after the last non-empty value
  for (const std::string& key : type.field_selectors) {
    std::string_view value;
    for (const auto& [k, v] : fields) {
      if (k == key) {
        value = v;
        break;
      }
    }
    PutVarint(packed, value.size());
    packed.append(value);
    if (!value.empty()) kept = packed.size();
  }
  packed.resize(kept);
  packed.shrink_to_fit();
  out = std::move(packed);
}

}  // namespace

std::string_view Object::Field(std::string_view key) const {
  if (type == nullptr) return {};
  const std::string_view in = packed_fields;
  size_t pos = 0;
  for (const std::string& k : type->field_selectors) {
    if (pos >= in.size()) return {};
    const size_t n = GetVarint(in, pos);
    if (n > in.size() - pos) return {};
    if (k == key) return in.substr(pos, n);
    pos += n;
  }
  return {};
}

std::shared_ptr<Object> MakeObject(const ResourceType& type, json::Document& doc, uint64_t rv,
                                   std::shared_ptr<void> decoded) {
  auto& alloc = doc.GetAllocator();
  json::Value& meta = Metadata(doc);
  json::Set(meta, "resourceVersion", json::MakeString(std::to_string(rv), alloc), alloc);
  auto obj = std::make_shared<Object>();
  obj->type = &type;
  obj->namespace_ = std::string(json::GetString(meta, "namespace"));
  obj->name = std::string(json::GetString(meta, "name"));
  obj->uid = std::string(json::GetString(meta, "uid"));
  obj->resource_version = rv;
  {
    std::string text;
    json::EncodeTo(doc, text);
    text.shrink_to_fit();  // the writer grows by doubling; the text is kept for the version's life
    obj->json = std::move(text);
  }
  if (type.decode) {
    if (!decoded) decoded = type.decode(doc, nullptr).view;
    if (decoded) type.complete_view(decoded.get(), *obj);
    obj->view = std::move(decoded);
  } else if (type.view) {
    obj->view = type.view(doc);
  }
  if (type.view_labels && obj->view) {
    obj->shared_labels = type.view_labels(obj->view.get());
  } else if (const json::Value* labels = json::Find(meta, "labels"); labels && labels->IsObject()) {
    obj->own_labels.reserve(labels->MemberCount());
    for (const auto& m : labels->GetObject()) {
      obj->own_labels.emplace_back(std::string(json::View(m.name)), std::string(json::View(m.value)));
    }
    std::sort(obj->own_labels.begin(), obj->own_labels.end());
  }
  if (type.selectable_fields) PackFields(type, doc, obj->packed_fields);
  return obj;
}

json::Document ParseObject(const Object& object) {
  json::Document doc;
  (void)json::Parse(object.json, doc);
  return doc;
}

ObjectPtr WithResourceVersion(const Object& object, uint64_t rv) {
  json::Document doc = ParseObject(object);
  auto copy = std::make_shared<Object>(object);
  copy->resource_version = rv;
  json::Set(Metadata(doc), "resourceVersion", json::MakeString(std::to_string(rv), doc.GetAllocator()),
            doc.GetAllocator());
  std::string text;
  json::EncodeTo(doc, text);
  copy->json = std::move(text);
  return copy;
}

bool SameJson(const json::Value& a, const json::Value& b) {
  if (a.GetType() != b.GetType()) return false;
  switch (a.GetType()) {
    case rapidjson::kNullType:
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return true;
    case rapidjson::kNumberType:
      if (a.IsDouble() || b.IsDouble()) {
        return a.IsDouble() && b.IsDouble() &&
               std::bit_cast<uint64_t>(a.GetDouble()) == std::bit_cast<uint64_t>(b.GetDouble());
      }
      if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
      if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
      return false;
    case rapidjson::kStringType:
      return json::View(a) == json::View(b);
    case rapidjson::kArrayType: {
      if (a.Size() != b.Size()) return false;
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!SameJson(a[i], b[i])) return false;
      }
      return true;
    }
    case rapidjson::kObjectType: {
      if (a.MemberCount() != b.MemberCount()) return false;
      for (auto x = a.MemberBegin(), y = b.MemberBegin(); x != a.MemberEnd(); ++x, ++y) {
        if (json::View(x->name) != json::View(y->name) || !SameJson(x->value, y->value)) return false;
      }
      return true;
    }
  }
  return false;
}

bool SameExceptStatus(const json::Value& a, const json::Value& b) {
  if (!a.IsObject() || !b.IsObject()) return false;
  const bool a_status = json::Find(a, "status") != nullptr;
  const bool b_status = json::Find(b, "status") != nullptr;
  if (a.MemberCount() - a_status != b.MemberCount() - b_status) return false;
  for (const auto& m : a.GetObject()) {
    const std::string_view key = json::View(m.name);
    if (key == "status") continue;
    const json::Value* other = json::Find(b, key);
    if (other == nullptr || !SameJson(m.value, *other)) return false;
  }
  return true;
}

namespace {

std::vector<Cause> ValidateMetadata(const ResourceType& type, const json::Value& meta) {
  std::vector<Cause> causes;
  const std::string_view name = json::GetString(meta, "name");
  if (name.empty()) {
    causes.push_back(RequiredCause("metadata.name", "name or generateName is required"));
  } else {
    auto errs = type.validate_name != nullptr ? type.validate_name(name) : api::IsDNS1123Subdomain(name);
    for (const auto& e : errs) causes.push_back(InvalidCause("metadata.name", name, e));
  }
  if (const json::Value* labels = json::Find(meta, "labels"); labels && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      const std::string_view k = json::View(m.name);
      for (const auto& e : api::IsQualifiedName(k)) causes.push_back(InvalidCause("metadata.labels", k, e));
      if (!m.value.IsString()) {
        causes.push_back(
            InvalidCause(fmt::format("metadata.labels[{}]", k), json::Encode(m.value), "must be a string"));
        continue;
      }
      for (const auto& e : api::IsValidLabelValue(json::View(m.value))) {
        causes.push_back(InvalidCause(fmt::format("metadata.labels[{}]", k), json::View(m.value), e));
      }
    }
  }
  // Upstream's ValidateAnnotations, for every kind: qualified-name keys (checked in lower case),
  // keys and values together at most 256 KiB (TotalAnnotationSizeLimitB). It is what keeps
  // client-side `kubectl apply` of a very large object (its last-applied-configuration) out.
  if (const json::Value* annotations = json::Find(meta, "annotations"); annotations && annotations->IsObject()) {
    constexpr size_t kTotalAnnotationSizeLimit = 256 * 1024;
    size_t total = 0;
    for (const auto& m : annotations->GetObject()) {
      const std::string_view k = json::View(m.name);
      std::string lower(k);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (const auto& e : api::IsQualifiedName(lower)) causes.push_back(InvalidCause("metadata.annotations", k, e));
      total += k.size() + (m.value.IsString() ? m.value.GetStringLength() : 0);
    }
    if (total > kTotalAnnotationSizeLimit) {
      causes.push_back(Cause{"FieldValueTooLong",
                             fmt::format("Too long: must have at most {} bytes", kTotalAnnotationSizeLimit),
                             "metadata.annotations"});
    }
  }
  return causes;
}

}  // namespace

DecodeResult ValidateObject(const ResourceType& type, const json::Value& doc, const Object* old,
                            const json::Value* old_doc) {
  DecodeResult out;
  const json::Value* meta = json::Find(doc, "metadata");
  static const json::Value kEmptyObject(rapidjson::kObjectType);
  out.causes = ValidateMetadata(type, meta ? *meta : kEmptyObject);
  // The kind's checks read the name too; one report of a bad name is enough.
  if (!out.causes.empty()) return out;
  if (type.decode) {
    // A status write (the node lifecycle's "Running", the scheduler's conditions) leaves spec
    // and metadata as they were: decoding them again would only give the old view's parts.
    if (type.decode_status && old != nullptr && old_doc != nullptr && SameExceptStatus(*old_doc, doc)) {
      return type.decode_status(doc, *old);
    }
    return type.decode(doc, old);  // validation and the view from one decoding
  }
  if (type.validate) out.causes = type.validate(doc, old);
  return out;
}

}  // namespace kubesched::store
