// The verbs on a resource's objects: get, list, watch, create, update, patch, delete and
// deletecollection (upstream's k8s.io/apiserver/pkg/endpoints/handlers).

#include <fmt/format.h>

#include "server/api_handler.h"
#include "server/dry_run.h"
#include "server/field_validation.h"
#include "server/object_io.h"
#include "server/printers.h"
#include "server/query.h"
#include "server/watch_stream.h"
#include "store/errors.h"

namespace kubesched::server {
namespace {

ErrorSubject Subject(const store::ResourceType& type, std::string_view name) {
  return ErrorSubject{.group = type.group, .resource = type.resource, .kind = type.kind, .name = name};
}

HttpResponse WithWarnings(HttpResponse response, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) response.headers.emplace_back("Warning", WarningHeader(w));
  return response;
}

// What the negotiated output and ?includeObject= give a Table.
struct Output {
  ObjectOutput object;
  TableOptions table;
};

std::expected<Output, ApiError> NegotiateOutput(const HttpRequest& request, bool list) {
  auto object = NegotiateObjectOutput(request.accept, list);
  if (!object) return std::unexpected(object.error());
  auto include = ParseIncludeObject(request);
  if (!include) return std::unexpected(include.error());
  Output out{*object, TableOptions{}};
  out.table.meta_version = object->meta_version.empty() ? "v1" : object->meta_version;
  out.table.include = *include;
  out.table.now_ns = UnixNowNs();
  return out;
}

// The fieldValidation outcome for a decoded patch: the warnings to send, or the Strict error.
std::expected<std::vector<std::string>, ApiError> ValidatePatchFields(const HttpRequest& request,
                                                                      const store::ResourceType& type,
                                                                      const api::json::Value& patch) {
  auto mode = ParseFieldValidation(request.Query("fieldValidation"));
  if (!mode) return std::unexpected(mode.error());
  if (*mode == FieldValidation::kIgnore) return std::vector<std::string>{};
  return ApplyFieldValidation(*mode, type.kind, type.version, CheckObjectFields(type, patch, true));
}

// The same for a whole object, which under Warn and Ignore then loses its unknown fields (and
// its duplicate keys but the last) as upstream's decoder drops them.
std::expected<std::vector<std::string>, ApiError> ValidateObjectFields(const HttpRequest& request,
                                                                       const store::ResourceType& type,
                                                                       api::json::Document& body) {
  auto mode = ParseFieldValidation(request.Query("fieldValidation"));
  if (!mode) return std::unexpected(mode.error());
  std::vector<FieldProblem> problems = CheckObjectFields(type, body, false);
  auto warnings = ApplyFieldValidation(*mode, type.kind, type.version, problems);
  if (warnings) DropUnknownAndDuplicateFields(body, body.GetAllocator(), problems);
  return warnings;
}

}  // namespace

HttpResponse ApiHandler::Get(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, false);
  if (!output) return ErrorResponse(output.error());
  auto object = store_.Get(target.type, target.namespace_, target.info.name);
  if (!object) return ErrorResponse(FromStoreError(object.error(), Subject(target.type, target.info.name)));
  return JsonResponse(200, EncodeObject(**object, target.type, output->object, output->table),
                      output->object.content_type);
}

HttpResponse ApiHandler::List(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, true);
  if (!output) return ErrorResponse(output.error());
  auto options = ParseListOptions(request);
  if (!options) return ErrorResponse(options.error());
  auto result = store_.List(target.type, target.namespace_, *options);
  if (!result) return ErrorResponse(FromStoreError(result.error(), Subject(target.type, "")));
  ListMeta meta{.resource_version = result->resource_version,
                .continue_token = result->continue_token,
                .remaining_item_count = result->remaining_item_count};
  return JsonResponse(200, EncodeList(result->items, meta, target.type, output->object, output->table),
                      output->object.content_type);
}

HttpResponse ApiHandler::Watch(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, false);
  if (!output) return ErrorResponse(output.error());
  auto watch = ParseWatchRequest(request);
  if (!watch) return ErrorResponse(watch.error());
  if (!target.info.name.empty()) {
    // A watch of one object (the /watch/ prefix with a name): a field selector on its name.
    std::string& fs = watch->options.selectors.field_selector;
    fs = fs.empty() ? "metadata.name=" + target.info.name : fs + ",metadata.name=" + target.info.name;
  }
  const auto deadline = std::chrono::steady_clock::now() + watch->timeout.value_or(options_.default_watch_timeout);
  auto watcher = store_.Watch(target.type, target.namespace_, watch->options);
  if (!watcher) {
    ApiError error = FromStoreError(watcher.error(), Subject(target.type, ""));
    if (watcher.error().reason != store::Error::Reason::kGone) return ErrorResponse(error);
    // As the API server's watch cache: a resourceVersion too old is reported inside a 200
    // stream, as one ERROR event (410 Expired), which reflectors answer by listing again.
    class OneEvent final : public ResponseStream {
     public:
      explicit OneEvent(std::string line) : line_(std::move(line)) {}
      std::optional<std::string> Next(std::chrono::milliseconds) override {
        if (sent_) return std::nullopt;
        sent_ = true;
        return line_;
      }

     private:
      std::string line_;
      bool sent_ = false;
    };
    error.reason = "Expired";
    HttpResponse r;
    r.content_type = output->object.content_type;
    r.stream = std::make_unique<OneEvent>(EncodeErrorEvent(error));
    return r;
  }
  HttpResponse r;
  r.content_type = output->object.content_type;
  r.stream = std::make_unique<WatchStream>(std::move(*watcher), target.type, output->object, output->table, deadline,
                                           stopping_);
  return r;
}

// The NamespaceLifecycle admission plugin on a create through the API: the namespace must exist
// (404 `namespaces "x" not found`). The test bed removes a deleted namespace at once, so its other
// check (no new content in a terminating namespace) has nothing to refuse. Writes the store makes
// itself (controllers, simulate's manifests) are not API requests and are not checked.
std::expected<void, ApiError> ApiHandler::AdmitNamespaceLifecycle(const Target& target) const {
  if (!target.type.namespaced) return {};
  const store::ResourceType* namespaces = store_.FindResource("", "namespaces");
  if (namespaces == nullptr) return {};
  auto ns = store_.Get(*namespaces, "", target.namespace_);
  if (!ns) return std::unexpected(FromStoreError(ns.error(), Subject(*namespaces, target.namespace_)));
  return {};
}

HttpResponse ApiHandler::Create(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, false);
  if (!output) return ErrorResponse(output.error());
  auto dry_run = ParseDryRun(request);
  if (!dry_run) return ErrorResponse(dry_run.error());
  auto body = DecodeObjectBody(request, target.type);
  if (!body) return ErrorResponse(body.error());
  auto warnings = ValidateObjectFields(request, target.type, *body);
  if (!warnings) return ErrorResponse(warnings.error());
  if (auto ok = CheckBodyIdentity(*body, target.type, target.namespace_, ""); !ok) return ErrorResponse(ok.error());
  if (auto ok = AdmitNamespaceLifecycle(target); !ok) return ErrorResponse(ok.error());
  const std::string name(BodyName(*body));

  store::Result<store::ObjectPtr> created = *dry_run
                                                ? DryRunCreate(store_, target.type, target.namespace_, std::move(*body))
                                                : store_.Create(target.type, target.namespace_, std::move(*body));
  if (!created) return ErrorResponse(FromStoreError(created.error(), Subject(target.type, name)));
  return WithWarnings(JsonResponse(201, EncodeObject(**created, target.type, output->object, output->table),
                                   output->object.content_type),
                      *warnings);
}

HttpResponse ApiHandler::Update(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, false);
  if (!output) return ErrorResponse(output.error());
  auto dry_run = ParseDryRun(request);
  if (!dry_run) return ErrorResponse(dry_run.error());
  auto body = DecodeObjectBody(request, target.type);
  if (!body) return ErrorResponse(body.error());
  auto warnings = ValidateObjectFields(request, target.type, *body);
  if (!warnings) return ErrorResponse(warnings.error());
  if (auto ok = CheckBodyIdentity(*body, target.type, target.namespace_, target.info.name); !ok) {
    return ErrorResponse(ok.error());
  }
  store::UpdateRequest update;
  update.subresource = target.info.subresource;
  store::Result<store::ObjectPtr> updated =
      *dry_run ? DryRunUpdate(store_, target.type, target.namespace_, target.info.name, std::move(*body), update)
               : store_.Update(target.type, target.namespace_, target.info.name, std::move(*body), update);
  if (!updated) return ErrorResponse(FromStoreError(updated.error(), Subject(target.type, target.info.name)));
  return WithWarnings(JsonResponse(200, EncodeObject(**updated, target.type, output->object, output->table),
                                   output->object.content_type),
                      *warnings);
}

HttpResponse ApiHandler::Patch(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, false);
  if (!output) return ErrorResponse(output.error());
  auto dry_run = ParseDryRun(request);
  if (!dry_run) return ErrorResponse(dry_run.error());
  const std::string media = BaseMediaType(request.content_type);
  store::PatchType patch_type;
  if (media == "application/json-patch+json") {
    patch_type = store::PatchType::kJsonPatch;
  } else if (media == "application/merge-patch+json") {
    patch_type = store::PatchType::kMergePatch;
  } else if (media == "application/strategic-merge-patch+json") {
    patch_type = store::PatchType::kStrategicMergePatch;
  } else if (media == "application/apply-patch+yaml" || media == "application/apply-patch+cbor") {
    ApiError e = UnsupportedMediaType(request.content_type,
                                      "application/json-patch+json, application/merge-patch+json, "
                                      "application/strategic-merge-patch+json");
    e.message =
        "server-side apply is not supported by the kubesched API test bed: use client-side apply "
        "(kubectl apply without --server-side), or a JSON, merge or strategic merge patch";
    return ErrorResponse(e);
  } else {
    return ErrorResponse(UnsupportedMediaType(request.content_type,
                                              "application/json-patch+json, application/merge-patch+json, "
                                              "application/strategic-merge-patch+json"));
  }
  std::vector<std::string> warnings;
  if (patch_type != store::PatchType::kJsonPatch) {
    // A merge patch has the object's shape: its unknown fields are the result's.
    api::json::Document doc;
    if (auto parsed = api::json::Parse(request.body, doc); !parsed) {
      return ErrorResponse(BadRequest(fmt::format("the patch is not valid JSON: {}", parsed.error().ToString())));
    }
    if (!doc.IsObject()) return ErrorResponse(BadRequest("a merge patch must be a JSON object"));
    auto checked = ValidatePatchFields(request, target.type, doc);
    if (!checked) return ErrorResponse(checked.error());
    warnings = std::move(*checked);
  }
  // The patched object as upstream's decoder takes it: a field of the wrong type refused (in
  // every mode), unknown fields and duplicate keys dropped (the patch's own were reported above).
  // A custom resource's patch is checked as the patched object (pruning finds its unknown fields,
  // as upstream's), under the request's fieldValidation.
  auto mode = ParseFieldValidation(request.Query("fieldValidation"));
  if (!mode) return ErrorResponse(mode.error());
  const FieldValidation patched_mode = target.type.unknown_fields ? *mode : FieldValidation::kIgnore;
  const store::Store::PatchDecoder decode = [&target, &warnings,
                                             patched_mode](api::json::Document& doc) -> store::Result<void> {
    std::vector<FieldProblem> problems = CheckObjectFields(target.type, doc, false);
    if (problems.empty()) return {};
    auto checked = ApplyFieldValidation(patched_mode, target.type.kind, target.type.version, problems);
    if (!checked) return std::unexpected(store::BadRequest(checked.error().message));
    warnings.insert(warnings.end(), checked->begin(), checked->end());
    DropUnknownAndDuplicateFields(doc, doc.GetAllocator(), problems);
    return {};
  };
  store::Result<store::ObjectPtr> patched =
      *dry_run ? DryRunPatch(store_, target.type, target.namespace_, target.info.name, patch_type, request.body,
                             target.info.subresource, decode)
               : store_.PatchDecoded(target.type, target.namespace_, target.info.name, patch_type, request.body,
                                     target.info.subresource, decode);
  if (!patched) return ErrorResponse(FromStoreError(patched.error(), Subject(target.type, target.info.name)));
  return WithWarnings(JsonResponse(200, EncodeObject(**patched, target.type, output->object, output->table),
                                   output->object.content_type),
                      warnings);
}

HttpResponse ApiHandler::Delete(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, false);
  if (!output) return ErrorResponse(output.error());
  auto del = ParseDeleteRequest(request);
  if (!del) return ErrorResponse(del.error());
  store::Result<store::ObjectPtr> deleted =
      del->dry_run ? DryRunDelete(store_, target.type, target.namespace_, target.info.name, del->options)
                   : store_.Delete(target.type, target.namespace_, target.info.name, del->options);
  if (!deleted) return ErrorResponse(FromStoreError(deleted.error(), Subject(target.type, target.info.name)));
  // Upstream returns the object for kinds whose deletion may be graceful (pods) and for the
  // rest a Status naming what went.
  if (target.type.group.empty() && target.type.resource == "pods") {
    return JsonResponse(200, EncodeObject(**deleted, target.type, output->object, output->table),
                        output->object.content_type);
  }
  return JsonResponse(200, EncodeSuccessStatus({.name = target.info.name,
                                                .group = target.type.group,
                                                .kind = target.type.resource,
                                                .uid = (*deleted)->uid}));
}

HttpResponse ApiHandler::DeleteCollection(const HttpRequest& request, const Target& target) {
  auto output = NegotiateOutput(request, true);
  if (!output) return ErrorResponse(output.error());
  auto options = ParseListOptions(request);
  if (!options) return ErrorResponse(options.error());
  auto del = ParseDeleteRequest(request);
  if (!del) return ErrorResponse(del.error());
  options->limit = 0;
  options->continue_token.clear();
  auto listed = store_.List(target.type, target.namespace_, *options);
  if (!listed) return ErrorResponse(FromStoreError(listed.error(), Subject(target.type, "")));
  // Each object is deleted on its own, as upstream's DeleteCollection does: one that went in the
  // meantime is skipped; any other failure stops and is reported.
  std::vector<store::ObjectPtr> deleted;
  for (const store::ObjectPtr& item : listed->items) {
    store::Result<store::ObjectPtr> d =
        del->dry_run ? DryRunDelete(store_, target.type, item->namespace_, item->name, del->options)
                     : store_.Delete(target.type, item->namespace_, item->name, del->options);
    if (!d) {
      if (d.error().reason == store::Error::Reason::kNotFound) continue;
      return ErrorResponse(FromStoreError(d.error(), Subject(target.type, item->name)));
    }
    deleted.push_back(*d);
  }
  ListMeta meta{.resource_version = store_.ResourceVersion()};
  return JsonResponse(200, EncodeList(deleted, meta, target.type, output->object, output->table),
                      output->object.content_type);
}

}  // namespace kubesched::server
