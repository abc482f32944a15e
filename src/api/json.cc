#include "api/json.h"

#include "api/json_writer.h"

#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace kubesched::api::json {
namespace {

// Parsing is recursive (RapidJSON's fastest mode) with the depth limited by the handler below, so
// the recursion never goes deeper than kMaxDepth levels. In situ: the reader unescapes strings in
// place in our copy of the text and hands them over without first copying them, byte by byte,
// through its own stack (the handler then copies each once into the document).
// kParseStopWhenDoneFlag: the text after the value is checked here. kParseNumbersAsStringsFlag:
// RapidJSON checks a number's syntax and hands over its text, which ToNumber below converts.
// RapidJSON 1.1.0's own conversion is either a few units in the last place off for long or large
// numbers (the default: the shortest digits Encode writes then parsed back as another double, so
// Parse(Encode(v)) != v), or, with kParseFullPrecisionFlag, undefined for a zero with a large
// exponent ("0e55": clz of 0 in DiyFp::Normalize). std::from_chars gives the double nearest to
// the text, as strtod and encoding/json do.
constexpr unsigned kParseFlags =
    rapidjson::kParseInsituFlag | rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseNumbersAsStringsFlag;
// Without a call stack per level, to look for a syntax error after the depth limit (the numbers'
// values are not needed, only RapidJSON's errors, as "Number too big").
constexpr unsigned kIterativeParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag;

// Whether a number whose double is out of range is too big (else too small, and 0): its first
// nonzero digit is at 10^0 or above. `text` has JSON's number syntax.
bool Overflows(std::string_view text) {
  if (text.starts_with('-')) text.remove_prefix(1);
  const size_t e = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, e);
  int64_t exp = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = text.substr(e + 1);
    const bool negative = digits.starts_with('-');
    if (digits.starts_with('-') || digits.starts_with('+')) digits.remove_prefix(1);
    for (char c : digits) exp = std::min<int64_t>(exp * 10 + (c - '0'), int64_t{1} << 40);
    if (negative) exp = -exp;
  }
  const size_t dot = mantissa.find('.');
  const std::string_view integer = mantissa.substr(0, dot);
  const size_t first = integer.find_first_not_of('0');
  if (first != std::string_view::npos) return static_cast<int64_t>(integer.size() - first) - 1 + exp >= 0;
  if (dot == std::string_view::npos) return false;
  const size_t in_fraction = mantissa.substr(dot + 1).find_first_not_of('0');
  return in_fraction != std::string_view::npos && -static_cast<int64_t>(in_fraction) - 1 + exp >= 0;
}

// A number's text into the document as RapidJSON's reader would (an integer that fits as
// Int/Uint/Int64/Uint64, anything else as a double), false when its double would be infinite.
bool ToNumber(std::string_view text, Document& doc) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (text.find_first_of(".eE") == std::string_view::npos) {
    if (text.starts_with('-')) {
      int64_t i = 0;
      if (std::from_chars(begin, end, i).ec == std::errc()) {
        return i >= std::numeric_limits<int32_t>::min() ? doc.Int(static_cast<int>(i)) : doc.Int64(i);
      }
    } else {
      uint64_t u = 0;
      if (std::from_chars(begin, end, u).ec == std::errc()) {
        return u <= std::numeric_limits<uint32_t>::max() ? doc.Uint(static_cast<unsigned>(u)) : doc.Uint64(u);
      }
    }
  }
  double d = 0;
  const std::from_chars_result r = std::from_chars(begin, end, d);
  if (r.ec == std::errc::result_out_of_range) {
    if (Overflows(text)) return false;
    d = text.starts_with('-') ? -0.0 : 0.0;
  } else if (r.ec != std::errc() || r.ptr != end) {
    return false;  // not after RapidJSON's syntax check
  }
  return doc.Double(d);
}

// Forwards the reader's events to the document, stopping (kParseErrorTermination) at the first
// array or object nested deeper than kMaxDepth (the root is at depth 1).
class DepthLimited {
 public:
  using Ch = char;
  explicit DepthLimited(Document& doc) : doc_(doc) {}
  bool too_deep() const { return too_deep_; }
  bool number_too_big() const { return number_too_big_; }

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  // A number's text (in situ: not terminated, so taken with its length) converted by ToNumber.
  bool RawNumber(const Ch* str, rapidjson::SizeType length, bool) {
    if (ToNumber(std::string_view(str, length), doc_)) return true;
    number_too_big_ = true;
    return false;
  }
  // Strings are always copied into the document, though the in-situ reader offers them in place:
  // the text is a scratch buffer, and the document must own its strings (CopyFrom shares the ones
  // it does not own).
  bool String(const Ch* str, rapidjson::SizeType length, bool) { return doc_.String(str, length, true); }
  bool Key(const Ch* str, rapidjson::SizeType length, bool) { return doc_.Key(str, length, true); }
  bool StartObject() { return Enter() && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return Enter() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

 private:
  bool Enter() {
    if (++depth_ <= kMaxDepth) return true;
    too_deep_ = true;
    return false;
  }

  Document& doc_;
  int depth_ = 0;
  bool too_deep_ = false;
  bool number_too_big_ = false;
};

// The text to parse with a NUL after it (RapidJSON scans strings and whitespace 16 bytes at a time
// only in a NUL-terminated stream) and zeros beyond it for those aligned 16-byte loads; writable,
// for in-situ parsing. One buffer per thread, so parsing a small object allocates nothing here;
// released after a large text.
class TerminatedCopy {
 public:
  explicit TerminatedCopy(std::string_view text) : buffer_(Buffer()) { Reset(text); }
  ~TerminatedCopy() {
    if (buffer_.capacity() > kKeptCapacity) std::string().swap(buffer_);
  }
  TerminatedCopy(const TerminatedCopy&) = delete;
  TerminatedCopy& operator=(const TerminatedCopy&) = delete;
  char* data() { return buffer_.data(); }
  //! Copies the text again (an in-situ parse has rewritten its strings).
  void Reset(std::string_view text) {
    buffer_.assign(text);
    buffer_.append(kPadding, '\0');
  }

 private:
  static constexpr size_t kPadding = 32;
  static constexpr size_t kKeptCapacity = size_t{1} << 20;
  static std::string& Buffer() {
    thread_local std::string buffer;
    return buffer;
  }
  std::string& buffer_;
};

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
  TerminatedCopy copy(text);
  rapidjson::InsituStringStream ss(copy.data());
  rapidjson::Reader reader;
  DepthLimited handler(doc);
  bool parsed = false;
  auto generate = [&](Document&) {
    parsed = !reader.Parse<kParseFlags>(ss, handler).IsError();
    return parsed;
  };
  doc.Populate(generate);
  if (!parsed && handler.too_deep()) {
    // Report what a parse without the limit would: a syntax error anywhere in the text first (the
    // iterative reader looks for one without recursing), then text after the value, then the depth.
    doc.SetNull();
    copy.Reset(text);
    rapidjson::StringStream again(copy.data());
    rapidjson::BaseReaderHandler<> ignore;
    rapidjson::Reader syntax;
    if (syntax.Parse<kIterativeParseFlags>(again, ignore).IsError()) {
      return std::unexpected(
          ErrorAt(text, syntax.GetErrorOffset(), rapidjson::GetParseError_En(syntax.GetParseErrorCode())));
    }
    const size_t rest = text.find_first_not_of(" \t\r\n", again.Tell());
    if (rest != std::string_view::npos) {
      return std::unexpected(ErrorAt(text, rest, "The document root must not be followed by other values."));
    }
    return std::unexpected(ErrorAt(text, 0, fmt::format("nesting deeper than {} levels", kMaxDepth)));
  }
  if (!parsed) {
    // A number too big stops the parse from the handler: the error RapidJSON's conversion gave.
    const rapidjson::ParseErrorCode code =
        handler.number_too_big() ? rapidjson::kParseErrorNumberTooBig : reader.GetParseErrorCode();
    ParseError e = ErrorAt(text, reader.GetErrorOffset(), rapidjson::GetParseError_En(code));
    doc.SetNull();
    return std::unexpected(std::move(e));
  }
  // kParseStopWhenDoneFlag stops after the first value: anything but whitespace after it is an
  // error, as for encoding/json.
  const size_t rest = text.find_first_not_of(" \t\r\n", ss.Tell());
  if (rest != std::string_view::npos) {
    doc.SetNull();
    return std::unexpected(ErrorAt(text, rest, "The document root must not be followed by other values."));
  }
  return {};
}

void EncodeTo(const Value& value, std::string& out) {
  StringWriter writer(out);
  writer.Write(value);
}

std::string Encode(const Value& value) {
  // Written into a buffer kept per thread, then copied once into a string of the right size (a
  // fresh string would grow several times, and keep the slack).
  thread_local std::string buffer;
  buffer.clear();
  EncodeTo(value, buffer);
  std::string out(buffer);
  if (buffer.capacity() > (size_t{1} << 20)) std::string().swap(buffer);
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
  return object.IsObject() ? FindMember(object, key) : nullptr;
}

Value* Find(Value& object, std::string_view key) {
  return const_cast<Value*>(Find(static_cast<const Value&>(object), key));
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
  auto it = object.FindMember(Value(rapidjson::StringRef(key.data() ? key.data() : "", key.size())));
  if (it == object.MemberEnd()) return false;
  object.EraseMember(it);
  return true;
}

}  // namespace kubesched::api::json
