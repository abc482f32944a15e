#include "server/access_review.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/json.h"
#include "server/api_handler.h"
#include "store/resources.h"
#include "util/clock.h"

namespace kubesched::server {
namespace {

api::json::Document Doc(std::string_view text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

std::string WriteTemp(std::string_view name, std::string_view text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(TokenFileTest, KubeApiserversCsv) {
  const std::string path = WriteTemp("kubesched_tokens.csv", "# comment\nt1,alice,u1\nt2,bob,u2,\"ops,dev\"\r\n\n");
  auto tokens = LoadTokenFile(path);
  ASSERT_TRUE(tokens.has_value()) << tokens.error();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].user, "alice");
  EXPECT_TRUE((*tokens)[0].groups.empty());
  EXPECT_EQ((*tokens)[1].groups, (std::vector<std::string>{"ops", "dev"}));
  EXPECT_EQ(LoadTokenFile(WriteTemp("kubesched_tokens2.csv", "t1,alice\n")).error(),
            std::filesystem::temp_directory_path().string() +
                "/kubesched_tokens2.csv: line 1: expected token,user,uid[,\"group1,group2\"]");
  EXPECT_EQ(LoadTokenFile(WriteTemp("kubesched_tokens3.csv", "t1,a,1\nt1,b,2\n")).error(),
            std::filesystem::temp_directory_path().string() + "/kubesched_tokens3.csv: line 2: a token listed twice");
  EXPECT_FALSE(LoadTokenFile("/nonexistent/tokens.csv").has_value());
}

class RbacTest : public ::testing::Test {
 protected:
  RbacTest() : store_(store::NewBuiltinStore(clock_)) {
    // NamespaceLifecycle: the namespace comes first.
    EXPECT_TRUE(store_->Create(*store_->FindResource("", "namespaces"), "",
                               Doc(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})")));
    Create("clusterroles", "", R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
      "metadata":{"name":"pod-reader"},
      "rules":[{"apiGroups":[""],"resources":["pods","pods/log"],"verbs":["get","list"]},
               {"apiGroups":["apps"],"resources":["*/scale"],"verbs":["update"]}]})");
    Create("roles", "team", R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
      "metadata":{"name":"one-config","namespace":"team"},
      "rules":[{"apiGroups":[""],"resources":["configmaps"],"resourceNames":["settings"],"verbs":["*"]}]})");
    Create("rolebindings", "team", R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
      "metadata":{"name":"sa-config","namespace":"team"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"one-config"},
      "subjects":[{"kind":"ServiceAccount","name":"builder"}]})");
    Create("rolebindings", "team", R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
      "metadata":{"name":"devs-read-pods","namespace":"team"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"pod-reader"},
      "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"devs"}]})");
  }
  void Create(std::string_view resource, std::string_view ns, std::string_view json) {
    auto created = store_->Create(*store_->FindResource("rbac.authorization.k8s.io", resource), ns, Doc(json));
    ASSERT_TRUE(created.has_value()) << created.error().message;
  }
  std::string Allows(AccessSubject who, AccessRequest what) {
    return RbacAllows(*store_, who, what).value_or("denied");
  }

  util::SystemClock clock_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(RbacTest, RolesAndBindingsAsUpstreamsAuthorizer) {
  const AccessSubject dev{"carol", {"devs", "system:authenticated"}};
  EXPECT_EQ(Allows(dev, {.verb = "list", .namespace_ = "team", .resource = "pods"}),
            R"(RBAC: allowed by RoleBinding "devs-read-pods/team" of ClusterRole "pod-reader" to Group "devs")");
  EXPECT_EQ(Allows(dev, {.verb = "get", .namespace_ = "team", .resource = "pods", .subresource = "log"}).substr(0, 18),
            "RBAC: allowed by R");
  EXPECT_EQ(Allows(dev, {.verb = "get", .namespace_ = "team", .resource = "pods", .subresource = "exec"}), "denied");
  EXPECT_EQ(Allows(dev, {.verb = "delete", .namespace_ = "team", .resource = "pods"}), "denied");
  EXPECT_EQ(Allows(dev, {.verb = "list", .namespace_ = "other", .resource = "pods"}), "denied");
  EXPECT_NE(
      Allows(
          dev,
          {.verb = "update", .namespace_ = "team", .group = "apps", .resource = "deployments", .subresource = "scale"}),
      "denied");
  // A ServiceAccount subject without a namespace is the binding's; resourceNames restrict.
  const AccessSubject sa{"system:serviceaccount:team:builder", {"system:serviceaccounts"}};
  EXPECT_EQ(Allows(sa, {.verb = "update", .namespace_ = "team", .resource = "configmaps", .name = "settings"}),
            R"(RBAC: allowed by RoleBinding "sa-config/team" of Role "one-config" to ServiceAccount "team/builder")");
  EXPECT_EQ(Allows(sa, {.verb = "update", .namespace_ = "team", .resource = "configmaps", .name = "other"}), "denied");
  EXPECT_EQ(Allows({"system:serviceaccount:other:builder", {}},
                   {.verb = "get", .namespace_ = "team", .resource = "configmaps", .name = "settings"}),
            "denied");
  // Non-resource paths come from cluster roles only; system:masters may do anything.
  EXPECT_EQ(Allows(dev, {.verb = "get", .path = "/metrics"}), "denied");
  EXPECT_EQ(Allows({"root", {"system:masters"}}, {.verb = "get", .path = "/metrics"}),
            R"(RBAC: allowed to group "system:masters")");
}

TEST_F(RbacTest, ReviewsOverTheApi) {
  ApiHandlerOptions options;
  options.tokens = {{"t1", "carol", "u1", {"devs"}}};
  ApiHandler handler(*store_, options);
  auto post = [&](std::string path, std::string body) {
    HttpRequest r;
    r.method = "POST";
    r.path = std::move(path);
    r.content_type = "application/json";
    r.accept = "application/json";
    r.body = std::move(body);
    return handler.Handle(r);
  };
  HttpResponse token = post("/apis/authentication.k8s.io/v1/tokenreviews",
                            R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"t1"}})");
  EXPECT_EQ(token.status, 201);
  auto doc = Doc(token.body);
  EXPECT_TRUE(doc["status"]["authenticated"].GetBool());
  EXPECT_EQ(api::json::View(doc["status"]["user"]["username"]), "carol");
  EXPECT_EQ(doc["status"]["user"]["groups"].Size(), 2u);  // devs, system:authenticated
  HttpResponse unknown = post("/apis/authentication.k8s.io/v1/tokenreviews", R"({"spec":{"token":"t2"}})");
  EXPECT_EQ(Doc(unknown.body)["status"].HasMember("authenticated"), false) << unknown.body;

  HttpResponse access = post("/apis/authorization.k8s.io/v1/subjectaccessreviews", R"({"spec":{"user":"carol",
    "groups":["devs"],"resourceAttributes":{"namespace":"team","verb":"get","resource":"pods"}}})");
  EXPECT_EQ(access.status, 201);
  EXPECT_TRUE(Doc(access.body)["status"]["allowed"].GetBool()) << access.body;
  HttpResponse denied = post("/apis/authorization.k8s.io/v1/subjectaccessreviews",
                             R"({"spec":{"user":"carol","nonResourceAttributes":{"path":"/metrics","verb":"get"}}})");
  EXPECT_FALSE(Doc(denied.body)["status"]["allowed"].GetBool()) << denied.body;

  EXPECT_EQ(post("/apis/authorization.k8s.io/v1/subjectaccessreviews", R"({"spec":{"user":"x"}})").status, 400);
  HttpRequest get;
  get.method = "GET";
  get.path = "/apis/authentication.k8s.io/v1/tokenreviews";
  get.accept = "application/json";
  EXPECT_EQ(handler.Handle(get).status, 405);

  // A LocalSubjectAccessReview is confined to its path's namespace.
  HttpResponse local = post("/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews",
                            R"({"spec":{"user":"carol","groups":["devs"],
    "resourceAttributes":{"namespace":"team","verb":"get","resource":"pods"}}})");
  EXPECT_EQ(local.status, 201) << local.body;
  EXPECT_TRUE(Doc(local.body)["status"]["allowed"].GetBool()) << local.body;
  EXPECT_EQ(api::json::View(Doc(local.body)["kind"]), "LocalSubjectAccessReview");
  EXPECT_EQ(
      post("/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews",
           R"({"spec":{"user":"carol","resourceAttributes":{"namespace":"other","verb":"get","resource":"pods"}}})")
          .status,
      400);
  EXPECT_EQ(post("/apis/authorization.k8s.io/v1/localsubjectaccessreviews", R"({"spec":{}})").status, 404);
}

// The requester's own reviews (`kubectl auth can-i`, `auth can-i --list`, `auth whoami`): the
// test bed serves every request, so every access is allowed; the user is a known token's.
TEST_F(RbacTest, SelfReviewsAllowEverythingAndNameTheRequester) {
  ApiHandlerOptions options;
  options.tokens = {{"t1", "carol", "u1", {"devs"}}};
  ApiHandler handler(*store_, options);
  auto post = [&](std::string path, std::string body, std::string token = "") {
    HttpRequest r;
    r.method = "POST";
    r.path = std::move(path);
    r.content_type = "application/json";
    r.accept = "application/json";
    r.body = std::move(body);
    if (!token.empty()) r.authorization = "Bearer " + token;
    return handler.Handle(r);
  };
  HttpResponse can = post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                          R"({"spec":{"resourceAttributes":{"namespace":"team","verb":"delete","resource":"nodes"}}})");
  EXPECT_EQ(can.status, 201) << can.body;
  EXPECT_TRUE(Doc(can.body)["status"]["allowed"].GetBool()) << can.body;
  HttpResponse rules =
      post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", R"({"spec":{"namespace":"default"}})");
  EXPECT_EQ(rules.status, 201) << rules.body;
  EXPECT_EQ(api::json::View(Doc(rules.body)["status"]["resourceRules"][0]["verbs"][0]), "*") << rules.body;
  HttpResponse anonymous = post("/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}");
  EXPECT_EQ(anonymous.status, 201) << anonymous.body;
  EXPECT_EQ(api::json::View(Doc(anonymous.body)["status"]["userInfo"]["username"]), "system:anonymous");
  HttpResponse carol = post("/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", "t1");
  EXPECT_EQ(api::json::View(Doc(carol.body)["status"]["userInfo"]["username"]), "carol");
  EXPECT_EQ(Doc(carol.body)["status"]["userInfo"]["groups"].Size(), 2u);  // devs, system:authenticated

  // Discovery lists every review, create only.
  HttpRequest get;
  get.method = "GET";
  get.path = "/apis/authorization.k8s.io/v1";
  get.accept = "application/json";
  HttpResponse list = handler.Handle(get);
  ASSERT_EQ(list.status, 200) << list.body;
  auto resources = Doc(list.body);
  std::vector<std::string> names;
  for (const auto& r : resources["resources"].GetArray()) {
    names.emplace_back(api::json::View(r["name"]));
    ASSERT_EQ(r["verbs"].Size(), 1u);
    EXPECT_EQ(api::json::View(r["verbs"][0]), "create");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"localsubjectaccessreviews", "selfsubjectaccessreviews",
                                             "selfsubjectrulesreviews", "subjectaccessreviews"}));
}

}  // namespace
}  // namespace kubesched::server
