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

// A member name no JSON text can carry unescaped, marking members to drop: marking first and
// removing afterwards keeps every reported path valid while the others are resolved.
constexpr std::string_view kDropMark = "\x01kubesched:drop";

// The object holding the member `at` ends at, and that member's index; null when `at` does
// not lead there.
api::json::Value* ParentOf(api::json::Value& body, const api::yaml::SourcePath& at, uint32_t& index) {
  if (at.empty() || at.back().kind != api::yaml::PathStep::Kind::kKey) return nullptr;
  api::json::Value* cur = &body;
  for (size_t i = 0; i + 1 < at.size(); ++i) {
    const api::yaml::PathStep& step = at[i];
    if (step.kind == api::yaml::PathStep::Kind::kElement) {
      if (!cur->IsArray() || step.index >= cur->Size()) return nullptr;
      cur = &(*cur)[step.index];
    } else {
      if (!cur->IsObject() || step.index >= cur->MemberCount()) return nullptr;
      cur = &(cur->MemberBegin() + step.index)->value;
    }
  }
  index = at.back().index;
  return cur->IsObject() && index < cur->MemberCount() ? cur : nullptr;
}

void Sweep(api::json::Value& v) {
  if (v.IsArray()) {
    for (api::json::Value& e : v.GetArray()) Sweep(e);
    return;
  }
  if (!v.IsObject()) return;
  for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
    if (api::json::View(it->name) == kDropMark) {
      it = v.EraseMember(it);
    } else {
      Sweep(it->value);
      ++it;
    }
  }
}

}  // namespace

void DropUnknownAndDuplicateFields(api::json::Value& body, api::json::Allocator& alloc,
                                   const std::vector<FieldProblem>& problems) {
  bool marked = false;
  for (const FieldProblem& p : problems) {
    if (p.kind == FieldProblem::Kind::kType || p.at.empty()) continue;
    uint32_t index = 0;
    api::json::Value* parent = ParentOf(body, p.at, index);
    if (parent == nullptr) continue;
    auto member = parent->MemberBegin() + index;
    if (p.kind == FieldProblem::Kind::kUnknown) {
      member->name = api::json::MakeString(kDropMark, alloc);
      marked = true;
      continue;
    }
    // A duplicate: the earlier members of that name go, so the last one is the value.
    const std::string name(api::json::View(member->name));
    for (auto it = parent->MemberBegin(); it != member; ++it) {
      if (api::json::View(it->name) == name) {
        it->name = api::json::MakeString(kDropMark, alloc);
        marked = true;
      }
    }
  }
  if (marked) Sweep(body);
}

std::expected<FieldValidation, ApiError> ParseFieldValidation(std::string_view value) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return std::unexpected(
      BadRequest(fmt::format("fieldValidation must be one of Ignore, Warn or Strict, got \"{}\"", value)));
}

std::vector<FieldProblem> CheckObjectFields(const store::ResourceType& type, const api::json::Value& body, bool patch) {
  std::vector<FieldProblem> out;
  if (type.unknown_fields) {
    // A custom resource: what pruning to its CRD's schema would remove (the store prunes it). A
    // patch is checked as the patched object, which the store prunes.
    if (patch) return out;
    for (std::string& path : type.unknown_fields(body)) {
      out.push_back({FieldProblem::Kind::kUnknown, path, fmt::format("unknown field \"{}\"", path), {}});
    }
    return out;
  }
  const std::string_view kind = type.kind;
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
    switch (issue.kind) {
      case api::FieldIssue::Kind::kUnknownField:
        out.push_back({FieldProblem::Kind::kUnknown, issue.path, fmt::format("unknown field \"{}\"", issue.path),
                       std::move(issue.at)});
        break;
      case api::FieldIssue::Kind::kDuplicateField:
        out.push_back({FieldProblem::Kind::kDuplicate, issue.path, fmt::format("duplicate field \"{}\"", issue.path),
                       std::move(issue.at)});
        break;
      case api::FieldIssue::Kind::kType:
        // In a patch, types are checked on the patched object (PatchDecoded), where a null that
        // deletes a field and a directive's list are gone.
        if (!patch) {
          out.push_back({FieldProblem::Kind::kType, issue.path, fmt::format("{}: {}", issue.path, issue.message),
                         std::move(issue.at)});
        }
        break;
    }
  }
  return out;
}

std::expected<std::vector<std::string>, ApiError> ApplyFieldValidation(FieldValidation mode, std::string_view kind,
                                                                       std::string_view version,
                                                                       const std::vector<FieldProblem>& problems) {
  std::vector<std::string> warnings;
  std::vector<std::string_view> wrong_types;
  for (const FieldProblem& p : problems) {
    if (p.kind == FieldProblem::Kind::kType) wrong_types.push_back(p.text);
  }
  if (!wrong_types.empty()) {
    return std::unexpected(BadRequest(fmt::format("{} in version \"{}\" cannot be handled as a {}: {}", kind, version,
                                                  kind, fmt::join(wrong_types, ", "))));
  }
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
