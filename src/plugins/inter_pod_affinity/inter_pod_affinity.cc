// The plugin's construction, shared data structures and queueing hints (upstream's plugin.go).

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <algorithm>
#include <unordered_set>

#include "plugins/inter_pod_affinity/internal.h"

namespace kubesched::plugins::inter_pod_affinity {
namespace {

using framework::QueueingHint;

const api::Labels kEmptyLabels;

void InsertSorted(std::vector<std::string>& v, std::string_view s) {
  auto it = std::lower_bound(v.begin(), v.end(), s);
  if (it == v.end() || *it != s) v.insert(it, std::string(s));
}

// A pod the caller owns, viewed as a shared_ptr without taking ownership, so that PodInfo can
// parse its terms for the duration of a call.
framework::PodInfoPtr BorrowedPodInfo(const api::Pod& pod) {
  return framework::PodInfo::Create(std::shared_ptr<const api::Pod>(std::shared_ptr<const api::Pod>(), &pod));
}

// Whether `other` matches one of the pending pod's terms, its namespace resolved as PreFilter
// does (the namespace's labels against a non-empty namespaceSelector; an empty one matches all).
bool PendingTermMatches(const framework::AffinityTerm& term, const api::Pod& other,
                        const framework::ClusterClient& client) {
  if (!term.namespace_selector) return term.Matches(other, nullptr);
  if (term.namespace_selector->Empty()) return term.Matches(other, &kEmptyLabels);
  std::optional<api::Labels> labels = client.NamespaceLabels(other.metadata.namespace_);
  return term.Matches(other, labels ? &*labels : nullptr);
}

bool SamePod(const api::Pod& a, const api::Pod& b) {
  if (!a.metadata.uid.empty() || !b.metadata.uid.empty()) return a.metadata.uid == b.metadata.uid;
  return a.metadata.namespace_ == b.metadata.namespace_ && a.metadata.name == b.metadata.name;
}

bool PendingMatchesAll(const std::vector<framework::AffinityTerm>& terms, const api::Pod& other,
                       const framework::ClusterClient& client) {
  if (terms.empty()) return false;
  return std::all_of(terms.begin(), terms.end(),
                     [&](const framework::AffinityTerm& t) { return PendingTermMatches(t, other, client); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TopologyCounts

size_t TopologyCounts::Row(std::string_view key, const framework::NodeInfoLister* lister) {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].key == key) return r;
  }
  KeyRow row;
  row.key = std::string(key);
  if (lister != nullptr) row.domains = lister->Domains(key);
  row.counts.assign(row.num_domains(), 0);
  rows_.push_back(std::move(row));
  return rows_.size() - 1;
}

int32_t TopologyCounts::FindSlotOfValue(const KeyRow& row, std::string_view value) const {
  if (row.domains) {
    const int32_t d = row.domains->DomainOfValue(value);
    if (d >= 0) return d;
  }
  for (size_t j = 0; j < row.extra_values.size(); ++j) {
    if (row.extra_values[j] == value) return static_cast<int32_t>(row.num_domains() + j);
  }
  return framework::TopologyDomains::kUnknownDomain;
}

int32_t TopologyCounts::FindSlot(size_t r, const framework::NodeInfo& node) const {
  const KeyRow& row = rows_[r];
  if (row.domains) {
    const int32_t d = row.domains->DomainOf(node);
    if (d != framework::TopologyDomains::kUnknownDomain) return d;
  }
  if (node.node() == nullptr) return framework::TopologyDomains::kNoDomain;
  const std::string* value = node.node()->metadata.labels.Find(row.key);
  if (value == nullptr) return framework::TopologyDomains::kNoDomain;
  return FindSlotOfValue(row, *value);
}

void TopologyCounts::Add(size_t r, const framework::NodeInfo& node, int64_t delta) {
  int32_t slot = FindSlot(r, node);
  if (slot == framework::TopologyDomains::kNoDomain || delta == 0) return;
  if (slot == framework::TopologyDomains::kUnknownDomain) {
    KeyRow& row = rows_[r];
    row.extra_values.push_back(*node.node()->metadata.labels.Find(row.key));
    row.counts.push_back(0);
    slot = static_cast<int32_t>(row.counts.size() - 1);
  }
  AddAt(r, slot, delta);
}

bool TopologyCounts::AnyPositiveOn(const framework::NodeInfo& node) const {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (CountAt(r, FindSlot(r, node)) > 0) return true;
  }
  return false;
}

int64_t TopologyCounts::Sum(const framework::NodeInfo& node) const {
  int64_t sum = 0;
  for (size_t r = 0; r < rows_.size(); ++r) sum += CountAt(r, FindSlot(r, node));
  return sum;
}

std::map<std::pair<std::string, std::string>, int64_t> TopologyCounts::ToMap() const {
  std::map<std::pair<std::string, std::string>, int64_t> out;
  for (const KeyRow& row : rows_) {
    for (size_t slot = 0; slot < row.counts.size(); ++slot) {
      if (row.counts[slot] == 0) continue;
      const size_t n = row.num_domains();
      std::string value(slot < n ? row.domains->value(static_cast<int32_t>(slot)) : row.extra_values[slot - n]);
      out[{row.key, std::move(value)}] = row.counts[slot];
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// IncomingTerms

IncomingTerms::IncomingTerms(const std::vector<framework::AffinityTerm>& terms) {
  terms_.reserve(terms.size());
  for (const auto& t : terms) terms_.push_back({t, 0});
  for (size_t i = 0; i < terms_.size(); ++i) {
    auto& sel = terms_[i].term.namespace_selector;
    if (sel && !sel->Empty()) {
      selectors_.emplace_back(i, std::move(*sel));
      sel.reset();                // merged into namespaces as they are resolved
      terms_[i].term.id.Reset();  // the content changes: the parsed term's id no longer names it
    }
  }
}

IncomingTerms::IncomingTerms(const std::vector<framework::WeightedAffinityTerm>& terms) : terms_(terms) {
  for (size_t i = 0; i < terms_.size(); ++i) {
    auto& sel = terms_[i].term.namespace_selector;
    if (sel && !sel->Empty()) {
      selectors_.emplace_back(i, std::move(*sel));
      sel.reset();
      terms_[i].term.id.Reset();
    }
  }
}

bool IncomingTerms::IsResolved(std::string_view ns) const {
  return std::binary_search(resolved_namespaces_.begin(), resolved_namespaces_.end(), ns);
}

void IncomingTerms::ResolveNamespace(std::string_view ns, const std::optional<api::Labels>& labels) {
  if (selectors_.empty() || IsResolved(ns)) return;
  InsertSorted(resolved_namespaces_, ns);
  if (!labels) return;
  for (const auto& [index, selector] : selectors_) {
    if (selector.Matches(*labels)) InsertSorted(terms_[index].term.namespaces, ns);
  }
}

bool IncomingTerms::Matches(size_t i, const api::Pod& pod) const {
  // Selectors left on a term are empty ({}: every namespace); the empty label set matches them.
  return terms_[i].term.Matches(pod, &kEmptyLabels);
}

bool IncomingTerms::MatchesAll(const api::Pod& pod) const {
  if (terms_.empty()) return false;
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (!Matches(i, pod)) return false;
  }
  return true;
}

namespace internal {

void ResolveNamespaces(std::span<const framework::NodeInfo* const> nodes, std::string_view own_namespace,
                       const framework::ClusterClient& client, std::initializer_list<IncomingTerms*> term_sets) {
  bool needed = std::any_of(term_sets.begin(), term_sets.end(), [](IncomingTerms* t) { return t->NeedsNamespaces(); });
  if (!needed) return;
  std::unordered_set<std::string_view> namespaces;
  namespaces.insert(own_namespace);
  for (const framework::NodeInfo* node : nodes) {
    for (const auto& p : node->pods()) namespaces.insert(p->pod().metadata.namespace_);
  }
  for (std::string_view ns : namespaces) {
    std::optional<api::Labels> labels = client.NamespaceLabels(ns);
    for (IncomingTerms* t : term_sets) t->ResolveNamespace(ns, labels);
  }
}

}  // namespace internal

// ---------------------------------------------------------------------------------------------
// Plugin

InterPodAffinity::InterPodAffinity(InterPodAffinityArgs args, framework::Handle& handle)
    : args_(args),
      handle_(handle),
      incoming_counts_(internal::NewIncomingCountCache()),
      existing_counts_(internal::NewExistingCountCache()) {}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<InterPodAffinity>(*parsed, handle);
}

std::vector<framework::ClusterEventWithHint> InterPodAffinity::EventsToRegister() const {
  using framework::EventResource;
  namespace action = framework::action;
  return {
      // Delete: the pod may have been rejected by an existing pod's anti-affinity, or its own
      // anti-affinity. UpdatePodLabel: a label change can make an existing pod match (or stop
      // matching) the pod's terms. Add: an assigned pod can satisfy the pod's affinity.
      {{EventResource::kPod, action::kAdd | action::kUpdatePodLabel | action::kDelete, "Pod/Add|UpdatePodLabel|Delete"},
       [this](const api::Pod& pod, const framework::EventObjects& ev) { return IsSchedulableAfterPodChange(pod, ev); }},
      // With queueing hints on, upstream registers no UpdateNodeTaint event (it only worked
      // around preCheck filtering out NodeAdd).
      {{EventResource::kNode, action::kAdd | action::kUpdateNodeLabel, "Node/Add|UpdateNodeLabel"},
       [this](const api::Pod& pod, const framework::EventObjects& ev) {
         return IsSchedulableAfterNodeChange(pod, ev);
       }},
  };
}

QueueingHint InterPodAffinity::IsSchedulableAfterPodChange(const api::Pod& pod,
                                                           const framework::EventObjects& event) const {
  const api::Pod* original = event.old_pod;
  const api::Pod* modified = event.new_pod;
  // The pending pod's own labels changed: existing pods' anti-affinity may no longer reject it,
  // and it may now match its own affinity terms.
  if (modified != nullptr && SamePod(*modified, pod) &&
      (original == nullptr || original->metadata.labels != modified->metadata.labels)) {
    return QueueingHint::kQueue;
  }
  // Only assigned pods take part in (anti-)affinity.
  if ((modified != nullptr && modified->spec.node_name.empty()) ||
      (original != nullptr && original->spec.node_name.empty())) {
    return QueueingHint::kSkip;
  }
  const framework::ClusterClient& client = handle_.client();
  framework::PodInfoPtr info = BorrowedPodInfo(pod);
  const auto& terms = info->required_affinity_terms;
  const auto& anti_terms = info->required_anti_affinity_terms;

  if (modified != nullptr && original != nullptr) {
    // Updated: a single existing pod must satisfy all affinity terms at once.
    if (!PendingMatchesAll(terms, *original, client) && PendingMatchesAll(terms, *modified, client)) {
      return QueueingHint::kQueue;
    }
    // One matched anti-affinity term is enough to repel, so any term the pod stopped matching may
    // free its topology domain.
    for (const auto& t : anti_terms) {
      if (PendingTermMatches(t, *original, client) && !PendingTermMatches(t, *modified, client)) {
        return QueueingHint::kQueue;
      }
    }
    return QueueingHint::kSkip;
  }
  if (modified != nullptr) {
    // Added: only affinity can become satisfied.
    return PendingMatchesAll(terms, *modified, client) ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  if (original == nullptr) return QueueingHint::kQueue;
  // Deleted: the deleted pod repelled the pending pod if it matched any of the pending pod's
  // anti-affinity terms, or if one of its own required anti-affinity terms matched the pending pod.
  for (const auto& t : anti_terms) {
    if (PendingTermMatches(t, *original, client)) return QueueingHint::kQueue;
  }
  framework::PodInfoPtr deleted = BorrowedPodInfo(*original);
  if (!deleted->required_anti_affinity_terms.empty()) {
    api::Labels ns_labels = client.NamespaceLabels(pod.metadata.namespace_).value_or(api::Labels{});
    for (const auto& t : deleted->required_anti_affinity_terms) {
      if (t.Matches(pod, &ns_labels)) return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

QueueingHint InterPodAffinity::IsSchedulableAfterNodeChange(const api::Pod& pod,
                                                            const framework::EventObjects& event) const {
  const api::Node* original = event.old_node;
  const api::Node* modified = event.new_node;
  if (modified == nullptr) return QueueingHint::kQueue;  // not a registered event; be safe
  framework::PodInfoPtr info = BorrowedPodInfo(pod);
  const api::Labels& new_labels = modified->metadata.labels;
  // Affinity: a node (newly) carrying a topology key, or carrying a different value for it, may
  // host the pod.
  for (const auto& t : info->required_affinity_terms) {
    const std::string* new_value = new_labels.Find(t.topology_key);
    if (original == nullptr) {
      if (new_value != nullptr) return QueueingHint::kQueue;
      continue;
    }
    const std::string* old_value = original->metadata.labels.Find(t.topology_key);
    if (old_value == nullptr && new_value != nullptr) return QueueingHint::kQueue;
    if (old_value != nullptr && new_value != nullptr && *old_value != *new_value) return QueueingHint::kQueue;
  }
  // Anti-affinity: any new node may pass (a node without the key always does); an existing node
  // helps when it loses the key or changes its value.
  for (const auto& t : info->required_anti_affinity_terms) {
    if (original == nullptr) return QueueingHint::kQueue;
    const std::string* old_value = original->metadata.labels.Find(t.topology_key);
    const std::string* new_value = new_labels.Find(t.topology_key);
    if (old_value != nullptr && (new_value == nullptr || *old_value != *new_value)) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

}  // namespace kubesched::plugins::inter_pod_affinity
