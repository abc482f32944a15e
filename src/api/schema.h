#pragma once
// The field schema of the kinds kubesched reads (Node, Pod, Namespace, PriorityClass,
// PodDisruptionBudget, Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job,
// CronJob): every field of each object, including the many the scheduler never uses, so manifests
// can be checked as kubectl's --validate=strict checks them (unknown fields, duplicate keys).
// The schema is data (schema.cc): each type a list of fields and their types.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "api/yaml.h"

namespace kubesched::api {

//! One problem the schema check found.
struct FieldIssue {
  std::string path;     //!< "spec.template.spec.nodeSelectr"
  std::string message;  //!< "unknown field (did you mean \"nodeSelector\"?)", "duplicate field", ...
  int line = 0;         //!< 1-based line in the source, 0 when unknown (the loader finds it from `at`)
  yaml::SourcePath at;  //!< where the issue is, from the checked object (its key for unknown and duplicate fields)
  //! Unknown and duplicate fields follow the field validation mode (strict, warn, ignore); a value
  //! of the wrong type is an error whatever the mode, as the API server cannot decode it.
  enum class Kind : uint8_t { kUnknownField, kDuplicateField, kType };
  Kind kind = Kind::kType;
};

//! Whether the schema describes this kind.
bool HasFieldSchema(std::string_view kind);

//! Checks an object of `kind` against the schema and appends, in document order, one issue per
//! unknown field, duplicate key, and value of another type than its field's (a mapping, list or
//! scalar where the schema has another shape; a string where an integer belongs, ...).
//! Fields typed `any` (free-form, as x-kubernetes-preserve-unknown-fields) are not looked into.
//! `prefix` is the object's own path ("items[2]" inside a List, else ""). Kinds without a schema
//! are not checked. Never throws; recursion is bounded by json::kMaxDepth.
void CheckFields(const json::Value& object, std::string_view kind, std::string_view prefix,
                 std::vector<FieldIssue>& issues, const yaml::ScalarTexts* texts = nullptr);

//! Problems in the schema data itself (unknown type names, malformed lines); empty when sound.
//! For tests.
std::vector<std::string> FieldSchemaProblems();

}  // namespace kubesched::api
