#pragma once
// A partial placement of a batch with upstream's per-pod checks of the coupling constraints,
// evaluated incrementally: what the scheduling cycle of the next pod would say about each node.
// The heuristic builds placements with it, and the validation stage replays a solver's answer
// through it pod by pod to find an order in which every pod passes its own cycle.

#include <cstdint>
#include <string>
#include <vector>

#include "optimizer/model.h"

namespace kubesched::optimizer {

//! Why a pod of a group cannot go to a node now.
struct Rejection {
  enum class Kind { kNone, kFilters, kResources, kAntiAffinity, kAffinity, kSpread, kPorts };
  Kind kind = Kind::kNone;
  int32_t index = -1;  // resource dimension, term or spread
  bool ok() const { return kind == Kind::kNone; }
};

class PlacementState {
 public:
  explicit PlacementState(const BatchModel& model);

  //! Whether one more pod of group g may go to node n, as its own cycle would decide now.
  Rejection Check(int32_t g, int32_t n) const;
  void Place(int32_t g, int32_t n);
  void Remove(int32_t g, int32_t n);

  int32_t count(int32_t g, int32_t n) const { return count_[g][n]; }
  int32_t placed(int32_t g) const { return placed_[g]; }
  int32_t placed_total() const {
    int32_t t = 0;
    for (int32_t p : placed_) t += p;
    return t;
  }
  int32_t batch_pods_on(int32_t n) const { return on_node_[n]; }
  //! Nodes not in use before the batch that now run a batch pod.
  int32_t new_nodes_used() const { return new_nodes_used_; }
  int64_t free(int32_t n, size_t dim) const { return model_->nodes[n].free[dim] - used_[n][dim]; }
  //! Whether the node runs pods (before or from the batch).
  bool used(int32_t n) const { return model_->nodes[n].in_use || on_node_[n] > 0; }
  //! The lexicographic objective to minimise (BatchModel's weights): weighted unplaced pods, then
  //! stranded accelerator units, then new nodes.
  double Objective() const;
  //! Accelerator units stranded over all nodes (BatchModel::Stranded).
  double stranded() const { return stranded_total_; }
  //! How the stranded units would change with one more pod of g on n.
  double StrandedDelta(int32_t g, int32_t n) const;
  //! "Insufficient cpu", "pod anti-affinity with freyja (app In [freyja] on kubernetes.io/hostname)", ...
  std::string Describe(int32_t g, const Rejection& r) const;

 private:
  int32_t DomainOf(int32_t key, int32_t n) const { return model_->keys[key].domain_of_node[n]; }
  void Apply(int32_t g, int32_t n, int32_t delta);
  void RecomputeSpreadMin(int32_t c);

  const BatchModel* model_;
  std::vector<std::vector<int32_t>> count_;         // [group][node]
  std::vector<std::vector<int64_t>> used_;          // [node][dim]
  std::vector<int32_t> on_node_;                    // batch pods per node
  std::vector<int32_t> placed_;                     // per group
  std::vector<std::vector<int32_t>> term_count_;    // [term][domain]: batch pods matching the term
  std::vector<int64_t> term_total_;                 // [term]
  std::vector<std::vector<int32_t>> owner_count_;   // [term][domain]: batch pods of the term's owner
  std::vector<std::vector<int32_t>> spread_count_;  // [spread][domain]: existing + batch
  std::vector<int32_t> spread_min_;                 // [spread]: min over eligible domains
  int32_t new_nodes_used_ = 0;
  std::vector<double> stranded_;  // per node
  double stranded_total_ = 0;
};

}  // namespace kubesched::optimizer
