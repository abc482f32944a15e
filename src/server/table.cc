#include "server/table.h"

#include "api/json.h"
#include "server/json_writer.h"
#include "server/printers.h"

namespace kubesched::server {
namespace {

// The object's metadata, encoded, or "{}" when the stored JSON cannot be read (it always can: the
// store encoded it).
std::string MetadataOf(const api::json::Document& doc) {
  const api::json::Value* m = api::json::Find(doc, "metadata");
  return m != nullptr && m->IsObject() ? api::json::Encode(*m) : "{}";
}

void WritePartial(JsonWriter& w, const api::json::Document& doc, std::string_view meta_version) {
  w.StartObject();
  w.Member("kind", "PartialObjectMetadata");
  w.Member("apiVersion", "meta.k8s.io/" + std::string(meta_version));
  w.MemberRaw("metadata", MetadataOf(doc));
  w.EndObject();
}

void WriteCell(JsonWriter& w, const Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) {
    w.String(*s);
  } else if (const auto* i = std::get_if<int64_t>(&cell)) {
    w.Int(*i);
  } else {
    w.Bool(std::get<bool>(cell));
  }
}

}  // namespace

void WriteListMeta(JsonWriter& w, const ListMeta& meta) {
  w.Key("metadata");
  w.StartObject();
  w.Member("resourceVersion", std::to_string(meta.resource_version));
  if (!meta.continue_token.empty()) w.Member("continue", meta.continue_token);
  if (meta.remaining_item_count) w.MemberInt("remainingItemCount", *meta.remaining_item_count);
  w.EndObject();
}

std::string EncodeTable(const store::ResourceType& type, const std::vector<store::ObjectPtr>& objects,
                        const ListMeta& meta, const TableOptions& options) {
  const Printer& printer = PrinterFor(type);
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "Table");
  w.Member("apiVersion", "meta.k8s.io/" + options.meta_version);
  WriteListMeta(w, meta);
  w.Key("columnDefinitions");
  w.StartArray();
  if (!options.no_headers) {
    for (const Column& c : printer.columns) {
      w.StartObject();
      w.Member("name", c.name);
      w.Member("type", c.type);
      w.Member("format", c.format);
      w.Member("description", c.description);
      w.MemberInt("priority", c.priority);
      w.EndObject();
    }
  }
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  std::vector<Cell> cells;
  for (const store::ObjectPtr& object : objects) {
    api::json::Document doc;
    if (!api::json::Parse(object->json, doc)) continue;
    cells.clear();
    printer.cells(doc, options.now_ns, cells);
    w.StartObject();
    w.Key("cells");
    w.StartArray();
    for (const Cell& cell : cells) WriteCell(w, cell);
    w.EndArray();
    if (printer.condition != nullptr) {
      if (std::optional<RowCondition> c = printer.condition(doc)) {
        w.Key("conditions");
        w.StartArray();
        w.StartObject();
        w.Member("type", c->type);
        w.Member("status", c->status);
        w.Member("reason", c->reason);
        w.Member("message", c->message);
        w.EndObject();
        w.EndArray();
      }
    }
    switch (options.include) {
      case IncludeObject::kNone:
        break;
      case IncludeObject::kMetadata:
        w.Key("object");
        WritePartial(w, doc, options.meta_version);
        break;
      case IncludeObject::kObject:
        w.MemberRaw("object", object->json);
        break;
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string EncodePartialObjectMetadata(const store::Object& object, std::string_view meta_version) {
  api::json::Document doc;
  if (!api::json::Parse(object.json, doc)) doc.SetObject();
  JsonWriter w;
  WritePartial(w, doc, meta_version);
  return w.Take();
}

std::string EncodePartialObjectMetadataList(const std::vector<store::ObjectPtr>& objects, const ListMeta& meta,
                                            std::string_view meta_version) {
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "PartialObjectMetadataList");
  w.Member("apiVersion", "meta.k8s.io/" + std::string(meta_version));
  WriteListMeta(w, meta);
  w.Key("items");
  w.StartArray();
  for (const store::ObjectPtr& object : objects) {
    api::json::Document doc;
    if (!api::json::Parse(object->json, doc)) doc.SetObject();
    WritePartial(w, doc, meta_version);
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace kubesched::server
