#pragma once
// The loader's first stage: reading sources (files, directories as kubectl -f walks them,
// standard input) and splitting each into its documents.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::api {

//! What messages call standard input (kubectl's name for it).
inline constexpr std::string_view kStdinName = "STDIN";

//! One document of a source.
struct RawDocument {
  std::string text;
  int first_line = 0;  //!< 0-based line in the source where the text starts
  bool json = false;   //!< a JSON value (the whole source), for the JSON codec
};

//! A source's documents: one JSON document when it starts with '{' (the caller reads it with
//! SplitYamlDocuments after all if it is not one JSON value), else SplitYamlDocuments.
std::vector<RawDocument> SplitDocuments(std::string_view text);

//! Splits YAML at "---" lines (which YAML forbids inside any scalar), so a syntax error names its
//! document and the others still have their numbers. Blank documents before the first marker are
//! dropped.
std::vector<RawDocument> SplitYamlDocuments(std::string_view text);

//! kubectl's walk of a path given to -f: "-" and files as they are; a directory stands for its
//! *.yaml, *.yml and *.json files in name order, its subdirectories walked in place when
//! recursive. Appends to `out`; an error message when a directory cannot be read.
std::optional<std::string> ExpandPath(const std::string& path, bool recursive, std::vector<std::string>& out);

//! The most kubesched reads from one file or from standard input: more than a dump of 100,000
//! pods takes, and what bounds the memory a runaway input costs (it is read in pieces and
//! refused as soon as it passes this, not read whole first).
inline constexpr size_t kMaxSourceBytes = size_t{1} << 30;

//! Reads a file ("-": standard input) into `out`; an error message when it cannot, or when it is
//! larger than `max_bytes`.
std::optional<std::string> ReadFile(const std::string& path, std::string& out, size_t max_bytes = kMaxSourceBytes);

}  // namespace kubesched::api
