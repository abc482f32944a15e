#include "server/object_io.h"

#include <fmt/format.h>

#include "server/json_writer.h"

namespace kubesched::server {

std::expected<api::json::Document, ApiError> DecodeObjectBody(const HttpRequest& request,
                                                              const store::ResourceType& type) {
  const std::string media = BaseMediaType(request.content_type);
  if (!media.empty() && media != "application/json" && media != "*/*") {
    ApiError e = UnsupportedMediaType(request.content_type, "application/json");
    if (media == "application/vnd.kubernetes.protobuf") {
      // kubectl's typed clients (create namespace|deployment|priorityclass|...) send protobuf,
      // and client-go falls back to JSON only from CBOR.
      e.message =
          "protobuf request bodies are not supported by the kubesched API test bed (kubectl create "
          "namespace|deployment|priorityclass|... send them): create the object from a manifest with "
          "kubectl create -f or kubectl apply -f";
    }
    return std::unexpected(e);
  }
  api::json::Document doc;
  if (auto parsed = api::json::Parse(request.body, doc); !parsed) {
    return std::unexpected(
        BadRequest(fmt::format("the request body is not valid JSON: {}", parsed.error().ToString())));
  }
  if (!doc.IsObject()) {
    return std::unexpected(BadRequest(fmt::format("the request body must be a JSON object (a {})", type.kind)));
  }
  const std::string gv = type.GroupVersion();
  std::string_view api_version = api::json::GetString(doc, "apiVersion");
  std::string_view kind = api::json::GetString(doc, "kind");
  if ((!api_version.empty() && api_version != gv) || (!kind.empty() && kind != type.kind)) {
    return std::unexpected(
        BadRequest(fmt::format("the body is a {} of {}, but {} takes a {} of {}", kind.empty() ? "object" : kind,
                               api_version.empty() ? "no apiVersion" : api_version,
                               QualifiedResource(type.group, type.resource), type.kind, gv)));
  }
  if (api_version.empty())
    api::json::Set(doc, "apiVersion", api::json::MakeString(gv, doc.GetAllocator()), doc.GetAllocator());
  if (kind.empty())
    api::json::Set(doc, "kind", api::json::MakeString(type.kind, doc.GetAllocator()), doc.GetAllocator());
  return doc;
}

std::string_view BodyName(const api::json::Value& body) {
  const api::json::Value* m = api::json::Find(body, "metadata");
  return m == nullptr ? std::string_view() : api::json::GetString(*m, "name");
}

std::expected<void, ApiError> CheckBodyIdentity(api::json::Document& body, const store::ResourceType& type,
                                                std::string_view namespace_, std::string_view name) {
  api::json::Value& meta = api::json::Child(body, "metadata", body.GetAllocator());
  if (type.namespaced) {
    std::string_view ns = api::json::GetString(meta, "namespace");
    if (!ns.empty() && ns != namespace_) {
      return std::unexpected(BadRequest(
          fmt::format("the namespace of the provided object ({}) does not match the namespace sent on the request ({})",
                      ns, namespace_)));
    }
    if (ns.empty())
      api::json::Set(meta, "namespace", api::json::MakeString(namespace_, body.GetAllocator()), body.GetAllocator());
  }
  if (!name.empty()) {
    std::string_view body_name = api::json::GetString(meta, "name");
    if (!body_name.empty() && body_name != name) {
      return std::unexpected(BadRequest(
          fmt::format("the name of the object ({}) does not match the name on the URL ({})", body_name, name)));
    }
    if (body_name.empty())
      api::json::Set(meta, "name", api::json::MakeString(name, body.GetAllocator()), body.GetAllocator());
  }
  return {};
}

std::string EncodeObject(const store::Object& object, const store::ResourceType& type, const ObjectOutput& output,
                         const TableOptions& table) {
  switch (output.format) {
    case ObjectFormat::kTable: {
      // EncodeTable takes shared pointers; this one does not own the object it points at.
      store::ObjectPtr alias(std::shared_ptr<const store::Object>(), &object);
      return EncodeTable(type, {alias}, ListMeta{.resource_version = object.resource_version}, table);
    }
    case ObjectFormat::kPartialObjectMetadata:
    case ObjectFormat::kPartialObjectMetadataList:
      return EncodePartialObjectMetadata(object, output.meta_version);
    case ObjectFormat::kObject:
      break;
  }
  return object.json;
}

std::string EncodeList(const std::vector<store::ObjectPtr>& items, const ListMeta& meta,
                       const store::ResourceType& type, const ObjectOutput& output, const TableOptions& table) {
  switch (output.format) {
    case ObjectFormat::kTable:
      return EncodeTable(type, items, meta, table);
    case ObjectFormat::kPartialObjectMetadata:
    case ObjectFormat::kPartialObjectMetadataList:
      return EncodePartialObjectMetadataList(items, meta, output.meta_version);
    case ObjectFormat::kObject:
      break;
  }
  JsonWriter w;
  w.StartObject();
  w.Member("kind", type.kind + "List");
  w.Member("apiVersion", type.GroupVersion());
  WriteListMeta(w, meta);
  w.Key("items");
  w.StartArray();
  for (const store::ObjectPtr& item : items) w.Raw(item->json);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace kubesched::server
