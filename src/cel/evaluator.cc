#include "cel/evaluator.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "cel/functions.h"

namespace kubesched::cel {
namespace {

constexpr double kStringTraversalCostFactor = 0.1;
constexpr int64_t kListCreateCost = 10;

int64_t Ceil(double v) { return static_cast<int64_t>(std::ceil(v)); }

// Go's %v of a map key, for "no such key: ...".
std::string KeyText(const Value& key) {
  switch (key.kind) {
    case ValueKind::kString:
      return std::string(key.str);
    case ValueKind::kInt:
      return std::to_string(key.i);
    case ValueKind::kUint:
      return std::to_string(key.u);
    case ValueKind::kBool:
      return key.b ? "true" : "false";
    case ValueKind::kDouble:
      return FormatDouble(key.d);
    default:
      return std::string(TypeName(key));
  }
}

// cel-go's Go type names, which its "expected iterable type" error shows.
std::string GoTypeName(const Value& v) {
  switch (v.kind) {
    case ValueKind::kBool:
      return "types.Bool";
    case ValueKind::kInt:
      return "types.Int";
    case ValueKind::kUint:
      return "types.Uint";
    case ValueKind::kDouble:
      return "types.Double";
    case ValueKind::kString:
      return "types.String";
    case ValueKind::kBytes:
      return "types.Bytes";
    case ValueKind::kNull:
      return "types.Null";
    case ValueKind::kQuantity:
      return "cel.Quantity";
    case ValueKind::kSemver:
      return "cel.Semver";
    default:
      return std::string(TypeName(v));
  }
}

Value NoOverload(EvalContext& ctx, const Node& n, std::string_view name, std::span<const Value> args) {
  std::string sig = "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) sig += ", ";
    sig += TypeName(args[i]);
  }
  sig += ")";
  return ctx.Error("no matching overload for '" + std::string(name) + "' applied to '" + sig + "'", n.offset);
}

Value SelectField(EvalContext& ctx, const Node& n, const Value& operand) {
  if (operand.kind == ValueKind::kDevice) {
    const DeviceView& d = *operand.device;
    Value v;
    switch (n.op) {
      case Op::kDeviceDriver:
        return Value::String(d.driver);
      case Op::kDeviceAllowMultipleAllocations:
        return Value::Bool(d.allow_multiple_allocations);
      case Op::kDeviceAttributes:
        v.kind = ValueKind::kAttrDomains;
        v.attrs = d.attributes;
        return v;
      case Op::kDeviceCapacity:
        v.kind = ValueKind::kCapDomains;
        v.caps = d.capacity;
        return v;
      default:
        return ctx.Error("undefined field '" + n.name + "'", n.offset);
    }
  }
  if (operand.IsMap()) {
    bool found = false;
    const Value v = MapFind(operand, Value::String(n.name), found);
    if (!found) return ctx.Error("no such key: " + n.name, n.offset);
    return v;
  }
  return ctx.Error("type '" + std::string(TypeName(operand)) + "' does not support field selection", n.offset);
}

Value HasField(EvalContext& ctx, const Node& n, const Value& operand) {
  if (operand.kind == ValueKind::kDevice) return Value::Bool(true);
  if (operand.IsMap()) {
    bool found = false;
    MapFind(operand, Value::String(n.name), found);
    return Value::Bool(found);
  }
  return ctx.Error("invalid type for field selection.", n.offset);
}

Value IndexValue(EvalContext& ctx, const Node& n, const Value& operand, const Value& key) {
  if (operand.kind == ValueKind::kList) {
    int64_t i = 0;
    if (key.kind == ValueKind::kInt) {
      i = key.i;
    } else if (key.kind == ValueKind::kUint && key.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      i = static_cast<int64_t>(key.u);
    } else if (key.kind == ValueKind::kDouble && std::trunc(key.d) == key.d && std::abs(key.d) < 9e18) {
      i = static_cast<int64_t>(key.d);
    } else {
      return ctx.Error("unsupported index type '" + std::string(TypeName(key)) + "' in list", n.offset);
    }
    const int64_t size = static_cast<int64_t>(operand.list->size());
    if (i < 0 || i >= size) {
      return ctx.Error("index '" + std::to_string(i) + "' out of range in list size '" + std::to_string(size) + "'",
                       n.offset);
    }
    return (*operand.list)[static_cast<size_t>(i)];
  }
  if (operand.IsMap()) {
    bool found = false;
    const Value v = MapFind(operand, key, found);
    if (!found) return ctx.Error("no such key: " + KeyText(key), n.offset);
    return v;
  }
  const std::array<Value, 2> args = {operand, key};
  return NoOverload(ctx, n, "_[_]", args);
}

// Three-way comparison for the relational operators; nullopt when the operands do not compare.
std::optional<int> Compare(const Value& a, const Value& b, bool& nan) {
  const auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  using K = ValueKind;
  if (a.kind == K::kDouble || b.kind == K::kDouble) {
    if ((a.kind == K::kDouble || a.kind == K::kInt || a.kind == K::kUint) &&
        (b.kind == K::kDouble || b.kind == K::kInt || b.kind == K::kUint)) {
      if ((a.kind == K::kDouble && std::isnan(a.d)) || (b.kind == K::kDouble && std::isnan(b.d))) {
        nan = true;
        return std::nullopt;
      }
      // An int or uint against a double: compare exactly by bounding the double first.
      if (a.kind == K::kDouble && b.kind == K::kDouble) return sign(a.d, b.d);
      const bool swap = a.kind != K::kDouble;
      const double d = swap ? b.d : a.d;
      const Value& other = swap ? a : b;
      int r;
      if (other.kind == K::kInt) {
        if (d < -9223372036854775808.0) {
          r = -1;
        } else if (d >= 9223372036854775808.0) {
          r = 1;
        } else {
          const auto t = static_cast<int64_t>(std::trunc(d));
          r = t != other.i ? sign(t, other.i) : sign(d, std::trunc(d));
        }
      } else {
        if (d < 0) {
          r = -1;
        } else if (d >= 18446744073709551616.0) {
          r = 1;
        } else {
          const auto t = static_cast<uint64_t>(std::trunc(d));
          r = t != other.u ? sign(t, other.u) : sign(d, std::trunc(d));
        }
      }
      return swap ? -r : r;
    }
    return std::nullopt;
  }
  if (a.kind == K::kInt && b.kind == K::kInt) return sign(a.i, b.i);
  if (a.kind == K::kUint && b.kind == K::kUint) return sign(a.u, b.u);
  if (a.kind == K::kInt && b.kind == K::kUint) return a.i < 0 ? -1 : sign(static_cast<uint64_t>(a.i), b.u);
  if (a.kind == K::kUint && b.kind == K::kInt) return b.i < 0 ? 1 : sign(a.u, static_cast<uint64_t>(b.i));
  if (a.kind != b.kind) return std::nullopt;
  if (a.kind == K::kString || a.kind == K::kBytes) {
    const int c = a.str.compare(b.str);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.kind == K::kBool) return sign(static_cast<int>(a.b), static_cast<int>(b.b));
  return std::nullopt;
}

class Evaluator {
 public:
  explicit Evaluator(EvalContext& ctx) : ctx_(ctx) {}

  Value Eval(const Node& n) {
    if (ctx_.cancelled()) return ctx_.CancelledError();
    switch (n.kind) {
      case NodeKind::kConst:
        return n.value;
      case NodeKind::kIdent: {
        if (!ctx_.Charge(n.cost)) return ctx_.CancelledError();
        if (n.slot >= 0) return ctx_.slots[static_cast<size_t>(n.slot)];
        Value v;
        v.kind = ValueKind::kDevice;
        v.device = &ctx_.device();
        return v;
      }
      case NodeKind::kSelect: {
        const Value operand = Eval(*n.children[0]);
        if (operand.IsError()) return operand;
        if (!ctx_.Charge(n.cost)) return ctx_.CancelledError();
        return n.test_only ? HasField(ctx_, n, operand) : SelectField(ctx_, n, operand);
      }
      case NodeKind::kIndex: {
        const Value operand = Eval(*n.children[0]);
        if (operand.IsError()) return operand;
        const Value key = Eval(*n.children[1]);
        if (key.IsError()) return key;
        if (!ctx_.Charge(n.cost)) return ctx_.CancelledError();
        return IndexValue(ctx_, n, operand, key);
      }
      case NodeKind::kList: {
        if (!ctx_.Charge(n.cost)) return ctx_.CancelledError();
        auto* list = ctx_.NewList();
        list->reserve(n.children.size());
        for (const auto& c : n.children) {
          Value v = Eval(*c);
          if (v.IsError()) return v;
          list->push_back(v);
        }
        return Value::List(list);
      }
      case NodeKind::kMap: {
        if (!ctx_.Charge(n.cost)) return ctx_.CancelledError();
        auto* map = ctx_.NewMap();
        for (size_t i = 0; i + 1 < n.children.size(); i += 2) {
          Value k = Eval(*n.children[i]);
          if (k.IsError()) return k;
          Value v = Eval(*n.children[i + 1]);
          if (v.IsError()) return v;
          for (const auto& e : *map) {
            if (Equal(e.key, k)) return ctx_.Error("Failed with repeated key", n.children[i]->offset);
          }
          map->push_back({k, v});
        }
        return Value::Map(map);
      }
      case NodeKind::kComprehension:
        return Comprehension(n);
      case NodeKind::kBind: {
        if (!ctx_.Charge(n.cost)) return ctx_.CancelledError();
        ctx_.slots[static_cast<size_t>(n.slot)] = Eval(*n.children[0]);
        if (ctx_.cancelled()) return ctx_.CancelledError();
        return Eval(*n.children[1]);
      }
      case NodeKind::kCall:
        return Call(n);
    }
    return ctx_.Error("unknown expression", n.offset);
  }

 private:
  // cel-go's && (and || with the roles of true and false swapped): a deciding operand wins even
  // over an error on the other side.
  Value Logical(const Node& n, bool is_and) {
    const Value l = Eval(*n.children[0]);
    if (ctx_.cancelled()) return ctx_.CancelledError();
    if (l.kind == ValueKind::kBool && l.b != is_and) return l;
    const Value r = Eval(*n.children[1]);
    if (ctx_.cancelled()) return ctx_.CancelledError();
    if (r.kind == ValueKind::kBool && r.b != is_and) return r;
    if (l.kind == ValueKind::kBool && r.kind == ValueKind::kBool) return r;
    if (l.IsError()) return l;
    if (r.IsError()) return r;
    const std::array<Value, 2> args = {l, r};
    return NoOverload(ctx_, n, is_and ? "_&&_" : "_||_", args);
  }

  Value Call(const Node& n) {
    switch (n.op) {
      case Op::kAnd:
        return Logical(n, true);
      case Op::kOr:
        return Logical(n, false);
      case Op::kConditional: {
        const Value c = Eval(*n.children[0]);
        if (c.IsError()) return c;
        if (c.kind != ValueKind::kBool) {
          const std::array<Value, 1> args = {c};
          return NoOverload(ctx_, n, "_?_:_", args);
        }
        return Eval(*n.children[c.b ? 1 : 2]);
      }
      default:
        break;
    }
    // Strict calls: every argument first, the first error wins.
    std::array<Value, 4> args;
    const size_t argc = n.children.size();
    for (size_t i = 0; i < argc; ++i) {
      args[i] = Eval(*n.children[i]);
      if (args[i].IsError()) return args[i];
    }
    const std::span<const Value> a(args.data(), argc);
    switch (n.op) {
      case Op::kNot:
        if (!ctx_.Charge(1)) return ctx_.CancelledError();
        if (a[0].kind != ValueKind::kBool) return NoOverload(ctx_, n, "!_", a);
        return Value::Bool(!a[0].b);
      case Op::kEquals:
      case Op::kNotEquals: {
        const int64_t size = std::min(CostSize(a[0]), CostSize(a[1]));
        if (!ctx_.Charge(Ceil(static_cast<double>(size) * kStringTraversalCostFactor))) return ctx_.CancelledError();
        const bool eq = Equal(a[0], a[1]);
        return Value::Bool(n.op == Op::kEquals ? eq : !eq);
      }
      case Op::kLess:
      case Op::kLessEquals:
      case Op::kGreater:
      case Op::kGreaterEquals:
        return Relational(n, a);
      case Op::kAdd:
      case Op::kSubtract:
      case Op::kMultiply:
      case Op::kDivide:
      case Op::kModulo:
        return Arithmetic(n, a);
      case Op::kNegate:
        if (!ctx_.Charge(1)) return ctx_.CancelledError();
        if (a[0].kind == ValueKind::kInt) {
          if (a[0].i == std::numeric_limits<int64_t>::min()) return ctx_.Error("integer overflow", n.offset);
          return Value::Int(-a[0].i);
        }
        if (a[0].kind == ValueKind::kDouble) return Value::Double(-a[0].d);
        return NoOverload(ctx_, n, "-_", a);
      case Op::kIn: {
        if (a[1].kind == ValueKind::kList) {
          if (!ctx_.Charge(static_cast<int64_t>(a[1].list->size()))) return ctx_.CancelledError();
          for (const Value& e : *a[1].list) {
            if (Equal(e, a[0])) return Value::Bool(true);
          }
          return Value::Bool(false);
        }
        if (!ctx_.Charge(1)) return ctx_.CancelledError();
        if (a[1].IsMap()) return Value::Bool(MapContains(a[1], a[0]));
        return NoOverload(ctx_, n, "@in", a);
      }
      case Op::kDyn:
        if (!ctx_.Charge(1)) return ctx_.CancelledError();
        return a[0];
      case Op::kFunction:
        return Function(n, a);
      default:
        return ctx_.Error("unknown operation '" + n.name + "'", n.offset);
    }
  }

  Value Relational(const Node& n, std::span<const Value> a) {
    int64_t cost = 1;
    if ((a[0].kind == ValueKind::kString || a[0].kind == ValueKind::kBytes) && a[0].kind == a[1].kind) {
      cost = Ceil(static_cast<double>(std::min(CostSize(a[0]), CostSize(a[1]))) * kStringTraversalCostFactor);
    }
    if (!ctx_.Charge(cost)) return ctx_.CancelledError();
    bool nan = false;
    const auto c = Compare(a[0], a[1], nan);
    if (nan) return ctx_.Error("NaN values cannot be ordered", n.offset);
    if (!c) return NoOverload(ctx_, n, n.name, a);
    switch (n.op) {
      case Op::kLess:
        return Value::Bool(*c < 0);
      case Op::kLessEquals:
        return Value::Bool(*c <= 0);
      case Op::kGreater:
        return Value::Bool(*c > 0);
      default:
        return Value::Bool(*c >= 0);
    }
  }

  Value Arithmetic(const Node& n, std::span<const Value> a) {
    const Value& x = a[0];
    const Value& y = a[1];
    using K = ValueKind;
    if (x.kind != y.kind) {
      if (!ctx_.Charge(1)) return ctx_.CancelledError();
      return NoOverload(ctx_, n, n.name, a);
    }
    if (n.op == Op::kAdd && (x.kind == K::kString || x.kind == K::kBytes)) {
      const double size = static_cast<double>(CostSize(x) + CostSize(y));
      if (!ctx_.Charge(Ceil(size * kStringTraversalCostFactor))) return ctx_.CancelledError();
      std::string joined;
      joined.reserve(x.str.size() + y.str.size());
      joined.append(x.str);
      joined.append(y.str);
      const std::string_view kept = ctx_.Keep(std::move(joined));
      return x.kind == K::kString ? Value::String(kept) : Value::BytesOf(kept);
    }
    if (!ctx_.Charge(1)) return ctx_.CancelledError();
    if (n.op == Op::kAdd && x.kind == K::kList) {
      if (x.list->empty()) return y;
      if (y.list->empty()) return x;
      // cel-go concatenates lists in O(1); copying here, a list element costs a unit of budget.
      if (!ctx_.Affordable(static_cast<int64_t>(x.list->size() + y.list->size()))) return ctx_.CancelledError();
      auto* list = ctx_.NewList();
      list->reserve(x.list->size() + y.list->size());
      list->insert(list->end(), x.list->begin(), x.list->end());
      list->insert(list->end(), y.list->begin(), y.list->end());
      return Value::List(list);
    }
    if (x.kind == K::kInt) {
      int64_t r = 0;
      bool overflow = false;
      switch (n.op) {
        case Op::kAdd:
          overflow = __builtin_add_overflow(x.i, y.i, &r);
          break;
        case Op::kSubtract:
          overflow = __builtin_sub_overflow(x.i, y.i, &r);
          break;
        case Op::kMultiply:
          overflow = __builtin_mul_overflow(x.i, y.i, &r);
          break;
        case Op::kDivide:
        case Op::kModulo:
          if (y.i == 0) return ctx_.Error(n.op == Op::kDivide ? "division by zero" : "modulus by zero", n.offset);
          if (x.i == std::numeric_limits<int64_t>::min() && y.i == -1) {
            overflow = true;
            break;
          }
          r = n.op == Op::kDivide ? x.i / y.i : x.i % y.i;
          break;
        default:
          break;
      }
      if (overflow) return ctx_.Error("integer overflow", n.offset);
      return Value::Int(r);
    }
    if (x.kind == K::kUint) {
      uint64_t r = 0;
      bool overflow = false;
      switch (n.op) {
        case Op::kAdd:
          overflow = __builtin_add_overflow(x.u, y.u, &r);
          break;
        case Op::kSubtract:
          overflow = __builtin_sub_overflow(x.u, y.u, &r);
          break;
        case Op::kMultiply:
          overflow = __builtin_mul_overflow(x.u, y.u, &r);
          break;
        case Op::kDivide:
        case Op::kModulo:
          if (y.u == 0) return ctx_.Error(n.op == Op::kDivide ? "division by zero" : "modulus by zero", n.offset);
          r = n.op == Op::kDivide ? x.u / y.u : x.u % y.u;
          break;
        default:
          break;
      }
      if (overflow) return ctx_.Error("unsigned integer overflow", n.offset);
      return Value::Uint(r);
    }
    if (x.kind == K::kDouble && n.op != Op::kModulo) {
      switch (n.op) {
        case Op::kAdd:
          return Value::Double(x.d + y.d);
        case Op::kSubtract:
          return Value::Double(x.d - y.d);
        case Op::kMultiply:
          return Value::Double(x.d * y.d);
        default:
          return Value::Double(x.d / y.d);
      }
    }
    return NoOverload(ctx_, n, n.name, a);
  }

  Value Function(const Node& n, std::span<const Value> a) {
    for (const Overload* o : n.overloads) {
      bool match = true;
      for (size_t i = 0; match && i < a.size(); ++i) match = MatchesRuntime(o->params[i], a[i]);
      if (!match) continue;
      const Value result = o->impl(ctx_, n, a);
      if (!ctx_.Charge(o->cost ? o->cost(a, result) : 1)) return ctx_.CancelledError();
      return result;
    }
    if (!ctx_.Charge(1)) return ctx_.CancelledError();
    return NoOverload(ctx_, n, n.name, a);
  }

  // The macros, costed as cel-go's expansions are: e.g. all(x, p) is a fold whose condition
  // @not_strictly_false(__result__) costs 2, whose step __result__ && p costs 1 plus p, and
  // whose result __result__ costs 1.
  Value Comprehension(const Node& n) {
    const Value range = Eval(*n.children[0]);
    if (range.IsError()) return range;
    int64_t count = 0;
    if (range.kind == ValueKind::kList) {
      count = static_cast<int64_t>(range.list->size());
    } else if (range.IsMap()) {
      count = MapSize(range);
    } else {
      return ctx_.Error("got '" + GoTypeName(range) + "', expected iterable type", n.children[0]->offset);
    }
    const auto element = [&](int64_t i) {
      return range.kind == ValueKind::kList ? (*range.list)[static_cast<size_t>(i)] : MapKey(range, i);
    };
    Value& var = ctx_.slots[static_cast<size_t>(n.slot)];
    const Node& body = *n.children[1];
    const auto cancelled = [&] { return ctx_.cancelled(); };
    switch (n.comprehension) {
      case ComprehensionKind::kAll:
      case ComprehensionKind::kExists: {
        const bool is_all = n.comprehension == ComprehensionKind::kAll;
        Value result = Value::Bool(is_all);
        for (int64_t i = 0; i < count; ++i) {
          if (!ctx_.Charge(is_all ? 2 : 3)) return ctx_.CancelledError();
          if (result.kind == ValueKind::kBool && result.b != is_all) break;  // decided
          var = element(i);
          if (!ctx_.Charge(1)) return ctx_.CancelledError();
          const Value p = Eval(body);
          if (cancelled()) return ctx_.CancelledError();
          if (p.kind == ValueKind::kBool && p.b != is_all) {
            result = p;
          } else if (result.kind == ValueKind::kBool && p.kind == ValueKind::kBool) {
            result = p;
          } else if (!result.IsError()) {
            if (p.IsError()) {
              result = p;
            } else {
              const std::array<Value, 2> args = {result, p};
              result = NoOverload(ctx_, n, is_all ? "_&&_" : "_||_", args);
            }
          }
        }
        if (!ctx_.Charge(1)) return ctx_.CancelledError();
        return result;
      }
      case ComprehensionKind::kExistsOne: {
        int64_t matches = 0;
        std::optional<Value> error;
        for (int64_t i = 0; i < count; ++i) {
          var = element(i);
          const Value p = Eval(body);
          if (cancelled()) return ctx_.CancelledError();
          if (error) {
            if (!ctx_.Charge(1)) return ctx_.CancelledError();
            continue;
          }
          if (p.kind != ValueKind::kBool) {
            error = p.IsError() ? p : NoOverload(ctx_, n, "_?_:_", std::span<const Value>(&p, 1));
            continue;
          }
          if (!ctx_.Charge(p.b ? 2 : 1)) return ctx_.CancelledError();
          matches += p.b ? 1 : 0;
        }
        if (!ctx_.Charge(2)) return ctx_.CancelledError();
        if (error) return *error;
        return Value::Bool(matches == 1);
      }
      case ComprehensionKind::kMap:
      case ComprehensionKind::kMapFilter:
      case ComprehensionKind::kFilter: {
        if (!ctx_.Charge(kListCreateCost)) return ctx_.CancelledError();
        auto* list = ctx_.NewList();
        for (int64_t i = 0; i < count; ++i) {
          var = element(i);
          bool keep = true;
          if (n.comprehension != ComprehensionKind::kMap) {
            const Value p = Eval(body);
            if (cancelled()) return ctx_.CancelledError();
            if (p.IsError()) return p;
            if (p.kind != ValueKind::kBool) return NoOverload(ctx_, n, "_?_:_", std::span<const Value>(&p, 1));
            keep = p.b;
          }
          if (!keep) {
            if (!ctx_.Charge(1)) return ctx_.CancelledError();
            continue;
          }
          Value item = var;
          if (n.comprehension == ComprehensionKind::kFilter) {
            if (!ctx_.Charge(1)) return ctx_.CancelledError();  // the variable in [x]
          } else {
            item = Eval(n.comprehension == ComprehensionKind::kMap ? body : *n.children[2]);
            if (cancelled()) return ctx_.CancelledError();
            if (item.IsError()) return item;
          }
          // __result__ + [item]: the accumulator, a list literal and the concatenation.
          if (!ctx_.Charge(1 + kListCreateCost + 1)) return ctx_.CancelledError();
          list->push_back(item);
        }
        if (!ctx_.Charge(1)) return ctx_.CancelledError();
        return Value::List(list);
      }
    }
    return ctx_.Error("unknown comprehension", n.offset);
  }

  EvalContext& ctx_;
};

}  // namespace

Value Eval(const Node& node, EvalContext& ctx) { return Evaluator(ctx).Eval(node); }

}  // namespace kubesched::cel
