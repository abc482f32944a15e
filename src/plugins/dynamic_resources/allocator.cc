// The structured-parameters allocator: the per-cycle index of the slices (constructor) and
// Allocate, which gathers the node's pools, checks the claims, searches and builds the results
// (upstream: structured/internal/experimental/allocator_experimental.go, Allocate).

#include "plugins/dynamic_resources/allocator.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>

#include "plugins/dynamic_resources/allocator_internal.h"
#include "plugins/dynamic_resources/allocator_search.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

using internal::DeviceTarget;
using internal::NodeTarget;
using internal::PoolInfo;
using internal::SliceInfo;

struct PoolKey {
  std::string_view driver;
  std::string_view name;
  bool operator==(const PoolKey&) const = default;
};

struct PoolKeyHash {
  size_t operator()(const PoolKey& k) const {
    const size_t h = std::hash<std::string_view>{}(k.driver);
    return h ^ (std::hash<std::string_view>{}(k.name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  }
};

// Upstream's order of node selection fields: nodeName, allNodes, nodeSelector.
NodeTarget Classify(const std::optional<std::string>& node_name, bool all_nodes,
                    const std::optional<api::NodeSelector>& selector) {
  if (node_name && !node_name->empty()) return NodeTarget::kNodeName;
  if (all_nodes) return NodeTarget::kAllNodes;
  if (selector) return NodeTarget::kSelector;
  return NodeTarget::kUnknown;
}

}  // namespace

int64_t Allocator::Index::KeyOf(const DeviceId& id) const {
  auto it = key_of.find(internal::DeviceIdView{id.driver, id.pool, id.device});
  return it == key_of.end() ? -1 : static_cast<int64_t>(it->second);
}

bool Allocator::Impl::ShareIdTaken(const DeviceId& id, const std::string& share_id) const {
  const auto& shared = allocated->allocated_shared_devices;
  return !shared.empty() && shared.contains(SharedDeviceId{id, share_id});
}

std::shared_ptr<const Allocator::Index> Allocator::IndexSlices(std::span<const api::ResourceSlice* const> slices) {
  auto index = std::make_shared<Index>();
  Index& ix = *index;
  ix.slices.reserve(slices.size());

  std::unordered_map<PoolKey, uint32_t, PoolKeyHash> pools;
  uint32_t num_devices = 0;
  for (const api::ResourceSlice* slice : slices) {
    if (slice == nullptr) continue;
    const auto index_of_slice = static_cast<uint32_t>(ix.slices.size());
    SliceInfo info;
    info.slice = slice;
    auto [it, added] =
        pools.try_emplace(PoolKey{slice->driver, slice->pool.name}, static_cast<uint32_t>(ix.pools.size()));
    if (added) {
      ix.pools.push_back(PoolInfo{slice->driver, slice->pool.name, slice->pool.generation, {}});
    }
    info.pool = it->second;
    PoolInfo& pool = ix.pools[info.pool];
    pool.slices.push_back(index_of_slice);
    pool.max_generation = std::max(pool.max_generation, slice->pool.generation);

    info.has_counters = !slice->shared_counters.empty();
    info.has_binding_conditions = std::any_of(slice->devices.begin(), slice->devices.end(),
                                              [](const api::Device& d) { return !d.binding_conditions.empty(); });
    info.target = Classify(slice->node_name, slice->all_nodes, slice->node_selector);
    if (info.target == NodeTarget::kSelector) {
      info.matcher = static_cast<int32_t>(ix.matchers.size());
      ix.matchers.emplace_back(*slice->node_selector, "", /*collect_errors=*/true);
    } else if (info.target == NodeTarget::kUnknown && slice->per_device_node_selection) {
      info.target = NodeTarget::kPerDevice;
      info.first_device_target = static_cast<uint32_t>(ix.device_targets.size());
      for (const auto& device : slice->devices) {
        DeviceTarget t;
        t.target = Classify(device.node_name, device.all_nodes, device.node_selector);
        if (t.target == NodeTarget::kSelector) {
          t.matcher = static_cast<int32_t>(ix.matchers.size());
          ix.matchers.emplace_back(*device.node_selector, "", /*collect_errors=*/true);
        }
        ix.device_targets.push_back(t);
      }
    }

    if (info.target == NodeTarget::kNodeName && !info.has_counters) {
      ix.by_node_name[*slice->node_name].push_back(index_of_slice);
    } else if (info.target != NodeTarget::kUnknown || info.has_counters) {
      ix.general.push_back(index_of_slice);
    }
    info.first_device = num_devices;
    num_devices += static_cast<uint32_t>(slice->devices.size());
    ix.slices.push_back(info);
  }

  // Every device's identity, as a small integer.
  ix.device_keys.reserve(num_devices);
  ix.key_of.reserve(num_devices);
  for (const SliceInfo& info : ix.slices) {
    for (const api::Device& device : info.slice->devices) {
      internal::DeviceIdView id{info.slice->driver, info.slice->pool.name, device.name};
      auto [it, added] = ix.key_of.try_emplace(id, static_cast<uint32_t>(ix.keys.size()));
      if (added) ix.keys.push_back(id);
      ix.device_keys.push_back(it->second);
    }
  }
  internal::BuildLocalPools(ix);
  return index;
}

Allocator::Allocator(const AllocatedState& allocated, std::span<const api::ResourceSlice* const> slices,
                     DeviceClassLookup classes, cel::Cache& cache)
    : Allocator(allocated, IndexSlices(slices), std::move(classes), cache) {}

Allocator::Allocator(const AllocatedState& allocated, std::shared_ptr<const Index> index, DeviceClassLookup classes,
                     cel::Cache& cache) {
  auto impl = std::make_shared<Impl>();
  impl->index = std::move(index);
  impl->ix = impl->index.get();
  impl->allocated = &allocated;
  impl->nothing_allocated = allocated.allocated_devices.empty() && allocated.allocated_shared_devices.empty() &&
                            allocated.consumed_capacity.empty();
  impl->classes = std::move(classes);
  impl->cache = &cache;
  if (!impl->nothing_allocated) {
    // What is allocated, per device key: the search's lookups then compare no strings.
    const Index& ix = *impl->ix;
    impl->key_state.assign(ix.keys.size(), 0);
    auto key_of = [&](const DeviceId& id) { return ix.KeyOf(id); };
    for (const DeviceId& id : allocated.allocated_devices) {
      if (const int64_t k = key_of(id); k >= 0) {
        impl->key_state[static_cast<size_t>(k)] |= Impl::kAllocatedExclusively | Impl::kAllocated;
      }
    }
    const DeviceId* last = nullptr;  // the set is ordered: a device's shares are adjacent
    for (const SharedDeviceId& shared : allocated.allocated_shared_devices) {
      if (last != nullptr && *last == shared.device) continue;
      last = &shared.device;
      if (const int64_t k = key_of(shared.device); k >= 0) impl->key_state[static_cast<size_t>(k)] |= Impl::kAllocated;
    }
    if (!allocated.consumed_capacity.empty()) {
      impl->key_consumed.assign(ix.keys.size(), nullptr);
      for (const auto& [id, consumed] : allocated.consumed_capacity) {
        if (const int64_t k = key_of(id); k >= 0) {
          impl->key_state[static_cast<size_t>(k)] |= Impl::kAllocated;
          impl->key_consumed[static_cast<size_t>(k)] = &consumed;
        }
      }
    }
  }
  impl_ = std::move(impl);
}

AllocateOutcome Allocator::Allocate(const api::Node& node, std::span<const api::ResourceClaim* const> claims) const {
  AllocateOutcome out;
  // The node's view, in buffers the thread reuses from one call to the next.
  thread_local internal::NodeView scratch_view;
  internal::NodeView& view = scratch_view;
  view.pools.clear();
  view.candidates.clear();
  view.owned.clear();
  if (auto err = internal::GatherPools(*impl_->ix, node, view)) {
    out.error = std::move(*err);
    return out;
  }
  internal::Search search(*impl_, node, claims, view);
  if (auto err = search.Prepare()) {
    out.error = std::move(*err);
    return out;
  }
  const auto step = search.Run();
  out.num_allocate_one_invocations = search.invocations();
  switch (step) {
    case internal::Search::Step::kDone:
      if (auto err = search.BuildResults(out.allocations)) {
        out.allocations.clear();
        out.error = std::move(*err);
      }
      return out;
    case internal::Search::Step::kError:
      out.error = search.error();
      return out;
    case internal::Search::Step::kMaxSize:
      // Upstream returns its internal errAllocationResultMaxSizeExceeded here; Prepare's check
      // of the claims makes it unreachable.
      out.error = "allocation max size exceeded";
      return out;
    case internal::Search::Step::kFail:
      break;
  }
  out.unsatisfiable = true;
  // Devices from invalid pools are never allocated; when nothing else worked, that is worth
  // telling (for this node only: others may have valid pools).
  if (search.AnyInvalidPool()) out.reason = "invalid resource pools were encountered";
  return out;
}

}  // namespace kubesched::plugins::dynamic_resources
