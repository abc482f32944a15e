// The strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch), as kubectl's
// client-side apply, edit and patch send it. Upstream reads each list's merge strategy from the
// Go struct tags of the kind; here the tags of the kinds served are one table by field name,
// which is unambiguous for them (e.g. "ports" only occurs in containers, merged by
// containerPort, because Services are not served).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/errors.h"
#include "store/patch.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

// `patchStrategy:"merge" patchMergeKey:"..."` of core/v1, apps/v1, policy/v1 and metav1 fields.
std::string_view MergeKey(std::string_view field) {
  struct Entry {
    std::string_view field, key;
  };
  static constexpr Entry kKeys[] = {
      {"containers", "name"},
      {"initContainers", "name"},
      {"ephemeralContainers", "name"},
      {"env", "name"},
      {"volumes", "name"},
      {"imagePullSecrets", "name"},
      {"resourceClaims", "name"},
      {"schedulingGates", "name"},
      {"resizePolicy", "resourceName"},
      {"volumeMounts", "mountPath"},
      {"volumeDevices", "devicePath"},
      {"ports", "containerPort"},
      {"conditions", "type"},
      {"ownerReferences", "uid"},
      {"hostAliases", "ip"},
      {"topologySpreadConstraints", "topologyKey"},
      {"addresses", "type"},
      {"podIPs", "ip"},
      {"hostIPs", "ip"},
  };
  for (const auto& e : kKeys) {
    if (e.field == field) return e.key;
  }
  return {};
}

// Lists of scalars with `patchStrategy:"merge"`: the patch's values are added to the object's.
bool MergesPrimitives(std::string_view field) { return field == "finalizers" || field == "podCIDRs"; }

bool IsDirective(std::string_view key) { return !key.empty() && key.front() == '$'; }

Error BadPatch(std::string message) { return BadRequest(std::move(message)); }

Result<void> MergeMap(json::Value& original, const json::Value& patch, json::Allocator& a);

// A patch value put where the object has nothing: merged into an empty value, which drops the
// directives it carries.
Result<void> Fresh(json::Value& out, const json::Value& patch, std::string_view field, json::Allocator& a);

Result<void> MergeList(json::Value& original, const json::Value& patch, std::string_view field, json::Allocator& a) {
  if (!original.IsArray()) original.SetArray();
  // A {"$patch": "replace"} element: the list becomes the patch's other elements.
  bool replace = false;
  for (const auto& p : patch.GetArray()) {
    if (p.IsObject() && json::GetString(p, kPatch) == "replace") replace = true;
  }
  const std::string_view key = MergeKey(field);
  if (replace || (key.empty() && !MergesPrimitives(field))) {
    json::Value out(rapidjson::kArrayType);
    for (const auto& p : patch.GetArray()) {
      if (p.IsObject() && json::Find(p, kPatch) && p.MemberCount() == 1) continue;
      json::Value v;
      if (auto r = Fresh(v, p, field, a); !r) return r;
      out.PushBack(v, a);
    }
    original = std::move(out);
    return {};
  }
  if (key.empty()) {
    // A merged list of scalars: union, the object's values first.
    for (const auto& p : patch.GetArray()) {
      bool present = false;
      for (const auto& o : original.GetArray()) present = present || o == p;
      if (!present) original.PushBack(json::Value(p, a), a);
    }
    return {};
  }
  for (const auto& p : patch.GetArray()) {
    if (!p.IsObject())
      return std::unexpected(BadPatch(fmt::format("{}: a list merged by {} takes objects", field, key)));
    const json::Value* id = json::Find(p, key);
    if (id == nullptr) {
      return std::unexpected(
          BadPatch(fmt::format("map: {} does not contain declared merge key: {}", json::Encode(p), key)));
    }
    auto same = [&](const json::Value& o) {
      const json::Value* oid = json::Find(o, key);
      return oid != nullptr && *oid == *id;
    };
    const std::string_view directive = json::GetString(p, kPatch);
    if (directive == "delete") {
      for (auto it = original.Begin(); it != original.End();) {
        if (same(*it)) {
          it = original.Erase(it);
        } else {
          ++it;
        }
      }
      continue;
    }
    auto it = std::find_if(original.Begin(), original.End(), same);
    if (it != original.End()) {
      if (auto r = MergeMap(*it, p, a); !r) return r;
    } else {
      json::Value v;
      if (auto r = Fresh(v, p, field, a); !r) return r;
      original.PushBack(v, a);
    }
  }
  return {};
}

Result<void> Fresh(json::Value& out, const json::Value& patch, std::string_view field, json::Allocator& a) {
  if (patch.IsObject()) {
    out.SetObject();
    return MergeMap(out, patch, a);
  }
  if (patch.IsArray()) {
    out.SetArray();
    return MergeList(out, patch, field, a);
  }
  out.CopyFrom(patch, a);
  return {};
}

// $setElementOrder/<list>: the listed elements in the given order; elements the order leaves
// out (only the server knows them) follow, in their own order.
void OrderList(json::Value& list, const json::Value& order, std::string_view field, json::Allocator& a) {
  if (!list.IsArray() || !order.IsArray()) return;
  const std::string_view key = MergeKey(field);
  auto rank = [&](const json::Value& v) -> size_t {
    const json::Value* id = key.empty() ? &v : json::Find(v, key);
    for (rapidjson::SizeType i = 0; i < order.Size(); ++i) {
      const json::Value* want = key.empty() ? &order[i] : json::Find(order[i], key);
      if (id && want && *id == *want) return i;
    }
    return order.Size();
  };
  std::vector<std::pair<size_t, size_t>> ranks;  // (rank, original index)
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) ranks.emplace_back(rank(list[i]), i);
  std::stable_sort(ranks.begin(), ranks.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // Values move (RapidJSON moves on assignment), so the elements are not copied.
  std::vector<json::Value> moved(list.Size());
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) moved[i] = std::move(list[i]);
  list.Clear();
  for (const auto& [r, i] : ranks) list.PushBack(moved[i], a);
}

Result<void> MergeMap(json::Value& original, const json::Value& patch, json::Allocator& a) {
  if (!patch.IsObject()) {
    original.CopyFrom(patch, a);
    return {};
  }
  const std::string_view directive = json::GetString(patch, kPatch);
  if (directive == "replace") {
    original.SetObject();
    for (const auto& m : patch.GetObject()) {
      if (json::View(m.name) == kPatch) continue;
      json::Value v;
      if (auto r = Fresh(v, m.value, json::View(m.name), a); !r) return r;
      json::Set(original, json::View(m.name), std::move(v), a);
    }
    return {};
  }
  if (!directive.empty() && directive != "merge" && directive != "delete") {
    return std::unexpected(BadPatch(fmt::format("Unknown patch type: {} in map: {}", directive, json::Encode(patch))));
  }
  if (!original.IsObject()) original.SetObject();
  for (const auto& m : patch.GetObject()) {
    const std::string_view key = json::View(m.name);
    if (IsDirective(key)) continue;
    const json::Value& v = m.value;
    if (v.IsNull()) {
      json::Remove(original, key);
      continue;
    }
    json::Value* existing = json::Find(original, key);
    if (v.IsObject() && json::GetString(v, kPatch) == "delete") {
      json::Remove(original, key);
      continue;
    }
    if (existing == nullptr) {
      json::Value fresh;
      if (auto r = Fresh(fresh, v, key, a); !r) return r;
      json::Set(original, key, std::move(fresh), a);
      continue;
    }
    if (v.IsObject()) {
      if (auto r = MergeMap(*existing, v, a); !r) return r;
    } else if (v.IsArray()) {
      if (auto r = MergeList(*existing, v, key, a); !r) return r;
    } else {
      existing->CopyFrom(v, a);
    }
  }
  for (const auto& m : patch.GetObject()) {
    const std::string_view key = json::View(m.name);
    if (key.starts_with(kDeleteFromPrimitiveList)) {
      json::Value* list = json::Find(original, key.substr(kDeleteFromPrimitiveList.size()));
      if (list && list->IsArray() && m.value.IsArray()) {
        for (auto it = list->Begin(); it != list->End();) {
          bool drop = false;
          for (const auto& d : m.value.GetArray()) drop = drop || d == *it;
          if (drop) {
            it = list->Erase(it);
          } else {
            ++it;
          }
        }
      }
    } else if (key.starts_with(kSetElementOrder)) {
      const std::string_view field = key.substr(kSetElementOrder.size());
      if (json::Value* list = json::Find(original, field)) OrderList(*list, m.value, field, a);
    } else if (key == kRetainKeys) {
      if (!m.value.IsArray()) return std::unexpected(BadPatch("$retainKeys must be a list of strings"));
      std::vector<std::string> drop;
      for (const auto& o : original.GetObject()) {
        bool keep = false;
        for (const auto& k : m.value.GetArray()) keep = keep || json::View(k) == json::View(o.name);
        if (!keep) drop.emplace_back(json::View(o.name));
      }
      for (const auto& k : drop) json::Remove(original, k);
    }
  }
  return {};
}

}  // namespace

Result<void> ApplyStrategicMergePatch(json::Document& doc, std::string_view patch) {
  json::Document p;
  if (auto r = json::Parse(patch, p); !r) return std::unexpected(BadRequest(r.error().ToString()));
  if (!p.IsObject()) return std::unexpected(BadRequest("a strategic merge patch must be a JSON object"));
  return MergeMap(doc, p, doc.GetAllocator());
}

}  // namespace kubesched::store
