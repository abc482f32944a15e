#include "server/manifest_objects.h"

#include <fmt/format.h>

#include "api/manifest.h"
#include "api/manifest_sources.h"
#include "api/yaml.h"

namespace kubesched::server {
namespace {

// One document as JSON: JSON text with the JSON codec, YAML with the YAML codec (kubectl's
// scalar rules).
std::expected<void, std::string> DecodeDocument(const api::RawDocument& raw, api::json::Document& doc) {
  if (raw.json) {
    if (auto parsed = api::json::Parse(raw.text, doc); parsed) return {};
  }
  auto parsed = api::yaml::Parse(raw.text, doc);
  if (!parsed)
    return std::unexpected(fmt::format("line {}: {}", raw.first_line + parsed.error().line, parsed.error().message));
  return {};
}

}  // namespace

std::expected<ManifestObjects, std::string> ManifestObjectsJson(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (std::optional<std::string> error = api::ExpandPath(path, false, files)) return std::unexpected(*error);
  }
  std::vector<api::ManifestSource> sources;
  for (const std::string& file : files) {
    api::ManifestSource source{file == "-" ? std::string(api::kStdinName) : file, ""};
    if (std::optional<std::string> error = api::ReadFile(file, source.text)) return std::unexpected(*error);
    sources.push_back(std::move(source));
  }
  auto objects = ManifestObjectsFromSources(sources);
  if (!objects) return std::unexpected(std::move(objects.error().message));
  return std::move(*objects);
}

std::expected<ManifestObjects, ManifestProblem> ManifestObjectsFromSources(
    const std::vector<api::ManifestSource>& sources, bool check) {
  ManifestObjects result;
  if (check) {
    api::LoadOptions load;
    load.expand_workloads = false;
    load.warn_skipped_kinds = false;
    auto loaded = api::LoadManifestSources(sources, load);
    if (!loaded) return std::unexpected(ManifestProblem{loaded.error().ToString(), loaded.error().field});
    result.warnings = loaded->warnings;
  }
  for (const api::ManifestSource& source : sources) {
    int index = 0;
    for (const api::RawDocument& raw : api::SplitDocuments(source.text)) {
      ++index;
      api::json::Document doc;
      if (auto decoded = DecodeDocument(raw, doc); !decoded) {
        return std::unexpected(
            ManifestProblem{fmt::format("{}: document {}: {}", source.name, index, decoded.error()), ""});
      }
      if (!doc.IsObject()) continue;
      auto add = [&result](api::json::Value& object, std::string where) {
        ManifestObject o;
        o.source = std::move(where);
        o.json = std::make_unique<api::json::Document>();
        o.json->CopyFrom(object, o.json->GetAllocator());
        o.api_version = std::string(api::json::GetString(*o.json, "apiVersion"));
        o.kind = std::string(api::json::GetString(*o.json, "kind"));
        result.objects.push_back(std::move(o));
      };
      const std::string_view kind = api::json::GetString(doc, "kind");
      api::json::Value* items = api::json::Find(doc, "items");
      if (kind.ends_with("List") && items != nullptr && items->IsArray()) {
        int item = 0;
        for (api::json::Value& i : items->GetArray()) {
          if (i.IsObject()) add(i, fmt::format("{}: document {}, items[{}]", source.name, index, item));
          ++item;
        }
        continue;
      }
      add(doc, fmt::format("{}: document {}", source.name, index));
    }
  }
  return result;
}

}  // namespace kubesched::server
