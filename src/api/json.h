#pragma once
// The JSON codec every path shares (manifests, API requests and responses, watch streams,
// extender bodies): RapidJSON's DOM, chosen by measurement (bench/codec_bench.cc, README
// "Codec"). A Document owns its values in one memory pool, so decoding allocates little and
// dropping a document is cheap; values are mutable, so defaulting and the store's writes edit
// the decoded object in place before it is encoded again.
//
// Parsing rejects nesting deeper than kMaxDepth as it goes (its recursion stops there), so hostile
// input cannot overflow the stack while parsing or when the value is later walked or encoded.

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <expected>
#include <string>
#include <string_view>

namespace kubesched::api::json {

using Document = rapidjson::Document;
using Value = rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

//! Deepest nesting of arrays and objects accepted (Go's encoding/json allows 10,000; nothing in
//! a Kubernetes object comes near 100).
inline constexpr int kMaxDepth = 1000;

struct ParseError {
  size_t offset = 0;  //!< byte offset in the text
  int line = 1;       //!< 1-based
  int column = 1;     //!< 1-based, in bytes
  std::string message;

  //! "invalid JSON at line 3, column 7: Missing a colon after a name of object member."
  std::string ToString() const;
};

//! Parses one JSON value (surrounding whitespace allowed, nothing else after it) into `doc`,
//! copying strings (the text may go away afterwards). On error `doc` is left as null.
std::expected<void, ParseError> Parse(std::string_view text, Document& doc);

//! Appends the compact encoding of `value` to `out`.
void EncodeTo(const Value& value, std::string& out);
//! The compact encoding of `value`.
std::string Encode(const Value& value);
//! An indented encoding (two spaces), for people.
std::string EncodePretty(const Value& value);

//! The member `key` of `object`, or nullptr when `object` is not an object or has no such member.
const Value* Find(const Value& object, std::string_view key);
Value* Find(Value& object, std::string_view key);
//! Find's search, inline for the decoders' lookups (about a hundred per object): `object` is an
//! object. A linear search as FindMember's (the first member of a name), names told apart by
//! their length, then compared 8 (or 4) bytes at a time.
inline const Value* FindMember(const Value& object, std::string_view key) {
  const size_t size = key.size();
  const char* const k = key.data();
  const auto load8 = [](const char* p) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
  };
  const auto load4 = [](const char* p) {
    uint32_t x;
    std::memcpy(&x, p, 4);
    return x;
  };
  const auto same = [&](const char* name) {
    if (size >= 8) {
      // 8 bytes at a time, the last 8 overlapping the ones before: no call, so the search needs no
      // registers saved.
      for (size_t i = 0; i + 8 < size; i += 8) {
        if (load8(name + i) != load8(k + i)) return false;
      }
      return load8(name + size - 8) == load8(k + size - 8);
    }
    if (size >= 4) return ((load4(name) ^ load4(k)) | (load4(name + size - 4) ^ load4(k + size - 4))) == 0;
    for (size_t i = 0; i < size; ++i) {
      if (name[i] != k[i]) return false;
    }
    return true;
  };
  for (auto m = object.MemberBegin(), end = object.MemberEnd(); m != end; ++m) {
    if (m->name.GetStringLength() == size && same(m->name.GetString())) return &m->value;
  }
  return nullptr;
}
//! The member's string, or nullopt-like empty view when absent or not a string.
std::string_view GetString(const Value& object, std::string_view key);
//! A string value's text (empty for a non-string).
inline std::string_view View(const Value& v) {
  return v.IsString() ? std::string_view(v.GetString(), v.GetStringLength()) : std::string_view();
}
//! A string value copied into `alloc`.
inline Value MakeString(std::string_view s, Allocator& alloc) {
  // An empty view may have a null data(); RapidJSON asserts on a null string pointer.
  return Value(s.data() ? s.data() : "", static_cast<rapidjson::SizeType>(s.size()), alloc);
}
//! Sets `object[key] = value` (replacing an existing member; `object` becomes an object if it
//! was not one) and returns the stored value.
Value& Set(Value& object, std::string_view key, Value value, Allocator& alloc);
//! The member `key` of `object`, created as an empty object when absent (or not an object).
Value& Child(Value& object, std::string_view key, Allocator& alloc);
//! Removes the member `key`; whether it was there.
bool Remove(Value& object, std::string_view key);

}  // namespace kubesched::api::json
