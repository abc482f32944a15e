#include "cache/storage_cache.h"

#include <charconv>
#include <mutex>

namespace kubesched::cache {

namespace {

std::string KeyOf(const api::ObjectMeta& meta) {
  return meta.namespace_.empty() ? meta.name : meta.namespace_ + "/" + meta.name;
}

std::string KeyOf(std::string_view namespace_, std::string_view name) {
  std::string key(namespace_);
  key += '/';
  key += name;
  return key;
}

template <typename Entry>
auto Find(const std::map<std::string, Entry, std::less<>>& map, std::string_view key)
    -> decltype(map.begin()->second.api) {
  auto it = map.find(key);
  if (it == map.end()) return nullptr;
  return it->second.Latest();
}

}  // namespace

bool OlderVersion(std::string_view a, std::string_view b) {
  uint64_t x = 0, y = 0;
  auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  if (ea == std::errc() && eb == std::errc() && pa == a.data() + a.size() && pb == b.data() + b.size()) return x < y;
  return a != b && a < b;
}

void StorageCache::Apply(const api::StorageObject& object) {
  std::unique_lock lock(mu_);
  std::visit(
      [&](const auto& o) {
        if (!o) return;
        using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
        auto put = [&](auto& map) {
          auto& entry = map[KeyOf(o->metadata)];
          // An assumed version stands until the informer has caught up with it.
          if (entry.assumed && !OlderVersion(o->metadata.resource_version, entry.assumed->metadata.resource_version)) {
            entry.assumed = nullptr;
          }
          entry.api = o;
        };
        if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) put(claims_);
        if constexpr (std::is_same_v<T, api::PersistentVolume>) put(volumes_);
        if constexpr (std::is_same_v<T, api::StorageClass>) put(classes_);
        if constexpr (std::is_same_v<T, api::CSINode>) put(csi_nodes_);
        if constexpr (std::is_same_v<T, api::CSIDriver>) put(drivers_);
        if constexpr (std::is_same_v<T, api::CSIStorageCapacity>) put(capacities_);
      },
      object);
}

void StorageCache::Remove(const api::StorageObject& object) {
  std::unique_lock lock(mu_);
  std::visit(
      [&](const auto& o) {
        if (!o) return;
        using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
        const std::string key = KeyOf(o->metadata);
        if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) claims_.erase(key);
        if constexpr (std::is_same_v<T, api::PersistentVolume>) volumes_.erase(key);
        if constexpr (std::is_same_v<T, api::StorageClass>) classes_.erase(key);
        if constexpr (std::is_same_v<T, api::CSINode>) csi_nodes_.erase(key);
        if constexpr (std::is_same_v<T, api::CSIDriver>) drivers_.erase(key);
        if constexpr (std::is_same_v<T, api::CSIStorageCapacity>) capacities_.erase(key);
      },
      object);
}

std::shared_ptr<const api::PersistentVolumeClaim> StorageCache::Claim(std::string_view namespace_,
                                                                      std::string_view name) const {
  std::shared_lock lock(mu_);
  return Find(claims_, KeyOf(namespace_, name));
}

std::shared_ptr<const api::PersistentVolume> StorageCache::Volume(std::string_view name) const {
  std::shared_lock lock(mu_);
  return Find(volumes_, name);
}

std::vector<std::shared_ptr<const api::PersistentVolume>> StorageCache::VolumesOfClass(
    std::string_view class_name) const {
  std::shared_lock lock(mu_);
  std::vector<std::shared_ptr<const api::PersistentVolume>> out;
  for (const auto& [name, entry] : volumes_) {
    if (entry.Latest()->storage_class_name == class_name) out.push_back(entry.Latest());
  }
  return out;
}

std::shared_ptr<const api::StorageClass> StorageCache::Class(std::string_view name) const {
  std::shared_lock lock(mu_);
  return Find(classes_, name);
}

std::shared_ptr<const api::CSINode> StorageCache::CSINodeOf(std::string_view node_name) const {
  std::shared_lock lock(mu_);
  return Find(csi_nodes_, node_name);
}

std::shared_ptr<const api::CSIDriver> StorageCache::Driver(std::string_view name) const {
  std::shared_lock lock(mu_);
  return Find(drivers_, name);
}

std::vector<std::shared_ptr<const api::CSIStorageCapacity>> StorageCache::CapacitiesOfClass(
    std::string_view class_name) const {
  std::shared_lock lock(mu_);
  std::vector<std::shared_ptr<const api::CSIStorageCapacity>> out;
  for (const auto& [key, entry] : capacities_) {
    if (entry.api->storage_class_name == class_name) out.push_back(entry.api);
  }
  return out;
}

bool StorageCache::Empty() const {
  std::shared_lock lock(mu_);
  return claims_.empty() && volumes_.empty() && classes_.empty() && csi_nodes_.empty() && drivers_.empty() &&
         capacities_.empty();
}

namespace {

template <typename Entry, typename T>
framework::Status AssumeIn(std::map<std::string, Entry, std::less<>>& map, const std::string& key,
                           std::shared_ptr<const T> assumed, std::string_view kind) {
  auto it = map.find(key);
  if (it == map.end()) return framework::Status::Error(std::string(kind) + " \"" + key + "\" not found");
  // Made from an older version than the latest one known: someone else changed it meanwhile.
  if (OlderVersion(assumed->metadata.resource_version, it->second.Latest()->metadata.resource_version)) {
    return framework::Status::Error(std::string(kind) + " \"" + key + "\" is out of sync (version " +
                                    assumed->metadata.resource_version + ", latest " +
                                    it->second.Latest()->metadata.resource_version + ")");
  }
  it->second.assumed = std::move(assumed);
  return framework::Status();
}

}  // namespace

framework::Status StorageCache::AssumeVolume(std::shared_ptr<const api::PersistentVolume> assumed) {
  std::unique_lock lock(mu_);
  const std::string key = KeyOf(assumed->metadata);
  return AssumeIn(volumes_, key, std::move(assumed), "PersistentVolume");
}

framework::Status StorageCache::AssumeClaim(std::shared_ptr<const api::PersistentVolumeClaim> assumed) {
  std::unique_lock lock(mu_);
  const std::string key = KeyOf(assumed->metadata);
  return AssumeIn(claims_, key, std::move(assumed), "PersistentVolumeClaim");
}

void StorageCache::RestoreVolume(std::string_view name) {
  std::unique_lock lock(mu_);
  if (auto it = volumes_.find(name); it != volumes_.end()) it->second.assumed = nullptr;
}

void StorageCache::RestoreClaim(std::string_view namespace_, std::string_view name) {
  std::unique_lock lock(mu_);
  if (auto it = claims_.find(KeyOf(namespace_, name)); it != claims_.end()) it->second.assumed = nullptr;
}

std::shared_ptr<const api::PersistentVolume> StorageCache::ApiVolume(std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = volumes_.find(name);
  return it == volumes_.end() ? nullptr : it->second.api;
}

std::shared_ptr<const api::PersistentVolumeClaim> StorageCache::ApiClaim(std::string_view namespace_,
                                                                         std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = claims_.find(KeyOf(namespace_, name));
  return it == claims_.end() ? nullptr : it->second.api;
}

}  // namespace kubesched::cache
