#include "optimizer/preemption_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>

namespace kubesched::optimizer {
namespace {

// Objective weights making one weighted sum lexicographic: an eviction outweighs every possible
// sum of ranks and moves; one rank step outweighs every possible number of moves.
struct Weights {
  double eviction = 1;
  double rank = 0;
  double move = 1;
};

Weights WeightsFor(const PreemptionModel& m) {
  int64_t movable = 0;
  int32_t max_rank = 0;
  for (const auto& p : m.pods) {
    if (p.movable && !p.destinations.empty()) ++movable;
    max_rank = std::max(max_rank, p.priority_rank);
  }
  Weights w;
  w.move = 1;
  w.rank = static_cast<double>(movable + 1);
  w.eviction = w.rank * (static_cast<double>(max_rank) * static_cast<double>(m.pods.size()) + 1);
  return w;
}

bool Forbidden(const PreemptionModel& m, int pod, int dest) {
  return std::find(m.forbidden_moves.begin(), m.forbidden_moves.end(), std::pair{pod, dest}) != m.forbidden_moves.end();
}

bool NodeForbidden(const PreemptionModel& m, int node) {
  return std::find(m.forbidden_nodes.begin(), m.forbidden_nodes.end(), node) != m.forbidden_nodes.end();
}

bool InDomain(const std::vector<int>& domain, int node) {
  return std::find(domain.begin(), domain.end(), node) != domain.end();
}

}  // namespace

PlanCost CostOf(const PreemptionModel& model, const PreemptionPlanResult& plan) {
  PlanCost c;
  c.evictions = static_cast<int64_t>(plan.evicted.size());
  for (int v : plan.evicted) c.weighted += model.pods[v].priority_rank;
  c.moves = static_cast<int64_t>(plan.moves.size());
  return c;
}

PreemptionPlanResult GreedyPreemptionPlan(const PreemptionModel& m) {
  const size_t R = m.num_resources;
  std::vector<std::vector<int>> pods_on(m.nodes.size());
  for (size_t v = 0; v < m.pods.size(); ++v) pods_on[m.pods[v].node].push_back(static_cast<int>(v));

  PreemptionPlanResult best;
  best.status = PreemptionPlanResult::Status::kNoPlan;
  std::optional<PlanCost> best_cost;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (!m.nodes[n].preemptor_candidate || NodeForbidden(m, static_cast<int>(n))) continue;
    // Pods that must leave n's domains for the preemptor, and where each may not go.
    std::set<int> must_leave;
    std::vector<std::vector<const std::vector<int>*>> banned(m.pods.size());
    for (const auto& c : m.conflicts) {
      if (c.node != static_cast<int>(n)) continue;
      if (InDomain(c.domain, m.pods[c.pod].node)) must_leave.insert(c.pod);
      banned[c.pod].push_back(&c.domain);
    }
    std::vector<std::vector<int64_t>> free(m.nodes.size());
    for (size_t k = 0; k < m.nodes.size(); ++k) free[k] = m.nodes[k].free;
    std::vector<int32_t> budget = m.pdb_allowed;
    std::vector<int> dest(m.pods.size(), -2);  // -2 stays, -1 evicted, else destination
    bool ok = true;

    auto remove = [&](int v) -> bool {
      const auto& p = m.pods[v];
      for (int b : p.pdbs) {
        if (budget[b] <= 0) return false;
      }
      for (int b : p.pdbs) --budget[b];
      int chosen = -1;
      if (p.movable) {
        for (int d : p.destinations) {
          if (d == static_cast<int>(n) || Forbidden(m, v, d)) continue;
          if (std::any_of(banned[v].begin(), banned[v].end(), [&](const auto* dom) { return InDomain(*dom, d); }))
            continue;
          bool fits = true;
          for (size_t r = 0; r < R && fits; ++r) fits = p.request[r] <= free[d][r];
          if (fits) {
            chosen = d;
            break;
          }
        }
      }
      if (chosen >= 0) {
        for (size_t r = 0; r < R; ++r) free[chosen][r] -= p.request[r];
      }
      for (size_t r = 0; r < R; ++r) free[p.node][r] += p.request[r];
      dest[v] = chosen;
      return true;
    };
    auto preemptor_fits = [&] {
      for (size_t r = 0; r < R; ++r) {
        if (m.preemptor_request[r] > free[n][r]) return false;
      }
      return true;
    };
    for (int v : must_leave) {
      if (!remove(v)) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    // Then the cheapest pods on n: movable before not, least important first, largest first.
    std::vector<int> order = pods_on[n];
    std::erase_if(order, [&](int v) { return must_leave.contains(v); });
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const auto& pa = m.pods[a];
      const auto& pb = m.pods[b];
      if (pa.movable != pb.movable) return pa.movable;
      if (pa.priority_rank != pb.priority_rank) return pa.priority_rank < pb.priority_rank;
      return std::accumulate(pa.request.begin(), pa.request.end(), 0.0) >
             std::accumulate(pb.request.begin(), pb.request.end(), 0.0);
    });
    std::vector<int> removed;
    for (int v : order) {
      if (preemptor_fits()) break;
      if (remove(v)) removed.push_back(v);
    }
    if (!preemptor_fits()) continue;
    // Reprieve: put back what is not needed, costliest first (evictions of the most important).
    std::stable_sort(removed.begin(), removed.end(), [&](int a, int b) {
      if ((dest[a] == -1) != (dest[b] == -1)) return dest[a] == -1;
      return m.pods[a].priority_rank > m.pods[b].priority_rank;
    });
    for (int v : removed) {
      const auto& p = m.pods[v];
      bool fits = true;
      for (size_t r = 0; r < R && fits; ++r) fits = m.preemptor_request[r] + p.request[r] <= free[n][r];
      if (!fits) continue;
      for (size_t r = 0; r < R; ++r) {
        free[n][r] -= p.request[r];
        if (dest[v] >= 0) free[dest[v]][r] += p.request[r];
      }
      for (int b : p.pdbs) ++budget[b];
      dest[v] = -2;
    }
    PreemptionPlanResult plan;
    plan.status = PreemptionPlanResult::Status::kPlan;
    plan.node = static_cast<int>(n);
    for (size_t v = 0; v < m.pods.size(); ++v) {
      if (dest[v] == -1) plan.evicted.push_back(static_cast<int>(v));
      if (dest[v] >= 0) plan.moves.emplace_back(static_cast<int>(v), dest[v]);
    }
    const PlanCost cost = CostOf(m, plan);
    if (!best_cost || cost < *best_cost) {
      best_cost = cost;
      best = std::move(plan);
    }
  }
  return best;
}

int64_t MinRemovals(const PreemptionModel& m) {
  const size_t R = m.num_resources;
  std::vector<std::vector<int>> pods_on(m.nodes.size());
  for (size_t v = 0; v < m.pods.size(); ++v) pods_on[m.pods[v].node].push_back(static_cast<int>(v));
  int64_t best = -1;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (!m.nodes[n].preemptor_candidate || NodeForbidden(m, static_cast<int>(n))) continue;
    std::set<int> must;
    for (const auto& c : m.conflicts) {
      if (c.node == static_cast<int>(n) && InDomain(c.domain, m.pods[c.pod].node)) must.insert(c.pod);
    }
    std::vector<int64_t> free = m.nodes[n].free;
    for (int v : must) {
      if (m.pods[v].node != static_cast<int>(n)) continue;
      for (size_t r = 0; r < R; ++r) free[r] += m.pods[v].request[r];
    }
    int64_t needed = 0;
    bool possible = true;
    for (size_t r = 0; r < R && possible; ++r) {
      int64_t deficit = m.preemptor_request[r] - free[r];
      if (deficit <= 0) continue;
      std::vector<int64_t> sizes;
      for (int v : pods_on[n]) {
        if (!must.contains(v)) sizes.push_back(m.pods[v].request[r]);
      }
      std::sort(sizes.rbegin(), sizes.rend());
      int64_t k = 0;
      for (int64_t q : sizes) {
        if (deficit <= 0) break;
        deficit -= q;
        ++k;
      }
      if (deficit > 0) possible = false;
      needed = std::max(needed, k);
    }
    if (!possible) continue;
    const int64_t total = static_cast<int64_t>(must.size()) + needed;
    if (best < 0 || total < best) best = total;
  }
  return best;
}

PreemptionPlanResult SolvePreemptionModel(const PreemptionModel& m, MipSolver& solver, const MipOptions& options) {
  const size_t R = m.num_resources;
  const Weights w = WeightsFor(m);
  MipProblem lp;
  std::vector<int32_t> x(m.nodes.size(), -1);
  std::vector<int32_t> e(m.pods.size(), -1);
  std::vector<std::vector<std::pair<int, int32_t>>> y(m.pods.size());  // (destination, column)
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (m.nodes[n].preemptor_candidate && !NodeForbidden(m, static_cast<int>(n))) {
      x[n] = lp.AddColumn(0, 1, 0, true);
    }
  }
  PreemptionPlanResult out;
  if (std::all_of(x.begin(), x.end(), [](int32_t c) { return c < 0; })) {
    out.status = PreemptionPlanResult::Status::kNoPlan;
    out.message = "no candidate node";
    return out;
  }
  for (size_t v = 0; v < m.pods.size(); ++v) {
    const auto& p = m.pods[v];
    e[v] = lp.AddColumn(0, 1, w.eviction + w.rank * p.priority_rank, true);
    if (!p.movable) continue;
    for (int d : p.destinations) {
      if (d == p.node || Forbidden(m, static_cast<int>(v), d)) continue;
      y[v].emplace_back(d, lp.AddColumn(0, 1, w.move, true));
    }
  }
  {  // The preemptor runs on exactly one node.
    MipProblem::Row row;
    for (int32_t c : x) {
      if (c >= 0) {
        row.index.push_back(c);
        row.value.push_back(1);
      }
    }
    row.lb = row.ub = 1;
    lp.AddRow(std::move(row));
  }
  for (size_t v = 0; v < m.pods.size(); ++v) {  // A pod stays, is evicted or moves once.
    if (y[v].empty()) continue;
    MipProblem::Row row;
    row.index.push_back(e[v]);
    row.value.push_back(1);
    for (auto [d, c] : y[v]) {
      row.index.push_back(c);
      row.value.push_back(1);
    }
    row.ub = 1;
    lp.AddRow(std::move(row));
  }
  // Capacity per node and dimension. Current overcommitment does not force removals: the
  // preemptor's coefficient carries it (when x is 0 the row allows what the node has now).
  std::vector<std::vector<int>> pods_on(m.nodes.size());
  std::vector<std::vector<std::pair<int, int32_t>>> moves_into(m.nodes.size());  // (pod, column)
  for (size_t v = 0; v < m.pods.size(); ++v) {
    pods_on[m.pods[v].node].push_back(static_cast<int>(v));
    for (auto [d, c] : y[v]) moves_into[d].emplace_back(static_cast<int>(v), c);
  }
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (x[n] < 0 && moves_into[n].empty()) continue;
    for (size_t r = 0; r < R; ++r) {
      const int64_t free = m.nodes[n].free[r];
      MipProblem::Row row;
      double positive = 0;
      if (x[n] >= 0 && m.preemptor_request[r] > 0) {
        const double coef =
            static_cast<double>(m.preemptor_request[r]) + static_cast<double>(std::max<int64_t>(0, -free));
        row.index.push_back(x[n]);
        row.value.push_back(coef);
        positive += coef;
      }
      for (auto [v, c] : moves_into[n]) {
        if (m.pods[v].request[r] == 0) continue;
        row.index.push_back(c);
        row.value.push_back(static_cast<double>(m.pods[v].request[r]));
        positive += static_cast<double>(m.pods[v].request[r]);
      }
      const double rhs = static_cast<double>(std::max<int64_t>(0, free)) +
                         (x[n] >= 0 ? static_cast<double>(std::max<int64_t>(0, -free)) : 0.0);
      if (positive <= rhs) continue;  // never binding
      for (int v : pods_on[n]) {
        const double q = static_cast<double>(m.pods[v].request[r]);
        if (q == 0) continue;
        row.index.push_back(e[v]);
        row.value.push_back(-q);
        for (auto [d, c] : y[v]) {
          row.index.push_back(c);
          row.value.push_back(-q);
        }
      }
      row.ub = rhs;
      lp.AddRow(std::move(row));
    }
  }
  // Conflicts: the pod leaves the domain (or never enters it) when the preemptor takes the node.
  for (const auto& c : m.conflicts) {
    if (x[c.node] < 0) continue;
    if (InDomain(c.domain, m.pods[c.pod].node)) {
      MipProblem::Row row;
      row.index = {x[c.node], e[c.pod]};
      row.value = {1, -1};
      for (auto [d, col] : y[c.pod]) {
        if (InDomain(c.domain, d)) continue;
        row.index.push_back(col);
        row.value.push_back(-1);
      }
      row.ub = 0;
      lp.AddRow(std::move(row));
    }
    for (auto [d, col] : y[c.pod]) {
      if (!InDomain(c.domain, d)) continue;
      MipProblem::Row row;
      row.index = {x[c.node], col};
      row.value = {1, 1};
      row.ub = 1;
      lp.AddRow(std::move(row));
    }
  }
  // Disruption budgets.
  for (size_t b = 0; b < m.pdb_allowed.size(); ++b) {
    MipProblem::Row row;
    for (size_t v = 0; v < m.pods.size(); ++v) {
      if (std::find(m.pods[v].pdbs.begin(), m.pods[v].pdbs.end(), static_cast<int>(b)) == m.pods[v].pdbs.end())
        continue;
      row.index.push_back(e[v]);
      row.value.push_back(1);
      for (auto [d, c] : y[v]) {
        row.index.push_back(c);
        row.value.push_back(1);
      }
    }
    if (row.index.empty() || static_cast<double>(row.index.size()) <= m.pdb_allowed[b]) continue;
    row.ub = m.pdb_allowed[b];
    lp.AddRow(std::move(row));
  }

  // Start from the greedy plan when it has one; it is optimal, and the solver not needed, when it
  // evicts nothing and moves no more pods than any plan must remove.
  MipOptions opts = options;
  PreemptionPlanResult greedy = GreedyPreemptionPlan(m);
  if (greedy.status == PreemptionPlanResult::Status::kPlan && greedy.evicted.empty() &&
      static_cast<int64_t>(greedy.moves.size()) == MinRemovals(m)) {
    greedy.optimal = true;
    greedy.gap = 0;
    greedy.message = "greedy plan meets the lower bound";
    return greedy;
  }
  if (greedy.status == PreemptionPlanResult::Status::kPlan) {
    std::vector<double> start(lp.num_columns(), 0);
    start[x[greedy.node]] = 1;
    for (int v : greedy.evicted) start[e[v]] = 1;
    for (auto [v, d] : greedy.moves) {
      for (auto [dd, c] : y[v]) {
        if (dd == d) start[c] = 1;
      }
    }
    if (MaxViolation(lp, start) < 1e-9) opts.start = std::move(start);
  }
  opts.absolute_gap = std::min(opts.absolute_gap, 0.5);
  MipResult r = solver.Solve(lp, opts);
  out.solver_seconds = r.seconds;
  if (r.status == MipResult::Status::kInfeasible) {
    out.status = PreemptionPlanResult::Status::kNoPlan;
    out.message = "no plan satisfies the constraints";
    return out;
  }
  if (r.status != MipResult::Status::kOptimal && r.status != MipResult::Status::kFeasible) {
    // No answer from the solver: the greedy plan, unproved.
    if (greedy.status == PreemptionPlanResult::Status::kPlan) {
      greedy.solver_seconds = r.seconds;
      greedy.message = fmt::format("solver: {} {}", ToString(r.status), r.message);
      greedy.gap = 1;
      return greedy;
    }
    out.status = r.status == MipResult::Status::kNoSolution ? PreemptionPlanResult::Status::kNoPlan
                                                            : PreemptionPlanResult::Status::kError;
    out.message = fmt::format("solver: {} {}", ToString(r.status), r.message);
    return out;
  }
  out.status = PreemptionPlanResult::Status::kPlan;
  out.optimal = r.status == MipResult::Status::kOptimal;
  out.gap = out.optimal ? 0 : std::max(0.0, (r.objective - r.bound) / std::max(1.0, std::abs(r.objective)));
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (x[n] >= 0 && r.x[x[n]] > 0.5) out.node = static_cast<int>(n);
  }
  for (size_t v = 0; v < m.pods.size(); ++v) {
    if (r.x[e[v]] > 0.5) out.evicted.push_back(static_cast<int>(v));
    for (auto [d, c] : y[v]) {
      if (r.x[c] > 0.5) out.moves.emplace_back(static_cast<int>(v), d);
    }
  }
  return out;
}

}  // namespace kubesched::optimizer
