#include "server/request_info.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kubesched::server {
namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

}  // namespace

std::string_view VerbName(Verb verb) {
  switch (verb) {
    case Verb::kGet:
      return "get";
    case Verb::kList:
      return "list";
    case Verb::kWatch:
      return "watch";
    case Verb::kCreate:
      return "create";
    case Verb::kUpdate:
      return "update";
    case Verb::kPatch:
      return "patch";
    case Verb::kDelete:
      return "delete";
    case Verb::kDeleteCollection:
      return "deletecollection";
  }
  return "";
}

bool IsTrue(std::string_view value) {
  if (value == "0") return false;
  constexpr std::string_view kFalse = "false";
  return !std::ranges::equal(value, kFalse, [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
  });
}

std::expected<RequestInfo, ApiError> ParseRequestInfo(std::string_view method, std::string_view path,
                                                      std::optional<std::string_view> watch_param) {
  std::vector<std::string_view> parts = SplitPath(path);
  RequestInfo info;
  if (parts.empty()) return std::unexpected(PathNotFound());
  size_t i = 0;
  if (parts[0] == "api") {
    if (parts.size() == 1) {
      info.kind = PathKind::kLegacyRoot;
      return info;
    }
    info.version = parts[1];
    i = 2;
  } else if (parts[0] == "apis") {
    if (parts.size() == 1) {
      info.kind = PathKind::kGroupsRoot;
      return info;
    }
    info.group = parts[1];
    if (parts.size() == 2) {
      info.kind = PathKind::kGroup;
      return info;
    }
    info.version = parts[2];
    i = 3;
  } else {
    return std::unexpected(PathNotFound());
  }
  if (i == parts.size()) {
    info.kind = PathKind::kGroupVersion;
    if (method != "GET") return std::unexpected(MethodNotAllowed(method, info.group, ""));
    return info;
  }

  std::vector<std::string_view> rest(parts.begin() + static_cast<long>(i), parts.end());
  bool watch_prefix = false;
  if (rest.front() == "watch") {
    // /api/v1/watch/...: deprecated, still served upstream.
    watch_prefix = true;
    rest.erase(rest.begin());
    if (rest.empty()) return std::unexpected(PathNotFound());
  }
  if (rest.front() == "namespaces" && rest.size() > 1) {
    // namespaces/<ns>/<resource>/...; namespaces/<name>[/status|/finalize] is the Namespace.
    if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
      info.namespace_ = rest[1];
      info.namespaced_path = true;
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  if (rest.size() > 3) return std::unexpected(PathNotFound());
  info.resource = rest[0];
  if (rest.size() > 1) info.name = rest[1];
  if (rest.size() > 2) info.subresource = rest[2];
  if (info.name.empty() && info.namespaced_path && info.resource.empty()) return std::unexpected(PathNotFound());

  const bool has_name = !info.name.empty();
  if (method == "GET" || method == "HEAD") {
    if (watch_prefix || (watch_param && IsTrue(*watch_param))) {
      info.verb = Verb::kWatch;
    } else {
      info.verb = has_name ? Verb::kGet : Verb::kList;
    }
  } else if (watch_prefix) {
    return std::unexpected(MethodNotAllowed(method, info.group, info.resource));
  } else if (method == "POST") {
    info.verb = Verb::kCreate;
  } else if (method == "PUT") {
    info.verb = Verb::kUpdate;
  } else if (method == "PATCH") {
    info.verb = Verb::kPatch;
  } else if (method == "DELETE") {
    info.verb = has_name ? Verb::kDelete : Verb::kDeleteCollection;
  } else {
    return std::unexpected(MethodNotAllowed(method, info.group, info.resource));
  }
  return info;
}

}  // namespace kubesched::server
