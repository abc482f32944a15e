#pragma once
// The test bed's TokenReview and SubjectAccessReview, for components that delegate
// authentication and authorization to it as they would to an API server (kubesched run's secure
// port guarding /metrics). The test bed's own API stays open; these only answer questions:
// - TokenReview: the tokens of a static token file (--token-auth-file, kube-apiserver's CSV:
//   token,user,uid,"group1,group2"); an authenticated user is in system:authenticated too.
// - SubjectAccessReview: RBAC over the stored roles and bindings, as upstream's RBAC authorizer
//   decides: a ClusterRoleBinding grants its ClusterRole everywhere, a RoleBinding its Role or
//   ClusterRole in its namespace; subjects are Users, Groups and ServiceAccounts
//   (system:serviceaccount:<namespace>:<name>); a rule matches by verbs, apiGroups, resources
//   ("pods/status", "*/scale", "*"), resourceNames, and nonResourceURLs (exact, or a prefix
//   ending in "*"). The group system:masters may do anything, as upstream.

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace kubesched::server {

struct StaticToken {
  std::string token;
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
};

//! Reads a static token file; the error names the file and line (a line with fewer than three
//! fields, an empty token or user, a token listed twice).
std::expected<std::vector<StaticToken>, std::string> LoadTokenFile(const std::string& path);

//! Who asks, and for what.
struct AccessSubject {
  std::string user;
  std::vector<std::string> groups;
};
struct AccessRequest {
  std::string verb;  //!< "get", "list", ...; for a path, the HTTP method in lower case
  // A resource request:
  std::string namespace_;
  std::string group;
  std::string resource;
  std::string subresource;
  std::string name;
  // Or a non-resource request (`resource` empty):
  std::string path;
};

//! Whether RBAC in `store` allows it, and why (upstream's reason: `RBAC: allowed by
//! ClusterRoleBinding "b" of ClusterRole "r" to User "u"`), or nullopt when nothing does.
std::optional<std::string> RbacAllows(const store::Store& store, const AccessSubject& who, const AccessRequest& what);

//! The response bodies of POST .../tokenreviews and .../subjectaccessreviews for a request body;
//! an error message for a body that is not such a review (a 400).
std::expected<std::string, std::string> ReviewToken(const std::vector<StaticToken>& tokens, std::string_view body);
std::expected<std::string, std::string> ReviewAccess(const store::Store& store, std::string_view body);
//! POST .../namespaces/{ns}/localsubjectaccessreviews: a SubjectAccessReview confined to `namespace_`
//! (upstream refuses a spec.resourceAttributes.namespace that differs: a 400 here).
std::expected<std::string, std::string> ReviewLocalAccess(const store::Store& store, std::string_view namespace_,
                                                          std::string_view body);

//! The requester's own reviews. The test bed's API authorizes every request (as upstream's
//! AlwaysAllow authorizer) and does not authenticate its clients: the requester is `who` (the
//! user of a bearer token from --token-auth-file, else system:anonymous). SelfSubjectAccessReview:
//! allowed; SelfSubjectRulesReview: every verb on every resource and path; SelfSubjectReview
//! (`kubectl auth whoami`): `who`. An error message for a body that is not such a review.
std::expected<std::string, std::string> ReviewSelf(std::string_view resource, const AccessSubject& who,
                                                   std::string_view body);

}  // namespace kubesched::server
