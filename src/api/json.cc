#include "api/json.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace kubesched::api::json {
namespace {

constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag;

// Whether `v` nests deeper than kMaxDepth; iterative, so it cannot overflow the stack itself.
bool TooDeep(const Value& root) {
  std::vector<std::pair<const Value*, int>> stack{{&root, 1}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (v->IsObject()) {
      if (depth > kMaxDepth) return true;
      for (const auto& m : v->GetObject()) stack.emplace_back(&m.value, depth + 1);
    } else if (v->IsArray()) {
      if (depth > kMaxDepth) return true;
      for (const auto& e : v->GetArray()) stack.emplace_back(&e, depth + 1);
    }
  }
  return false;
}

ParseError ErrorAt(std::string_view text, size_t offset, std::string message) {
  ParseError e;
  e.offset = std::min(offset, text.size());
  for (size_t i = 0; i < e.offset; ++i) {
    if (text[i] == '\n') {
      ++e.line;
      e.column = 1;
    } else {
      ++e.column;
    }
  }
  e.message = std::move(message);
  return e;
}

// An output stream RapidJSON's writers append to a std::string through.
struct StringSink {
  using Ch = char;
  std::string& out;
  void Put(char c) { out.push_back(c); }
  void Flush() {}
};

}  // namespace

std::string ParseError::ToString() const {
  return fmt::format("invalid JSON at line {}, column {}: {}", line, column, message);
}

std::expected<void, ParseError> Parse(std::string_view text, Document& doc) {
  rapidjson::MemoryStream ms(text.data(), text.size());
  doc.ParseStream<kParseFlags>(ms);
  if (doc.HasParseError()) {
    ParseError e = ErrorAt(text, doc.GetErrorOffset(), rapidjson::GetParseError_En(doc.GetParseError()));
    doc.SetNull();
    return std::unexpected(std::move(e));
  }
  // kParseStopWhenDoneFlag stops after the first value: anything but whitespace after it is an
  // error, as for encoding/json.
  size_t end = ms.Tell();
  size_t rest = text.find_first_not_of(" \t\r\n", end);
  if (rest != std::string_view::npos) {
    doc.SetNull();
    return std::unexpected(ErrorAt(text, rest, "The document root must not be followed by other values."));
  }
  if (TooDeep(doc)) {
    doc.SetNull();
    return std::unexpected(ErrorAt(text, 0, fmt::format("nesting deeper than {} levels", kMaxDepth)));
  }
  return {};
}

void EncodeTo(const Value& value, std::string& out) {
  // RapidJSON's own buffer (bulk appends) then one copy: a std::string sink pays a push_back per
  // character, which showed in profiles of loading large manifests.
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  out.append(buffer.GetString(), buffer.GetSize());
}

std::string Encode(const Value& value) {
  std::string out;
  EncodeTo(value, out);
  return out;
}

std::string EncodePretty(const Value& value) {
  std::string out;
  StringSink sink{out};
  rapidjson::PrettyWriter<StringSink> writer(sink);
  writer.SetIndent(' ', 2);
  value.Accept(writer);
  return out;
}

const Value* Find(const Value& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

Value* Find(Value& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string_view GetString(const Value& object, std::string_view key) {
  const Value* v = Find(object, key);
  return v ? View(*v) : std::string_view();
}

Value& Set(Value& object, std::string_view key, Value value, Allocator& alloc) {
  if (!object.IsObject()) object.SetObject();
  if (Value* existing = Find(object, key)) {
    *existing = std::move(value);
    return *existing;
  }
  object.AddMember(MakeString(key, alloc), std::move(value), alloc);
  return (object.MemberEnd() - 1)->value;
}

Value& Child(Value& object, std::string_view key, Allocator& alloc) {
  Value* existing = Find(object, key);
  if (existing && existing->IsObject()) return *existing;
  return Set(object, key, Value(rapidjson::kObjectType), alloc);
}

bool Remove(Value& object, std::string_view key) {
  if (!object.IsObject()) return false;
  auto it = object.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == object.MemberEnd()) return false;
  object.EraseMember(it);
  return true;
}

}  // namespace kubesched::api::json
