#include "store/selectors.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "api/names.h"
#include "store/errors.h"

namespace kubesched::store {
namespace {

namespace json = api::json;

Error ParseError(std::string_view detail) { return BadRequest(fmt::format("unable to parse requirement: {}", detail)); }

// labels.Lexer's tokens.
struct Token {
  enum class Kind { kEnd, kIdent, kIn, kNotIn, kEq, kDoubleEq, kNotEq, kGt, kLt, kNot, kOpen, kClose, kComma };
  Kind kind = Kind::kEnd;
  std::string text;
};

bool IsSpecial(char c) { return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::vector<Token> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    using K = Token::Kind;
    if (IsSpecial(c)) {
      if (c == '=' && i + 1 < s.size() && s[i + 1] == '=') {
        out.push_back({K::kDoubleEq, "=="});
        i += 2;
      } else if (c == '!' && i + 1 < s.size() && s[i + 1] == '=') {
        out.push_back({K::kNotEq, "!="});
        i += 2;
      } else {
        static constexpr std::pair<char, K> kOne[] = {{'=', K::kEq},    {'!', K::kNot},   {'(', K::kOpen},
                                                      {')', K::kClose}, {',', K::kComma}, {'>', K::kGt},
                                                      {'<', K::kLt}};
        for (auto [ch, k] : kOne) {
          if (ch == c) out.push_back({k, std::string(1, c)});
        }
        ++i;
      }
      continue;
    }
    size_t start = i;
    while (i < s.size() && !IsSpace(s[i]) && !IsSpecial(s[i])) ++i;
    std::string word(s.substr(start, i - start));
    if (word == "in") {
      out.push_back({K::kIn, word});
    } else if (word == "notin") {
      out.push_back({K::kNotIn, word});
    } else {
      out.push_back({K::kIdent, word});
    }
  }
  out.push_back({Token::Kind::kEnd, ""});
  return out;
}

std::optional<Error> CheckKey(std::string_view key) {
  auto errs = api::IsQualifiedName(key);
  if (errs.empty()) return std::nullopt;
  return ParseError(fmt::format("key: Invalid value: \"{}\": {}", key, errs.front()));
}

std::optional<Error> CheckValue(std::string_view value) {
  auto errs = api::IsValidLabelValue(value);
  if (errs.empty()) return std::nullopt;
  return ParseError(fmt::format("values[0]: Invalid value: \"{}\": {}", value, errs.front()));
}

}  // namespace

bool LabelSelectorExpr::Matches(const LabelPairs& labels) const {
  if (nothing) return false;
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const api::SelectorRequirement& r) { return r.Matches(labels); });
}

Result<LabelSelectorExpr> ParseLabelSelector(std::string_view text) {
  using K = Token::Kind;
  using Op = api::SelectorOperator;
  LabelSelectorExpr out;
  std::vector<Token> toks = Lex(text);
  size_t i = 0;
  auto peek = [&]() -> const Token& { return toks[i]; };
  if (peek().kind == K::kEnd) return out;
  while (true) {
    api::SelectorRequirement r;
    if (peek().kind == K::kNot) {
      ++i;
      if (peek().kind != K::kIdent)
        return std::unexpected(ParseError(fmt::format("found '{}', expected: identifier after '!'", peek().text)));
      r.key = toks[i++].text;
      r.op = Op::kDoesNotExist;
    } else {
      if (peek().kind != K::kIdent)
        return std::unexpected(
            ParseError(fmt::format("found '{}', expected: !, identifier, or 'end of string'", peek().text)));
      r.key = toks[i++].text;
      switch (peek().kind) {
        case K::kEnd:
        case K::kComma:
          r.op = Op::kExists;
          break;
        case K::kEq:
        case K::kDoubleEq:
        case K::kNotEq:
        case K::kGt:
        case K::kLt: {
          const K op = toks[i++].kind;
          r.op = op == K::kNotEq ? Op::kNotIn : op == K::kGt ? Op::kGt : op == K::kLt ? Op::kLt : Op::kIn;
          // "a=" selects an empty value.
          if (peek().kind == K::kIdent) {
            r.values.push_back(toks[i++].text);
          } else if (peek().kind == K::kEnd || peek().kind == K::kComma) {
            r.values.emplace_back();
          } else {
            return std::unexpected(ParseError(fmt::format("found '{}', expected: identifier", peek().text)));
          }
          if ((r.op == Op::kGt || r.op == Op::kLt) && !api::ParseSelectorInteger(r.values[0])) {
            return std::unexpected(
                ParseError(fmt::format("for 'Gt', 'Lt' operators, the value must be an integer: \"{}\"", r.values[0])));
          }
          break;
        }
        case K::kIn:
        case K::kNotIn: {
          r.op = toks[i++].kind == K::kIn ? Op::kIn : Op::kNotIn;
          if (peek().kind != K::kOpen)
            return std::unexpected(ParseError(fmt::format("found '{}', expected: '('", peek().text)));
          ++i;
          while (true) {
            if (peek().kind == K::kIdent) {
              r.values.push_back(toks[i++].text);
            } else if (peek().kind == K::kComma || peek().kind == K::kClose) {
              r.values.emplace_back();  // "(a,)" holds an empty value, as upstream reads it
            } else {
              return std::unexpected(ParseError(fmt::format("found '{}', expected: ',', or identifier", peek().text)));
            }
            if (peek().kind == K::kClose) {
              ++i;
              break;
            }
            if (peek().kind != K::kComma)
              return std::unexpected(ParseError(fmt::format("found '{}', expected: ',' or ')'", peek().text)));
            ++i;
          }
          break;
        }
        default:
          return std::unexpected(
              ParseError(fmt::format("found '{}', expected: in, notin, =, ==, !=, gt, lt", peek().text)));
      }
    }
    if (auto e = CheckKey(r.key)) return std::unexpected(*e);
    if (r.op != Op::kGt && r.op != Op::kLt) {
      for (const auto& v : r.values) {
        if (auto e = CheckValue(v)) return std::unexpected(*e);
      }
    }
    out.requirements.push_back(std::move(r));
    if (peek().kind == K::kEnd) break;
    if (peek().kind != K::kComma)
      return std::unexpected(ParseError(fmt::format("found '{}', expected: ',' or 'end of string'", peek().text)));
    ++i;
  }
  return out;
}

Result<LabelSelectorExpr> LabelSelectorFromJson(const json::Value* selector) {
  LabelSelectorExpr out;
  if (selector == nullptr || selector->IsNull()) {
    out.nothing = true;
    return out;
  }
  if (!selector->IsObject()) return std::unexpected(BadRequest("selector: must be an object"));
  if (const json::Value* ml = json::Find(*selector, "matchLabels"); ml && ml->IsObject()) {
    for (const auto& m : ml->GetObject()) {
      out.requirements.push_back(
          {std::string(json::View(m.name)), api::SelectorOperator::kIn, {std::string(json::View(m.value))}});
    }
  }
  if (const json::Value* me = json::Find(*selector, "matchExpressions"); me && me->IsArray()) {
    for (const auto& e : me->GetArray()) {
      api::SelectorRequirement r;
      r.key = std::string(json::GetString(e, "key"));
      const std::string_view op = json::GetString(e, "operator");
      if (op == "In") {
        r.op = api::SelectorOperator::kIn;
      } else if (op == "NotIn") {
        r.op = api::SelectorOperator::kNotIn;
      } else if (op == "Exists") {
        r.op = api::SelectorOperator::kExists;
      } else if (op == "DoesNotExist") {
        r.op = api::SelectorOperator::kDoesNotExist;
      } else {
        return std::unexpected(BadRequest(fmt::format("\"{}\" is not a valid label selector operator", op)));
      }
      if (const json::Value* vs = json::Find(e, "values"); vs && vs->IsArray()) {
        for (const auto& v : vs->GetArray()) r.values.emplace_back(json::View(v));
      }
      out.requirements.push_back(std::move(r));
    }
  }
  return out;
}

Result<std::vector<FieldRequirement>> ParseFieldSelector(std::string_view text, const ResourceType& type) {
  std::vector<FieldRequirement> out;
  // Terms are separated by unescaped commas; "\," "\=" "\!" and "\\" stand for themselves.
  std::vector<std::string> terms;
  std::string cur;
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      cur += c;
      cur += text[++i];
    } else if (c == ',') {
      terms.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
    any = true;
  }
  if (any) terms.push_back(std::move(cur));
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    // fields.splitTerm: the first unescaped "!=", "==" or "=".
    size_t pos = std::string::npos, op_len = 0;
    bool equals = true;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '\\') {
        ++i;
        continue;
      }
      if (term.compare(i, 2, "!=") == 0) {
        pos = i, op_len = 2, equals = false;
        break;
      }
      if (term.compare(i, 2, "==") == 0) {
        pos = i, op_len = 2;
        break;
      }
      if (term[i] == '=') {
        pos = i, op_len = 1;
        break;
      }
    }
    if (pos == std::string::npos) {
      return std::unexpected(BadRequest(fmt::format("invalid selector: '{}'; can't understand '{}'", text, term)));
    }
    std::string key = term.substr(0, pos);
    std::string value;
    for (size_t i = pos + op_len; i < term.size(); ++i) {
      if (term[i] == '\\' && i + 1 < term.size()) ++i;
      value += term[i];
    }
    const bool supported =
        key == "metadata.name" || key == "metadata.namespace" ||
        std::find(type.field_selectors.begin(), type.field_selectors.end(), key) != type.field_selectors.end();
    if (!supported) return std::unexpected(BadRequest(fmt::format("field label not supported: {}", key)));
    out.push_back({std::move(key), equals, std::move(value)});
  }
  return out;
}

bool CompiledSelectors::Matches(const Object& object) const {
  if (!labels.Matches(object.labels())) return false;
  for (const FieldRequirement& r : fields) {
    std::string_view have;
    if (r.field == "metadata.name") {
      have = object.name;
    } else if (r.field == "metadata.namespace") {
      have = object.namespace_;
    } else {
      have = object.Field(r.field);
    }
    if ((have == r.value) != r.equals) return false;
  }
  return true;
}

Result<CompiledSelectors> CompileSelectors(const Selectors& selectors, const ResourceType& type) {
  CompiledSelectors out;
  auto labels = ParseLabelSelector(selectors.label_selector);
  if (!labels) return std::unexpected(labels.error());
  out.labels = std::move(*labels);
  auto fields = ParseFieldSelector(selectors.field_selector, type);
  if (!fields) return std::unexpected(fields.error());
  out.fields = std::move(*fields);
  return out;
}

}  // namespace kubesched::store
