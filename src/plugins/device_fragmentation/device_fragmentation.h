#pragma once
// DeviceFragmentation (kubesched's own score plugin): places a pod where it leaves the least
// device capacity stranded for the workload, the idea of Fragmentation Gradient Descent (Weng et
// al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
// Descent", USENIX ATC'23), over Dynamic Resource Allocation devices.
//
// The devices it weighs are those with the capacity named in its args (a GPU-sharing driver's
// `gpu.example.com/gpuMilli`, say) on node-local ResourceSlices; without one, every device there,
// whole (so that nodes keep enough free devices for the kinds that ask several). A node's fragmentation for one
// kind of pod (a task shape: cpu, memory, and k devices with d capacity each) is the free device
// capacity that kind cannot use there: all of it when the kind does not fit the node at all
// (cpu, memory, or fewer than k devices with d free), else the free capacity of the devices with
// less than d free. The node's fragmentation for the workload is the average over the kinds,
// weighted by how often each arrived among the last `workloadWindow` pods the plugin scored
// (the workload learned online, as FGD's target workload). The score is how much placing the pod
// (on the devices DynamicResources' Filter chose there) lowers that: FGD's steepest descent.
// Kinds without devices are left out: whatever the node, they strand the same capacity.
#include <cstdint>
#include <deque>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/resource_types.h"
#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::device_fragmentation {

struct DeviceFragmentationArgs {
  //! The device capacity weighed, fully qualified ("<domain>/<name>"). Empty (the default): every
  //! device of a node-local slice, weighed whole (one unit, free unless allocated).
  std::string capacity;
  //! How many of the latest pods make up the workload's distribution.
  int32_t workload_window = 10000;
  bool operator==(const DeviceFragmentationArgs&) const = default;
};

std::expected<DeviceFragmentationArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                         const std::string& path);
std::string EncodeArgs(const DeviceFragmentationArgs& args);

//! What a kind of pod asks of a node (FGD's task): devices of `per_device` capacity each.
struct TaskShape {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int32_t devices = 0;
  int64_t per_device = 0;
  auto operator<=>(const TaskShape&) const = default;
};

//! A node as the measure sees it: free cpu, memory and the free capacity of each device.
struct NodeRoom {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  std::vector<int64_t> device_free;
};

//! The workload's distribution: the kinds of pod that ask for devices, grouped by their device
//! demand, with how many of each arrived.
class Workload {
 public:
  void Add(const TaskShape& shape, int64_t count);
  int64_t total() const { return total_; }
  //! Sum over kinds of count x the free capacity the kind cannot use on the node (FGD's F_n(M)
  //! times the number of arrivals). `room.device_free` need not be sorted.
  int64_t Fragmentation(const NodeRoom& room) const;

 private:
  struct Group {
    int32_t devices = 0;
    int64_t per_device = 0;
    std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> shapes;  // (cpu, memory) -> count
    int64_t count = 0;
  };
  std::vector<Group> groups_;  // sorted by (devices, per_device)
  int64_t total_ = 0;
};

class DeviceFragmentation final : public framework::PreScorePlugin,
                                  public framework::ScorePlugin,
                                  public framework::ScoreExtensions {
 public:
  static constexpr std::string_view kName = "DeviceFragmentation";

  DeviceFragmentation(DeviceFragmentationArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }

  //! Learns the pod's kind (its device demand read from DynamicResources' allocation on a
  //! feasible node) and snapshots the workload and the devices. Skip when no node has the
  //! capacity's devices.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             std::span<const framework::NodeInfo* const> nodes) override;
  //! The drop in the node's fragmentation the pod makes (raw, may be negative).
  std::pair<int64_t, framework::Status> Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                              const framework::NodeInfo& node_info) override;
  ScoreExtensions* GetScoreExtensions() override { return this; }
  //! Scales the raw scores onto [0, 100], the largest drop 100.
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   framework::NodeScoreList& scores) override;

  //! One device the plugin weighs.
  struct IndexedDevice {
    std::string driver;
    std::string pool;
    std::string device;
    int64_t capacity = 0;
  };
  using DeviceIndex = std::map<std::string, std::vector<IndexedDevice>, std::less<>>;

 private:
  DeviceFragmentationArgs args_;
  api::QualifiedName capacity_;
  framework::Handle& handle_;

  std::mutex mu_;  // guards what follows (PreScore of concurrent profiles)
  std::shared_ptr<const void> indexed_slices_;
  std::shared_ptr<const DeviceIndex> index_;
  std::deque<std::pair<std::string, TaskShape>> window_;  // uid, kind: the latest arrivals
  std::unordered_set<std::string> in_window_;
  std::map<TaskShape, int64_t> counts_;
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::device_fragmentation
