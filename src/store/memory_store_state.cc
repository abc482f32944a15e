// MemoryStore::SaveState / LoadState: the whole store as one JSON document,
//   {"kind":"KubeschedStoreState","resourceVersion":"N","objects":[{...},...]}
// with each object exactly as stored (its apiVersion and kind say which resource it is).
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "store/errors.h"
#include "store/memory_store.h"
#include "store/meta.h"
#include "util/atomic_file.h"

namespace kubesched::store {

namespace json = api::json;

namespace {
constexpr std::string_view kStateKind = "KubeschedStoreState";
}

Result<void> MemoryStore::SaveState(const std::string& path) const {
  std::string out;
  {
    std::lock_guard lock(mu_);
    out = fmt::format("{{\"kind\":\"{}\",\"resourceVersion\":\"{}\",\"objects\":[", kStateKind, rv_);
    bool first = true;
    for (const ResourceType* t : types_) {
      if (t->stored_as) continue;
      auto it = objects_.find(t);
      if (it == objects_.end()) continue;
      for (const auto& [key, obj] : it->second) {
        if (!first) out += ",\n";
        first = false;
        out += obj->json;
      }
    }
    out += "]}\n";
  }
  // A reader (or a restart after a crash) sees the old state or the new one, never half of one.
  if (auto written = util::WriteFileAtomically(path, out, 0644); !written) {
    return std::unexpected(Internal("cannot save the state to " + written.error()));
  }
  return {};
}

Result<void> MemoryStore::LoadState(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(Internal(fmt::format("cannot read {}", path)));
  std::stringstream buf;
  buf << in.rdbuf();
  json::Document doc;
  if (auto r = json::Parse(buf.str(), doc); !r) {
    return std::unexpected(BadRequest(fmt::format("{}: {}", path, r.error().ToString())));
  }
  if (!doc.IsObject() || json::GetString(doc, "kind") != kStateKind) {
    return std::unexpected(BadRequest(fmt::format("{}: not a kubesched store state (kind {})", path, kStateKind)));
  }
  auto saved_rv = ParseResourceVersion(json::GetString(doc, "resourceVersion"));
  const json::Value* objects = json::Find(doc, "objects");
  if (!saved_rv || objects == nullptr || !objects->IsArray()) {
    return std::unexpected(BadRequest(fmt::format("{}: resourceVersion or objects missing", path)));
  }
  std::unordered_map<const ResourceType*, Objects> loaded;
  uint64_t max_rv = *saved_rv;
  for (auto& v : objects->GetArray()) {
    const std::string_view api_version = json::GetString(v, "apiVersion");
    const std::string_view kind = json::GetString(v, "kind");
    const ResourceType* type = nullptr;
    for (const ResourceType* t : types_) {
      if (!t->stored_as && t->GroupVersion() == api_version && t->kind == kind) type = t;
    }
    if (type == nullptr) {
      return std::unexpected(BadRequest(fmt::format("{}: no resource serves {} {}", path, api_version, kind)));
    }
    json::Document one;
    one.CopyFrom(v, one.GetAllocator());
    const json::Value* meta = json::Find(one, "metadata");
    auto rv = meta ? ParseResourceVersion(json::GetString(*meta, "resourceVersion")) : std::nullopt;
    if (!rv) return std::unexpected(BadRequest(fmt::format("{}: {} without a resourceVersion", path, kind)));
    max_rv = std::max(max_rv, *rv);
    ObjectPtr obj = MakeObject(*type, one, *rv);
    loaded[type][Key(obj->namespace_, obj->name)] = obj;
  }
  std::lock_guard lock(mu_);
  objects_ = std::move(loaded);
  rv_ = max_rv;
  history_.clear();
  compacted_rv_ = rv_;
  for (auto& w : watchers_) w->Close("store state replaced");
  watchers_.clear();
  rv_cv_.notify_all();
  return {};
}

}  // namespace kubesched::store
