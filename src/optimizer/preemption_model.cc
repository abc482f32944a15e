#include "optimizer/preemption_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

namespace kubesched::optimizer {
namespace {

// The objective is solved in two stages, each with small coefficients (one weighted sum over all
// levels needs weights of 1e10 and more with a few priorities among 50 pods, and solvers lose
// their way in such relaxations). Stage one: the pods left without a place, lexicographically by
// priority rank: a pod of rank r outweighs every pod below it. Stage two, with stage one's optimum
// as a constraint: the disruptions, then the moves.
struct Weights {
  std::vector<double> lost;  // per priority rank (stage one)
  double disruption = 1;     // stage two: outweighs every number of moves
  double move = 1;
  //! Stage one's cost of a disruption: a quarter of a lost pod over all of them, which steers the
  //! search towards plans that disrupt less without touching what an absolute gap of 0.5 proves
  //! (the lost weights are integral).
  double guide = 0;
};

// The total of the largest weight over all pods, above which a double no longer tells the levels
// apart reliably inside a solver's tolerances: then the least important ranks share one level.
constexpr double kMaxTotalWeight = 1e7;

Weights WeightsFor(const PreemptionModel& m) {
  int32_t max_rank = 0;
  for (const auto& p : m.pods) max_rank = std::max(max_rank, p.priority_rank);
  std::vector<double> at_rank(static_cast<size_t>(max_rank) + 1, 0);
  for (const auto& p : m.pods) at_rank[p.priority_rank] += 1;
  Weights w;
  w.move = 1;
  w.disruption = static_cast<double>(m.pods.size()) + 1;
  w.guide = 0.25 / (static_cast<double>(m.pods.size()) + 1);
  w.lost.assign(at_rank.size(), 1);
  // Ranks are merged from the bottom while the weights would grow past what a double separates.
  size_t merged = 0;
  while (true) {
    double below = 0;
    double total = 0;
    for (size_t r = 0; r < at_rank.size(); ++r) {
      w.lost[r] = r <= merged ? 1 : 1 + below;
      below += w.lost[r] * at_rank[r];
      total += w.lost[r] * at_rank[r];
    }
    if (total <= kMaxTotalWeight || merged + 1 >= at_rank.size()) break;
    ++merged;
  }
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

// The fewest of `pods` (on one node with `free` room) whose removal lets `request` fit, by the
// largest-first count per dimension (a lower bound on any removal set); -1 when even removing all
// of them is not enough. `skip` is left out of the pods.
int64_t RemovalsToFit(const PreemptionModel& m, const std::vector<int>& pods, const std::vector<int64_t>& free,
                      const std::vector<int64_t>& request, int skip = -1) {
  int64_t needed = 0;
  std::vector<int64_t> sizes;
  for (size_t r = 0; r < m.num_resources; ++r) {
    int64_t deficit = request[r] - free[r];
    if (deficit <= 0) continue;
    sizes.clear();
    for (int v : pods) {
      if (v != skip) sizes.push_back(m.pods[v].request[r]);
    }
    std::sort(sizes.rbegin(), sizes.rend());
    int64_t k = 0;
    for (int64_t q : sizes) {
      if (deficit <= 0) break;
      deficit -= q;
      ++k;
    }
    if (deficit > 0) return -1;
    needed = std::max(needed, k);
  }
  return needed;
}

// At most this many destinations per moved pod reach the solver: those needing the fewest
// removals there first. More only weaken the relaxation (a pod spread thinly over many nodes).
constexpr size_t kMaxDestinationsPerPod = 8;
// Of those, at most this many where the pod fits only after evictions there.
constexpr size_t kMaxCrowdedDestinationsPerPod = 2;
// A pod on a destination node (Pod::on_destination) moves on to at most this many nodes.
constexpr size_t kMaxDestinationsOfDestinationPods = 3;
// When every pod's every destination makes at most this many move columns, all reach the solver:
// the model is then exact over the neighbourhood (any chain of moves), and small enough that the
// weaker relaxation costs milliseconds. Above it the limits above keep large clusters fast.
constexpr size_t kMaxExhaustiveMoveColumns = 1500;

}  // namespace

PlanCost CostOf(const PreemptionModel& model, const PreemptionPlanResult& plan) {
  PlanCost c;
  int32_t max_rank = 0;
  for (const auto& p : model.pods) max_rank = std::max(max_rank, p.priority_rank);
  c.lost.assign(static_cast<size_t>(max_rank) + 1, 0);
  for (int v : plan.evicted) ++c.lost[static_cast<size_t>(max_rank - model.pods[v].priority_rank)];
  c.disrupted = static_cast<int64_t>(plan.evicted.size() + plan.moves.size());
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
    // A pod that some destination takes as it is goes first (a move, not an eviction).
    auto can_move = [&](int v) {
      const auto& p = m.pods[v];
      if (!p.movable) return false;
      for (int d : p.destinations) {
        if (d == static_cast<int>(n)) continue;
        bool fits = true;
        for (size_t r = 0; r < R && fits; ++r) fits = p.request[r] <= m.nodes[d].free[r];
        if (fits) return true;
      }
      return false;
    };
    std::vector<uint8_t> movable_now(m.pods.size(), 0);
    for (int v : pods_on[n]) movable_now[v] = can_move(v) ? 1 : 0;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const auto& pa = m.pods[a];
      const auto& pb = m.pods[b];
      if (movable_now[a] != movable_now[b]) return movable_now[a] > movable_now[b];
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
    std::vector<int> others;
    for (int v : pods_on[n]) {
      if (!must.contains(v)) others.push_back(v);
    }
    const int64_t needed = RemovalsToFit(m, others, free, m.preemptor_request);
    if (needed < 0) continue;
    const int64_t total = static_cast<int64_t>(must.size()) + needed;
    if (best < 0 || total < best) best = total;
  }
  return best;
}

namespace {

// The integer program of a preemption model, with the columns its rows and its answer are read
// through.
struct PreemptionMip {
  explicit PreemptionMip(const PreemptionModel& model)
      : m(model), w(WeightsFor(model)), x(model.nodes.size(), -1), e(model.pods.size(), -1), y(model.pods.size()) {
    on_node.resize(m.nodes.size());
    for (size_t v = 0; v < m.pods.size(); ++v) on_node[m.pods[v].node].push_back(static_cast<int>(v));
    removals_for.resize(m.pods.size());
  }

  const PreemptionModel& m;
  const Weights w;
  MipProblem lp;
  std::vector<int32_t> x;                               // [node] the preemptor runs there; -1: not a candidate
  std::vector<int32_t> e;                               // [pod] evicted
  std::vector<std::vector<std::pair<int, int32_t>>> y;  // [pod] moved: (destination, column)
  std::vector<std::vector<int>> on_node;                // [node] the pods on it
  // removals_for[v][i]: the fewest removals at y[v][i]'s destination for v to fit there.
  std::vector<std::vector<int64_t>> removals_for;

  // Subtracts from `row` every pod leaving `node` (evicted or moved).
  void AddRemovalTerms(int node, MipProblem::Row& row) const {
    for (int w2 : on_node[node]) {
      row.index.push_back(e[w2]);
      row.value.push_back(-1);
      for (auto [d, c] : y[w2]) {
        row.index.push_back(c);
        row.value.push_back(-1);
      }
    }
  }
};

// The preemptor's columns, one per candidate node; false when there is none.
bool AddPreemptorColumns(PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (m.nodes[n].preemptor_candidate && !NodeForbidden(m, static_cast<int>(n))) {
      p.x[n] = p.lp.AddColumn(0, 1, 0, true);
    }
  }
  return !std::all_of(p.x.begin(), p.x.end(), [](int32_t c) { return c < 0; });
}

// Per pod: (removals there, destination) for every destination where removals can make room,
// fewest removals first.
std::vector<std::vector<std::pair<int64_t, int>>> RankDestinations(const PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  std::vector<std::vector<std::pair<int64_t, int>>> ranked_for(m.pods.size());
  for (size_t v = 0; v < m.pods.size(); ++v) {
    const auto& pod = m.pods[v];
    if (!pod.movable) continue;
    auto& ranked = ranked_for[v];
    for (int d : pod.destinations) {
      if (d == pod.node || Forbidden(m, static_cast<int>(v), d)) continue;
      const int64_t k = RemovalsToFit(m, p.on_node[d], m.nodes[d].free, pod.request);
      if (k >= 0) ranked.emplace_back(k, d);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return ranked_for;
}

// Per pod: its eviction column, then a column per destination it may move to.
void AddPodColumns(PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  std::vector<std::vector<std::pair<int64_t, int>>> ranked_for = RankDestinations(p);
  size_t all_move_columns = 0;
  for (const auto& ranked : ranked_for) all_move_columns += ranked.size();
  const bool exhaustive = all_move_columns <= kMaxExhaustiveMoveColumns;
  for (size_t v = 0; v < m.pods.size(); ++v) {
    const auto& pod = m.pods[v];
    p.e[v] = p.lp.AddColumn(0, 1, p.w.lost[pod.priority_rank] + p.w.guide, true);
    if (!pod.movable) continue;
    auto& ranked = ranked_for[v];
    // Unless the model is small: destinations with room now, then a couple that need evictions
    // there (a pod on a destination node: a few with room only).
    size_t with_room = 0;
    while (with_room < ranked.size() && ranked[with_room].first == 0) ++with_room;
    if (exhaustive) {
      // every destination
    } else if (pod.on_destination) {
      ranked.resize(std::min(with_room, kMaxDestinationsOfDestinationPods));
    } else {
      ranked.resize(std::min({ranked.size(), kMaxDestinationsPerPod, with_room + kMaxCrowdedDestinationsPerPod}));
    }
    for (auto [k, d] : ranked) {
      p.y[v].emplace_back(d, p.lp.AddColumn(0, 1, p.w.guide, true));
      p.removals_for[v].push_back(k);
    }
  }
}

// The preemptor runs on exactly one node.
void AddPreemptorRow(PreemptionMip& p) {
  MipProblem::Row row;
  for (int32_t c : p.x) {
    if (c >= 0) {
      row.index.push_back(c);
      row.value.push_back(1);
    }
  }
  row.lb = row.ub = 1;
  p.lp.AddRow(std::move(row));
}

// A pod stays, is evicted or moves once.
void AddPodChoiceRows(PreemptionMip& p) {
  for (size_t v = 0; v < p.m.pods.size(); ++v) {
    if (p.y[v].empty()) continue;
    MipProblem::Row row;
    row.index.push_back(p.e[v]);
    row.value.push_back(1);
    for (auto [d, c] : p.y[v]) {
      row.index.push_back(c);
      row.value.push_back(1);
    }
    row.ub = 1;
    p.lp.AddRow(std::move(row));
  }
}

// Capacity per node and dimension. Current overcommitment does not force removals: the
// preemptor's coefficient carries it (when x is 0 the row allows what the node has now).
void AddCapacityRows(PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  const size_t R = m.num_resources;
  const auto& pods_on = p.on_node;
  std::vector<std::vector<std::pair<int, int32_t>>> moves_into(m.nodes.size());  // (pod, column)
  for (size_t v = 0; v < m.pods.size(); ++v) {
    for (auto [d, c] : p.y[v]) moves_into[d].emplace_back(static_cast<int>(v), c);
  }
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (p.x[n] < 0 && moves_into[n].empty()) continue;
    for (size_t r = 0; r < R; ++r) {
      const int64_t free = m.nodes[n].free[r];
      MipProblem::Row row;
      double positive = 0;
      if (p.x[n] >= 0 && m.preemptor_request[r] > 0) {
        const double coef =
            static_cast<double>(m.preemptor_request[r]) + static_cast<double>(std::max<int64_t>(0, -free));
        row.index.push_back(p.x[n]);
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
                         (p.x[n] >= 0 ? static_cast<double>(std::max<int64_t>(0, -free)) : 0.0);
      if (positive <= rhs) continue;  // never binding
      for (int v : pods_on[n]) {
        const double q = static_cast<double>(m.pods[v].request[r]);
        if (q == 0) continue;
        row.index.push_back(p.e[v]);
        row.value.push_back(-q);
        for (auto [d, c] : p.y[v]) {
          row.index.push_back(c);
          row.value.push_back(-q);
        }
      }
      row.ub = rhs;
      p.lp.AddRow(std::move(row));
    }
  }
}

// Removal cuts (valid, and what keeps the relaxation honest): the preemptor on n needs at least
// k_n pods off n, and a pod moved to d at least k pods off d, k by the largest-first count.
void AddRemovalCuts(PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (p.x[n] < 0) continue;
    const int64_t k = RemovalsToFit(m, p.on_node[n], m.nodes[n].free, m.preemptor_request);
    if (k <= 0) continue;
    MipProblem::Row row;
    row.index.push_back(p.x[n]);
    row.value.push_back(static_cast<double>(k));
    p.AddRemovalTerms(static_cast<int>(n), row);
    row.ub = 0;
    p.lp.AddRow(std::move(row));
  }
  for (size_t v = 0; v < m.pods.size(); ++v) {
    for (size_t i = 0; i < p.y[v].size(); ++i) {
      const int64_t k = p.removals_for[v][i];
      if (k <= 0) continue;
      MipProblem::Row row;
      row.index.push_back(p.y[v][i].second);
      row.value.push_back(static_cast<double>(k));
      p.AddRemovalTerms(p.y[v][i].first, row);
      row.ub = 0;
      p.lp.AddRow(std::move(row));
    }
  }
}

// Conflicts: the pod leaves the domain (or never enters it) when the preemptor takes a node of
// it. Exactly one x is 1, so one row per (pod, domain) covers every node of the domain:
//   sum_{n in D} x_n - e_v - sum_{d not in D} y_vd <= 0   (v now in D)
//   sum_{n in D} x_n + y_vd <= 1 for d in D             (v moved into D), as one row
void AddConflictRows(PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  std::map<std::pair<int, std::vector<int>>, std::vector<int32_t>> by_domain;  // (pod, domain) → x columns
  for (const auto& c : m.conflicts) {
    if (p.x[c.node] < 0) continue;
    std::vector<int> domain = c.domain;
    std::sort(domain.begin(), domain.end());
    auto& cols = by_domain[{c.pod, std::move(domain)}];
    if (std::find(cols.begin(), cols.end(), p.x[c.node]) == cols.end()) cols.push_back(p.x[c.node]);
  }
  for (const auto& [key, xs] : by_domain) {
    const auto& [pod, domain] = key;
    auto in_domain = [&](int n) { return std::binary_search(domain.begin(), domain.end(), n); };
    if (in_domain(m.pods[pod].node)) {
      MipProblem::Row row;
      for (int32_t col : xs) {
        row.index.push_back(col);
        row.value.push_back(1);
      }
      row.index.push_back(p.e[pod]);
      row.value.push_back(-1);
      for (auto [d, col] : p.y[pod]) {
        if (in_domain(d)) continue;
        row.index.push_back(col);
        row.value.push_back(-1);
      }
      row.ub = 0;
      p.lp.AddRow(std::move(row));
    }
    MipProblem::Row into;
    for (int32_t col : xs) {
      into.index.push_back(col);
      into.value.push_back(1);
    }
    const size_t base = into.index.size();
    for (auto [d, col] : p.y[pod]) {
      if (!in_domain(d)) continue;
      into.index.push_back(col);
      into.value.push_back(1);
    }
    if (into.index.size() == base) continue;
    into.ub = 1;
    p.lp.AddRow(std::move(into));
  }
}

// Disruption budgets.
void AddBudgetRows(PreemptionMip& p) {
  const PreemptionModel& m = p.m;
  for (size_t b = 0; b < m.pdb_allowed.size(); ++b) {
    MipProblem::Row row;
    for (size_t v = 0; v < m.pods.size(); ++v) {
      if (std::find(m.pods[v].pdbs.begin(), m.pods[v].pdbs.end(), static_cast<int>(b)) == m.pods[v].pdbs.end())
        continue;
      row.index.push_back(p.e[v]);
      row.value.push_back(1);
      for (auto [d, c] : p.y[v]) {
        row.index.push_back(c);
        row.value.push_back(1);
      }
    }
    if (row.index.empty() || static_cast<double>(row.index.size()) <= m.pdb_allowed[b]) continue;
    row.ub = m.pdb_allowed[b];
    p.lp.AddRow(std::move(row));
  }
}

// The solver's options for stage one: the greedy plan as its start, and an absolute gap that
// still proves the integral lost weights.
MipOptions StageOneOptions(const PreemptionMip& p, const PreemptionPlanResult& greedy, const MipOptions& options) {
  MipOptions opts = options;
  if (greedy.status == PreemptionPlanResult::Status::kPlan) {
    std::vector<double> start(p.lp.num_columns(), 0);
    start[p.x[greedy.node]] = 1;
    for (int v : greedy.evicted) start[p.e[v]] = 1;
    for (auto [v, d] : greedy.moves) {
      for (auto [dd, c] : p.y[v]) {
        if (dd == d) start[c] = 1;
      }
    }
    // The start may use a destination the model dropped: then the solver starts from scratch.
    if (MaxViolation(p.lp, start) < 1e-9) opts.start = std::move(start);
  }
  opts.absolute_gap = std::min(opts.absolute_gap, 0.5);
  return opts;
}

// Stage two's problem: stage one's with the pods lost kept at its answer (`lost_objective`),
// and the disruptions, then the moves, as the objective.
MipProblem StageTwoProblem(const PreemptionMip& p, double lost_objective) {
  const PreemptionModel& m = p.m;
  // The pods lost may not grow (by half a unit: the lost weights are integral).
  MipProblem::Row keep;
  for (size_t v = 0; v < m.pods.size(); ++v) {
    keep.index.push_back(p.e[v]);
    keep.value.push_back(p.w.lost[m.pods[v].priority_rank]);
  }
  // The lost part of stage one's objective (its guide part is below a quarter).
  keep.ub = std::floor(lost_objective + 1e-6) + 0.5;
  MipProblem second = p.lp;
  second.AddRow(std::move(keep));
  for (size_t v = 0; v < m.pods.size(); ++v) {
    second.obj[p.e[v]] = p.w.disruption;
    for (auto [d, c] : p.y[v]) second.obj[c] = p.w.disruption + p.w.move;
  }
  return second;
}

struct StagedResult {
  MipResult r;
  double solver_seconds = 0;
};

// Stage one (pods left without a place, by priority) gets most of the time; stage two
// (disruptions, then moves) the rest, from stage one's answer.
StagedResult SolveInStages(const PreemptionMip& p, MipSolver& solver, MipOptions opts) {
  const double total_seconds = opts.time_limit_seconds;
  opts.time_limit_seconds = 0.7 * total_seconds;
  MipResult r = solver.Solve(p.lp, opts);
  double solver_seconds = r.seconds;
  bool stage_one_proved = r.status == MipResult::Status::kOptimal;
  if (r.status == MipResult::Status::kOptimal || r.status == MipResult::Status::kFeasible) {
    MipProblem second = StageTwoProblem(p, r.objective);
    MipOptions opts2 = opts;
    opts2.time_limit_seconds = std::max(0.05, total_seconds - r.seconds);
    opts2.start = r.x;
    MipResult r2 = solver.Solve(second, opts2);
    solver_seconds += r2.seconds;
    if (r2.status == MipResult::Status::kOptimal || r2.status == MipResult::Status::kFeasible) {
      r2.status = stage_one_proved && r2.status == MipResult::Status::kOptimal ? MipResult::Status::kOptimal
                                                                               : MipResult::Status::kFeasible;
      r = std::move(r2);
    } else {
      r.status = MipResult::Status::kFeasible;  // stage one's answer, its lower levels unproved
    }
  }
  return {std::move(r), solver_seconds};
}

// The plan the solver's answer describes; the greedy plan when the solver gave none.
PreemptionPlanResult PlanFromAnswer(const PreemptionMip& p, PreemptionPlanResult greedy, const StagedResult& solved) {
  const PreemptionModel& m = p.m;
  const MipResult& r = solved.r;
  PreemptionPlanResult out;
  out.solver_seconds = solved.solver_seconds;
  if (r.status == MipResult::Status::kInfeasible) {
    out.status = PreemptionPlanResult::Status::kNoPlan;
    out.message = "no plan satisfies the constraints";
    return out;
  }
  if (r.status != MipResult::Status::kOptimal && r.status != MipResult::Status::kFeasible) {
    // No answer from the solver: the greedy plan, unproved.
    if (greedy.status == PreemptionPlanResult::Status::kPlan) {
      greedy.solver_seconds = solved.solver_seconds;
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
    if (p.x[n] >= 0 && r.x[p.x[n]] > 0.5) out.node = static_cast<int>(n);
  }
  for (size_t v = 0; v < m.pods.size(); ++v) {
    if (r.x[p.e[v]] > 0.5) out.evicted.push_back(static_cast<int>(v));
    for (auto [d, c] : p.y[v]) {
      if (r.x[c] > 0.5) out.moves.emplace_back(static_cast<int>(v), d);
    }
  }
  return out;
}

}  // namespace

PreemptionPlanResult SolvePreemptionModel(const PreemptionModel& m, MipSolver& solver, const MipOptions& options) {
  // The greedy plan: the solver's start, a bound on evictions, and the answer when it provably
  // cannot be beaten (no eviction, and no more moves than any plan must make).
  PreemptionPlanResult greedy = GreedyPreemptionPlan(m);
  if (greedy.status == PreemptionPlanResult::Status::kPlan && greedy.evicted.empty() &&
      static_cast<int64_t>(greedy.moves.size()) == MinRemovals(m)) {
    greedy.optimal = true;
    greedy.gap = 0;
    greedy.message = "greedy plan meets the lower bound";
    return greedy;
  }
  PreemptionMip p(m);
  if (!AddPreemptorColumns(p)) {
    PreemptionPlanResult out;
    out.status = PreemptionPlanResult::Status::kNoPlan;
    out.message = "no candidate node";
    return out;
  }
  AddPodColumns(p);
  AddPreemptorRow(p);
  AddPodChoiceRows(p);
  AddCapacityRows(p);
  AddRemovalCuts(p);
  AddConflictRows(p);
  AddBudgetRows(p);
  const StagedResult solved = SolveInStages(p, solver, StageOneOptions(p, greedy, options));
  return PlanFromAnswer(p, std::move(greedy), solved);
}

}  // namespace kubesched::optimizer
