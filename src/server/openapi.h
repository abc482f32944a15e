#pragma once
// The OpenAPI v3 documents kubectl reads: /openapi/v3 (the index of group/versions, each with a
// content hash kubectl caches by) and /openapi/v3/<api/v1|apis/<g>/<v>> (the paths and
// operations of one group/version).
//
// What kubectl takes from them, and so what they must hold:
//  - `create`/`apply`/`replace` with the default --validate=strict ask whether the server does
//    field validation itself: a PATCH operation tagged with the kind's
//    x-kubernetes-group-version-kind and listing a `fieldValidation` parameter
//    (cli-runtime resource/query_param_verifier_v3.go). Then kubectl sends
//    ?fieldValidation=Strict and does no client-side check (which would need /openapi/v2).
//  - `apply` builds its strategic merge patch from a component schema tagged with the kind's GVK
//    when one exists (kubectl apply/patcher.go, buildStrategicMergePatchFromOpenAPIV3). The
//    schemas here carry no GVK tag on purpose: without one kubectl falls back to its compiled-in
//    Go types, whose patch strategies and merge keys are upstream's exactly, while a schema
//    lacking x-kubernetes-patch-merge-key would make it replace lists (containers, env) whole.

#include <optional>
#include <string>
#include <string_view>

#include "server/discovery.h"

namespace kubesched::server {

class OpenApi {
 public:
  explicit OpenApi(const Discovery& discovery);

  //! /openapi/v3.
  const std::string& Index() const { return index_; }
  //! /openapi/v3/<path> ("api/v1", "apis/apps/v1"), or nullopt when not served.
  std::optional<std::string> Document(std::string_view path) const;

 private:
  std::vector<std::pair<std::string, std::string>> documents_;  // path, document
  std::string index_;
};

}  // namespace kubesched::server
