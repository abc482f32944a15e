#include "plugins/device_fragmentation/device_fragmentation.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "api/field_path.h"
#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"
#include "framework/cycle_state.h"
#include "framework/dra.h"
#include "plugins/dynamic_resources/dynamic_resources.h"

namespace kubesched::plugins::device_fragmentation {

using framework::Status;

namespace {

const framework::StateKey kStateKey{"DeviceFragmentation"};

bool IsCIdentifier(std::string_view id) {
  if (id.empty() || id.size() > 32) return false;
  if (!(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

api::QualifiedName SplitQualified(std::string_view text) {
  const size_t slash = text.find('/');
  return {std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

struct StateData final : framework::StateData {
  std::shared_ptr<const DeviceFragmentation::DeviceIndex> index;
  std::shared_ptr<const framework::AllocatedState> allocated;
  std::shared_ptr<const Workload> workload;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<StateData>(*this); }
};

// The free capacity of the node's weighed devices, before the pod.
std::vector<int64_t> FreeCapacity(const std::vector<DeviceFragmentation::IndexedDevice>& devices,
                                  const framework::AllocatedState& allocated, const api::QualifiedName& capacity) {
  std::vector<int64_t> free;
  free.reserve(devices.size());
  framework::DeviceId id;
  for (const auto& d : devices) {
    id.driver = d.driver;
    id.pool = d.pool;
    id.device = d.device;
    if (allocated.allocated_devices.contains(id)) {
      free.push_back(0);
      continue;
    }
    int64_t used = 0;
    if (auto it = allocated.consumed_capacity.find(id); it != allocated.consumed_capacity.end()) {
      if (capacity.id.empty()) {
        used = d.capacity;  // weighed whole: a device shared at all is not free
      } else if (auto q = it->second.find(capacity); q != it->second.end()) {
        used = q->second.Value();
      }
    }
    free.push_back(std::max<int64_t>(0, d.capacity - used));
  }
  return free;
}

// What the allocations take of each weighed device (the capacity consumed, or all of it when the
// device is taken whole). Adds to `taken` (parallel to `devices`); returns the devices taken.
int32_t Take(const std::vector<DeviceFragmentation::IndexedDevice>& devices,
             const std::vector<api::AllocationResult>& allocations, const api::QualifiedName& capacity,
             std::vector<int64_t>& taken, int64_t& per_device) {
  int32_t count = 0;
  for (const auto& allocation : allocations) {
    for (const auto& r : allocation.devices) {
      if (r.admin_access) continue;
      for (size_t i = 0; i < devices.size(); ++i) {
        const auto& d = devices[i];
        if (d.device != r.device || d.pool != r.pool || d.driver != r.driver) continue;
        auto q = r.consumed_capacity.find(capacity);
        const int64_t amount = q != r.consumed_capacity.end() ? q->second.Value() : d.capacity;
        taken[i] += amount;
        per_device = std::max(per_device, amount);
        ++count;
      }
    }
  }
  return count;
}

}  // namespace

// ---- Args

std::expected<DeviceFragmentationArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                         const std::string& path) {
  DeviceFragmentationArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  const std::string capacity_path = api::field_path::Child(path, "capacity");
  const std::string window_path = api::field_path::Child(path, "workloadWindow");
  if (d.Object(json, path, {"capacity", "workloadWindow", "apiVersion", "kind"})) {
    if (auto v = d.String(json.Find("capacity"), capacity_path)) args.capacity = *v;
    if (auto v = d.Int32(json.Find("workloadWindow"), window_path)) args.workload_window = *v;
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});
  if (!args.capacity.empty()) {
    const size_t slash = args.capacity.find('/');
    const bool valid = slash != std::string::npos && slash > 0 &&
                       args.capacity.find('/', slash + 1) == std::string::npos &&
                       IsCIdentifier(std::string_view(args.capacity).substr(slash + 1));
    if (!valid) {
      errors.push_back(config::FieldInvalid(capacity_path, "\"" + args.capacity + "\"",
                                            "must be a domain and a C identifier separated by a slash"));
    }
  }
  if (args.workload_window < 1 || args.workload_window > 1000000) {
    errors.push_back(
        config::FieldInvalid(window_path, std::to_string(args.workload_window), "not in valid range [1, 1000000]"));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return args;
}

std::string EncodeArgs(const DeviceFragmentationArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  if (!args.capacity.empty()) w.Key("capacity").String(args.capacity);
  w.Key("workloadWindow").Int64(args.workload_window);
  w.EndObject();
  return std::move(w).Take();
}

// ---- The measure

void Workload::Add(const TaskShape& shape, int64_t count) {
  if (shape.devices == 0 || count == 0) return;
  auto it = std::lower_bound(groups_.begin(), groups_.end(), std::pair{shape.devices, shape.per_device},
                             [](const Group& g, const std::pair<int32_t, int64_t>& key) {
                               return std::pair{g.devices, g.per_device} < key;
                             });
  if (it == groups_.end() || it->devices != shape.devices || it->per_device != shape.per_device) {
    it = groups_.insert(it, Group{shape.devices, shape.per_device, {}, 0});
  }
  const std::pair<int64_t, int64_t> key{shape.milli_cpu, shape.memory};
  auto s = std::find_if(it->shapes.begin(), it->shapes.end(), [&](const auto& e) { return e.first == key; });
  if (s == it->shapes.end()) {
    it->shapes.push_back({key, count});
  } else {
    s->second += count;
  }
  it->count += count;
  total_ += count;
}

int64_t Workload::Fragmentation(const NodeRoom& room) const {
  std::vector<int64_t> free = room.device_free;
  std::sort(free.begin(), free.end());
  // prefix[i]: the free capacity of the i emptiest-but-least-free devices.
  std::vector<int64_t> prefix(free.size() + 1, 0);
  for (size_t i = 0; i < free.size(); ++i) prefix[i + 1] = prefix[i] + free[i];
  const int64_t all = prefix.back();
  if (all == 0) return 0;
  int64_t sum = 0;
  for (const Group& g : groups_) {
    const size_t below = std::lower_bound(free.begin(), free.end(), g.per_device) - free.begin();
    if (static_cast<int64_t>(free.size() - below) < g.devices) {
      sum += g.count * all;  // the node cannot take this kind at all
      continue;
    }
    int64_t fits = 0;
    for (const auto& [need, count] : g.shapes) {
      if (need.first <= room.milli_cpu && need.second <= room.memory) fits += count;
    }
    sum += fits * prefix[below] + (g.count - fits) * all;
  }
  return sum;
}

// ---- The plugin

DeviceFragmentation::DeviceFragmentation(DeviceFragmentationArgs args, framework::Handle& handle)
    : args_(std::move(args)),
      capacity_(args_.capacity.empty() ? api::QualifiedName{} : SplitQualified(args_.capacity)),
      handle_(handle) {}

Status DeviceFragmentation::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                     std::span<const framework::NodeInfo* const> nodes) {
  framework::DraLister& dra = handle_.Dra();
  if (dra.Empty()) return Status::Skip();
  auto slices = dra.Slices();

  // The pod's kind: its device demand as DynamicResources' Filter allocated it on a feasible node.
  TaskShape shape{pod.requests.milli_cpu, pod.requests.memory, 0, 0};
  auto data = std::make_unique<StateData>();
  std::lock_guard lock(mu_);
  if (indexed_slices_ != slices) {
    auto index = std::make_shared<DeviceIndex>();
    for (const auto& slice : *slices) {
      if (!slice->node_name) continue;
      for (const api::Device& device : slice->devices) {
        int64_t amount = 1;  // no capacity named: every device, weighed whole
        if (!capacity_.id.empty()) {
          const api::DeviceCapacity* c = device.Capacity(capacity_);
          if (c == nullptr) continue;
          amount = c->value.Value();
        }
        (*index)[*slice->node_name].push_back({slice->driver, slice->pool.name, device.name, amount});
      }
    }
    index_ = std::move(index);
    indexed_slices_ = slices;
  }
  if (index_->empty()) return Status::Skip();
  for (const framework::NodeInfo* node : nodes) {
    const auto* allocations = dynamic_resources::FilteredAllocations(state, node->node()->metadata.name);
    if (allocations == nullptr) continue;
    auto devices = index_->find(node->node()->metadata.name);
    if (devices == index_->end()) continue;
    std::vector<int64_t> taken(devices->second.size(), 0);
    shape.devices = Take(devices->second, *allocations, capacity_, taken, shape.per_device);
    break;
  }

  // The workload: the latest arrivals, each pod counted once however often it is attempted.
  const std::string& uid = pod.pod().metadata.uid;
  if (!in_window_.contains(uid)) {
    window_.emplace_back(uid, shape);
    in_window_.insert(uid);
    ++counts_[shape];
    while (window_.size() > static_cast<size_t>(args_.workload_window)) {
      auto& [old_uid, old_shape] = window_.front();
      if (--counts_[old_shape] == 0) counts_.erase(old_shape);
      in_window_.erase(old_uid);
      window_.pop_front();
    }
  }
  auto workload = std::make_shared<Workload>();
  for (const auto& [s, n] : counts_) workload->Add(s, n);
  if (workload->total() == 0) return Status::Skip();

  data->index = index_;
  data->allocated = dra.Allocated();
  data->workload = std::move(workload);
  state.Write(kStateKey, std::move(data));
  return Status::Success();
}

std::pair<int64_t, Status> DeviceFragmentation::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                                      const framework::NodeInfo& node_info) {
  auto* data = state.Get<StateData>(kStateKey);
  if (data == nullptr) return {0, Status::Error("reading \"DeviceFragmentation\" from cycle state: not found")};
  const std::string& name = node_info.node()->metadata.name;
  auto devices = data->index->find(name);
  if (devices == data->index->end()) return {0, Status::Success()};  // nothing to strand here

  NodeRoom before;
  before.milli_cpu = node_info.allocatable().milli_cpu - node_info.requested().milli_cpu;
  before.memory = node_info.allocatable().memory - node_info.requested().memory;
  before.device_free = FreeCapacity(devices->second, *data->allocated, capacity_);

  NodeRoom after = before;
  after.milli_cpu -= pod.requests.milli_cpu;
  after.memory -= pod.requests.memory;
  if (const auto* allocations = dynamic_resources::FilteredAllocations(state, name)) {
    std::vector<int64_t> taken(devices->second.size(), 0);
    int64_t per_device = 0;
    Take(devices->second, *allocations, capacity_, taken, per_device);
    for (size_t i = 0; i < taken.size(); ++i)
      after.device_free[i] = std::max<int64_t>(0, after.device_free[i] - taken[i]);
  }
  const Workload& w = *data->workload;
  // The drop in fragmentation, per thousand arrivals for resolution.
  const int64_t drop = w.Fragmentation(before) - w.Fragmentation(after);
  return {drop * 1000 / w.total(), Status::Success()};
}

Status DeviceFragmentation::NormalizeScore(const framework::CycleState&, const framework::PodInfo&,
                                           framework::NodeScoreList& scores) {
  if (scores.empty()) return Status::Success();
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  for (const auto& s : scores) {
    lo = std::min(lo, s.score);
    hi = std::max(hi, s.score);
  }
  for (auto& s : scores) {
    s.score = hi == lo ? framework::kMaxNodeScore : (s.score - lo) * framework::kMaxNodeScore / (hi - lo);
  }
  return Status::Success();
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return std::make_unique<DeviceFragmentation>(std::move(*decoded), handle);
}

}  // namespace kubesched::plugins::device_fragmentation
