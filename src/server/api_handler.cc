#include "server/api_handler.h"
#include "server/object_io.h"

#include <algorithm>

#include <fmt/format.h>

#include "server/json_writer.h"
#include "server/media_type.h"

namespace kubesched::server {

HttpResponse ErrorResponse(const ApiError& error) {
  HttpResponse r = JsonResponse(error.code, EncodeStatus(error));
  if (error.retry_after_seconds > 0) r.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
  return r;
}

HttpResponse JsonResponse(int status, std::string body, std::string content_type) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

ApiHandler::ApiHandler(store::Store& store, ApiHandlerOptions options) : store_(store), options_(std::move(options)) {}

std::shared_ptr<const ApiHandler::ApiDocuments> ApiHandler::Documents() const {
  const uint64_t generation = store_.ServedResourcesGeneration();
  std::lock_guard lock(documents_mu_);
  if (!documents_ || documents_->generation != generation) {
    documents_ = std::make_shared<const ApiDocuments>(generation, store_.ServedResources());
  }
  return documents_;
}

HttpResponse ApiHandler::Handle(const HttpRequest& request) {
  if (stopping_.load()) return ErrorResponse(ServiceUnavailable("the server is shutting down"));
  if (request.body.size() > options_.max_body_bytes)
    return ErrorResponse(RequestEntityTooLarge(options_.max_body_bytes));
  bool handled = false;
  HttpResponse response = HandleNonResource(request, handled);
  if (handled) return response;
  auto info = ParseRequestInfo(request.method, request.path,
                               request.HasQuery("watch") ? std::optional(request.Query("watch")) : std::nullopt);
  if (!info) return ErrorResponse(info.error());
  if (info->kind != PathKind::kResource) return HandleDiscovery(request, *info);
  return HandleResource(request, *info);
}

HttpResponse ApiHandler::Refused(int status, std::string_view detail) const {
  ApiError e;
  switch (status) {
    case 413:
      e = RequestEntityTooLarge(options_.max_body_bytes);
      break;
    case 404:
      e = PathNotFound();
      break;
    case 405:
      e = MethodNotAllowed("this method", "", "");
      break;
    case 500:
      e = InternalError(std::string(detail));
      break;
    case 429:
      e = ApiError{.code = 429, .reason = "TooManyRequests", .message = std::string(detail), .retry_after_seconds = 1};
      break;
    case 503:
      e = ServiceUnavailable(std::string(detail));
      break;
    case 431:
      e = ApiError{.code = 431, .reason = "RequestHeaderFieldsTooLarge", .message = std::string(detail)};
      break;
    default:
      e = BadRequest(detail.empty() ? std::string("malformed HTTP request") : std::string(detail));
      break;
  }
  e.code = status;
  HttpResponse r;
  r.status = status;
  r.body = EncodeStatus(e);
  return r;
}

HttpResponse ApiHandler::HandleNonResource(const HttpRequest& request, bool& handled) {
  handled = true;
  const std::string& path = request.path;
  const bool read = request.method == "GET" || request.method == "HEAD";
  if (path == "/healthz" || path == "/livez" || path == "/readyz" || path.starts_with("/healthz/") ||
      path.starts_with("/livez/") || path.starts_with("/readyz/")) {
    if (!read) return ErrorResponse(MethodNotAllowed(request.method, "", ""));
    return JsonResponse(200, "ok", "text/plain; charset=utf-8");
  }
  if (path == "/version" || path == "/version/") {
    if (!read) return ErrorResponse(MethodNotAllowed(request.method, "", ""));
    return JsonResponse(200, Discovery::Version());
  }
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    if (!read) return ErrorResponse(MethodNotAllowed(request.method, "", ""));
    return JsonResponse(200, Documents()->openapi.Index());
  }
  if (path.starts_with("/openapi/v3/")) {
    if (!read) return ErrorResponse(MethodNotAllowed(request.method, "", ""));
    std::optional<std::string> doc =
        Documents()->openapi.Document(std::string_view(path).substr(std::string_view("/openapi/v3/").size()));
    if (!doc) return ErrorResponse(PathNotFound());
    return JsonResponse(200, std::move(*doc));
  }
  if (path == "/" || path.empty()) {
    JsonWriter w;
    w.StartObject();
    w.Key("paths");
    w.StartArray();
    std::vector<std::string> paths = {"/api", "/api/v1", "/apis"};
    for (const std::string& gv : Documents()->discovery.GroupVersions()) {
      if (gv.find('/') == std::string::npos) continue;
      paths.push_back("/apis/" + gv.substr(0, gv.find('/')));
      paths.push_back("/apis/" + gv);
    }
    for (std::string_view p : {"/healthz", "/livez", "/openapi/v3", "/readyz", "/version"}) paths.emplace_back(p);
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    for (const std::string& p : paths) w.String(p);
    w.EndArray();
    w.EndObject();
    return JsonResponse(200, w.Take());
  }
  handled = false;
  return {};
}

HttpResponse ApiHandler::HandleDiscovery(const HttpRequest& request, const RequestInfo& info) {
  if (request.method != "GET" && request.method != "HEAD") {
    return ErrorResponse(MethodNotAllowed(request.method, info.group, ""));
  }
  const std::shared_ptr<const ApiDocuments> documents = Documents();
  const Discovery& discovery = documents->discovery;
  switch (info.kind) {
    case PathKind::kLegacyRoot:
    case PathKind::kGroupsRoot: {
      const bool core = info.kind == PathKind::kLegacyRoot;
      DiscoveryOutput out = NegotiateDiscovery(request.accept);
      if (out.format != DiscoveryFormat::kLegacy) {
        return JsonResponse(200, discovery.Aggregated(core, out.format), out.content_type);
      }
      return JsonResponse(200, core ? discovery.LegacyRoot(options_.server_address) : discovery.GroupList());
    }
    case PathKind::kGroup: {
      std::optional<std::string> doc = discovery.Group(info.group);
      if (!doc) return ErrorResponse(PathNotFound());
      return JsonResponse(200, std::move(*doc));
    }
    case PathKind::kGroupVersion: {
      std::optional<std::string> doc = discovery.ResourceList(info.group, info.version);
      if (!doc) return ErrorResponse(PathNotFound());
      return JsonResponse(200, std::move(*doc));
    }
    case PathKind::kResource:
      break;
  }
  return ErrorResponse(PathNotFound());
}

AccessSubject ApiHandler::Requester(const HttpRequest& request) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (std::string_view auth = request.authorization; auth.starts_with(kBearer)) {
    auth.remove_prefix(kBearer.size());
    for (const StaticToken& t : options_.tokens) {
      if (t.token != auth) continue;
      AccessSubject who{t.user, t.groups};
      who.groups.emplace_back("system:authenticated");
      return who;
    }
  }
  return AccessSubject{"system:anonymous", {"system:unauthenticated"}};
}

HttpResponse ApiHandler::HandleResource(const HttpRequest& request, const RequestInfo& info) {
  if (info.group.empty() && info.version == "v1" && info.resource == "bindings") return Bindings(request, info);
  // Reviews for components that delegate authentication and authorization to the test bed
  // (server/access_review.h): create-only, cluster-scoped, answered and not stored.
  for (const store::ResourceType* review : ReviewResources()) {
    if (review->group != info.group || review->resource != info.resource || review->version != info.version) continue;
    if (info.namespaced_path != review->namespaced || !info.name.empty() || !info.subresource.empty()) {
      return ErrorResponse(PathNotFound());
    }
    if (info.verb != Verb::kCreate)
      return ErrorResponse(MethodNotAllowed(VerbName(info.verb), info.group, info.resource));
    // A body of another media type (kubectl auth can-i's protobuf) or kind is refused as for any object.
    if (auto body = DecodeObjectBody(request, *review); !body) return ErrorResponse(body.error());
    std::expected<std::string, std::string> answer;
    if (info.resource == "tokenreviews") {
      answer = ReviewToken(options_.tokens, request.body);
    } else if (info.resource == "subjectaccessreviews") {
      answer = ReviewAccess(store_, request.body);
    } else if (info.resource == "localsubjectaccessreviews") {
      answer = ReviewLocalAccess(store_, info.namespace_, request.body);
    } else {
      answer = ReviewSelf(info.resource, Requester(request), request.body);
    }
    if (!answer) return ErrorResponse(BadRequest(answer.error()));
    return JsonResponse(201, std::move(*answer));
  }
  const store::ResourceType* type = store_.FindServedResource(info.group, info.version, info.resource);
  if (type == nullptr) return ErrorResponse(PathNotFound());
  // A cluster-scoped resource has no namespaced path; a namespaced one is reached without a
  // namespace only to list or watch across every namespace.
  if (info.namespaced_path && !type->namespaced) return ErrorResponse(PathNotFound());
  if (type->namespaced && !info.namespaced_path) {
    if (!info.name.empty()) return ErrorResponse(PathNotFound());
    if (info.verb != Verb::kList && info.verb != Verb::kWatch) {
      return ErrorResponse(MethodNotAllowed(VerbName(info.verb), type->group, type->resource));
    }
  }
  if (!info.subresource.empty() &&
      std::ranges::find(type->subresources, info.subresource) == type->subresources.end()) {
    return ErrorResponse(PathNotFound());
  }
  Target target{info, *type, type->namespaced ? info.namespace_ : std::string()};

  if (info.subresource.empty()) {
    switch (info.verb) {
      case Verb::kGet:
        return Get(request, target);
      case Verb::kList:
        return List(request, target);
      case Verb::kWatch:
        return Watch(request, target);
      case Verb::kCreate:
        return Create(request, target);
      case Verb::kUpdate:
        return Update(request, target);
      case Verb::kPatch:
        return Patch(request, target);
      case Verb::kDelete:
        return Delete(request, target);
      case Verb::kDeleteCollection:
        return DeleteCollection(request, target);
    }
  }
  const std::string& sub = info.subresource;
  if (sub == "log" || sub == "exec" || sub == "attach" || sub == "portforward" || sub == "proxy") {
    // Upstream proxies these to the pod's kubelet; the test bed runs no containers.
    return ErrorResponse(BadRequest(fmt::format(
        "pods \"{}\": kubesched's API test bed has no kubelet and runs no containers, so there is nothing to {} "
        "(logs, exec, attach, port-forward and proxy are not available)",
        info.name,
        sub == "log"           ? "read logs from"
        : sub == "portforward" ? "forward ports to"
                               : sub)));
  }
  if (sub == "binding" && info.verb == Verb::kCreate) return Binding(request, target);
  if (sub == "eviction" && info.verb == Verb::kCreate) return Eviction(request, target);
  if (sub == "scale" && (info.verb == Verb::kGet || info.verb == Verb::kUpdate || info.verb == Verb::kPatch)) {
    return Scale(request, target);
  }
  if (sub != "binding" && sub != "eviction" && sub != "scale") {
    // status and the like: the object itself, read and written through the subresource.
    if (info.verb == Verb::kGet) return Get(request, target);
    if (info.verb == Verb::kUpdate) return Update(request, target);
    if (info.verb == Verb::kPatch) return Patch(request, target);
  }
  return ErrorResponse(MethodNotAllowed(VerbName(info.verb), type->group, type->resource + "/" + sub));
}

}  // namespace kubesched::server
