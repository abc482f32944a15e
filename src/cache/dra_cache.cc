#include "cache/dra_cache.h"

#include <mutex>

#include "cache/storage_cache.h"  // OlderVersion

namespace kubesched::cache {

namespace {

std::string KeyOf(std::string_view namespace_, std::string_view name) {
  std::string key(namespace_);
  key += '/';
  key += name;
  return key;
}

}  // namespace

DraCache::DraCache() : allocated_(std::make_shared<framework::AllocatedState>()) {}

framework::AllocatedState& DraCache::MutableAllocated() {
  if (allocated_.use_count() > 1) allocated_ = std::make_shared<framework::AllocatedState>(*allocated_);
  return *allocated_;
}

void DraCache::SetLatest(ClaimEntry& entry, const std::shared_ptr<const api::ResourceClaim>& before) {
  const auto& after = entry.Latest();
  if (before == after) return;
  const api::AllocationResult* old_allocation = before && before->allocation ? &*before->allocation : nullptr;
  const api::AllocationResult* new_allocation = after && after->allocation ? &*after->allocation : nullptr;
  if (old_allocation == nullptr && new_allocation == nullptr) return;
  if (old_allocation != nullptr && new_allocation != nullptr && old_allocation->devices == new_allocation->devices) {
    return;  // the same devices (a change of reservedFor, say)
  }
  framework::AllocatedState& state = MutableAllocated();
  if (old_allocation != nullptr) state.Apply(*old_allocation, -1);
  if (new_allocation != nullptr) state.Apply(*new_allocation, +1);
}

void DraCache::Apply(const api::ResourceObject& object) {
  std::unique_lock lock(mu_);
  std::visit(
      [&](const auto& o) {
        if (!o) return;
        using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
        if constexpr (std::is_same_v<T, api::ResourceClaim>) {
          ClaimEntry& entry = claims_[o->Key()];
          const auto before = entry.Latest();
          // An assumed version stands until the informer has caught up with it: a version at least
          // as new that is allocated when the assumed one is (PreBind's write landed, or someone
          // else's allocation, which PreBind then reports). A newer version without the allocation
          // (a label or a finalizer changed before PreBind wrote) keeps it, or the devices would
          // look free to the next pod while the write is still to come (upstream keeps such an
          // allocation in flight, apart from its assume cache, until PreBind or Unreserve).
          if (entry.assumed && !OlderVersion(o->metadata.resource_version, entry.assumed->metadata.resource_version) &&
              (o->allocation || !entry.assumed->allocation)) {
            entry.assumed = nullptr;
          }
          entry.api = o;
          SetLatest(entry, before);
        } else if constexpr (std::is_same_v<T, api::DeviceClass>) {
          classes_[o->metadata.name] = o;
        } else if constexpr (std::is_same_v<T, api::ResourceSlice>) {
          slices_[o->metadata.name] = o;
          slice_list_ = nullptr;
        }
      },
      object);
}

void DraCache::Remove(const api::ResourceObject& object) {
  std::unique_lock lock(mu_);
  std::visit(
      [&](const auto& o) {
        if (!o) return;
        using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
        if constexpr (std::is_same_v<T, api::ResourceClaim>) {
          auto it = claims_.find(o->Key());
          if (it == claims_.end()) return;
          const auto before = it->second.Latest();
          it->second.api = nullptr;
          it->second.assumed = nullptr;
          SetLatest(it->second, before);
          claims_.erase(it);
        } else if constexpr (std::is_same_v<T, api::DeviceClass>) {
          classes_.erase(o->metadata.name);
        } else if constexpr (std::is_same_v<T, api::ResourceSlice>) {
          slices_.erase(o->metadata.name);
          slice_list_ = nullptr;
        }
      },
      object);
}

std::shared_ptr<const api::ResourceClaim> DraCache::Claim(std::string_view namespace_, std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = claims_.find(KeyOf(namespace_, name));
  return it == claims_.end() ? nullptr : it->second.Latest();
}

std::shared_ptr<const api::DeviceClass> DraCache::Class(std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : it->second;
}

std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> DraCache::Slices() const {
  {
    std::shared_lock lock(mu_);
    if (slice_list_) return slice_list_;
  }
  std::unique_lock lock(mu_);
  if (!slice_list_) {
    auto list = std::make_shared<std::vector<std::shared_ptr<const api::ResourceSlice>>>();
    list->reserve(slices_.size());
    for (const auto& [name, slice] : slices_) list->push_back(slice);
    slice_list_ = std::move(list);
  }
  return slice_list_;
}

std::shared_ptr<const framework::AllocatedState> DraCache::Allocated() const {
  std::shared_lock lock(mu_);
  return allocated_;
}

bool DraCache::Empty() const {
  std::shared_lock lock(mu_);
  return claims_.empty() && classes_.empty() && slices_.empty();
}

framework::Status DraCache::AssumeClaim(std::shared_ptr<const api::ResourceClaim> assumed) {
  std::unique_lock lock(mu_);
  auto it = claims_.find(assumed->Key());
  if (it == claims_.end()) return framework::Status::Error("ResourceClaim \"" + assumed->Key() + "\" not found");
  if (OlderVersion(assumed->metadata.resource_version, it->second.Latest()->metadata.resource_version)) {
    return framework::Status::Error("ResourceClaim \"" + assumed->Key() + "\": out of sync (cached version " +
                                    it->second.Latest()->metadata.resource_version + ", assumed from " +
                                    assumed->metadata.resource_version + ")");
  }
  const auto before = it->second.Latest();
  it->second.assumed = std::move(assumed);
  SetLatest(it->second, before);
  return framework::Status::Success();
}

void DraCache::RestoreClaim(std::string_view namespace_, std::string_view name) {
  std::unique_lock lock(mu_);
  auto it = claims_.find(KeyOf(namespace_, name));
  if (it == claims_.end() || !it->second.assumed) return;
  const auto before = it->second.Latest();
  it->second.assumed = nullptr;
  SetLatest(it->second, before);
}

std::shared_ptr<const api::ResourceClaim> DraCache::ApiClaim(std::string_view namespace_, std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = claims_.find(KeyOf(namespace_, name));
  return it == claims_.end() ? nullptr : it->second.api;
}

}  // namespace kubesched::cache
