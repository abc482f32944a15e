#pragma once
// What the API server (apiextensions-apiserver) does to a custom resource with its CRD version's
// schema.openAPIV3Schema before storing it: prune the fields the schema does not declare
// (pkg/apiserver/schema/pruning), drop the nulls the schema does not allow (defaulting's
// PruneNonNullableNullsWithoutDefaults), then validate what is left with kube-openapi's validator
// and report its errors as the server words them (pkg/apiserver/validation's
// kubeOpenAPIResultToFieldErrors), plus the x-kubernetes-list-type set and map uniqueness checks.
//
// Both the schema and the object come from users: nothing here trusts either's shape, and every
// walk stops at json::kMaxDepth.

#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"

namespace kubesched::api {

//! One problem with a custom resource, as a metav1.StatusCause: reason is one of field_error.h's
//! kFieldValue* ("FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported",
//! "FieldValueTypeInvalid", "FieldValueTooLong", "FieldValueDuplicate") or "FieldValueTooMany".
struct SchemaViolation {
  std::string reason;
  std::string field;    //!< "spec.list[2].name"; empty for anyOf/oneOf/allOf/not, as upstream reports them
  std::string message;  //!< the cause's message (field.Error's ErrorBody): "Required value", ...
  bool operator==(const SchemaViolation&) const = default;
};

struct StructuralCheck {
  std::vector<std::string>
      pruned;  //!< paths of the unknown fields removed ("spec.foo", "spec.list[1].bar"), sorted as upstream's
  std::vector<SchemaViolation> violations;  //!< in document order
};

//! Prunes `object` (a whole custom resource: apiVersion, kind, metadata, spec, ...) in place to
//! what `schema` (a CRD version's openAPIV3Schema) declares, then validates it against the schema.
//! apiVersion, kind and metadata at the root are never pruned (metadata is coerced elsewhere).
//! Defaults are not applied and x-kubernetes-validations (CEL) rules are not evaluated. Never
//! throws; a schema that is not an object prunes everything but the root's metadata fields.
StructuralCheck PruneAndValidate(json::Value& object, json::Allocator& allocator, const json::Value& schema);

//! Problems that make `schema` unusable as a structural schema (for the CRD's own validation),
//! each "<path>: <message>" as the API server words them: a non-object schema, a `type` that is
//! not one of object/array/string/integer/number/boolean, keywords of the wrong JSON type,
//! unsupported keywords ($ref, patternProperties, ...), a missing `type` or `items`, type or
//! extensions inside allOf/anyOf/oneOf/not, malformed x-kubernetes-* extensions. `path` is the
//! schema's own ("spec.versions[0].schema.openAPIV3Schema"). Empty when usable.
std::vector<std::string> StructuralSchemaProblems(const json::Value& schema, std::string_view path);

}  // namespace kubesched::api
