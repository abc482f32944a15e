#include "server/ui_handler.h"

#include <gtest/gtest.h>

#include "api/json.h"
#include "server/api_handler.h"
#include "server/ui_test_requests.h"
#include "store/resources.h"
#include "util/clock.h"

namespace kubesched::server {
namespace {

class UiHandlerTest : public ::testing::Test {
 protected:
  HttpResponse Call(std::string method, std::string path, std::string body = "") {
    return UiRequest(ui_, std::move(method), std::move(path), std::move(body));
  }
  bool PodExists(std::string_view ns, std::string_view name) {
    return Call("GET", "/api/v1/namespaces/" + std::string(ns) + "/pods/" + std::string(name)).status == 200;
  }

  util::SystemClock clock_;
  std::unique_ptr<store::Store> store_ = store::NewBuiltinStore(clock_);
  ApiHandler api_{*store_, ApiHandlerOptions{}};
  UiHandler ui_{api_, *store_};
};

constexpr std::string_view kPods = R"(apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: team}
spec:
  containers: [{name: c, image: busybox}]
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
)";

TEST_F(UiHandlerTest, ServesTheEmbeddedFilesWithAContentSecurityPolicy) {
  struct Case {
    std::string path;
    std::string type;
  };
  for (const Case& c : std::vector<Case>{{"/ui/", "text/html"},
                                         {"/ui/index.html", "text/html"},
                                         {"/ui/app.js", "text/javascript"},
                                         {"/ui/style.css", "text/css"}}) {
    SCOPED_TRACE(c.path);
    HttpResponse r = Call("GET", c.path);
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.content_type.starts_with(c.type)) << r.content_type;
    EXPECT_FALSE(r.body.empty());
    EXPECT_EQ(ResponseHeader(r, "Content-Security-Policy").substr(0, 19), "default-src 'self';");
  }
  HttpResponse redirect = Call("GET", "/ui");
  EXPECT_EQ(redirect.status, 301);
  EXPECT_EQ(ResponseHeader(redirect, "Location"), "/ui/");
  EXPECT_EQ(Call("GET", "/ui/missing.js").status, 404);
  EXPECT_EQ(Call("POST", "/ui/app.js").status, 405);
  EXPECT_EQ(Call("GET", "/ui/apply").status, 405);
  // Everything else is the API's.
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods").status, 200);
}

TEST_F(UiHandlerTest, WithoutTheUiTheApiAnswers404) {
  HttpRequest r;
  r.method = "GET";
  r.path = "/ui/";
  EXPECT_EQ(api_.Handle(r).status, 404);
}

TEST_F(UiHandlerTest, AppliesAndDeletesPastedManifests) {
  HttpResponse created = Call("POST", "/ui/apply", std::string(kPods));
  ASSERT_EQ(created.status, 200) << created.body;
  api::json::Document doc;
  ASSERT_TRUE(api::json::Parse(created.body, doc));
  const api::json::Value* list = api::json::Find(doc, "created");
  ASSERT_TRUE(list != nullptr && list->IsArray());
  EXPECT_EQ(list->Size(), 3u) << created.body;
  EXPECT_TRUE(PodExists("team", "a"));
  EXPECT_TRUE(PodExists("default", "b"));

  // Again: b exists, so nothing is written (a already exists too: the first refusal is reported).
  HttpResponse again = Call("POST", "/ui/apply", std::string(kPods));
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_NE(again.body.find("manifest: document"), std::string::npos) << again.body;

  HttpResponse deleted = Call("POST", "/ui/delete",
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n---\n"
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: team}\n");
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_FALSE(PodExists("default", "b"));
}

TEST_F(UiHandlerTest, ValidatesEveryObjectBeforeCreatingAny) {
  struct Case {
    std::string name;
    std::string body;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"undecodable", "apiVersion: v1\nkind: Pod\nmetadata: [", 400, "manifest"},
      {"empty", "", 400, "no object"},
      {"not served", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n", 422, "not served"},
      {"invalid second object",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c, image: i}]}\n---\n"
       "apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: i}]}\n",
       422, "document 2"},
      {"twice",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c, image: i}]}\n---\n"
       "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c, image: i}]}\n",
       409, "duplicate"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    HttpResponse r = Call("POST", "/ui/apply", c.body);
    EXPECT_EQ(r.status, c.status) << r.body;
    EXPECT_NE(r.body.find(c.says), std::string::npos) << r.body;
    EXPECT_FALSE(PodExists("default", "ok"));
  }
}

}  // namespace
}  // namespace kubesched::server
