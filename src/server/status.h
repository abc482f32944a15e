#pragma once
// metav1.Status: the body of every error the API test bed returns, as the API server builds it
// (k8s.io/apimachinery/pkg/api/errors). kubectl prints `Error from server (<reason>): <message>`
// from it, and for Invalid rebuilds "The <kind> "<name>" is invalid: ..." from details.causes, so
// the reason, code and details must match upstream's for each case.

#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace kubesched::server {

//! What a Status's details name: the object (or the resource, when there is no object).
struct StatusDetails {
  std::string name{};
  std::string group{};
  //! The resource ("pods") for most errors, the Kind ("Pod") for Invalid, as upstream.
  std::string kind{};
  std::string uid{};  //!< set on the Status a deletion returns
};

//! A failed request: the HTTP code, the Status reason and message, and details.
struct ApiError {
  int code = 500;
  std::string reason{};  //!< "NotFound", "AlreadyExists", "Conflict", "Invalid", "BadRequest", ...
  std::string message{};
  StatusDetails details{};
  std::vector<store::Cause> causes{};
  //! Sent as a Retry-After header and details.retryAfterSeconds (429), when > 0.
  int retry_after_seconds = 0;
};

//! The Status JSON for `error`.
std::string EncodeStatus(const ApiError& error);
//! The Status JSON of a success without an object (a deletion, a binding); `code` is included
//! when non-zero.
std::string EncodeSuccessStatus(const StatusDetails& details, int code = 0);

//! The object a request was about, for the details of its errors.
struct ErrorSubject {
  std::string_view group{};
  std::string_view resource{};  //!< "pods"
  std::string_view kind{};      //!< "Pod"
  std::string_view name{};
};

//! A store error as a Status: the store's message when it gives one, else upstream's wording;
//! details name the resource (the Kind for Invalid, as upstream).
ApiError FromStoreError(const store::Error& error, const ErrorSubject& subject);

//! 400 BadRequest with `message`.
ApiError BadRequest(std::string message);
//! 404 NotFound `<resource>[.<group>] "<name>" not found`.
ApiError NotFound(std::string_view group, std::string_view resource, std::string_view name);
//! 404 NotFound for a path that names no resource ("the server could not find the requested
//! resource", as upstream's NotFound handler).
ApiError PathNotFound();
//! 405 MethodNotAllowed for `verb` on `resource`.
ApiError MethodNotAllowed(std::string_view verb, std::string_view group, std::string_view resource);
//! 406 NotAcceptable: none of the Accept header's media types can be produced.
ApiError NotAcceptable(std::string_view accept);
//! 413 RequestEntityTooLarge.
ApiError RequestEntityTooLarge(size_t limit_bytes);
//! 415 UnsupportedMediaType for a body of `content_type`.
ApiError UnsupportedMediaType(std::string_view content_type, std::string_view accepted);
//! 422 Invalid `<Kind> "<name>" is invalid: <field>: <message>, ...` with the causes.
ApiError Invalid(std::string_view group, std::string_view kind, std::string_view name,
                 std::vector<store::Cause> causes);
//! 500 InternalError.
ApiError InternalError(std::string message);
//! 503 ServiceUnavailable (the server is shutting down).
ApiError ServiceUnavailable(std::string message);

//! "pods" or "deployments.apps": how upstream names a resource in messages.
std::string QualifiedResource(std::string_view group, std::string_view resource);

}  // namespace kubesched::server
