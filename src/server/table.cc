#include "server/table.h"

#include <functional>

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

// The first value a JSONPath of the simple form CRD printer columns use selects (".a.b",
// ".a[0].b", ".a[*].b", ".a[?(@.type==\"Ready\")].status", optionally in braces), or null.
const api::json::Value* FirstJsonPathValue(const api::json::Value& root, std::string_view path) {
  if (path.starts_with("{") && path.ends_with("}")) path = path.substr(1, path.size() - 2);
  const api::json::Value* at = &root;
  size_t i = 0;
  while (i < path.size() && at != nullptr) {
    if (path[i] == '.') {
      ++i;
      size_t end = i;
      while (end < path.size() && path[end] != '.' && path[end] != '[') ++end;
      if (end == i) return nullptr;
      at = api::json::Find(*at, path.substr(i, end - i));
      i = end;
    } else if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos || !at->IsArray()) return nullptr;
      std::string_view inside = path.substr(i + 1, close - i - 1);
      i = close + 1;
      if (inside == "*") {
        at = at->Empty() ? nullptr : &(*at)[0];
      } else if (inside.starts_with("?(@.") && inside.ends_with(")")) {
        // [?(@.key=="value")]: the first element whose key has that value.
        std::string_view cond = inside.substr(4, inside.size() - 5);
        const size_t eq = cond.find("==");
        if (eq == std::string_view::npos) return nullptr;
        std::string_view key = cond.substr(0, eq);
        std::string_view want = cond.substr(eq + 2);
        if (want.size() >= 2 && (want.front() == '"' || want.front() == '\'') && want.back() == want.front()) {
          want = want.substr(1, want.size() - 2);
        }
        const api::json::Value* found = nullptr;
        for (const auto& e : at->GetArray()) {
          if (api::json::GetString(e, key) == want) {
            found = &e;
            break;
          }
        }
        at = found;
      } else {
        size_t index = 0;
        for (char c : inside) {
          if (c < '0' || c > '9') return nullptr;
          index = index * 10 + static_cast<size_t>(c - '0');
        }
        at = index < at->Size() ? &(*at)[static_cast<rapidjson::SizeType>(index)] : nullptr;
      }
    } else {
      return nullptr;
    }
  }
  return at;
}

// A custom resource's cell (apiextensions' tableconvertor): strings as printed, integers and
// booleans typed, dates as ages; a value that is absent or of another type is null.
void WriteCustomCell(JsonWriter& w, const store::ColumnDefinition& column, const api::json::Value* v, int64_t now_ns) {
  if (v == nullptr || v->IsNull()) {
    w.Null();
  } else if (column.type == "date") {
    if (v->IsString()) {
      w.String(TranslateTimestampSince(api::json::View(*v), now_ns));
    } else {
      w.Null();
    }
  } else if (column.type == "integer") {
    if (v->IsInt64()) {
      w.Int(v->GetInt64());
    } else {
      w.Null();
    }
  } else if (column.type == "boolean") {
    if (v->IsBool()) {
      w.Bool(v->GetBool());
    } else {
      w.Null();
    }
  } else if (v->IsString()) {
    w.String(api::json::View(*v));
  } else {
    w.String(api::json::Encode(*v));
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

namespace {

void WriteRowObject(JsonWriter& w, const api::json::Document& doc, const store::Object& object,
                    const TableOptions& options) {
  switch (options.include) {
    case IncludeObject::kNone:
      break;
    case IncludeObject::kMetadata:
      w.Key("object");
      WritePartial(w, doc, options.meta_version);
      break;
    case IncludeObject::kObject:
      w.MemberRaw("object", object.json);
      break;
  }
}

void WriteColumn(JsonWriter& w, std::string_view name, std::string_view type, std::string_view format,
                 std::string_view description, int priority) {
  w.StartObject();
  w.Member("name", name);
  w.Member("type", type);
  w.Member("format", format);
  w.Member("description", description);
  w.MemberInt("priority", priority);
  w.EndObject();
}

// The Table every kind shares (metav1.Table): `columns` writes the column definitions, `row` an
// object's "cells" (and "conditions"); each row carries the object as options.include asks.
std::string WriteTable(const std::vector<store::ObjectPtr>& objects, const ListMeta& meta, const TableOptions& options,
                       const std::function<void(JsonWriter&)>& columns,
                       const std::function<void(JsonWriter&, const api::json::Document&)>& row) {
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "Table");
  w.Member("apiVersion", "meta.k8s.io/" + options.meta_version);
  WriteListMeta(w, meta);
  w.Key("columnDefinitions");
  w.StartArray();
  if (!options.no_headers) columns(w);
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  for (const store::ObjectPtr& object : objects) {
    api::json::Document doc;
    if (!api::json::Parse(object->json, doc)) continue;
    w.StartObject();
    row(w, doc);
    WriteRowObject(w, doc, *object, options);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

// A custom resource's Table (apiextensions' tableconvertor): NAME, then its CRD's columns.
std::string EncodeCustomTable(const store::ResourceType& type, const std::vector<store::ObjectPtr>& objects,
                              const ListMeta& meta, const TableOptions& options) {
  auto columns = [&](JsonWriter& w) {
    WriteColumn(w, "Name", "string", "name",
                "Name must be unique within a namespace. It is required when creating resources, although some "
                "resources may allow a client to request the generation of an appropriate name automatically. Name "
                "is primarily intended for creation idempotence and configuration definition. Cannot be updated. "
                "More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
                0);
    for (const store::ColumnDefinition& c : type.columns) {
      WriteColumn(w, c.name, c.type, c.format, c.description, c.priority);
    }
  };
  auto row = [&](JsonWriter& w, const api::json::Document& doc) {
    w.Key("cells");
    w.StartArray();
    const api::json::Value* m = api::json::Find(doc, "metadata");
    w.String(m ? api::json::GetString(*m, "name") : std::string_view());
    for (const store::ColumnDefinition& c : type.columns) {
      WriteCustomCell(w, c, FirstJsonPathValue(doc, c.json_path), options.now_ns);
    }
    w.EndArray();
  };
  return WriteTable(objects, meta, options, columns, row);
}

}  // namespace

std::string EncodeTable(const store::ResourceType& type, const std::vector<store::ObjectPtr>& objects,
                        const ListMeta& meta, const TableOptions& options) {
  if (!type.columns.empty()) return EncodeCustomTable(type, objects, meta, options);
  const Printer& printer = PrinterFor(type);
  auto columns = [&](JsonWriter& w) {
    for (const Column& c : printer.columns) WriteColumn(w, c.name, c.type, c.format, c.description, c.priority);
  };
  std::vector<Cell> cells;
  auto row = [&](JsonWriter& w, const api::json::Document& doc) {
    cells.clear();
    printer.cells(doc, options.now_ns, cells);
    w.Key("cells");
    w.StartArray();
    for (const Cell& cell : cells) WriteCell(w, cell);
    w.EndArray();
    if (printer.condition == nullptr) return;
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
  };
  return WriteTable(objects, meta, options, columns, row);
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
