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

bool Allocator::Impl::IsAllocatedExclusively(const DeviceId& id) const {
  return allocated->allocated_devices.contains(id);
}

bool Allocator::Impl::IsAllocated(const DeviceId& id) const {
  if (IsAllocatedExclusively(id)) return true;
  const auto& shared = allocated->allocated_shared_devices;
  if (!shared.empty()) {
    auto it = shared.lower_bound(SharedDeviceId{id, std::string()});
    if (it != shared.end() && it->device == id) return true;
  }
  return allocated->consumed_capacity.contains(id);
}

const std::map<api::QualifiedName, api::Quantity>* Allocator::Impl::ConsumedCapacity(const DeviceId& id) const {
  const auto& consumed = allocated->consumed_capacity;
  if (consumed.empty()) return nullptr;
  auto it = consumed.find(id);
  return it != consumed.end() ? &it->second : nullptr;
}

bool Allocator::Impl::ShareIdTaken(const DeviceId& id, const std::string& share_id) const {
  const auto& shared = allocated->allocated_shared_devices;
  return !shared.empty() && shared.contains(SharedDeviceId{id, share_id});
}

Allocator::Allocator(const AllocatedState& allocated, std::span<const api::ResourceSlice* const> slices,
                     DeviceClassLookup classes, cel::Cache& cache) {
  auto impl = std::make_shared<Impl>();
  impl->allocated = &allocated;
  impl->nothing_allocated = allocated.allocated_devices.empty() && allocated.allocated_shared_devices.empty() &&
                            allocated.consumed_capacity.empty();
  impl->classes = std::move(classes);
  impl->cache = &cache;
  impl->slices.reserve(slices.size());

  std::unordered_map<PoolKey, uint32_t, PoolKeyHash> pools;
  for (const api::ResourceSlice* slice : slices) {
    if (slice == nullptr) continue;
    const auto index = static_cast<uint32_t>(impl->slices.size());
    SliceInfo info;
    info.slice = slice;
    auto [it, added] =
        pools.try_emplace(PoolKey{slice->driver, slice->pool.name}, static_cast<uint32_t>(impl->pools.size()));
    if (added) {
      impl->pools.push_back(PoolInfo{slice->driver, slice->pool.name, slice->pool.generation, {}});
    }
    info.pool = it->second;
    PoolInfo& pool = impl->pools[info.pool];
    pool.slices.push_back(index);
    pool.max_generation = std::max(pool.max_generation, slice->pool.generation);

    info.has_counters = !slice->shared_counters.empty();
    info.has_binding_conditions = std::any_of(slice->devices.begin(), slice->devices.end(),
                                              [](const api::Device& d) { return !d.binding_conditions.empty(); });
    info.target = Classify(slice->node_name, slice->all_nodes, slice->node_selector);
    if (info.target == NodeTarget::kSelector) {
      info.matcher = static_cast<int32_t>(impl->matchers.size());
      impl->matchers.emplace_back(*slice->node_selector, "", /*collect_errors=*/true);
    } else if (info.target == NodeTarget::kUnknown && slice->per_device_node_selection) {
      info.target = NodeTarget::kPerDevice;
      info.first_device_target = static_cast<uint32_t>(impl->device_targets.size());
      for (const auto& device : slice->devices) {
        DeviceTarget t;
        t.target = Classify(device.node_name, device.all_nodes, device.node_selector);
        if (t.target == NodeTarget::kSelector) {
          t.matcher = static_cast<int32_t>(impl->matchers.size());
          impl->matchers.emplace_back(*device.node_selector, "", /*collect_errors=*/true);
        }
        impl->device_targets.push_back(t);
      }
    }

    if (info.target == NodeTarget::kNodeName && !info.has_counters) {
      impl->by_node_name[*slice->node_name].push_back(index);
    } else if (info.target != NodeTarget::kUnknown || info.has_counters) {
      impl->general.push_back(index);
    }
    impl->slices.push_back(info);
  }
  impl_ = std::move(impl);
}

AllocateOutcome Allocator::Allocate(const api::Node& node, std::span<const api::ResourceClaim* const> claims) const {
  AllocateOutcome out;
  internal::NodeView view;
  if (auto err = internal::GatherPools(*impl_, node, view)) {
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
