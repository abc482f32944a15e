#include "server/ui_handler.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "server/json_writer.h"
#include "server/manifest_objects.h"
#include "server/scenario.h"
#include "server/ui_assets.h"

namespace kubesched::server {
namespace {

// Only the page's own files: no inline script or style, nothing from another origin.
constexpr std::string_view kCsp = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void AddUiHeaders(HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", std::string(kCsp));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-cache");
}

HttpResponse UiJson(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  AddUiHeaders(r);
  return r;
}

// {"error": {"message": ..., "document": ..., "fields": [...], "reason": ...}} with `status`.
HttpResponse UiError(int status, std::string_view message, std::string_view document = "",
                     const std::vector<std::string>& fields = {}, std::string_view reason = "") {
  JsonWriter w;
  w.StartObject();
  w.Key("error");
  w.StartObject();
  w.Member("message", message);
  if (!document.empty()) w.Member("document", document);
  if (!reason.empty()) w.Member("reason", reason);
  if (!fields.empty()) {
    w.Key("fields");
    w.StartArray();
    for (const std::string& f : fields) w.String(f);
    w.EndArray();
  }
  w.EndObject();
  w.EndObject();
  return UiJson(status, w.Take());
}

// One pasted object, resolved to its REST path.
struct UiObject {
  std::string source;  // "manifest: document 2"
  const store::ResourceType* type = nullptr;
  std::string namespace_;  // "" for cluster-scoped
  std::string name;        // "" with generateName on create
  std::string collection;  // /api/v1/namespaces/default/pods
  std::string body;        // the object as JSON
};

const store::ResourceType* ServedKind(const store::Store& store, std::string_view api_version, std::string_view kind) {
  for (const store::ResourceType* t : store.ServedResources()) {
    if (t->GroupVersion() == api_version && t->kind == kind) return t;
  }
  return nullptr;
}

std::expected<UiObject, HttpResponse> Resolve(const store::Store& store, ManifestObject& o, bool remove) {
  UiObject u;
  u.source = o.source;
  u.type = ServedKind(store, o.api_version, o.kind);
  if (u.type == nullptr) {
    return std::unexpected(UiError(422,
                                   fmt::format("{} {} is not served by kubesched apiserver", o.api_version, o.kind),
                                   o.source, {"apiVersion", "kind"}, "Invalid"));
  }
  const api::json::Value* meta = api::json::Find(*o.json, "metadata");
  u.name = meta != nullptr ? std::string(api::json::GetString(*meta, "name")) : "";
  if (u.name.empty() && (remove || meta == nullptr || api::json::GetString(*meta, "generateName").empty())) {
    return std::unexpected(UiError(422, "metadata.name: Required value: name or generateName is required", o.source,
                                   {"metadata.name"}, "Invalid"));
  }
  const store::ResourceType& t = *u.type;
  u.collection = t.group.empty() ? "/api/" + t.version : "/apis/" + t.group + "/" + t.version;
  if (t.namespaced) {
    u.namespace_ = meta != nullptr ? std::string(api::json::GetString(*meta, "namespace")) : "";
    if (u.namespace_.empty()) u.namespace_ = "default";
    u.collection += "/namespaces/" + u.namespace_;
  }
  u.collection += "/" + t.resource;
  u.body = api::json::Encode(*o.json);
  return u;
}

// The API's answer to one object's create or delete (dry run or not).
HttpResponse Send(Handler& api, const UiObject& o, bool remove, bool dry_run) {
  HttpRequest r;
  r.method = remove ? "DELETE" : "POST";
  r.path = remove ? o.collection + "/" + o.name : o.collection;
  if (dry_run) r.query.emplace("dryRun", "All");
  r.accept = "application/json";
  r.content_type = "application/json";
  if (!remove) r.body = o.body;
  return api.Handle(r);
}

// A refused object as the UI's error: the Status's code (400/404/409/422), message and fields.
HttpResponse Refusal(const UiObject& o, const HttpResponse& answer) {
  api::json::Document status;
  std::string message = answer.body;
  std::string reason;
  std::vector<std::string> fields;
  if (api::json::Parse(answer.body, status) && status.IsObject()) {
    message = std::string(api::json::GetString(status, "message"));
    reason = std::string(api::json::GetString(status, "reason"));
    const api::json::Value* details = api::json::Find(status, "details");
    const api::json::Value* causes = details != nullptr ? api::json::Find(*details, "causes") : nullptr;
    if (causes != nullptr && causes->IsArray()) {
      for (const api::json::Value& c : causes->GetArray()) {
        if (c.IsObject() && !api::json::GetString(c, "field").empty()) {
          fields.emplace_back(api::json::GetString(c, "field"));
        }
      }
    }
  }
  const int code = answer.status >= 400 && answer.status < 500 ? answer.status : 422;
  return UiError(code, message, o.source, fields, reason);
}

// What the API stored: kind, namespace and name (the generated one with generateName).
void WriteDone(JsonWriter& w, const UiObject& o, const HttpResponse& answer) {
  std::string name = o.name;
  api::json::Document stored;
  if (name.empty() && api::json::Parse(answer.body, stored) && stored.IsObject()) {
    if (const api::json::Value* meta = api::json::Find(stored, "metadata")) {
      name = std::string(api::json::GetString(*meta, "name"));
    }
  }
  w.StartObject();
  w.Member("kind", o.type->kind);
  w.Member("apiVersion", o.type->GroupVersion());
  if (!o.namespace_.empty()) w.Member("namespace", o.namespace_);
  w.Member("name", name);
  w.Member("source", o.source);
  w.EndObject();
}

constexpr std::string_view kConfigurationNotApplied =
    "not applied: the running scheduler (kubesched run) keeps the configuration it was started with; "
    "kubesched simulate -f uses this one";
constexpr std::string_view kConfigurationNotDeleted = "not an object of the API: nothing to delete";

std::optional<HttpResponse> ServeAsset(const HttpRequest& request) {
  std::string_view name = std::string_view(request.path).substr(std::string_view("/ui/").size());
  if (name.empty()) name = "index.html";
  for (const UiAsset& a : UiAssets()) {
    if (a.name != name) continue;
    HttpResponse r;
    r.status = 200;
    r.content_type = std::string(a.content_type);
    r.body = std::string(a.body);
    AddUiHeaders(r);
    return r;
  }
  return std::nullopt;
}

}  // namespace

HttpResponse UiHandler::Handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (path == "/ui") {
    HttpResponse r = TextResponse(301, "moved to /ui/\n");
    r.headers.emplace_back("Location", "/ui/");
    return r;
  }
  if (!path.starts_with("/ui/")) return api_.Handle(request);
  if (path == "/ui/apply" || path == "/ui/delete") {
    if (request.method != "POST") {
      HttpResponse r = UiError(405, "use POST with the manifests as the body");
      r.headers.emplace_back("Allow", "POST");
      return r;
    }
    return ApplyManifests(request, path == "/ui/delete");
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse r = UiError(405, fmt::format("{} is not allowed on {}", request.method, path));
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (path == "/ui/scenario") return Scenario();
  if (std::optional<HttpResponse> asset = ServeAsset(request)) return std::move(*asset);
  return UiError(404, fmt::format("{} is not a file of the UI", path));
}

HttpResponse UiHandler::Scenario() const {
  HttpResponse r;
  r.status = 200;
  r.content_type = "application/yaml";
  r.body = BuildScenario(store_);
  r.headers.emplace_back("Content-Disposition", fmt::format("attachment; filename=\"{}\"", kScenarioFileName));
  AddUiHeaders(r);
  return r;
}

HttpResponse UiHandler::ApplyManifests(const HttpRequest& request, bool remove) {
  auto manifests = ManifestObjectsFromSources({api::ManifestSource{"manifest", request.body}}, !remove);
  if (!manifests) {
    // The loader's checks (as kubectl's before it sends anything): 422 for an invalid field, 409
    // for an object given twice, 400 for text that is no manifest.
    const ManifestProblem& p = manifests.error();
    const int code = p.field.empty() ? 400 : p.message.find(": duplicate ") != std::string::npos ? 409 : 422;
    return UiError(code, p.message, "", p.field.empty() ? std::vector<std::string>{} : std::vector{p.field},
                   code == 400   ? "BadRequest"
                   : code == 409 ? "AlreadyExists"
                                 : "Invalid");
  }
  // A scenario's configuration is not the running scheduler's business: `kubesched run` keeps the
  // one it was started with. Left out, and said so.
  auto configurations =
      std::stable_partition(manifests->objects.begin(), manifests->objects.end(), [](const ManifestObject& o) {
        return o.kind != "KubeSchedulerConfiguration" || !o.api_version.starts_with("kubescheduler.config.k8s.io/");
      });
  std::vector<ManifestObject> skipped(std::make_move_iterator(configurations),
                                      std::make_move_iterator(manifests->objects.end()));
  manifests->objects.erase(configurations, manifests->objects.end());
  if (manifests->objects.empty() && skipped.empty()) return UiError(400, "the manifests hold no object");
  // Namespaces first on create (their objects need them), last on delete.
  std::stable_partition(manifests->objects.begin(), manifests->objects.end(), [remove](const ManifestObject& o) {
    return (o.kind == "Namespace" && o.api_version == "v1") != remove;
  });
  std::vector<UiObject> objects;
  std::set<std::string> namespaces;  // created by these manifests
  std::set<std::string> seen;        // kind/namespace/name, to refuse the same object twice
  for (ManifestObject& m : manifests->objects) {
    auto o = Resolve(store_, m, remove);
    if (!o) return std::move(o.error());
    if (o->type->kind == "Namespace" && o->type->group.empty()) namespaces.insert(o->name);
    if (!o->name.empty() && !seen.insert(o->collection + "/" + o->name).second) {
      return UiError(409, fmt::format("{} \"{}\" appears more than once", o->type->resource, o->name), o->source, {},
                     "AlreadyExists");
    }
    objects.push_back(std::move(*o));
  }
  // Every object checked before any is written. An object in a namespace these manifests create
  // cannot be dry-run before the namespace exists: its create is checked when it is made.
  for (const UiObject& o : objects) {
    HttpResponse answer = Send(api_, o, remove, true);
    if (answer.status < 300) continue;
    if (!remove && answer.status == 404 && namespaces.contains(o.namespace_)) continue;
    return Refusal(o, answer);
  }
  JsonWriter w;
  w.StartObject();
  w.Key(remove ? "deleted" : "created");
  w.StartArray();
  for (const UiObject& o : objects) {
    HttpResponse answer = Send(api_, o, remove, false);
    if (answer.status >= 300) {
      // Only a race with another client gets here (the dry run passed).
      return Refusal(o, answer);
    }
    WriteDone(w, o, answer);
  }
  w.EndArray();
  if (!skipped.empty()) {
    w.Key("skipped");
    w.StartArray();
    for (const ManifestObject& o : skipped) {
      w.StartObject();
      w.Member("kind", o.kind);
      w.Member("apiVersion", o.api_version);
      w.Member("source", o.source);
      w.Member("reason", remove ? kConfigurationNotDeleted : kConfigurationNotApplied);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return UiJson(200, w.Take());
}

}  // namespace kubesched::server
