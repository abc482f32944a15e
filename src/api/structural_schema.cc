#include "api/structural_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "api/field_error.h"
#include "api/field_path.h"
#include "util/go_quote.h"
#include "util/log.h"

namespace kubesched::api {
namespace {

using json::Value;

// field.ErrorTypeTooMany's cause type (field_error.h lists the others).
constexpr std::string_view kFieldValueTooMany = "FieldValueTooMany";

// ---------------------------------------------------------------------------------------------
// Reading a schema. A CRD's schema is user input: any keyword may hold any JSON type. One of the
// wrong type is taken as absent here; StructuralSchemaProblems reports it.

const Value* Keyword(const Value& schema, std::string_view key) {
  return schema.IsObject() ? json::FindMember(schema, key) : nullptr;
}

//! A keyword holding a schema (properties' values, items, not, ...), or nullptr.
const Value* SchemaKeyword(const Value& schema, std::string_view key) {
  const Value* v = Keyword(schema, key);
  return v && v->IsObject() ? v : nullptr;
}

const Value* ArrayKeyword(const Value& schema, std::string_view key) {
  const Value* v = Keyword(schema, key);
  return v && v->IsArray() ? v : nullptr;
}

bool Flag(const Value& schema, std::string_view key) {
  const Value* v = Keyword(schema, key);
  return v && v->IsBool() && v->GetBool();
}

std::string_view StringKeyword(const Value& schema, std::string_view key) {
  const Value* v = Keyword(schema, key);
  return v ? json::View(*v) : std::string_view();
}

std::optional<double> NumberKeyword(const Value& schema, std::string_view key) {
  const Value* v = Keyword(schema, key);
  if (!v || !v->IsNumber()) return std::nullopt;
  return v->GetDouble();
}

// minLength, maxItems, ...: *int64 upstream, so only integer literals decode.
std::optional<int64_t> CountKeyword(const Value& schema, std::string_view key) {
  const Value* v = Keyword(schema, key);
  if (!v || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

//! Lookup of an object's members by name: FindMember's linear search while the object is small,
//! a hash table once it is not, so that a wide object against a wide schema stays linear.
class Members {
 public:
  explicit Members(const Value* object) : object_(object && object->IsObject() ? object : nullptr) {
    if (!object_ || object_->MemberCount() <= kLinear) return;
    index_.reserve(object_->MemberCount());
    for (const auto& m : object_->GetObject())
      index_.try_emplace(json::View(m.name), &m.value);  // the first, as FindMember
  }

  const Value* Find(std::string_view key) const {
    if (!object_) return nullptr;
    if (index_.empty()) return json::FindMember(*object_, key);
    const auto it = index_.find(key);
    return it == index_.end() ? nullptr : it->second;
  }

  //! A property's schema: the entry when it is an object, else nullptr.
  const Value* Schema(std::string_view key) const {
    const Value* v = Find(key);
    return v && v->IsObject() ? v : nullptr;
  }

 private:
  static constexpr size_t kLinear = 16;
  const Value* object_;
  std::unordered_map<std::string_view, const Value*> index_;
};

bool IsMetaField(std::string_view key) { return key == "apiVersion" || key == "kind" || key == "metadata"; }

// ---------------------------------------------------------------------------------------------
// Values as the API server's decoder types them: integer literals that fit become int64, every
// other number float64 (RapidJSON keeps integers above int64's range as uint64; Go does not).

bool IsGoInt(const Value& v) { return v.IsInt64(); }

// kube-openapi's schemaInfoForType: the JSON schema type of a decoded value.
std::string_view TypeName(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return IsGoInt(v) ? "integer" : "number";
  }
  return "";
}

// go-openapi's swag.IsFloat64AJSONInteger: a float64 that counts as an integer (within 2^53, up
// to a relative error of 1e-9).
bool IsFloat64AJSONInteger(double f) {
  constexpr double kMaxJsonFloat = 9007199254740992.0;  // 2^53
  if (!std::isfinite(f) || f < -kMaxJsonFloat || f > kMaxJsonFloat) return false;
  const double g = std::trunc(f);
  if (f == g) return true;
  if (g == 0) return false;  // |f| < 1: never within the relative error of 0
  return std::fabs(f - g) / (std::fabs(f) + std::fabs(g)) < 1e-9;
}

// Go's conversion of a float64 bound to int64 (kube-openapi compares an int64 value with
// int64(bound)): truncation, clamped where Go's would be undefined.
int64_t TruncateToInt64(double f) {
  if (std::isnan(f)) return 0;
  if (f >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (f <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(f);
}

// ---------------------------------------------------------------------------------------------
// Go's renderings, so messages read as the API server's: %q, %v and %#v of the unstructured value
// (string, int64, float64, bool, nil, map[string]interface{}, []interface{}), and json.Marshal.

// The shortest digits that round-trip |f| (finite, not zero): |f| = 0.digits × 10^point.
struct Digits {
  std::string digits;
  int point = 0;
};

Digits Shortest(double f) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(f), std::chars_format::scientific);
  const std::string_view s(buf, r.ptr - buf);  // "d.ddde+XX"
  const size_t e = s.find('e');
  Digits d;
  for (char c : s.substr(0, e)) {
    if (c != '.') d.digits += c;
  }
  int exponent = 0;
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exponent);
  d.point = exponent + 1;
  return d;
}

// strconv's %e of shortest digits: "1.5e+06" (two exponent digits at least).
std::string FormatE(const Digits& d) {
  std::string out(1, d.digits[0]);
  if (d.digits.size() > 1) out += "." + d.digits.substr(1);
  const int exponent = d.point - 1;
  return out + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
}

// strconv's %f of shortest digits: "123456", "0.00015".
std::string FormatF(const Digits& d) {
  const int n = static_cast<int>(d.digits.size());
  if (d.point <= 0) return "0." + std::string(-d.point, '0') + d.digits;
  if (d.point >= n) return d.digits + std::string(d.point - n, '0');
  return d.digits.substr(0, d.point) + "." + d.digits.substr(d.point);
}

// fmt's %v of a float64: %g with the shortest digits, %e from exponent 6 on ("1e+06").
std::string GoFloat(double f) {
  if (f == 0) return std::signbit(f) ? "-0" : "0";
  const Digits d = Shortest(f);
  const int exponent = d.point - 1;
  return (f < 0 ? "-" : "") + (exponent < -4 || exponent >= 6 ? FormatE(d) : FormatF(d));
}

// encoding/json's float64: %f, %e below 1e-6 and from 1e21 on ("1e-7", "1e+21").
std::string GoJsonFloat(double f) {
  if (f == 0) return std::signbit(f) ? "-0" : "0";
  const double a = std::fabs(f);
  const Digits d = Shortest(f);
  std::string out = (f < 0 ? "-" : "") + (a < 1e-6 || a >= 1e21 ? FormatE(d) : FormatF(d));
  const size_t n = out.size();
  if (n >= 4 && out[n - 4] == 'e' && out[n - 3] == '-' && out[n - 2] == '0') out.erase(n - 2, 1);
  return out;
}

std::string GoNumber(const Value& v) { return IsGoInt(v) ? std::to_string(v.GetInt64()) : GoFloat(v.GetDouble()); }

// An object's members sorted by name: Go prints and marshals maps with sorted keys.
std::vector<const Value::Member*> SortedMembers(const Value& object) {
  std::vector<const Value::Member*> members;
  members.reserve(object.MemberCount());
  for (const auto& m : object.GetObject()) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(), [](const Value::Member* a, const Value::Member* b) {
    return json::View(a->name) < json::View(b->name);
  });
  return members;
}

// %#v of an unstructured value: map[string]interface {}{"a":1}, []interface {}{"x"}.
void AppendGoSyntax(const Value& v, std::string& out, int depth) {
  if (depth > json::kMaxDepth) {
    out += "...";
    return;
  }
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "interface {}(nil)";
      return;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out += v.GetBool() ? "true" : "false";
      return;
    case rapidjson::kStringType:
      out += util::GoQuote(json::View(v));
      return;
    case rapidjson::kNumberType:
      out += GoNumber(v);
      return;
    case rapidjson::kArrayType: {
      out += "[]interface {}{";
      bool first = true;
      for (const Value& e : v.GetArray()) {
        if (!first) out += ", ";
        first = false;
        AppendGoSyntax(e, out, depth + 1);
      }
      out += '}';
      return;
    }
    case rapidjson::kObjectType: {
      out += "map[string]interface {}{";
      bool first = true;
      for (const Value::Member* m : SortedMembers(v)) {
        if (!first) out += ", ";
        first = false;
        out += util::GoQuote(json::View(m->name)) + ":";
        AppendGoSyntax(m->value, out, depth + 1);
      }
      out += '}';
      return;
    }
  }
}

// field.Error's ErrorBody rendering of a bad value: strings %q, numbers and booleans %v, nil as
// "null" (quoted, a string by then), maps and slices %#v.
std::string BadValue(const Value& v) {
  if (v.IsNull()) return "\"null\"";
  if (v.IsString()) return util::GoQuote(json::View(v));
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsNumber()) return GoNumber(v);
  std::string out;
  AppendGoSyntax(v, out, 0);
  return out;
}

// encoding/json's string: HTML characters escaped as json.Marshal does by default.
void AppendGoJsonString(std::string_view s, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += fmt::format("\\u{:04x}", c);
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

// json.Marshal of an unstructured value: sorted keys, Go's number and string forms.
void AppendGoJson(const Value& v, std::string& out, int depth) {
  if (depth > json::kMaxDepth) {
    out += "null";
    return;
  }
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "null";
      return;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out += v.GetBool() ? "true" : "false";
      return;
    case rapidjson::kStringType:
      AppendGoJsonString(json::View(v), out);
      return;
    case rapidjson::kNumberType:
      out += IsGoInt(v) ? std::to_string(v.GetInt64()) : GoJsonFloat(v.GetDouble());
      return;
    case rapidjson::kArrayType: {
      out += '[';
      bool first = true;
      for (const Value& e : v.GetArray()) {
        if (!first) out += ',';
        first = false;
        AppendGoJson(e, out, depth + 1);
      }
      out += ']';
      return;
    }
    case rapidjson::kObjectType: {
      out += '{';
      bool first = true;
      for (const Value::Member* m : SortedMembers(v)) {
        if (!first) out += ',';
        first = false;
        AppendGoJsonString(json::View(m->name), out);
        out += ':';
        AppendGoJson(m->value, out, depth + 1);
      }
      out += '}';
      return;
    }
  }
}

// A key equal for two values exactly when reflect.DeepEqual (or Go's == on interface{} scalars)
// holds for them: an int64 1 and a float64 1.0 differ, +0 and -0 do not, maps ignore key order.
// With `by_value`, numbers compare by value instead (1 equals 1.0), as enum entries do here:
// kube-openapi's conversions between Go types (1.5 converted to the int64 1, 97 to the string
// "a") are not copied.
void AppendKey(const Value& v, bool by_value, std::string& out, int depth) {
  if (depth > json::kMaxDepth) {
    out += '?';
    return;
  }
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += 'z';
      return;
    case rapidjson::kFalseType:
      out += 'F';
      return;
    case rapidjson::kTrueType:
      out += 'T';
      return;
    case rapidjson::kStringType:
      out += fmt::format("s{}:", v.GetStringLength());
      out += json::View(v);
      return;
    case rapidjson::kNumberType: {
      if (IsGoInt(v)) {
        out += fmt::format("i{};", v.GetInt64());
        return;
      }
      const double f = v.GetDouble() == 0 ? 0.0 : v.GetDouble();
      if (by_value && f == std::trunc(f) && std::fabs(f) < 9.2e18) {
        out += fmt::format("i{};", static_cast<int64_t>(f));
      } else {
        out += "d" + GoJsonFloat(f) + ";";
      }
      return;
    }
    case rapidjson::kArrayType:
      out += '[';
      for (const Value& e : v.GetArray()) AppendKey(e, by_value, out, depth + 1);
      out += ']';
      return;
    case rapidjson::kObjectType:
      out += '{';
      for (const Value::Member* m : SortedMembers(v)) {
        AppendKey(m->name, by_value, out, depth + 1);
        AppendKey(m->value, by_value, out, depth + 1);
      }
      out += '}';
      return;
  }
}

std::string StrictKey(const Value& v) {
  std::string key;
  AppendKey(v, false, key, 0);
  return key;
}

std::string ValueKey(const Value& v) {
  std::string key;
  AppendKey(v, true, key, 0);
  return key;
}

// The key listtype's set check gives a value: Go's == for scalars, json.Marshal's text for maps
// and slices (so there 1 and 1.0 are the same).
std::string SetKey(const Value& v) {
  if (!v.IsObject() && !v.IsArray()) return StrictKey(v);
  std::string key = "c";
  AppendGoJson(v, key, 0);
  return key;
}

// ---------------------------------------------------------------------------------------------
// field.Error constructors, as metav1.StatusCauses (the message is ErrorBody: no field).

SchemaViolation Invalid(std::string field, std::string_view bad, std::string_view detail,
                        std::string_view reason = kFieldValueInvalid) {
  return {std::string(reason), std::move(field), fmt::format("Invalid value: {}: {}", bad, detail)};
}

SchemaViolation RequiredValue(std::string field) {
  return {std::string(kFieldValueRequired), std::move(field), "Required value"};
}

SchemaViolation TooLong(std::string field, int64_t max) {
  // field.TooLong of apimachinery 1.31 on (the value itself is left out).
  const std::string detail =
      max < 0 ? "value is too long" : fmt::format("may not be more than {} {}", max, max == 1 ? "byte" : "bytes");
  return {std::string(kFieldValueTooLong), std::move(field), "Too long: " + detail};
}

SchemaViolation TooMany(std::string field, int64_t actual, int64_t max) {
  const std::string detail =
      max < 0 ? "has too many items" : fmt::format("must have at most {} {}", max, max == 1 ? "item" : "items");
  return {std::string(kFieldValueTooMany), std::move(field), fmt::format("Too many: {}: {}", actual, detail)};
}

SchemaViolation Duplicate(std::string field, std::string_view bad) {
  return {std::string(kFieldValueDuplicate), std::move(field), fmt::format("Duplicate value: {}", bad)};
}

// anyOf, oneOf, allOf and not failures are not field errors in kube-openapi: the server reports
// them against the whole object, with an empty value.
SchemaViolation Composite(std::string_view detail) { return Invalid("", "\"\"", detail); }

// ---------------------------------------------------------------------------------------------
// Paths: dotted, with [i] for list items and [key] for keys that are not plain words.

class PathScope {
 public:
  explicit PathScope(std::string& path) : path_(path), size_(path.size()) {}
  ~PathScope() { path_.resize(size_); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  std::string& path_;
  size_t size_;
};

std::string Child(const std::string& path, std::string_view key) {
  std::string out = path;
  field_path::AppendField(out, key);
  return out;
}

// Removes the members of `object` for which remove(name, value) holds, keeping the others in
// order, in one pass (EraseMember per member would be quadratic).
template <typename Remove>
void RemoveMembersIf(Value& object, Remove remove) {
  auto begin = object.MemberBegin();
  const auto n = static_cast<size_t>(object.MemberEnd() - begin);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (remove(begin[i].name, begin[i].value)) continue;
    if (kept != i) {
      begin[kept].name.Swap(begin[i].name);
      begin[kept].value.Swap(begin[i].value);
    }
    ++kept;
  }
  if (kept != n) object.EraseMember(begin + kept, object.MemberEnd());
}

// ---------------------------------------------------------------------------------------------
// Pruning (pkg/apiserver/schema/pruning): only the structural skeleton (properties,
// additionalProperties, items and the x-kubernetes-* flags) decides what is kept; allOf, anyOf,
// oneOf and not add nothing.

class Pruner {
 public:
  explicit Pruner(std::vector<std::string>& pruned) : pruned_(pruned) {}

  //! Upstream's prune: `schema` is nullptr where nothing is specified, which empties objects.
  //! `embedded`: the schema's x-kubernetes-embedded-resource, forced at the root.
  void Prune(Value& x, const Value* schema, bool embedded, std::string& path, int depth) {
    if (depth > json::kMaxDepth) return;  // the validation reports the depth
    if (schema && Flag(*schema, "x-kubernetes-preserve-unknown-fields")) {
      KeepUnknown(x, *schema, embedded, path, depth);
      return;
    }
    if (x.IsObject()) {
      const Members properties(schema ? SchemaKeyword(*schema, "properties") : nullptr);
      RemoveMembersIf(x, [&](const Value& name, Value& value) {
        const std::string_view key = json::View(name);
        if (schema && embedded && IsMetaField(key)) return false;
        if (!schema || !Descend(*schema, properties, key, value, path, depth)) {
          Record(path, key);
          return true;
        }
        return false;
      });
    } else if (x.IsArray()) {
      const Value* items = schema ? SchemaKeyword(*schema, "items") : nullptr;
      for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
        PathScope scope(path);
        field_path::AppendIndex(path, i);
        Prune(x[i], items, Embedded(items), path, depth + 1);
      }
    }
  }

 private:
  static bool Embedded(const Value* schema) { return schema && Flag(*schema, "x-kubernetes-embedded-resource"); }

  // Upstream's skipPrune, under x-kubernetes-preserve-unknown-fields: unknown fields stay as they
  // are, known ones are pruned by their own schema. Items of a preserving list are preserved too.
  void KeepUnknown(Value& x, const Value& schema, bool embedded, std::string& path, int depth) {
    if (depth > json::kMaxDepth) return;
    if (x.IsObject()) {
      const Members properties(SchemaKeyword(schema, "properties"));
      for (auto& m : x.GetObject()) {
        const std::string_view key = json::View(m.name);
        if (embedded && IsMetaField(key)) continue;
        Descend(schema, properties, key, m.value, path, depth);
      }
    } else if (x.IsArray()) {
      const Value* items = SchemaKeyword(schema, "items");
      if (!items) return;
      for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
        PathScope scope(path);
        field_path::AppendIndex(path, i);
        KeepUnknown(x[i], *items, Embedded(items), path, depth + 1);
      }
    }
  }

  // Prunes a field the schema knows (a property, or any field under additionalProperties) and
  // returns true; false for an unknown field. additionalProperties: true or false specifies no
  // schema for the values, so objects under it are emptied, as upstream's nil Structural does.
  bool Descend(const Value& schema, const Members& properties, std::string_view key, Value& value, std::string& path,
               int depth) {
    const Value* sub = properties.Schema(key);
    if (!sub) {
      const Value* additional = Keyword(schema, "additionalProperties");
      if (!additional || !(additional->IsObject() || additional->IsBool())) return false;
      sub = additional->IsObject() ? additional : nullptr;
    }
    PathScope scope(path);
    field_path::AppendField(path, key);
    Prune(value, sub, Embedded(sub), path, depth + 1);
    return true;
  }

  void Record(const std::string& path, std::string_view key) { pruned_.push_back(Child(path, key)); }

  std::vector<std::string>& pruned_;
};

// defaulting.PruneNonNullableNullsWithoutDefaults, which the server runs right after pruning: a
// null where the schema neither allows null nor has a default is dropped rather than rejected.
void DropNulls(Value& x, const Value* schema, int depth) {
  if (!schema || depth > json::kMaxDepth) return;
  if (x.IsObject()) {
    const Members properties(SchemaKeyword(*schema, "properties"));
    const Value* additional = SchemaKeyword(*schema, "additionalProperties");
    RemoveMembersIf(x, [&](const Value& name, Value& value) {
      const Value* sub = properties.Schema(json::View(name));
      if (!sub) sub = additional;
      if (value.IsNull() && sub && !Flag(*sub, "nullable")) {
        const Value* def = Keyword(*sub, "default");
        if (!def || def->IsNull()) return true;
      }
      DropNulls(value, sub, depth + 1);
      return false;
    });
  } else if (x.IsArray()) {
    const Value* items = SchemaKeyword(*schema, "items");
    for (Value& e : x.GetArray()) DropNulls(e, items, depth + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation: kube-openapi's SchemaValidator with the server's rendering of its errors. At each
// value the checks run in kube-openapi's order (type, allOf/anyOf/oneOf/not, string, number,
// array, enum, object); a check that does not apply to the value's JSON type is skipped.
// x-kubernetes-validations (CEL) rules are not evaluated. Formats are not checked: the server
// strips the ones it knows nothing of (int32, int64, float, double among them) before building
// its validator, and this checker leaves out the string formats it does know.
//
// The checks that do not recurse are kept out of line ([[gnu::noinline]]): each level of a deep
// value then costs the stack Check's and CheckObject's (or CheckArray's) frames only, about 1 KB
// (3 KB under ASan), so json::kMaxDepth levels fit a thread's default stack.

class Validator {
 public:
  explicit Validator(std::vector<SchemaViolation>& out) : out_(&out) {}

  //! Checks of one value against one schema allowed per call. allOf/anyOf/oneOf/not clauses check
  //! the same value again, and items clauses every element again, so a hostile schema could ask
  //! for (schema size) × (value size) checks; a resource of a few KB needs a few thousand.
  static constexpr int64_t kBudget = int64_t{1} << 20;

  //! Whether some checks were skipped for want of budget.
  bool Exhausted() const { return budget_ < 0; }

  //! Checks `x` at `path` against `schema`. `structural`: the schema is on the skeleton (reached
  //! through properties, additionalProperties and items from the root), where the
  //! x-kubernetes-list-type rules apply; inside allOf/anyOf/oneOf/not they do not.
  void Check(const Value& x, const Value& schema, std::string& path, int depth, bool structural) {
    if (!schema.IsObject() || --budget_ < 0) return;
    if (depth > json::kMaxDepth) {
      TooDeep(path);
      return;
    }
    CheckType(x, schema, path);
    if (x.IsNull()) {  // kube-openapi checks a null's type and enum only
      CheckEnum(x, schema, path);
      return;
    }
    CheckClauses(x, schema, path, depth);
    if (x.IsString()) CheckString(json::View(x), schema, path);
    if (x.IsNumber()) CheckNumber(x, schema, path);
    if (x.IsArray()) CheckArray(x, schema, path, depth, structural);
    CheckEnum(x, schema, path);
    if (x.IsObject()) CheckObject(x, schema, path, depth, structural);
  }

 private:
  void Add(SchemaViolation v) { out_->push_back(std::move(v)); }

  [[gnu::noinline]] void TooDeep(const std::string& path) {
    Add(Invalid(path, "\"\"", fmt::format("nesting deeper than {} levels is not supported", json::kMaxDepth)));
  }

  [[gnu::noinline]] void CheckType(const Value& x, const Value& schema, const std::string& path) {
    // x-kubernetes-int-or-string stands for type [integer, string] (ConvertJSONSchemaProps).
    const bool int_or_string = Flag(schema, "x-kubernetes-int-or-string");
    const std::string_view types = int_or_string ? "integer,string" : StringKeyword(schema, "type");
    if (types.empty()) return;
    const auto allows = [&](std::string_view t) {
      return int_or_string ? t == "integer" || t == "string" : types == t;
    };
    const std::string_view actual = TypeName(x);
    if (allows(actual) || (x.IsNull() && Flag(schema, "nullable"))) return;
    if (actual == "number" && allows("integer") && IsFloat64AJSONInteger(x.GetDouble())) return;
    if (actual == "integer" && allows("number")) return;
    Add(Invalid(path, util::GoQuote(actual),
                fmt::format("{} in body must be of type {}: {}", path, types, util::GoQuote(actual)),
                kFieldValueTypeInvalid));
  }

  // The violations of one allOf/anyOf/oneOf/not clause, kept apart to decide whether it holds.
  std::vector<SchemaViolation> Clause(const Value& x, const Value& clause, std::string& path, int depth) {
    std::vector<SchemaViolation> found;
    std::vector<SchemaViolation>* outer = std::exchange(out_, &found);
    Check(x, clause, path, depth + 1, false);
    out_ = outer;
    return found;
  }

  void Append(std::vector<SchemaViolation>& found) {
    for (SchemaViolation& v : found) Add(std::move(v));
  }

  // kube-openapi's schemaPropsValidator. When no anyOf (oneOf) clause holds, it adds the errors of
  // the clause that came closest; upstream counts the checks each passed, this takes the clause
  // with the fewest violations. One function per keyword keeps the frames on the way down small.
  void CheckClauses(const Value& x, const Value& schema, std::string& path, int depth) {
    if (const Value* any = ArrayKeyword(schema, "anyOf"); any && !any->Empty()) CheckAnyOf(x, *any, path, depth);
    if (const Value* one = ArrayKeyword(schema, "oneOf"); one && !one->Empty()) CheckOneOf(x, *one, path, depth);
    if (const Value* all = ArrayKeyword(schema, "allOf"); all && !all->Empty()) CheckAllOf(x, *all, path, depth);
    if (const Value* negated = SchemaKeyword(schema, "not")) CheckNot(x, *negated, path, depth);
  }

  [[gnu::noinline]] void CheckAnyOf(const Value& x, const Value& clauses, std::string& path, int depth) {
    std::optional<std::vector<SchemaViolation>> best;
    for (const Value& clause : clauses.GetArray()) {
      std::vector<SchemaViolation> found = Clause(x, clause, path, depth);
      if (found.empty()) return;
      if (!best || found.size() < best->size()) best = std::move(found);
    }
    Add(Composite(fmt::format("{} must validate at least one schema (anyOf)", util::GoQuote(path))));
    Append(*best);
  }

  [[gnu::noinline]] void CheckOneOf(const Value& x, const Value& clauses, std::string& path, int depth) {
    std::optional<std::vector<SchemaViolation>> best;
    int held = 0;
    for (const Value& clause : clauses.GetArray()) {
      std::vector<SchemaViolation> found = Clause(x, clause, path, depth);
      if (found.empty()) {
        ++held;
      } else if (held == 0 && (!best || found.size() < best->size())) {
        best = std::move(found);
      }
    }
    if (held == 1) return;
    const std::string how = held == 0 ? "Found none valid" : fmt::format("Found {} valid alternatives", held);
    Add(Composite(fmt::format("{} must validate one and only one schema (oneOf). {}", util::GoQuote(path), how)));
    if (held == 0) Append(*best);
  }

  [[gnu::noinline]] void CheckAllOf(const Value& x, const Value& clauses, std::string& path, int depth) {
    rapidjson::SizeType held = 0;
    for (const Value& clause : clauses.GetArray()) {
      std::vector<SchemaViolation> found = Clause(x, clause, path, depth);
      if (found.empty()) ++held;
      Append(found);
    }
    if (held == clauses.Size()) return;
    Add(Composite(fmt::format("{} must validate all the schemas (allOf){}", util::GoQuote(path),
                              held == 0 ? ". None validated" : "")));
  }

  [[gnu::noinline]] void CheckNot(const Value& x, const Value& clause, std::string& path, int depth) {
    if (!Clause(x, clause, path, depth).empty()) return;
    Add(Composite(fmt::format("{} must not validate the schema (not)", util::GoQuote(path))));
  }

  // maxLength, minLength, pattern: the first that fails only, as kube-openapi's stringValidator.
  [[gnu::noinline]] void CheckString(std::string_view s, const Value& schema, const std::string& path) {
    // Lengths count characters (Go's utf8.RuneCount): every byte but UTF-8 continuation bytes.
    const auto length = static_cast<int64_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    if (const auto max = CountKeyword(schema, "maxLength"); max && length > *max) {
      Add(TooLong(path, *max));
      return;
    }
    if (const auto min = CountKeyword(schema, "minLength"); min && length < *min) {
      Add(Invalid(path, util::GoQuote(s), fmt::format("{} in body should be at least {} chars long", path, *min)));
      return;
    }
    const std::string_view pattern = StringKeyword(schema, "pattern");
    if (pattern.empty()) return;
    const std::regex* re = Regex(pattern);
    if (!re) return;
    bool matched = true;
    try {
      matched = std::regex_match(s.begin(), s.end(), *re);
    } catch (const std::regex_error&) {
      // Out of the engine's limits: left unchecked rather than refused.
    }
    if (!matched) Add(Invalid(path, util::GoQuote(s), fmt::format("{} in body should match '{}'", path, pattern)));
  }

  // multipleOf, minimum, maximum, as kube-openapi's numberValidator: an int64 value is compared
  // with the bound truncated to int64, a float64 with the bound itself.
  [[gnu::noinline]] void CheckNumber(const Value& x, const Value& schema, const std::string& path) {
    const bool is_int = IsGoInt(x);
    const std::string value = GoNumber(x);
    const auto bound = [&](double b) { return is_int ? std::to_string(TruncateToInt64(b)) : GoFloat(b); };
    if (const auto factor = NumberKeyword(schema, "multipleOf")) {
      if (*factor < 0) {
        Add(Invalid(path, bound(*factor),
                    fmt::format("factor MultipleOf declared for {} must be positive: {}", path, bound(*factor))));
      } else if (!is_int && *factor > 0) {
        const double f = x.GetDouble();
        if (!IsFloat64AJSONInteger(*factor < 1 ? 1 / *factor * f : f / *factor)) {
          Add(Invalid(path, value, fmt::format("{} in body should be a multiple of {}", path, bound(*factor))));
        }
      } else if (const int64_t k = TruncateToInt64(*factor); is_int && k > 0 && x.GetInt64() % k != 0) {
        // (A factor that truncates to 0 would divide by zero upstream: left unchecked.)
        Add(Invalid(path, value, fmt::format("{} in body should be a multiple of {}", path, k)));
      }
    }
    const auto exceeds = [&](double b, bool below, bool exclusive) {
      if (is_int) {
        const int64_t v = x.GetInt64(), k = TruncateToInt64(b);
        return below ? (exclusive ? v <= k : v < k) : (exclusive ? v >= k : v > k);
      }
      const double v = x.GetDouble();
      return below ? (exclusive ? v <= b : v < b) : (exclusive ? v >= b : v > b);
    };
    if (const auto min = NumberKeyword(schema, "minimum")) {
      const bool exclusive = Flag(schema, "exclusiveMinimum");
      if (exceeds(*min, true, exclusive)) {
        Add(Invalid(
            path, value,
            fmt::format("{} in body should be greater than {}{}", path, exclusive ? "" : "or equal to ", bound(*min))));
      }
    }
    if (const auto max = NumberKeyword(schema, "maximum")) {
      const bool exclusive = Flag(schema, "exclusiveMaximum");
      if (exceeds(*max, false, exclusive)) {
        Add(Invalid(
            path, value,
            fmt::format("{} in body should be less than {}{}", path, exclusive ? "" : "or equal to ", bound(*max))));
      }
    }
  }

  void CheckArray(const Value& x, const Value& schema, std::string& path, int depth, bool structural) {
    if (const Value* items = SchemaKeyword(schema, "items")) {
      for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
        PathScope scope(path);
        field_path::AppendIndex(path, i);
        Check(x[i], *items, path, depth + 1, structural);
      }
    }
    CheckArrayAsAWhole(x, schema, path);
    if (structural) CheckListType(x, schema, path);
  }

  [[gnu::noinline]] void CheckArrayAsAWhole(const Value& x, const Value& schema, const std::string& path) {
    const auto size = static_cast<int64_t>(x.Size());
    if (const auto min = CountKeyword(schema, "minItems"); min && size < *min) {
      Add(Invalid(path, std::to_string(size), fmt::format("{} in body should have at least {} items", path, *min)));
    }
    if (const auto max = CountKeyword(schema, "maxItems"); max && size > *max) Add(TooMany(path, size, *max));
    if (Flag(schema, "uniqueItems")) {
      std::unordered_set<std::string> seen;
      for (const Value& e : x.GetArray()) {
        if (!seen.insert(StrictKey(e)).second) {
          Add(Invalid(path, "\"\"", fmt::format("{} in body shouldn't contain duplicates", path)));
          break;
        }
      }
    }
  }

  // listtype.ValidateListSetsAndMaps: set items, and map items' keys, must be unique. Each value
  // seen more than once is reported once, at its second place.
  [[gnu::noinline]] void CheckListType(const Value& x, const Value& schema, const std::string& path) {
    const std::string_view list_type = StringKeyword(schema, "x-kubernetes-list-type");
    if (list_type == "set") {
      std::unordered_map<std::string, int> seen;
      for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
        if (++seen[SetKey(x[i])] == 2) Add(Duplicate(IndexPath(path, i), BadValue(x[i])));
      }
    } else if (list_type == "map") {
      for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
        if (!x[i].IsObject() && !x[i].IsNull()) {
          Add(Invalid(IndexPath(path, i), BadValue(x[i]), "must be an object for an array of list-type map"));
          return;
        }
      }
      std::vector<std::string_view> keys;
      if (const Value* names = ArrayKeyword(schema, "x-kubernetes-list-map-keys")) {
        for (const Value& k : names->GetArray()) {
          if (k.IsString()) keys.push_back(json::View(k));
        }
      }
      std::sort(keys.begin(), keys.end());  // as Go prints and marshals the key map
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      std::unordered_map<std::string, int> seen;
      for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
        // The item's key fields as a map; with one key field, an item without it has the key
        // "unspecified", unlike any value.
        std::string id = keys.size() == 1 ? "u" : "c{";
        std::string shown = "map[string]interface {}{";
        bool first = true;
        for (std::string_view k : keys) {
          const Value* v = x[i].IsObject() ? json::FindMember(x[i], k) : nullptr;
          if (!v) continue;
          if (keys.size() == 1) {
            id = SetKey(*v);
          } else {
            if (!first) id += ',';
            AppendGoJsonString(k, id);
            id += ':';
            AppendGoJson(*v, id, 0);
          }
          if (!first) shown += ", ";
          first = false;
          shown += util::GoQuote(k) + ":";
          AppendGoSyntax(*v, shown, 0);
        }
        if (keys.size() != 1) id += '}';
        if (++seen[id] == 2) Add(Duplicate(IndexPath(path, i), shown + "}"));
      }
    }
  }

  static std::string IndexPath(const std::string& path, size_t i) {
    std::string out = path;
    field_path::AppendIndex(out, i);
    return out;
  }

  [[gnu::noinline]] void CheckEnum(const Value& x, const Value& schema, const std::string& path) {
    const Value* values = ArrayKeyword(schema, "enum");
    if (!values || values->Empty()) return;
    const std::string key = ValueKey(x);
    for (const Value& v : values->GetArray()) {
      if (ValueKey(v) == key) return;
    }
    // kubeOpenAPIResultToFieldErrors lists string entries as they are, others as JSON.
    std::string supported;
    for (const Value& v : values->GetArray()) {
      if (!supported.empty()) supported += ", ";
      if (v.IsString()) {
        supported += util::GoQuote(json::View(v));
      } else {
        std::string text;
        AppendGoJson(v, text, 0);
        supported += util::GoQuote(text);
      }
    }
    Add({std::string(kFieldValueNotSupported), path,
         fmt::format("Unsupported value: {}: supported values: {}", BadValue(x), supported)});
  }

  // kube-openapi's objectValidator.
  void CheckObject(const Value& x, const Value& schema, std::string& path, int depth, bool structural) {
    if (!CheckPropertyCount(x, schema, path)) return;
    const Members properties(SchemaKeyword(schema, "properties"));
    const Value* additional = Keyword(schema, "additionalProperties");
    for (const auto& m : x.GetObject()) {
      const std::string_view key = json::View(m.name);
      const Value* sub = properties.Find(key);
      if (!sub && additional && additional->IsBool() && !additional->GetBool()) {
        Forbidden(path, key);
        continue;
      }
      if (!sub && additional && additional->IsObject()) sub = additional;
      if (!sub) continue;
      PathScope scope(path);
      field_path::AppendField(path, key);
      Check(m.value, *sub, path, depth + 1, structural);
    }
    CheckRequired(x, schema, path);
  }

  // Too few or too many properties end the object's checks, as in kube-openapi.
  [[gnu::noinline]] bool CheckPropertyCount(const Value& x, const Value& schema, const std::string& path) {
    const auto count = static_cast<int64_t>(x.MemberCount());
    if (const auto min = CountKeyword(schema, "minProperties"); min && count < *min) {
      Add(Invalid(path, std::to_string(count),
                  fmt::format("{} in body should have at least {} properties", path, *min)));
      return false;
    }
    if (const auto max = CountKeyword(schema, "maxProperties"); max && count > *max) {
      Add(TooMany(path, count, *max));
      return false;
    }
    return true;
  }

  [[gnu::noinline]] void Forbidden(const std::string& path, std::string_view key) {
    Add(Invalid(path, util::GoQuote(key), fmt::format("{}.{} in body is a forbidden property", path, key)));
  }

  [[gnu::noinline]] void CheckRequired(const Value& x, const Value& schema, const std::string& path) {
    const Value* required = ArrayKeyword(schema, "required");
    if (!required) return;
    const Members present(&x);
    for (const Value& k : required->GetArray()) {
      if (k.IsString() && !present.Find(json::View(k))) Add(RequiredValue(Child(path, json::View(k))));
    }
  }

  //! The pattern compiled for this call, to be matched against a whole value (Go's MatchString
  //! searches), or nullptr when it cannot be checked here.
  const std::regex* Regex(std::string_view pattern) {
    auto [it, inserted] = regexes_.try_emplace(std::string(pattern));
    if (!inserted || !Tame(pattern)) return it->second.get();
    // libstdc++'s default matcher backtracks, recursing once per character; its polynomial
    // (breadth-first) one does not. regex_search would still start it at every character
    // (quadratic in the value's length), so the search is one match of .*(?:pattern).* instead.
    constexpr auto kSyntax = std::regex::ECMAScript
#if defined(__GLIBCXX__)
                             | std::regex_constants::__polynomial
#endif
        ;
    try {
      [[maybe_unused]] const std::regex alone(it->first, kSyntax);  // first: its parentheses must balance
      it->second = std::make_unique<std::regex>("[\\s\\S]*(?:" + it->first + ")[\\s\\S]*", kSyntax);
    } catch (const std::regex_error&) {
      // Not ECMAScript (Go's RE2 syntax has (?i), \z, (?P<name>...)): left unchecked, since the
      // server accepted the pattern when it admitted the CRD.
    }
    return it->second.get();
  }

  // Whether a pattern is safe for std::regex: its compiler recurses once per term and per group,
  // and a counted repetition multiplies the automaton. RE2 (the server's engine) refuses counts
  // above 1000 itself.
  static bool Tame(std::string_view pattern) {
    constexpr size_t kMaxPattern = 2048;
    constexpr int kMaxRepeat = 1000;
    if (pattern.size() > kMaxPattern) return false;
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '\\') {
        ++i;
      } else if (pattern[i] == '{') {
        int n = 0;
        for (size_t j = i + 1; j < pattern.size() && pattern[j] != '}'; ++j) {
          if (pattern[j] >= '0' && pattern[j] <= '9') {
            n = std::min(n * 10 + (pattern[j] - '0'), kMaxRepeat + 1);
            if (n > kMaxRepeat) return false;
          } else {
            n = 0;
          }
        }
      }
    }
    return true;
  }

  std::vector<SchemaViolation>* out_;  // the whole check's list, or a clause's while one is weighed
  int64_t budget_ = kBudget;
  std::unordered_map<std::string, std::unique_ptr<std::regex>> regexes_;
};

// ---------------------------------------------------------------------------------------------
// Structural schema problems: the CRD validation's openAPIV3Schema checks
// (ValidateCustomResourceDefinitionOpenAPISchema) and structural invariants (ValidateStructural),
// those a checker of values depends on. As in Validator, the checks that do not recurse are out of
// line to keep the frames of a deep schema's walk small.

class SchemaLinter {
 public:
  enum class Level : uint8_t { kRoot, kItem, kField };

  explicit SchemaLinter(std::vector<std::string>& problems) : problems_(problems) {}

  //! `nested`: inside allOf/anyOf/oneOf/not, where only value validations may appear.
  void Lint(const Value& s, const std::string& path, Level level, bool nested, int depth) {
    if (!s.IsObject()) {
      Problem(path, fmt::format("Invalid value: {}: must be a schema (a JSON object)", util::GoQuote(TypeName(s))));
      return;
    }
    if (depth > json::kMaxDepth) {
      Problem(path, fmt::format("Forbidden: nesting deeper than {} levels is not supported", json::kMaxDepth));
      return;
    }
    LintKeywordTypes(s, path);
    LintType(s, path);
    LintUnsupported(s, path);
    if (nested) {
      LintNested(s, path);
    } else {
      LintSkeleton(s, path, level);
    }
    LintListType(s, path);
    LintChildren(s, path, level, nested, depth);
  }

 private:
  void Problem(std::string_view path, std::string_view message) {
    problems_.push_back(fmt::format("{}: {}", path, message));
  }

  void Wrong(const std::string& path, std::string_view key, const Value& v, std::string_view must) {
    Problem(path + "." + std::string(key), fmt::format("Invalid value: {}: {}", BadValue(v), must));
  }

  // Keywords of the wrong JSON type, which the server's decoder refuses.
  [[gnu::noinline]] void LintKeywordTypes(const Value& s, const std::string& path) {
    for (const auto& m : s.GetObject()) {
      const std::string_view key = json::View(m.name);
      const Value& v = m.value;
      if (key == "maximum" || key == "minimum" || key == "multipleOf") {
        if (!v.IsNumber()) Wrong(path, key, v, "must be a number");
      } else if (key == "maxLength" || key == "minLength" || key == "maxItems" || key == "minItems" ||
                 key == "maxProperties" || key == "minProperties") {
        if (!v.IsInt64()) Wrong(path, key, v, "must be an integer");
      } else if (key == "exclusiveMaximum" || key == "exclusiveMinimum" || key == "nullable" || key == "uniqueItems" ||
                 key == "x-kubernetes-embedded-resource" || key == "x-kubernetes-int-or-string" ||
                 key == "x-kubernetes-preserve-unknown-fields") {
        if (!v.IsBool()) Wrong(path, key, v, "must be a boolean");
      } else if (key == "pattern" || key == "format" || key == "description" || key == "title" ||
                 key == "x-kubernetes-list-type" || key == "x-kubernetes-map-type") {
        if (!v.IsString()) Wrong(path, key, v, "must be a string");
      } else if (key == "required" || key == "x-kubernetes-list-map-keys") {
        if (!v.IsArray() || !std::all_of(v.Begin(), v.End(), [](const Value& e) { return e.IsString(); })) {
          Wrong(path, key, v, "must be a list of strings");
        }
      } else if (key == "enum" || key == "allOf" || key == "anyOf" || key == "oneOf") {
        if (!v.IsArray()) Wrong(path, key, v, "must be a list");
      } else if (key == "properties" || key == "not") {
        if (!v.IsObject()) Wrong(path, key, v, "must be an object");
      } else if (key == "additionalProperties") {
        if (!v.IsObject() && !v.IsBool()) Wrong(path, key, v, "must be an object or a boolean");
      }
    }
  }

  [[gnu::noinline]] void LintType(const Value& s, const std::string& path) {
    const Value* type = Keyword(s, "type");
    if (!type) return;
    if (!type->IsString()) {
      Wrong(path, "type", *type, "must be a string");
      return;
    }
    const std::string_view t = json::View(*type);
    static constexpr std::string_view kTypes[] = {"array", "boolean", "integer", "number", "object", "string"};
    if (!t.empty() && std::find(std::begin(kTypes), std::end(kTypes), t) == std::end(kTypes)) {
      Problem(path + ".type", fmt::format("Unsupported value: {}: supported values: \"array\", \"boolean\", "
                                          "\"integer\", \"number\", \"object\", \"string\"",
                                          util::GoQuote(t)));
    }
    if (t == "null") Problem(path + ".type", "Forbidden: type cannot be set to null, use nullable as an alternative");
  }

  [[gnu::noinline]] void LintUnsupported(const Value& s, const std::string& path) {
    // As upstream tests them: id and $schema when not empty, patternProperties and definitions
    // when they have entries, the others when present.
    for (const auto& m : s.GetObject()) {
      const std::string_view key = json::View(m.name);
      const Value& v = m.value;
      bool set = false;
      if (key == "id" || key == "$schema") {
        set = !json::View(v).empty();
      } else if (key == "patternProperties" || key == "definitions") {
        set = v.IsObject() && !v.ObjectEmpty();
      } else if (key == "$ref" || key == "dependencies" || key == "additionalItems") {
        set = !v.IsNull();
      }
      if (set) Problem(path + "." + std::string(key), fmt::format("Forbidden: {} is not supported", key));
    }
    if (const Value* items = Keyword(s, "items"); items && items->IsArray()) {
      Problem(path + ".items", "Forbidden: items must be a schema object and not an array");
    } else if (items && !items->IsObject()) {
      Wrong(path, "items", *items, "must be an object");
    }
    if (Flag(s, "uniqueItems")) {
      Problem(path + ".uniqueItems",
              "Forbidden: uniqueItems cannot be set to true since the runtime complexity "
              "becomes quadratic");
    }
    const Value* preserve = Keyword(s, "x-kubernetes-preserve-unknown-fields");
    if (preserve && preserve->IsBool() && !preserve->GetBool()) {
      Problem(path + ".x-kubernetes-preserve-unknown-fields", "Invalid value: false: must be true or undefined");
    }
    const Value* properties = SchemaKeyword(s, "properties");
    const Value* additional = Keyword(s, "additionalProperties");
    if (properties && !properties->ObjectEmpty() && additional &&
        (additional->IsObject() || (additional->IsBool() && !additional->GetBool()))) {
      Problem(path + ".additionalProperties", "Forbidden: additionalProperties and properties are mutual exclusive");
    }
  }

  // The skeleton's invariants (schema/validation.go's validateStructuralInvariants).
  [[gnu::noinline]] void LintSkeleton(const Value& s, const std::string& path, Level level) {
    const std::string_view type = StringKeyword(s, "type");
    const bool embedded = Flag(s, "x-kubernetes-embedded-resource");
    const bool preserve = Flag(s, "x-kubernetes-preserve-unknown-fields");
    const bool int_or_string = Flag(s, "x-kubernetes-int-or-string");
    if (type == "array" && !SchemaKeyword(s, "items")) Problem(path + ".items", "Required value: must be specified");
    if (Keyword(s, "additionalProperties")) {
      if (level == Level::kRoot) Problem(path + ".additionalProperties", "Forbidden: must not be used at the root");
      if (embedded) {
        Problem(path + ".additionalProperties", "Forbidden: must not be used if x-kubernetes-embedded-resource is set");
      }
    }
    if (embedded && type != "object") {
      Problem(path + ".type", type.empty() ? std::string("Required value: must be object if "
                                                         "x-kubernetes-embedded-resource is true")
                                           : fmt::format("Invalid value: {}: must be object if "
                                                         "x-kubernetes-embedded-resource is true",
                                                         util::GoQuote(type)));
    } else if (type.empty() && !int_or_string && !preserve) {
      static constexpr std::string_view kWhere[] = {"at the root", "for specified array items",
                                                    "for specified object fields"};
      Problem(path + ".type", fmt::format("Required value: must not be empty {}", kWhere[static_cast<int>(level)]));
    }
    if (level == Level::kRoot && Flag(s, "nullable"))
      Problem(path + ".nullable", "Forbidden: nullable cannot be true at the root");
    if (level == Level::kRoot && !type.empty() && type != "object") {
      Problem(path + ".type", fmt::format("Invalid value: {}: must be object at the root", util::GoQuote(type)));
    }
    if (int_or_string && preserve) {
      Problem(path + ".x-kubernetes-preserve-unknown-fields",
              "Invalid value: true: must be false if x-kubernetes-int-or-string is true");
    }
    if (int_or_string && embedded) {
      Problem(path + ".x-kubernetes-embedded-resource",
              "Invalid value: true: must be false if x-kubernetes-int-or-string is true");
    }
    const Value* properties = SchemaKeyword(s, "properties");
    if (embedded && !preserve && (!properties || properties->ObjectEmpty())) {
      Problem(path + ".properties",
              "Required value: must not be empty if x-kubernetes-embedded-resource is true without "
              "x-kubernetes-preserve-unknown-fields");
    }
    if (properties && (level == Level::kRoot || embedded)) LintMetaProperties(*properties, path, level);
  }

  // apiVersion and kind of a resource are strings; metadata is an object, and at the root may
  // only restrict name and generateName.
  void LintMetaProperties(const Value& properties, const std::string& path, Level level) {
    const std::string base = path + ".properties";
    for (std::string_view key : {"apiVersion", "kind"}) {
      const Value* p = json::FindMember(properties, key);
      if (!p || !p->IsObject()) continue;
      if (const std::string_view t = StringKeyword(*p, "type"); t != "string") {
        Problem(fmt::format("{}[{}].type", base, key),
                fmt::format("Invalid value: {}: must be string", util::GoQuote(t)));
      }
    }
    const Value* metadata = json::FindMember(properties, "metadata");
    if (!metadata || !metadata->IsObject()) return;
    if (const std::string_view t = StringKeyword(*metadata, "type"); t != "object") {
      Problem(base + "[metadata].type", fmt::format("Invalid value: {}: must be object", util::GoQuote(t)));
    }
    if (level != Level::kRoot) return;
    bool other = false;
    for (const auto& m : metadata->GetObject()) {
      const std::string_view key = json::View(m.name);
      if (key == "properties" && m.value.IsObject()) {
        for (const auto& p : m.value.GetObject()) {
          other |= json::View(p.name) != "name" && json::View(p.name) != "generateName";
        }
      } else {
        other |= key != "type";
      }
    }
    if (other) {
      Problem(base + "[metadata]",
              "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly "
              "specified");
    }
  }

  // Inside allOf/anyOf/oneOf/not only value validations may appear (validateNestedValueValidation).
  [[gnu::noinline]] void LintNested(const Value& s, const std::string& path) {
    const auto forbid = [&](std::string_view key, std::string_view must) {
      Problem(path + "." + std::string(key), fmt::format("Forbidden: {} to be structural", must));
    };
    if (!StringKeyword(s, "type").empty() && !type_allowed_.contains(&s)) forbid("type", "must be empty");
    if (Keyword(s, "additionalProperties")) forbid("additionalProperties", "must be undefined");
    if (const Value* d = Keyword(s, "default"); d && !d->IsNull()) forbid("default", "must be undefined");
    if (!StringKeyword(s, "title").empty()) forbid("title", "must be empty");
    if (!StringKeyword(s, "description").empty()) forbid("description", "must be empty");
    if (Flag(s, "nullable")) forbid("nullable", "must be false");
    for (std::string_view key :
         {"x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string"}) {
      if (Flag(s, key)) forbid(key, "must be false");
    }
    if (const Value* keys = ArrayKeyword(s, "x-kubernetes-list-map-keys"); keys && !keys->Empty()) {
      forbid("x-kubernetes-list-map-keys", "must be empty");
    }
    if (Keyword(s, "x-kubernetes-list-type")) forbid("x-kubernetes-list-type", "must be undefined");
    if (Keyword(s, "x-kubernetes-map-type")) forbid("x-kubernetes-map-type", "must be undefined");
    if (const Value* rules = ArrayKeyword(s, "x-kubernetes-validations"); rules && !rules->Empty()) {
      forbid("x-kubernetes-validations", "must be empty");
    }
    if (const Value* properties = SchemaKeyword(s, "properties");
        properties && json::FindMember(*properties, "metadata")) {
      Problem(path + ".properties[metadata]", "Forbidden: must not be specified in a nested context");
    }
  }

  [[gnu::noinline]] void LintListType(const Value& s, const std::string& path) {
    const Value* list_type = Keyword(s, "x-kubernetes-list-type");
    const Value* keys = ArrayKeyword(s, "x-kubernetes-list-map-keys");
    const std::string_view t = list_type ? json::View(*list_type) : std::string_view();
    if (keys && !keys->Empty() && t != "map") {
      Problem(path + ".x-kubernetes-list-type",
              list_type ? fmt::format("Invalid value: {}: must be map if x-kubernetes-list-map-keys is non-empty",
                                      util::GoQuote(t))
                        : std::string("Required value: must be map if x-kubernetes-list-map-keys is non-empty"));
    }
    if (!list_type || !list_type->IsString()) return;
    if (const std::string_view type = StringKeyword(s, "type"); type != "array") {
      Problem(path + ".type",
              type.empty() ? std::string("Required value: must be array if x-kubernetes-list-type is specified")
                           : fmt::format("Invalid value: {}: must be array if x-kubernetes-list-type is specified",
                                         util::GoQuote(type)));
    }
    if (t != "atomic" && t != "set" && t != "map") {
      Problem(path + ".x-kubernetes-list-type",
              fmt::format("Unsupported value: {}: supported values: \"atomic\", \"set\", \"map\"", util::GoQuote(t)));
    }
    if (t != "map") return;
    if (!keys || keys->Empty()) {
      Problem(path + ".x-kubernetes-list-map-keys",
              "Required value: must not be empty if x-kubernetes-list-type is map");
    }
    const Value* items = SchemaKeyword(s, "items");
    if (!items) return;
    if (StringKeyword(*items, "type") != "object") {
      Problem(path + ".items.type", fmt::format("Invalid value: {}: must be object if parent array's "
                                                "x-kubernetes-list-type is map",
                                                util::GoQuote(StringKeyword(*items, "type"))));
      return;
    }
    if (!keys) return;
    const Value* properties = SchemaKeyword(*items, "properties");
    for (const Value& k : keys->GetArray()) {
      const Value* p = properties && k.IsString() ? json::FindMember(*properties, json::View(k)) : nullptr;
      if (!p || !p->IsObject()) {
        Problem(path + ".x-kubernetes-list-map-keys",
                fmt::format("Invalid value: {}: entries must all be names of item properties", BadValue(*keys)));
      } else if (const std::string_view pt = StringKeyword(*p, "type"); pt == "array" || pt == "object") {
        Problem(fmt::format("{}.items.properties[{}].type", path, json::View(k)),
                fmt::format("Invalid value: {}: must be a scalar type if parent array's x-kubernetes-list-type is map",
                            util::GoQuote(pt)));
      }
    }
  }

  void LintChildren(const Value& s, const std::string& path, Level level, bool nested, int depth) {
    if (const Value* properties = SchemaKeyword(s, "properties")) {
      for (const auto& m : properties->GetObject()) {
        Lint(m.value, fmt::format("{}.properties[{}]", path, json::View(m.name)), Level::kField, nested, depth + 1);
      }
    }
    if (const Value* additional = SchemaKeyword(s, "additionalProperties")) {
      Lint(*additional, path + ".additionalProperties", Level::kField, nested, depth + 1);
    }
    if (const Value* items = SchemaKeyword(s, "items")) Lint(*items, path + ".items", Level::kItem, nested, depth + 1);
    // The int-or-string exceptions: anyOf [{type: integer}, {type: string}], alone or as allOf's
    // first clause, may name types.
    AllowIntOrStringTypes(s);
    if (const Value* all = ArrayKeyword(s, "allOf"); all && !all->Empty()) AllowIntOrStringTypes((*all)[0]);
    for (std::string_view key : {"allOf", "anyOf", "oneOf"}) {
      const Value* clauses = ArrayKeyword(s, key);
      if (!clauses) continue;
      for (rapidjson::SizeType i = 0; i < clauses->Size(); ++i) {
        Lint((*clauses)[i], fmt::format("{}.{}[{}]", path, key, i), level, true, depth + 1);
      }
    }
    if (const Value* negated = SchemaKeyword(s, "not")) Lint(*negated, path + ".not", level, true, depth + 1);
  }

  void AllowIntOrStringTypes(const Value& s) {
    const Value* any = ArrayKeyword(s, "anyOf");
    if (!any || any->Size() != 2) return;
    const auto only_type = [](const Value& clause, std::string_view type) {
      return clause.IsObject() && clause.MemberCount() == 1 && StringKeyword(clause, "type") == type;
    };
    if (only_type((*any)[0], "integer") && only_type((*any)[1], "string")) {
      type_allowed_.insert(&(*any)[0]);
      type_allowed_.insert(&(*any)[1]);
    }
  }

  std::vector<std::string>& problems_;
  std::unordered_set<const Value*> type_allowed_;  // clauses of the int-or-string patterns
};

}  // namespace

// Pruning and dropping nulls only remove members, so the allocator goes unused: it is in the
// interface for defaulting, which adds them.
StructuralCheck PruneAndValidate(json::Value& object, json::Allocator& /*allocator*/, const json::Value& schema) {
  StructuralCheck check;
  const Value* root = schema.IsObject() ? &schema : nullptr;
  // Upstream prunes the root by an empty schema when there is none, which keeps its metadata
  // fields (the root counts as an embedded resource) and drops the rest.
  static const Value kNoSchema(rapidjson::kObjectType);
  std::string path;
  Pruner(check.pruned).Prune(object, root ? root : &kNoSchema, /*embedded=*/true, path, 0);
  std::sort(check.pruned.begin(), check.pruned.end());
  DropNulls(object, root, 0);
  if (root) {
    Validator validator(check.violations);
    validator.Check(object, *root, path, 0, /*structural=*/true);
    if (validator.Exhausted()) {
      check.violations.push_back(Invalid("", "\"\"",
                                         fmt::format("the schema asks for more than {} checks of this object: not all "
                                                     "were made",
                                                     Validator::kBudget)));
    }
  }
  return check;
}

std::vector<std::string> StructuralSchemaProblems(const json::Value& schema, std::string_view path) {
  std::vector<std::string> problems;
  SchemaLinter(problems).Lint(schema, std::string(path), SchemaLinter::Level::kRoot, false, 0);
  return problems;
}

}  // namespace kubesched::api
