// The search of upstream's experimental structured allocator (allocateOne, allocateDevice,
// isSelectable, CmpRequestOverCapacity, checkAvailableCounters, the constraints), ported for its
// semantics, its order of trying devices and its error wording. Where upstream's Go code has known
// slips this port does what upstream means instead; each such place says so.

#include "plugins/dynamic_resources/allocator_search.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "fmt/format.h"

namespace kubesched::plugins::dynamic_resources::internal {
namespace {

constexpr Nano kNanoPerUnit = 1'000'000'000;

// A request that has neither `exactly` nor `firstAvailable`: it has no class, which is what
// upstream then reports.
const api::DeviceSubRequest kNoRequest{};

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// resourceclaim.ToleratesTaint.
bool ToleratesTaint(const api::DeviceToleration& toleration, const api::DeviceTaint& taint) {
  if (toleration.effect && *toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case api::DeviceTolerationOperator::kEqual:
      return toleration.value == taint.value;
    case api::DeviceTolerationOperator::kExists:
      return true;
  }
  return false;
}

// NoSchedule and NoExecute taints (the only effects there are here) must be tolerated.
bool TaintsTolerated(const api::Device& device, const std::vector<api::DeviceToleration>& tolerations) {
  for (const auto& taint : device.taints) {
    const bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                       [&](const api::DeviceToleration& t) { return ToleratesTaint(t, taint); });
    if (!tolerated) return false;
  }
  return true;
}

// Upstream compares attribute values of the same type; versions as strings (semver 2.0.0 keeps
// them minimal, so equal strings are equal versions, build metadata included).
bool SameValue(const api::DeviceAttributeValue& a, const api::DeviceAttributeValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* va = std::get_if<api::SemVer>(&a)) {
    const auto& vb = std::get<api::SemVer>(b);
    return *va == vb && va->build == vb.build;
  }
  return a == b;
}

bool ContainsRequirement(const std::vector<api::SelectorRequirement>& have, const api::SelectorRequirement& r) {
  return std::any_of(have.begin(), have.end(), [&](const api::SelectorRequirement& h) {
    return h.key == r.key && h.op == r.op && h.values.size() == r.values.size() &&
           std::is_permutation(h.values.begin(), h.values.end(), r.values.begin());
  });
}

void AddRequirements(const std::vector<api::SelectorRequirement>& from, std::vector<api::SelectorRequirement>& to) {
  for (const auto& r : from) {
    if (!ContainsRequirement(to, r)) to.push_back(r);
  }
}

uint64_t Mix(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  h ^= 0xff;  // separator, so "ab"+"c" differs from "a"+"bc"
  return h * 0x100000001b3ULL;
}

uint64_t Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

struct Search::Scratch {
  std::vector<int8_t> selectable;
  std::vector<CandidateState> candidates;
  std::vector<CapacityState> capacities;
  std::vector<ConsumedValue> consumed;
  std::vector<CounterCell> counter_cells;
  std::vector<PoolCounters> pool_counters;
  std::vector<CounterUse> counter_uses;
  std::vector<ConsumedValue> scratch_consumed;
  std::vector<std::pair<uint32_t, uint32_t>> pool_candidates;
};

Search::Scratch& Search::ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

Search::~Search() {
  Scratch& scratch = ThreadScratch();
  auto give_back = [](auto& mine, auto& to) {
    mine.clear();
    to = std::move(mine);
  };
  give_back(candidates_, scratch.candidates);
  give_back(selectable_, scratch.selectable);
  give_back(capacities_, scratch.capacities);
  give_back(consumed_, scratch.consumed);
  give_back(counter_cells_, scratch.counter_cells);
  give_back(pool_counters_, scratch.pool_counters);
  give_back(counter_uses_, scratch.counter_uses);
  give_back(scratch_consumed_, scratch.scratch_consumed);
  give_back(pool_candidates_, scratch.pool_candidates);
}

Search::Search(const Allocator::Impl& impl, const api::Node& node, std::span<const api::ResourceClaim* const> claims,
               const NodeView& view)
    : impl_(impl), node_(node), claims_(claims), view_(view) {
  Scratch& scratch = ThreadScratch();
  candidates_ = std::move(scratch.candidates);
  selectable_ = std::move(scratch.selectable);
  capacities_ = std::move(scratch.capacities);
  consumed_ = std::move(scratch.consumed);
  counter_cells_ = std::move(scratch.counter_cells);
  pool_counters_ = std::move(scratch.pool_counters);
  counter_uses_ = std::move(scratch.counter_uses);
  scratch_consumed_ = std::move(scratch.scratch_consumed);
  pool_candidates_ = std::move(scratch.pool_candidates);
  candidates_.assign(view.candidates.size(), CandidateState{});
  pool_counters_.assign(view.pools.size(), PoolCounters{});
  pool_candidates_.assign(view.pools.size(), {0, 0});
  for (uint32_t c = 0; c < view.candidates.size(); ++c) {
    auto& range = pool_candidates_[view.candidates[c].node_pool];
    if (range.first == range.second) range.first = c;
    range.second = c + 1;
  }
  request_index_.resize(claims.size());
  constraints_.resize(claims.size());
  results_.resize(claims.size());
}

uint32_t Search::AddRequest(Request request) {
  requests_.push_back(std::move(request));
  selectable_.resize(selectable_.size() + view_.candidates.size(), -1);
  return static_cast<uint32_t>(requests_.size() - 1);
}

std::optional<std::string> Search::Prepare() {
  constexpr int64_t kCountCap = int64_t{1} << 40;  // sums of absurd counts must not overflow
  for (uint32_t ci = 0; ci < claims_.size(); ++ci) {
    const api::ResourceClaim& claim = *claims_[ci];
    int64_t min_devices = 0;
    auto& index = request_index_[ci];
    index.reserve(claim.spec.requests.size());
    for (const auto& request : claim.spec.requests) {
      if (!request.first_available.empty()) {
        // Only a lower bound: which subrequest is used decides how many devices it takes.
        int64_t min_request = std::numeric_limits<int64_t>::max();
        const auto base = static_cast<uint32_t>(requests_.size());
        index.push_back(base);
        for (const auto& sub : request.first_available) {
          Request r;
          r.claim = ci;
          r.parent = &request;
          r.spec = &sub;
          r.is_sub = true;
          r.result_name = request.name + "/" + sub.name;
          const uint32_t i = AddRequest(std::move(r));
          if (auto err = PrepareRequest(i)) return err;
          min_request = std::min(min_request, requests_[i].num_devices);
        }
        requests_[base].num_subrequests = static_cast<uint32_t>(request.first_available.size());
        min_devices += std::clamp<int64_t>(min_request, 0, kCountCap);
      } else {
        Request r;
        r.claim = ci;
        r.parent = &request;
        r.spec = request.exactly ? &*request.exactly : &kNoRequest;
        r.result_name = request.name;
        const uint32_t i = AddRequest(std::move(r));
        index.push_back(i);
        if (auto err = PrepareRequest(i)) return err;
        min_devices += std::clamp<int64_t>(requests_[i].num_devices, 0, kCountCap);
      }
    }
    // numDevices is a lower bound with subrequests, so the search checks the limit again.
    if (min_devices > api::kAllocationResultsMaxSize) {
      return fmt::format("claim {}: number of requested devices {} exceeds the claim limit of {}",
                         ObjectKey(claim.metadata), min_devices, api::kAllocationResultsMaxSize);
    }
    if (auto err = PrepareConstraints(ci)) return err;
  }
  return std::nullopt;
}

std::optional<std::string> Search::PrepareRequest(uint32_t index) {
  Request& r = requests_[index];
  const api::DeviceSubRequest& spec = *r.spec;
  const api::ResourceClaim& claim = *claims_[r.claim];
  for (size_t k = 0; k < spec.selectors.size(); ++k) {
    if (spec.selectors[k].expression.empty()) {
      return fmt::format("claim {}, request {}, selector #{}: CEL expression empty (unsupported selector type?)",
                         ObjectKey(claim.metadata), r.name(), k);
    }
  }
  if (spec.device_class_name.empty()) {
    return fmt::format("claim {}, request {}: missing device class name (unsupported request type?)",
                       ObjectKey(claim.metadata), r.name());
  }
  r.device_class = impl_.classes ? impl_.classes(spec.device_class_name) : nullptr;
  if (r.device_class == nullptr) {
    // The error of the class lister (deviceclass.resource.k8s.io NotFound), wrapped as upstream.
    return fmt::format("claim {}, request {}: could not retrieve device class {}: deviceclass.{} \"{}\" not found",
                       ObjectKey(claim.metadata), r.name(), spec.device_class_name, api::kResourceApiGroup,
                       spec.device_class_name);
  }
  r.class_programs.resize(r.device_class->selectors.size());
  r.request_programs.resize(spec.selectors.size());
  r.capacity.reserve(spec.capacity_requests.size());
  for (const auto& [name, quantity] : spec.capacity_requests)
    r.capacity.push_back({&name, ToNano(quantity), &quantity});

  if (spec.allocation_mode == api::DeviceAllocationMode::kExactCount) {
    r.num_devices = spec.count;
    return std::nullopt;
  }
  // Allocation mode All: which devices "all" are is known now. An incomplete pool might hide
  // some, so that is an error rather than a smaller "all".
  r.all_mode = true;
  for (uint32_t p = 0; p < view_.pools.size(); ++p) {
    const NodePool& pool = *view_.pools[p];
    const PoolInfo& info = impl_.ix->pools[pool.pool];
    if (pool.incomplete || pool.invalid) {
      return fmt::format("claim {}, request {}: asks for all devices, but resource pool {}/{} is currently {}",
                         ObjectKey(claim.metadata), r.name(), info.driver, info.name,
                         pool.incomplete ? "being updated" : "invalid");
    }
    for (uint32_t c = pool_candidates_[p].first; c < pool_candidates_[p].second; ++c) {
      const Try selectable = IsSelectable(index, c);
      if (selectable == Try::kError) return error_;
      // requests_ does not grow here: r stays valid.
      if (selectable == Try::kYes && CapacityFits(r, c, nullptr)) r.all_devices.push_back(c);
    }
  }
  r.num_devices = static_cast<int64_t>(r.all_devices.size());
  return std::nullopt;
}

std::optional<std::string> Search::PrepareConstraints(uint32_t claim_index) {
  const api::ResourceClaim& claim = *claims_[claim_index];
  auto& constraints = constraints_[claim_index];
  constraints.reserve(claim.spec.constraints.size());
  for (size_t i = 0; i < claim.spec.constraints.size(); ++i) {
    const auto& spec = claim.spec.constraints[i];
    Constraint c;
    c.requests = &spec.requests;
    if (spec.match_attribute) {
      c.attribute = &*spec.match_attribute;
    } else if (spec.distinct_attribute) {
      c.distinct = true;
      c.attribute = &*spec.distinct_attribute;
    } else {
      return fmt::format("claim {}, constraint #{}: empty constraint (unsupported constraint type?)",
                         ObjectKey(claim.metadata), i);
    }
    constraints.push_back(std::move(c));
  }
  return std::nullopt;
}

Search::Step Search::Run() { return AllocateOne(0, 0, 0, 0, false); }

bool Search::AnyInvalidPool() const {
  return std::any_of(view_.pools.begin(), view_.pools.end(), [](const NodePool* p) { return p->invalid; });
}

// Upstream's allocateOne: the `device`th device of request `request` (subrequest `sub`) of claim
// `claim`. allocate_sub is set while one particular subrequest is being tried.
Search::Step Search::AllocateOne(uint32_t claim, uint32_t request, uint32_t sub, int64_t device, bool allocate_sub) {
  ++invocations_;
  if (claim >= claims_.size()) return Step::kDone;
  if (request >= claims_[claim]->spec.requests.size()) {
    // Done with the claim. Running out of room in a later claim says nothing about this one's
    // choices, so that is a plain failure here.
    const Step s = AllocateOne(claim + 1, 0, 0, 0, false);
    return s == Step::kMaxSize ? Step::kFail : s;
  }
  const uint32_t base = request_index_[claim][request];
  const uint32_t index = base + sub;
  if (!allocate_sub && requests_[index].is_sub) {
    // One of the subrequests, the first that works. When every one of them runs out of room,
    // no choice made for earlier requests can help either (unless they have subrequests).
    bool all_exceeded = true;
    for (uint32_t s = 0; s < requests_[base].num_subrequests; ++s) {
      const Step step = AllocateOne(claim, request, s, device, true);
      if (step == Step::kMaxSize) continue;
      all_exceeded = false;
      if (step == Step::kError) return step;
      if (step == Step::kDone) {
        requests_[base].selected_sub = s;
        return Step::kDone;
      }
    }
    return all_exceeded ? Step::kMaxSize : Step::kFail;
  }

  const Request& r = requests_[index];
  // Allocation mode All needs at least one device.
  if (r.all_mode && r.all_devices.empty()) return Step::kFail;
  if (device >= r.num_devices) return AllocateOne(claim, request + 1, 0, 0, false);
  if (static_cast<int64_t>(results_[claim].size()) + r.num_devices - device > api::kAllocationResultsMaxSize) {
    return Step::kMaxSize;
  }
  if (r.all_mode) {
    // The devices are known; the order does not matter, so there is nothing to try instead.
    // (Upstream's Go drops the subrequest index when it moves to the next device here; it is
    // kept, so that a subrequest with allocation mode All takes all of its own devices.)
    const Try t = AllocateDevice(index, r.all_devices[static_cast<size_t>(device)], /*must=*/true);
    if (t == Try::kError) return Step::kError;
    if (t == Try::kNo) return Step::kFail;
    const Step s = AllocateOne(claim, request, sub, device + 1, allocate_sub);
    if (s == Step::kDone) return s;
    Deallocate(claim);
    return s == Step::kFail ? Step::kFail : s;
  }
  return SearchDevices(claim, request, sub, device, allocate_sub);
}

// The device loop of allocateOne. Devices of one request are tried as combinations, not
// permutations (upstream's "avoid unnecessary work"): the next device of a request is looked
// for from the previous one on. From it, not past it: a device that allows multiple
// allocations may serve one request more than once.
Search::Step Search::SearchDevices(uint32_t claim, uint32_t request, uint32_t sub, int64_t device, bool allocate_sub) {
  const uint32_t index = request_index_[claim][request] + sub;
  const Request& r = requests_[index];
  const uint32_t start = device > 0 ? results_[claim].back().candidate : 0;
  const bool admin = r.admin();
  for (uint32_t c = start; c < view_.candidates.size(); ++c) {
    // Checking for "in use" is cheap and thus done first.
    if (admin ? AllocatingForClaim(c, claim) : InUse(c)) continue;
    const Try selectable = IsSelectable(index, c);
    if (selectable == Try::kError) return Step::kError;
    if (selectable == Try::kNo) continue;
    const Try t = AllocateDevice(index, c, /*must=*/false);
    if (t == Try::kError) return Step::kError;
    if (t == Try::kNo) continue;
    const Step s = AllocateOne(claim, request, sub, device + 1, allocate_sub);
    if (s == Step::kDone) return s;
    Deallocate(claim);
    // Out of room: further up the stack another subrequest may take fewer devices.
    if (s != Step::kFail) return s;
  }
  return Step::kFail;
}

// Upstream's allocateDevice: whether the candidate can be taken for the request (free, counters
// left, taints tolerated, constraints kept, capacity left); if so it is taken. With `must` the
// caller needs exactly this device, and a constraint that rules it out is an error.
Search::Try Search::AllocateDevice(uint32_t index, uint32_t c, bool must) {
  const Request& r = requests_[index];
  const Candidate& candidate = view_.candidates[c];
  const api::Device& device = *candidate.device;
  const bool multi = device.allow_multiple_allocations;
  const bool admin = r.admin();
  if (!multi && admin && AllocatingForClaim(c, r.claim)) return Try::kNo;
  if (!admin && InUse(c)) return Try::kNo;
  CandidateState& st = State(c);

  // A device that allows multiple allocations takes its counters with its first allocation.
  // Admin access takes nothing. (Upstream's Go lets a shared device's counters go uncounted once
  // it is in use and keeps counters taken when a later check fails; this does what it means.)
  const bool take_counters = !admin && !device.consumes_counters.empty() && !(multi && (st.allocated || st.shares > 0));
  if (take_counters && !CountersFit(c, /*commit=*/false)) return Try::kNo;
  if (!TaintsTolerated(device, r.spec->tolerations)) return Try::kNo;

  auto& constraints = constraints_[r.claim];
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (ConstraintAdd(constraints[i], r, device)) continue;
    if (must) {
      // A claim whose constraint rules out one of "all" devices cannot be satisfied anywhere.
      const auto& slice = *impl_.ix->slices[candidate.slice].slice;
      error_ = fmt::format(
          "claim {}, request {}: cannot add device {}/{}/{} because a claim constraint would not be "
          "satisfied",
          ObjectKey(claims_[r.claim]->metadata), r.name(), slice.driver, slice.pool.name, device.name);
      return Try::kError;
    }
    for (size_t e = 0; e < i; ++e) ConstraintRemove(constraints[e], r);
    return Try::kNo;
  }

  scratch_consumed_.clear();
  if (!CapacityFits(r, c, multi ? &scratch_consumed_ : nullptr)) {
    for (auto& constraint : constraints) ConstraintRemove(constraint, r);
    return Try::kNo;
  }

  // Taken.
  if (take_counters) CountersFit(c, /*commit=*/true);
  if (multi) {
    ++st.shares;
    for (const auto& v : scratch_consumed_)
      capacities_[static_cast<size_t>(st.capacity_begin) + v.capacity].allocating += v.nano;
  } else {
    ++st.exclusive;
  }
  Result result;
  result.candidate = c;
  result.request = index;
  result.multi = multi;
  result.counters_consumed = take_counters;
  result.consumed_begin = static_cast<uint32_t>(consumed_.size());
  result.consumed_count = static_cast<uint32_t>(scratch_consumed_.size());
  consumed_.insert(consumed_.end(), scratch_consumed_.begin(), scratch_consumed_.end());
  results_[r.claim].push_back(result);
  return Try::kYes;
}

// Undoes the claim's latest AllocateDevice.
void Search::Deallocate(uint32_t claim) {
  const Result result = results_[claim].back();
  results_[claim].pop_back();
  const Request& r = requests_[result.request];
  for (auto& constraint : constraints_[claim]) ConstraintRemove(constraint, r);
  CandidateState& st = candidates_[result.candidate];
  if (result.multi) {
    --st.shares;
    for (uint32_t i = 0; i < result.consumed_count; ++i) {
      const ConsumedValue& v = consumed_[result.consumed_begin + i];
      capacities_[static_cast<size_t>(st.capacity_begin) + v.capacity].allocating -= v.nano;
    }
  } else {
    --st.exclusive;
  }
  if (result.counters_consumed) ReleaseCounters(result.candidate);
  consumed_.resize(result.consumed_begin);
}

Search::CandidateState& Search::State(uint32_t c) {
  CandidateState& st = candidates_[c];
  if (!st.looked_up) {
    st.looked_up = true;
    if (!impl_.nothing_allocated) {
      const uint32_t key = view_.candidates[c].key;
      st.allocated_exclusively = impl_.IsAllocatedExclusively(key);
      st.allocated = st.allocated_exclusively || impl_.IsAllocated(key);
    }
  }
  return st;
}

DeviceId Search::Id(uint32_t c) const {
  const Candidate& candidate = view_.candidates[c];
  const auto& slice = *impl_.ix->slices[candidate.slice].slice;
  return DeviceId{slice.driver, slice.pool.name, candidate.device->name};
}

bool Search::AllocatingForClaim(uint32_t c, uint32_t claim) {
  // The claim's results hold the device (not shared) exactly while it is allocated to the claim.
  const auto& results = results_[claim];
  return std::any_of(results.begin(), results.end(),
                     [c](const Result& result) { return result.candidate == c && !result.multi; });
}

Search::Try Search::IsSelectable(uint32_t index, uint32_t c) {
  int8_t& memo = selectable_[static_cast<size_t>(index) * view_.candidates.size() + c];
  if (memo >= 0) return memo != 0 ? Try::kYes : Try::kNo;
  for (bool from_class : {true, false}) {
    const Try t = SelectorsMatch(index, c, from_class);
    if (t == Try::kError) return t;
    if (t == Try::kNo) {
      memo = 0;
      return t;
    }
  }
  const Candidate& candidate = view_.candidates[c];
  if (!candidate.node_ok) {
    const SliceInfo& slice = impl_.ix->slices[candidate.slice];
    std::string err;
    DeviceOnNode(*impl_.ix, slice, static_cast<size_t>(candidate.device - slice.slice->devices.data()), node_, &err);
    if (!err.empty()) {
      error_ = std::move(err);
      return Try::kError;
    }
    memo = 0;
    return Try::kNo;
  }
  memo = 1;
  return Try::kYes;
}

Search::Try Search::SelectorsMatch(uint32_t index, uint32_t c, bool from_class) {
  Request& r = requests_[index];
  const auto& selectors = from_class ? r.device_class->selectors : r.spec->selectors;
  auto& programs = from_class ? r.class_programs : r.request_programs;
  const Candidate& candidate = view_.candidates[c];
  const api::Device& device = *candidate.device;
  auto where = [&] {
    return from_class ? fmt::format("class {}", r.device_class->metadata.name)
                      : fmt::format("claim {}", ObjectKey(claims_[r.claim]->metadata));
  };
  for (size_t k = 0; k < selectors.size(); ++k) {
    if (!programs[k]) {
      // Compiled when first needed, as upstream: a selector behind one that never matches
      // never reports its error.
      cel::CompileResult compiled = impl_.cache->Get(selectors[k].expression);
      if (compiled.error || !compiled.program) {
        const std::string detail =
            compiled.error ? (compiled.error->text.empty() ? compiled.error->message : compiled.error->text) : "";
        error_ = fmt::format("{}: selector #{}: CEL compile error: compilation failed: {}", where(), k, detail);
        return Try::kError;
      }
      programs[k] = std::move(compiled.program);
    }
    cel::DeviceView view;
    view.driver = impl_.ix->slices[candidate.slice].slice->driver;
    view.attributes = device.attributes;
    view.capacity = device.capacity;
    view.allow_multiple_allocations = device.allow_multiple_allocations;
    const cel::EvalResult result = cel::Evaluate(*programs[k], view);
    if (result.error) {
      error_ = fmt::format("{}: selector #{}: CEL runtime error: {}", where(), k, result.error->message);
      return Try::kError;
    }
    if (!result.matches) return Try::kNo;
  }
  return Try::kYes;
}

namespace {

// Whether the requested capacity name `requested` names the device capacity `have`: a short
// name (empty domain, as the decoder keeps it) stands for the device driver's `{driver, id}`.
bool CapacityNameIs(const api::QualifiedName& requested, const api::QualifiedName& have, std::string_view driver) {
  if (requested.domain.empty()) return have.id == requested.id && have.domain == driver;
  return requested == have;
}

}  // namespace

// consumable_capacity.go's calculateConsumedCapacity: what an allocation consumes of one
// capacity: the request rounded up per the policy; without a request, the policy's default or
// else the whole capacity.
Search::ConsumedValue Search::Consumed(const Request& request, const api::DeviceCapacity& capacity, uint32_t index,
                                       std::string_view driver) const {
  const CapacityRequest* requested = nullptr;
  for (const auto& cr : request.capacity) {
    if (CapacityNameIs(*cr.name, capacity.name, driver)) requested = &cr;
  }
  const auto& policy = capacity.request_policy;
  if (requested == nullptr) {
    if (policy && policy->default_value) return {index, ToNano(*policy->default_value), &*policy->default_value, 0};
    return {index, ToNano(capacity.value), &capacity.value, 0};
  }
  const ConsumedValue as_requested{index, requested->nano, requested->quantity, 0};
  if (!policy) return as_requested;
  if (policy->valid_range) {
    const auto& range = *policy->valid_range;
    if (requested->nano < ToNano(range.min)) return {index, ToNano(range.min), &range.min, 0};
    if (!range.step || range.step->Value() == 0) return as_requested;
    // In whole units, as upstream (Quantity.Value()), the result a BinarySI quantity.
    const int64_t step = range.step->Value();
    const int64_t min = range.min.Value();
    const int64_t added = CeilUnits(requested->nano) - min;
    int64_t n = added / step;
    if (added % step != 0) ++n;
    const int64_t value = min + step * n;
    return {index, static_cast<Nano>(value) * kNanoPerUnit, nullptr, value};
  }
  for (const auto& valid : policy->valid_values) {
    if (requested->nano <= ToNano(valid)) return {index, ToNano(valid), &valid, 0};
  }
  return as_requested;
}

namespace {

// consumable_capacity.go's violatesPolicy.
bool ViolatesPolicy(Nano consumed, const std::optional<api::CapacityRequestPolicy>& policy) {
  if (!policy) return false;
  if (policy->default_value && consumed == ToNano(*policy->default_value)) return false;
  if (policy->valid_range) {
    const auto& range = *policy->valid_range;
    if (range.max && consumed > ToNano(*range.max)) return true;
    if (range.step && range.step->Value() != 0) {
      // Must be a multiple of step from min.
      if ((CeilUnits(consumed) - range.min.Value()) % range.step->Value() != 0) return true;
    }
    return false;
  }
  if (!policy->valid_values.empty()) {
    return std::none_of(policy->valid_values.begin(), policy->valid_values.end(),
                        [&](const api::Quantity& v) { return ToNano(v) == consumed; });
  }
  return false;
}

}  // namespace

// Upstream's CmpRequestOverCapacity. Every capacity of the device counts, requested or not (an
// unrequested one is consumed by its default or whole), for devices that allow multiple
// allocations and for the others alike.
bool Search::CapacityFits(const Request& request, uint32_t c, std::vector<ConsumedValue>* consumed) {
  const api::Device& device = *view_.candidates[c].device;
  const std::string_view driver = impl_.ix->slices[view_.candidates[c].slice].slice->driver;
  for (const auto& cr : request.capacity) {
    const bool found =
        std::any_of(device.capacity.begin(), device.capacity.end(),
                    [&](const api::DeviceCapacity& have) { return CapacityNameIs(*cr.name, have.name, driver); });
    if (!found) return false;  // upstream: an error, the device skipped
  }
  CandidateState& st = State(c);
  if (st.capacity_begin < 0) {
    st.capacity_begin = static_cast<int32_t>(capacities_.size());
    const auto* allocated = impl_.ConsumedCapacity(view_.candidates[c].key);
    for (const auto& capacity : device.capacity) {
      CapacityState cs;
      cs.value = ToNano(capacity.value);
      if (allocated != nullptr) {
        if (auto it = allocated->find(capacity.name); it != allocated->end()) cs.allocated = ToNano(it->second);
      }
      capacities_.push_back(cs);
    }
  }
  for (uint32_t k = 0; k < device.capacity.size(); ++k) {
    const ConsumedValue v = Consumed(request, device.capacity[k], k, driver);
    if (ViolatesPolicy(v.nano, device.capacity[k].request_policy)) return false;
    const CapacityState& cs = capacities_[static_cast<size_t>(st.capacity_begin) + k];
    if (cs.allocated + v.nano + cs.allocating > cs.value) return false;
    if (consumed != nullptr) consumed->push_back(v);
  }
  return true;
}

// The pool's counter sets, less what the devices already allocated (on any node) consume.
void Search::BuildPoolCounters(uint32_t node_pool) {
  PoolCounters& pc = pool_counters_[node_pool];
  pc.built = true;
  pc.begin = static_cast<uint32_t>(counter_cells_.size());
  const NodePool& pool = *view_.pools[node_pool];
  for (const auto* list : {&pool.targeting, &pool.others}) {
    for (uint32_t s : *list) {
      for (const auto& set : impl_.ix->slices[s].slice->shared_counters) {
        for (const auto& counter : set.counters) {
          counter_cells_.push_back({set.name, counter.name, ToNano(counter.value), 0});
        }
      }
    }
  }
  pc.count = static_cast<uint32_t>(counter_cells_.size()) - pc.begin;
  if (pc.count == 0 || impl_.nothing_allocated) return;
  for (const auto* list : {&pool.targeting, &pool.others}) {
    for (uint32_t s : *list) {
      const SliceInfo& info = impl_.ix->slices[s];
      const auto& slice = *info.slice;
      for (size_t d = 0; d < slice.devices.size(); ++d) {
        const api::Device& device = slice.devices[d];
        if (device.consumes_counters.empty()) continue;
        if (!impl_.IsAllocated(impl_.ix->device_keys[info.first_device + d])) continue;
        for (const auto& consumption : device.consumes_counters) {
          for (const auto& counter : consumption.counters) {
            for (uint32_t i = pc.begin; i < pc.begin + pc.count; ++i) {
              if (counter_cells_[i].set == consumption.counter_set && counter_cells_[i].name == counter.name) {
                // May go negative: then nothing more fits.
                counter_cells_[i].available -= ToNano(counter.value);
              }
            }
          }
        }
      }
    }
  }
}

// Upstream's checkAvailableCounters: the device's counters are added to what this call takes,
// and every counter of the pool must still be within what is available.
bool Search::CountersFit(uint32_t c, bool commit) {
  const Candidate& candidate = view_.candidates[c];
  if (!pool_counters_[candidate.node_pool].built) BuildPoolCounters(candidate.node_pool);
  const PoolCounters& pc = pool_counters_[candidate.node_pool];
  CandidateState& st = State(c);
  if (st.counters_begin < 0) {
    st.counters_begin = static_cast<int32_t>(counter_uses_.size());
    for (const auto& consumption : candidate.device->consumes_counters) {
      for (const auto& counter : consumption.counters) {
        for (uint32_t i = pc.begin; i < pc.begin + pc.count; ++i) {
          if (counter_cells_[i].set == consumption.counter_set && counter_cells_[i].name == counter.name) {
            counter_uses_.push_back({i, ToNano(counter.value)});
            break;
          }
        }
      }
    }
    st.counters_count = static_cast<int32_t>(counter_uses_.size()) - st.counters_begin;
  }
  const auto uses =
      std::span(counter_uses_).subspan(static_cast<size_t>(st.counters_begin), static_cast<size_t>(st.counters_count));
  for (const auto& u : uses) counter_cells_[u.cell].consumed += u.amount;
  bool fits = true;
  for (uint32_t i = pc.begin; i < pc.begin + pc.count; ++i) {
    if (counter_cells_[i].consumed > counter_cells_[i].available) fits = false;
  }
  if (!fits || !commit) {
    for (const auto& u : uses) counter_cells_[u.cell].consumed -= u.amount;
  }
  return fits;
}

void Search::ReleaseCounters(uint32_t c) {
  const CandidateState& st = candidates_[c];
  for (int32_t i = 0; i < st.counters_count; ++i) {
    const CounterUse& u = counter_uses_[static_cast<size_t>(st.counters_begin + i)];
    counter_cells_[u.cell].consumed -= u.amount;
  }
}

bool Search::ConstraintApplies(const Constraint& constraint, const Request& request) const {
  const auto& names = *constraint.requests;
  if (names.empty()) return true;
  if (!request.is_sub) return Contains(names, request.parent->name);
  return Contains(names, request.parent->name) || Contains(names, request.result_name);
}

// matchAttributeConstraint.add / distinctAttributeConstraint.add: a device without the
// attribute never satisfies the constraint.
bool Search::ConstraintAdd(Constraint& constraint, const Request& request, const api::Device& device) const {
  if (!ConstraintApplies(constraint, request)) return true;
  const api::DeviceAttribute* attribute = device.Attribute(*constraint.attribute);
  if (attribute == nullptr) return false;
  if (!constraint.distinct) {
    if (constraint.count == 0) {
      constraint.first = &attribute->value;
      constraint.count = 1;
      return true;
    }
    if (!SameValue(attribute->value, *constraint.first)) return false;
    ++constraint.count;
    return true;
  }
  for (const auto* seen : constraint.seen) {
    if (SameValue(attribute->value, *seen)) return false;
  }
  constraint.seen.push_back(&attribute->value);
  return true;
}

void Search::ConstraintRemove(Constraint& constraint, const Request& request) const {
  if (!ConstraintApplies(constraint, request)) return;
  if (constraint.distinct) {
    if (!constraint.seen.empty()) constraint.seen.pop_back();
  } else if (constraint.count > 0) {
    --constraint.count;
  }
}

// Upstream's createNodeSelector: the node itself once any device is local to it (or binds to
// it); otherwise the union of the network-attached devices' selectors; nothing when every device
// is available everywhere.
std::optional<std::string> Search::NodeSelectorFor(uint32_t claim, std::optional<api::NodeSelector>& out) const {
  api::NodeSelectorTerm term;
  for (const Result& result : results_[claim]) {
    const Candidate& candidate = view_.candidates[result.candidate];
    const api::ResourceSlice& slice = *impl_.ix->slices[candidate.slice].slice;
    const api::Device& device = *candidate.device;
    const bool per_device = slice.per_device_node_selection;
    const auto& node_name = per_device ? device.node_name : slice.node_name;
    const auto& selector = per_device ? device.node_selector : slice.node_selector;
    if (node_name.has_value() || device.binds_to_node) {
      api::SelectorRequirement r;
      r.key = "metadata.name";
      r.op = api::SelectorOperator::kIn;
      r.values = {node_.metadata.name};
      api::NodeSelectorTerm local;
      local.match_fields.push_back(std::move(r));
      out = api::NodeSelector{{std::move(local)}};
      return std::nullopt;
    }
    if (!selector) continue;
    if (selector->terms.size() > 1) {
      // Validation prevents such slices.
      return fmt::format("create NodeSelector for claim {}: unsupported ResourceSlice.NodeSelector with {} terms",
                         claims_[claim]->metadata.name, selector->terms.size());
    }
    if (selector->terms.size() == 1) {
      AddRequirements(selector->terms[0].match_fields, term.match_fields);
      AddRequirements(selector->terms[0].match_expressions, term.match_expressions);
    }
  }
  if (term.match_fields.empty() && term.match_expressions.empty()) {
    out.reset();
  } else {
    out = api::NodeSelector{{std::move(term)}};
  }
  return std::nullopt;
}

std::string Search::ShareId(uint32_t claim, uint32_t c, uint32_t position) const {
  const api::ObjectMeta& meta = claims_[claim]->metadata;
  const std::string owner = meta.uid.empty() ? ObjectKey(meta) : meta.uid;
  const DeviceId id = Id(c);
  for (uint32_t salt = 0;; ++salt) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (std::string_view part : {std::string_view(owner), std::string_view(id.driver), std::string_view(id.pool),
                                  std::string_view(id.device)}) {
      h = Mix(h, part);
    }
    const uint64_t hi = Finalize(h ^ (uint64_t{position} << 32 | salt));
    const uint64_t lo = Finalize(hi ^ 0x9e3779b97f4a7c15ULL ^ position);
    // A version 4 / variant 1 UUID's shape.
    const uint64_t a = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
    const uint64_t b = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
    std::string share = fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                                    b >> 48, b & 0xffffffffffffULL);
    if (!impl_.ShareIdTaken(id, share)) return share;
  }
}

std::optional<std::string> Search::BuildResults(std::vector<api::AllocationResult>& out) const {
  out.resize(claims_.size());
  for (uint32_t ci = 0; ci < claims_.size(); ++ci) {
    const api::ResourceClaim& claim = *claims_[ci];
    api::AllocationResult& allocation = out[ci];
    allocation.devices.reserve(results_[ci].size());
    for (uint32_t pos = 0; pos < results_[ci].size(); ++pos) {
      const Result& result = results_[ci][pos];
      const Request& r = requests_[result.request];
      const Candidate& candidate = view_.candidates[result.candidate];
      const api::ResourceSlice& slice = *impl_.ix->slices[candidate.slice].slice;
      const api::Device& device = *candidate.device;
      api::DeviceRequestAllocationResult d;
      d.request = r.result_name;
      d.driver = slice.driver;
      d.pool = slice.pool.name;
      d.device = device.name;
      d.admin_access = r.admin();
      if (result.multi) {
        d.share_id = ShareId(ci, result.candidate, pos);
        for (uint32_t i = 0; i < result.consumed_count; ++i) {
          const ConsumedValue& v = consumed_[result.consumed_begin + i];
          d.consumed_capacity.emplace(device.capacity[v.capacity].name,
                                      v.source != nullptr ? *v.source : BinarySIQuantity(v.binary_units));
        }
      }
      d.binding_conditions = device.binding_conditions;
      d.binding_failure_conditions = device.binding_failure_conditions;
      allocation.devices.push_back(std::move(d));
    }

    // Configuration: each class's once, for the requests of that class, then the claim's.
    struct ClassConfigs {
      std::string_view name;
      size_t begin;
      size_t end;
    };
    std::vector<ClassConfigs> classes;
    auto& config = allocation.config;
    for (uint32_t ri = 0; ri < claim.spec.requests.size(); ++ri) {
      uint32_t index = request_index_[ci][ri];
      if (requests_[index].is_sub) index += requests_[index].selected_sub;
      const Request& r = requests_[index];
      if (r.device_class == nullptr) continue;
      auto seen = std::find_if(classes.begin(), classes.end(),
                               [&](const ClassConfigs& c) { return c.name == r.device_class->metadata.name; });
      if (seen != classes.end()) {
        for (size_t i = seen->begin; i < seen->end; ++i) config[i].requests.push_back(r.result_name);
        continue;
      }
      const size_t begin = config.size();
      for (const auto& opaque : r.device_class->config) config.push_back({"FromClass", {r.result_name}, opaque});
      classes.push_back({r.device_class->metadata.name, begin, config.size()});
    }
    for (const auto& cfg : claim.spec.config) {
      if (cfg.requests.empty()) {
        config.push_back({"FromClaim", {}, cfg.opaque});
        continue;
      }
      // As upstream: once per request of the claim that the configuration names.
      for (uint32_t ri = 0; ri < claim.spec.requests.size(); ++ri) {
        const auto& request = claim.spec.requests[ri];
        if (Contains(cfg.requests, request.name)) {
          config.push_back({"FromClaim", cfg.requests, cfg.opaque});
          continue;
        }
        const uint32_t base = request_index_[ci][ri];
        if (!requests_[base].is_sub) continue;
        const Request& chosen = requests_[base + requests_[base].selected_sub];
        if (Contains(cfg.requests, chosen.result_name)) config.push_back({"FromClaim", cfg.requests, cfg.opaque});
      }
    }
    if (auto err = NodeSelectorFor(ci, allocation.node_selector)) return err;
  }
  return std::nullopt;
}

}  // namespace kubesched::plugins::dynamic_resources::internal
