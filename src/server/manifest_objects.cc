#include "server/manifest_objects.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "api/manifest.h"

namespace kubesched::server {
namespace {

namespace fs = std::filesystem;

struct Source {
  std::string name;
  std::string text;
};

std::expected<std::vector<Source>, std::string> ReadSources(const std::vector<std::string>& paths) {
  std::vector<Source> out;
  auto read = [&out](const fs::path& p) -> std::expected<void, std::string> {
    std::ifstream in(p);
    if (!in) return std::unexpected(fmt::format("{}: cannot read", p.string()));
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back({p.string(), ss.str()});
    return {};
  };
  for (const std::string& path : paths) {
    if (path == "-") {
      std::stringstream ss;
      ss << std::cin.rdbuf();
      out.push_back({"<stdin>", ss.str()});
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
          files.push_back(entry.path());
      }
      std::ranges::sort(files);
      for (const fs::path& f : files) {
        if (auto ok = read(f); !ok) return std::unexpected(ok.error());
      }
      continue;
    }
    if (auto ok = read(path); !ok) return std::unexpected(ok.error());
  }
  return out;
}

bool IsPlain(const YAML::Node& node) { return node.Tag() == "?"; }

}  // namespace

void YamlToJson(const YAML::Node& node, api::json::Value& out, api::json::Allocator& alloc) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.SetNull();
      return;
    case YAML::NodeType::Sequence:
      out.SetArray();
      for (const YAML::Node& item : node) {
        api::json::Value v;
        YamlToJson(item, v, alloc);
        out.PushBack(v, alloc);
      }
      return;
    case YAML::NodeType::Map:
      out.SetObject();
      for (const auto& entry : node) {
        api::json::Value v;
        YamlToJson(entry.second, v, alloc);
        api::json::Set(out, entry.first.Scalar(), std::move(v), alloc);
      }
      return;
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& s = node.Scalar();
  if (IsPlain(node)) {
    if (s == "true" || s == "True" || s == "TRUE") {
      out.SetBool(true);
      return;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      out.SetBool(false);
      return;
    }
    if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) {
      out.SetNull();
      return;
    }
    int64_t i = 0;
    std::string_view digits = s;
    if (digits.starts_with('+')) digits.remove_prefix(1);
    if (auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
        ec == std::errc() && p == digits.data() + digits.size() && !digits.empty()) {
      out.SetInt64(i);
      return;
    }
    double d = 0;
    if (s.find_first_of("0123456789") != std::string::npos &&
        s.find_first_not_of("0123456789+-.eE") == std::string::npos) {
      if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
          ec == std::errc() && p == s.data() + s.size()) {
        out.SetDouble(d);
        return;
      }
    }
  }
  out = api::json::MakeString(s, alloc);
}

std::expected<ManifestObjects, std::string> ManifestObjectsJson(const std::vector<std::string>& paths) {
  auto sources = ReadSources(paths);
  if (!sources) return std::unexpected(sources.error());
  std::vector<api::ManifestSource> manifest_sources;
  for (const Source& s : *sources) manifest_sources.push_back({s.name, s.text});
  api::LoadOptions load;
  load.expand_workloads = false;
  auto loaded = api::LoadManifestSources(manifest_sources, load);
  if (!loaded) return std::unexpected(loaded.error().ToString());

  ManifestObjects result;
  result.warnings = loaded->warnings;
  for (const Source& s : *sources) {
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(s.text);
    } catch (const YAML::Exception& e) {
      return std::unexpected(fmt::format("{}: {}", s.name, e.what()));
    }
    int index = 0;
    for (const YAML::Node& doc : docs) {
      ++index;
      if (!doc.IsMap()) continue;
      auto add = [&](const YAML::Node& node, std::string source) {
        ManifestObject o;
        o.source = std::move(source);
        o.json = std::make_unique<api::json::Document>();
        YamlToJson(node, *o.json, o.json->GetAllocator());
        o.api_version = std::string(api::json::GetString(*o.json, "apiVersion"));
        o.kind = std::string(api::json::GetString(*o.json, "kind"));
        result.objects.push_back(std::move(o));
      };
      const std::string kind = doc["kind"] ? doc["kind"].as<std::string>("") : "";
      if (kind == "List" || (kind.ends_with("List") && doc["items"])) {
        int item = 0;
        for (const YAML::Node& i : doc["items"])
          add(i, fmt::format("{}: document {}, items[{}]", s.name, index, item++));
        continue;
      }
      add(doc, fmt::format("{}: document {}", s.name, index));
    }
  }
  return result;
}

}  // namespace kubesched::server
