// The subresources that carry their own kinds: pods/binding (Binding), pods/eviction
// (policy/v1 Eviction) and */scale (autoscaling/v1 Scale). status goes through the object verbs.

#include <fmt/format.h>

#include "server/api_handler.h"
#include "server/json_writer.h"
#include "server/media_type.h"
#include "server/printers.h"
#include "server/query.h"
#include "store/errors.h"
#include "store/patch.h"

namespace kubesched::server {
namespace {

std::expected<api::json::Document, ApiError> DecodeJson(const HttpRequest& request, std::string_view what) {
  const std::string media = BaseMediaType(request.content_type);
  if (!media.empty() && media != "application/json") {
    return std::unexpected(UnsupportedMediaType(request.content_type, "application/json"));
  }
  api::json::Document doc;
  if (auto parsed = api::json::Parse(request.body, doc); !parsed) {
    return std::unexpected(
        BadRequest(fmt::format("the {} in the request body is not valid JSON: {}", what, parsed.error().ToString())));
  }
  if (!doc.IsObject()) return std::unexpected(BadRequest(fmt::format("the request body must be a {} object", what)));
  return doc;
}

ErrorSubject PodSubject(std::string_view name) {
  return {.group = "", .resource = "pods", .kind = "Pod", .name = name};
}

// labels.Selector.String() of a LabelSelector ("" for none), as Scale's status.selector.
std::string SelectorString(const api::json::Value& object) {
  const api::json::Value* spec = api::json::Find(object, "spec");
  const api::json::Value* selector = spec == nullptr ? nullptr : api::json::Find(*spec, "selector");
  std::string s = FormatLabelSelector(selector);
  return s == "<none>" ? "" : s;
}

int64_t IntAt(const api::json::Value& object, std::string_view a, std::string_view b, int64_t fallback) {
  const api::json::Value* x = api::json::Find(object, a);
  if (x != nullptr) x = api::json::Find(*x, b);
  return x != nullptr && x->IsInt64() ? x->GetInt64() : fallback;
}

// The autoscaling/v1 Scale of a deployment or replica set.
std::string ScaleOf(const store::Object& object) {
  api::json::Document doc;
  if (!api::json::Parse(object.json, doc)) doc.SetObject();
  const api::json::Value* meta = api::json::Find(doc, "metadata");
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "Scale");
  w.Member("apiVersion", "autoscaling/v1");
  w.Key("metadata");
  w.StartObject();
  w.Member("name", object.name);
  if (!object.namespace_.empty()) w.Member("namespace", object.namespace_);
  w.Member("uid", object.uid);
  w.Member("resourceVersion", std::to_string(object.resource_version));
  if (meta != nullptr) w.Member("creationTimestamp", api::json::GetString(*meta, "creationTimestamp"));
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.MemberInt("replicas", IntAt(doc, "spec", "replicas", 1));
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.MemberInt("replicas", IntAt(doc, "status", "replicas", 0));
  w.Member("selector", SelectorString(doc));
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace

HttpResponse ApiHandler::Binding(const HttpRequest& request, const Target& target) {
  auto body = DecodeJson(request, "Binding");
  if (!body) return ErrorResponse(body.error());
  const api::json::Value* meta = api::json::Find(*body, "metadata");
  std::string_view uid = meta != nullptr ? api::json::GetString(*meta, "uid") : std::string_view();
  std::string_view name = meta != nullptr ? api::json::GetString(*meta, "name") : std::string_view();
  if (!name.empty() && name != target.info.name) {
    return ErrorResponse(BadRequest(
        fmt::format("the name of the Binding ({}) does not match the pod on the URL ({})", name, target.info.name)));
  }
  const api::json::Value* t = api::json::Find(*body, "target");
  std::string_view node = t != nullptr ? api::json::GetString(*t, "name") : std::string_view();
  if (node.empty()) {
    return ErrorResponse(
        Invalid("", "Binding", target.info.name, {{"FieldValueRequired", "Required value", "target.name"}}));
  }
  auto bound = store_.Bind(target.namespace_, target.info.name, uid, node);
  if (!bound) return ErrorResponse(FromStoreError(bound.error(), PodSubject(target.info.name)));
  return JsonResponse(201, EncodeSuccessStatus({}, 201));
}

HttpResponse ApiHandler::Bindings(const HttpRequest& request, const RequestInfo& info) {
  const store::ResourceType* pods = store_.FindResource("", "pods");
  if (pods == nullptr || !info.namespaced_path || !info.name.empty()) return ErrorResponse(PathNotFound());
  if (info.verb != Verb::kCreate) return ErrorResponse(MethodNotAllowed(VerbName(info.verb), "", "bindings"));
  auto body = DecodeJson(request, "Binding");
  if (!body) return ErrorResponse(body.error());
  const api::json::Value* meta = api::json::Find(*body, "metadata");
  const std::string_view name = meta != nullptr ? api::json::GetString(*meta, "name") : std::string_view();
  if (name.empty()) {
    return ErrorResponse(Invalid("", "Binding", "", {{"FieldValueRequired", "Required value", "metadata.name"}}));
  }
  RequestInfo as_pod = info;
  as_pod.resource = "pods";
  as_pod.name = std::string(name);
  as_pod.subresource = "binding";
  return Binding(request, Target{as_pod, *pods, info.namespace_});
}

HttpResponse ApiHandler::Eviction(const HttpRequest& request, const Target& target) {
  auto body = DecodeJson(request, "Eviction");
  if (!body) return ErrorResponse(body.error());
  const api::json::Value* meta = api::json::Find(*body, "metadata");
  std::string_view name = meta != nullptr ? api::json::GetString(*meta, "name") : std::string_view();
  if (!name.empty() && name != target.info.name) {
    return ErrorResponse(BadRequest(fmt::format("name in URL does not match name in Eviction object")));
  }
  // The Eviction's deleteOptions, read as a DELETE's body.
  HttpRequest as_delete;
  if (const api::json::Value* opts = api::json::Find(*body, "deleteOptions"); opts != nullptr && opts->IsObject()) {
    as_delete.body = api::json::Encode(*opts);
  }
  auto del = ParseDeleteRequest(as_delete);
  if (!del) return ErrorResponse(del.error());
  auto evicted = store_.Evict(target.namespace_, target.info.name, del->options);
  if (!evicted) return ErrorResponse(FromStoreError(evicted.error(), PodSubject(target.info.name)));
  return JsonResponse(201, EncodeSuccessStatus({}, 201));
}

HttpResponse ApiHandler::Scale(const HttpRequest& request, const Target& target) {
  const ErrorSubject subject{
      .group = target.type.group, .resource = target.type.resource, .kind = target.type.kind, .name = target.info.name};
  auto current = store_.Get(target.type, target.namespace_, target.info.name);
  if (!current) return ErrorResponse(FromStoreError(current.error(), subject));
  if (target.info.verb == Verb::kGet) return JsonResponse(200, ScaleOf(**current));

  // The Scale asked for: the body (PUT) or the current Scale patched (PATCH).
  api::json::Document scale;
  if (target.info.verb == Verb::kUpdate) {
    auto body = DecodeJson(request, "Scale");
    if (!body) return ErrorResponse(body.error());
    scale = std::move(*body);
  } else {
    auto parsed = api::json::Parse(ScaleOf(**current), scale);
    if (!parsed) return ErrorResponse(InternalError("encoding the Scale"));
    const std::string media = BaseMediaType(request.content_type);
    store::PatchType type;
    if (media == "application/json-patch+json") {
      type = store::PatchType::kJsonPatch;
    } else if (media == "application/merge-patch+json") {
      type = store::PatchType::kMergePatch;
    } else if (media == "application/strategic-merge-patch+json") {
      type = store::PatchType::kStrategicMergePatch;
    } else {
      return ErrorResponse(UnsupportedMediaType(request.content_type,
                                                "application/json-patch+json, application/merge-patch+json, "
                                                "application/strategic-merge-patch+json"));
    }
    if (auto applied = store::ApplyPatch(type, scale, request.body); !applied) {
      return ErrorResponse(FromStoreError(applied.error(), subject));
    }
  }
  const api::json::Value* spec = api::json::Find(scale, "spec");
  const api::json::Value* replicas = spec != nullptr ? api::json::Find(*spec, "replicas") : nullptr;
  if (replicas == nullptr || !replicas->IsInt64() || replicas->GetInt64() < 0 || replicas->GetInt64() > INT32_MAX) {
    return ErrorResponse(Invalid("autoscaling", "Scale", target.info.name,
                                 {{"FieldValueInvalid", "must be greater than or equal to 0", "spec.replicas"}}));
  }
  // A resourceVersion in the Scale is a precondition on the object, as upstream's scale update.
  const api::json::Value* meta = api::json::Find(scale, "metadata");
  std::string_view rv = meta != nullptr ? api::json::GetString(*meta, "resourceVersion") : std::string_view();
  std::string patch = rv.empty() ? fmt::format(R"({{"spec":{{"replicas":{}}}}})", replicas->GetInt64())
                                 : fmt::format(R"({{"metadata":{{"resourceVersion":"{}"}},"spec":{{"replicas":{}}}}})",
                                               rv, replicas->GetInt64());
  if (!rv.empty() && rv != std::to_string((*current)->resource_version)) {
    return ErrorResponse(FromStoreError(store::StaleConflict(target.type, target.info.name), subject));
  }
  auto dry_run = ParseDryRun(request);
  if (!dry_run) return ErrorResponse(dry_run.error());
  if (*dry_run) return JsonResponse(200, ScaleOf(**current));
  auto patched =
      store_.Patch(target.type, target.namespace_, target.info.name, store::PatchType::kMergePatch, patch, "");
  if (!patched) return ErrorResponse(FromStoreError(patched.error(), subject));
  return JsonResponse(200, ScaleOf(**patched));
}

}  // namespace kubesched::server
