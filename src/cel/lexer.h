#pragma once
// The tokens of CEL (cel-spec langdef.md, "Syntax"): identifiers, literals with their escapes
// decoded, operators and punctuation. Whitespace and // comments are skipped.

#include <cstdint>
#include <string>
#include <string_view>

namespace kubesched::cel {

enum class TokenKind : uint8_t {
  kEof,
  kError,  // text: cel-go's message ("token recognition error at: '#'")
  kIdent,
  kInt,  // number: the magnitude (a sign is a separate token)
  kUint,
  kDouble,
  kString,  // text: the decoded value
  kBytes,   // text: the decoded bytes
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kBang,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kAssign,  // '=': not an operator of CEL, lexed so the parser can name it
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  size_t offset = 0;
  size_t length = 0;
  std::string text;
  uint64_t integer = 0;   // kInt, kUint
  double real = 0;        // kDouble
  bool overflow = false;  // kInt, kUint: the digits do not fit 64 bits
};

class Lexer {
 public:
  explicit Lexer(std::string_view input) : input_(input) {}
  Token Next();

 private:
  Token Number(size_t start);
  Token Quoted(size_t start, bool raw, bool bytes);
  Token Error(size_t start, size_t end);

  std::string_view input_;
  size_t pos_ = 0;
};

//! How a token is shown in a syntax error: its source text, or <EOF>.
std::string TokenDisplay(std::string_view input, const Token& token);

}  // namespace kubesched::cel
