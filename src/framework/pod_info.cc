#include "framework/pod_info.h"

#include <algorithm>

#include "framework/interner.h"

namespace kubesched::framework {
namespace {

AffinityTerm MakeAffinityTermContent(const api::Pod& pod, const api::PodAffinityTerm& t) {
  AffinityTerm term;
  term.topology_key = t.topology_key;
  term.namespace_selector = t.namespace_selector;
  term.namespaces = t.namespaces;
  if (term.namespaces.empty() && !term.namespace_selector) {
    term.namespaces.push_back(pod.metadata.namespace_);
  }
  std::sort(term.namespaces.begin(), term.namespaces.end());
  term.namespaces.erase(std::unique(term.namespaces.begin(), term.namespaces.end()), term.namespaces.end());
  if (!t.label_selector) {
    term.selector_matches_nothing = true;
    return term;
  }
  term.selector = *t.label_selector;
  // matchLabelKeys / mismatchLabelKeys are merged into the selector with the incoming pod's own
  // label values, as the API server does when it admits the pod.
  for (const auto& key : t.match_label_keys) {
    if (const std::string* v = pod.metadata.labels.Find(key)) {
      term.selector.match_expressions.push_back({key, api::SelectorOperator::kIn, {*v}});
    }
  }
  for (const auto& key : t.mismatch_label_keys) {
    if (const std::string* v = pod.metadata.labels.Find(key)) {
      term.selector.match_expressions.push_back({key, api::SelectorOperator::kNotIn, {*v}});
    }
  }
  return term;
}

// Separators that cannot occur in names, label keys or values.
constexpr char kSep = '\x1f';
constexpr char kEnd = '\x1e';

void AppendLabels(std::string& out, const api::Labels& labels) {
  for (const auto& [k, v] : labels) {
    out += k;
    out += kSep;
    out += v;
    out += kSep;
  }
  out += kEnd;
}

void AppendSelector(std::string& out, const api::LabelSelector& selector) {
  AppendLabels(out, selector.match_labels);
  for (const auto& r : selector.match_expressions) {
    out += r.key;
    out += kSep;
    out += static_cast<char>('0' + static_cast<int>(r.op));
    for (const auto& v : r.values) {
      out += v;
      out += kSep;
    }
    out += kEnd;
  }
  out += kEnd;
}

InternedId InternTerm(const AffinityTerm& term) {
  std::string key = term.topology_key;
  key += kEnd;
  for (const auto& ns : term.namespaces) {
    key += ns;
    key += kSep;
  }
  key += kEnd;
  key += term.selector_matches_nothing ? '1' : '0';
  AppendSelector(key, term.selector);
  if (term.namespace_selector) {
    key += 'N';
    AppendSelector(key, *term.namespace_selector);
  }
  return StringInterner::AffinityTerms().Intern(key);
}

InternedId InternLabelSet(const api::Pod& pod) {
  std::string key = pod.metadata.namespace_;
  key += kEnd;
  AppendLabels(key, pod.metadata.labels);
  return StringInterner::PodLabelSets().Intern(key);
}

AffinityTerm MakeAffinityTerm(const api::Pod& pod, const api::PodAffinityTerm& t) {
  AffinityTerm term = MakeAffinityTermContent(pod, t);
  term.id = InternTerm(term);
  return term;
}

}  // namespace

bool AffinityTerm::Matches(const api::Pod& pod, const api::Labels* namespace_labels) const {
  bool ns_match = std::binary_search(namespaces.begin(), namespaces.end(), pod.metadata.namespace_);
  if (!ns_match && namespace_selector && namespace_labels) {
    ns_match = namespace_selector->Matches(*namespace_labels);
  }
  if (!ns_match || selector_matches_nothing) return false;
  return selector.Matches(pod.metadata.labels);
}

PodInfoPtr PodInfo::WithPod(std::shared_ptr<const api::Pod> pod) const {
  auto info = std::make_shared<PodInfo>(*this);
  info->pod_ = std::move(pod);
  return info;
}

PodInfoPtr PodInfo::Create(std::shared_ptr<const api::Pod> pod) {
  auto info = std::make_shared<PodInfo>();
  info->pod_ = std::move(pod);
  const api::Pod& p = *info->pod_;
  info->label_set_id = InternLabelSet(p);
  info->requests = ComputePodRequests(p.spec);
  Resource non_zero = ComputePodRequests(p.spec, {.non_missing_defaults = true});
  info->non_zero_milli_cpu = non_zero.milli_cpu;
  info->non_zero_memory = non_zero.memory;
  if (p.spec.affinity) {
    const auto& a = *p.spec.affinity;
    if (a.pod_affinity) {
      for (const auto& t : a.pod_affinity->required) info->required_affinity_terms.push_back(MakeAffinityTerm(p, t));
      for (const auto& w : a.pod_affinity->preferred) {
        info->preferred_affinity_terms.push_back({MakeAffinityTerm(p, w.term), w.weight});
      }
    }
    if (a.pod_anti_affinity) {
      for (const auto& t : a.pod_anti_affinity->required) {
        info->required_anti_affinity_terms.push_back(MakeAffinityTerm(p, t));
      }
      for (const auto& w : a.pod_anti_affinity->preferred) {
        info->preferred_anti_affinity_terms.push_back({MakeAffinityTerm(p, w.term), w.weight});
      }
    }
  }
  return info;
}

}  // namespace kubesched::framework
