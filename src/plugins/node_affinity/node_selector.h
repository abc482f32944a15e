#pragma once
// Node selector terms as the scheduler reads them (k8s.io/component-helpers/scheduling/corev1/
// nodeaffinity): each term is checked once as labels.NewRequirement / the field selector parser
// would, a term that fails those checks never matches (LazyErrorNodeSelector), and matching
// itself never allocates.
//
// Field paths follow k8s.io/apimachinery's field.Path rendering: children joined with '.',
// indexes and map keys in brackets, nothing before the first child of a root path.

#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_path.h"
#include "api/types.h"

namespace kubesched::plugins::node_affinity {

//! Appends the errors labels.NewRequirement reports for one matchExpressions requirement at
//! `path` (key a qualified name; In/NotIn need values, Exists/DoesNotExist none, Gt/Lt exactly
//! one integer; every value a valid label value).
void ValidateLabelRequirement(const api::SelectorRequirement& req, std::string_view path,
                              std::vector<std::string>& errs);
//! Appends the errors of one matchFields requirement at `path`: only In and NotIn, with exactly one
//! value.
void ValidateFieldRequirement(const api::SelectorRequirement& req, std::string_view path,
                              std::vector<std::string>& errs);
//! Appends the errors of a term at `path` (matchExpressions first, then matchFields).
void ValidateNodeSelectorTerm(const api::NodeSelectorTerm& term, std::string_view path, std::vector<std::string>& errs);
//! Whether the term passes validation (cheaper than collecting messages).
bool IsValidNodeSelectorTerm(const api::NodeSelectorTerm& term);

//! Whether a term known to be valid and non-empty matches the node: every label requirement and,
//! when the node has a name, every field requirement (a nameless node has no fields to check,
//! as upstream).
bool TermMatches(const api::NodeSelectorTerm& term, const api::Node& node);

//! A v1.NodeSelector parsed once: terms ORed; empty terms dropped (they select nothing); invalid
//! terms kept aside so a non-match can report that parse errors were involved. Holds pointers
//! into the selector, which must outlive the matcher.
class NodeSelectorMatcher {
 public:
  NodeSelectorMatcher() = default;
  //! With collect_errors, the validation messages (rooted at `path`) are kept for errors().
  NodeSelectorMatcher(const api::NodeSelector& selector, std::string_view path, bool collect_errors);

  //! Whether a valid term matches the node.
  bool Match(const api::Node& node) const;
  //! Whether some term failed validation (upstream's Match then returns an error on no match).
  bool has_invalid_terms() const { return has_invalid_terms_; }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<const api::NodeSelectorTerm*> terms_;
  bool has_invalid_terms_ = false;
  std::vector<std::string> errors_;
};

//! The pod's spec.nodeSelector together with its required node affinity
//! (upstream's nodeaffinity.RequiredNodeAffinity). Holds pointers into the pod.
class RequiredNodeAffinity {
 public:
  explicit RequiredNodeAffinity(const api::Pod& pod);

  //! Whether the node satisfies both. When it does not and an invalid affinity term was involved,
  //! *parse_error is set (upstream returns an error alongside false).
  bool Match(const api::Node& node, bool* parse_error = nullptr) const;

 private:
  const api::Labels* node_selector_ = nullptr;  // null when the pod has no nodeSelector
  bool has_affinity_ = false;
  NodeSelectorMatcher affinity_;
};

//! Preferred scheduling terms with their weights (upstream's nodeaffinity.PreferredSchedulingTerms):
//! terms with weight 0 or no requirements are ignored. Holds pointers into the terms.
class PreferredSchedulingTerms {
 public:
  //! Fails with the aggregated validation errors (rooted at `path`) when any term is invalid.
  static std::expected<PreferredSchedulingTerms, std::string> Create(
      std::span<const api::PreferredSchedulingTerm> terms, std::string_view path);

  //! Sum of the weights of the terms the node matches.
  int64_t Score(const api::Node& node) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Weighted {
    const api::NodeSelectorTerm* term;
    int32_t weight;
  };
  std::vector<Weighted> terms_;
};

}  // namespace kubesched::plugins::node_affinity
