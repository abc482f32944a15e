#include "optimizer/placement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "optimizer/enumerate.h"
#include "optimizer/mip.h"
#include "optimizer/pattern_bound.h"
#include "optimizer/placement_state.h"
#include "util/log.h"

namespace kubesched::optimizer {
namespace {

using Clock = std::chrono::steady_clock;
using Counts = std::vector<std::vector<int32_t>>;  // [group][node]

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Priority levels are lexicographic: one pod of a higher priority outweighs every pod below it.
void AssignWeights(BatchModel& m) {
  std::map<int32_t, int64_t> per_level;
  for (const auto& g : m.groups) per_level[g.priority] += g.count();
  std::map<int32_t, double> weight;
  double below = 0;
  for (const auto& [prio, n] : per_level) {
    weight[prio] = below + 1;
    below += weight[prio] * static_cast<double>(n);
  }
  // Beyond what a double represents exactly the levels collapse to plain counts.
  const bool exact = below < 1e9;
  for (auto& g : m.groups) g.weight = exact ? weight[g.priority] : 1;
}

// Groups in the order they are placed: priority first, then the targets of other groups'
// affinity before the groups that need them, then the largest pods first.
std::vector<int32_t> GroupOrder(const BatchModel& m) {
  const int32_t G = static_cast<int32_t>(m.groups.size());
  std::vector<int32_t> depth(G, 0);
  // depth[h] = longest chain of groups that h needs (affinity) before it; a few relaxations
  // suffice for the short chains workloads have, and cycles stop at G rounds.
  for (int32_t round = 0; round < G; ++round) {
    bool changed = false;
    for (int32_t g = 0; g < G; ++g) {
      for (int32_t t : m.groups[g].affinity_terms) {
        for (int32_t h = 0; h < G; ++h) {
          if (h != g && m.terms[t].matches_group[h] && depth[g] < depth[h] + 1 && depth[h] + 1 <= G) {
            depth[g] = depth[h] + 1;
            changed = true;
          }
        }
      }
    }
    if (!changed) break;
  }
  auto size = [&](int32_t g) {
    double s = 0;
    for (size_t d = 0; d < m.resources.size(); ++d) {
      double cap = 0;
      for (const auto& n : m.nodes) cap = std::max<double>(cap, static_cast<double>(n.free[d]));
      if (cap > 0) s = std::max(s, static_cast<double>(m.groups[g].demand[d]) / cap);
    }
    return s;
  };
  auto constrained = [&](int32_t g) {
    const Group& x = m.groups[g];
    return x.anti_terms.size() + x.anti_terms_matching.size() + x.spreads.size() + (x.ports.empty() ? 0 : 1);
  };
  std::vector<int32_t> order(G);
  std::iota(order.begin(), order.end(), 0);
  // Groups tied by affinity go first and together: a target's pods, then the pods that need them,
  // before unrelated pods take the room next to the targets.
  std::vector<uint8_t> tied(G, 0);
  for (int32_t g = 0; g < G; ++g) {
    for (int32_t t : m.groups[g].affinity_terms) {
      tied[g] = 1;
      for (int32_t h = 0; h < G; ++h) tied[h] |= m.terms[t].matches_group[h];
    }
  }
  // Pods that need an accelerator go before pods that do not: the others can use any node's cpu,
  // and taking it first from nodes with accelerators strands them.
  auto accelerated = [&](int32_t g) {
    return std::any_of(m.accelerators.begin(), m.accelerators.end(),
                       [&](const Accelerator& a) { return m.groups[g].demand[a.dim] > 0; });
  };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (m.groups[a].priority != m.groups[b].priority) return m.groups[a].priority > m.groups[b].priority;
    if (tied[a] != tied[b]) return tied[a] > tied[b];
    if (depth[a] != depth[b]) return depth[a] < depth[b];
    if (constrained(a) != constrained(b)) return constrained(a) > constrained(b);
    if (accelerated(a) != accelerated(b)) return accelerated(a);
    return size(a) > size(b);
  });
  return order;
}

double Remaining(const BatchModel& m, const PlacementState& s, int32_t g, int32_t n) {
  double r = 0;
  for (size_t d = 0; d < m.resources.size(); ++d) {
    if (m.groups[g].demand[d] == 0 || m.nodes[n].free[d] == 0) continue;
    r += static_cast<double>(s.free(n, d) - m.groups[g].demand[d]) / static_cast<double>(m.nodes[n].free[d]);
  }
  return r;
}

// Places one pod of g where packing wants it: the fullest used node it fits, else the first
// unused one. Returns the node, or -1.
// Nodes of one class that no pod of the batch went to are alike in every check, score and count
// (a class has one set of labels, free room and running pods): a loop over candidate nodes
// evaluates the first of them in node order and skips the rest, which keeps ties as a full scan
// breaks them. Returns whether node n stands for itself or is its class's first untouched node.
class UntouchedOncePerClass {
 public:
  explicit UntouchedOncePerClass(const BatchModel& m) : m_(m), seen_(m.num_classes, 0) {}
  bool Visit(const PlacementState& s, int32_t n) {
    if (s.batch_pods_on(n) > 0) return true;
    uint8_t& seen = seen_[m_.nodes[n].node_class];
    if (seen) return false;
    seen = 1;
    return true;
  }

 private:
  const BatchModel& m_;
  std::vector<uint8_t> seen_;
};

int32_t PlaceOne(const BatchModel& m, PlacementState& s, int32_t g) {
  const int32_t N = static_cast<int32_t>(m.nodes.size());
  UntouchedOncePerClass once(m);
  int32_t best = -1;
  double best_score = 0;
  bool best_used = false;
  // Stranding accelerator capacity costs more than a new node (the objective's order): the least
  // stranding first, then used nodes before unused ones, then the fullest.
  double best_strand = 0;
  constexpr double kStrandEps = 1e-9;
  for (int32_t n = 0; n < N; ++n) {
    if (!m.Fits(g, n) || !once.Visit(s, n)) continue;
    const bool used = s.used(n);
    const double strand = m.accelerators.empty() ? 0 : s.StrandedDelta(g, n);
    if (best >= 0 && strand > best_strand + kStrandEps) continue;
    const bool strand_better = best >= 0 && strand < best_strand - kStrandEps;
    if (!strand_better) {
      if (best >= 0 && (best_used && !used)) continue;
      // Unused nodes of one class are alike: the profile's preference decides between classes.
      if (best >= 0 && !best_used && !used && m.preference[g][n] <= m.preference[g][best]) continue;
    }
    if (!s.Check(g, n).ok()) continue;
    const double rem = Remaining(m, s, g, n);
    if (best < 0 || strand_better || (used && !best_used) || (used && rem < best_score) || (!used && !best_used)) {
      best = n;
      best_score = rem;
      best_used = used;
      best_strand = strand;
    }
  }
  if (best >= 0) s.Place(g, best);
  return best;
}

// What the default profile's scores make of a node for one more pod of g: NodeResourcesFit's
// LeastAllocated and NodeResourcesBalancedAllocation over cpu and memory (equal weights, as in the
// default profile; the other default scores are equal across nodes without preferences).
double DefaultScore(const BatchModel& m, const PlacementState& s, int32_t g, int32_t n) {
  const framework::NodeInfo& ni = *m.nodes[n].info;
  double fraction[2];
  double least = 0;
  for (int r = 0; r < 2; ++r) {
    const double alloc = static_cast<double>(r == 0 ? ni.allocatable().milli_cpu : ni.allocatable().memory);
    // Requested after placing: what the node had free for the batch, minus what the batch took.
    const double free_after = static_cast<double>(s.free(n, r)) - static_cast<double>(m.groups[g].demand[r]);
    fraction[r] = alloc > 0 ? std::clamp(1 - free_after / alloc, 0.0, 1.0) : 1;
    least += alloc > 0 ? 100 * (1 - fraction[r]) : 0;
  }
  const double balanced = 100 * (1 - std::abs(fraction[0] - fraction[1]) / 2);
  return least / 2 + balanced;
}

// One-by-one in queue order, each pod to the node the default scores rank first: what the
// default profile itself would do with the batch (the baseline the optimizer must not trail).
PlacementState ConstructAsScheduled(const BatchModel& m) {
  PlacementState s(m);
  const int32_t N = static_cast<int32_t>(m.nodes.size());
  std::vector<uint8_t> stuck(m.groups.size(), 0);  // identical pods: once one fails, all do
  for (int32_t g : m.pod_group) {
    if (stuck[g]) continue;
    int32_t best = -1;
    double best_score = -1;
    UntouchedOncePerClass once(m);
    for (int32_t n = 0; n < N; ++n) {
      if (!m.Fits(g, n) || !once.Visit(s, n) || !s.Check(g, n).ok()) continue;
      const double score = DefaultScore(m, s, g, n);
      if (score > best_score) {
        best = n;
        best_score = score;
      }
    }
    if (best < 0) {
      stuck[g] = 1;
      continue;
    }
    s.Place(g, best);
  }
  return s;
}

PlacementState ConstructPacked(const BatchModel& m, const std::vector<int32_t>& order) {
  PlacementState s(m);
  for (int32_t g : order) {
    for (int32_t i = 0; i < m.groups[g].count(); ++i) {
      if (PlaceOne(m, s, g) < 0) break;  // identical pods: the next would not fit either
    }
  }
  return s;
}

// Packing pod by pod in queue order (the order the pods arrived in): each where packing wants it.
// Largest first is the classic order for bin packing, but on a trace of mixed shapes arrival order
// sometimes packs better (each candidate is scored; the better one stands).
PlacementState ConstructPackedInQueueOrder(const BatchModel& m) {
  PlacementState s(m);
  std::vector<uint8_t> stuck(m.groups.size(), 0);
  for (int32_t g : m.pod_group) {
    if (!stuck[g] && PlaceOne(m, s, g) < 0) stuck[g] = 1;
  }
  return s;
}

// Local search: empty the least-loaded newly used nodes by moving their pods to other used
// nodes; then retry pods left out.
void EmptyNodes(const BatchModel& m, PlacementState& s, const std::vector<int32_t>& order, Clock::time_point deadline) {
  const int32_t N = static_cast<int32_t>(m.nodes.size());
  const int32_t G = static_cast<int32_t>(m.groups.size());
  bool improved = true;
  while (improved && Clock::now() < deadline) {
    improved = false;
    std::vector<int32_t> candidates;
    for (int32_t n = 0; n < N; ++n) {
      if (!m.nodes[n].in_use && s.batch_pods_on(n) > 0) candidates.push_back(n);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](int32_t a, int32_t b) { return s.batch_pods_on(a) < s.batch_pods_on(b); });
    for (int32_t n : candidates) {
      if (Clock::now() >= deadline) break;
      const double before = s.Objective();
      std::vector<std::pair<int32_t, int32_t>> moved;  // (group, to)
      std::vector<int32_t> removed;
      for (int32_t g = 0; g < G; ++g) {
        for (int32_t k = s.count(g, n); k > 0; --k) {
          s.Remove(g, n);
          removed.push_back(g);
        }
      }
      bool ok = true;
      for (int32_t g : removed) {
        int32_t to = -1;
        double best = 0;
        for (int32_t o = 0; o < N; ++o) {
          if (o == n || !s.used(o) || !m.Fits(g, o) || !s.Check(g, o).ok()) continue;
          const double rem = Remaining(m, s, g, o);
          if (to < 0 || rem < best) {
            to = o;
            best = rem;
          }
        }
        if (to < 0) {
          ok = false;
          break;
        }
        s.Place(g, to);
        moved.emplace_back(g, to);
      }
      // Emptying a node must not strand more accelerator capacity than the node is worth.
      if (ok && s.Objective() > before - 0.5) ok = false;
      if (ok) {
        improved = true;
        break;  // the candidate list is stale
      }
      for (auto it = moved.rbegin(); it != moved.rend(); ++it) s.Remove(it->first, it->second);
      for (int32_t g : removed) s.Place(g, n);
    }
  }
  for (int32_t g : order) {
    while (s.placed(g) < m.groups[g].count() && PlaceOne(m, s, g) >= 0) {
    }
  }
}

Counts CountsOf(const BatchModel& m, const PlacementState& s) {
  Counts c(m.groups.size(), std::vector<int32_t>(m.nodes.size(), 0));
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) c[g][n] = s.count(static_cast<int32_t>(g), static_cast<int32_t>(n));
  }
  return c;
}

// A lower bound on new nodes when every pod is placed: per resource, what the used nodes cannot
// hold over the largest unused node.
int32_t NewNodesLowerBound(const BatchModel& m) {
  int32_t lb = 0;
  for (size_t d = 0; d < m.resources.size(); ++d) {
    double need = 0, room = 0, biggest = 0;
    for (const auto& g : m.groups) need += static_cast<double>(g.demand[d]) * g.count();
    for (const auto& n : m.nodes) {
      if (n.in_use)
        room += static_cast<double>(n.free[d]);
      else
        biggest = std::max(biggest, static_cast<double>(n.free[d]));
    }
    if (need > room && biggest > 0) lb = std::max(lb, static_cast<int32_t>(std::ceil((need - room) / biggest - 1e-9)));
  }
  return lb;
}

// --- The integer program -------------------------------------------------------------------

struct Formulation {
  MipProblem mip;
  std::vector<std::vector<int32_t>> x;  // [group][node] column or -1
  std::vector<int32_t> u;               // [node] column or -1 (unused nodes only)
  // Presence binaries: (group, key, domain) -> column.
  std::map<std::tuple<int32_t, int32_t, int32_t>, int32_t> presence;
  std::vector<std::pair<int32_t, std::vector<int32_t>>> seeds;  // (term, column per domain)
  std::vector<std::pair<int32_t, int32_t>> spread_min;          // (spread, column)
  std::vector<std::tuple<size_t, int32_t, int32_t>> strand;     // (accelerator, node, column)
};

MipProblem::Row MakeRow(double lb, double ub) {
  MipProblem::Row r;
  r.lb = lb;
  r.ub = ub;
  return r;
}
void AddTerm(MipProblem::Row& r, int32_t col, double v) {
  r.index.push_back(col);
  r.value.push_back(v);
}

// The profile's scores enter the objective as a tie-break worth less than 0.4 in all, so that an
// absolute gap of 0.5 still proves the two integral levels above it.
double TieBreakWeight(const BatchModel& m) { return 0.4 / static_cast<double>(std::max<size_t>(1, m.num_pods)); }

// What Formulate's steps share: the model, the formulation built so far, and the most pods of
// each group a node can take (the integer bound of its column).
struct FormulationBuilder {
  explicit FormulationBuilder(const BatchModel& model)
      : m(model),
        G(static_cast<int32_t>(model.groups.size())),
        N(static_cast<int32_t>(model.nodes.size())),
        R(model.resources.size()) {}

  const BatchModel& m;
  const int32_t G;
  const int32_t N;
  const size_t R;
  Formulation f;
  std::vector<std::vector<int32_t>> ub;  // [group][node]

  // Presence of a group in a domain: x <= ub * B for each node of the domain, B <= sum x.
  int32_t Presence(int32_t g, int32_t key, int32_t d) {
    MipProblem& p = f.mip;
    auto k = std::make_tuple(g, key, d);
    if (auto it = f.presence.find(k); it != f.presence.end()) return it->second;
    std::vector<int32_t> nodes;
    for (int32_t n = 0; n < N; ++n) {
      if (m.keys[key].domain_of_node[n] == d && f.x[g][n] >= 0) nodes.push_back(n);
    }
    if (nodes.empty()) return f.presence[k] = -1;
    // A domain of one node where the group holds at most one pod: presence is the pod count.
    if (nodes.size() == 1 && ub[g][nodes[0]] == 1) {
      bool alone = true;
      for (int32_t n = 0; n < N && alone; ++n) alone = n == nodes[0] || m.keys[key].domain_of_node[n] != d;
      if (alone) return f.presence[k] = f.x[g][nodes[0]];
    }
    const int32_t col = p.AddColumn(0, 1, 0, true);
    auto sum = MakeRow(-MipProblem::kInf, 0);
    AddTerm(sum, col, 1);
    for (int32_t n : nodes) {
      AddTerm(sum, f.x[g][n], -1);
      auto link = MakeRow(-MipProblem::kInf, 0);
      AddTerm(link, f.x[g][n], 1);
      AddTerm(link, col, -ub[g][n]);
      p.AddRow(std::move(link));
    }
    p.AddRow(std::move(sum));
    return f.presence[k] = col;
  }
};

// Whether a group with affinity to itself may start a series in a domain where no matching pod
// runs yet (its first pod seeds the domain).
bool Seedable(const BatchModel& m, const Group& grp) {
  if (!grp.matches_own_affinity) return false;
  for (int32_t t : grp.affinity_terms) {
    if (m.terms[t].existing_total > 0) return false;
  }
  return true;
}

// The most pods of group g node n can take (presolve): capacity alone, self anti-affinity and
// host ports on per-node keys, affinity that nothing can satisfy there.
int64_t PodsBound(const FormulationBuilder& fb, int32_t g, int32_t n, bool seedable) {
  const BatchModel& m = fb.m;
  const Group& grp = m.groups[g];
  int64_t b = grp.count();
  for (size_t d = 0; d < fb.R; ++d) {
    if (grp.demand[d] > 0) b = std::min<int64_t>(b, m.nodes[n].free[d] / grp.demand[d]);
  }
  if (m.port_conflict[g][g]) b = std::min<int64_t>(b, 1);
  for (int32_t t : grp.anti_terms) {
    const auto& key = m.keys[m.terms[t].key];
    const int32_t d = key.domain_of_node[n];
    if (d >= 0 && m.terms[t].matches_group[g] && key.per_node) b = std::min<int64_t>(b, 1);
  }
  for (int32_t t : grp.affinity_terms) {
    const Term& term = m.terms[t];
    const int32_t d = m.keys[term.key].domain_of_node[n];
    if (d < 0)
      b = 0;
    else if (term.existing[d] == 0 && !seedable) {
      bool other = false;
      for (int32_t h = 0; h < fb.G; ++h) other = other || (h != g && term.matches_group[h]);
      if (!other) b = 0;
    }
  }
  for (int32_t c : grp.spreads) {
    if (m.keys[m.spreads[c].key].domain_of_node[n] < 0) b = 0;
  }
  return b;
}

// x[g][n]: the pods of group g on node n, for the pairs that can hold one. Worth the group's
// weight each unless `placed_is_constraint`, and the profile's preference as a tie-break.
void AddPlacementColumns(FormulationBuilder& fb, bool placed_is_constraint) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  f.x.assign(fb.G, std::vector<int32_t>(fb.N, -1));
  fb.ub.assign(fb.G, std::vector<int32_t>(fb.N, 0));
  for (int32_t g = 0; g < fb.G; ++g) {
    const Group& grp = m.groups[g];
    const bool seedable = Seedable(m, grp);
    for (int32_t n = 0; n < fb.N; ++n) {
      if (!m.Fits(g, n)) continue;
      const int64_t b = PodsBound(fb, g, n, seedable);
      fb.ub[g][n] = static_cast<int32_t>(b);
      if (b > 0) {
        const double cost =
            (placed_is_constraint ? 0.0 : -grp.weight * m.placed_weight) - TieBreakWeight(m) * m.preference[g][n];
        f.x[g][n] = f.mip.AddColumn(0, static_cast<double>(b), cost, true);
      }
    }
  }
}

// u[n]: an unused node that some pod can go to is opened (a new node, worth 1).
void AddNodeColumns(FormulationBuilder& fb) {
  Formulation& f = fb.f;
  f.u.assign(fb.N, -1);
  for (int32_t n = 0; n < fb.N; ++n) {
    if (fb.m.nodes[n].in_use) continue;
    bool any = false;
    for (int32_t g = 0; g < fb.G && !any; ++g) any = f.x[g][n] >= 0;
    if (any) f.u[n] = f.mip.AddColumn(0, 1, 1, true);
  }
}

// The weighted pods placed, at least `placed_floor`.
void AddPlacedFloorRow(FormulationBuilder& fb, double placed_floor) {
  const Formulation& f = fb.f;
  auto r = MakeRow(placed_floor - 1e-6, MipProblem::kInf);
  for (int32_t g = 0; g < fb.G; ++g) {
    for (int32_t n = 0; n < fb.N; ++n) {
      if (f.x[g][n] >= 0) AddTerm(r, f.x[g][n], fb.m.groups[g].weight);
    }
  }
  fb.f.mip.AddRow(std::move(r));
}

// Pods per group.
void AddGroupCountRows(FormulationBuilder& fb) {
  Formulation& f = fb.f;
  for (int32_t g = 0; g < fb.G; ++g) {
    auto r = MakeRow(-MipProblem::kInf, fb.m.groups[g].count());
    for (int32_t n = 0; n < fb.N; ++n) {
      if (f.x[g][n] >= 0) AddTerm(r, f.x[g][n], 1);
    }
    if (!r.index.empty()) f.mip.AddRow(std::move(r));
  }
}

// Capacity, and the link from pods to the node they open.
void AddCapacityRows(FormulationBuilder& fb) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  MipProblem& p = f.mip;
  const auto& ub = fb.ub;
  for (int32_t n = 0; n < fb.N; ++n) {
    for (size_t d = 0; d < fb.R; ++d) {
      auto r = MakeRow(-MipProblem::kInf, f.u[n] >= 0 ? 0 : static_cast<double>(m.nodes[n].free[d]));
      double most = 0;
      for (int32_t g = 0; g < fb.G; ++g) {
        if (f.x[g][n] < 0 || m.groups[g].demand[d] == 0) continue;
        AddTerm(r, f.x[g][n], static_cast<double>(m.groups[g].demand[d]));
        most += static_cast<double>(m.groups[g].demand[d]) * ub[g][n];
      }
      if (r.index.empty()) continue;
      if (f.u[n] >= 0)
        AddTerm(r, f.u[n], -static_cast<double>(m.nodes[n].free[d]));
      else if (most <= static_cast<double>(m.nodes[n].free[d]))
        continue;
      p.AddRow(std::move(r));
    }
    if (f.u[n] >= 0) {
      for (int32_t g = 0; g < fb.G; ++g) {
        if (f.x[g][n] < 0) continue;
        auto r = MakeRow(-MipProblem::kInf, 0);
        AddTerm(r, f.x[g][n], 1);
        AddTerm(r, f.u[n], -ub[g][n]);
        p.AddRow(std::move(r));
      }
    }
  }
}

// Anti-affinity within the batch.
void AddAntiAffinityRows(FormulationBuilder& fb) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  MipProblem& p = f.mip;
  for (int32_t t = 0; t < static_cast<int32_t>(m.terms.size()); ++t) {
    const Term& term = m.terms[t];
    if (!term.anti) continue;
    const TopologyKey& key = m.keys[term.key];
    const int32_t g = term.owner;
    for (int32_t d = 0; d < key.num_domains; ++d) {
      const int32_t bg = fb.Presence(g, term.key, d);
      if (bg < 0) continue;
      if (term.matches_group[g] && !key.per_node) {
        auto r = MakeRow(-MipProblem::kInf, 1);
        for (int32_t n = 0; n < fb.N; ++n) {
          if (key.domain_of_node[n] == d && f.x[g][n] >= 0) AddTerm(r, f.x[g][n], 1);
        }
        p.AddRow(std::move(r));
      }
      for (int32_t h = 0; h < fb.G; ++h) {
        if (h == g || !term.matches_group[h]) continue;
        const int32_t bh = fb.Presence(h, term.key, d);
        if (bh < 0) continue;
        auto r = MakeRow(-MipProblem::kInf, 1);
        AddTerm(r, bg, 1);
        AddTerm(r, bh, 1);
        p.AddRow(std::move(r));
      }
    }
  }
}

// Required affinity: a domain holds the group only if it holds a matching pod already, a
// matching pod of another group, or (a series with affinity to itself) the series' first pod.
void AddAffinityRows(FormulationBuilder& fb) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  MipProblem& p = f.mip;
  for (int32_t g = 0; g < fb.G; ++g) {
    const Group& grp = m.groups[g];
    const bool seedable = Seedable(m, grp);
    for (int32_t t : grp.affinity_terms) {
      const Term& term = m.terms[t];
      const TopologyKey& key = m.keys[term.key];
      std::vector<int32_t> seed_cols(key.num_domains, -1);
      auto seed = MakeRow(-MipProblem::kInf, 1);
      for (int32_t d = 0; d < key.num_domains; ++d) {
        if (term.existing[d] > 0) continue;
        const int32_t bg = fb.Presence(g, term.key, d);
        if (bg < 0) continue;
        auto r = MakeRow(-MipProblem::kInf, 0);
        AddTerm(r, bg, 1);
        for (int32_t h = 0; h < fb.G; ++h) {
          if (h == g || !term.matches_group[h]) continue;
          const int32_t bh = fb.Presence(h, term.key, d);
          if (bh >= 0) AddTerm(r, bh, -1);
        }
        if (seedable) {
          seed_cols[d] = p.AddColumn(0, 1, 0, true);
          AddTerm(r, seed_cols[d], -1);
          AddTerm(seed, seed_cols[d], 1);
        }
        p.AddRow(std::move(r));
      }
      if (!seed.index.empty()) p.AddRow(std::move(seed));
      if (seedable) f.seeds.emplace_back(t, std::move(seed_cols));
    }
  }
}

// Topology spread (DoNotSchedule): every domain that receives the group stays within maxSkew
// of the least-loaded eligible domain.
void AddRowsOfSpread(FormulationBuilder& fb, int32_t c) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  MipProblem& p = f.mip;
  const Spread& s = m.spreads[c];
  const TopologyKey& key = m.keys[s.key];
  const int32_t g = s.owner;
  double big = 0;
  for (int32_t h = 0; h < fb.G; ++h) {
    if (s.matches_group[h]) big += m.groups[h].count();
  }
  int32_t most_existing = 0;
  for (int32_t e : s.existing) most_existing = std::max(most_existing, e);
  big += most_existing + s.max_skew;
  const bool use_min = s.num_eligible_domains >= s.min_domains;
  const int32_t min_col = use_min ? p.AddColumn(0, MipProblem::kInf, 0, false) : -1;
  f.spread_min.emplace_back(c, min_col);
  // count_d as a row expression: existing[d] + sum x over counted nodes of d.
  auto count_terms = [&](MipProblem::Row& r, int32_t d, double sign) {
    for (int32_t n = 0; n < fb.N; ++n) {
      if (key.domain_of_node[n] != d || !s.node_counts[n]) continue;
      for (int32_t h = 0; h < fb.G; ++h) {
        if (s.matches_group[h] && f.x[h][n] >= 0) AddTerm(r, f.x[h][n], sign);
      }
    }
  };
  for (int32_t d = 0; d < key.num_domains; ++d) {
    if (use_min && s.domain_eligible[d]) {
      // min <= count_d
      auto r = MakeRow(-MipProblem::kInf, s.existing[d]);
      AddTerm(r, min_col, 1);
      count_terms(r, d, -1);
      p.AddRow(std::move(r));
    }
    const int32_t bg = fb.Presence(g, s.key, d);
    if (bg < 0) continue;
    // count_d - min + big * B <= maxSkew + big (count_d counts only on eligible domains)
    auto r = MakeRow(-MipProblem::kInf, s.max_skew + big - (s.domain_eligible[d] ? s.existing[d] : 0));
    if (s.domain_eligible[d]) count_terms(r, d, 1);
    if (min_col >= 0) AddTerm(r, min_col, -1);
    // Presence may be the group's own pod-count column (a one-node domain where it fits at most
    // one pod), which count_d already holds when the group counts for its spread: one column, one
    // coefficient (a row naming a column twice is refused by every solver).
    if (auto same = std::find(r.index.begin(), r.index.end(), bg); same != r.index.end()) {
      r.value[static_cast<size_t>(same - r.index.begin())] += big;
    } else {
      AddTerm(r, bg, big);
    }
    p.AddRow(std::move(r));
  }
}

void AddSpreadRows(FormulationBuilder& fb) {
  for (int32_t c = 0; c < static_cast<int32_t>(fb.m.spreads.size()); ++c) AddRowsOfSpread(fb, c);
}

// Host ports: groups that conflict never share a node (each holds at most one pod there).
void AddPortRows(FormulationBuilder& fb) {
  const Formulation& f = fb.f;
  for (int32_t g = 0; g < fb.G; ++g) {
    for (int32_t h = g + 1; h < fb.G; ++h) {
      if (!fb.m.port_conflict[g][h]) continue;
      for (int32_t n = 0; n < fb.N; ++n) {
        if (f.x[g][n] < 0 || f.x[h][n] < 0) continue;
        auto r = MakeRow(-MipProblem::kInf, 1);
        AddTerm(r, f.x[g][n], 1);
        AddTerm(r, f.x[h][n], 1);
        fb.f.mip.AddRow(std::move(r));
      }
    }
  }
}

// Stranded accelerator units per node: s_n >= (free_a - sum d_a x) - (free_b - sum d_b x) / per_unit_b
// for every base dimension b, in units, at strand_weight each (s_n >= 0).
void AddStrandingRows(FormulationBuilder& fb) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  MipProblem& p = f.mip;
  for (size_t ai = 0; ai < m.accelerators.size(); ++ai) {
    const Accelerator& a = m.accelerators[ai];
    for (int32_t n = 0; n < fb.N; ++n) {
      if (m.nodes[n].free[a.dim] <= 0) continue;
      bool any = false;
      for (int32_t g = 0; g < fb.G && !any; ++g) any = f.x[g][n] >= 0;
      if (!any) continue;  // nothing can change there: a constant
      const int32_t col = p.AddColumn(0, MipProblem::kInf, m.strand_weight, false);
      for (const auto& [b, per_unit] : a.base) {
        const double rhs =
            static_cast<double>(m.nodes[n].free[a.dim]) - static_cast<double>(m.nodes[n].free[b]) / per_unit;
        auto r = MakeRow(rhs, MipProblem::kInf);
        AddTerm(r, col, a.unit);
        for (int32_t g = 0; g < fb.G; ++g) {
          if (f.x[g][n] < 0) continue;
          const double coef =
              static_cast<double>(m.groups[g].demand[a.dim]) - static_cast<double>(m.groups[g].demand[b]) / per_unit;
          if (coef != 0) AddTerm(r, f.x[g][n], coef);
        }
        p.AddRow(std::move(r));
      }
      f.strand.emplace_back(ai, n, col);
    }
  }
}

// Symmetry breaking: unused nodes of one class are interchangeable; open them in order.
void AddSymmetryRows(FormulationBuilder& fb) {
  const BatchModel& m = fb.m;
  Formulation& f = fb.f;
  std::vector<int32_t> last(m.num_classes, -1);
  for (int32_t n = 0; n < fb.N; ++n) {
    if (f.u[n] < 0) continue;
    int32_t& prev = last[m.nodes[n].node_class];
    if (prev >= 0) {
      auto r = MakeRow(0, MipProblem::kInf);
      AddTerm(r, f.u[prev], 1);
      AddTerm(r, f.u[n], -1);
      f.mip.AddRow(std::move(r));
    }
    prev = n;
  }
}

// `placed_floor`: when the pods placed are already proved optimal, they become a constraint (at
// least this weighted count) instead of the objective's top level, which keeps the objective's
// coefficients small for the levels left (stranding, new nodes, scores).
Formulation Formulate(const BatchModel& m, bool symmetry, std::optional<double> placed_floor = std::nullopt) {
  FormulationBuilder fb(m);
  AddPlacementColumns(fb, placed_floor.has_value());
  AddNodeColumns(fb);
  if (placed_floor) AddPlacedFloorRow(fb, *placed_floor);
  AddGroupCountRows(fb);
  AddCapacityRows(fb);
  AddAntiAffinityRows(fb);
  AddAffinityRows(fb);
  AddSpreadRows(fb);
  AddPortRows(fb);
  AddStrandingRows(fb);
  if (symmetry) AddSymmetryRows(fb);
  return std::move(fb.f);
}

// The start vector for the solver from a placement; nullopt when it does not satisfy the
// formulation (then the solver starts cold).
std::vector<double> StartOf(const BatchModel& m, const Formulation& f, const Counts& c, bool symmetry) {
  std::vector<double> x(f.mip.num_columns(), 0);
  const int32_t G = static_cast<int32_t>(m.groups.size());
  const int32_t N = static_cast<int32_t>(m.nodes.size());
  // With symmetry breaking the start must open nodes of a class in order: renumber.
  std::vector<int32_t> node_map(N);
  std::iota(node_map.begin(), node_map.end(), 0);
  if (symmetry) {
    std::vector<std::vector<int32_t>> used_of(m.num_classes), all_of(m.num_classes);
    for (int32_t n = 0; n < N; ++n) {
      if (f.u[n] < 0) continue;
      all_of[m.nodes[n].node_class].push_back(n);
      int32_t on = 0;
      for (int32_t g = 0; g < G; ++g) on += c[g][n];
      if (on > 0) used_of[m.nodes[n].node_class].push_back(n);
    }
    for (int32_t k = 0; k < m.num_classes; ++k) {
      std::vector<int32_t> rest;
      for (int32_t n : all_of[k]) {
        if (std::find(used_of[k].begin(), used_of[k].end(), n) == used_of[k].end()) rest.push_back(n);
      }
      std::vector<int32_t> from = used_of[k];
      from.insert(from.end(), rest.begin(), rest.end());
      for (size_t i = 0; i < from.size(); ++i) node_map[from[i]] = all_of[k][i];
    }
  }
  for (int32_t g = 0; g < G; ++g) {
    for (int32_t n = 0; n < N; ++n) {
      if (c[g][n] == 0) continue;
      const int32_t to = node_map[n];
      if (f.x[g][to] < 0) return {};
      x[f.x[g][to]] = c[g][n];
      if (f.u[to] >= 0) x[f.u[to]] = 1;
    }
  }
  for (const auto& [k, col] : f.presence) {
    if (col < 0) continue;
    const auto [g, key, d] = k;
    for (int32_t n = 0; n < N; ++n) {
      if (m.keys[key].domain_of_node[n] == d && f.x[g][n] >= 0 && x[f.x[g][n]] > 0) x[col] = 1;
    }
  }
  for (const auto& [t, cols] : f.seeds) {
    const Term& term = m.terms[t];
    for (size_t d = 0; d < cols.size(); ++d) {
      if (cols[d] < 0) continue;
      const auto it = f.presence.find({term.owner, term.key, static_cast<int32_t>(d)});
      if (it == f.presence.end() || it->second < 0 || x[it->second] == 0) continue;
      bool other = false;
      for (size_t h = 0; h < m.groups.size(); ++h) {
        if (static_cast<int32_t>(h) == term.owner || !term.matches_group[h]) continue;
        auto o = f.presence.find({static_cast<int32_t>(h), term.key, static_cast<int32_t>(d)});
        other = other || (o != f.presence.end() && o->second >= 0 && x[o->second] > 0);
      }
      if (!other) x[cols[d]] = 1;
    }
  }
  for (const auto& [c, col] : f.spread_min) {
    if (col < 0) continue;
    const Spread& s = m.spreads[c];
    const TopologyKey& key = m.keys[s.key];
    double mn = MipProblem::kInf;
    for (int32_t d = 0; d < key.num_domains; ++d) {
      if (!s.domain_eligible[d]) continue;
      double cnt = s.existing[d];
      for (int32_t n = 0; n < N; ++n) {
        if (key.domain_of_node[n] != d || !s.node_counts[n]) continue;
        for (int32_t h = 0; h < G; ++h) {
          if (s.matches_group[h] && f.x[h][n] >= 0) cnt += x[f.x[h][n]];
        }
      }
      mn = std::min(mn, cnt);
    }
    x[col] = mn == MipProblem::kInf ? 0 : mn;
  }
  for (const auto& [ai, n, col] : f.strand) {
    const Accelerator& a = m.accelerators[ai];
    auto free_after = [&](int32_t d) {
      double v = static_cast<double>(m.nodes[n].free[d]);
      for (int32_t g = 0; g < G; ++g) {
        if (f.x[g][n] >= 0) v -= static_cast<double>(m.groups[g].demand[d]) * x[f.x[g][n]];
      }
      return v;
    };
    double need = 0;
    for (const auto& [b, per_unit] : a.base) need = std::max(need, free_after(a.dim) - free_after(b) / per_unit);
    x[col] = need / a.unit;
  }
  return x;
}

// --- Validation: replay the counts pod by pod --------------------------------------------------

struct Ordered {
  std::vector<std::pair<int32_t, int32_t>> steps;  // (group, node) in cycle order
  PlacementState state;
};

Ordered Order(const BatchModel& m, const Counts& target, const std::vector<int32_t>& order) {
  Ordered out{{}, PlacementState(m)};
  PlacementState& s = out.state;
  const int32_t N = static_cast<int32_t>(m.nodes.size());
  Counts left = target;
  // Priority levels in the order the queue pops them; within a level, round-robin passes over
  // the groups (targets of affinity first) and their nodes, one pod per node and pass, which is
  // the order in which spread constraints admit their pods.
  size_t i = 0;
  while (i < order.size()) {
    size_t j = i;
    while (j < order.size() && m.groups[order[j]].priority == m.groups[order[i]].priority) ++j;
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t k = i; k < j; ++k) {
        const int32_t g = order[k];
        for (int32_t n = 0; n < N; ++n) {
          if (left[g][n] == 0 || !s.Check(g, n).ok()) continue;
          s.Place(g, n);
          --left[g][n];
          out.steps.emplace_back(g, n);
          progress = true;
        }
      }
    }
    // What could not be ordered as planned is placed wherever it passes now (repair).
    for (size_t k = i; k < j; ++k) {
      const int32_t g = order[k];
      int32_t missing = 0;
      for (int32_t n = 0; n < N; ++n) missing += left[g][n];
      for (; missing > 0; --missing) {
        const int32_t n = PlaceOne(m, s, g);
        if (n < 0) break;
        out.steps.emplace_back(g, n);
      }
    }
    i = j;
  }
  return out;
}

std::string UnplacedReason(const BatchModel& m, const PlacementState& s, int32_t g) {
  std::map<std::string, int32_t> reasons;
  int32_t fits = 0;
  for (int32_t n = 0; n < static_cast<int32_t>(m.nodes.size()); ++n) {
    Rejection r = s.Check(g, n);
    if (r.ok()) {
      ++fits;
      continue;
    }
    std::string why = r.kind == Rejection::Kind::kFilters ? m.StaticReason(g, n) : s.Describe(g, r);
    ++reasons[why];
  }
  std::vector<std::pair<int32_t, std::string>> sorted;
  for (auto& [why, n] : reasons) sorted.emplace_back(n, why);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = fmt::format("0/{} nodes can take one more pod of {} in the batch's best placement:",
                                m.nodes.size() - static_cast<size_t>(fits), m.groups[g].name);
  if (fits > 0) {
    out = fmt::format("the batch's best placement leaves no room for this pod of {}", m.groups[g].name);
    return out;
  }
  bool first = true;
  for (const auto& [n, why] : sorted) {
    out += fmt::format("{} {} {}", first ? "" : ",", n, why);
    first = false;
  }
  return out + ".";
}

// The placement a solver's counts describe, as a state (no checks: the counts satisfy the model).
PlacementState StateOf(const BatchModel& m, const Counts& c) {
  PlacementState s(m);
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      for (int32_t k = 0; k < c[g][n]; ++k) s.Place(static_cast<int32_t>(g), static_cast<int32_t>(n));
    }
  }
  return s;
}

// Between placements equal on the levels above it, the profile's scores decide.
double TieBreak(const BatchModel& m, const PlacementState& s) {
  double t = 0;
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      t += m.preference[g][n] * s.count(static_cast<int32_t>(g), static_cast<int32_t>(n));
    }
  }
  return t;
}

// The objective's weights, lexicographic: one more pod (of the lowest priority) outweighs every
// stranded accelerator unit and every new node; one stranded unit outweighs every new node.
void AssignObjectiveWeights(BatchModel& m) {
  double unused_nodes = 0;
  for (const auto& n : m.nodes) unused_nodes += n.in_use ? 0 : 1;
  double most_stranded = 0;
  for (const auto& a : m.accelerators) {
    for (const auto& n : m.nodes) most_stranded += static_cast<double>(n.free[a.dim]) / a.unit;
  }
  m.strand_weight = m.accelerators.empty() ? 0 : unused_nodes + 1;
  m.placed_weight = m.strand_weight * (std::ceil(most_stranded) + 1) + unused_nodes + 1;
}

// The pattern LP's bound on the weighted pods the batch can place (pattern_bound.h). Nodes are
// grouped by what the model lets each group do there and by their free room rounded up to a grid
// that keeps the classes few (a class's capacity is its largest member's: a relaxation, so the
// bound stays one). Constraints between pods (affinity, spreading) are left out: also a
// relaxation.
struct PlacedBound {
  double bound = 0;
  bool converged = false;
  int32_t classes = 0;
  double seconds = 0;
};

PlacedBound BoundPlaced(const BatchModel& m, double time_limit_seconds) {
  PlacedBound out;
  const auto started = Clock::now();
  const int32_t G = static_cast<int32_t>(m.groups.size());
  const int32_t N = static_cast<int32_t>(m.nodes.size());
  const size_t R = m.resources.size();
  PatternBoundInput in;
  in.num_resources = R;
  double trivial = 0;
  for (const auto& g : m.groups) {
    in.shapes.push_back({g.demand, g.count(), g.weight});
    trivial += g.weight * g.count();
  }
  out.bound = trivial;
  if (G == 0 || N == 0) return out;
  // At most one pod of a group per node: its own anti-affinity per node, or its host ports.
  std::vector<int32_t> one_per_node(G, 0);
  for (int32_t g = 0; g < G; ++g) {
    if (m.port_conflict[g][g]) one_per_node[g] = 1;
    for (int32_t t : m.groups[g].anti_terms) {
      if (m.terms[t].matches_group[g] && m.keys[m.terms[t].key].per_node) one_per_node[g] = 1;
    }
  }
  std::vector<int64_t> top(R, 1);
  for (const auto& n : m.nodes) {
    for (size_t d = 0; d < R; ++d) top[d] = std::max(top[d], n.free[d]);
  }
  constexpr size_t kMaxClasses = 64;
  for (int64_t steps = 1 << 16; steps >= 1; steps /= 4) {
    std::map<std::vector<int64_t>, size_t> index;
    std::vector<PatternBoundInput::NodeClass> classes;
    for (int32_t n = 0; n < N; ++n) {
      std::vector<int64_t> key;
      key.reserve(G + R);
      for (int32_t g = 0; g < G; ++g) key.push_back(m.Fits(g, n) ? 1 : 0);
      for (size_t d = 0; d < R; ++d) {
        const int64_t step = std::max<int64_t>(1, top[d] / steps);
        key.push_back((m.nodes[n].free[d] + step - 1) / step);
      }
      auto [it, inserted] = index.emplace(std::move(key), classes.size());
      if (inserted) {
        PatternBoundInput::NodeClass c;
        c.capacity = m.nodes[n].free;
        c.max_per_node.resize(G);
        for (int32_t g = 0; g < G; ++g) {
          c.max_per_node[g] = !m.Fits(g, n) ? 0 : one_per_node[g] ? 1 : std::numeric_limits<int32_t>::max();
        }
        classes.push_back(std::move(c));
      } else {
        auto& c = classes[it->second];
        for (size_t d = 0; d < R; ++d) c.capacity[d] = std::max(c.capacity[d], m.nodes[n].free[d]);
      }
      classes[it->second].count += 1;
    }
    if (classes.size() <= kMaxClasses || steps == 1) {
      in.classes = std::move(classes);
      break;
    }
  }
  out.classes = static_cast<int32_t>(in.classes.size());
  PatternBoundOptions options;
  options.time_limit_seconds = std::max(0.001, time_limit_seconds);
  if (auto r = ComputePatternBound(in, options)) {
    out.bound = std::min(out.bound, r->bound);
    out.converged = r->converged;
  }
  out.seconds = SecondsSince(started);
  return out;
}

struct Candidate {
  Counts counts;
  double objective = 0;
  double tie_break = 0;
  std::string source;  // "greedy", "packing", the solver's name
};

// Whether a is better than b: a lower objective (by at least half a new node, the smallest step
// of the integral levels), else equal and preferred by the profile's scores.
bool Better(const Candidate& a, const Candidate& b) {
  if (a.objective < b.objective - 0.5) return true;
  return a.objective < b.objective + 0.5 && a.tie_break > b.tie_break + 1e-9;
}

// --- The stages of PlaceBatch ----------------------------------------------------------------

// What PlaceBatch's stages share: the model, the incumbent, and what is proved about it.
struct BatchRun {
  BatchRun(const BatchModel& model, const PlacementOptions& opts, Clock::time_point until, PlacementResult& out)
      : m(model), options(opts), deadline(until), result(out) {}

  const BatchModel& m;
  const PlacementOptions& options;
  const Clock::time_point deadline;
  PlacementResult& result;
  std::vector<int32_t> order;  // GroupOrder
  double total_weight = 0;     // of every pod of the batch
  Candidate best;              // the incumbent
  double greedy_objective = 0;
  PlacedBound placed_bound;
  double best_weighted_placed = 0;
  double bound = 0;  // on the objective
  bool optimal = false;
  bool placed_proved = false;
};

double WeightedPlaced(const BatchModel& m, const PlacementState& s) {
  double w = 0;
  for (size_t g = 0; g < m.groups.size(); ++g) w += m.groups[g].weight * s.placed(static_cast<int32_t>(g));
  return w;
}

// grouping, after BuildModel: the objective's weights, and the model's size in the result.
void FinishGrouping(BatchModel& m, PlacementResult& result) {
  AssignWeights(m);
  AssignObjectiveWeights(m);
  result.groups = static_cast<int32_t>(m.groups.size());
  result.node_classes = m.num_classes;
  result.accelerators = static_cast<int32_t>(m.accelerators.size());
}

// heuristic: what the default profile would do one by one (the baseline), and packing with
// node-emptying local search; the better is the incumbent.
void RunHeuristics(BatchRun& run) {
  const BatchModel& m = run.m;
  PlacementResult& result = run.result;
  PlacementState greedy = ConstructAsScheduled(m);
  result.greedy_placed = 0;
  for (size_t g = 0; g < m.groups.size(); ++g) result.greedy_placed += greedy.placed(static_cast<int32_t>(g));
  result.greedy_new_nodes = greedy.new_nodes_used();
  result.greedy_stranded = greedy.stranded();
  run.best = Candidate{CountsOf(m, greedy), greedy.Objective(), TieBreak(m, greedy), "greedy"};
  run.greedy_objective = run.best.objective;
  if (!run.options.heuristic) return;
  PlacementState packed = ConstructPacked(m, run.order);
  EmptyNodes(m, packed, run.order, run.deadline);
  Candidate c{CountsOf(m, packed), packed.Objective(), TieBreak(m, packed), "packing"};
  if (Better(c, run.best)) run.best = std::move(c);
  PlacementState arrival = ConstructPackedInQueueOrder(m);
  EmptyNodes(m, arrival, run.order, run.deadline);
  Candidate a{CountsOf(m, arrival), arrival.Objective(), TieBreak(m, arrival), "packing in queue order"};
  KS_LOG_V(3).InfoS("BatchPlacement candidates", "greedyPlaced", result.greedy_placed, "packedPlaced",
                    packed.placed_total(), "packedStranded", packed.stranded(), "arrivalPlaced", arrival.placed_total(),
                    "arrivalStranded", arrival.stranded());
  if (Better(a, run.best)) run.best = std::move(a);
}

// bound: on the pods placed (the pattern LP), and on the objective (every pod placed, the new
// nodes the resources need at least, no stranding beyond what cannot change).
void BoundIncumbent(BatchRun& run) {
  const BatchModel& m = run.m;
  const PlacementOptions& options = run.options;
  const double bound_seconds =
      std::clamp(0.05 * options.timeout_seconds, 0.001, std::max(0.001, 0.2 * options.timeout_seconds));
  run.placed_bound = options.bound ? BoundPlaced(m, bound_seconds) : PlacedBound{run.total_weight};
  run.result.bound_seconds = run.placed_bound.seconds;
  run.best_weighted_placed = WeightedPlaced(m, StateOf(m, run.best.counts));
  run.bound = (run.total_weight - run.placed_bound.bound) * m.placed_weight + NewNodesLowerBound(m);
  run.optimal = run.best.objective <= run.bound + 0.5;
  // The placed level is proved once the incumbent meets the pattern bound: then only the levels
  // below it (stranding, new nodes) are left to the solver.
  run.placed_proved = run.best_weighted_placed >= run.placed_bound.bound - 1e-6;
  run.result.stopped_by = run.optimal ? "heuristic" : "no solver";
}

// A small batch (a replay's arrivals one or a few at a time): every placement is tried up to
// symmetry (enumerate.h), which proves the best optimal without a solver, whose process would cost
// more than the rest of the pods' cycles. One that takes more than max_enumeration_steps is left to
// the solver, with what the search found as a candidate.
void ExhaustSmallBatch(BatchRun& run) {
  const BatchModel& m = run.m;
  if (run.optimal || !run.options.enumerate || m.groups.empty() || !Enumerable(m)) return;
  Enumerated e = EnumeratePlacements(m, run.order, TieBreakWeight(m), run.options.max_enumeration_steps, run.deadline);
  if (!e.found) return;
  // Complete, the search's answer is the optimum of the solver's formulation, the incumbent's
  // placement among those it tried; else a candidate like the heuristics' (the solver starts from
  // the better).
  Candidate found{std::move(e.counts), e.objective, e.tie_break, "every placement tried"};
  if (e.complete || Better(found, run.best)) run.best = std::move(found);
  if (!e.complete) return;
  run.optimal = true;
  run.bound = run.best.objective;
  run.result.stopped_by = fmt::format("every placement tried ({} steps)", e.steps);
}

// The (group, node) pairs the profile's filters accept: the exact stage's columns at most.
int64_t FittingPairs(const BatchModel& m) {
  int64_t pairs = 0;
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) pairs += m.Fits(static_cast<int32_t>(g), static_cast<int32_t>(n));
  }
  return pairs;
}

// A solver's answer (feasible or optimal) becomes the incumbent unless it is worse.
void AdoptSolverAnswer(BatchRun& run, const Formulation& f, const MipResult& r) {
  const BatchModel& m = run.m;
  // The formulation leaves out constants (every pod's weight, the stranding on nodes it
  // cannot change): the answer's objective is recomputed as a state, and its bound shifted
  // by the same constants.
  Counts c(m.groups.size(), std::vector<int32_t>(m.nodes.size(), 0));
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      if (f.x[g][n] >= 0) c[g][n] = static_cast<int32_t>(std::lround(r.x[f.x[g][n]]));
    }
  }
  const PlacementState solved = StateOf(m, c);
  double tie_break_part = 0;
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) tie_break_part += TieBreakWeight(m) * m.preference[g][n] * c[g][n];
  }
  const double constants = solved.Objective() - (r.objective + tie_break_part);
  // The tie-break term is <= 0, so the bound on the total bounds the levels above it.
  run.bound = std::max(run.bound, r.bound + constants);
  Candidate cand{std::move(c), solved.Objective(), TieBreak(m, solved), run.result.solver};
  // Started from the incumbent, the solver's answer is no worse on the levels above the
  // tie-break, and at least as good on it when they are equal.
  if (!Better(run.best, cand)) run.best = std::move(cand);
  run.optimal = r.status == MipResult::Status::kOptimal;
  run.result.stopped_by = run.optimal ? "optimal" : r.message.empty() ? "deadline" : "solver: " + r.message;
}

// The integer program, warm-started from the incumbent, under the deadline.
void SolveExact(BatchRun& run, int64_t pairs) {
  const BatchModel& m = run.m;
  const PlacementOptions& options = run.options;
  PlacementResult& result = run.result;
  Formulation f = Formulate(m, options.presolve,
                            run.placed_proved ? std::optional<double>(run.best_weighted_placed) : std::nullopt);
  if (!MakeMipSolver(options.solver)) return;
  MipOptions mo;
  mo.seed = options.seed;
  // CBC checks its clock between nodes and overruns a little on large models: leave it a margin.
  mo.time_limit_seconds = std::max(0.05, 0.9 * std::chrono::duration<double>(run.deadline - Clock::now()).count());
  std::vector<double> warm = StartOf(m, f, run.best.counts, options.presolve);
  if (!warm.empty()) mo.start = std::move(warm);
  // A solver that fails hands over to the next with the time left (mip.h).
  FallbackResult answer = SolveWithFallback(f.mip, mo, FallbackOrder(options.solver));
  const MipResult& r = answer.result;
  result.solver = answer.solver;
  result.solver_seconds = r.seconds;
  if (r.status == MipResult::Status::kOptimal || r.status == MipResult::Status::kFeasible) {
    AdoptSolverAnswer(run, f, r);
  } else if (r.status == MipResult::Status::kInfeasible) {
    // Cannot happen with the empty placement feasible; keep the heuristic's answer.
    result.stopped_by = "solver: infeasible";
  } else {
    result.stopped_by = r.status == MipResult::Status::kNoSolution ? "deadline" : "solver error: " + r.message;
  }
  result.stopped_by = answer.Describe(result.stopped_by) + fmt::format(" ({} group-node pairs)", pairs);
}

// exact: unless the incumbent is proved optimal or the model too large for a solver.
void RunExact(BatchRun& run) {
  const BatchModel& m = run.m;
  const PlacementOptions& options = run.options;
  const int64_t pairs = FittingPairs(m);
  if (!run.optimal && options.exact && pairs > options.max_exact_columns) {
    run.result.stopped_by = fmt::format("model too large for the exact stage ({} group-node pairs)", pairs);
  } else if (!run.optimal && options.exact && run.placed_proved &&
             (pairs > options.max_exact_columns_when_placed_proved ||
              static_cast<int64_t>(m.groups.size()) * m.num_classes > options.max_group_classes_when_placed_proved)) {
    // The pods placed already meet the pattern bound: what a solver could still improve (stranding,
    // new nodes) is not worth its time on a model this size.
    run.result.stopped_by = fmt::format(
        "pods placed proved optimal by the pattern bound; stranding and new nodes left to the heuristic ({} "
        "group-node pairs, {} groups x {} node classes)",
        pairs, m.groups.size(), m.num_classes);
  } else if (!run.optimal && options.exact && !m.groups.empty()) {
    SolveExact(run, pairs);
  }
}

// The plan: the placed pods in the order their cycles must run, then the pods left out with why.
void AppendPlan(const BatchModel& m, const Ordered& ordered, PlacementResult& result) {
  const PlacementState& final_state = ordered.state;
  std::vector<size_t> next(m.groups.size(), 0);
  std::vector<int32_t> fitting(m.groups.size(), 0);
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t n = 0; n < m.nodes.size(); ++n) fitting[g] += m.Fits(static_cast<int32_t>(g), static_cast<int32_t>(n));
  }
  for (auto [g, n] : ordered.steps) {
    result.plan.push_back({m.groups[g].pods[next[g]++], m.nodes[n].info->name(), fitting[g]});
  }
  for (size_t g = 0; g < m.groups.size(); ++g) {
    if (next[g] < m.groups[g].pods.size()) {
      const std::string why = UnplacedReason(m, final_state, static_cast<int32_t>(g));
      for (; next[g] < m.groups[g].pods.size(); ++next[g]) {
        result.plan.push_back({m.groups[g].pods[next[g]], "", fitting[g]});
        result.unplaced_reasons.emplace_back(m.groups[g].pods[next[g]]->pod().metadata.uid, why);
      }
    }
  }
}

// validation: the incumbent replayed pod by pod, and what it achieves.
void Validate(BatchRun& run) {
  const BatchModel& m = run.m;
  PlacementResult& result = run.result;
  Ordered ordered = Order(m, run.best.counts, run.order);
  const PlacementState& final_state = ordered.state;
  AppendPlan(m, ordered, result);
  for (size_t g = 0; g < m.groups.size(); ++g) result.placed += final_state.placed(static_cast<int32_t>(g));
  result.unplaced = static_cast<int32_t>(m.num_pods) - result.placed;
  result.new_nodes_used = final_state.new_nodes_used();
  result.stranded = final_state.stranded();
  const double final_obj = final_state.Objective();
  // Validation may only lose what the ordering could not repair; the bound stays a bound.
  result.optimal = run.optimal && final_obj <= run.best.objective + 0.5;
  result.gap = result.optimal ? 0 : std::max(0.0, (final_obj - run.bound) / std::max(1.0, final_obj));
  const PlacedBound& placed_bound = run.placed_bound;
  result.placed_bound = placed_bound.bound;
  result.placed_weighted = WeightedPlaced(m, final_state);
  result.placed_gap =
      placed_bound.bound > 0 ? std::max(0.0, (placed_bound.bound - result.placed_weighted) / placed_bound.bound) : 0;
  result.source = run.best.source;
  // The decision: a plan only when it beats what the profile would do one by one. Otherwise the
  // pods go through their own cycles unplanned, exactly as without the batch.
  result.apply_plan = final_obj < run.greedy_objective - 0.5;
}

}  // namespace

PlacementResult PlaceBatch(const PlacementInput& input, const PlacementOptions& options) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(std::max(0.0, options.timeout_seconds)));
  PlacementResult result;
  BatchModel m = BuildModel(input);
  FinishGrouping(m, result);
  BatchRun run(m, options, deadline, result);
  run.order = GroupOrder(m);
  for (const auto& g : m.groups) run.total_weight += g.weight * g.count();
  RunHeuristics(run);
  BoundIncumbent(run);
  ExhaustSmallBatch(run);
  RunExact(run);
  Validate(run);
  result.seconds = SecondsSince(start);
  return result;
}

}  // namespace kubesched::optimizer
