#pragma once
// Routing: what a request path and method ask for, as upstream's RequestInfoFactory
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go) reads them:
//   /api/v1/<resource>[/<name>[/<subresource>]]                      cluster-scoped, or every namespace
//   /api/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>]]     namespaced
//   /apis/<group>/<version>/...                                      the same below a named group
//   /api/v1/namespaces/<name>[/status|/finalize]                     the namespace itself
//   /api/v1/watch/...                                                the deprecated watch prefix
// and the verb: get, list, watch (?watch=true|1 or the prefix), create, update, patch, delete,
// deletecollection. Whether the resource exists is decided later, against the store.

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "server/status.h"

namespace kubesched::server {

enum class Verb { kGet, kList, kWatch, kCreate, kUpdate, kPatch, kDelete, kDeleteCollection };
//! "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection".
std::string_view VerbName(Verb verb);

enum class PathKind {
  kResource,      //!< a resource request (RequestInfo's fields say which)
  kLegacyRoot,    //!< /api: APIVersions (or the aggregated discovery of the core group)
  kGroupsRoot,    //!< /apis: APIGroupList (or the aggregated discovery of every named group)
  kGroup,         //!< /apis/<group>: APIGroup
  kGroupVersion,  //!< /api/v1 or /apis/<group>/<version>: APIResourceList
};

struct RequestInfo {
  PathKind kind = PathKind::kResource;
  std::string group;  //!< "" for the core group
  std::string version;
  //! The namespace a request is scoped to; empty for cluster-scoped and all-namespace requests.
  //! For /api/v1/namespaces/<name> it stays empty (the Namespace object is cluster-scoped).
  std::string namespace_;
  std::string resource;  //!< "pods"
  std::string name;
  std::string subresource;  //!< "status", "binding", "scale", ...
  Verb verb = Verb::kGet;
  //! Whether the path went through /namespaces/<ns>/ (a cluster-scoped resource there is a 404).
  bool namespaced_path = false;
};

//! Parses `path` (no query) for HTTP `method`; `watch_param` is the ?watch= value (nullopt when
//! absent). Errors: 404 for a path outside the API, 405 for a method the path cannot take.
std::expected<RequestInfo, ApiError> ParseRequestInfo(std::string_view method, std::string_view path,
                                                      std::optional<std::string_view> watch_param);

//! Whether a boolean query parameter's value (present, possibly empty) means true, as upstream's
//! query decoding reads it (Convert_Slice_string_To_bool): everything but "0" and "false" in any
//! case, so `True`, `T`, `yes` and an empty value are true. Never an error.
bool IsTrue(std::string_view value);

}  // namespace kubesched::server
