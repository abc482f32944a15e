// Upstream's GatherPools (structured/internal/experimental/pools_experimental.go) for one node:
// which slices the node can use, grouped into pools of their newest generation, each pool
// complete, incomplete or invalid; then the devices of the usable pools, in the order the search
// tries them.

#include <algorithm>
#include <string>
#include <utility>

#include "fmt/format.h"
#include "plugins/dynamic_resources/allocator_internal.h"

namespace kubesched::plugins::dynamic_resources::internal {
namespace {

std::string JoinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += ", ";
    out += e;
  }
  return out;
}

// Upstream's NodeMatches: 1 when the node matches, 0 when not, -1 (and *error) when the
// selector cannot be parsed (nodeaffinity.NewNodeSelector fails on any invalid term).
int TargetMatches(const Allocator::Index& impl, NodeTarget target, const std::string* node_name, int32_t matcher,
                  const api::Node& node, std::string* error) {
  switch (target) {
    case NodeTarget::kNodeName:
      return node_name != nullptr && *node_name == node.metadata.name ? 1 : 0;
    case NodeTarget::kAllNodes:
      return 1;
    case NodeTarget::kSelector: {
      const auto& m = impl.matchers[static_cast<size_t>(matcher)];
      if (m.has_invalid_terms()) {
        *error = "failed to parse node selector: " + JoinErrors(m.errors());
        return -1;
      }
      return m.Match(node) ? 1 : 0;
    }
    case NodeTarget::kPerDevice:
    case NodeTarget::kUnknown:
      break;
  }
  return 0;
}

// 1: some device of the perDeviceNodeSelection slice is on the node; 0: none; -1: error.
int AnyDeviceOnNode(const Allocator::Index& impl, const SliceInfo& info, const api::Node& node, std::string* error) {
  const auto& devices = info.slice->devices;
  for (size_t i = 0; i < devices.size(); ++i) {
    std::string err;
    if (DeviceOnNode(impl, info, i, node, &err)) return 1;
    if (!err.empty()) {
      *error = fmt::format("failed to perform node selection for device {} in slice {}: {}", devices[i].name,
                           info.slice->metadata.name, err);
      return -1;
    }
  }
  return 0;
}

// Slices gathered for one pool: the newest generation seen among the node's slices.
struct Gathered {
  uint32_t pool = 0;
  int64_t generation = 0;
  std::vector<uint32_t> slices;
};

void AddSlice(const Allocator::Index& impl, uint32_t index, std::vector<Gathered>& gathered) {
  const auto& info = impl.slices[index];
  const int64_t generation = info.slice->pool.generation;
  auto it = std::find_if(gathered.begin(), gathered.end(), [&](const Gathered& g) { return g.pool == info.pool; });
  if (it == gathered.end()) {
    gathered.push_back({info.pool, generation, {index}});
    return;
  }
  if (generation < it->generation) return;  // out-dated
  if (generation > it->generation) {        // newer: replaces the older slices
    it->generation = generation;
    it->slices.assign(1, index);
    return;
  }
  it->slices.push_back(index);
}

bool Contains(const std::vector<uint32_t>& v, uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

const api::CounterSet* FindCounterSet(const std::vector<const api::CounterSet*>& sets, std::string_view name) {
  for (const auto* s : sets) {
    if (s->name == name) return s;
  }
  return nullptr;
}

// Upstream's validateDeviceCounterConsumption over the devices of `slices`.
std::optional<std::string> ValidateConsumption(const Allocator::Index& impl,
                                               const std::vector<const api::CounterSet*>& sets,
                                               const std::vector<uint32_t>& slices) {
  for (uint32_t s : slices) {
    for (const auto& device : impl.slices[s].slice->devices) {
      for (const auto& consumption : device.consumes_counters) {
        const api::CounterSet* set = FindCounterSet(sets, consumption.counter_set);
        if (set == nullptr) return fmt::format("counter set {} not found", consumption.counter_set);
        for (const auto& counter : consumption.counters) {
          const bool found = std::any_of(set->counters.begin(), set->counters.end(),
                                         [&](const api::Counter& c) { return c.name == counter.name; });
          if (!found) return fmt::format("counter {} not found in counter set {}", counter.name, set->name);
        }
      }
    }
  }
  return std::nullopt;
}

// Upstream's buildPool checks: unique device names, unique counter set names, and every consumed
// counter defined. Sets pool.invalid and its reason.
void ValidatePool(const Allocator::Index& impl, const std::vector<uint32_t>& gathered, NodePool& pool) {
  std::vector<std::string_view> names;
  for (uint32_t s : pool.targeting) {
    for (const auto& device : impl.slices[s].slice->devices) names.push_back(device.name);
  }
  std::sort(names.begin(), names.end());
  if (auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end()) {
    pool.invalid = true;
    pool.invalid_reason = fmt::format("duplicate device name {}", *dup);
    return;
  }
  std::vector<const api::CounterSet*> sets;
  for (uint32_t s : gathered) {
    for (const auto& set : impl.slices[s].slice->shared_counters) {
      if (FindCounterSet(sets, set.name) != nullptr) {
        pool.invalid = true;
        pool.invalid_reason = fmt::format("duplicate counter set name {}", set.name);
        return;
      }
      sets.push_back(&set);
    }
  }
  auto err = ValidateConsumption(impl, sets, gathered);
  if (!err) err = ValidateConsumption(impl, sets, pool.others);
  if (err) {
    pool.invalid = true;
    pool.invalid_reason = std::move(*err);
  }
}

// Builds the node's view of one gathered pool (upstream: the completeness checks of GatherPools
// and buildPool). Returns false when the pool is obsolete and thus ignored.
bool BuildNodePool(const Allocator::Index& impl, const api::Node& node, const Gathered& g, NodePool& pool,
                   std::string* error) {
  const PoolInfo& info = impl.pools[g.pool];
  pool.pool = g.pool;
  pool.generation = g.generation;
  const int64_t wanted = impl.slices[g.slices.front()].slice->pool.resource_slice_count;
  std::vector<uint32_t> all;
  if (static_cast<int64_t>(g.slices.size()) != wanted) {
    // Look at the slices that did not look relevant for the node: a newer generation elsewhere
    // makes this one obsolete; otherwise the whole generation decides completeness.
    if (info.max_generation > g.generation) return false;
    for (uint32_t s : info.slices) {
      if (impl.slices[s].slice->pool.generation == g.generation) all.push_back(s);
    }
    if (static_cast<int64_t>(all.size()) != wanted) {
      pool.incomplete = true;
      return true;
    }
  }
  // The devices of a slice that only came along for its counter sets are not the node's.
  for (uint32_t s : g.slices) {
    const auto& slice = impl.slices[s];
    bool devices_on_node = true;
    if (slice.has_counters && !slice.slice->devices.empty()) {
      int m = slice.target == NodeTarget::kPerDevice
                  ? AnyDeviceOnNode(impl, slice, node, error)
                  : TargetMatches(impl, slice.target, slice.slice->node_name ? &*slice.slice->node_name : nullptr,
                                  slice.matcher, node, error);
      if (m < 0) return false;
      devices_on_node = m == 1;
    }
    (devices_on_node ? pool.targeting : pool.others).push_back(s);
  }
  for (uint32_t s : all) {
    if (!Contains(g.slices, s)) pool.others.push_back(s);
  }
  for (uint32_t s : pool.targeting) {
    for (const auto& device : impl.slices[s].slice->devices) {
      if (!device.binding_conditions.empty()) pool.has_binding_conditions = true;
    }
  }
  ValidatePool(impl, g.slices, pool);
  return true;
}

// The devices of a usable pool's slices that target the node, in order.
void AddCandidates(const Allocator::Index& impl, const api::Node& node, const NodePool& pool, uint32_t node_pool,
                   std::vector<Candidate>& out) {
  for (uint32_t s : pool.targeting) {
    const SliceInfo& info = impl.slices[s];
    const auto& devices = info.slice->devices;
    for (size_t d = 0; d < devices.size(); ++d) {
      Candidate c;
      c.device = &devices[d];
      c.slice = s;
      c.node_pool = node_pool;
      c.key = impl.device_keys[info.first_device + d];
      if (info.target == NodeTarget::kPerDevice) c.node_ok = DeviceOnNode(impl, info, d, node, nullptr);
      out.push_back(c);
    }
  }
}

}  // namespace

std::string ObjectKey(const api::ObjectMeta& meta) {
  if (meta.namespace_.empty()) return meta.name;
  return meta.namespace_ + "/" + meta.name;
}

bool DeviceOnNode(const Allocator::Index& impl, const SliceInfo& slice, size_t device_index, const api::Node& node,
                  std::string* error) {
  const DeviceTarget& t = impl.device_targets[slice.first_device_target + device_index];
  const auto& device = slice.slice->devices[device_index];
  std::string err;
  const int m = TargetMatches(impl, t.target, device.node_name ? &*device.node_name : nullptr, t.matcher, node, &err);
  if (m < 0 && error != nullptr) *error = std::move(err);
  return m == 1;
}

std::optional<std::string> GatherPools(const Allocator::Index& impl, const api::Node& node, NodeView& view) {
  // The node's slices: those naming it plus the general ones, in input order.
  static const std::vector<uint32_t> kNone;
  auto named = impl.by_node_name.find(node.metadata.name);
  const std::vector<uint32_t>& mine = named != impl.by_node_name.end() ? named->second : kNone;
  std::vector<uint32_t> order;
  order.reserve(mine.size() + impl.general.size());
  std::merge(mine.begin(), mine.end(), impl.general.begin(), impl.general.end(), std::back_inserter(order));

  std::vector<Gathered> gathered;
  std::vector<uint32_t> with_binding_conditions;
  std::vector<uint32_t> local;  // the node's local pools (built once, in the Index)
  for (uint32_t s : order) {
    const SliceInfo& info = impl.slices[s];
    if (impl.local_pool[info.pool] >= 0) {
      // Names this node: it matches.
      if (std::find(local.begin(), local.end(), info.pool) == local.end()) local.push_back(info.pool);
      continue;
    }
    if (info.has_counters) {
      // Counter sets are needed to use a pool regardless of node selection.
      AddSlice(impl, s, gathered);
      continue;
    }
    std::string err;
    int m = 0;
    if (info.target == NodeTarget::kPerDevice) {
      m = AnyDeviceOnNode(impl, info, node, &err);
    } else if (info.target != NodeTarget::kUnknown) {
      m = TargetMatches(impl, info.target, info.slice->node_name ? &*info.slice->node_name : nullptr, info.matcher,
                        node, &err);
      if (m < 0) err = fmt::format("failed to perform node selection for slice {}: {}", info.slice->metadata.name, err);
    }
    if (m < 0) return "gather pool information: " + err;
    if (m == 0) continue;
    // Slices with binding conditions come last: the simpler devices are preferred.
    if (info.has_binding_conditions) {
      with_binding_conditions.push_back(s);
    } else {
      AddSlice(impl, s, gathered);
    }
  }
  for (uint32_t s : with_binding_conditions) AddSlice(impl, s, gathered);

  // Upstream walks a Go map here (no order); pools in input order keep results reproducible.
  std::sort(gathered.begin(), gathered.end(), [](const Gathered& a, const Gathered& b) { return a.pool < b.pool; });
  std::sort(local.begin(), local.end());
  view.owned.reserve(gathered.size());
  view.pools.reserve(gathered.size() + local.size());
  std::vector<const NodePool*> late;
  auto add = [&](const NodePool* pool) { (pool->has_binding_conditions ? late : view.pools).push_back(pool); };
  size_t next_local = 0;
  for (const Gathered& g : gathered) {
    for (; next_local < local.size() && local[next_local] < g.pool; ++next_local) {
      add(&impl.local_pools[static_cast<size_t>(impl.local_pool[local[next_local]])].pool);
    }
    NodePool pool;
    std::string err;
    if (!BuildNodePool(impl, node, g, pool, &err)) {
      if (!err.empty()) return "gather pool information: " + err;
      continue;
    }
    view.owned.push_back(std::move(pool));
    add(&view.owned.back());
  }
  for (; next_local < local.size(); ++next_local) {
    add(&impl.local_pools[static_cast<size_t>(impl.local_pool[local[next_local]])].pool);
  }
  for (const NodePool* p : late) view.pools.push_back(p);

  size_t num_candidates = 0;
  for (const NodePool* pool : view.pools) {
    if (pool->incomplete || pool->invalid) continue;
    if (const int32_t l = impl.local_pool[pool->pool]; l >= 0) {
      num_candidates += impl.local_pools[static_cast<size_t>(l)].candidates.size();
      continue;
    }
    for (uint32_t s : pool->targeting) num_candidates += impl.slices[s].slice->devices.size();
  }
  view.candidates.reserve(num_candidates);
  for (uint32_t p = 0; p < view.pools.size(); ++p) {
    const NodePool& pool = *view.pools[p];
    if (pool.incomplete || pool.invalid) continue;
    if (const int32_t l = impl.local_pool[pool.pool]; l >= 0) {
      for (Candidate c : impl.local_pools[static_cast<size_t>(l)].candidates) {
        c.node_pool = p;
        view.candidates.push_back(c);
      }
      continue;
    }
    AddCandidates(impl, node, pool, p, view.candidates);
  }
  return std::nullopt;
}

void BuildLocalPools(Allocator::Index& impl) {
  static const api::Node kNoNode;  // not looked at: the slices of a local pool hold no counters
  impl.local_pool.assign(impl.pools.size(), -1);
  for (uint32_t p = 0; p < impl.pools.size(); ++p) {
    const PoolInfo& info = impl.pools[p];
    const std::string* node_name = nullptr;
    bool local = !info.slices.empty();
    for (uint32_t s : info.slices) {
      const SliceInfo& slice = impl.slices[s];
      if (slice.target != NodeTarget::kNodeName || slice.has_counters ||
          (node_name != nullptr && *node_name != *slice.slice->node_name)) {
        local = false;
        break;
      }
      node_name = &*slice.slice->node_name;
    }
    if (!local) continue;
    // What GatherPools does for the pool on its node: every slice targets that node, those with
    // binding conditions added last.
    std::vector<Gathered> gathered;
    for (uint32_t s : info.slices) {
      if (!impl.slices[s].has_binding_conditions) AddSlice(impl, s, gathered);
    }
    for (uint32_t s : info.slices) {
      if (impl.slices[s].has_binding_conditions) AddSlice(impl, s, gathered);
    }
    LocalPool lp;
    std::string err;
    if (!BuildNodePool(impl, kNoNode, gathered.front(), lp.pool, &err)) continue;  // not reached
    if (!lp.pool.incomplete && !lp.pool.invalid) AddCandidates(impl, kNoNode, lp.pool, 0, lp.candidates);
    impl.local_pool[p] = static_cast<int32_t>(impl.local_pools.size());
    impl.local_pools.push_back(std::move(lp));
  }
}

}  // namespace kubesched::plugins::dynamic_resources::internal
