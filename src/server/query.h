#pragma once
// The query parameters (and DeleteOptions bodies) of resource requests, read into the store's
// option structs with upstream's validation (k8s.io/apimachinery/pkg/apis/meta/v1 ListOptions,
// DeleteOptions, and apiserver's validation of them). Errors are 400s.

#include <chrono>
#include <expected>
#include <optional>
#include <string>

#include "server/http_types.h"
#include "server/status.h"
#include "server/table.h"
#include "store/store.h"

namespace kubesched::server {

//! labelSelector, fieldSelector, limit, continue, resourceVersion, resourceVersionMatch.
std::expected<store::ListOptions, ApiError> ParseListOptions(const HttpRequest& request);

struct WatchRequest {
  store::WatchOptions options;
  //! ?timeoutSeconds=, or nullopt for the server's default.
  std::optional<std::chrono::seconds> timeout;
};
//! labelSelector, fieldSelector, resourceVersion, resourceVersionMatch, allowWatchBookmarks,
//! sendInitialEvents, timeoutSeconds.
std::expected<WatchRequest, ApiError> ParseWatchRequest(const HttpRequest& request);

enum class PropagationPolicy { kDefault, kOrphan, kBackground, kForeground };

struct DeleteRequest {
  store::DeleteOptions options;
  PropagationPolicy propagation = PropagationPolicy::kDefault;
  bool dry_run = false;
};
//! DeleteOptions from the body (JSON, kind DeleteOptions) or, without a body, from the query
//! (gracePeriodSeconds, propagationPolicy, orphanDependents, dryRun).
std::expected<DeleteRequest, ApiError> ParseDeleteRequest(const HttpRequest& request);

//! ?dryRun=All (true), absent (false); any other value is a 400.
std::expected<bool, ApiError> ParseDryRun(const HttpRequest& request);

//! ?includeObject=None|Metadata|Object (default Metadata).
std::expected<IncludeObject, ApiError> ParseIncludeObject(const HttpRequest& request);

//! A base-10 integer query value.
std::optional<int64_t> ParseInt(std::string_view text);

}  // namespace kubesched::server
