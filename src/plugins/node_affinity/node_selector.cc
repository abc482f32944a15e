#include "plugins/node_affinity/node_selector.h"

#include <algorithm>
#include <charconv>

#include "config/validation.h"

namespace kubesched::plugins::node_affinity {
namespace {

using config::FieldInvalid;
using config::GoStringSlice;
using util::GoQuote;

// strconv.ParseInt(s, 10, 64): optional sign then decimal digits, within int64.
bool IsInt64(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return false;
  }
  if (s.empty()) return false;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool IsEmptyTerm(const api::NodeSelectorTerm& term) {
  return term.match_expressions.empty() && term.match_fields.empty();
}

}  // namespace

void ValidateLabelRequirement(const api::SelectorRequirement& req, std::string_view path,
                              std::vector<std::string>& errs) {
  if (auto msgs = api::IsQualifiedName(req.key); !msgs.empty()) {
    errs.push_back(FieldInvalid(api::field_path::Child(path, "key"), GoQuote(req.key), config::JoinDetails(msgs)));
  }
  const std::string values_path = api::field_path::Child(path, "values");
  switch (req.op) {
    case api::SelectorOperator::kIn:
    case api::SelectorOperator::kNotIn:
      if (req.values.empty()) {
        errs.push_back(FieldInvalid(values_path, GoStringSlice(req.values),
                                    "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case api::SelectorOperator::kExists:
    case api::SelectorOperator::kDoesNotExist:
      if (!req.values.empty()) {
        errs.push_back(FieldInvalid(values_path, GoStringSlice(req.values),
                                    "values set must be empty for exists and does not exist"));
      }
      break;
    case api::SelectorOperator::kGt:
    case api::SelectorOperator::kLt:
      if (req.values.size() != 1) {
        errs.push_back(FieldInvalid(values_path, GoStringSlice(req.values),
                                    "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (size_t i = 0; i < req.values.size(); ++i) {
        if (!IsInt64(req.values[i])) {
          errs.push_back(FieldInvalid(api::field_path::Index(values_path, i), GoQuote(req.values[i]),
                                      "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
  }
  for (size_t i = 0; i < req.values.size(); ++i) {
    if (auto msgs = api::IsValidLabelValue(req.values[i]); !msgs.empty()) {
      errs.push_back(FieldInvalid(api::field_path::Index(values_path, i) + "[" + req.key + "]", GoQuote(req.values[i]),
                                  config::JoinDetails(msgs)));
    }
  }
}

void ValidateFieldRequirement(const api::SelectorRequirement& req, std::string_view path,
                              std::vector<std::string>& errs) {
  switch (req.op) {
    case api::SelectorOperator::kIn:
    case api::SelectorOperator::kNotIn:
      if (req.values.size() != 1) {
        errs.push_back(
            FieldInvalid(api::field_path::Child(path, "values"), GoStringSlice(req.values), "must have one element"));
      }
      break;
    default:
      errs.push_back(
          config::FieldNotSupported(api::field_path::Child(path, "operator"), api::ToString(req.op), {"In", "NotIn"}));
  }
}

void ValidateNodeSelectorTerm(const api::NodeSelectorTerm& term, std::string_view path,
                              std::vector<std::string>& errs) {
  const std::string expr_path = api::field_path::Child(path, "matchExpressions");
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    ValidateLabelRequirement(term.match_expressions[i], api::field_path::Index(expr_path, i), errs);
  }
  const std::string fields_path = api::field_path::Child(path, "matchFields");
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    ValidateFieldRequirement(term.match_fields[i], api::field_path::Index(fields_path, i), errs);
  }
}

bool IsValidNodeSelectorTerm(const api::NodeSelectorTerm& term) {
  std::vector<std::string> errs;
  ValidateNodeSelectorTerm(term, "", errs);
  return errs.empty();
}

bool TermMatches(const api::NodeSelectorTerm& term, const api::Node& node) {
  for (const auto& r : term.match_expressions) {
    if (!r.Matches(node.metadata.labels)) return false;
  }
  const std::string& name = node.metadata.name;
  if (name.empty()) return true;  // no fields to select on
  for (const auto& r : term.match_fields) {
    // A node's only field is metadata.name; any other key reads as "".
    std::string_view value = r.key == "metadata.name" ? std::string_view(name) : std::string_view();
    bool equal = !r.values.empty() && value == r.values.front();
    if (r.op == api::SelectorOperator::kIn ? !equal : equal) return false;
  }
  return true;
}

NodeSelectorMatcher::NodeSelectorMatcher(const api::NodeSelector& selector, std::string_view path,
                                         bool collect_errors) {
  const std::string terms_path = api::field_path::Child(path, "nodeSelectorTerms");
  for (size_t i = 0; i < selector.terms.size(); ++i) {
    const auto& term = selector.terms[i];
    if (IsEmptyTerm(term)) continue;
    std::vector<std::string> errs;
    ValidateNodeSelectorTerm(term, collect_errors ? api::field_path::Index(terms_path, i) : std::string(), errs);
    if (errs.empty()) {
      terms_.push_back(&term);
      continue;
    }
    has_invalid_terms_ = true;
    if (collect_errors) errors_.insert(errors_.end(), errs.begin(), errs.end());
  }
}

bool NodeSelectorMatcher::Match(const api::Node& node) const {
  return std::any_of(terms_.begin(), terms_.end(),
                     [&](const api::NodeSelectorTerm* t) { return TermMatches(*t, node); });
}

RequiredNodeAffinity::RequiredNodeAffinity(const api::Pod& pod) {
  if (!pod.spec.node_selector.empty()) node_selector_ = &pod.spec.node_selector;
  const auto& affinity = pod.spec.affinity;
  if (affinity && affinity->node_affinity && affinity->node_affinity->required) {
    has_affinity_ = true;
    affinity_ = NodeSelectorMatcher(*affinity->node_affinity->required, "", /*collect_errors=*/false);
  }
}

bool RequiredNodeAffinity::Match(const api::Node& node, bool* parse_error) const {
  if (parse_error != nullptr) *parse_error = false;
  if (node_selector_ != nullptr) {
    for (const auto& [key, value] : *node_selector_) {
      const std::string* have = node.metadata.labels.Find(key);
      if (have == nullptr || *have != value) return false;
    }
  }
  if (!has_affinity_) return true;
  if (affinity_.Match(node)) return true;
  if (parse_error != nullptr) *parse_error = affinity_.has_invalid_terms();
  return false;
}

std::expected<PreferredSchedulingTerms, std::string> PreferredSchedulingTerms::Create(
    std::span<const api::PreferredSchedulingTerm> terms, std::string_view path) {
  PreferredSchedulingTerms out;
  std::vector<std::string> errs;
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    if (t.weight == 0 || IsEmptyTerm(t.preference)) continue;
    size_t before = errs.size();
    ValidateNodeSelectorTerm(t.preference, api::field_path::Index(path, i), errs);
    if (errs.size() == before) out.terms_.push_back({&t.preference, t.weight});
  }
  if (!errs.empty()) return std::unexpected(config::AggregateErrors(errs));
  return out;
}

int64_t PreferredSchedulingTerms::Score(const api::Node& node) const {
  int64_t score = 0;
  for (const auto& w : terms_) {
    if (TermMatches(*w.term, node)) score += w.weight;
  }
  return score;
}

}  // namespace kubesched::plugins::node_affinity
