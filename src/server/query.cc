#include "server/query.h"

#include <charconv>

#include <fmt/format.h>

#include "api/json.h"
#include "server/request_info.h"

namespace kubesched::server {
namespace {

std::expected<void, ApiError> CheckResourceVersionMatch(const std::string& rv, const std::string& match) {
  if (match.empty()) return {};
  if (match != "NotOlderThan" && match != "Exact") {
    return std::unexpected(BadRequest(fmt::format(
        "resourceVersionMatch: Unsupported value: \"{}\": supported values: \"Exact\", \"NotOlderThan\"", match)));
  }
  if (rv.empty()) {
    return std::unexpected(BadRequest(
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"));
  }
  if (match == "Exact" && rv == "0") {
    return std::unexpected(BadRequest(
        "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
  }
  return {};
}

// A boolean query parameter as upstream decodes it: absent is false, any value but "0"/"false" true.
bool QueryBool(const HttpRequest& request, std::string_view key) {
  return request.HasQuery(key) && IsTrue(request.Query(key));
}

std::expected<PropagationPolicy, ApiError> ParsePropagation(std::string_view v) {
  if (v.empty()) return PropagationPolicy::kDefault;
  if (v == "Orphan") return PropagationPolicy::kOrphan;
  if (v == "Background") return PropagationPolicy::kBackground;
  if (v == "Foreground") return PropagationPolicy::kForeground;
  return std::unexpected(BadRequest(fmt::format(
      "propagationPolicy: Unsupported value: \"{}\": supported values: \"Foreground\", \"Background\", \"Orphan\"",
      v)));
}

}  // namespace

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::expected<store::ListOptions, ApiError> ParseListOptions(const HttpRequest& request) {
  store::ListOptions o;
  o.selectors.label_selector = request.Query("labelSelector");
  o.selectors.field_selector = request.Query("fieldSelector");
  if (std::string_view limit = request.Query("limit"); !limit.empty()) {
    std::optional<int64_t> n = ParseInt(limit);
    if (!n || *n < 0)
      return std::unexpected(
          BadRequest(fmt::format("limit: Invalid value: \"{}\": must be a non-negative integer", limit)));
    o.limit = *n;
  }
  o.continue_token = request.Query("continue");
  o.resource_version = request.Query("resourceVersion");
  o.resource_version_match = request.Query("resourceVersionMatch");
  if (auto ok = CheckResourceVersionMatch(o.resource_version, o.resource_version_match); !ok) {
    return std::unexpected(ok.error());
  }
  if (!o.continue_token.empty() && !o.resource_version.empty() && o.resource_version != "0") {
    return std::unexpected(BadRequest("specifying resource version is not allowed when using continue"));
  }
  return o;
}

std::expected<WatchRequest, ApiError> ParseWatchRequest(const HttpRequest& request) {
  WatchRequest w;
  w.options.selectors.label_selector = request.Query("labelSelector");
  w.options.selectors.field_selector = request.Query("fieldSelector");
  w.options.resource_version = request.Query("resourceVersion");
  std::string match(request.Query("resourceVersionMatch"));
  const bool bookmarks = QueryBool(request, "allowWatchBookmarks");
  w.options.allow_bookmarks = bookmarks;
  const bool initial = QueryBool(request, "sendInitialEvents");
  w.options.send_initial_events = initial;
  if (request.HasQuery("sendInitialEvents")) {
    // Upstream's validation of the streaming list (WatchList): it is asked for with
    // resourceVersionMatch=NotOlderThan and bookmarks, which carry its end marker.
    if (match != "NotOlderThan") {
      return std::unexpected(BadRequest(
          "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (initial && !bookmarks) {
      return std::unexpected(
          BadRequest("allowWatchBookmarks: Forbidden: allowWatchBookmarks must be true when sendInitialEvents is set"));
    }
  } else if (!match.empty()) {
    return std::unexpected(
        BadRequest(fmt::format("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                               "sendInitialEvents is provided")));
  }
  if (std::string_view t = request.Query("timeoutSeconds"); !t.empty()) {
    std::optional<int64_t> n = ParseInt(t);
    if (!n || *n < 0)
      return std::unexpected(
          BadRequest(fmt::format("timeoutSeconds: Invalid value: \"{}\": must be a non-negative integer", t)));
    if (*n > 0) w.timeout = std::chrono::seconds(*n);
  }
  return w;
}

std::expected<bool, ApiError> ParseDryRun(const HttpRequest& request) {
  bool dry_run = false;
  auto [begin, end] = request.query.equal_range("dryRun");
  for (auto it = begin; it != end; ++it) {
    if (it->second != "All") {
      return std::unexpected(
          BadRequest(fmt::format("dryRun: Unsupported value: \"{}\": supported values: \"All\"", it->second)));
    }
    dry_run = true;
  }
  return dry_run;
}

std::expected<IncludeObject, ApiError> ParseIncludeObject(const HttpRequest& request) {
  std::string_view v = request.Query("includeObject");
  if (v.empty() || v == "Metadata") return IncludeObject::kMetadata;
  if (v == "None") return IncludeObject::kNone;
  if (v == "Object") return IncludeObject::kObject;
  return std::unexpected(BadRequest(fmt::format(
      "includeObject: Unsupported value: \"{}\": supported values: \"None\", \"Metadata\", \"Object\"", v)));
}

std::expected<DeleteRequest, ApiError> ParseDeleteRequest(const HttpRequest& request) {
  DeleteRequest d;
  auto dry_run = ParseDryRun(request);
  if (!dry_run) return std::unexpected(dry_run.error());
  d.dry_run = *dry_run;
  if (std::string_view g = request.Query("gracePeriodSeconds"); !g.empty()) {
    std::optional<int64_t> n = ParseInt(g);
    if (!n) return std::unexpected(BadRequest(fmt::format("gracePeriodSeconds: invalid value \"{}\"", g)));
    d.options.grace_period_seconds = *n;
  }
  auto policy = ParsePropagation(request.Query("propagationPolicy"));
  if (!policy) return std::unexpected(policy.error());
  d.propagation = *policy;
  if (QueryBool(request, "orphanDependents")) d.propagation = PropagationPolicy::kOrphan;

  std::string_view body = request.body;
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.front()))) body.remove_prefix(1);
  if (body.empty()) return d;
  api::json::Document doc;
  if (auto parsed = api::json::Parse(body, doc); !parsed) {
    return std::unexpected(BadRequest(
        fmt::format("the DeleteOptions in the request body are not valid JSON: {}", parsed.error().ToString())));
  }
  if (!doc.IsObject()) return std::unexpected(BadRequest("the request body must be a DeleteOptions object"));
  std::string_view kind = api::json::GetString(doc, "kind");
  if (!kind.empty() && kind != "DeleteOptions") {
    return std::unexpected(BadRequest(fmt::format("the request body is a {}, not DeleteOptions", kind)));
  }
  if (const api::json::Value* g = api::json::Find(doc, "gracePeriodSeconds"); g != nullptr && !g->IsNull()) {
    if (!g->IsInt64()) return std::unexpected(BadRequest("gracePeriodSeconds must be an integer"));
    d.options.grace_period_seconds = g->GetInt64();
  }
  if (const api::json::Value* p = api::json::Find(doc, "preconditions"); p != nullptr && p->IsObject()) {
    if (const api::json::Value* uid = api::json::Find(*p, "uid"); uid != nullptr && uid->IsString()) {
      d.options.precondition_uid = std::string(api::json::View(*uid));
    }
    if (const api::json::Value* rv = api::json::Find(*p, "resourceVersion"); rv != nullptr && rv->IsString()) {
      d.options.precondition_resource_version = std::string(api::json::View(*rv));
    }
  }
  if (std::string_view p = api::json::GetString(doc, "propagationPolicy"); !p.empty()) {
    auto parsed = ParsePropagation(p);
    if (!parsed) return std::unexpected(parsed.error());
    d.propagation = *parsed;
  }
  if (const api::json::Value* o = api::json::Find(doc, "orphanDependents");
      o != nullptr && o->IsBool() && o->GetBool()) {
    d.propagation = PropagationPolicy::kOrphan;
  }
  if (const api::json::Value* dr = api::json::Find(doc, "dryRun"); dr != nullptr && dr->IsArray()) {
    for (const api::json::Value& v : dr->GetArray()) {
      if (api::json::View(v) != "All") {
        return std::unexpected(BadRequest(
            fmt::format("dryRun: Unsupported value: \"{}\": supported values: \"All\"", api::json::View(v))));
      }
      d.dry_run = true;
    }
  }
  if (d.options.grace_period_seconds && *d.options.grace_period_seconds < 0) {
    // Upstream turns a negative grace period into 1 second (the force-delete path uses 0).
    d.options.grace_period_seconds = 1;
  }
  return d;
}

}  // namespace kubesched::server
