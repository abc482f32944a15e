#pragma once
// YAML into the same JSON DOM (api/json.h) every other path uses, as kubectl reads manifests:
// sigs.k8s.io/yaml turns YAML into JSON through go-yaml v2, so plain scalars resolve with YAML
// 1.1's rules (yes/no/on/off and y/n are booleans, 0644 is octal, 1_000 is an integer, ~ is
// null), quoted scalars stay strings, and mapping keys become strings. Parsing is libfyaml's
// event stream (no intermediate tree), anchors and aliases are resolved with a budget that stops
// alias bombs, duplicate keys are kept in order (the schema check reports them), and nesting is
// bounded by json::kMaxDepth.
//
// Line numbers are not kept in the DOM: LinesOf finds them again, from the source text, only
// when there is something to report.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/json.h"

namespace kubesched::api::yaml {

struct ParseError {
  int line = 0;    //!< 1-based, 0 when unknown
  int column = 0;  //!< 1-based, 0 when unknown
  std::string message;
};

//! The text, as written, of plain scalars whose JSON value prints differently ("1.10" became
//! 1.1, "yes" true, "0644" 420), keyed by the value's address in the document. Decoders that
//! accept a scalar where a string belongs (a label value `version: 1.10`) read it as written.
//! Valid while the document is not modified.
class ScalarTexts {
 public:
  void Add(const json::Value* value, std::string_view text) { texts_.emplace(value, std::string(text)); }
  std::optional<std::string_view> Find(const json::Value* value) const {
    if (texts_.empty()) return std::nullopt;
    auto it = texts_.find(value);
    if (it == texts_.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  bool empty() const { return texts_.empty(); }

 private:
  std::unordered_map<const json::Value*, std::string> texts_;
};

//! At most this many values may come from aliases, in all, per document (a few levels of nested
//! aliases multiply: "billion laughs").
inline constexpr size_t kMaxAliasedValues = 1'000'000;
//! And at most this many bytes of text (strings and keys): a long string aliased a few thousand
//! times is few values but gigabytes of document.
inline constexpr size_t kMaxAliasedBytes = 64u << 20;

//! Parses the first YAML document of `text` into `doc` (an empty document is null). `texts`, when
//! given, receives the written form of scalars that print differently.
std::expected<void, ParseError> Parse(std::string_view text, json::Document& doc, ScalarTexts* texts = nullptr);

//! How a plain (unquoted, untagged) scalar resolves, as go-yaml v2 resolves it: null, a boolean,
//! an integer (int64, else uint64), a float, or else the text as a string. Exposed for tests.
json::Value ResolvePlain(std::string_view text, json::Allocator& alloc);

//! One step from a value to a child: the value of the index-th member of an object, that member's
//! key, or the index-th element of an array.
struct PathStep {
  enum class Kind : uint8_t { kValue, kKey, kElement };
  Kind kind = Kind::kValue;
  uint32_t index = 0;
  bool operator==(const PathStep&) const = default;
};
using SourcePath = std::vector<PathStep>;

//! The steps from `root` to `target`, or nullopt when `target` is not inside `root`. With `key`,
//! `target` is a member's name (MemberIterator::name) and the path ends in a kKey step. Walks the
//! document: for error reports, not for hot paths.
std::optional<SourcePath> PathTo(const json::Value& root, const json::Value* target, bool key = false);

//! The 1-based line, in `text` (YAML or JSON), of the node each path leads to from the document's
//! root; 0 for a path that leads nowhere (or into an alias: then the alias's line). One pass over
//! the text for all paths.
std::vector<int> LinesOf(std::string_view text, std::span<const SourcePath> paths);

}  // namespace kubesched::api::yaml
