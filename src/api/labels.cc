#include "api/labels.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

namespace kubesched::api {
namespace {

template <typename Entries>
auto LowerBound(Entries& entries, std::string_view key) {
  return std::lower_bound(entries.begin(), entries.end(), key,
                          [](const Labels::Entry& e, std::string_view k) { return e.first < k; });
}

// Values lists are short (a handful of zones or hostnames), where a linear scan beats binary
// search and does not depend on whoever built the requirement having sorted them.
bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

std::optional<int64_t> ParseSelectorInteger(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

namespace {

// Shared by label requirements and node field requirements: `value` is the label's value, or
// nullptr when the object has no such label.
bool MatchesValue(const SelectorRequirement& r, const std::string* value) {
  switch (r.op) {
    case SelectorOperator::kIn:
      return value != nullptr && Contains(r.values, *value);
    case SelectorOperator::kNotIn:
      return value == nullptr || !Contains(r.values, *value);
    case SelectorOperator::kExists:
      return value != nullptr;
    case SelectorOperator::kDoesNotExist:
      return value == nullptr;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      // As upstream: a missing label, a non-integer label value, or anything but exactly one
      // integer in values never matches.
      if (value == nullptr || r.values.size() != 1) return false;
      auto have = ParseSelectorInteger(*value);
      auto want = ParseSelectorInteger(r.values.front());
      if (!have || !want) return false;
      return r.op == SelectorOperator::kGt ? *have > *want : *have < *want;
    }
  }
  return false;
}

}  // namespace

Labels::Labels(std::initializer_list<Entry> entries) {
  for (const auto& e : entries) Set(e.first, e.second);
}

Labels Labels::FromEntries(std::vector<Entry> entries) {
  // Sorted stably, then of each run of one key the last kept: what Set one by one would leave,
  // without its O(n) insertion per key out of order.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.first < b.first; });
  Labels out;
  out.entries_.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && entries[i + 1].first == entries[i].first) continue;
    out.entries_.push_back(std::move(entries[i]));
  }
  return out;
}

const std::string* FindLabel(const std::vector<Labels::Entry>& sorted_labels, std::string_view key) {
  auto it = LowerBound(sorted_labels, key);
  if (it == sorted_labels.end() || it->first != key) return nullptr;
  return &it->second;
}

const std::string* Labels::Find(std::string_view key) const {
  auto it = LowerBound(entries_, key);
  if (it == entries_.end() || it->first != key) return nullptr;
  return &it->second;
}

void Labels::Set(std::string key, std::string value) {
  // Keys most often come in order (the API server writes maps sorted by key): appended.
  if (entries_.empty() || entries_.back().first < key) {
    entries_.emplace_back(std::move(key), std::move(value));
    return;
  }
  auto it = LowerBound(entries_, key);
  if (it != entries_.end() && it->first == key) {
    it->second = std::move(value);
    return;
  }
  entries_.insert(it, Entry{std::move(key), std::move(value)});
}

bool Labels::Erase(std::string_view key) {
  auto it = LowerBound(entries_, key);
  if (it == entries_.end() || it->first != key) return false;
  entries_.erase(it);
  return true;
}

bool SelectorRequirement::Matches(const Labels& labels) const { return MatchesValue(*this, labels.Find(key)); }

bool SelectorRequirement::Matches(const std::vector<Labels::Entry>& sorted_labels) const {
  return MatchesValue(*this, FindLabel(sorted_labels, key));
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const auto& [k, v] : match_labels) {
    const std::string* have = labels.Find(k);
    if (have == nullptr || *have != v) return false;
  }
  return std::all_of(match_expressions.begin(), match_expressions.end(),
                     [&](const SelectorRequirement& r) { return r.Matches(labels); });
}

bool NodeSelectorTerm::Matches(std::string_view node_name, const std::vector<Labels::Entry>& node_labels) const {
  if (match_expressions.empty() && match_fields.empty()) return false;
  for (const auto& r : match_expressions) {
    if (!r.Matches(node_labels)) return false;
  }
  // A node's field set is {metadata.name}; any other field reads as the empty string, as
  // fields.Set.Get does (validation rejects other keys before we get here).
  const std::string name(node_name);
  const std::string empty;
  for (const auto& r : match_fields) {
    const std::string* value = r.key == "metadata.name" ? &name : &empty;
    if (!MatchesValue(r, value)) return false;
  }
  return true;
}

bool NodeSelector::Matches(std::string_view node_name, const std::vector<Labels::Entry>& node_labels) const {
  return std::any_of(terms.begin(), terms.end(),
                     [&](const NodeSelectorTerm& t) { return t.Matches(node_name, node_labels); });
}

std::optional<SelectorOperator> ParseSelectorOperator(std::string_view text) {
  for (SelectorOperator op : {SelectorOperator::kIn, SelectorOperator::kNotIn, SelectorOperator::kExists,
                              SelectorOperator::kDoesNotExist, SelectorOperator::kGt, SelectorOperator::kLt}) {
    if (ToString(op) == text) return op;
  }
  return std::nullopt;
}

std::string_view ToString(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::kIn:
      return "In";
    case SelectorOperator::kNotIn:
      return "NotIn";
    case SelectorOperator::kExists:
      return "Exists";
    case SelectorOperator::kDoesNotExist:
      return "DoesNotExist";
    case SelectorOperator::kGt:
      return "Gt";
    case SelectorOperator::kLt:
      return "Lt";
  }
  return "Unknown";
}

}  // namespace kubesched::api
