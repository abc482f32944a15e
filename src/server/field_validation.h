#pragma once
// Server-side field validation (?fieldValidation=Strict|Warn|Ignore): unknown and duplicate
// fields in a request body, reported as upstream's API server reports them. The schema check is
// the codec's (api::CheckFields over the JSON DOM, duplicate keys kept as parsed).

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "api/yaml.h"
#include "server/status.h"
#include "store/store.h"

namespace kubesched::server {

enum class FieldValidation { kIgnore, kWarn, kStrict };

//! Reads ?fieldValidation= ("" means Warn, upstream's default since 1.27); 400 for another value.
std::expected<FieldValidation, ApiError> ParseFieldValidation(std::string_view value);

//! One problem: "unknown field \"spec.foo\"", "duplicate field \"spec.replicas\"".
struct FieldProblem {
  //! kType: a value of another type than its field's, refused whatever the mode.
  enum class Kind { kUnknown, kDuplicate, kType };
  Kind kind = Kind::kUnknown;
  std::string path;
  std::string text;
  api::yaml::SourcePath at;  //!< the member's key in the checked body
};

//! The schema check over a decoded body of `type`'s kind. `patch`: the body is a merge or
//! strategic merge patch (keys starting with '$' are patch directives, null deletes a field), so
//! only unknown and duplicate fields count. Kinds without a schema yield nothing; custom
//! resources yield the fields their CRD's schema does not declare (whole objects only; `at` empty).
std::vector<FieldProblem> CheckObjectFields(const store::ResourceType& type, const api::json::Value& body, bool patch);

//! Applies `mode` to the problems: a value of the wrong type fails in every mode with upstream's
//! 400 (`<Kind> in version "<v>" cannot be handled as a <Kind>: spec.replicas: expected an
//! integer, got the string "6"`); for the rest Strict fails with upstream's 400 (`... strict
//! decoding error: unknown field "spec.foo", ...`), Warn returns them as Warning header texts and
//! Ignore returns nothing.
std::expected<std::vector<std::string>, ApiError> ApplyFieldValidation(FieldValidation mode, std::string_view kind,
                                                                       std::string_view version,
                                                                       const std::vector<FieldProblem>& problems);

//! What upstream's decoder does with the fields it does not strictly refuse: unknown fields are
//! dropped, and of duplicate keys the last one wins. `problems` must come from CheckObjectFields
//! over `body` itself (not a patch).
void DropUnknownAndDuplicateFields(api::json::Value& body, api::json::Allocator& alloc,
                                   const std::vector<FieldProblem>& problems);

//! A Warning header's value for `text`: `299 - "<text>"` (RFC 7234, as upstream sends them).
std::string WarningHeader(std::string_view text);

}  // namespace kubesched::server
