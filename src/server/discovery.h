#pragma once
// API discovery documents, built from the store's resource list: what kubectl reads to map
// "po" to /api/v1/namespaces/<ns>/pods. Both forms are served: the per-group documents
// (/api -> APIVersions, /apis -> APIGroupList, /apis/<g> -> APIGroup, /api/v1 and
// /apis/<g>/<v> -> APIResourceList) and the aggregated APIGroupDiscoveryList (apidiscovery.k8s.io
// v2 and v2beta1) that kubectl 1.32 asks /api and /apis for first, saving a request per group
// (client-go discovery/aggregated_discovery.go).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/media_type.h"
#include "store/store.h"

namespace kubesched::server {

//! The Kubernetes version the test bed reports (/version) and follows.
inline constexpr std::string_view kGitVersion = "v1.32.0-kubesched";
inline constexpr std::string_view kMajor = "1";
inline constexpr std::string_view kMinor = "32";

//! A subresource as discovery publishes it: the kind its requests and responses carry and the
//! verbs it takes (pods/binding: Binding, create; deployments/scale: autoscaling/v1 Scale, get,
//! patch, update; */status: the parent's kind, get, patch, update).
struct SubresourceInfo {
  std::string group;  //!< the response kind's group
  std::string version;
  std::string kind;
  std::vector<std::string> verbs;
};
SubresourceInfo DescribeSubresource(const store::ResourceType& type, std::string_view subresource);

//! The verbs every stored resource takes.
const std::vector<std::string>& ResourceVerbs();

//! The review resources, answered and not stored (server/access_review.h): authentication.k8s.io/v1
//! tokenreviews and selfsubjectreviews, authorization.k8s.io/v1 subjectaccessreviews,
//! selfsubjectaccessreviews, selfsubjectrulesreviews and localsubjectaccessreviews. Create only.
const std::vector<const store::ResourceType*>& ReviewResources();
//! Whether `type` is one of ReviewResources().
bool IsReview(const store::ResourceType& type);
//! The verbs discovery lists for `type`: {"create"} for a review, else ResourceVerbs().
const std::vector<std::string>& VerbsOf(const store::ResourceType& type);

class Discovery {
 public:
  //! Publishes `types` and, after them, ReviewResources().
  explicit Discovery(std::vector<const store::ResourceType*> types);

  //! /version.
  static std::string Version();
  //! /api (legacy form): APIVersions. `server_address` is host:port.
  std::string LegacyRoot(std::string_view server_address) const;
  //! /apis (legacy form): APIGroupList.
  std::string GroupList() const;
  //! /apis/<group>: APIGroup, or nullopt when no resource is in that group.
  std::optional<std::string> Group(std::string_view group) const;
  //! /api/v1 or /apis/<group>/<version>: APIResourceList, or nullopt when not served.
  std::optional<std::string> ResourceList(std::string_view group, std::string_view version) const;
  //! /api (core = true) or /apis (core = false) as APIGroupDiscoveryList in `format`.
  std::string Aggregated(bool core, DiscoveryFormat format) const;

  //! Served group/versions: "v1", "apps/v1", ... in discovery order.
  const std::vector<std::string>& GroupVersions() const { return group_versions_; }
  //! The resources of one group/version, in discovery order.
  std::vector<const store::ResourceType*> ResourcesOf(std::string_view group, std::string_view version) const;

 private:
  std::vector<const store::ResourceType*> types_;
  std::vector<std::string> group_versions_;
};

}  // namespace kubesched::server
