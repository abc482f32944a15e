#include "server/request_info.h"

#include <gtest/gtest.h>

namespace kubesched::server {
namespace {

TEST(RequestInfoTest, RoutesPathsAndMethods) {
  struct Case {
    std::string name;
    std::string method;
    std::string path;
    std::string watch;
    PathKind kind;
    std::string group, version, ns, resource, object, subresource;
    Verb verb;
    bool namespaced_path;
  };
  const std::vector<Case> cases = {
      {"core list all namespaces", "GET", "/api/v1/pods", "", PathKind::kResource, "", "v1", "", "pods", "", "",
       Verb::kList, false},
      {"core get namespaced", "GET", "/api/v1/namespaces/default/pods/web", "", PathKind::kResource, "", "v1",
       "default", "pods", "web", "", Verb::kGet, true},
      {"watch by query", "GET", "/api/v1/namespaces/default/pods", "true", PathKind::kResource, "", "v1", "default",
       "pods", "", "", Verb::kWatch, true},
      {"watch by query 1", "GET", "/api/v1/nodes", "1", PathKind::kResource, "", "v1", "", "nodes", "", "",
       Verb::kWatch, false},
      {"watch=false lists", "GET", "/api/v1/nodes", "false", PathKind::kResource, "", "v1", "", "nodes", "", "",
       Verb::kList, false},
      // What the official Python client sends (str(True)), and upstream's other spellings.
      {"watch=True", "GET", "/api/v1/nodes", "True", PathKind::kResource, "", "v1", "", "nodes", "", "", Verb::kWatch,
       false},
      {"watch=T", "GET", "/api/v1/nodes", "T", PathKind::kResource, "", "v1", "", "nodes", "", "", Verb::kWatch, false},
      {"watch=FALSE lists", "GET", "/api/v1/nodes", "FALSE", PathKind::kResource, "", "v1", "", "nodes", "", "",
       Verb::kList, false},
      {"watch=0 lists", "GET", "/api/v1/nodes", "0", PathKind::kResource, "", "v1", "", "nodes", "", "", Verb::kList,
       false},
      {"watch prefix", "GET", "/api/v1/watch/namespaces/ns/pods/p", "", PathKind::kResource, "", "v1", "ns", "pods",
       "p", "", Verb::kWatch, true},
      {"subresource", "POST", "/api/v1/namespaces/ns/pods/p/binding", "", PathKind::kResource, "", "v1", "ns", "pods",
       "p", "binding", Verb::kCreate, true},
      {"group resource", "PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", "", PathKind::kResource, "apps",
       "v1", "ns", "deployments", "d", "scale", Verb::kPatch, true},
      {"namespace object", "GET", "/api/v1/namespaces/kube-system", "", PathKind::kResource, "", "v1", "", "namespaces",
       "kube-system", "", Verb::kGet, false},
      {"namespace status", "PUT", "/api/v1/namespaces/kube-system/status", "", PathKind::kResource, "", "v1", "",
       "namespaces", "kube-system", "status", Verb::kUpdate, false},
      {"cluster-scoped delete", "DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/high", "", PathKind::kResource,
       "scheduling.k8s.io", "v1", "", "priorityclasses", "high", "", Verb::kDelete, false},
      {"deletecollection", "DELETE", "/api/v1/namespaces/ns/pods", "", PathKind::kResource, "", "v1", "ns", "pods", "",
       "", Verb::kDeleteCollection, true},
      {"create", "POST", "/api/v1/namespaces/ns/pods", "", PathKind::kResource, "", "v1", "ns", "pods", "", "",
       Verb::kCreate, true},
      {"legacy root", "GET", "/api", "", PathKind::kLegacyRoot, "", "", "", "", "", "", Verb::kGet, false},
      {"groups root", "GET", "/apis", "", PathKind::kGroupsRoot, "", "", "", "", "", "", Verb::kGet, false},
      {"group", "GET", "/apis/apps", "", PathKind::kGroup, "apps", "", "", "", "", "", Verb::kGet, false},
      {"group version", "GET", "/apis/apps/v1", "", PathKind::kGroupVersion, "apps", "v1", "", "", "", "", Verb::kGet,
       false},
      {"core version", "GET", "/api/v1/", "", PathKind::kGroupVersion, "", "v1", "", "", "", "", Verb::kGet, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto info =
        ParseRequestInfo(c.method, c.path, c.watch.empty() ? std::nullopt : std::optional<std::string_view>(c.watch));
    ASSERT_TRUE(info.has_value()) << info.error().message;
    EXPECT_EQ(info->kind, c.kind);
    EXPECT_EQ(info->group, c.group);
    EXPECT_EQ(info->version, c.version);
    EXPECT_EQ(info->namespace_, c.ns);
    EXPECT_EQ(info->resource, c.resource);
    EXPECT_EQ(info->name, c.object);
    EXPECT_EQ(info->subresource, c.subresource);
    if (c.kind == PathKind::kResource) {
      EXPECT_EQ(VerbName(info->verb), VerbName(c.verb));
    }
    EXPECT_EQ(info->namespaced_path, c.namespaced_path);
  }
}

TEST(RequestInfoTest, RejectsWhatIsNotAnApiPath) {
  struct Case {
    std::string name, method, path;
    int code;
  };
  const std::vector<Case> cases = {
      {"outside the API", "GET", "/metrics", 404},
      {"empty", "GET", "/", 404},
      {"too deep", "GET", "/api/v1/namespaces/ns/pods/p/status/extra", 404},
      {"unknown method", "OPTIONS", "/api/v1/pods", 405},
      {"write to discovery", "POST", "/api/v1", 405},
      {"write through the watch prefix", "POST", "/api/v1/watch/pods", 405},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto info = ParseRequestInfo(c.method, c.path, std::nullopt);
    ASSERT_FALSE(info.has_value());
    EXPECT_EQ(info.error().code, c.code);
  }
}

}  // namespace
}  // namespace kubesched::server
