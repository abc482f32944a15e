#pragma once
// The structured allocator's internals: what the constructor prepares once per scheduling cycle
// (Allocator::Impl: the slices indexed by node name, their pools, parsed node selectors) and what
// one Allocate call sees of it for its node (NodeView: upstream's GatherPools result, the devices
// in the order the search tries them). What depends only on the slices (Allocator::Index) can be
// shared by the Allocators of many cycles.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/resource_types.h"
#include "plugins/dynamic_resources/allocator.h"
#include "plugins/node_affinity/node_selector.h"

namespace kubesched::plugins::dynamic_resources::internal {

//! How a slice (or, with perDeviceNodeSelection, a device) selects its nodes.
enum class NodeTarget : uint8_t { kNodeName, kAllNodes, kSelector, kPerDevice, kUnknown };

struct SliceInfo {
  const api::ResourceSlice* slice = nullptr;
  uint32_t pool = 0;
  NodeTarget target = NodeTarget::kUnknown;
  bool has_counters = false;            // sharedCounters set: the pool's counter sets live here
  bool has_binding_conditions = false;  // some device has bindingConditions: tried after the others
  int32_t matcher = -1;                 // kSelector: index into Index::matchers
  uint32_t first_device_target = 0;     // kPerDevice: index into Index::device_targets of device 0
  uint32_t first_device = 0;            // index into Index::device_keys of device 0
};

//! The node selection of one device of a perDeviceNodeSelection slice.
struct DeviceTarget {
  NodeTarget target = NodeTarget::kUnknown;
  int32_t matcher = -1;
};

struct PoolInfo {
  std::string_view driver;
  std::string_view name;
  int64_t max_generation = 0;
  std::vector<uint32_t> slices;  // every slice of the pool, in input order
};

}  // namespace kubesched::plugins::dynamic_resources::internal

namespace kubesched::plugins::dynamic_resources::internal {

//! A device's identity, viewing the strings of a slice (or of an AllocatedState entry).
struct DeviceIdView {
  std::string_view driver;
  std::string_view pool;
  std::string_view device;
  bool operator==(const DeviceIdView&) const = default;
};

struct DeviceIdViewHash {
  size_t operator()(const DeviceIdView& id) const {
    size_t h = std::hash<std::string_view>{}(id.driver);
    h ^= std::hash<std::string_view>{}(id.pool) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<std::string_view>{}(id.device) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

//! A pool as one node sees it (upstream's Pool from GatherPools).
struct NodePool {
  uint32_t pool = 0;
  int64_t generation = 0;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  bool has_binding_conditions = false;
  //! The pool's slices that target the node, in the order upstream adds them.
  std::vector<uint32_t> targeting;
  //! Slices of the same generation that do not target the node (their devices still consume the
  //! pool's counters).
  std::vector<uint32_t> others;
};

//! One device the node can use, in the order the search tries devices.
struct Candidate {
  const api::Device* device = nullptr;
  uint32_t slice = 0;
  uint32_t node_pool = 0;  // index into NodeView::pools
  //! The device's identity (driver/pool/device) as an index into Index::device_keys' range.
  uint32_t key = 0;
  //! With perDeviceNodeSelection: whether the device itself is available on the node.
  bool node_ok = true;
};

//! A pool whose every slice names the same one node and holds no counter sets: what that node
//! sees of it does not depend on the node, so it is built once (with node_pool 0 in candidates).
struct LocalPool {
  NodePool pool;
  std::vector<Candidate> candidates;
};

}  // namespace kubesched::plugins::dynamic_resources::internal

namespace kubesched::plugins::dynamic_resources {

//! What depends only on the slices: built once per slice snapshot, shared by Allocators.
struct Allocator::Index {
  std::vector<internal::SliceInfo> slices;
  std::vector<internal::PoolInfo> pools;
  std::vector<node_affinity::NodeSelectorMatcher> matchers;
  std::vector<internal::DeviceTarget> device_targets;
  //! Slices that name one node (and hold no counter sets), by that node's name.
  std::unordered_map<std::string_view, std::vector<uint32_t>> by_node_name;
  //! Every other slice (all nodes, node selectors, per-device selection, counter sets), ascending.
  std::vector<uint32_t> general;
  //! Per pool: index into local_pools, or -1 when the pool is not node-local.
  std::vector<int32_t> local_pool;
  std::vector<internal::LocalPool> local_pools;
  //! Per device of every slice (SliceInfo::first_device + position): its identity's key.
  std::vector<uint32_t> device_keys;
  //! The distinct driver/pool/device identities, by key.
  std::vector<internal::DeviceIdView> keys;
  std::unordered_map<internal::DeviceIdView, uint32_t, internal::DeviceIdViewHash> key_of;

  //! The key of `id`, or -1 when no slice has such a device.
  int64_t KeyOf(const DeviceId& id) const;
};

struct Allocator::Impl {
  std::shared_ptr<const Index> index;
  const Index* ix = nullptr;
  const AllocatedState* allocated = nullptr;
  bool nothing_allocated = true;
  DeviceClassLookup classes;
  cel::Cache* cache = nullptr;
  //! Per device key: kAllocatedExclusively | kAllocated, from `allocated` (built once per cycle).
  static constexpr uint8_t kAllocatedExclusively = 1;
  static constexpr uint8_t kAllocated = 2;
  std::vector<uint8_t> key_state;
  //! Per device key: the capacity consumed on it, or null (empty when nothing is consumed).
  std::vector<const std::map<api::QualifiedName, api::Quantity>*> key_consumed;

  //! Upstream's IsDeviceAllocated: allocated exclusively, shared, or with capacity consumed.
  bool IsAllocated(uint32_t key) const { return !nothing_allocated && (key_state[key] & kAllocated) != 0; }
  bool IsAllocatedExclusively(uint32_t key) const {
    return !nothing_allocated && (key_state[key] & kAllocatedExclusively) != 0;
  }
  //! The capacity already consumed on the device, or null.
  const std::map<api::QualifiedName, api::Quantity>* ConsumedCapacity(uint32_t key) const {
    return key_consumed.empty() ? nullptr : key_consumed[key];
  }
  bool ShareIdTaken(const DeviceId& id, const std::string& share_id) const;
};

}  // namespace kubesched::plugins::dynamic_resources

namespace kubesched::plugins::dynamic_resources::internal {

struct NodeView {
  std::vector<const NodePool*> pools;  // complete pools first, binding-condition pools last
  std::vector<Candidate> candidates;
  std::vector<NodePool> owned;  // the pools built for this node (the others are LocalPools)
};

//! Upstream's GatherPools for `node`, plus the devices of the usable pools. Returns an error
//! message (upstream's wording) when a slice's node selector cannot be parsed.
std::optional<std::string> GatherPools(const Allocator::Index& impl, const api::Node& node, NodeView& view);

//! Fills Index::local_pool and local_pools (slices, pools and device keys already indexed).
void BuildLocalPools(Allocator::Index& index);

//! Whether a device of a perDeviceNodeSelection slice is available on the node; an error message
//! when its node selector cannot be parsed.
bool DeviceOnNode(const Allocator::Index& impl, const SliceInfo& slice, size_t device_index, const api::Node& node,
                  std::string* error);

//! upstream's klog.KObj: "namespace/name", or "name" for an object without namespace.
std::string ObjectKey(const api::ObjectMeta& meta);

}  // namespace kubesched::plugins::dynamic_resources::internal
