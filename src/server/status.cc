#include "server/status.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fmt/format.h>

namespace kubesched::server {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, std::string_view key) { w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size())); }
void String(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Member(Writer& w, std::string_view key, std::string_view value) {
  Key(w, key);
  String(w, value);
}

// details is omitted when it would be empty, as upstream's omitempty fields leave it.
void WriteDetails(Writer& w, const StatusDetails& d, const std::vector<store::Cause>& causes, int retry_after) {
  if (d.name.empty() && d.group.empty() && d.kind.empty() && d.uid.empty() && causes.empty() && retry_after <= 0) {
    return;
  }
  Key(w, "details");
  w.StartObject();
  if (!d.name.empty()) Member(w, "name", d.name);
  if (!d.group.empty()) Member(w, "group", d.group);
  if (!d.kind.empty()) Member(w, "kind", d.kind);
  if (!d.uid.empty()) Member(w, "uid", d.uid);
  if (!causes.empty()) {
    Key(w, "causes");
    w.StartArray();
    for (const store::Cause& c : causes) {
      w.StartObject();
      if (!c.reason.empty()) Member(w, "reason", c.reason);
      if (!c.message.empty()) Member(w, "message", c.message);
      if (!c.field.empty()) Member(w, "field", c.field);
      w.EndObject();
    }
    w.EndArray();
  }
  if (retry_after > 0) {
    Key(w, "retryAfterSeconds");
    w.Int(retry_after);
  }
  w.EndObject();
}

std::string CausesText(const std::vector<store::Cause>& causes) {
  // field.ErrorList.ToAggregate(): one error alone, several in brackets.
  std::vector<std::string> parts;
  for (const store::Cause& c : causes) {
    parts.push_back(c.field.empty() ? c.message : fmt::format("{}: {}", c.field, c.message));
  }
  if (parts.size() == 1) return parts.front();
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

}  // namespace

std::string QualifiedResource(std::string_view group, std::string_view resource) {
  return group.empty() ? std::string(resource) : fmt::format("{}.{}", resource, group);
}

namespace {

// A metav1.Status body: a failure carries its message and reason, a success neither; code 0 is
// left out.
std::string EncodeStatusBody(std::string_view status, const std::string* message, std::string_view reason,
                             const StatusDetails& details, const std::vector<store::Cause>& causes,
                             int retry_after_seconds, int code) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  Member(w, "kind", "Status");
  Member(w, "apiVersion", "v1");
  Key(w, "metadata");
  w.StartObject();
  w.EndObject();
  Member(w, "status", status);
  if (message != nullptr) Member(w, "message", *message);
  if (!reason.empty()) Member(w, "reason", reason);
  WriteDetails(w, details, causes, retry_after_seconds);
  if (code != 0) {
    Key(w, "code");
    w.Int(code);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

std::string EncodeStatus(const ApiError& e) {
  return EncodeStatusBody("Failure", &e.message, e.reason, e.details, e.causes, e.retry_after_seconds, e.code);
}

std::string EncodeSuccessStatus(const StatusDetails& details, int code) {
  return EncodeStatusBody("Success", nullptr, "", details, {}, 0, code);
}

ApiError FromStoreError(const store::Error& error, const ErrorSubject& s) {
  if (error.reason == store::Error::Reason::kInvalid) {
    ApiError e = Invalid(s.group, s.kind, s.name, error.causes);
    if (!error.message.empty()) e.message = error.message;
    return e;
  }
  ApiError e;
  e.code = error.HttpCode();
  e.reason = std::string(error.ReasonString());
  e.message = error.message;
  e.details = {.name = std::string(s.name), .group = std::string(s.group), .kind = std::string(s.resource)};
  e.causes = error.causes;
  const std::string qualified = QualifiedResource(s.group, s.resource);
  if (e.message.empty()) {
    switch (error.reason) {
      case store::Error::Reason::kNotFound:
        e.message = fmt::format("{} \"{}\" not found", qualified, s.name);
        break;
      case store::Error::Reason::kAlreadyExists:
        e.message = fmt::format("{} \"{}\" already exists", qualified, s.name);
        break;
      case store::Error::Reason::kConflict:
        e.message = fmt::format(
            "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to "
            "the latest version and try again",
            qualified, s.name);
        break;
      default:
        e.message = e.reason;
        break;
    }
  }
  // Upstream's eviction refusal asks the client to come back (kubectl drain retries every 5 s).
  if (error.reason == store::Error::Reason::kTooManyRequests) e.retry_after_seconds = 10;
  return e;
}

ApiError BadRequest(std::string message) {
  return ApiError{.code = 400, .reason = "BadRequest", .message = std::move(message)};
}

ApiError NotFound(std::string_view group, std::string_view resource, std::string_view name) {
  return ApiError{.code = 404,
                  .reason = "NotFound",
                  .message = fmt::format("{} \"{}\" not found", QualifiedResource(group, resource), name),
                  .details = {.name = std::string(name), .group = std::string(group), .kind = std::string(resource)}};
}

ApiError PathNotFound() {
  return ApiError{.code = 404, .reason = "NotFound", .message = "the server could not find the requested resource"};
}

ApiError MethodNotAllowed(std::string_view verb, std::string_view group, std::string_view resource) {
  return ApiError{.code = 405,
                  .reason = "MethodNotAllowed",
                  .message = fmt::format("the server does not allow this method on the requested resource ({} on {})",
                                         verb, QualifiedResource(group, resource)),
                  .details = {.group = std::string(group), .kind = std::string(resource)}};
}

ApiError NotAcceptable(std::string_view accept) {
  return ApiError{.code = 406,
                  .reason = "NotAcceptable",
                  .message = fmt::format("only the following media types are accepted: application/json, "
                                         "application/json;as=Table;v=v1;g=meta.k8s.io (Accept: {})",
                                         accept)};
}

ApiError RequestEntityTooLarge(size_t limit_bytes) {
  return ApiError{.code = 413,
                  .reason = "RequestEntityTooLarge",
                  .message = fmt::format("the request body is larger than the limit of {} bytes", limit_bytes)};
}

ApiError UnsupportedMediaType(std::string_view content_type, std::string_view accepted) {
  return ApiError{.code = 415,
                  .reason = "UnsupportedMediaType",
                  .message = fmt::format("the body of the request was in an unknown format ({}) - accepted media types "
                                         "include: {}",
                                         content_type.empty() ? "no Content-Type" : content_type, accepted)};
}

ApiError Invalid(std::string_view group, std::string_view kind, std::string_view name,
                 std::vector<store::Cause> causes) {
  std::string qualified_kind = group.empty() ? std::string(kind) : fmt::format("{}.{}", kind, group);
  std::string message = causes.empty()
                            ? fmt::format("{} \"{}\" is invalid", qualified_kind, name)
                            : fmt::format("{} \"{}\" is invalid: {}", qualified_kind, name, CausesText(causes));
  return ApiError{.code = 422,
                  .reason = "Invalid",
                  .message = std::move(message),
                  .details = {.name = std::string(name), .group = std::string(group), .kind = std::string(kind)},
                  .causes = std::move(causes)};
}

ApiError InternalError(std::string message) {
  return ApiError{
      .code = 500, .reason = "InternalError", .message = fmt::format("Internal error occurred: {}", message)};
}

ApiError ServiceUnavailable(std::string message) {
  return ApiError{.code = 503, .reason = "ServiceUnavailable", .message = std::move(message)};
}

}  // namespace kubesched::server
