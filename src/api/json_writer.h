#pragma once
// A compact JSON writer that appends to a std::string, byte for byte what RapidJSON's Writer
// prints (the same escapes and the same number formatting), without its per-character stream
// calls: the codec's encoders (json::EncodeTo, api/encode.h) write through it. Events are
// RapidJSON's SAX events without the counts; a value of the DOM is written with Write(value).

#include <rapidjson/internal/dtoa.h>
#include <rapidjson/internal/ieee754.h>
#include <rapidjson/internal/itoa.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "api/json.h"

namespace kubesched::api::json {

class StringWriter {
 public:
  //! Appends to `out` from its current end; `out` has its final size when the writer is destroyed
  //! (or after Finish).
  explicit StringWriter(std::string& out) : out_(out), p_(out.data() + out.size()), end_(p_) {}
  ~StringWriter() { Finish(); }
  StringWriter(const StringWriter&) = delete;
  StringWriter& operator=(const StringWriter&) = delete;

  //! Gives `out` its final size; writing may go on after (the next byte grows it again).
  void Finish() {
    out_.resize(static_cast<size_t>(p_ - out_.data()));
    p_ = end_ = out_.data() + out_.size();
  }

  void StartObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void StartArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key) {
    Prefix();
    Quoted(key);
    Raw(':');
    comma_ = false;
  }
  void String(std::string_view s) {
    Prefix();
    Quoted(s);
  }
  void Null() { Literal("null"); }
  void Bool(bool b) { Literal(b ? std::string_view("true") : std::string_view("false")); }
  void Int(int i) {
    Prefix();
    p_ = rapidjson::internal::i32toa(i, Reserve(11));
  }
  void Uint(unsigned u) {
    Prefix();
    p_ = rapidjson::internal::u32toa(u, Reserve(10));
  }
  void Int64(int64_t i) {
    Prefix();
    p_ = rapidjson::internal::i64toa(i, Reserve(21));
  }
  void Uint64(uint64_t u) {
    Prefix();
    p_ = rapidjson::internal::u64toa(u, Reserve(20));
  }
  //! A key already quoted as JSON (by an encoder with other escapes than these).
  void RawKey(std::string_view quoted) {
    Prefix();
    std::memcpy(Reserve(quoted.size() + 1), quoted.data(), quoted.size());
    p_ += quoted.size();
    Raw(':');
    comma_ = false;
  }
  //! Splices in one complete value already encoded as JSON (a stored object's bytes), as it is.
  void RawValue(std::string_view json) {
    Prefix();
    std::memcpy(Reserve(json.size()), json.data(), json.size());
    p_ += json.size();
  }
  //! False for NaN and infinities, which JSON cannot hold (only the separator before it is
  //! written, as RapidJSON's Writer does before it stops).
  bool Double(double d) {
    Prefix();
    if (rapidjson::internal::Double(d).IsNanOrInf()) return false;
    p_ = rapidjson::internal::dtoa(d, Reserve(25), 324);
    return true;
  }

  //! A DOM value, as Value::Accept(Writer) writes it; false (and the output cut there) when it
  //! holds a NaN or an infinity.
  bool Write(const Value& v) {
    switch (v.GetType()) {
      case rapidjson::kNullType:
        Null();
        return true;
      case rapidjson::kFalseType:
        Bool(false);
        return true;
      case rapidjson::kTrueType:
        Bool(true);
        return true;
      case rapidjson::kObjectType:
        StartObject();
        for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
          Key(View(m->name));
          if (!Write(m->value)) return false;
        }
        EndObject();
        return true;
      case rapidjson::kArrayType:
        StartArray();
        for (const Value& e : v.GetArray()) {
          if (!Write(e)) return false;
        }
        EndArray();
        return true;
      case rapidjson::kStringType:
        String(std::string_view(v.GetString(), v.GetStringLength()));
        return true;
      case rapidjson::kNumberType:
        if (v.IsDouble()) return Double(v.GetDouble());
        if (v.IsInt()) {
          Int(v.GetInt());
        } else if (v.IsUint()) {
          Uint(v.GetUint());
        } else if (v.IsInt64()) {
          Int64(v.GetInt64());
        } else {
          Uint64(v.GetUint64());
        }
        return true;
    }
    return true;
  }

 private:
  // Room for n more bytes at p_; the string's size (end_) runs ahead of what is written (p_)
  // until Finish.
  char* Reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) [[unlikely]]
      Grow(n);
    return p_;
  }
  [[gnu::noinline]] void Grow(size_t n) {
    const size_t used = static_cast<size_t>(p_ - out_.data());
    // Not zero-filled: everything up to p_ is written before Finish.
    out_.resize_and_overwrite(std::max(out_.size() * 2, used + n + 256), [](char*, size_t size) { return size; });
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }
  void Raw(char c) { *Reserve(1) = c, ++p_; }
  void Prefix() {
    if (comma_) Raw(',');
    comma_ = true;
  }
  void Open(char c) {
    Prefix();
    Raw(c);
    comma_ = false;
  }
  void Close(char c) {
    Raw(c);
    comma_ = true;
  }
  void Literal(std::string_view s) {
    Prefix();
    std::memcpy(Reserve(s.size()), s.data(), s.size());
    p_ += s.size();
  }
  // Whether any of the 8 bytes in x needs an escape: a control character, '"' or '\\'.
  static bool NeedsEscape(uint64_t x) {
    constexpr uint64_t kOnes = 0x0101010101010101;
    constexpr uint64_t kHigh = 0x8080808080808080;
    const uint64_t quote = x ^ (kOnes * '"');
    const uint64_t backslash = x ^ (kOnes * '\\');
    return (((x - kOnes * 0x20) & ~x) | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash)) & kHigh;
  }
  static uint64_t Load8(const char* p) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
  }
  static uint32_t Load4(const char* p) {
    uint32_t x;
    std::memcpy(&x, p, 4);
    return x;
  }
  // Copies s to p when none of its bytes needs an escape (most strings in Kubernetes objects), and
  // returns the end of the copy; nullptr when one does. Whole 8- or 4-byte loads and stores, the
  // last overlapping the one before, rather than a byte-by-byte tail: the strings are short.
  static char* CopyPlain(std::string_view s, char* p) {
    const char* in = s.data();
    const size_t n = s.size();
    if (n >= 8) {
      for (size_t i = 0; i + 8 <= n; i += 8) {
        const uint64_t x = Load8(in + i);
        if (NeedsEscape(x)) return nullptr;
        std::memcpy(p + i, &x, 8);
      }
      const uint64_t last = Load8(in + n - 8);
      if (NeedsEscape(last)) return nullptr;
      std::memcpy(p + n - 8, &last, 8);
    } else if (n >= 4) {
      const uint32_t first = Load4(in), last = Load4(in + n - 4);
      if (NeedsEscape(uint64_t{first} | uint64_t{last} << 32)) return nullptr;
      std::memcpy(p, &first, 4);
      std::memcpy(p + n - 4, &last, 4);
    } else if (n > 0) {
      // The first, middle and last bytes (all of them), padded with bytes that need no escape.
      const auto byte = [&](size_t i, int shift) { return uint64_t{static_cast<unsigned char>(in[i])} << shift; };
      if (NeedsEscape(0x2020202020000000 | byte(0, 0) | byte(n / 2, 8) | byte(n - 1, 16))) return nullptr;
      p[0] = in[0];
      p[n / 2] = in[n / 2];
      p[n - 1] = in[n - 1];
    }
    return p + n;
  }
  void Quoted(std::string_view s) {
    char* p = Reserve(2 + s.size() * 6);
    *p++ = '"';
    if (char* end = CopyPlain(s, p)) {
      p = end;
    } else {
      p = Escaped(s, p);
    }
    *p++ = '"';
    p_ = p;
  }
  // RapidJSON's escapes: the short ones for \b \t \n \f \r, \u00XX for other control
  // characters, \" and \\; every other byte as it is. Eight bytes at a time while none needs one.
  static char* Escaped(std::string_view s, char* p) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    static constexpr auto kEscaped = [] {
      std::array<bool, 256> t{};
      for (int c = 0; c < 0x20; ++c) t[c] = true;
      t['"'] = t['\\'] = true;
      return t;
    }();
    const char* in = s.data();
    const char* const end = in + s.size();
    while (in != end) {
      if (end - in >= 8) {
        const uint64_t x = Load8(in);
        if (!NeedsEscape(x)) {
          std::memcpy(p, &x, 8);
          p += 8;
          in += 8;
          continue;
        }
      }
      const char c = *in++;
      const unsigned char u = static_cast<unsigned char>(c);
      if (!kEscaped[u]) {
        *p++ = c;
        continue;
      }
      *p++ = '\\';
      switch (c) {
        case '"':
        case '\\':
          *p++ = c;
          break;
        case '\b':
          *p++ = 'b';
          break;
        case '\t':
          *p++ = 't';
          break;
        case '\n':
          *p++ = 'n';
          break;
        case '\f':
          *p++ = 'f';
          break;
        case '\r':
          *p++ = 'r';
          break;
        default:
          *p++ = 'u';
          *p++ = '0';
          *p++ = '0';
          *p++ = kHex[u >> 4];
          *p++ = kHex[u & 0xF];
      }
    }
    return p;
  }

  std::string& out_;
  char* p_;    // where the next byte goes
  char* end_;  // the end of out_'s current size
  bool comma_ = false;
};

}  // namespace kubesched::api::json
