#include "store/errors.h"

#include <fmt/format.h>

namespace kubesched::store {

int Error::HttpCode() const {
  switch (reason) {
    case Reason::kBadRequest:
      return 400;
    case Reason::kForbidden:
      return 403;
    case Reason::kNotFound:
      return 404;
    case Reason::kMethodNotAllowed:
      return 405;
    case Reason::kAlreadyExists:
    case Reason::kConflict:
      return 409;
    case Reason::kGone:
      return 410;
    case Reason::kRequestEntityTooLarge:
      return 413;
    case Reason::kInvalid:
      return 422;
    case Reason::kTooManyRequests:
      return 429;
    case Reason::kInternal:
      return 500;
    case Reason::kTimeout:
      return 504;
  }
  return 500;
}

std::string_view Error::ReasonString() const {
  switch (reason) {
    case Reason::kBadRequest:
      return "BadRequest";
    case Reason::kForbidden:
      return "Forbidden";
    case Reason::kNotFound:
      return "NotFound";
    case Reason::kMethodNotAllowed:
      return "MethodNotAllowed";
    case Reason::kAlreadyExists:
      return "AlreadyExists";
    case Reason::kConflict:
      return "Conflict";
    case Reason::kGone:
      // Upstream's NewResourceExpired / NewTooOldResourceVersionError: 410 with reason Expired.
      return "Expired";
    case Reason::kRequestEntityTooLarge:
      return "RequestEntityTooLarge";
    case Reason::kInvalid:
      return "Invalid";
    case Reason::kTooManyRequests:
      return "TooManyRequests";
    case Reason::kInternal:
      return "InternalError";
    case Reason::kTimeout:
      return "Timeout";
  }
  return "InternalError";
}

std::string_view ToString(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
    case EventType::kBookmark:
      return "BOOKMARK";
  }
  return "ERROR";
}

std::optional<PatchType> PatchTypeFromContentType(std::string_view content_type) {
  // Parameters (";charset=utf-8") do not change the type.
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  if (content_type == "application/json-patch+json") return PatchType::kJsonPatch;
  if (content_type == "application/merge-patch+json") return PatchType::kMergePatch;
  if (content_type == "application/strategic-merge-patch+json") return PatchType::kStrategicMergePatch;
  return std::nullopt;
}

bool ResourceType::HasSubresource(std::string_view name) const {
  for (const auto& s : subresources) {
    if (s == name) return true;
  }
  return false;
}

std::string QualifiedResource(const ResourceType& type) {
  return type.group.empty() ? type.resource : type.resource + "." + type.group;
}

Error NotFound(const ResourceType& type, std::string_view name) {
  return Error{Error::Reason::kNotFound, fmt::format("{} \"{}\" not found", QualifiedResource(type), name), {}};
}

Error AlreadyExists(const ResourceType& type, std::string_view name) {
  return Error{
      Error::Reason::kAlreadyExists, fmt::format("{} \"{}\" already exists", QualifiedResource(type), name), {}};
}

Error Conflict(const ResourceType& type, std::string_view name, std::string_view why) {
  return Error{Error::Reason::kConflict,
               fmt::format("Operation cannot be fulfilled on {} \"{}\": {}", QualifiedResource(type), name, why),
               {}};
}

Error StaleConflict(const ResourceType& type, std::string_view name) {
  return Conflict(type, name,
                  "the object has been modified; please apply your changes to the latest version and try again");
}

Error Invalid(const ResourceType& type, std::string_view name, std::vector<Cause> causes) {
  // utilerrors.NewAggregate's Error(): one error bare, several in brackets.
  std::string list;
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) list += ", ";
    list += causes[i].field.empty() ? causes[i].message : causes[i].field + ": " + causes[i].message;
  }
  if (causes.size() > 1) list = "[" + list + "]";
  return Error{Error::Reason::kInvalid, fmt::format("{} \"{}\" is invalid: {}", type.kind, name, list),
               std::move(causes)};
}

Error Forbidden(const ResourceType& type, std::string_view name, std::string_view why) {
  return Error{
      Error::Reason::kForbidden, fmt::format("{} \"{}\" is forbidden: {}", QualifiedResource(type), name, why), {}};
}

Error BadRequest(std::string message) { return Error{Error::Reason::kBadRequest, std::move(message), {}}; }

Error Internal(std::string message) { return Error{Error::Reason::kInternal, std::move(message), {}}; }

Error TooOldResourceVersion(uint64_t requested, uint64_t oldest) {
  return Error{Error::Reason::kGone, fmt::format("too old resource version: {} ({})", requested, oldest), {}};
}

Cause RequiredCause(std::string field, std::string_view detail) {
  return Cause{"FieldValueRequired", detail.empty() ? "Required value" : fmt::format("Required value: {}", detail),
               std::move(field)};
}

Cause InvalidCause(std::string field, std::string_view value, std::string_view detail) {
  return Cause{"FieldValueInvalid", fmt::format("Invalid value: \"{}\": {}", value, detail), std::move(field)};
}

Cause ForbiddenCause(std::string field, std::string_view detail) {
  return Cause{"FieldValueForbidden", fmt::format("Forbidden: {}", detail), std::move(field)};
}

}  // namespace kubesched::store
