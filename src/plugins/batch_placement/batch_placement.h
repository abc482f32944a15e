#pragma once
// BatchPlacement: places a burst of pending pods jointly (kubesched's own plugin; upstream places
// one pod at a time). PreEnqueue holds the profile's new pods until the batch is full or its
// window closes; Tick then solves the batch (optimizer/placement.h), plans each placed pod on its
// node through the nominator (so every plugin sees the room it holds, and the pod's own cycle
// tries that node first, falling back to all nodes when it no longer fits) and activates the
// pods in the plan's order. Pods left out fail their next cycle at PreFilter with the
// optimizer's reason and are retried, in a new batch, on the events that may make room.

#include <cstdint>
#include <expected>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/args.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "optimizer/placement.h"

namespace kubesched::plugins::batch_placement {

struct BatchPlacementArgs {
  int32_t max_batch_size = 1000;
  double batch_window_seconds = 1;
  double solver_timeout_seconds = 10;
  //! Lexicographic: most pods placed (by priority), then fewest nodes newly used.
  std::string objective = "MostPlacedFewestNodes";
  std::string solver = "cbc";
};

std::expected<BatchPlacementArgs, framework::ArgsErrors> DecodeArgs(const nlohmann::json& args,
                                                                    const std::string& path);
nlohmann::ordered_json EncodeArgs(const BatchPlacementArgs& args);

//! What the last batch's solve reported (simulate's summary).
struct BatchStats {
  int64_t batches = 0;
  int64_t pods = 0;
  int64_t placed = 0;
  bool all_optimal = true;
  double max_gap = 0;
  double solver_seconds = 0;  // sum over batches
  double seconds = 0;         // sum over batches
  std::string solver;
};

class BatchPlacement final : public framework::PreEnqueuePlugin,
                             public framework::PreFilterPlugin,
                             public framework::EnqueueExtensions,
                             public framework::TimedPlugin {
 public:
  static constexpr std::string_view kName = "BatchPlacement";

  BatchPlacement(BatchPlacementArgs args, framework::Handle& handle) : args_(std::move(args)), handle_(&handle) {}

  std::string_view Name() const override { return kName; }
  //! Holds a new pod for the batch (gated) unless the batch already decided about it.
  framework::Status PreEnqueue(const api::Pod& pod) override;
  //! A pod the batch left out is rejected once with the optimizer's reason; others pass.
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  std::optional<int64_t> NextTickNs() const override;
  //! Places the held pods (at most maxBatchSize, queue order) jointly.
  void Tick(const std::vector<framework::PodInfoPtr>& held) override;

  BatchStats stats() const;
  const BatchPlacementArgs& args() const { return args_; }

 private:
  //! The profile's Filter plugins on the pod without the constraints the model decides.
  optimizer::PlacementInput MakeInput(const std::vector<framework::PodInfoPtr>& pods);

  BatchPlacementArgs args_;
  framework::Handle* handle_;
  mutable std::mutex mu_;
  std::set<std::string> held_;                             // uids PreEnqueue is holding
  std::optional<int64_t> window_start_ns_;                 // when the first held pod arrived
  std::set<std::string> released_;                         // uids decided by a batch, until their cycle
  std::unordered_map<std::string, std::string> left_out_;  // uid -> reason
  bool ticking_ = false;
  BatchStats stats_;
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const nlohmann::json& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::batch_placement
