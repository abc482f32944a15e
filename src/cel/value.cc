#include "cel/value.h"

#include <algorithm>
#include <cmath>

namespace kubesched::cel {
namespace {

// The slice of `items` (sorted by name: domain, then id) whose domain is `domain`.
template <typename T>
std::span<const T> DomainSlice(std::span<const T> items, std::string_view domain) {
  auto lo = std::lower_bound(items.begin(), items.end(), domain,
                             [](const T& item, std::string_view d) { return std::string_view(item.name.domain) < d; });
  auto hi = lo;
  while (hi != items.end() && hi->name.domain == domain) ++hi;
  return std::span<const T>(lo, hi);
}

template <typename T>
const T* FindId(std::span<const T> domain_items, std::string_view id) {
  auto it = std::lower_bound(domain_items.begin(), domain_items.end(), id,
                             [](const T& item, std::string_view i) { return std::string_view(item.name.id) < i; });
  if (it == domain_items.end() || it->name.id != id) return nullptr;
  return &*it;
}

template <typename T>
int64_t DistinctDomains(std::span<const T> items) {
  int64_t n = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == 0 || items[i].name.domain != items[i - 1].name.domain) ++n;
  }
  return n;
}

template <typename T>
std::string_view NthDomain(std::span<const T> items, int64_t index) {
  int64_t n = -1;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == 0 || items[i].name.domain != items[i - 1].name.domain) {
      if (++n == index) return items[i].name.domain;
    }
  }
  return {};
}

Value DomainValue(ValueKind kind, std::span<const api::DeviceAttribute> attrs) {
  Value v;
  v.kind = kind;
  v.attrs = attrs;
  return v;
}

Value CapDomainValue(ValueKind kind, std::span<const api::DeviceCapacity> caps) {
  Value v;
  v.kind = kind;
  v.caps = caps;
  return v;
}

bool NumericEqual(const Value& a, const Value& b) {
  // Exact across int, uint and double, as cel-go's heterogeneous equality compares numbers.
  if (a.kind == ValueKind::kInt && b.kind == ValueKind::kUint) return a.i >= 0 && static_cast<uint64_t>(a.i) == b.u;
  if (a.kind == ValueKind::kUint && b.kind == ValueKind::kInt) return b.i >= 0 && static_cast<uint64_t>(b.i) == a.u;
  if (a.kind == ValueKind::kDouble || b.kind == ValueKind::kDouble) {
    if (a.kind == b.kind) return a.d == b.d;
    const Value& other = a.kind == ValueKind::kDouble ? b : a;
    const double d = a.kind == ValueKind::kDouble ? a.d : b.d;
    // An integer equals a double only when the double is exactly that integer.
    if (std::isnan(d) || std::trunc(d) != d) return false;
    if (other.kind == ValueKind::kInt) {
      if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
      return static_cast<int64_t>(d) == other.i;
    }
    if (d < 0 || d >= 18446744073709551616.0) return false;
    return static_cast<uint64_t>(d) == other.u;
  }
  return a.kind == ValueKind::kInt ? a.i == b.i : a.u == b.u;
}

bool IsNumber(const Value& v) {
  return v.kind == ValueKind::kInt || v.kind == ValueKind::kUint || v.kind == ValueKind::kDouble;
}

}  // namespace

std::string_view TypeName(const Value& v) {
  switch (v.kind) {
    case ValueKind::kError:
      return "error";
    case ValueKind::kNull:
      return "null_type";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kUint:
      return "uint";
    case ValueKind::kDouble:
      return "double";
    case ValueKind::kString:
      return "string";
    case ValueKind::kBytes:
      return "bytes";
    case ValueKind::kList:
      return "list";
    case ValueKind::kMap:
    case ValueKind::kAttrDomains:
    case ValueKind::kAttrDomain:
    case ValueKind::kCapDomains:
    case ValueKind::kCapDomain:
      return "map";
    case ValueKind::kQuantity:
      return "kubernetes.Quantity";
    case ValueKind::kSemver:
      return "kubernetes.Semver";
    case ValueKind::kDevice:
      return "kubernetes.DRADevice";
  }
  return "dyn";
}

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

int64_t CostSize(const Value& v) {
  switch (v.kind) {
    case ValueKind::kString:
      return CodePoints(v.str);
    case ValueKind::kBytes:
      return static_cast<int64_t>(v.str.size());
    case ValueKind::kList:
      return static_cast<int64_t>(v.list->size());
    default:
      return v.IsMap() ? MapSize(v) : 1;
  }
}

int64_t MapSize(const Value& map) {
  switch (map.kind) {
    case ValueKind::kMap:
      return static_cast<int64_t>(map.map->size());
    case ValueKind::kAttrDomains:
      return DistinctDomains(map.attrs);
    case ValueKind::kAttrDomain:
      return static_cast<int64_t>(map.attrs.size());
    case ValueKind::kCapDomains:
      return DistinctDomains(map.caps);
    case ValueKind::kCapDomain:
      return static_cast<int64_t>(map.caps.size());
    default:
      return 0;
  }
}

Value MapKey(const Value& map, int64_t i) {
  switch (map.kind) {
    case ValueKind::kMap:
      return (*map.map)[static_cast<size_t>(i)].key;
    case ValueKind::kAttrDomains:
      return Value::String(NthDomain(map.attrs, i));
    case ValueKind::kAttrDomain:
      return Value::String(map.attrs[static_cast<size_t>(i)].name.id);
    case ValueKind::kCapDomains:
      return Value::String(NthDomain(map.caps, i));
    case ValueKind::kCapDomain:
      return Value::String(map.caps[static_cast<size_t>(i)].name.id);
    default:
      return Value();
  }
}

Value AttributeValue(const api::DeviceAttribute& attribute) {
  return std::visit(
      [](const auto& v) -> Value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return Value::Int(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return Value::Bool(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return Value::String(v);
        } else {
          return Value::Semver(&v);
        }
      },
      attribute.value);
}

Value MapFind(const Value& map, const Value& key, bool& found) {
  found = false;
  switch (map.kind) {
    case ValueKind::kMap:
      for (const auto& e : *map.map) {
        if (Equal(e.key, key)) {
          found = true;
          return e.value;
        }
      }
      return Value();
    case ValueKind::kAttrDomains:
    case ValueKind::kCapDomains: {
      if (key.kind != ValueKind::kString) return Value();
      // Every domain is there: an unknown one is an empty map (upstream's mapper with a default).
      found = true;
      if (map.kind == ValueKind::kAttrDomains)
        return DomainValue(ValueKind::kAttrDomain, DomainSlice(map.attrs, key.str));
      return CapDomainValue(ValueKind::kCapDomain, DomainSlice(map.caps, key.str));
    }
    case ValueKind::kAttrDomain: {
      if (key.kind != ValueKind::kString) return Value();
      const auto* a = FindId(map.attrs, key.str);
      if (!a) return Value();
      found = true;
      return AttributeValue(*a);
    }
    case ValueKind::kCapDomain: {
      if (key.kind != ValueKind::kString) return Value();
      const auto* c = FindId(map.caps, key.str);
      if (!c) return Value();
      found = true;
      // The text was validated when the capacity was decoded; an unparsable one reads as zero.
      return Value::Quantity(QuantityValue::Parse(c->value.text()).value_or(QuantityValue()));
    }
    default:
      return Value();
  }
}

bool MapContains(const Value& map, const Value& key) {
  if (map.kind == ValueKind::kAttrDomains) {
    return key.kind == ValueKind::kString && !DomainSlice(map.attrs, key.str).empty();
  }
  if (map.kind == ValueKind::kCapDomains) {
    return key.kind == ValueKind::kString && !DomainSlice(map.caps, key.str).empty();
  }
  bool found = false;
  MapFind(map, key, found);
  return found;
}

bool Equal(const Value& a, const Value& b) {
  if (IsNumber(a) && IsNumber(b)) return NumericEqual(a, b);
  if (a.IsMap() && b.IsMap()) {
    const int64_t n = MapSize(a);
    if (n != MapSize(b)) return false;
    for (int64_t i = 0; i < n; ++i) {
      const Value key = MapKey(a, i);
      bool found_a = false;
      bool found_b = false;
      const Value va = MapFind(a, key, found_a);
      const Value vb = MapFind(b, key, found_b);
      if (!found_b || !MapContains(b, key) || !Equal(va, vb)) return false;
    }
    return true;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kNull:
      return true;
    case ValueKind::kBool:
      return a.b == b.b;
    case ValueKind::kString:
    case ValueKind::kBytes:
      return a.str == b.str;
    case ValueKind::kList: {
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i) {
        if (!Equal((*a.list)[i], (*b.list)[i])) return false;
      }
      return true;
    }
    case ValueKind::kQuantity:
      return a.nano == b.nano;
    case ValueKind::kSemver:
      return a.semver->Compare(*b.semver) == std::strong_ordering::equal;
    case ValueKind::kDevice:
      return a.device == b.device;
    default:
      return false;
  }
}

}  // namespace kubesched::cel
