#include "cel/lexer.h"

#include <charconv>
#include <string>

namespace kubesched::cel {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsIdentPart(char c) { return IsIdentStart(c) || IsDigit(c); }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string TokenDisplay(std::string_view input, const Token& token) {
  if (token.kind == TokenKind::kEof) return "<EOF>";
  return std::string(input.substr(token.offset, token.length));
}

Token Lexer::Error(size_t start, size_t end) {
  Token t;
  t.kind = TokenKind::kError;
  t.offset = start;
  t.length = end - start;
  // ANTLR's wording, which cel-go passes on.
  t.text = "token recognition error at: '" + std::string(input_.substr(start, end - start)) + "'";
  pos_ = input_.size();  // nothing after an unrecognized token is reported
  return t;
}

Token Lexer::Next() {
  // Whitespace and comments.
  while (pos_ < input_.size()) {
    const char c = input_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < input_.size() && input_[pos_ + 1] == '/') {
      while (pos_ < input_.size() && input_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  Token t;
  t.offset = pos_;
  if (pos_ >= input_.size()) return t;
  const size_t start = pos_;
  const char c = input_[pos_];
  const char next = pos_ + 1 < input_.size() ? input_[pos_ + 1] : '\0';
  const auto punct = [&](TokenKind kind, size_t length) {
    t.kind = kind;
    t.length = length;
    pos_ += length;
    return t;
  };

  if (IsDigit(c) || (c == '.' && IsDigit(next))) return Number(start);
  if (c == '"' || c == '\'') return Quoted(start, false, false);
  if (IsIdentStart(c)) {
    // String prefixes: r (raw), b (bytes), in either order and case.
    size_t p = pos_;
    bool raw = false;
    bool bytes = false;
    for (int i = 0; i < 2 && p < input_.size(); ++i) {
      const char x = input_[p];
      if ((x == 'r' || x == 'R') && !raw) {
        raw = true;
        ++p;
      } else if ((x == 'b' || x == 'B') && !bytes) {
        bytes = true;
        ++p;
      } else {
        break;
      }
      if (p < input_.size() && (input_[p] == '"' || input_[p] == '\'')) {
        pos_ = p;
        return Quoted(start, raw, bytes);
      }
    }
    while (pos_ < input_.size() && IsIdentPart(input_[pos_])) ++pos_;
    t.length = pos_ - start;
    t.text = std::string(input_.substr(start, t.length));
    if (t.text == "true") {
      t.kind = TokenKind::kTrue;
    } else if (t.text == "false") {
      t.kind = TokenKind::kFalse;
    } else if (t.text == "null") {
      t.kind = TokenKind::kNull;
    } else if (t.text == "in") {
      t.kind = TokenKind::kIn;
    } else {
      t.kind = TokenKind::kIdent;
    }
    return t;
  }
  switch (c) {
    case '(':
      return punct(TokenKind::kLParen, 1);
    case ')':
      return punct(TokenKind::kRParen, 1);
    case '[':
      return punct(TokenKind::kLBracket, 1);
    case ']':
      return punct(TokenKind::kRBracket, 1);
    case '{':
      return punct(TokenKind::kLBrace, 1);
    case '}':
      return punct(TokenKind::kRBrace, 1);
    case '.':
      return punct(TokenKind::kDot, 1);
    case ',':
      return punct(TokenKind::kComma, 1);
    case ':':
      return punct(TokenKind::kColon, 1);
    case '?':
      return punct(TokenKind::kQuestion, 1);
    case '+':
      return punct(TokenKind::kPlus, 1);
    case '-':
      return punct(TokenKind::kMinus, 1);
    case '*':
      return punct(TokenKind::kStar, 1);
    case '/':
      return punct(TokenKind::kSlash, 1);
    case '%':
      return punct(TokenKind::kPercent, 1);
    case '!':
      return next == '=' ? punct(TokenKind::kNe, 2) : punct(TokenKind::kBang, 1);
    case '=':
      return next == '=' ? punct(TokenKind::kEq, 2) : punct(TokenKind::kAssign, 1);
    case '<':
      return next == '=' ? punct(TokenKind::kLe, 2) : punct(TokenKind::kLt, 1);
    case '>':
      return next == '=' ? punct(TokenKind::kGe, 2) : punct(TokenKind::kGt, 1);
    case '&':
      if (next == '&') return punct(TokenKind::kAnd, 2);
      break;
    case '|':
      if (next == '|') return punct(TokenKind::kOr, 2);
      break;
    default:
      break;
  }
  // One whole UTF-8 sequence, so the message quotes a character rather than half of one.
  size_t end = pos_ + 1;
  while (end < input_.size() && (static_cast<unsigned char>(input_[end]) & 0xC0) == 0x80) ++end;
  return Error(start, end);
}

Token Lexer::Number(size_t start) {
  Token t;
  t.offset = start;
  size_t p = start;
  // Hexadecimal integers: 0x... with an optional u suffix.
  if (input_[p] == '0' && p + 2 < input_.size() && (input_[p + 1] == 'x' || input_[p + 1] == 'X') &&
      IsHex(input_[p + 2])) {
    p += 2;
    uint64_t value = 0;
    while (p < input_.size() && IsHex(input_[p])) {
      if (value > (UINT64_MAX >> 4)) t.overflow = true;
      value = (value << 4) | static_cast<uint64_t>(HexValue(input_[p]));
      ++p;
    }
    t.integer = value;
    t.kind = TokenKind::kInt;
    if (p < input_.size() && (input_[p] == 'u' || input_[p] == 'U')) {
      t.kind = TokenKind::kUint;
      ++p;
    }
    t.length = p - start;
    pos_ = p;
    return t;
  }
  while (p < input_.size() && IsDigit(input_[p])) ++p;
  bool is_double = false;
  if (p + 1 < input_.size() && input_[p] == '.' && IsDigit(input_[p + 1])) {
    is_double = true;
    ++p;
    while (p < input_.size() && IsDigit(input_[p])) ++p;
  }
  if (p < input_.size() && (input_[p] == 'e' || input_[p] == 'E')) {
    size_t q = p + 1;
    if (q < input_.size() && (input_[q] == '+' || input_[q] == '-')) ++q;
    if (q < input_.size() && IsDigit(input_[q])) {
      is_double = true;
      p = q;
      while (p < input_.size() && IsDigit(input_[p])) ++p;
    }
  }
  t.length = p - start;
  const std::string_view text = input_.substr(start, t.length);
  if (is_double) {
    t.kind = TokenKind::kDouble;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t.real);
    // Out of range: cel-go (strconv.ParseFloat) refuses the literal.
    if (ec != std::errc() || ptr != text.data() + text.size()) t.overflow = true;
    pos_ = p;
    return t;
  }
  t.kind = TokenKind::kInt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t.integer);
  if (ec != std::errc()) t.overflow = true;
  if (p < input_.size() && (input_[p] == 'u' || input_[p] == 'U')) {
    t.kind = TokenKind::kUint;
    ++p;
    t.length = p - start;
  }
  pos_ = p;
  return t;
}

Token Lexer::Quoted(size_t start, bool raw, bool bytes) {
  Token t;
  t.offset = start;
  t.kind = bytes ? TokenKind::kBytes : TokenKind::kString;
  const char quote = input_[pos_];
  const bool triple = pos_ + 2 < input_.size() && input_[pos_ + 1] == quote && input_[pos_ + 2] == quote;
  pos_ += triple ? 3 : 1;
  std::string out;
  while (true) {
    if (pos_ >= input_.size()) return Error(start, input_.size());
    const char c = input_[pos_];
    if (triple) {
      if (c == quote && pos_ + 2 < input_.size() && input_[pos_ + 1] == quote && input_[pos_ + 2] == quote) {
        pos_ += 3;
        break;
      }
    } else {
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c == '\n' || c == '\r') return Error(start, pos_);
    }
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    if (raw) {
      // A raw string has no escapes at all: r"\d" is a backslash and a d.
      out += c;
      ++pos_;
      continue;
    }
    const size_t escape = pos_;
    if (pos_ + 1 >= input_.size()) return Error(start, input_.size());
    const char e = input_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case 'a':
        out += '\a';
        continue;
      case 'b':
        out += '\b';
        continue;
      case 'f':
        out += '\f';
        continue;
      case 'n':
        out += '\n';
        continue;
      case 'r':
        out += '\r';
        continue;
      case 't':
        out += '\t';
        continue;
      case 'v':
        out += '\v';
        continue;
      case '\\':
        out += '\\';
        continue;
      case '\'':
        out += '\'';
        continue;
      case '"':
        out += '"';
        continue;
      case '`':
        out += '`';
        continue;
      case '?':
        out += '?';
        continue;
      default:
        break;
    }
    uint32_t value = 0;
    int digits = 0;
    bool code_point = false;  // \u, \U: a Unicode code point, UTF-8 encoded even in bytes
    if (e == 'x' || e == 'X') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
      code_point = true;
    } else if (e == 'U') {
      digits = 8;
      code_point = true;
    } else if (e >= '0' && e <= '3') {
      // Octal: \[0-3][0-7][0-7].
      if (pos_ + 1 >= input_.size() || input_[pos_] < '0' || input_[pos_] > '7' || input_[pos_ + 1] < '0' ||
          input_[pos_ + 1] > '7') {
        return Error(start, std::min(input_.size(), pos_ + 2));
      }
      value = static_cast<uint32_t>((e - '0') * 64 + (input_[pos_] - '0') * 8 + (input_[pos_ + 1] - '0'));
      pos_ += 2;
      if (bytes) {
        out += static_cast<char>(value);
      } else {
        AppendUtf8(out, value);
      }
      continue;
    } else {
      return Error(start, pos_);
    }
    for (int i = 0; i < digits; ++i) {
      if (pos_ >= input_.size() || !IsHex(input_[pos_])) return Error(start, std::min(input_.size(), pos_ + 1));
      value = value * 16 + static_cast<uint32_t>(HexValue(input_[pos_]));
      ++pos_;
    }
    if (code_point || !bytes) {
      if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return Error(escape, pos_);
      AppendUtf8(out, value);
    } else {
      out += static_cast<char>(value);
    }
  }
  t.length = pos_ - start;
  t.text = std::move(out);
  return t;
}

}  // namespace kubesched::cel
