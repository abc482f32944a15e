#include "server/openapi.h"

#include <fmt/format.h>

#include "server/json_writer.h"

namespace kubesched::server {
namespace {

// Upstream's component names: io.k8s.api.<core|apps|policy|...>.<version>.<Kind>.
std::string SchemaName(const store::ResourceType& t) {
  std::string group = t.group.empty() ? "core" : t.group.substr(0, t.group.find('.'));
  return fmt::format("io.k8s.api.{}.{}.{}", group, t.version, t.kind);
}

// "CoreV1" / "AppsV1" / "SchedulingV1": the middle of upstream's operation ids.
std::string OperationGroup(const store::ResourceType& t) {
  std::string g = t.group.empty() ? "core" : t.group.substr(0, t.group.find('.'));
  g[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(g[0])));
  std::string v = t.version;
  v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
  return g + v;
}

void QueryParameter(JsonWriter& w, std::string_view name, std::string_view description, std::string_view type) {
  w.StartObject();
  w.Member("name", name);
  w.Member("in", "query");
  w.Member("description", description);
  w.Key("schema");
  w.StartObject();
  w.Member("type", type);
  w.MemberBool("uniqueItems", true);
  w.EndObject();
  w.EndObject();
}

void PathParameter(JsonWriter& w, std::string_view name, std::string_view description) {
  w.StartObject();
  w.Member("name", name);
  w.Member("in", "path");
  w.Member("description", description);
  w.MemberBool("required", true);
  w.Key("schema");
  w.StartObject();
  w.Member("type", "string");
  w.MemberBool("uniqueItems", true);
  w.EndObject();
  w.EndObject();
}

constexpr std::string_view kFieldValidation =
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing "
    "unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict";
constexpr std::string_view kDryRun =
    "When present, indicates that modifications should not be persisted. Valid values are: - All";

void Ref(JsonWriter& w, std::string_view schema) {
  w.Key("schema");
  w.StartObject();
  w.Member("$ref", fmt::format("#/components/schemas/{}", schema));
  w.EndObject();
}

void JsonContent(JsonWriter& w, std::string_view schema) {
  w.Key("content");
  w.StartObject();
  w.Key("application/json");
  w.StartObject();
  Ref(w, schema);
  w.EndObject();
  w.EndObject();
}

void Gvk(JsonWriter& w, const store::ResourceType& t, std::string_view kind) {
  w.Key("x-kubernetes-group-version-kind");
  w.StartObject();
  w.Member("group", t.group);
  w.Member("version", t.version);
  w.Member("kind", kind);
  w.EndObject();
}

// One operation. `body` names the request body's schema ("" for none); write operations list
// fieldValidation and dryRun.
void Operation(JsonWriter& w, const store::ResourceType& t, std::string_view method, std::string_view action,
               std::string_view op_id, std::string_view kind, std::string_view response_schema, bool write,
               bool patch) {
  w.Key(method);
  w.StartObject();
  w.Member("operationId", op_id);
  w.Key("parameters");
  w.StartArray();
  if (write) {
    QueryParameter(w, "dryRun", kDryRun, "string");
    QueryParameter(w, "fieldManager",
                   "fieldManager is a name associated with the actor or entity that is making these changes.",
                   "string");
    QueryParameter(w, "fieldValidation", kFieldValidation, "string");
  }
  w.EndArray();
  if (patch) {
    w.Key("requestBody");
    w.StartObject();
    w.Key("content");
    w.StartObject();
    for (std::string_view type :
         {"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}) {
      w.Key(type);
      w.StartObject();
      Ref(w, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch");
      w.EndObject();
    }
    w.EndObject();
    w.MemberBool("required", true);
    w.EndObject();
  } else if (write && method != "delete") {
    w.Key("requestBody");
    w.StartObject();
    JsonContent(w, response_schema);
    w.MemberBool("required", true);
    w.EndObject();
  }
  w.Key("responses");
  w.StartObject();
  w.Key("200");
  w.StartObject();
  w.Member("description", "OK");
  JsonContent(w, response_schema);
  w.EndObject();
  w.EndObject();
  w.Member("x-kubernetes-action", action);
  Gvk(w, t, kind);
  w.EndObject();
}

std::string PathPrefix(const store::ResourceType& t) {
  return t.group.empty() ? fmt::format("/api/{}", t.version) : fmt::format("/apis/{}/{}", t.group, t.version);
}

void ResourcePaths(JsonWriter& w, const store::ResourceType& t) {
  const std::string prefix = PathPrefix(t);
  const std::string scope = t.namespaced ? "/namespaces/{namespace}" : "";
  const std::string schema = SchemaName(t);
  const std::string list_schema = schema + "List";
  const std::string ns = t.namespaced ? "Namespaced" : "";
  const std::string og = OperationGroup(t);

  if (IsReview(t)) {
    // Create only.
    w.Key(fmt::format("{}{}/{}", prefix, scope, t.resource));
    w.StartObject();
    Operation(w, t, "post", "post", fmt::format("create{}{}{}", og, ns, t.kind), t.kind, schema, true, false);
    w.Key("parameters");
    w.StartArray();
    if (t.namespaced) PathParameter(w, "namespace", "object name and auth scope, such as for teams and projects");
    w.EndArray();
    w.EndObject();
    return;
  }
  // The collection: list, create, deletecollection.
  w.Key(fmt::format("{}{}/{}", prefix, scope, t.resource));
  w.StartObject();
  Operation(w, t, "get", "list", fmt::format("list{}{}{}", og, ns, t.kind), t.kind, list_schema, false, false);
  Operation(w, t, "post", "post", fmt::format("create{}{}{}", og, ns, t.kind), t.kind, schema, true, false);
  Operation(w, t, "delete", "deletecollection", fmt::format("deletecollection{}{}{}", og, ns, t.kind), t.kind,
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status", false, false);
  w.Key("parameters");
  w.StartArray();
  if (t.namespaced) PathParameter(w, "namespace", "object name and auth scope, such as for teams and projects");
  w.EndArray();
  w.EndObject();

  // One object: get, replace, patch, delete.
  w.Key(fmt::format("{}{}/{}/{{name}}", prefix, scope, t.resource));
  w.StartObject();
  Operation(w, t, "get", "get", fmt::format("read{}{}{}", og, ns, t.kind), t.kind, schema, false, false);
  Operation(w, t, "put", "put", fmt::format("replace{}{}{}", og, ns, t.kind), t.kind, schema, true, false);
  Operation(w, t, "patch", "patch", fmt::format("patch{}{}{}", og, ns, t.kind), t.kind, schema, true, true);
  Operation(w, t, "delete", "delete", fmt::format("delete{}{}{}", og, ns, t.kind), t.kind,
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status", true, false);
  w.Key("parameters");
  w.StartArray();
  PathParameter(w, "name", fmt::format("name of the {}", t.kind));
  if (t.namespaced) PathParameter(w, "namespace", "object name and auth scope, such as for teams and projects");
  w.EndArray();
  w.EndObject();

  // Subresources that read and write the object itself (status); scale, binding and eviction
  // carry other kinds and are left out, as kubectl never validates against them.
  for (const std::string& sub : t.subresources) {
    if (sub != "status") continue;
    w.Key(fmt::format("{}{}/{}/{{name}}/{}", prefix, scope, t.resource, sub));
    w.StartObject();
    Operation(w, t, "get", "get", fmt::format("read{}{}{}Status", og, ns, t.kind), t.kind, schema, false, false);
    Operation(w, t, "put", "put", fmt::format("replace{}{}{}Status", og, ns, t.kind), t.kind, schema, true, false);
    Operation(w, t, "patch", "patch", fmt::format("patch{}{}{}Status", og, ns, t.kind), t.kind, schema, true, true);
    w.EndObject();
  }
}

// The component schemas the operations refer to. Free-form objects, and no
// x-kubernetes-group-version-kind: see the header.
void Components(JsonWriter& w, const std::vector<const store::ResourceType*>& types) {
  w.Key("components");
  w.StartObject();
  w.Key("schemas");
  w.StartObject();
  auto object_schema = [&](std::string_view name, std::string_view description) {
    w.Key(name);
    w.StartObject();
    w.Member("description", description);
    w.Member("type", "object");
    w.MemberBool("x-kubernetes-preserve-unknown-fields", true);
    w.EndObject();
  };
  object_schema("io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
                "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.");
  object_schema("io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                "Status is a return value for calls that don't return other objects.");
  for (const store::ResourceType* t : types) {
    object_schema(SchemaName(*t), fmt::format("{} as kubesched stores it.", t->kind));
    object_schema(SchemaName(*t) + "List", fmt::format("{}List is a list of {}.", t->kind, t->kind));
  }
  w.EndObject();
  w.EndObject();
}

// FNV-1a, printed as upstream prints its SHA-512 hashes (upper-case hex): kubectl only compares
// it with the one it cached.
std::string Hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016X}", h);
}

}  // namespace

OpenApi::OpenApi(const Discovery& discovery) {
  for (const std::string& gv : discovery.GroupVersions()) {
    size_t slash = gv.find('/');
    std::string group = slash == std::string::npos ? "" : gv.substr(0, slash);
    std::string version = slash == std::string::npos ? gv : gv.substr(slash + 1);
    std::vector<const store::ResourceType*> types = discovery.ResourcesOf(group, version);
    JsonWriter w;
    w.StartObject();
    w.Member("openapi", "3.0.0");
    w.Key("info");
    w.StartObject();
    w.Member("title", "Kubernetes");
    w.Member("version", kGitVersion);
    w.EndObject();
    w.Key("paths");
    w.StartObject();
    for (const store::ResourceType* t : types) ResourcePaths(w, *t);
    w.EndObject();
    Components(w, types);
    w.EndObject();
    std::string path = group.empty() ? "api/" + version : fmt::format("apis/{}/{}", group, version);
    documents_.emplace_back(std::move(path), w.Take());
  }
  JsonWriter w;
  w.StartObject();
  w.Key("paths");
  w.StartObject();
  for (const auto& [path, doc] : documents_) {
    w.Key(path);
    w.StartObject();
    w.Member("serverRelativeURL", fmt::format("/openapi/v3/{}?hash={}", path, Hash(doc)));
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  index_ = w.Take();
}

std::optional<std::string> OpenApi::Document(std::string_view path) const {
  for (const auto& [p, doc] : documents_) {
    if (p == path) return doc;
  }
  return std::nullopt;
}

}  // namespace kubesched::server
