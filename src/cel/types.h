#pragma once
// The static types the checker gives expressions: CEL's primitive types, lists and maps, dyn (and
// its alias the unknown type `any` that device attribute values have), and the object types of the
// DRA environment (the device, Kubernetes' quantity and semver).

#include <memory>
#include <string>
#include <vector>

namespace kubesched::cel {

enum class TypeKind : uint8_t {
  kDyn,
  kAny,  // google.protobuf.Any: what an attribute value is declared as; checked like dyn
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kQuantity,
  kSemver,
  kDevice,
};

class Type {
 public:
  Type() = default;
  explicit Type(TypeKind kind) : kind_(kind) {}
  static Type List(Type element);
  static Type Map(Type key, Type value);

  TypeKind kind() const { return kind_; }
  //! dyn and any: anything may be assigned to or from them.
  bool IsDynLike() const { return kind_ == TypeKind::kDyn || kind_ == TypeKind::kAny; }
  const Type& Element() const { return (*params_)[0]; }   // list
  const Type& Key() const { return (*params_)[0]; }       // map
  const Type& MapValue() const { return (*params_)[1]; }  // map
  //! As cel-go prints types in messages: "int", "list(string)", "map(string, any)".
  std::string String() const;
  bool operator==(const Type& other) const;

 private:
  TypeKind kind_ = TypeKind::kDyn;
  std::shared_ptr<const std::vector<Type>> params_;
};

//! Whether a value of type `from` may be passed where `to` is expected (dyn matches anything).
bool IsAssignable(const Type& to, const Type& from);

//! The types of the DRA `device` variable's fields.
Type AttributesType();  // map(string, map(string, any))
Type CapacityType();    // map(string, map(string, kubernetes.Quantity))

}  // namespace kubesched::cel
