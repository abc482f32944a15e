#pragma once
// The store's errors with upstream's wording (k8s.io/apimachinery/pkg/api/errors), so a client
// reading a message or a reason cannot tell the store from a real API server.

#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace kubesched::store {

//! "pods", "deployments.apps": how upstream names a resource in messages.
std::string QualifiedResource(const ResourceType& type);

//! 404 `pods "x" not found`.
Error NotFound(const ResourceType& type, std::string_view name);
//! 409 AlreadyExists `pods "x" already exists`.
Error AlreadyExists(const ResourceType& type, std::string_view name);
//! 409 Conflict `Operation cannot be fulfilled on pods "x": <why>`.
Error Conflict(const ResourceType& type, std::string_view name, std::string_view why);
//! 409 Conflict for a stale resourceVersion: `... the object has been modified; please apply
//! your changes to the latest version and try again`.
Error StaleConflict(const ResourceType& type, std::string_view name);
//! 422 `Pod "x" is invalid: <cause>` or `... is invalid: [<cause>, <cause>]`.
Error Invalid(const ResourceType& type, std::string_view name, std::vector<Cause> causes);
//! 403 `pods "x" is forbidden: <why>`.
Error Forbidden(const ResourceType& type, std::string_view name, std::string_view why);
Error BadRequest(std::string message);
Error Internal(std::string message);
//! 410 Expired `too old resource version: X (Y)`.
Error TooOldResourceVersion(uint64_t requested, uint64_t oldest);

//! Causes for field.Required / field.Invalid / field.NotSupported / field.Forbidden, with
//! upstream's message bodies (`Invalid value: "x": detail`).
Cause RequiredCause(std::string field, std::string_view detail = {});
Cause InvalidCause(std::string field, std::string_view value, std::string_view detail);
Cause ForbiddenCause(std::string field, std::string_view detail);

}  // namespace kubesched::store
