#include "server/field_validation.h"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "api/schema.h"

namespace kubesched::server {
namespace {

// The body as a yaml-cpp node for api::CheckFields, duplicate keys kept (force_insert) so the
// check can report them. Patch directives ($patch, $setElementOrder/..., $retainKeys, ...) are
// left out.
YAML::Node ToYaml(const api::json::Value& v, bool patch) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return YAML::Node(YAML::NodeType::Null);
    case rapidjson::kFalseType:
      return YAML::Node(false);
    case rapidjson::kTrueType:
      return YAML::Node(true);
    case rapidjson::kStringType:
      return YAML::Node(std::string(api::json::View(v)));
    case rapidjson::kNumberType:
      if (v.IsInt64()) return YAML::Node(v.GetInt64());
      if (v.IsUint64()) return YAML::Node(v.GetUint64());
      return YAML::Node(v.GetDouble());
    case rapidjson::kArrayType: {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (const api::json::Value& e : v.GetArray()) seq.push_back(ToYaml(e, patch));
      return seq;
    }
    case rapidjson::kObjectType: {
      YAML::Node map(YAML::NodeType::Map);
      for (const auto& m : v.GetObject()) {
        std::string key(api::json::View(m.name));
        if (patch && key.starts_with('$')) continue;
        map.force_insert(key, ToYaml(m.value, patch));
      }
      return map;
    }
  }
  return YAML::Node();
}

}  // namespace

std::expected<FieldValidation, ApiError> ParseFieldValidation(std::string_view value) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return std::unexpected(
      BadRequest(fmt::format("fieldValidation must be one of Ignore, Warn or Strict, got \"{}\"", value)));
}

std::vector<FieldProblem> CheckObjectFields(std::string_view kind, const api::json::Value& body, bool patch) {
  std::vector<FieldProblem> out;
  if (!api::HasFieldSchema(kind)) return out;
  std::vector<api::FieldIssue> issues;
  api::CheckFields(ToYaml(body, patch), kind, "", issues);
  for (api::FieldIssue& issue : issues) {
    if (issue.message.starts_with("unknown field")) {
      out.push_back({issue.path, fmt::format("unknown field \"{}\"", issue.path)});
    } else if (issue.message.starts_with("duplicate field")) {
      out.push_back({issue.path, fmt::format("duplicate field \"{}\"", issue.path)});
    } else if (!patch) {
      // A field of the wrong shape: upstream's decoder fails on it whatever fieldValidation says;
      // reported here with the others.
      out.push_back({issue.path, fmt::format("{}: {}", issue.path, issue.message)});
    }
  }
  return out;
}

std::expected<std::vector<std::string>, ApiError> ApplyFieldValidation(FieldValidation mode, std::string_view kind,
                                                                       std::string_view version,
                                                                       const std::vector<FieldProblem>& problems) {
  std::vector<std::string> warnings;
  if (problems.empty() || mode == FieldValidation::kIgnore) return warnings;
  if (mode == FieldValidation::kStrict) {
    std::vector<std::string_view> texts;
    for (const FieldProblem& p : problems) texts.push_back(p.text);
    return std::unexpected(
        BadRequest(fmt::format("{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}", kind,
                               version, kind, fmt::join(texts, ", "))));
  }
  for (const FieldProblem& p : problems) warnings.push_back(p.text);
  return warnings;
}

std::string WarningHeader(std::string_view text) {
  std::string quoted;
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return fmt::format("299 - \"{}\"", quoted);
}

}  // namespace kubesched::server
