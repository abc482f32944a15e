#include "cel/types.h"

namespace kubesched::cel {

Type Type::List(Type element) {
  Type t(TypeKind::kList);
  t.params_ = std::make_shared<const std::vector<Type>>(std::vector<Type>{std::move(element)});
  return t;
}

Type Type::Map(Type key, Type value) {
  Type t(TypeKind::kMap);
  t.params_ = std::make_shared<const std::vector<Type>>(std::vector<Type>{std::move(key), std::move(value)});
  return t;
}

std::string Type::String() const {
  switch (kind_) {
    case TypeKind::kDyn:
      return "dyn";
    case TypeKind::kAny:
      return "any";
    case TypeKind::kNull:
      return "null_type";
    case TypeKind::kBool:
      return "bool";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kUint:
      return "uint";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kString:
      return "string";
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kList:
      return "list(" + Element().String() + ")";
    case TypeKind::kMap:
      return "map(" + Key().String() + ", " + MapValue().String() + ")";
    case TypeKind::kQuantity:
      return "kubernetes.Quantity";
    case TypeKind::kSemver:
      return "kubernetes.Semver";
    case TypeKind::kDevice:
      return "kubernetes.DRADevice";
  }
  return "dyn";
}

bool Type::operator==(const Type& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == TypeKind::kList) return Element() == other.Element();
  if (kind_ == TypeKind::kMap) return Key() == other.Key() && MapValue() == other.MapValue();
  return true;
}

bool IsAssignable(const Type& to, const Type& from) {
  if (to.IsDynLike() || from.IsDynLike()) return true;
  if (to.kind() != from.kind()) return false;
  if (to.kind() == TypeKind::kList) return IsAssignable(to.Element(), from.Element());
  if (to.kind() == TypeKind::kMap)
    return IsAssignable(to.Key(), from.Key()) && IsAssignable(to.MapValue(), from.MapValue());
  return true;
}

Type AttributesType() {
  static const Type t = Type::Map(Type(TypeKind::kString), Type::Map(Type(TypeKind::kString), Type(TypeKind::kAny)));
  return t;
}

Type CapacityType() {
  static const Type t =
      Type::Map(Type(TypeKind::kString), Type::Map(Type(TypeKind::kString), Type(TypeKind::kQuantity)));
  return t;
}

}  // namespace kubesched::cel
