#pragma once
// A problem with one field of an object, as the API server reports it in a 422 Invalid Status's
// details.causes: the field path, the cause type (metav1.CauseType, the field.ErrorType of
// k8s.io/apimachinery/pkg/util/validation/field) and a message for people.

#include <string>
#include <string_view>
#include <vector>

namespace kubesched::api {

//! metav1.CauseType values (field.ErrorType's String() forms).
inline constexpr std::string_view kFieldValueNotFound = "FieldValueNotFound";
inline constexpr std::string_view kFieldValueRequired = "FieldValueRequired";
inline constexpr std::string_view kFieldValueDuplicate = "FieldValueDuplicate";
inline constexpr std::string_view kFieldValueInvalid = "FieldValueInvalid";
inline constexpr std::string_view kFieldValueNotSupported = "FieldValueNotSupported";
inline constexpr std::string_view kFieldValueForbidden = "FieldValueForbidden";
inline constexpr std::string_view kFieldValueTypeInvalid = "FieldValueTypeInvalid";
inline constexpr std::string_view kFieldValueTooLong = "FieldValueTooLong";
inline constexpr std::string_view kFieldValueTooMany = "FieldValueTooMany";

struct FieldError {
  std::string field;   //!< "spec.containers[0].resources.requests.cpu"; empty for the whole object
  std::string reason;  //!< one of the kField* constants
  std::string message;

  //! "spec.containers[0].resources.requests.cpu: invalid quantity ..." (the message alone when
  //! the field is empty).
  std::string ToString() const { return field.empty() ? message : field + ": " + message; }
  bool operator==(const FieldError&) const = default;
};

using FieldErrors = std::vector<FieldError>;

}  // namespace kubesched::api
