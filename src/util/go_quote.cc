#include "util/go_quote.h"

namespace kubesched::util {

namespace {

void AppendHex(fmt::memory_buffer& out, std::string_view prefix, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.append(prefix.data(), prefix.data() + prefix.size());
  for (int i = digits - 1; i >= 0; --i) out.push_back(kHex[(value >> (4 * i)) & 0xF]);
}

// Length of the valid UTF-8 sequence (2 to 4 bytes) starting at s[i], or 0 when it is not one.
// Overlong forms, surrogates and code points above U+10FFFF are invalid, as in Go.
size_t Utf8Length(std::string_view s, size_t i, unsigned& code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  size_t n = 0;
  unsigned min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, code_point = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, code_point = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, code_point = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (b(i + k) & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

void AppendGoQuoted(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      unsigned cp = 0;
      const size_t n = Utf8Length(s, i, cp);
      if (n == 0) {
        AppendHex(out, "\\x", c, 2);  // not UTF-8: the byte itself
        ++i;
      } else if (cp < 0xA0) {
        AppendHex(out, "\\u", cp, 4);  // C1 control characters are not printable
        i += n;
      } else {
        out.append(s.data() + i, s.data() + i + n);
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\a':
        out.append(std::string_view("\\a"));
        break;
      case '\b':
        out.append(std::string_view("\\b"));
        break;
      case '\f':
        out.append(std::string_view("\\f"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      case '\v':
        out.append(std::string_view("\\v"));
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          AppendHex(out, "\\x", c, 2);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

std::string GoQuote(std::string_view s) {
  fmt::memory_buffer out;
  AppendGoQuoted(out, s);
  return fmt::to_string(out);
}

}  // namespace kubesched::util
