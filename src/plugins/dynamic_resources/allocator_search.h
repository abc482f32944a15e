#pragma once
// One Allocate call of the structured allocator (upstream's internal `allocator` type of
// structured/internal/experimental): the claims' requests checked and prepared, then the
// backtracking search over the node's devices, then the allocation results.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource_types.h"
#include "cel/cel.h"
#include "plugins/dynamic_resources/allocator_internal.h"
#include "plugins/dynamic_resources/allocator_quantity.h"

namespace kubesched::plugins::dynamic_resources::internal {

class Search {
 public:
  //! What one step of the search concluded (upstream's allocateOne results: false, true,
  //! errAllocationResultMaxSizeExceeded, another error).
  enum class Step : uint8_t { kFail, kDone, kMaxSize, kError };

  Search(const Allocator::Impl& impl, const api::Node& node, std::span<const api::ResourceClaim* const> claims,
         const NodeView& view);
  //! Hands the scratch buffers back to the thread for its next Search.
  ~Search();
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  //! Checks every claim and request before searching (classes, selectors, counts, allocation
  //! mode All, constraints), as upstream does; the error message when one is wrong.
  std::optional<std::string> Prepare();
  //! Searches for the first complete solution.
  Step Run();
  //! The error of a Step::kError.
  const std::string& error() const { return error_; }
  int64_t invocations() const { return invocations_; }
  //! Whether some pool of the node is invalid (upstream then fails the node with an error).
  bool AnyInvalidPool() const;
  //! One AllocationResult per claim, from the solution Run found.
  std::optional<std::string> BuildResults(std::vector<api::AllocationResult>& out) const;

 private:
  struct CapacityRequest {
    const api::QualifiedName* name;
    Nano nano;
    const api::Quantity* quantity;
  };
  // A request, or one subrequest of a firstAvailable request (upstream's requestData).
  struct Request {
    uint32_t claim = 0;
    const api::DeviceRequest* parent = nullptr;   // the claim's request
    const api::DeviceSubRequest* spec = nullptr;  // `exactly` or the subrequest
    bool is_sub = false;
    std::string result_name;  // "<request>" or "<request>/<subrequest>"
    const api::DeviceClass* device_class = nullptr;
    int64_t num_devices = 0;
    bool all_mode = false;
    std::vector<uint32_t> all_devices;  // candidates, for allocation mode All
    uint32_t num_subrequests = 0;       // first subrequest's entry: how many there are
    uint32_t selected_sub = 0;          // first subrequest's entry: the one the solution uses
    std::vector<std::shared_ptr<const cel::Program>> class_programs;
    std::vector<std::shared_ptr<const cel::Program>> request_programs;
    std::vector<CapacityRequest> capacity;
    bool admin() const { return !is_sub && spec->admin_access; }
    std::string_view name() const { return is_sub ? std::string_view(spec->name) : std::string_view(parent->name); }
  };
  struct Constraint {
    bool distinct = false;
    const std::vector<std::string>* requests = nullptr;
    const api::QualifiedName* attribute = nullptr;
    const api::DeviceAttributeValue* first = nullptr;  // matchAttribute: the value all share
    int64_t count = 0;
    std::vector<const api::DeviceAttributeValue*> seen;  // distinctAttribute: the values taken
  };
  struct ConsumedValue {
    uint32_t capacity = 0;  // index into the device's capacity
    Nano nano = 0;
    const api::Quantity* source = nullptr;  // the quantity it equals, or null: binary_units
    int64_t binary_units = 0;
  };
  struct Result {
    uint32_t candidate = 0;
    uint32_t request = 0;
    bool multi = false;
    bool counters_consumed = false;
    uint32_t consumed_begin = 0;
    uint32_t consumed_count = 0;
  };
  // What this call knows and has done about one candidate device.
  struct CandidateState {
    bool looked_up = false;
    bool allocated_exclusively = false;  // in AllocatedState.allocated_devices
    bool allocated = false;              // upstream's IsDeviceAllocated
    int32_t shares = 0;                  // allocations in this call of a device allowing several
    int32_t capacity_begin = -1;         // into capacities_
    int32_t counters_begin = -1;         // into counter_uses_
    int32_t counters_count = 0;
    //! Allocations in this call of a device that does not allow several (one per claim it is
    //! allocated to: the claim's results say which).
    int32_t exclusive = 0;
  };
  struct CapacityState {
    Nano value = 0;
    Nano allocated = 0;   // AllocatedState.consumed_capacity
    Nano allocating = 0;  // this call's shares
  };
  struct CounterCell {
    std::string_view set;
    std::string_view name;
    Nano available = 0;
    Nano consumed = 0;
  };
  struct PoolCounters {
    bool built = false;
    uint32_t begin = 0;
    uint32_t count = 0;
  };
  struct CounterUse {
    uint32_t cell = 0;
    Nano amount = 0;
  };
  enum class Try : uint8_t { kNo, kYes, kError };

  std::optional<std::string> PrepareRequest(uint32_t index);
  std::optional<std::string> PrepareConstraints(uint32_t claim_index);
  uint32_t AddRequest(Request request);

  Step AllocateOne(uint32_t claim, uint32_t request, uint32_t sub, int64_t device, bool allocate_sub);
  Step SearchDevices(uint32_t claim, uint32_t request, uint32_t sub, int64_t device, bool allocate_sub);
  Try AllocateDevice(uint32_t index, uint32_t c, bool must);
  void Deallocate(uint32_t claim);

  // Whether the device satisfies the class's and the request's selectors (and, with
  // perDeviceNodeSelection, is on the node); cached per request and device, as upstream.
  Try IsSelectable(uint32_t index, uint32_t c);
  Try SelectorsMatch(uint32_t index, uint32_t c, bool from_class);

  CandidateState& State(uint32_t c);
  DeviceId Id(uint32_t c) const;
  bool InUse(uint32_t c) {
    const CandidateState& st = State(c);
    return st.allocated_exclusively || st.exclusive > 0;
  }
  bool AllocatingForClaim(uint32_t c, uint32_t claim);

  // Upstream's CmpRequestOverCapacity: whether the request's capacity (rounded per the device's
  // request policies) still fits. With `consumed`, also what the allocation consumes.
  bool CapacityFits(const Request& request, uint32_t c, std::vector<ConsumedValue>* consumed);
  //! `driver`: the device's, which a short requested capacity name (empty domain) stands for.
  ConsumedValue Consumed(const Request& request, const api::DeviceCapacity& capacity, uint32_t index,
                         std::string_view driver) const;

  // Whether the device's counters fit in what its pool has left; with commit, takes them.
  bool CountersFit(uint32_t c, bool commit);
  void ReleaseCounters(uint32_t c);
  void BuildPoolCounters(uint32_t node_pool);

  bool ConstraintAdd(Constraint& constraint, const Request& request, const api::Device& device) const;
  void ConstraintRemove(Constraint& constraint, const Request& request) const;
  bool ConstraintApplies(const Constraint& constraint, const Request& request) const;

  std::optional<std::string> NodeSelectorFor(uint32_t claim, std::optional<api::NodeSelector>& out) const;
  std::string ShareId(uint32_t claim, uint32_t c, uint32_t position) const;

  const Allocator::Impl& impl_;
  const api::Node& node_;
  std::span<const api::ResourceClaim* const> claims_;
  const NodeView& view_;

  std::vector<Request> requests_;
  std::vector<std::vector<uint32_t>> request_index_;  // per claim, per request: first entry
  std::vector<std::vector<Constraint>> constraints_;  // per claim
  std::vector<std::vector<Result>> results_;          // per claim
  std::vector<int8_t> selectable_;                    // per request and candidate: -1 unknown
  std::vector<CandidateState> candidates_;
  std::vector<CapacityState> capacities_;
  std::vector<ConsumedValue> consumed_;
  std::vector<CounterCell> counter_cells_;
  std::vector<PoolCounters> pool_counters_;
  std::vector<CounterUse> counter_uses_;
  std::vector<ConsumedValue> scratch_consumed_;
  std::vector<std::pair<uint32_t, uint32_t>> pool_candidates_;  // per node pool: [begin, end)
  //! The buffers above of plain values, kept per thread between Searches (their capacity reused).
  struct Scratch;
  static Scratch& ThreadScratch();
  std::string error_;
  int64_t invocations_ = 0;
};

}  // namespace kubesched::plugins::dynamic_resources::internal
