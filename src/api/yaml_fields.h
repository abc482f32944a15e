#pragma once
// Small helpers shared by the manifest loader and the field schema check: presence, line numbers,
// short descriptions of YAML nodes for messages, and field paths as the API server prints them.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace kubesched::api::yaml_fields {

//! Defined and not null: absent and null read alike, as in the Go API types.
inline bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

//! 1-based line of a node in its document, 0 when unknown.
inline int LineOf(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  const YAML::Mark mark = n.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

//! A string in double quotes, with quotes, backslashes and control characters escaped.
std::string Quote(std::string_view s);

//! "nothing", "a mapping", "a list" or the quoted scalar (cut to 40 characters), for messages
//! such as `expected a list, got a mapping`.
std::string Describe(const YAML::Node& n);

//! Appends a field to a path: "a.b", or "a[nvidia.com/gpu]" for keys that are not plain words
//! (letters, digits, '_' and '-').
void AppendField(std::string& path, std::string_view key);
//! Appends a list index: "a[3]".
void AppendIndex(std::string& path, size_t index);

//! The candidate closest to `word` (edit distance, ignoring case) when close enough to be a likely
//! typo, else empty: for "did you mean" hints.
std::string_view Closest(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace kubesched::api::yaml_fields
