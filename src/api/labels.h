#pragma once
// Label sets and the two selector languages Kubernetes uses against them:
// metav1.LabelSelector (pods, namespaces) and v1.NodeSelector (nodes).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kubesched::api {

//! A label (or annotation) map kept as a vector sorted by key: compact, cache friendly, and
//! looked up by binary search. Keys are unique.
class Labels {
 public:
  using Entry = std::pair<std::string, std::string>;

  Labels() = default;
  Labels(std::initializer_list<Entry> entries);
  //! From entries in any order, in O(n log n); where a key repeats, the last value wins (as Set).
  static Labels FromEntries(std::vector<Entry> entries);

  //! Returns the value for key, or nullptr when absent.
  const std::string* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  //! Inserts or overwrites.
  void Set(std::string key, std::string value);
  //! Room for n entries (a decoder knows how many it is about to set).
  void Reserve(size_t n) { entries_.reserve(n); }
  bool Erase(std::string_view key);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  //! The entries, sorted by key.
  const std::vector<Entry>& entries() const { return entries_; }

  bool operator==(const Labels&) const = default;

 private:
  std::vector<Entry> entries_;
};

//! Operators shared by label selector and node selector requirements.
enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

//! One requirement: key, operator, values. Values are kept sorted for binary search.
//! Gt and Lt (node selectors only) compare the label value and the single value as integers.
struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;

  bool Matches(const Labels& labels) const;
  //! The same against entries sorted by key (a stored object's labels, Labels::entries()).
  bool Matches(const std::vector<Labels::Entry>& sorted_labels) const;
  bool operator==(const SelectorRequirement&) const = default;
};

//! The value of `key` in entries sorted by key, or nullptr when absent.
const std::string* FindLabel(const std::vector<Labels::Entry>& sorted_labels, std::string_view key);

//! A Gt/Lt operand as upstream reads it (strconv.ParseInt(s, 10, 64)): optional sign, decimal
//! digits, nothing else.
std::optional<int64_t> ParseSelectorInteger(std::string_view s);

//! metav1.LabelSelector: matchLabels and matchExpressions ANDed together.
//! An empty selector matches everything; a null selector (std::optional absent at the use
//! site) matches nothing, as upstream's LabelSelectorAsSelector does.
struct LabelSelector {
  Labels match_labels;
  std::vector<SelectorRequirement> match_expressions;

  bool Empty() const { return match_labels.empty() && match_expressions.empty(); }
  bool Matches(const Labels& labels) const;
  bool operator==(const LabelSelector&) const = default;
};

//! v1.NodeSelectorTerm: matchExpressions on labels, matchFields on metadata.name, ANDed.
//! A term with no requirements matches no node (upstream semantics).
struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;  // only key "metadata.name" is valid

  bool Matches(std::string_view node_name, const Labels& node_labels) const {
    return Matches(node_name, node_labels.entries());
  }
  bool Matches(std::string_view node_name, const std::vector<Labels::Entry>& sorted_node_labels) const;
  bool operator==(const NodeSelectorTerm&) const = default;
};

//! v1.NodeSelector: terms ORed together.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;

  bool Matches(std::string_view node_name, const Labels& node_labels) const {
    return Matches(node_name, node_labels.entries());
  }
  bool Matches(std::string_view node_name, const std::vector<Labels::Entry>& sorted_node_labels) const;
  bool operator==(const NodeSelector&) const = default;
};

std::string_view ToString(SelectorOperator op);
//! "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"; nullopt for anything else.
std::optional<SelectorOperator> ParseSelectorOperator(std::string_view text);

}  // namespace kubesched::api
