#include "optimizer/placement_state.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace kubesched::optimizer {

PlacementState::PlacementState(const BatchModel& model) : model_(&model) {
  const size_t G = model.groups.size();
  const size_t N = model.nodes.size();
  count_.assign(G, std::vector<int32_t>(N, 0));
  used_.assign(N, std::vector<int64_t>(model.resources.size(), 0));
  on_node_.assign(N, 0);
  placed_.assign(G, 0);
  term_count_.resize(model.terms.size());
  owner_count_.resize(model.terms.size());
  term_total_.assign(model.terms.size(), 0);
  for (size_t t = 0; t < model.terms.size(); ++t) {
    const int32_t domains = model.keys[model.terms[t].key].num_domains;
    term_count_[t].assign(domains, 0);
    owner_count_[t].assign(domains, 0);
  }
  if (!model.accelerators.empty()) {
    stranded_.resize(N);
    for (size_t n = 0; n < N; ++n) {
      stranded_[n] = model.Stranded(model.nodes[n].free);
      stranded_total_ += stranded_[n];
    }
  }
  spread_count_.resize(model.spreads.size());
  spread_min_.assign(model.spreads.size(), 0);
  for (size_t c = 0; c < model.spreads.size(); ++c) {
    spread_count_[c] = model.spreads[c].existing;
    RecomputeSpreadMin(static_cast<int32_t>(c));
  }
}

void PlacementState::RecomputeSpreadMin(int32_t c) {
  const Spread& s = model_->spreads[c];
  // Upstream: with fewer eligible domains than minDomains the global minimum is taken as 0.
  if (s.num_eligible_domains < s.min_domains) {
    spread_min_[c] = 0;
    return;
  }
  int32_t mn = std::numeric_limits<int32_t>::max();
  for (size_t d = 0; d < s.domain_eligible.size(); ++d) {
    if (s.domain_eligible[d]) mn = std::min(mn, spread_count_[c][d]);
  }
  spread_min_[c] = mn == std::numeric_limits<int32_t>::max() ? 0 : mn;
}

Rejection PlacementState::Check(int32_t g, int32_t n) const {
  const BatchModel& m = *model_;
  const Group& group = m.groups[g];
  if (!m.Fits(g, n)) return {Rejection::Kind::kFilters, -1};
  for (size_t d = 0; d < group.demand.size(); ++d) {
    if (group.demand[d] > 0 && used_[n][d] + group.demand[d] > m.nodes[n].free[d]) {
      return {Rejection::Kind::kResources, static_cast<int32_t>(d)};
    }
  }
  for (int32_t h : m.port_conflicts_of[g]) {
    if (count_[h][n] > 0) return {Rejection::Kind::kPorts, h};
  }
  // The pod's anti-affinity against batch pods already placed.
  for (int32_t t : group.anti_terms) {
    const int32_t d = DomainOf(m.terms[t].key, n);
    if (d >= 0 && term_count_[t][d] > 0) return {Rejection::Kind::kAntiAffinity, t};
  }
  // Placed batch pods' anti-affinity against this pod.
  for (int32_t t : group.anti_terms_matching) {
    const int32_t d = DomainOf(m.terms[t].key, n);
    if (d >= 0 && owner_count_[t][d] > 0) return {Rejection::Kind::kAntiAffinity, t};
  }
  // Required affinity, with upstream's exception for the first pod of a series that has
  // affinity to itself: no pod anywhere matches any term and the pod matches all of them.
  if (!group.affinity_terms.empty()) {
    bool all_exist = true;
    int32_t missing = -1;
    for (int32_t t : group.affinity_terms) {
      const int32_t d = DomainOf(m.terms[t].key, n);
      if (d < 0) return {Rejection::Kind::kAffinity, t};
      if (m.terms[t].existing[d] + term_count_[t][d] <= 0) {
        all_exist = false;
        if (missing < 0) missing = t;
      }
    }
    if (!all_exist) {
      bool none_anywhere = true;
      for (int32_t t : group.affinity_terms)
        none_anywhere = none_anywhere && m.terms[t].existing_total + term_total_[t] == 0;
      if (!(none_anywhere && group.matches_own_affinity)) return {Rejection::Kind::kAffinity, missing};
    }
  }
  for (int32_t c : group.spreads) {
    const Spread& s = m.spreads[c];
    const int32_t d = DomainOf(s.key, n);
    if (d < 0) return {Rejection::Kind::kSpread, c};
    const int32_t self = s.self_match ? 1 : 0;
    const int32_t match_num = s.domain_eligible[d] ? spread_count_[c][d] : 0;
    if (match_num + self - spread_min_[c] > s.max_skew) return {Rejection::Kind::kSpread, c};
  }
  return {};
}

void PlacementState::Apply(int32_t g, int32_t n, int32_t delta) {
  const BatchModel& m = *model_;
  const Group& group = m.groups[g];
  const bool was_new_used = !m.nodes[n].in_use && on_node_[n] > 0;
  count_[g][n] += delta;
  placed_[g] += delta;
  on_node_[n] += delta;
  for (size_t d = 0; d < group.demand.size(); ++d) used_[n][d] += delta * group.demand[d];
  for (int32_t t : group.terms_matching) {
    const int32_t d = DomainOf(m.terms[t].key, n);
    term_total_[t] += delta;
    if (d >= 0) term_count_[t][d] += delta;
  }
  for (int32_t t : group.anti_terms) {
    const int32_t d = DomainOf(m.terms[t].key, n);
    if (d >= 0) owner_count_[t][d] += delta;
  }
  for (int32_t c : group.spreads_matching) {
    const Spread& s = m.spreads[c];
    const int32_t d = DomainOf(s.key, n);
    if (d < 0 || !s.node_counts[n]) continue;
    spread_count_[c][d] += delta;
    RecomputeSpreadMin(c);
  }
  const bool is_new_used = !m.nodes[n].in_use && on_node_[n] > 0;
  new_nodes_used_ += static_cast<int32_t>(is_new_used) - static_cast<int32_t>(was_new_used);
  if (!stranded_.empty()) {
    thread_local std::vector<int64_t> free;
    free.resize(used_[n].size());
    for (size_t d = 0; d < free.size(); ++d) free[d] = m.nodes[n].free[d] - used_[n][d];
    const double now = m.Stranded(free);
    stranded_total_ += now - stranded_[n];
    stranded_[n] = now;
  }
}

double PlacementState::StrandedDelta(int32_t g, int32_t n) const {
  if (stranded_.empty()) return 0;
  const BatchModel& m = *model_;
  thread_local std::vector<int64_t> free;
  free.resize(used_[n].size());
  for (size_t d = 0; d < free.size(); ++d) free[d] = m.nodes[n].free[d] - used_[n][d] - m.groups[g].demand[d];
  return m.Stranded(free) - stranded_[n];
}

void PlacementState::Place(int32_t g, int32_t n) { Apply(g, n, +1); }
void PlacementState::Remove(int32_t g, int32_t n) { Apply(g, n, -1); }

double PlacementState::Objective() const {
  double unplaced = 0;
  for (size_t g = 0; g < model_->groups.size(); ++g) {
    unplaced += model_->groups[g].weight * (model_->groups[g].count() - placed_[g]);
  }
  return unplaced * model_->placed_weight + stranded_total_ * model_->strand_weight + new_nodes_used_;
}

std::string PlacementState::Describe(int32_t g, const Rejection& r) const {
  const BatchModel& m = *model_;
  switch (r.kind) {
    case Rejection::Kind::kNone:
      return "";
    case Rejection::Kind::kFilters:
      return "rejected by the profile's filters";
    case Rejection::Kind::kResources:
      return "Insufficient " + m.resources[r.index];
    case Rejection::Kind::kPorts:
      return fmt::format("host port in use by {}", m.groups[r.index].name);
    case Rejection::Kind::kAntiAffinity: {
      const Term& t = m.terms[r.index];
      if (t.owner == g) return fmt::format("pod anti-affinity ({})", t.description);
      return fmt::format("pod anti-affinity of {} ({})", m.groups[t.owner].name, t.description);
    }
    case Rejection::Kind::kAffinity:
      return fmt::format("pod affinity ({})", m.terms[r.index].description);
    case Rejection::Kind::kSpread:
      return fmt::format("topology spread (maxSkew {} on {})", m.spreads[r.index].max_skew,
                         m.keys[m.spreads[r.index].key].name);
  }
  return "";
}

}  // namespace kubesched::optimizer
