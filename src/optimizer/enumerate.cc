#include "optimizer/enumerate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "optimizer/placement_state.h"

namespace kubesched::optimizer {
namespace {

class Enumerator {
 public:
  Enumerator(const BatchModel& m, std::span<const int32_t> group_order, double tie_break_weight, int64_t max_steps,
             std::chrono::steady_clock::time_point deadline)
      : m_(m), state_(m), tie_break_weight_(tie_break_weight), max_steps_(max_steps), deadline_(deadline) {
    for (int32_t g : group_order) pods_.insert(pods_.end(), m.groups[g].pods.size(), g);
    class_nodes_.resize(m.num_classes);
    for (size_t n = 0; n < m.nodes.size(); ++n) class_nodes_[m.nodes[n].node_class].push_back(static_cast<int32_t>(n));
    next_untouched_.assign(m.num_classes, 0);
    chosen_.assign(pods_.size(), -1);
    candidates_.resize(pods_.size());
  }

  Enumerated Run() {
    Visit(0, 0);
    Enumerated out;
    out.steps = steps_;
    out.complete = !stopped_;
    out.found = found_;
    if (!found_) return out;
    out.objective = best_objective_;
    out.tie_break = best_tie_break_;
    out.counts.assign(m_.groups.size(), std::vector<int32_t>(m_.nodes.size(), 0));
    for (size_t i = 0; i < pods_.size(); ++i) {
      if (best_[i] >= 0) ++out.counts[pods_[i]][best_[i]];
    }
    return out;
  }

 private:
  bool OutOfSteps() {
    ++steps_;
    if (steps_ > max_steps_ || ((steps_ & 1023) == 0 && std::chrono::steady_clock::now() > deadline_)) {
      stopped_ = true;
    }
    return stopped_;
  }

  // Pod i and those after it, pod i-1 having gone to node `previous` (nodes.size(): left out).
  void Visit(size_t i, int32_t previous) {
    if (OutOfSteps()) return;
    if (i == pods_.size()) {
      Leaf();
      return;
    }
    // Pods left out stay left out: their weight bounds the objective from below (and the
    // preference adds at most one per pod).
    if (found_ && unplaced_ * m_.placed_weight - tie_break_weight_ * static_cast<double>(pods_.size()) > best_value_) {
      return;
    }
    const int32_t g = pods_[i];
    const int32_t none = static_cast<int32_t>(m_.nodes.size());
    const int32_t lowest = i > 0 && pods_[i - 1] == g ? previous : 0;
    // The nodes worth trying: those holding batch pods, and each class's first untouched node.
    // Collected first: placing a pod changes both.
    std::vector<int32_t>& tries = candidates_[i];
    tries.clear();
    for (int32_t n : touched_) {
      if (n >= lowest) tries.push_back(n);
    }
    for (size_t c = 0; c < class_nodes_.size(); ++c) {
      if (next_untouched_[c] < class_nodes_[c].size() && class_nodes_[c][next_untouched_[c]] >= lowest) {
        tries.push_back(class_nodes_[c][next_untouched_[c]]);
      }
    }
    for (int32_t n : tries) {
      if (!m_.Fits(g, n) || !state_.Check(g, n).ok()) continue;
      const bool fresh = state_.batch_pods_on(n) == 0;
      state_.Place(g, n);
      if (fresh) {
        touched_.push_back(n);
        ++next_untouched_[m_.nodes[n].node_class];
      }
      tie_break_ += m_.preference[g][n];
      chosen_[i] = n;
      Visit(i + 1, n);
      tie_break_ -= m_.preference[g][n];
      if (fresh) {
        touched_.pop_back();
        --next_untouched_[m_.nodes[n].node_class];
      }
      state_.Remove(g, n);
      if (stopped_) return;
    }
    unplaced_ += m_.groups[g].weight;
    chosen_[i] = -1;
    Visit(i + 1, none);
    unplaced_ -= m_.groups[g].weight;
  }

  void Leaf() {
    const double objective = state_.Objective();
    const double value = objective - tie_break_weight_ * tie_break_;
    // Strictly better only: of equal placements the first found (lowest nodes) stays.
    if (found_ && value >= best_value_ - 1e-9 * std::max(1.0, std::abs(best_value_))) return;
    found_ = true;
    best_value_ = value;
    best_objective_ = objective;
    best_tie_break_ = tie_break_;
    best_ = chosen_;
  }

  const BatchModel& m_;
  PlacementState state_;
  const double tie_break_weight_;
  const int64_t max_steps_;
  const std::chrono::steady_clock::time_point deadline_;
  std::vector<int32_t> pods_;                      // the group of each pod, in the order tried
  std::vector<std::vector<int32_t>> class_nodes_;  // per class: its nodes in index order
  std::vector<size_t> next_untouched_;             // per class: its first node without batch pods
  std::vector<int32_t> touched_;                   // nodes holding batch pods, first touched first
  std::vector<std::vector<int32_t>> candidates_;   // per depth: the nodes being tried
  std::vector<int32_t> chosen_;                    // per pod: its node, -1 left out
  double tie_break_ = 0;
  double unplaced_ = 0;  // weight of the pods left out so far
  int64_t steps_ = 0;
  bool stopped_ = false;
  bool found_ = false;
  double best_value_ = std::numeric_limits<double>::infinity();
  double best_objective_ = 0;
  double best_tie_break_ = 0;
  std::vector<int32_t> best_;
};

}  // namespace

bool Enumerable(const BatchModel& m) { return m.num_pods <= 1 || (m.terms.empty() && m.spreads.empty()); }

Enumerated EnumeratePlacements(const BatchModel& m, std::span<const int32_t> group_order, double tie_break_weight,
                               int64_t max_steps, std::chrono::steady_clock::time_point deadline) {
  return Enumerator(m, group_order, tie_break_weight, max_steps, deadline).Run();
}

}  // namespace kubesched::optimizer
