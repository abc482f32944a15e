#include "cel/functions.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>

namespace kubesched::cel {
namespace {

using Args = std::span<const Value>;

// cel-go's cost factors (common/cost.go).
constexpr double kStringTraversalCostFactor = 0.1;
constexpr double kRegexStringLengthCostFactor = 0.25;

int64_t Ceil(double v) { return static_cast<int64_t>(std::ceil(v)); }
int64_t Traversal(const Value& v) { return Ceil(static_cast<double>(CostSize(v)) * kStringTraversalCostFactor); }

Type T(TypeKind k) { return Type(k); }
const Type kBoolT = T(TypeKind::kBool);
const Type kIntT = T(TypeKind::kInt);
const Type kUintT = T(TypeKind::kUint);
const Type kDoubleT = T(TypeKind::kDouble);
const Type kStringT = T(TypeKind::kString);
const Type kBytesT = T(TypeKind::kBytes);
const Type kDynT = T(TypeKind::kDyn);
const Type kQuantityT = T(TypeKind::kQuantity);
const Type kSemverT = T(TypeKind::kSemver);

// ---- UTF-8 helpers: CEL's string functions index by code point.

size_t RuneLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// The byte offset of code point `index` (index may equal the number of code points).
size_t ByteOffset(std::string_view s, int64_t index) {
  size_t pos = 0;
  for (int64_t i = 0; i < index && pos < s.size(); ++i) pos += RuneLength(static_cast<unsigned char>(s[pos]));
  return std::min(pos, s.size());
}

uint32_t DecodeRune(std::string_view s, size_t pos, size_t& length) {
  const unsigned char c = static_cast<unsigned char>(s[pos]);
  length = std::min(RuneLength(c), s.size() - pos);
  if (length == 1) return c;
  uint32_t cp = c & (0xFF >> (length + 1));
  for (size_t i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[pos + i]) & 0x3F);
  return cp;
}

bool IsSpace(uint32_t r) {
  // unicode.IsSpace, which strings.TrimSpace uses.
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c >> 5) == 0x6) {
      n = 2;
      min = 0x80;
    } else if ((c >> 4) == 0xE) {
      n = 3;
      min = 0x800;
    } else if ((c >> 3) == 0x1E) {
      n = 4;
      min = 0x10000;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    uint32_t cp = c & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
      const unsigned char x = static_cast<unsigned char>(s[i + k]);
      if ((x & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (x & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

Value IndexError(EvalContext& ctx, const Node& call, int64_t index) {
  return ctx.Error("index out of range: " + std::to_string(index), call.offset);
}

// ---- size and the standard string functions.

Value Size(EvalContext&, const Node&, Args a) {
  const Value& v = a[0];
  if (v.kind == ValueKind::kString) return Value::Int(CodePoints(v.str));
  if (v.kind == ValueKind::kBytes) return Value::Int(static_cast<int64_t>(v.str.size()));
  if (v.kind == ValueKind::kList) return Value::Int(static_cast<int64_t>(v.list->size()));
  return Value::Int(MapSize(v));
}

Value Contains(EvalContext&, const Node&, Args a) {
  return Value::Bool(a[0].str.find(a[1].str) != std::string_view::npos);
}
Value StartsWith(EvalContext&, const Node&, Args a) { return Value::Bool(a[0].str.starts_with(a[1].str)); }
Value EndsWith(EvalContext&, const Node&, Args a) { return Value::Bool(a[0].str.ends_with(a[1].str)); }
int64_t TraversalOfFirst(Args a, const Value&) { return Traversal(a[0]); }
int64_t ContainsCost(Args a, const Value&) { return Traversal(a[0]) * Traversal(a[1]); }
int64_t RegexCost(Args a, const Value&) {
  const int64_t str = Ceil((1.0 + static_cast<double>(CostSize(a[0]))) * kStringTraversalCostFactor);
  const int64_t re = Ceil(static_cast<double>(CostSize(a[1])) * kRegexStringLengthCostFactor);
  return str * re;
}

// The call's constant regular expression, or one compiled now; null after reporting an error.
const RE2* Regex(EvalContext& ctx, const Node& call, std::string_view pattern, std::unique_ptr<RE2>& holder,
                 Value& error) {
  if (call.regex) return call.regex.get();
  RE2::Options options;
  options.set_log_errors(false);
  holder = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!holder->ok()) {
    error = ctx.Error("error parsing regexp: " + holder->error(), call.offset);
    return nullptr;
  }
  return holder.get();
}

Value Matches(EvalContext& ctx, const Node& call, Args a) {
  std::unique_ptr<RE2> holder;
  Value error;
  const RE2* re = Regex(ctx, call, a[1].str, holder, error);
  if (!re) return error;
  return Value::Bool(RE2::PartialMatch(re2::StringPiece(a[0].str.data(), a[0].str.size()), *re));
}

// ---- conversions.

std::string SyntaxError(std::string_view function, std::string_view text) {
  return "strconv." + std::string(function) + ": parsing \"" + std::string(text) + "\": invalid syntax";
}
std::string RangeError(std::string_view function, std::string_view text) {
  return "strconv." + std::string(function) + ": parsing \"" + std::string(text) + "\": value out of range";
}

Value IntOf(EvalContext& ctx, const Node& call, Args a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kInt:
      return v;
    case ValueKind::kUint:
      if (v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return ctx.Error("integer overflow", call.offset);
      return Value::Int(static_cast<int64_t>(v.u));
    case ValueKind::kDouble:
      if (std::isnan(v.d) || v.d <= -9223372036854775808.0 || v.d >= 9223372036854775808.0) {
        return ctx.Error("integer overflow", call.offset);
      }
      return Value::Int(static_cast<int64_t>(v.d));
    default: {
      std::string_view s = v.str;
      const bool plus = !s.empty() && s[0] == '+';
      int64_t out = 0;
      auto [ptr, ec] = std::from_chars(s.data() + (plus ? 1 : 0), s.data() + s.size(), out);
      if (s.empty() || (plus && s.size() > 1 && s[1] == '-') || ptr != s.data() + s.size() ||
          ec == std::errc::invalid_argument) {
        return ctx.Error(SyntaxError("ParseInt", s), call.offset);
      }
      if (ec == std::errc::result_out_of_range) return ctx.Error(RangeError("ParseInt", s), call.offset);
      return Value::Int(out);
    }
  }
}

Value UintOf(EvalContext& ctx, const Node& call, Args a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kUint:
      return v;
    case ValueKind::kInt:
      if (v.i < 0) return ctx.Error("unsigned integer overflow", call.offset);
      return Value::Uint(static_cast<uint64_t>(v.i));
    case ValueKind::kDouble:
      if (std::isnan(v.d) || v.d < 0 || v.d >= 18446744073709551616.0)
        return ctx.Error("unsigned integer overflow", call.offset);
      return Value::Uint(static_cast<uint64_t>(v.d));
    default: {
      std::string_view s = v.str;
      uint64_t out = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      if (s.empty() || ptr != s.data() + s.size() || ec == std::errc::invalid_argument) {
        return ctx.Error(SyntaxError("ParseUint", s), call.offset);
      }
      if (ec == std::errc::result_out_of_range) return ctx.Error(RangeError("ParseUint", s), call.offset);
      return Value::Uint(out);
    }
  }
}

std::optional<double> ParseDouble(std::string_view s) {
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  std::string lower(body);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity") {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (lower == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.')) return std::nullopt;
  double out = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), out);
  if (ptr != body.data() + body.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Go returns ±Inf (with an error) for overflow and 0 for underflow; cel-go refuses both.
    return std::nullopt;
  }
  if (ec != std::errc()) return std::nullopt;
  return negative ? -out : out;
}

Value DoubleOf(EvalContext& ctx, const Node& call, Args a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kDouble:
      return v;
    case ValueKind::kInt:
      return Value::Double(static_cast<double>(v.i));
    case ValueKind::kUint:
      return Value::Double(static_cast<double>(v.u));
    default: {
      auto d = ParseDouble(v.str);
      if (!d) return ctx.Error(SyntaxError("ParseFloat", v.str), call.offset);
      return Value::Double(*d);
    }
  }
}

Value StringOf(EvalContext& ctx, const Node& call, Args a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kString:
      return v;
    case ValueKind::kInt:
      return Value::String(ctx.Keep(std::to_string(v.i)));
    case ValueKind::kUint:
      return Value::String(ctx.Keep(std::to_string(v.u)));
    case ValueKind::kDouble:
      return Value::String(ctx.Keep(FormatDouble(v.d)));
    case ValueKind::kBool:
      return Value::String(v.b ? "true" : "false");
    default:
      if (!ValidUtf8(v.str)) return ctx.Error("invalid UTF-8 in bytes, cannot convert to string", call.offset);
      return Value::String(v.str);
  }
}

Value BoolOf(EvalContext& ctx, const Node& call, Args a) {
  const Value& v = a[0];
  if (v.kind == ValueKind::kBool) return v;
  // strconv.ParseBool.
  static constexpr std::string_view kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
  static constexpr std::string_view kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (auto t : kTrue) {
    if (v.str == t) return Value::Bool(true);
  }
  for (auto f : kFalse) {
    if (v.str == f) return Value::Bool(false);
  }
  return ctx.Error(SyntaxError("ParseBool", v.str), call.offset);
}

Value BytesOf(EvalContext&, const Node&, Args a) { return Value::BytesOf(a[0].str); }

// ---- cel-go's strings extension (ext.Strings, version 2).

Value CharAt(EvalContext& ctx, const Node& call, Args a) {
  const int64_t n = CodePoints(a[0].str);
  const int64_t i = a[1].i;
  if (i < 0 || i > n) return IndexError(ctx, call, i);
  if (i == n) return Value::String("");
  const size_t begin = ByteOffset(a[0].str, i);
  const size_t end = ByteOffset(a[0].str, i + 1);
  return Value::String(a[0].str.substr(begin, end - begin));
}

Value IndexOf(EvalContext& ctx, const Node& call, Args a) {
  const std::string_view s = a[0].str;
  const int64_t n = CodePoints(s);
  int64_t offset = 0;
  if (a.size() > 2) {
    offset = a[2].i;
    if (offset < 0 || offset > n) return IndexError(ctx, call, offset);
  }
  if (a[1].str.empty()) return Value::Int(offset);
  const size_t from = ByteOffset(s, offset);
  const size_t found = s.find(a[1].str, from);
  if (found == std::string_view::npos) return Value::Int(-1);
  return Value::Int(CodePoints(s.substr(0, found)));
}

Value LastIndexOf(EvalContext& ctx, const Node& call, Args a) {
  const std::string_view s = a[0].str;
  const int64_t n = CodePoints(s);
  int64_t offset = n;
  if (a.size() > 2) {
    offset = a[2].i;
    if (offset < 0 || offset > n) return IndexError(ctx, call, offset);
  }
  if (a[1].str.empty()) return Value::Int(offset);
  // The last occurrence that starts at or before the offset.
  const size_t limit = ByteOffset(s, offset);
  const size_t found = s.rfind(a[1].str, limit);
  if (found == std::string_view::npos) return Value::Int(-1);
  return Value::Int(CodePoints(s.substr(0, found)));
}

Value LowerAscii(EvalContext& ctx, const Node&, Args a) {
  std::string out(a[0].str);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Value::String(ctx.Keep(std::move(out)));
}

Value UpperAscii(EvalContext& ctx, const Node&, Args a) {
  std::string out(a[0].str);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return Value::String(ctx.Keep(std::move(out)));
}

Value Replace(EvalContext& ctx, const Node&, Args a) {
  // strings.Replace(s, old, new, n): n < 0 replaces every occurrence; an empty old matches at the
  // start and after every code point.
  const std::string_view s = a[0].str;
  const std::string_view from = a[1].str;
  const std::string_view to = a[2].str;
  int64_t n = a.size() > 3 ? a[3].i : -1;
  // The size of the result first: it may be far larger than the input.
  int64_t replacements = 0;
  if (from.empty()) {
    replacements = CodePoints(s) + 1;
  } else {
    for (size_t p = s.find(from); p != std::string_view::npos; p = s.find(from, p + from.size())) ++replacements;
  }
  if (n >= 0) replacements = std::min(replacements, n);
  const double result_size =
      static_cast<double>(s.size()) +
      static_cast<double>(replacements) * (static_cast<double>(to.size()) - static_cast<double>(from.size()));
  if (!ctx.Affordable(Ceil(result_size * kStringTraversalCostFactor))) return ctx.CancelledError();
  std::string out;
  size_t pos = 0;
  while (n != 0) {
    size_t found;
    if (from.empty()) {
      if (pos > s.size()) break;
      found = pos;
    } else {
      found = s.find(from, pos);
      if (found == std::string_view::npos) break;
    }
    out.append(s.substr(pos, found - pos));
    out.append(to);
    if (from.empty()) {
      if (found == s.size()) {
        pos = s.size() + 1;
        --n;
        break;
      }
      const size_t len = RuneLength(static_cast<unsigned char>(s[found]));
      out.append(s.substr(found, len));
      pos = found + len;
    } else {
      pos = found + from.size();
    }
    --n;
  }
  if (pos <= s.size()) out.append(s.substr(pos));
  return Value::String(ctx.Keep(std::move(out)));
}

int64_t DoubleTraversalOfFirst(Args a, const Value&) {
  return Ceil(static_cast<double>(CostSize(a[0])) * 2 * kStringTraversalCostFactor);
}

Value Split(EvalContext& ctx, const Node&, Args a) {
  // strings.SplitN(s, sep, n): n == 0 gives no elements, n < 0 all; an empty sep splits into
  // code points.
  const std::string_view s = a[0].str;
  const std::string_view sep = a[1].str;
  const int64_t n = a.size() > 2 ? a[2].i : -1;
  // At most one element per byte (and one more): a list element per cost unit at most.
  if (!ctx.Affordable(static_cast<int64_t>(sep.empty() ? s.size() : s.size() / sep.size()) + 1)) {
    return ctx.CancelledError();
  }
  auto* list = ctx.NewList();
  if (n == 0) return Value::List(list);
  size_t pos = 0;
  if (sep.empty()) {
    while (pos < s.size()) {
      if (n > 0 && static_cast<int64_t>(list->size()) == n - 1) {
        list->push_back(Value::String(s.substr(pos)));
        return Value::List(list);
      }
      const size_t len = std::min(RuneLength(static_cast<unsigned char>(s[pos])), s.size() - pos);
      list->push_back(Value::String(s.substr(pos, len)));
      pos += len;
    }
    return Value::List(list);
  }
  while (n < 0 || static_cast<int64_t>(list->size()) < n - 1) {
    const size_t found = s.find(sep, pos);
    if (found == std::string_view::npos) break;
    list->push_back(Value::String(s.substr(pos, found - pos)));
    pos = found + sep.size();
  }
  list->push_back(Value::String(s.substr(pos)));
  return Value::List(list);
}

Value Substring(EvalContext& ctx, const Node& call, Args a) {
  const std::string_view s = a[0].str;
  const int64_t n = CodePoints(s);
  const int64_t start = a[1].i;
  const int64_t end = a.size() > 2 ? a[2].i : n;
  if (start < 0 || start > n) return IndexError(ctx, call, start);
  if (end < 0 || end > n) return IndexError(ctx, call, end);
  if (start > end) {
    return ctx.Error("invalid substring range. start: " + std::to_string(start) + ", end: " + std::to_string(end),
                     call.offset);
  }
  const size_t b = ByteOffset(s, start);
  const size_t e = ByteOffset(s, end);
  return Value::String(s.substr(b, e - b));
}

Value Trim(EvalContext&, const Node&, Args a) {
  std::string_view s = a[0].str;
  size_t begin = 0;
  while (begin < s.size()) {
    size_t len = 0;
    if (!IsSpace(DecodeRune(s, begin, len))) break;
    begin += len;
  }
  size_t end = s.size();
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t len = 0;
    if (!IsSpace(DecodeRune(s, start, len))) break;
    end = start;
  }
  return Value::String(s.substr(begin, end - begin));
}

Value Join(EvalContext& ctx, const Node& call, Args a) {
  const std::string_view sep = a.size() > 1 ? a[1].str : std::string_view();
  double size = static_cast<double>(sep.size()) * static_cast<double>(a[0].list->size());
  for (const Value& e : *a[0].list) size += static_cast<double>(e.str.size());
  if (!ctx.Affordable(Ceil(size * kStringTraversalCostFactor))) return ctx.CancelledError();
  std::string out;
  for (size_t i = 0; i < a[0].list->size(); ++i) {
    const Value& e = (*a[0].list)[i];
    if (e.kind != ValueKind::kString) {
      return ctx.Error("join: list contains a non-string element of type " + std::string(TypeName(e)), call.offset);
    }
    if (i > 0) out.append(sep);
    out.append(e.str);
  }
  return Value::String(ctx.Keep(std::move(out)));
}

int64_t JoinCost(Args, const Value& result) {
  return Ceil(static_cast<double>(CostSize(result)) * 2 * kStringTraversalCostFactor);
}

// ---- Kubernetes' regex library.

Value Find(EvalContext& ctx, const Node& call, Args a) {
  std::unique_ptr<RE2> holder;
  Value error;
  const RE2* re = Regex(ctx, call, a[1].str, holder, error);
  if (!re) return error;
  re2::StringPiece match;
  const re2::StringPiece text(a[0].str.data(), a[0].str.size());
  if (!re->Match(text, 0, text.size(), RE2::UNANCHORED, &match, 1)) return Value::String("");
  return Value::String(std::string_view(match.data(), match.size()));
}

Value FindAll(EvalContext& ctx, const Node& call, Args a) {
  std::unique_ptr<RE2> holder;
  Value error;
  const RE2* re = Regex(ctx, call, a[1].str, holder, error);
  if (!re) return error;
  const int64_t limit = a.size() > 2 ? a[2].i : -1;
  const std::string_view s = a[0].str;
  if (!ctx.Affordable(static_cast<int64_t>(s.size()) + 1)) return ctx.CancelledError();
  auto* list = ctx.NewList();
  const re2::StringPiece text(s.data(), s.size());
  size_t pos = 0;
  std::optional<size_t> previous_end;
  // As Go's FindAllString: successive non-overlapping matches; an empty match right after the
  // previous match is skipped.
  while (pos <= s.size() && (limit < 0 || static_cast<int64_t>(list->size()) < limit)) {
    re2::StringPiece match;
    if (!re->Match(text, pos, text.size(), RE2::UNANCHORED, &match, 1)) break;
    const size_t begin = static_cast<size_t>(match.data() - s.data());
    const size_t end = begin + match.size();
    if (match.empty() && previous_end && begin == *previous_end) {
      if (pos >= s.size()) break;
      pos += RuneLength(static_cast<unsigned char>(s[pos]));
      continue;
    }
    list->push_back(Value::String(s.substr(begin, end - begin)));
    previous_end = end;
    if (match.empty()) {
      if (end >= s.size()) break;
      pos = end + RuneLength(static_cast<unsigned char>(s[end]));
    } else {
      pos = end;
    }
  }
  return Value::List(list);
}

// ---- Kubernetes' quantity library.

Value QuantityOf(EvalContext& ctx, const Node& call, Args a) {
  if (call.folded_quantity) return Value::Quantity(*call.folded_quantity);
  auto q = QuantityValue::Parse(a[0].str);
  if (!q) return ctx.Error(std::string(kQuantityFormatError), call.offset);
  return Value::Quantity(*q);
}
Value IsQuantity(EvalContext&, const Node&, Args a) { return Value::Bool(QuantityValue::Parse(a[0].str).has_value()); }
Value QuantitySign(EvalContext&, const Node&, Args a) { return Value::Int(a[0].AsQuantity().Sign()); }
Value QuantityIsGreaterThan(EvalContext&, const Node&, Args a) {
  return Value::Bool(a[0].AsQuantity().Compare(a[1].AsQuantity()) > 0);
}
Value QuantityIsLessThan(EvalContext&, const Node&, Args a) {
  return Value::Bool(a[0].AsQuantity().Compare(a[1].AsQuantity()) < 0);
}
Value QuantityCompareTo(EvalContext&, const Node&, Args a) {
  return Value::Int(a[0].AsQuantity().Compare(a[1].AsQuantity()));
}
Value QuantityAsFloat(EvalContext&, const Node&, Args a) {
  return Value::Double(a[0].AsQuantity().AsApproximateFloat());
}
Value QuantityIsInteger(EvalContext&, const Node&, Args a) {
  return Value::Bool(a[0].AsQuantity().AsInt64().has_value());
}
Value QuantityAsInteger(EvalContext& ctx, const Node& call, Args a) {
  auto v = a[0].AsQuantity().AsInt64();
  if (!v) return ctx.Error("cannot convert value to integer", call.offset);
  return Value::Int(*v);
}
QuantityValue Operand(const Value& v) {
  return v.kind == ValueKind::kInt ? QuantityValue::FromInt(v.i) : v.AsQuantity();
}
Value QuantityAdd(EvalContext&, const Node&, Args a) { return Value::Quantity(a[0].AsQuantity().Add(Operand(a[1]))); }
Value QuantitySub(EvalContext&, const Node&, Args a) { return Value::Quantity(a[0].AsQuantity().Sub(Operand(a[1]))); }

// ---- Kubernetes' semver library.

Value SemverOf(EvalContext& ctx, const Node& call, Args a) {
  if (call.folded_semver) return Value::Semver(call.folded_semver.get());
  auto parsed = ParseSemver(a[0].str, a.size() > 1 && a[1].b);
  if (auto* message = std::get_if<std::string>(&parsed)) return ctx.Error(std::move(*message), call.offset);
  return Value::Semver(ctx.Keep(std::get<api::SemVer>(std::move(parsed))));
}
Value IsSemver(EvalContext&, const Node&, Args a) {
  return Value::Bool(std::holds_alternative<api::SemVer>(ParseSemver(a[0].str, a.size() > 1 && a[1].b)));
}
int SemverCompare(Args a) {
  const auto c = a[0].semver->Compare(*a[1].semver);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}
Value SemverIsGreaterThan(EvalContext&, const Node&, Args a) { return Value::Bool(SemverCompare(a) > 0); }
Value SemverIsLessThan(EvalContext&, const Node&, Args a) { return Value::Bool(SemverCompare(a) < 0); }
Value SemverCompareTo(EvalContext&, const Node&, Args a) { return Value::Int(SemverCompare(a)); }
Value SemverMajor(EvalContext&, const Node&, Args a) { return Value::Int(static_cast<int64_t>(a[0].semver->major)); }
Value SemverMinor(EvalContext&, const Node&, Args a) { return Value::Int(static_cast<int64_t>(a[0].semver->minor)); }
Value SemverPatch(EvalContext&, const Node&, Args a) { return Value::Int(static_cast<int64_t>(a[0].semver->patch)); }

std::vector<Overload> BuildLibrary() {
  const Type list_dyn = Type::List(kDynT);
  const Type map_dyn = Type::Map(kDynT, kDynT);
  const Type list_string = Type::List(kStringT);
  std::vector<Overload> l;
  const auto add = [&](std::string_view id, std::string_view fn, bool member, std::vector<Type> params, Type result,
                       auto impl, int64_t (*cost)(Args, const Value&) = nullptr) {
    l.push_back(Overload{id, fn, member, std::move(params), std::move(result), impl, cost});
  };
  // Standard library.
  for (bool member : {false, true}) {
    add(member ? "string_size" : "size_string", "size", member, {kStringT}, kIntT, Size);
    add(member ? "bytes_size" : "size_bytes", "size", member, {kBytesT}, kIntT, Size);
    add(member ? "list_size" : "size_list", "size", member, {list_dyn}, kIntT, Size);
    add(member ? "map_size" : "size_map", "size", member, {map_dyn}, kIntT, Size);
  }
  add("contains_string", "contains", true, {kStringT, kStringT}, kBoolT, Contains, ContainsCost);
  add("starts_with_string", "startsWith", true, {kStringT, kStringT}, kBoolT, StartsWith, TraversalOfFirst);
  add("ends_with_string", "endsWith", true, {kStringT, kStringT}, kBoolT, EndsWith, TraversalOfFirst);
  add("matches", "matches", false, {kStringT, kStringT}, kBoolT, Matches, RegexCost);
  add("matches_string", "matches", true, {kStringT, kStringT}, kBoolT, Matches, RegexCost);
  // Conversions.
  add("int64_to_int64", "int", false, {kIntT}, kIntT, IntOf);
  add("uint64_to_int64", "int", false, {kUintT}, kIntT, IntOf);
  add("double_to_int64", "int", false, {kDoubleT}, kIntT, IntOf);
  add("string_to_int64", "int", false, {kStringT}, kIntT, IntOf);
  add("uint64_to_uint64", "uint", false, {kUintT}, kUintT, UintOf);
  add("int64_to_uint64", "uint", false, {kIntT}, kUintT, UintOf);
  add("double_to_uint64", "uint", false, {kDoubleT}, kUintT, UintOf);
  add("string_to_uint64", "uint", false, {kStringT}, kUintT, UintOf);
  add("double_to_double", "double", false, {kDoubleT}, kDoubleT, DoubleOf);
  add("int64_to_double", "double", false, {kIntT}, kDoubleT, DoubleOf);
  add("uint64_to_double", "double", false, {kUintT}, kDoubleT, DoubleOf);
  add("string_to_double", "double", false, {kStringT}, kDoubleT, DoubleOf);
  add("string_to_string", "string", false, {kStringT}, kStringT, StringOf);
  add("int64_to_string", "string", false, {kIntT}, kStringT, StringOf);
  add("uint64_to_string", "string", false, {kUintT}, kStringT, StringOf);
  add("double_to_string", "string", false, {kDoubleT}, kStringT, StringOf);
  add("bool_to_string", "string", false, {kBoolT}, kStringT, StringOf);
  add("bytes_to_string", "string", false, {kBytesT}, kStringT, StringOf);
  add("bool_to_bool", "bool", false, {kBoolT}, kBoolT, BoolOf);
  add("string_to_bool", "bool", false, {kStringT}, kBoolT, BoolOf);
  add("bytes_to_bytes", "bytes", false, {kBytesT}, kBytesT, BytesOf);
  add("string_to_bytes", "bytes", false, {kStringT}, kBytesT, BytesOf);
  // Strings extension, version 2.
  add("string_char_at_int", "charAt", true, {kStringT, kIntT}, kStringT, CharAt);
  add("string_index_of_string", "indexOf", true, {kStringT, kStringT}, kIntT, IndexOf, TraversalOfFirst);
  add("string_index_of_string_int", "indexOf", true, {kStringT, kStringT, kIntT}, kIntT, IndexOf, TraversalOfFirst);
  add("string_last_index_of_string", "lastIndexOf", true, {kStringT, kStringT}, kIntT, LastIndexOf, TraversalOfFirst);
  add("string_last_index_of_string_int", "lastIndexOf", true, {kStringT, kStringT, kIntT}, kIntT, LastIndexOf,
      TraversalOfFirst);
  add("string_lower_ascii", "lowerAscii", true, {kStringT}, kStringT, LowerAscii, TraversalOfFirst);
  add("string_upper_ascii", "upperAscii", true, {kStringT}, kStringT, UpperAscii, TraversalOfFirst);
  add("string_replace_string_string", "replace", true, {kStringT, kStringT, kStringT}, kStringT, Replace,
      DoubleTraversalOfFirst);
  add("string_replace_string_string_int", "replace", true, {kStringT, kStringT, kStringT, kIntT}, kStringT, Replace,
      DoubleTraversalOfFirst);
  add("string_split_string", "split", true, {kStringT, kStringT}, list_string, Split, DoubleTraversalOfFirst);
  add("string_split_string_int", "split", true, {kStringT, kStringT, kIntT}, list_string, Split,
      DoubleTraversalOfFirst);
  add("string_substring_int", "substring", true, {kStringT, kIntT}, kStringT, Substring, TraversalOfFirst);
  add("string_substring_int_int", "substring", true, {kStringT, kIntT, kIntT}, kStringT, Substring, TraversalOfFirst);
  add("string_trim", "trim", true, {kStringT}, kStringT, Trim, TraversalOfFirst);
  add("list_join", "join", true, {list_string}, kStringT, Join, JoinCost);
  add("list_join_string", "join", true, {list_string, kStringT}, kStringT, Join, JoinCost);
  // Kubernetes' regex library.
  add("string_find", "find", true, {kStringT, kStringT}, kStringT, Find, RegexCost);
  add("string_find_all", "findAll", true, {kStringT, kStringT}, list_string, FindAll, RegexCost);
  add("string_find_all_with_limit", "findAll", true, {kStringT, kStringT, kIntT}, list_string, FindAll, RegexCost);
  // Kubernetes' quantity library (sign is a global function upstream).
  add("string_to_quantity", "quantity", false, {kStringT}, kQuantityT, QuantityOf, TraversalOfFirst);
  add("is_quantity_string", "isQuantity", false, {kStringT}, kBoolT, IsQuantity, TraversalOfFirst);
  add("quantity_sign", "sign", false, {kQuantityT}, kIntT, QuantitySign);
  add("quantity_is_greater_than", "isGreaterThan", true, {kQuantityT, kQuantityT}, kBoolT, QuantityIsGreaterThan);
  add("quantity_is_less_than", "isLessThan", true, {kQuantityT, kQuantityT}, kBoolT, QuantityIsLessThan);
  add("quantity_compare_to", "compareTo", true, {kQuantityT, kQuantityT}, kIntT, QuantityCompareTo);
  add("quantity_get_float", "asApproximateFloat", true, {kQuantityT}, kDoubleT, QuantityAsFloat);
  add("quantity_get_int", "asInteger", true, {kQuantityT}, kIntT, QuantityAsInteger);
  add("quantity_is_integer", "isInteger", true, {kQuantityT}, kBoolT, QuantityIsInteger);
  add("quantity_add", "add", true, {kQuantityT, kQuantityT}, kQuantityT, QuantityAdd);
  add("quantity_add_int", "add", true, {kQuantityT, kIntT}, kQuantityT, QuantityAdd);
  add("quantity_sub", "sub", true, {kQuantityT, kQuantityT}, kQuantityT, QuantitySub);
  add("quantity_sub_int", "sub", true, {kQuantityT, kIntT}, kQuantityT, QuantitySub);
  // Kubernetes' semver library (version 1: the normalizing overloads).
  add("string_to_semver", "semver", false, {kStringT}, kSemverT, SemverOf);
  add("string_bool_to_semver", "semver", false, {kStringT, kBoolT}, kSemverT, SemverOf);
  add("is_semver_string", "isSemver", false, {kStringT}, kBoolT, IsSemver);
  add("is_semver_string_bool", "isSemver", false, {kStringT, kBoolT}, kBoolT, IsSemver);
  add("semver_is_greater_than", "isGreaterThan", true, {kSemverT, kSemverT}, kBoolT, SemverIsGreaterThan);
  add("semver_is_less_than", "isLessThan", true, {kSemverT, kSemverT}, kBoolT, SemverIsLessThan);
  add("semver_compare_to", "compareTo", true, {kSemverT, kSemverT}, kIntT, SemverCompareTo);
  add("semver_major", "major", true, {kSemverT}, kIntT, SemverMajor);
  add("semver_minor", "minor", true, {kSemverT}, kIntT, SemverMinor);
  add("semver_patch", "patch", true, {kSemverT}, kIntT, SemverPatch);
  return l;
}

// Go's %e with the shortest digits: d[.ddd]e±XX.
std::string FormatExponent(std::string_view digits, int exponent) {
  std::string out(1, digits[0]);
  if (digits.size() > 1) {
    out += '.';
    out.append(digits.substr(1));
  }
  out += 'e';
  out += exponent < 0 ? '-' : '+';
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out += '0';
  out += std::to_string(magnitude);
  return out;
}

}  // namespace

std::span<const Overload> Library() {
  static const std::vector<Overload> library = BuildLibrary();
  return library;
}

bool IsLibraryFunction(std::string_view name) {
  for (const auto& o : Library()) {
    if (o.function == name) return true;
  }
  return false;
}

bool MatchesRuntime(const Type& param, const Value& v) {
  switch (param.kind()) {
    case TypeKind::kDyn:
    case TypeKind::kAny:
      return true;
    case TypeKind::kNull:
      return v.kind == ValueKind::kNull;
    case TypeKind::kBool:
      return v.kind == ValueKind::kBool;
    case TypeKind::kInt:
      return v.kind == ValueKind::kInt;
    case TypeKind::kUint:
      return v.kind == ValueKind::kUint;
    case TypeKind::kDouble:
      return v.kind == ValueKind::kDouble;
    case TypeKind::kString:
      return v.kind == ValueKind::kString;
    case TypeKind::kBytes:
      return v.kind == ValueKind::kBytes;
    case TypeKind::kList:
      return v.kind == ValueKind::kList;
    case TypeKind::kMap:
      return v.IsMap();
    case TypeKind::kQuantity:
      return v.kind == ValueKind::kQuantity;
    case TypeKind::kSemver:
      return v.kind == ValueKind::kSemver;
    case TypeKind::kDevice:
      return v.kind == ValueKind::kDevice;
  }
  return false;
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::stoi(std::string(sci.substr(e + 1)));
  // fmt's %g (what cel-go's string(double) prints): the shortest digits, in %e form when the
  // exponent is below -4 or at least 6 (the precision %g assumes for the shortest form).
  if (exponent < -4 || exponent >= 6) return out + FormatExponent(digits, exponent);
  const int point = exponent + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-point), '0');
    out += digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out += digits;
    out.append(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(point));
    out += '.';
    out += digits.substr(static_cast<size_t>(point));
  }
  return out;
}

std::string RegexError(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(re2::StringPiece(pattern.data(), pattern.size()), options);
  return re.ok() ? std::string() : "error parsing regexp: " + re.error();
}

std::variant<api::SemVer, std::string> ParseSemver(std::string_view text, bool normalize) {
  std::string normalized;
  if (normalize) {
    // Upstream's normalizeAndParse: no "v" prefix, no leading zeros, missing minor and patch
    // numbers filled in with 0.
    std::string_view s = text;
    if (s.starts_with('v')) s.remove_prefix(1);
    std::vector<std::string> parts;
    for (int i = 0; i < 2; ++i) {
      const size_t dot = s.find('.');
      if (dot == std::string_view::npos) break;
      parts.emplace_back(s.substr(0, dot));
      s.remove_prefix(dot + 1);
    }
    parts.emplace_back(s);
    for (auto& p : parts) {
      if (p.size() > 1) {
        const size_t first = p.find_first_not_of('0');
        p = first == std::string::npos ? std::string() : p.substr(first);
        if (p.empty() || p[0] < '0' || p[0] > '9') p = "0" + p;
      }
    }
    if (parts.size() < 3) {
      if (parts.back().find_first_of("+-") != std::string::npos) {
        return std::string("short version cannot contain PreRelease/Build meta data");
      }
      while (parts.size() < 3) parts.emplace_back("0");
    }
    normalized = parts[0] + "." + parts[1] + "." + parts[2];
    text = normalized;
  }
  if (auto v = api::SemVer::Parse(text)) return *v;
  // blang/semver's first complaint for the common mistakes; the rest named generally.
  if (text.empty()) return std::string("Version string empty");
  if (std::count(text.begin(), text.end(), '.') < 2) return std::string("No Major.Minor.Patch elements found");
  return "invalid semantic version " + std::string(1, '"') + std::string(text) + "\"";
}

}  // namespace kubesched::cel
