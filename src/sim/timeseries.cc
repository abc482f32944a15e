#include "sim/timeseries.h"

#include <algorithm>
#include <any>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "api/resource_types.h"
#include "cache/snapshot.h"
#include "framework/args_view.h"
#include "plugins/batch_placement/batch_placement.h"
#include "plugins/device_fragmentation/device_fragmentation.h"
#include "scheduler/scheduler.h"
#include "sim/simulated_cluster.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::sim {

struct TimeSeriesRecorder::Impl {
  cache::Snapshot snapshot;
  size_t evictions_seen = 0;
  //! The device workload so far: every claim allocated by a sample, once.
  plugins::device_fragmentation::Workload workload;
  std::unordered_set<std::string> workload_claims;
};

TimeSeriesRecorder::TimeSeriesRecorder(int64_t start_ns, int64_t interval_ns, std::vector<std::string> profiles)
    : impl_(std::make_unique<Impl>()), profiles_(std::move(profiles)) {
  series_.start_ns = start_ns;
  series_.interval_ns = interval_ns;
  for (const char* r : {"cpu", "memory", "pods"}) series_.resources.emplace_back(r);
}

TimeSeriesRecorder::~TimeSeriesRecorder() = default;

size_t TimeSeriesRecorder::Column(const std::string& resource) {
  auto it = std::find(series_.resources.begin(), series_.resources.end(), resource);
  if (it != series_.resources.end()) return it - series_.resources.begin();
  series_.resources.push_back(resource);
  return series_.resources.size() - 1;
}

void TimeSeriesRecorder::Observe(int64_t now_ns, std::optional<int64_t> next_ns, scheduler::Scheduler& sched,
                                 SimulatedCluster& cluster) {
  const int64_t interval = series_.interval_ns;
  if (interval <= 0) {
    Sample(now_ns, sched, cluster);
    return;
  }
  // The first multiple of the interval at or after now, and after the last sample.
  const int64_t since = now_ns - series_.start_ns;
  int64_t grid = (since + interval - 1) / interval * interval;
  if (sampled_ && grid <= series_.samples.back().at_ns) grid = series_.samples.back().at_ns + interval;
  if (next_ns && series_.start_ns + grid >= *next_ns) return;
  if (!next_ns) return;  // the end: Finish samples it
  Sample(series_.start_ns + grid, sched, cluster);
}

TimeSeries TimeSeriesRecorder::Finish(int64_t now_ns, scheduler::Scheduler& sched, SimulatedCluster& cluster) {
  // The last time point may have been sampled already (the loop observed it before stopping).
  if (!sampled_ || series_.start_ns + series_.samples.back().at_ns != now_ns) Sample(now_ns, sched, cluster);
  return std::move(series_);
}

namespace {

// DRA devices: how many the node-local and cluster slices offer, how many are allocated, and per
// consumable capacity, the total and the amount claims consume; per node, the free capacity of
// each of its devices (the fragmentation measure's view).
struct DeviceUse {
  int64_t devices = 0, allocated = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> capacity;  // name -> (consumed, total)
  std::unordered_map<std::string, std::vector<int64_t>> node_free;
  int64_t weighed_total = 0;  // of the devices the measure weighs, their capacity
};

using DeviceKey = std::tuple<std::string, std::string, std::string>;  // driver, pool, device

std::string CapacityName(const api::QualifiedName& name) { return fmt::format("devices/{}", name.id); }

// The capacity the fragmentation measure weighs: the first one a shareable device has (a GPU's
// memory or compute share); none: devices weighed whole.
std::optional<std::string> WeighedCapacity(const std::vector<std::shared_ptr<const api::ResourceSlice>>& slices) {
  for (const auto& slice : slices) {
    for (const api::Device& d : slice->devices) {
      if (d.allow_multiple_allocations && !d.capacity.empty()) return d.capacity.front().name.id;
    }
  }
  return std::nullopt;
}

// The devices' use now; the claims not seen before join `workload` (`seen`: their uids).
std::optional<DeviceUse> CountDevices(store::Store& store, plugins::device_fragmentation::Workload& workload,
                                      std::unordered_set<std::string>& seen) {
  const store::ResourceType* slices_type = store.FindResource(api::kResourceApiGroup, "resourceslices");
  const store::ResourceType* claims_type = store.FindResource(api::kResourceApiGroup, "resourceclaims");
  if (slices_type == nullptr || claims_type == nullptr) return std::nullopt;
  auto listed = store.List(*slices_type, "", {});
  if (!listed || listed->items.empty()) return std::nullopt;
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  for (const auto& object : listed->items) {
    if (auto slice = object->View<api::ResourceSlice>()) slices.push_back(std::move(slice));
  }
  const std::optional<std::string> weighed = WeighedCapacity(slices);
  DeviceUse use;
  // Each node-local device's capacity that the measure weighs: (node, index in node_free).
  struct Local {
    std::string node;
    size_t index = 0;
    int64_t full = 0;
  };
  std::map<DeviceKey, Local> local;
  for (const auto& slice : slices) {
    use.devices += static_cast<int64_t>(slice->devices.size());
    for (const api::Device& d : slice->devices) {
      int64_t weighed_amount = weighed ? 0 : 1;
      for (const api::DeviceCapacity& c : d.capacity) {
        if (d.allow_multiple_allocations) use.capacity[CapacityName(c.name)].second += c.value.Value();
        if (weighed && c.name.id == *weighed) weighed_amount = c.value.Value();
      }
      if (!slice->node_name || weighed_amount == 0) continue;
      std::vector<int64_t>& free = use.node_free[*slice->node_name];
      local.emplace(DeviceKey{slice->driver, slice->pool.name, d.name},
                    Local{*slice->node_name, free.size(), weighed_amount});
      free.push_back(weighed_amount);
      use.weighed_total += weighed_amount;
    }
  }
  std::set<DeviceKey> allocated;
  auto claims = store.List(*claims_type, "", {});
  if (claims) {
    for (const auto& object : claims->items) {
      auto claim = object->View<api::ResourceClaim>();
      if (!claim || !claim->allocation) continue;
      // A kind of pod for the measure's workload: its devices and what it takes of each.
      plugins::device_fragmentation::TaskShape shape;
      for (const api::DeviceRequestAllocationResult& r : claim->allocation->devices) {
        const DeviceKey key{r.driver, r.pool, r.device};
        allocated.insert(key);
        std::optional<int64_t> taken;
        for (const auto& [name, amount] : r.consumed_capacity) {
          auto it = use.capacity.find(CapacityName(name));
          if (it != use.capacity.end()) it->second.first += amount.Value();
          if (weighed && name.id == *weighed) taken = amount.Value();
        }
        auto device = local.find(key);
        if (device == local.end()) continue;
        int64_t& free = use.node_free[device->second.node][device->second.index];
        const int64_t take = taken.value_or(device->second.full);  // no share: the whole device
        free = std::max<int64_t>(0, free - take);
        ++shape.devices;
        shape.per_device = std::max(shape.per_device, take);
      }
      if (shape.devices > 0 && seen.insert(object->uid).second) workload.Add(shape, 1);
    }
  }
  use.allocated = static_cast<int64_t>(allocated.size());
  return use;
}

// FGD's fragmentation rate (Weng et al., ATC'23) over the devices: per node, the expected free
// device capacity that a pod drawn from the workload cannot use there (DeviceFragmentation's
// measure), summed over the nodes, as a share of all the devices' capacity. The workload is every
// claim allocated so far, by its devices and what it takes of each (cpu and memory left out).
double FragmentationRate(const DeviceUse& use, const plugins::device_fragmentation::Workload& workload,
                         const cache::Snapshot& snapshot) {
  if (workload.total() == 0 || use.weighed_total == 0) return 0;
  double fragmented = 0;
  for (const auto& [node, free] : use.node_free) {
    plugins::device_fragmentation::NodeRoom room;
    room.milli_cpu = INT64_MAX / 4;
    room.memory = INT64_MAX / 4;
    if (const framework::NodeInfo* info = snapshot.Get(node)) {
      room.milli_cpu = info->allocatable().milli_cpu - info->requested().milli_cpu;
      room.memory = info->allocatable().memory - info->requested().memory;
    }
    room.device_free = free;
    fragmented += static_cast<double>(workload.Fragmentation(room)) / static_cast<double>(workload.total());
  }
  return fragmented / static_cast<double>(use.weighed_total);
}

}  // namespace

void TimeSeriesRecorder::Sample(int64_t at_ns, scheduler::Scheduler& sched, SimulatedCluster& cluster) {
  TimeSample s;
  s.at_ns = at_ns - series_.start_ns;
  sched.cache().UpdateSnapshot(impl_->snapshot);
  s.requested.assign(series_.resources.size(), 0);
  s.allocatable.assign(series_.resources.size(), 0);
  auto add = [&](const std::string& resource, int64_t requested, int64_t allocatable) {
    const size_t c = Column(resource);
    if (c >= s.requested.size()) {
      s.requested.resize(c + 1, 0);
      s.allocatable.resize(c + 1, 0);
    }
    s.requested[c] += requested;
    s.allocatable[c] += allocatable;
  };
  for (const framework::NodeInfo* node : impl_->snapshot.List()) {
    const framework::Resource& req = node->requested();
    const framework::Resource& alloc = node->allocatable();
    const auto pods = static_cast<int64_t>(node->pods().size());
    s.requested[0] += req.milli_cpu;
    s.allocatable[0] += alloc.milli_cpu;
    s.requested[1] += req.memory;
    s.allocatable[1] += alloc.memory;
    s.requested[2] += pods;
    s.allocatable[2] += alloc.allowed_pod_number;
    for (const auto& [name, amount] : alloc.scalar) add(name, req.Scalar(name), amount);
    for (const auto& [name, amount] : req.scalar) {
      if (alloc.Scalar(name) == 0) add(name, amount, 0);  // requested where none is offered
    }
    ++s.nodes;
    if (pods > 0) ++s.nodes_used;
    s.pods_running += pods;
  }
  if (auto devices = CountDevices(cluster.Store(), impl_->workload, impl_->workload_claims)) {
    add("devices", devices->allocated, devices->devices);
    for (const auto& [name, use] : devices->capacity) add(name, use.first, use.second);
    s.device_fragmentation = FragmentationRate(*devices, impl_->workload, impl_->snapshot);
  }
  const metrics::SchedulerState state = sched.MetricsState();
  s.pending_active = static_cast<int64_t>(state.active);
  s.pending_backoff = static_cast<int64_t>(state.backoff);
  s.pending_unschedulable = static_cast<int64_t>(state.unschedulable);
  s.pending_gated = static_cast<int64_t>(state.gated);
  for (const auto& [key, n] : state.unschedulable_by_plugin)
    s.unschedulable_by_plugin[key.first] += static_cast<int64_t>(n);

  for (const Eviction& e : cluster.EvictionsFrom(impl_->evictions_seen)) {
    series_.eviction_ns.push_back(e.at_ns - series_.start_ns);
    if (!e.moved_to.empty()) series_.move_ns.push_back(e.at_ns - series_.start_ns);
    ++impl_->evictions_seen;
  }
  s.evictions = static_cast<int64_t>(series_.eviction_ns.size());
  s.moves = static_cast<int64_t>(series_.move_ns.size());

  for (const std::string& profile : profiles_) {
    framework::runtime::Framework* fwk = sched.FrameworkFor(profile);
    if (fwk == nullptr) continue;
    // Read without the run's bound (stats' with_run_bound): only the batches and their gaps.
    const auto* batch = dynamic_cast<const plugins::batch_placement::BatchPlacement*>(
        fwk->GetPlugin(plugins::batch_placement::BatchPlacement::kName));
    if (batch == nullptr) continue;
    const plugins::batch_placement::BatchStats stats = batch->stats(/*with_run_bound=*/false);
    s.optimizer_batches += stats.batches;
    s.optimizer_gap = std::max(s.optimizer_gap, stats.max_gap);
  }
  series_.samples.push_back(std::move(s));
  sampled_ = true;
}

namespace {

std::string Seconds(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / util::kNanosPerSecond); }

int64_t At(const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 0; }

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace

void WriteTimeSeriesCsv(std::span<const NamedTimeSeries> runs, std::ostream& out) {
  std::vector<std::string> resources;  // over every run, in first-seen order
  for (const NamedTimeSeries& run : runs) {
    for (const std::string& r : run.series->resources) {
      if (std::find(resources.begin(), resources.end(), r) == resources.end()) resources.push_back(r);
    }
  }
  out << "configuration,seconds";
  for (const std::string& r : resources)
    out << ',' << CsvField(r + "_requested") << ',' << CsvField(r + "_allocatable");
  out << ",nodes,nodes_used,pods_running,pods_pending,pending_active,pending_backoff,pending_unschedulable,"
         "pending_gated,evictions,moves,optimizer_batches,optimizer_gap,device_fragmentation\n";
  for (const NamedTimeSeries& run : runs) {
    const TimeSeries& series = *run.series;
    std::vector<size_t> column;  // per resource above, its index in this run's series (or npos)
    for (const std::string& r : resources) {
      auto it = std::find(series.resources.begin(), series.resources.end(), r);
      column.push_back(it == series.resources.end() ? std::string::npos : it - series.resources.begin());
    }
    const std::string name = CsvField(run.configuration);
    for (const TimeSample& s : series.samples) {
      out << name << ',' << Seconds(s.at_ns);
      for (const size_t c : column) out << ',' << At(s.requested, c) << ',' << At(s.allocatable, c);
      out << fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{:.6g},{}\n", s.nodes, s.nodes_used, s.pods_running,
                         s.Pending(), s.pending_active, s.pending_backoff, s.pending_unschedulable, s.pending_gated,
                         s.evictions, s.moves, s.optimizer_batches, s.optimizer_gap,
                         s.device_fragmentation < 0 ? std::string() : fmt::format("{:.6g}", s.device_fragmentation));
    }
  }
}

namespace {

void WriteJsonString(std::ostream& out, std::string_view s) { out << framework::QuoteMessageString(s); }

}  // namespace

void WriteTimeSeriesJsonLines(std::span<const NamedTimeSeries> runs, std::ostream& out) {
  for (const NamedTimeSeries& run : runs) {
    const TimeSeries& series = *run.series;
    for (const TimeSample& s : series.samples) {
      out << "{\"configuration\":";
      WriteJsonString(out, run.configuration);
      out << ",\"seconds\":" << Seconds(s.at_ns) << ",\"resources\":{";
      for (size_t i = 0; i < series.resources.size(); ++i) {
        if (i > 0) out << ',';
        WriteJsonString(out, series.resources[i]);
        out << fmt::format(":{{\"requested\":{},\"allocatable\":{}}}", At(s.requested, i), At(s.allocatable, i));
      }
      out << fmt::format(
          "}},\"nodes\":{},\"nodesUsed\":{},\"podsRunning\":{},\"podsPending\":{},\"pending\":{{\"active\":{},"
          "\"backoff\":{},\"unschedulable\":{},\"gated\":{}}},\"unschedulableByPlugin\":{{",
          s.nodes, s.nodes_used, s.pods_running, s.Pending(), s.pending_active, s.pending_backoff,
          s.pending_unschedulable, s.pending_gated);
      bool first = true;
      for (const auto& [plugin, n] : s.unschedulable_by_plugin) {
        if (!first) out << ',';
        first = false;
        WriteJsonString(out, plugin);
        out << ':' << n;
      }
      out << fmt::format("}},\"evictions\":{},\"moves\":{},\"optimizerBatches\":{},\"optimizerGap\":{:.6g}",
                         s.evictions, s.moves, s.optimizer_batches, s.optimizer_gap);
      if (s.device_fragmentation >= 0) out << fmt::format(",\"deviceFragmentation\":{:.6g}", s.device_fragmentation);
      out << "}\n";
    }
  }
}

}  // namespace kubesched::sim
