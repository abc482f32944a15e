#include "server/dry_run.h"

#include <random>

#include <fmt/format.h>

#include "server/printers.h"
#include "store/errors.h"
#include "store/meta.h"
#include "store/patch.h"

namespace kubesched::server {
namespace {

using store::Error;

api::json::Value& Meta(api::json::Document& doc) { return api::json::Child(doc, "metadata", doc.GetAllocator()); }

void SetString(api::json::Document& doc, api::json::Value& object, std::string_view key, std::string_view value) {
  api::json::Set(object, key, api::json::MakeString(value, doc.GetAllocator()), doc.GetAllocator());
}

// RFC 3339 in UTC, seconds precision, as metav1.Time encodes.
std::string Rfc3339(int64_t unix_ns) {
  const std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

std::string RandomSuffix(size_t n) {
  // The alphabet upstream's generateName draws from (no vowels, no ambiguous characters).
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s;
  for (size_t i = 0; i < n; ++i) s += kAlphabet[rng() % kAlphabet.size()];
  return s;
}

// Admission's view of the store, through its public reads (the dry run holds no store lock).
class StoreReader final : public store::ObjectReader {
 public:
  explicit StoreReader(const store::Store& store) : store_(store) {}
  store::ObjectPtr Get(std::string_view group, std::string_view resource, std::string_view namespace_,
                       std::string_view name) const override {
    const store::ResourceType* t = store_.FindResource(group, resource);
    if (t == nullptr) return nullptr;
    auto got = store_.Get(*t, namespace_, name);
    return got ? *got : nullptr;
  }
  std::vector<store::ObjectPtr> List(std::string_view group, std::string_view resource,
                                     std::string_view namespace_) const override {
    const store::ResourceType* t = store_.FindResource(group, resource);
    if (t == nullptr) return {};
    auto listed = store_.List(*t, namespace_, store::ListOptions{});
    return listed ? listed->items : std::vector<store::ObjectPtr>{};
  }

 private:
  const store::Store& store_;
};

// Defaulting, admission (creations only, as the store) and validation, as the store runs them on
// a write; the object it would store on success.
store::Result<store::ObjectPtr> Check(const store::Store& store, const store::ResourceType& type,
                                      std::string_view namespace_, std::string_view name, api::json::Document doc,
                                      const store::Object* old) {
  if (type.default_fields) type.default_fields(doc);
  if (type.admit && old == nullptr) {
    if (std::optional<Error> e = type.admit(doc, StoreReader(store))) return std::unexpected(*e);
  }
  store::DecodeResult checked = store::ValidateObject(type, doc, old);
  if (!checked.causes.empty()) return std::unexpected(store::Invalid(type, name, std::move(checked.causes)));
  auto object = std::make_shared<store::Object>();
  object->type = &type;
  object->namespace_ = std::string(namespace_);
  object->name = std::string(name);
  if (old != nullptr) {
    object->uid = old->uid;
    object->resource_version = old->resource_version;
  }
  object->json = api::json::Encode(doc);
  return object;
}

}  // namespace

store::Result<store::ObjectPtr> DryRunCreate(const store::Store& store, const store::ResourceType& type,
                                             std::string_view namespace_, api::json::Document body) {
  api::json::Value& meta = Meta(body);
  std::string name(api::json::GetString(meta, "name"));
  if (name.empty()) {
    std::string_view generate = api::json::GetString(meta, "generateName");
    if (generate.empty()) {
      return std::unexpected(
          store::Invalid(type, "", {store::RequiredCause("metadata.name", "name or generateName is required")}));
    }
    name = fmt::format("{}{}", generate, RandomSuffix(5));
    SetString(body, Meta(body), "name", name);
  }
  if (store.Get(type, namespace_, name)) {
    return std::unexpected(store::AlreadyExists(type, name));
  }
  api::json::Value& m = Meta(body);
  SetString(body, m, "creationTimestamp", Rfc3339(UnixNowNs()));
  api::json::Remove(m, "resourceVersion");
  return Check(store, type, namespace_, name, std::move(body), nullptr);
}

store::Result<store::ObjectPtr> DryRunUpdate(const store::Store& store, const store::ResourceType& type,
                                             std::string_view namespace_, std::string_view name,
                                             api::json::Document body, const store::UpdateRequest& request) {
  auto old = store.Get(type, namespace_, name);
  if (!old) return std::unexpected(old.error());
  std::string_view rv = api::json::GetString(Meta(body), "resourceVersion");
  std::optional<std::string> expected = request.expected_resource_version;
  if (!rv.empty()) expected = std::string(rv);
  if (expected && *expected != std::to_string((*old)->resource_version)) {
    return std::unexpected(store::StaleConflict(type, name));
  }
  return Check(store, type, namespace_, name, std::move(body), old->get());
}

store::Result<store::ObjectPtr> DryRunPatch(const store::Store& store, const store::ResourceType& type,
                                            std::string_view namespace_, std::string_view name,
                                            store::PatchType patch_type, std::string_view patch,
                                            std::string_view subresource, const store::Store::PatchDecoder& decode) {
  auto old = store.Get(type, namespace_, name);
  if (!old) return std::unexpected(old.error());
  api::json::Document doc;
  if (!api::json::Parse((*old)->json, doc)) return std::unexpected(store::Internal("the stored object is not JSON"));
  if (auto applied = store::ApplyPatch(patch_type, doc, patch); !applied) return std::unexpected(applied.error());
  if (auto decoded = decode(doc); !decoded) return std::unexpected(decoded.error());
  store::UpdateRequest request;
  request.subresource = std::string(subresource);
  return DryRunUpdate(store, type, namespace_, name, std::move(doc), request);
}

store::Result<store::ObjectPtr> DryRunDelete(const store::Store& store, const store::ResourceType& type,
                                             std::string_view namespace_, std::string_view name,
                                             const store::DeleteOptions& options) {
  auto current = store.Get(type, namespace_, name);
  if (!current) return std::unexpected(current.error());
  if (options.precondition_uid && *options.precondition_uid != (*current)->uid) {
    return std::unexpected(
        store::Conflict(type, name,
                        fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}",
                                    *options.precondition_uid, (*current)->uid)));
  }
  if (options.precondition_resource_version &&
      *options.precondition_resource_version != std::to_string((*current)->resource_version)) {
    return std::unexpected(store::Conflict(
        type, name,
        fmt::format("Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {}",
                    *options.precondition_resource_version, (*current)->resource_version)));
  }
  return current;
}

}  // namespace kubesched::server
