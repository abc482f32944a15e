#include "framework/args_view.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "api/json_quote.h"
#include "framework/args_view_json.h"

namespace kubesched::framework {
namespace {

using api::json::Value;

const Value* Get(const void* p) { return static_cast<const Value*>(p); }

// Appends `s` quoted with nlohmann/json's escapes (the short ones, \u00xx in lower case for the
// other control characters; every other byte as it is).
void AppendQuoted(std::string_view s, std::string& out) { api::json::AppendQuoted(out, s, api::json::Quoting::kPlain); }

// The value as nlohmann/json's dump wrote it: compact when `indent` is negative, else `indent`
// spaces a level, the value at `level`.
void AppendEncoded(const Value& v, std::string& out, int indent = -1, int level = 0) {
  const auto newline = [&](int at) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * at), ' ');
  };
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "null";
      return;
    case rapidjson::kFalseType:
      out += "false";
      return;
    case rapidjson::kTrueType:
      out += "true";
      return;
    case rapidjson::kStringType:
      AppendQuoted(api::json::View(v), out);
      return;
    case rapidjson::kNumberType:
      if (v.IsDouble()) {
        out += FormatMessageNumber(v.GetDouble());
      } else if (v.IsInt64()) {
        out += std::to_string(v.GetInt64());
      } else {
        out += std::to_string(v.GetUint64());
      }
      return;
    case rapidjson::kArrayType: {
      out += '[';
      bool first = true;
      for (const Value& e : v.GetArray()) {
        if (!first) out += ',';
        first = false;
        newline(level + 1);
        AppendEncoded(e, out, indent, level + 1);
      }
      if (!first) newline(level);
      out += ']';
      return;
    }
    case rapidjson::kObjectType: {
      out += '{';
      bool first = true;
      for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const Value::Member* m = it.operator->();
        if (!first) out += ',';
        first = false;
        newline(level + 1);
        AppendQuoted(api::json::View(m->name), out);
        out += indent < 0 ? ":" : ": ";
        AppendEncoded(m->value, out, indent, level + 1);
      }
      if (!first) newline(level);
      out += '}';
      return;
    }
  }
}

}  // namespace

bool ArgsView::IsNull() const { return value_ == nullptr || Get(value_)->IsNull(); }
bool ArgsView::IsObject() const { return value_ != nullptr && Get(value_)->IsObject(); }
bool ArgsView::IsArray() const { return value_ != nullptr && Get(value_)->IsArray(); }
bool ArgsView::IsString() const { return value_ != nullptr && Get(value_)->IsString(); }
bool ArgsView::IsBool() const { return value_ != nullptr && Get(value_)->IsBool(); }
bool ArgsView::IsNumber() const { return value_ != nullptr && Get(value_)->IsNumber(); }
bool ArgsView::IsInt64() const { return value_ != nullptr && Get(value_)->IsInt64(); }
bool ArgsView::IsUint64() const { return value_ != nullptr && Get(value_)->IsUint64(); }
bool ArgsView::IsDouble() const { return value_ != nullptr && Get(value_)->IsDouble(); }

size_t ArgsView::Size() const {
  if (IsArray()) return Get(value_)->Size();
  if (IsObject()) return Get(value_)->MemberCount();
  return 0;
}

ArgsView ArgsView::operator[](size_t i) const {
  if (!IsArray() || i >= Get(value_)->Size()) return ArgsView();
  return ArgsView(&(*Get(value_))[static_cast<rapidjson::SizeType>(i)]);
}

ArgsView ArgsView::Find(std::string_view key) const {
  if (!IsObject()) return ArgsView();
  return ArgsView(api::json::FindMember(*Get(value_), key));
}

std::string_view ArgsView::GetString() const { return value_ != nullptr ? api::json::View(*Get(value_)) : ""; }
int64_t ArgsView::GetInt64() const { return IsInt64() ? Get(value_)->GetInt64() : 0; }
uint64_t ArgsView::GetUint64() const { return IsUint64() ? Get(value_)->GetUint64() : 0; }
double ArgsView::GetDouble() const { return IsNumber() ? Get(value_)->GetDouble() : 0; }
bool ArgsView::GetBool() const { return value_ != nullptr && Get(value_)->IsTrue(); }

std::string_view ArgsView::TypeName() const {
  if (IsNull()) return "null";
  if (IsObject()) return "object";
  if (IsArray()) return "array";
  if (IsString()) return "string";
  if (IsBool()) return "bool";
  if (IsDouble()) return "number";
  return "integer";
}

std::string ArgsView::Encode() const {
  std::string out;
  if (value_ == nullptr) return "null";
  AppendEncoded(*Get(value_), out);
  return out;
}

std::string ArgsView::EncodePretty(int level) const {
  std::string out;
  if (value_ == nullptr) return "null";
  AppendEncoded(*Get(value_), out, 2, level);
  return out;
}

bool operator==(const ArgsView& a, const ArgsView& b) {
  static const Value kNull;
  const Value& x = a.value_ != nullptr ? *Get(a.value_) : kNull;
  const Value& y = b.value_ != nullptr ? *Get(b.value_) : kNull;
  return x == y;
}

ArgsView::Member ArgsView::MemberIterator::operator*() const {
  const auto* m = static_cast<const Value::Member*>(member_);
  return {api::json::View(m->name), ArgsView(&m->value)};
}

ArgsView::MemberIterator& ArgsView::MemberIterator::operator++() {
  member_ = static_cast<const Value::Member*>(member_) + 1;
  return *this;
}

ArgsView::MemberRange ArgsView::Members() const {
  if (!IsObject()) return {};
  const Value& v = *Get(value_);
  return {MemberIterator(v.MemberBegin().operator->()), MemberIterator(v.MemberEnd().operator->())};
}

struct ArgsDocument::Holder {
  api::json::Document doc;
};

std::expected<ArgsDocument, std::string> ArgsDocument::Parse(std::string_view json) {
  api::json::Document doc;
  if (auto parsed = api::json::Parse(json, doc); !parsed) return std::unexpected(parsed.error().ToString());
  return AdoptArgs(std::move(doc));
}

ArgsView ArgsDocument::View() const { return doc_ ? ViewOf(doc_->doc) : ArgsView(); }

ArgsDocument ArgsViewAccess::Adopt(api::json::Document doc) {
  ArgsDocument out;
  auto holder = std::make_shared<ArgsDocument::Holder>();
  holder->doc.Swap(doc);
  out.doc_ = std::move(holder);
  return out;
}

ArgsDocument CopyArgs(const api::json::Value& value) {
  api::json::Document doc;
  doc.CopyFrom(value, doc.GetAllocator());
  return AdoptArgs(std::move(doc));
}

std::string QuoteMessageString(std::string_view s) {
  std::string out;
  AppendQuoted(s, out);
  return out;
}

// nlohmann/json's to_chars layout: "digits.0" up to 15 integer digits, "0.000digits" down to
// 1e-4, "d.igitse+XX" beyond. The digits are the shortest that read back as `d` (std::to_chars);
// nlohmann's Grisu2 finds the same but for a few values with 16 or 17 significant digits (about
// one in 200 of those), where its last digit may differ: the value read back is the same.
std::string FormatMessageNumber(double d) {
  if (!std::isfinite(d)) return "null";
  std::string out;
  if (std::signbit(d)) {
    out += '-';
    d = -d;
  }
  if (d == 0) return out + "0.0";
  char text[32];
  const std::to_chars_result r = std::to_chars(text, text + sizeof(text), d, std::chars_format::scientific);
  const std::string_view scientific(text, static_cast<size_t>(r.ptr - text));  // "d.ddde+XX"
  const size_t e = scientific.find('e');
  std::string digits(1, scientific[0]);
  if (e > 1) digits += scientific.substr(2, e - 2);
  int exponent = 0;
  std::from_chars(scientific.data() + e + (scientific[e + 1] == '+' ? 2 : 1), scientific.data() + scientific.size(),
                  exponent);
  const std::string_view k = digits;
  const int len = static_cast<int>(k.size());
  const int n = exponent + 1;  // d = 0.digits * 10^n
  constexpr int kMinExp = -4;
  constexpr int kMaxExp = 15;
  if (len <= n && n <= kMaxExp) return out.append(k).append(static_cast<size_t>(n - len), '0') + ".0";
  if (0 < n && n <= kMaxExp) {
    return out.append(k.substr(0, static_cast<size_t>(n))).append(".").append(k.substr(static_cast<size_t>(n)));
  }
  if (kMinExp < n && n <= 0) return out.append("0.").append(static_cast<size_t>(-n), '0').append(k);
  out += k[0];
  if (len > 1) out.append(".").append(k.substr(1));
  int x = n - 1;
  out += 'e';
  out += x < 0 ? '-' : '+';
  x = std::abs(x);
  if (x < 10) out += '0';
  out += std::to_string(x);
  return out;
}

}  // namespace kubesched::framework
