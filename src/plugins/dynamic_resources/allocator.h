#pragma once
// The structured-parameters allocator of Dynamic Resource Allocation (upstream's
// k8s.io/dynamic-resource-allocation/structured): given the ResourceSlices a node can use, the
// DeviceClasses and what is already allocated, it finds devices for every request of a pod's
// claims that are not allocated yet, all on one node, or says that the node cannot have them.
// The DynamicResources plugin runs it in Filter for each node; it is pure (no I/O, no locks).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "api/resource_types.h"
#include "cel/cel.h"
#include "framework/dra.h"

namespace kubesched::plugins::dynamic_resources {

// The allocated-device bookkeeping is the scheduler's (framework/dra.h: the DRA cache keeps it up
// to date on every claim change); the allocator reads it.
using DeviceId = framework::DeviceId;
using SharedDeviceId = framework::SharedDeviceId;
using AllocatedState = framework::AllocatedState;

//! Looks a DeviceClass up by name (null: not found).
using DeviceClassLookup = std::function<const api::DeviceClass*(std::string_view name)>;

struct AllocateOutcome {
  //! One result per claim given, in order, when every claim could be allocated on the node.
  std::vector<api::AllocationResult> allocations;
  //! Set when the node cannot satisfy the claims (then allocations is empty): why, for the
  //! node's unschedulable reason (upstream: "cannot allocate all claims").
  bool unsatisfiable = false;
  //! Set for an error that no node can fix (a class that does not exist, a CEL error in a
  //! selector, ...): upstream's wording, e.g. `claim default/c, request req-0: device class
  //! gpu.example.com does not exist`, `... selector #0: CEL runtime error: ...`.
  std::optional<std::string> error;
  //! With unsatisfiable: upstream's explanation when this node failed for a reason of its own
  //! (upstream's ErrFailedAllocationOnNode: "invalid resource pools were encountered"); empty for
  //! the usual "cannot allocate all claims".
  std::string reason;
  //! How many times the search stepped (upstream's Stats.NumAllocateOneInvocations).
  int64_t num_allocate_one_invocations = 0;
};

class Allocator {
 public:
  //! `slices`: every ResourceSlice that might be usable on a node being checked (the allocator
  //! still checks each slice's and device's node selection against the node, and uses only
  //! complete pools of the newest generation, as upstream). The pointees, `allocated` and `cache`
  //! must outlive the Allocator (it keeps references, it copies nothing). `cache` compiles CEL
  //! selectors once per expression.
  Allocator(const AllocatedState& allocated, std::span<const api::ResourceSlice* const> slices,
            DeviceClassLookup classes, cel::Cache& cache);

  //! What the Allocator prepares from the slices alone (their pools, node selections, the pools
  //! that only one node uses, device identities): the same for every cycle until a slice changes.
  struct Index;
  //! Builds the Index of `slices` (the pointees must outlive it).
  static std::shared_ptr<const Index> IndexSlices(std::span<const api::ResourceSlice* const> slices);
  //! As above, with the slices' Index built before (IndexSlices), perhaps for an earlier cycle.
  Allocator(const AllocatedState& allocated, std::shared_ptr<const Index> index, DeviceClassLookup classes,
            cel::Cache& cache);

  //! Allocates devices for `claims` (none allocated yet) on `node`: all or nothing, trying the
  //! alternatives (firstAvailable subrequests, device choices) with backtracking as upstream's
  //! allocator does. Thread-safe: any number of nodes may be checked at once.
  //!
  //! A device that allows multiple allocations gets a share ID per allocation. Upstream draws a
  //! random UUID; here it is a UUID-shaped string derived from the claim's UID (namespace/name
  //! when it has none), the device and the result's position in the claim, moved on while the
  //! device already has an allocation with that ID: the same input gives the same IDs.
  AllocateOutcome Allocate(const api::Node& node, std::span<const api::ResourceClaim* const> claims) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kubesched::plugins::dynamic_resources
