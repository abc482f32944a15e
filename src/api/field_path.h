#pragma once
// Field paths as the API server prints them ("spec.containers[0].resources.requests[nvidia.com/gpu]")
// and the small pieces of wording the decoders and the schema check share.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace kubesched::api::field_path {

//! Go's field.Path.Child over strings, as upstream renders the paths of Go structs (the scheduler's
//! configuration, plugin args, the extender's wire types): "path.name", or "name" at the root "".
std::string Child(std::string_view path, std::string_view name);
//! field.Path.Index: "path[index]".
std::string Index(std::string_view path, size_t index);

//! Appends a field to a path as the API server's messages render an object's fields: "a.b", or "a[nvidia.com/gpu]" for
//! keys that are not plain words (letters, digits, '_' and '-').
void AppendField(std::string& path, std::string_view key);
//! Appends a list index: "a[3]".
void AppendIndex(std::string& path, size_t index);

//! The candidate closest to `word` (edit distance, ignoring case) when close enough to be a likely
//! typo, else empty: for "did you mean" hints.
std::string_view Closest(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace kubesched::api::field_path
