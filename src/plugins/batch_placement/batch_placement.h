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
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/statistics.h"
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

std::expected<BatchPlacementArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                    const std::string& path);
std::string EncodeArgs(const BatchPlacementArgs& args);

//! What the batches decided (simulate's summary). Pods are counted once however many batches
//! they went through (a pod left out is retried in a later batch).
struct BatchStats {
  int64_t batches = 0;
  //! Batches whose placement beat what the profile does one by one and became a plan; the others
  //! went through their own cycles unplanned.
  int64_t plans = 0;
  int64_t pods = 0;     //!< distinct pods batched
  int64_t placed = 0;   //!< of them, placed by the last batch they were in
  int64_t planned = 0;  //!< of them, placed by a plan
  bool all_optimal = true;
  double max_gap = 0;  //!< the objective's relative gap, largest over batches
  //! The pods placed against the pattern LP's bound, largest relative gap over batches.
  double max_placed_gap = 0;
  //! An upper bound on how many of the pods batched could run at once on the nodes as the
  //! batches first saw them (pattern_bound.h, with node affinity, selectors and taints): the
  //! whole run's bound for a burst (pods deleted meanwhile free room it does not know of).
  double run_bound = 0;
  //! Accelerator units the last batch left stranded (model.h: Accelerator).
  double stranded = 0;
  double solver_seconds = 0;  // sum over batches
  double seconds = 0;         // sum over batches
  std::string solver;
};

class BatchPlacement final : public framework::PreEnqueuePlugin,
                             public framework::PreFilterPlugin,
                             public framework::EnqueueExtensions,
                             public framework::TimedPlugin,
                             public framework::PodExplainer,
                             public framework::StatisticsReporter {
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

  //! The last batch the pod was in: the node it planned, or why none, and how the plan compared
  //! with what the profile does one by one (the objective level that decided).
  std::string ExplainPod(const api::Pod& pod) const override;

  //! The statistics so far. `with_run_bound` false leaves run_bound 0: it is the pattern LP over
  //! every pod batched, which a time series sampled hundreds of times over a replay cannot afford.
  BatchStats stats(bool with_run_bound = true) const;
  //! stats(), a BatchStats.
  std::any Statistics() const override { return stats(); }
  const BatchPlacementArgs& args() const { return args_; }

 private:
  //! Whether the pod belongs to a gang PodGroup (its group's cycle places it).
  bool IsGangMember(const api::Pod& pod) const;
  //! The run's bound (BatchStats::run_bound) over the pods batched so far. Called with mu_ held.
  double RunBoundLocked() const;
  //! Remembers the nodes not seen before, with their free room as the batch finds it.
  void RememberNodesLocked(std::span<const framework::NodeInfo* const> nodes);

  BatchPlacementArgs args_;
  framework::Handle* handle_;
  mutable std::mutex mu_;
  struct SeenNode {
    std::shared_ptr<const api::Node> node;
    framework::Resource free;
  };
  std::map<std::string, SeenNode, std::less<>> seen_nodes_;         // by name
  std::unordered_map<std::string, framework::PodInfoPtr> batched_;  // by uid
  std::unordered_map<std::string, bool> placed_by_;                 // uid → placed by a plan
  mutable std::optional<double> run_bound_;                         // cached until a batch changes it
  struct BatchRecord {
    size_t pods = 0;
    optimizer::PlacementResult result;  // without the plan (the per-pod part is below)
  };
  std::vector<BatchRecord> batch_records_;
  struct PodRecord {
    size_t batch = 0;  // index into batch_records_
    std::string node;  // "" when left out
    int32_t fitting_nodes = 0;
  };
  std::unordered_map<std::string, PodRecord> pod_records_;  // by uid: the last batch it was in
  std::set<std::string> held_;                              // uids PreEnqueue is holding
  std::optional<int64_t> window_start_ns_;                  // when the first held pod arrived
  std::set<std::string> released_;                          // uids decided by a batch, until their cycle
  std::unordered_map<std::string, std::string> left_out_;   // uid -> reason
  bool ticking_ = false;
  BatchStats stats_;
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::batch_placement
