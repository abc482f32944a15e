#pragma once
// The documents the server composes (discovery, OpenAPI, Status, Table, lists), written with the
// codec's writer (api::json::StringWriter): string_view keys and values, and raw pre-encoded JSON
// spliced in (stored objects are kept encoded, so a LIST copies their bytes instead of
// re-encoding).

#include <cstdint>
#include <string>
#include <string_view>

#include "api/json_writer.h"

namespace kubesched::server {

class JsonWriter {
 public:
  JsonWriter() : writer_(out_) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void StartObject() { writer_.StartObject(); }
  void EndObject() { writer_.EndObject(); }
  void StartArray() { writer_.StartArray(); }
  void EndArray() { writer_.EndArray(); }
  void Key(std::string_view key) { writer_.Key(key); }
  void String(std::string_view s) { writer_.String(s); }
  void Int(int64_t v) { writer_.Int64(v); }
  void Bool(bool v) { writer_.Bool(v); }
  void Null() { writer_.Null(); }
  //! Splices already-encoded JSON (one complete value) in as the next value.
  void Raw(std::string_view json) { writer_.RawValue(json); }

  void Member(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }
  void Member(std::string_view key, const char* value) { Member(key, std::string_view(value)); }
  void MemberInt(std::string_view key, int64_t value) {
    Key(key);
    Int(value);
  }
  void MemberBool(std::string_view key, bool value) {
    Key(key);
    Bool(value);
  }
  void MemberRaw(std::string_view key, std::string_view json) {
    Key(key);
    Raw(json);
  }
  //! `key: ["a", "b"]`.
  template <typename Range>
  void MemberStrings(std::string_view key, const Range& values) {
    Key(key);
    StartArray();
    for (const auto& v : values) String(v);
    EndArray();
  }

  //! The text written so far (writing may go on after).
  std::string Take() {
    writer_.Finish();
    return out_;
  }

 private:
  std::string out_;  // before writer_, which writes into it
  api::json::StringWriter writer_;
};

}  // namespace kubesched::server
