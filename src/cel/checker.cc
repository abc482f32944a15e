#include "cel/checker.h"

#include <re2/re2.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cel/functions.h"

namespace kubesched::cel {
namespace {

Type T(TypeKind k) { return Type(k); }

std::string Signature(const std::vector<const Node*>& args, bool member) {
  std::string out;
  size_t first = 0;
  if (member && !args.empty()) {
    out = args[0]->type.String() + ".";
    first = 1;
  }
  out += "(";
  for (size_t i = first; i < args.size(); ++i) {
    if (i > first) out += ", ";
    out += args[i]->type.String();
  }
  return out + ")";
}

// A select or index chain rooted at an identifier is one cel-go attribute: the identifier costs 1
// and each qualifier 1. Qualifying anything else costs 1 more (a relative attribute).
bool IsAttribute(const Node& n) {
  if (n.kind == NodeKind::kIdent) return true;
  if ((n.kind == NodeKind::kSelect && !n.test_only) || n.kind == NodeKind::kIndex) return IsAttribute(*n.children[0]);
  return false;
}

struct Signature2 {
  TypeKind lhs;
  TypeKind rhs;
  TypeKind result;
};

class Checker {
 public:
  CheckResult Run(Node& root) {
    Visit(root);
    CheckResult r;
    r.error = std::move(error_);
    r.slots = max_slots_;
    return r;
  }

 private:
  bool Fail(size_t offset, std::string message) {
    if (!error_) error_ = CheckError{std::move(message), offset};
    return false;
  }

  bool NoOverload(const Node& n, const std::string& name) {
    std::vector<const Node*> args;
    for (const auto& c : n.children) args.push_back(c.get());
    return Fail(n.offset,
                "found no matching overload for '" + name + "' applied to '" + Signature(args, n.member) + "'");
  }

  bool Visit(Node& n) {
    switch (n.kind) {
      case NodeKind::kConst:
        return VisitConst(n);
      case NodeKind::kIdent:
        return VisitIdent(n);
      case NodeKind::kSelect:
        return VisitSelect(n);
      case NodeKind::kIndex:
        return VisitIndex(n);
      case NodeKind::kCall:
        return VisitCall(n);
      case NodeKind::kList:
        return VisitList(n);
      case NodeKind::kMap:
        return VisitMap(n);
      case NodeKind::kComprehension:
        return VisitComprehension(n);
      case NodeKind::kBind:
        return VisitBind(n);
    }
    return false;
  }

  bool VisitConst(Node& n) {
    n.cost = 0;
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, bool>) {
            n.type = T(TypeKind::kBool);
            n.value = Value::Bool(v);
          } else if constexpr (std::is_same_v<V, int64_t>) {
            n.type = T(TypeKind::kInt);
            n.value = Value::Int(v);
          } else if constexpr (std::is_same_v<V, uint64_t>) {
            n.type = T(TypeKind::kUint);
            n.value = Value::Uint(v);
          } else if constexpr (std::is_same_v<V, double>) {
            n.type = T(TypeKind::kDouble);
            n.value = Value::Double(v);
          } else if constexpr (std::is_same_v<V, std::string>) {
            n.type = T(TypeKind::kString);
            n.value = Value::String(v);
          } else if constexpr (std::is_same_v<V, Bytes>) {
            n.type = T(TypeKind::kBytes);
            n.value = Value::BytesOf(v.data);
          } else {
            n.type = T(TypeKind::kNull);
            n.value = Value::Null();
          }
        },
        n.constant);
    return true;
  }

  bool VisitIdent(Node& n) {
    n.cost = 1;
    const bool root = n.name.starts_with('.');
    const std::string name = root ? n.name.substr(1) : n.name;
    if (!root) {
      for (size_t i = scope_.size(); i-- > 0;) {
        if (scope_[i].first == name) {
          n.slot = static_cast<int>(i);
          n.type = scope_[i].second;
          return true;
        }
      }
    }
    if (name == "device") {
      n.type = T(TypeKind::kDevice);
      return true;
    }
    return Fail(n.offset, "undeclared reference to '" + name + "' (in container '')");
  }

  bool VisitSelect(Node& n) {
    Node& operand = *n.children[0];
    if (!Visit(operand)) return false;
    n.cost = n.test_only ? 0 : (IsAttribute(operand) ? 1 : 2);
    const Type& t = operand.type;
    Type result;
    switch (t.kind()) {
      case TypeKind::kDevice:
        if (n.name == "driver") {
          result = T(TypeKind::kString);
          n.op = Op::kDeviceDriver;
        } else if (n.name == "attributes") {
          result = AttributesType();
          n.op = Op::kDeviceAttributes;
        } else if (n.name == "capacity") {
          result = CapacityType();
          n.op = Op::kDeviceCapacity;
        } else if (n.name == "allowMultipleAllocations") {
          result = T(TypeKind::kBool);
          n.op = Op::kDeviceAllowMultipleAllocations;
        } else {
          return Fail(n.offset, "undefined field '" + n.name + "'");
        }
        break;
      case TypeKind::kMap:
        if (!IsAssignable(t.Key(), T(TypeKind::kString))) {
          return Fail(n.offset, "type '" + t.String() + "' does not support field selection");
        }
        result = t.MapValue();
        break;
      case TypeKind::kDyn:
      case TypeKind::kAny:
        result = T(TypeKind::kDyn);
        break;
      case TypeKind::kQuantity:
      case TypeKind::kSemver:
        return Fail(n.offset, "undefined field '" + n.name + "'");
      default:
        return Fail(n.offset, "type '" + t.String() + "' does not support field selection");
    }
    n.type = n.test_only ? T(TypeKind::kBool) : result;
    return true;
  }

  bool VisitIndex(Node& n) {
    if (!Visit(*n.children[0]) || !Visit(*n.children[1])) return false;
    n.cost = IsAttribute(*n.children[0]) ? 1 : 2;
    n.op = Op::kIndex;
    const Type& t = n.children[0]->type;
    const Type& key = n.children[1]->type;
    if (t.kind() == TypeKind::kList && IsAssignable(T(TypeKind::kInt), key)) {
      n.type = t.Element();
      return true;
    }
    if (t.kind() == TypeKind::kMap && IsAssignable(t.Key(), key)) {
      n.type = t.MapValue();
      return true;
    }
    if (t.IsDynLike()) {
      n.type = T(TypeKind::kDyn);
      return true;
    }
    return NoOverload(n, "_[_]");
  }

  // The element type of an aggregate literal, which must be homogeneous (Kubernetes' base
  // environment: cel.HomogeneousAggregateLiterals).
  bool Homogeneous(const std::vector<const Node*>& items, Type& out) {
    std::optional<Type> first;
    for (const Node* item : items) {
      if (item->type.IsDynLike()) continue;
      if (!first) {
        first = item->type;
      } else if (!(item->type == *first)) {
        return Fail(item->offset, "expected type '" + first->String() + "' but found '" + item->type.String() + "'");
      }
    }
    out = first.value_or(T(TypeKind::kDyn));
    return true;
  }

  bool VisitList(Node& n) {
    n.cost = 10;  // cel-go's ListCreateBaseCost
    std::vector<const Node*> items;
    for (auto& c : n.children) {
      if (!Visit(*c)) return false;
      items.push_back(c.get());
    }
    Type element;
    if (!Homogeneous(items, element)) return false;
    n.type = Type::List(element);
    return true;
  }

  bool VisitMap(Node& n) {
    n.cost = 30;  // cel-go's MapCreateBaseCost
    std::vector<const Node*> keys;
    std::vector<const Node*> values;
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (!Visit(*n.children[i])) return false;
      (i % 2 == 0 ? keys : values).push_back(n.children[i].get());
    }
    for (const Node* k : keys) {
      const TypeKind kind = k->type.kind();
      if (kind != TypeKind::kInt && kind != TypeKind::kUint && kind != TypeKind::kBool && kind != TypeKind::kString &&
          !k->type.IsDynLike()) {
        return Fail(k->offset, "unsupported map key type: " + k->type.String());
      }
    }
    Type key;
    Type value;
    if (!Homogeneous(keys, key) || !Homogeneous(values, value)) return false;
    n.type = Type::Map(key, value);
    return true;
  }

  int Push(const std::string& name, Type type) {
    scope_.emplace_back(name, std::move(type));
    max_slots_ = std::max(max_slots_, static_cast<int>(scope_.size()));
    return static_cast<int>(scope_.size()) - 1;
  }

  bool VisitComprehension(Node& n) {
    Node& range = *n.children[0];
    if (!Visit(range)) return false;
    Type var;
    switch (range.type.kind()) {
      case TypeKind::kList:
        var = range.type.Element();
        break;
      case TypeKind::kMap:
        var = range.type.Key();
        break;
      case TypeKind::kDyn:
      case TypeKind::kAny:
        var = T(TypeKind::kDyn);
        break;
      default:
        return Fail(range.offset, "expression of type '" + range.type.String() +
                                      "' cannot be range of a comprehension (must be list, map, or dynamic)");
    }
    n.slot = Push(n.name, var);
    bool ok = true;
    for (size_t i = 1; ok && i < n.children.size(); ++i) ok = Visit(*n.children[i]);
    scope_.pop_back();
    if (!ok) return false;
    const Type bool_type = T(TypeKind::kBool);
    const auto require_bool = [&](const Node& predicate, const char* op) {
      if (IsAssignable(bool_type, predicate.type)) return true;
      return Fail(predicate.offset, std::string("found no matching overload for '") + op + "' applied to '(bool, " +
                                        predicate.type.String() + ")'");
    };
    switch (n.comprehension) {
      case ComprehensionKind::kAll:
        if (!require_bool(*n.children[1], "_&&_")) return false;
        n.type = bool_type;
        break;
      case ComprehensionKind::kExists:
        if (!require_bool(*n.children[1], "_||_")) return false;
        n.type = bool_type;
        break;
      case ComprehensionKind::kExistsOne:
        if (!require_bool(*n.children[1], "_?_:_")) return false;
        n.type = bool_type;
        break;
      case ComprehensionKind::kMap:
        n.type = Type::List(n.children[1]->type);
        break;
      case ComprehensionKind::kMapFilter:
        if (!require_bool(*n.children[1], "_?_:_")) return false;
        n.type = Type::List(n.children[2]->type);
        break;
      case ComprehensionKind::kFilter:
        if (!require_bool(*n.children[1], "_?_:_")) return false;
        n.type = Type::List(var);
        break;
    }
    return true;
  }

  bool VisitBind(Node& n) {
    if (!Visit(*n.children[0])) return false;
    n.slot = Push(n.name, n.children[0]->type);
    const bool ok = Visit(*n.children[1]);
    scope_.pop_back();
    if (!ok) return false;
    n.type = n.children[1]->type;
    n.cost = 10;  // cel.bind iterates over an empty list literal
    return true;
  }

  // Resolves against (lhs, rhs) -> result candidates; the result type is the common result of
  // those that match, or dyn.
  bool ResolveBinary(Node& n, const std::vector<Signature2>& candidates) {
    const Type& a = n.children[0]->type;
    const Type& b = n.children[1]->type;
    std::optional<TypeKind> result;
    bool mixed = false;
    for (const auto& c : candidates) {
      if (!IsAssignable(T(c.lhs), a) || !IsAssignable(T(c.rhs), b)) continue;
      if (result && *result != c.result) mixed = true;
      result = c.result;
    }
    if (!result) return NoOverload(n, n.name);
    n.type = mixed ? T(TypeKind::kDyn) : T(*result);
    return true;
  }

  bool VisitOperator(Node& n) {
    const std::string& name = n.name;
    const auto arg = [&](size_t i) -> const Type& { return n.children[i]->type; };
    const Type bool_type = T(TypeKind::kBool);
    using K = TypeKind;
    if (name == "_&&_" || name == "_||_") {
      n.op = name == "_&&_" ? Op::kAnd : Op::kOr;
      if (!IsAssignable(bool_type, arg(0)) || !IsAssignable(bool_type, arg(1))) return NoOverload(n, name);
      n.type = bool_type;
      return true;
    }
    if (name == "!_") {
      n.op = Op::kNot;
      if (!IsAssignable(bool_type, arg(0))) return NoOverload(n, name);
      n.type = bool_type;
      return true;
    }
    if (name == "_?_:_") {
      n.op = Op::kConditional;
      if (!IsAssignable(bool_type, arg(0)) || !IsAssignable(arg(1), arg(2))) return NoOverload(n, name);
      n.type = arg(1) == arg(2) ? arg(1) : T(K::kDyn);
      return true;
    }
    if (name == "_==_" || name == "_!=_") {
      n.op = name == "_==_" ? Op::kEquals : Op::kNotEquals;
      if (!IsAssignable(arg(0), arg(1))) return NoOverload(n, name);
      n.type = bool_type;
      return true;
    }
    if (name == "_<_" || name == "_<=_" || name == "_>_" || name == "_>=_") {
      n.op = name == "_<_"    ? Op::kLess
             : name == "_<=_" ? Op::kLessEquals
             : name == "_>_"  ? Op::kGreater
                              : Op::kGreaterEquals;
      // Same-type comparisons, and across int, uint and double (cel.CrossTypeNumericComparisons).
      std::vector<Signature2> c;
      for (K k : {K::kBool, K::kString, K::kBytes}) c.push_back({k, k, K::kBool});
      for (K x : {K::kInt, K::kUint, K::kDouble}) {
        for (K y : {K::kInt, K::kUint, K::kDouble}) c.push_back({x, y, K::kBool});
      }
      return ResolveBinary(n, c);
    }
    if (name == "_+_") {
      n.op = Op::kAdd;
      if (arg(0).kind() == K::kList || arg(1).kind() == K::kList) {
        const Type& a = arg(0);
        const Type& b = arg(1);
        if (!(a.kind() == K::kList || a.IsDynLike()) || !(b.kind() == K::kList || b.IsDynLike()) ||
            !IsAssignable(a, b)) {
          return NoOverload(n, name);
        }
        if (a.kind() == K::kList && b.kind() == K::kList) {
          n.type = a.Element().IsDynLike() ? b : a;
        } else {
          n.type = a.kind() == K::kList ? a : b;
        }
        return true;
      }
      return ResolveBinary(n, {{K::kInt, K::kInt, K::kInt},
                               {K::kUint, K::kUint, K::kUint},
                               {K::kDouble, K::kDouble, K::kDouble},
                               {K::kString, K::kString, K::kString},
                               {K::kBytes, K::kBytes, K::kBytes}});
    }
    if (name == "_-_" || name == "_*_" || name == "_/_") {
      n.op = name == "_-_" ? Op::kSubtract : name == "_*_" ? Op::kMultiply : Op::kDivide;
      return ResolveBinary(
          n, {{K::kInt, K::kInt, K::kInt}, {K::kUint, K::kUint, K::kUint}, {K::kDouble, K::kDouble, K::kDouble}});
    }
    if (name == "_%_") {
      n.op = Op::kModulo;
      return ResolveBinary(n, {{K::kInt, K::kInt, K::kInt}, {K::kUint, K::kUint, K::kUint}});
    }
    if (name == "-_") {
      n.op = Op::kNegate;
      if (arg(0).kind() == K::kInt || arg(0).kind() == K::kDouble) {
        n.type = arg(0);
      } else if (arg(0).IsDynLike()) {
        n.type = T(K::kDyn);
      } else {
        return NoOverload(n, name);
      }
      return true;
    }
    if (name == "@in") {
      n.op = Op::kIn;
      const Type& c = arg(1);
      const bool ok = (c.kind() == K::kList && IsAssignable(c.Element(), arg(0))) ||
                      (c.kind() == K::kMap && IsAssignable(c.Key(), arg(0))) || c.IsDynLike();
      if (!ok) return NoOverload(n, name);
      n.type = bool_type;
      return true;
    }
    return false;
  }

  bool VisitCall(Node& n) {
    for (auto& c : n.children) {
      if (!Visit(*c)) return false;
    }
    n.cost = 0;  // a call's cost depends on its arguments; the evaluator adds it
    if (!n.member && (n.name.front() == '_' || n.name.front() == '!' || n.name.front() == '-' || n.name == "@in")) {
      return VisitOperator(n);
    }
    if (!n.member && n.name == "dyn" && n.children.size() == 1) {
      n.op = Op::kDyn;
      n.type = T(TypeKind::kDyn);
      return true;
    }
    if (!IsLibraryFunction(n.name) && n.name != "dyn") {
      return Fail(n.offset, "undeclared reference to '" + n.name + "' (in container '')");
    }
    std::vector<const Overload*> matched;
    for (const Overload& o : Library()) {
      if (o.function != n.name || o.member != n.member || o.params.size() != n.children.size()) continue;
      bool ok = true;
      for (size_t i = 0; ok && i < o.params.size(); ++i) ok = IsAssignable(o.params[i], n.children[i]->type);
      if (ok) matched.push_back(&o);
    }
    if (matched.empty()) return NoOverload(n, n.name);
    n.op = Op::kFunction;
    n.overloads = matched;
    n.type = matched[0]->result;
    for (const Overload* o : matched) {
      if (!(o->result == n.type)) n.type = T(TypeKind::kDyn);
    }
    return Fold(n);
  }

  // Work that depends only on constants, done once: parsing quantity("...") and semver("..."),
  // compiling constant regular expressions (an invalid one is a compile error, as cel-go's
  // ValidateRegexLiterals makes it in Kubernetes' environment).
  bool Fold(Node& n) {
    const auto constant_string = [&](size_t i) -> const std::string* {
      if (i >= n.children.size() || n.children[i]->kind != NodeKind::kConst) return nullptr;
      return std::get_if<std::string>(&n.children[i]->constant);
    };
    if (n.name == "quantity" && !n.member) {
      if (const auto* s = constant_string(0)) n.folded_quantity = QuantityValue::Parse(*s);
    } else if (n.name == "semver" && !n.member) {
      const std::string* s = constant_string(0);
      bool normalize = false;
      bool constant = s != nullptr;
      if (n.children.size() == 2) {
        const bool* b = n.children[1]->kind == NodeKind::kConst ? std::get_if<bool>(&n.children[1]->constant) : nullptr;
        constant = constant && b != nullptr;
        normalize = b && *b;
      }
      if (constant) {
        auto parsed = ParseSemver(*s, normalize);
        if (auto* v = std::get_if<api::SemVer>(&parsed))
          n.folded_semver = std::make_shared<const api::SemVer>(std::move(*v));
      }
    } else if (n.name == "matches" || n.name == "find" || n.name == "findAll") {
      if (const auto* pattern = constant_string(1)) {
        RE2::Options options;
        options.set_log_errors(false);
        auto re = std::make_shared<const RE2>(re2::StringPiece(pattern->data(), pattern->size()), options);
        if (!re->ok()) {
          return Fail(n.children[1]->offset, "invalid " + n.name + " argument: error parsing regexp: " + re->error());
        }
        n.regex = std::move(re);
      }
    }
    return true;
  }

  std::vector<std::pair<std::string, Type>> scope_;
  int max_slots_ = 0;
  std::optional<CheckError> error_;
};

}  // namespace

CheckResult Check(Node& root) { return Checker().Run(root); }

}  // namespace kubesched::cel
