#include "server/field_validation.h"

#include <fmt/format.h>

#include "api/schema.h"

namespace kubesched::server {
namespace {

// A merge or strategic merge patch without its directives ($patch, $setElementOrder/...,
// $retainKeys, $deleteFromPrimitiveList/...), which are not fields of the object.
void DropDirectives(api::json::Value& v) {
  if (v.IsArray()) {
    for (api::json::Value& e : v.GetArray()) DropDirectives(e);
    return;
  }
  if (!v.IsObject()) return;
  for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
    if (api::json::View(it->name).starts_with('$')) {
      it = v.EraseMember(it);
    } else {
      DropDirectives(it->value);
      ++it;
    }
  }
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
  if (patch) {
    api::json::Document copy;
    copy.CopyFrom(body, copy.GetAllocator());
    DropDirectives(copy);
    api::CheckFields(copy, kind, "", issues);
  } else {
    api::CheckFields(body, kind, "", issues);
  }
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
