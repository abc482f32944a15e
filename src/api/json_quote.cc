#include "api/json_quote.h"

#include <cstddef>

namespace kubesched::api::json {

namespace {

// The length of the valid UTF-8 sequence at s[i] (as Go's utf8.DecodeRuneInString accepts it: no
// overlong forms, surrogates or code points past U+10FFFF), or 0 when the byte starts none.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  const auto tail = [&](size_t k, unsigned char lo, unsigned char hi) {
    return k < s.size() && at(k) >= lo && at(k) <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return tail(i + 1, 0x80, 0xBF) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;
    const unsigned char hi = c == 0xED ? 0x9F : 0xBF;
    return tail(i + 1, lo, hi) && tail(i + 2, 0x80, 0xBF) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;
    return tail(i + 1, lo, hi) && tail(i + 2, 0x80, 0xBF) && tail(i + 3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

}  // namespace

void AppendQuoted(std::string& out, std::string_view s, Quoting quoting) {
  const bool go = quoting == Quoting::kGo;
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  size_t plain = 0;  // start of the run of bytes copied as they are
  const auto flush = [&](size_t i) { out.append(s.data() + plain, i - plain); };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && !(go && (c == '<' || c == '>' || c == '&' || c >= 0x80))) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      // U+2028 and U+2029 (E2 80 A8/A9) end lines in JavaScript.
      const bool separator = n == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                             (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8;
      if (n != 0 && !separator) {
        i += n;
        continue;
      }
      flush(i);
      if (separator) {
        out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
        i += 3;
      } else {
        out += "\\ufffd";
        ++i;
      }
      plain = i;
      continue;
    }
    flush(i);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:  // other control characters and < > &
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
        break;
    }
    plain = ++i;
  }
  flush(s.size());
  out.push_back('"');
}

}  // namespace kubesched::api::json
