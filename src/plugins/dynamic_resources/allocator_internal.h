#pragma once
// The structured allocator's internals: what the constructor prepares once per scheduling cycle
// (Allocator::Impl: the slices indexed by node name, their pools, parsed node selectors) and what
// one Allocate call sees of it for its node (NodeView: upstream's GatherPools result, the devices
// in the order the search tries them).

#include <cstdint>
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
  int32_t matcher = -1;                 // kSelector: index into Impl::matchers
  uint32_t first_device_target = 0;     // kPerDevice: index into Impl::device_targets of device 0
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

namespace kubesched::plugins::dynamic_resources {

struct Allocator::Impl {
  const AllocatedState* allocated = nullptr;
  bool nothing_allocated = true;
  DeviceClassLookup classes;
  cel::Cache* cache = nullptr;
  std::vector<internal::SliceInfo> slices;
  std::vector<internal::PoolInfo> pools;
  std::vector<node_affinity::NodeSelectorMatcher> matchers;
  std::vector<internal::DeviceTarget> device_targets;
  //! Slices that name one node (and hold no counter sets), by that node's name.
  std::unordered_map<std::string_view, std::vector<uint32_t>> by_node_name;
  //! Every other slice (all nodes, node selectors, per-device selection, counter sets), ascending.
  std::vector<uint32_t> general;

  //! Upstream's IsDeviceAllocated: allocated exclusively, shared, or with capacity consumed.
  bool IsAllocated(const DeviceId& id) const;
  bool IsAllocatedExclusively(const DeviceId& id) const;
  //! The capacity already consumed on the device, or null.
  const std::map<api::QualifiedName, api::Quantity>* ConsumedCapacity(const DeviceId& id) const;
  bool ShareIdTaken(const DeviceId& id, const std::string& share_id) const;
};

}  // namespace kubesched::plugins::dynamic_resources

namespace kubesched::plugins::dynamic_resources::internal {

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
  //! With perDeviceNodeSelection: whether the device itself is available on the node.
  bool node_ok = true;
};

struct NodeView {
  std::vector<NodePool> pools;  // complete pools first, binding-condition pools last
  std::vector<Candidate> candidates;
};

//! Upstream's GatherPools for `node`, plus the devices of the usable pools. Returns an error
//! message (upstream's wording) when a slice's node selector cannot be parsed.
std::optional<std::string> GatherPools(const Allocator::Impl& impl, const api::Node& node, NodeView& view);

//! Whether a device of a perDeviceNodeSelection slice is available on the node; an error message
//! when its node selector cannot be parsed.
bool DeviceOnNode(const Allocator::Impl& impl, const SliceInfo& slice, size_t device_index, const api::Node& node,
                  std::string* error);

//! upstream's klog.KObj: "namespace/name", or "name" for an object without namespace.
std::string ObjectKey(const api::ObjectMeta& meta);

}  // namespace kubesched::plugins::dynamic_resources::internal
