#include "cluster/store_informer.h"

#include <algorithm>
#include <stdexcept>

namespace kubesched::cluster {

namespace {

const store::ResourceType& Resource(const store::Store& store, std::string_view resource) {
  const store::ResourceType* type = store.FindResource("", resource);
  if (type == nullptr) throw std::logic_error("the store does not serve " + std::string(resource));
  return *type;
}

bool Terminal(const api::Pod& pod) {
  return pod.status.phase == api::PodPhase::kSucceeded || pod.status.phase == api::PodPhase::kFailed;
}

std::shared_ptr<const api::Pod> PodOf(const store::ObjectPtr& object) {
  return object ? object->View<api::Pod>() : nullptr;
}

std::shared_ptr<const api::Node> NodeOf(const store::ObjectPtr& object) {
  return object ? object->View<api::Node>() : nullptr;
}

std::shared_ptr<const api::PodGroup> PodGroupOf(const store::ObjectPtr& object) {
  return object ? object->View<api::PodGroup>() : nullptr;
}

// The typed view of a storage object, as the variant the handler takes (empty when it has none).
std::optional<api::StorageObject> StorageOf(const store::ObjectPtr& object) {
  if (!object) return std::nullopt;
  const store::ResourceType& type = *object->type;
  auto as = [&]<typename T>() -> std::optional<api::StorageObject> {
    auto view = object->View<T>();
    if (!view) return std::nullopt;
    return api::StorageObject(std::move(view));
  };
  if (type.group.empty()) {
    if (type.resource == "persistentvolumeclaims") return as.operator()<api::PersistentVolumeClaim>();
    if (type.resource == "persistentvolumes") return as.operator()<api::PersistentVolume>();
    return std::nullopt;
  }
  if (type.resource == "storageclasses") return as.operator()<api::StorageClass>();
  if (type.resource == "csinodes") return as.operator()<api::CSINode>();
  if (type.resource == "csidrivers") return as.operator()<api::CSIDriver>();
  if (type.resource == "csistoragecapacities") return as.operator()<api::CSIStorageCapacity>();
  return std::nullopt;
}

// The typed view of a DeviceClass, ResourceSlice or ResourceClaim (empty for other kinds).
std::optional<api::ResourceObject> ResourceOf(const store::ObjectPtr& object) {
  if (!object) return std::nullopt;
  const store::ResourceType& type = *object->type;
  auto as = [&]<typename T>() -> std::optional<api::ResourceObject> {
    auto view = object->View<T>();
    if (!view) return std::nullopt;
    return api::ResourceObject(std::move(view));
  };
  if (type.group != api::kResourceApiGroup) return std::nullopt;
  if (type.resource == "deviceclasses") return as.operator()<api::DeviceClass>();
  if (type.resource == "resourceslices") return as.operator()<api::ResourceSlice>();
  if (type.resource == "resourceclaims") return as.operator()<api::ResourceClaim>();
  return std::nullopt;
}

std::vector<store::ObjectPtr> ListInCreationOrder(const store::Store& store, const store::ResourceType& type,
                                                  uint64_t& resource_version) {
  auto listed = store.List(type, "", {});
  if (!listed) throw std::runtime_error("listing " + type.resource + ": " + listed.error().message);
  resource_version = std::max(resource_version, listed->resource_version);
  std::vector<store::ObjectPtr> items = std::move(listed->items);
  std::sort(items.begin(), items.end(), [](const store::ObjectPtr& a, const store::ObjectPtr& b) {
    return a->resource_version < b->resource_version;
  });
  return items;
}

}  // namespace

StoreInformer::StoreInformer(store::Store& store)
    : store_(store),
      pods_(Resource(store, "pods")),
      nodes_(Resource(store, "nodes")),
      pod_groups_{store.FindResource("scheduling.k8s.io", "podgroups"),
                  store.FindResource("scheduling.x-k8s.io", "podgroups")},
      storage_{store.FindResource("storage.k8s.io", "storageclasses"),
               store.FindResource("storage.k8s.io", "csidrivers"),
               store.FindResource("storage.k8s.io", "csinodes"),
               store.FindResource("storage.k8s.io", "csistoragecapacities"),
               store.FindResource("", "persistentvolumes"),
               store.FindResource("", "persistentvolumeclaims")},
      resources_{store.FindResource(api::kResourceApiGroup, "deviceclasses"),
                 store.FindResource(api::kResourceApiGroup, "resourceslices"),
                 store.FindResource(api::kResourceApiGroup, "resourceclaims")} {}

StoreInformer::~StoreInformer() {
  if (observer_) store_.RemoveObserver(*observer_);
}

void StoreInformer::Subscribe(EventHandler* handler) {
  handler_ = handler;
  {
    std::lock_guard lock(mu_);
    replaying_ = true;
  }
  // Observe first, then list: a change made between the two is then either in the list (and
  // dropped below by its resourceVersion) or held, never lost.
  observer_ = store_.AddObserver([this](const store::WatchEvent& event) { OnEvent(event); });
  const auto nodes = ListInCreationOrder(store_, nodes_, replayed_through_);
  // PodGroups only where the store has them (a remote store that does not inform them fails the
  // list).
  std::vector<store::ObjectPtr> groups;
  for (const store::ResourceType*& type : pod_groups_) {
    if (type == nullptr) continue;
    if (store_.List(*type, "", {})) {
      for (auto& g : ListInCreationOrder(store_, *type, replayed_through_)) groups.push_back(std::move(g));
    } else {
      type = nullptr;
    }
  }
  std::sort(groups.begin(), groups.end(), [](const store::ObjectPtr& a, const store::ObjectPtr& b) {
    return a->resource_version < b->resource_version;
  });
  std::vector<store::ObjectPtr> storage;
  for (const store::ResourceType* type : storage_) {
    if (type == nullptr) continue;
    for (auto& o : ListInCreationOrder(store_, *type, replayed_through_)) storage.push_back(std::move(o));
  }
  std::vector<store::ObjectPtr> resources;
  for (const store::ResourceType* type : resources_) {
    if (type == nullptr) continue;
    for (auto& o : ListInCreationOrder(store_, *type, replayed_through_)) resources.push_back(std::move(o));
  }
  const auto pods = ListInCreationOrder(store_, pods_, replayed_through_);
  for (const auto& n : nodes) {
    if (auto node = NodeOf(n)) handler_->OnNodeAdd(std::move(node));
  }
  // Storage and devices before pods, so that a pod's first cycle finds its claims.
  for (const auto& o : storage) {
    if (auto object = StorageOf(o)) handler_->OnStorageAdd(*object);
  }
  for (const auto& o : resources) {
    if (auto object = ResourceOf(o)) handler_->OnResourceAdd(*object);
  }
  // Groups before their members, so that PreEnqueue finds a member's group.
  for (const auto& g : groups) {
    if (auto group = PodGroupOf(g)) handler_->OnPodGroupAdd(std::move(group));
  }
  for (const auto& p : pods) {
    if (auto pod = PodOf(p); pod && !Terminal(*pod)) handler_->OnPodAdd(std::move(pod));
  }
  for (;;) {
    std::vector<store::WatchEvent> held;
    {
      std::lock_guard lock(mu_);
      if (held_.empty()) {
        replaying_ = false;
        return;
      }
      held.swap(held_);
    }
    for (const store::WatchEvent& event : held) Forward(event);
  }
}

void StoreInformer::OnEvent(const store::WatchEvent& event) {
  if (!event.object) return;
  {
    std::lock_guard lock(mu_);
    if (replaying_) {
      // replayed_through_ is still being read: Forward sorts these out once it is known.
      held_.push_back(store::WatchEvent{event.type, event.object, event.old_object});
      return;
    }
  }
  Forward(event);
}

void StoreInformer::Forward(const store::WatchEvent& event) {
  if (!event.object || event.object->resource_version <= replayed_through_) return;
  const store::ResourceType* type = event.object->type;
  if (type == &nodes_) {
    auto node = NodeOf(event.object);
    if (!node) return;
    switch (event.type) {
      case store::EventType::kAdded:
        handler_->OnNodeAdd(std::move(node));
        break;
      case store::EventType::kModified:
        if (auto old = NodeOf(event.old_object)) {
          handler_->OnNodeUpdate(std::move(old), std::move(node));
        } else {
          handler_->OnNodeAdd(std::move(node));
        }
        break;
      case store::EventType::kDeleted:
        handler_->OnNodeDelete(std::move(node));
        break;
      case store::EventType::kBookmark:
        break;
    }
    return;
  }
  if (type != nullptr && (type == pod_groups_[0] || type == pod_groups_[1])) {
    ForwardPodGroup(event);
    return;
  }
  if (type != nullptr && std::find(storage_.begin(), storage_.end(), type) != storage_.end()) {
    ForwardStorage(event);
    return;
  }
  if (type != nullptr && std::find(resources_.begin(), resources_.end(), type) != resources_.end()) {
    ForwardResource(event);
    return;
  }
  if (type != &pods_) return;
  auto pod = PodOf(event.object);
  if (!pod) return;
  switch (event.type) {
    case store::EventType::kAdded:
      if (!Terminal(*pod)) handler_->OnPodAdd(std::move(pod));
      break;
    case store::EventType::kModified: {
      auto old = PodOf(event.old_object);
      const bool was_seen = old && !Terminal(*old);
      if (Terminal(*pod)) {
        if (was_seen) handler_->OnPodDelete(std::move(pod));  // left the field selector
      } else if (was_seen) {
        handler_->OnPodUpdate(std::move(old), std::move(pod));
      } else {
        handler_->OnPodAdd(std::move(pod));
      }
      break;
    }
    case store::EventType::kDeleted:
      if (!Terminal(*pod)) handler_->OnPodDelete(std::move(pod));
      break;
    case store::EventType::kBookmark:
      break;
  }
}

void StoreInformer::ForwardPodGroup(const store::WatchEvent& event) {
  auto group = PodGroupOf(event.object);
  if (!group) return;
  switch (event.type) {
    case store::EventType::kAdded:
      handler_->OnPodGroupAdd(std::move(group));
      break;
    case store::EventType::kModified:
      if (auto old = PodGroupOf(event.old_object)) {
        handler_->OnPodGroupUpdate(std::move(old), std::move(group));
      } else {
        handler_->OnPodGroupAdd(std::move(group));
      }
      break;
    case store::EventType::kDeleted:
      handler_->OnPodGroupDelete(std::move(group));
      break;
    case store::EventType::kBookmark:
      break;
  }
}

void StoreInformer::ForwardStorage(const store::WatchEvent& event) {
  std::optional<api::StorageObject> object = StorageOf(event.object);
  if (!object) return;
  switch (event.type) {
    case store::EventType::kAdded:
      handler_->OnStorageAdd(*object);
      break;
    case store::EventType::kModified:
      if (auto old = StorageOf(event.old_object)) {
        handler_->OnStorageUpdate(*old, *object);
      } else {
        handler_->OnStorageAdd(*object);
      }
      break;
    case store::EventType::kDeleted:
      handler_->OnStorageDelete(*object);
      break;
    case store::EventType::kBookmark:
      break;
  }
}

void StoreInformer::ForwardResource(const store::WatchEvent& event) {
  std::optional<api::ResourceObject> object = ResourceOf(event.object);
  if (!object) return;
  switch (event.type) {
    case store::EventType::kAdded:
      handler_->OnResourceAdd(*object);
      break;
    case store::EventType::kModified:
      if (auto old = ResourceOf(event.old_object)) {
        handler_->OnResourceUpdate(*old, *object);
      } else {
        handler_->OnResourceAdd(*object);
      }
      break;
    case store::EventType::kDeleted:
      handler_->OnResourceDelete(*object);
      break;
    case store::EventType::kBookmark:
      break;
  }
}

}  // namespace kubesched::cluster
