#include "client/delegated_auth.h"

#include <gtest/gtest.h>

#include "api/json.h"
#include "testing/api_test_bed.h"

namespace kubesched::client {

using kubesched::testing::ApiTestBed;
namespace {

api::json::Document Doc(std::string_view text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

// A test bed that knows two tokens, and RBAC that lets alice read /metrics and /debug/*.
class DelegatedAuthTest : public ::testing::Test {
 protected:
  DelegatedAuthTest() : bed_({}, nullptr, Options()) {
    store::Store& s = bed_.store();
    EXPECT_TRUE(s.Create(*s.FindResource("rbac.authorization.k8s.io", "clusterroles"), "", Doc(R"({
      "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"reader"},
      "rules":[{"nonResourceURLs":["/metrics","/debug/*"],"verbs":["get"]}]})")));
    EXPECT_TRUE(s.Create(*s.FindResource("rbac.authorization.k8s.io", "clusterrolebindings"), "", Doc(R"({
      "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"alice-reads"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"reader"},
      "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"alice"}]})")));
    RestConfig config;
    config.server = bed_.Url();
    rest_ = std::move(*RestClient::Create(config));
  }
  static server::ApiHandlerOptions Options() {
    server::ApiHandlerOptions o;
    o.tokens = {{"alice-token", "alice", "u1", {"team-a"}}, {"bob-token", "bob", "u2", {}}};
    return o;
  }

  ApiTestBed bed_;
  std::unique_ptr<RestClient> rest_;
};

TEST_F(DelegatedAuthTest, TokensAreReviewedAndPathsAuthorized) {
  DelegatedAuth auth(rest_.get(), rest_.get());
  auto check = [&](std::string_view header, std::string_view method, std::string_view path) {
    AuthDecision d = auth.Check(header, method, path);
    return std::to_string(d.status) + (d.message.empty() ? "" : " " + d.message);
  };
  // The probes are always allowed, exactly (not what is below them).
  EXPECT_EQ(check("", "GET", "/healthz"), "0");
  EXPECT_EQ(check("", "GET", "/readyz"), "0");
  EXPECT_EQ(check("", "GET", "/livez"), "0");
  EXPECT_EQ(check("", "GET", "/readyz/ping"),
            R"(403 forbidden: User "system:anonymous" cannot get path "/readyz/ping")");
  EXPECT_EQ(check("", "GET", "/metrics"), R"(403 forbidden: User "system:anonymous" cannot get path "/metrics")");
  EXPECT_EQ(check("Bearer alice-token", "GET", "/metrics"), "0");
  EXPECT_EQ(check("bearer alice-token", "GET", "/debug/pprof/heap"), "0");
  EXPECT_EQ(check("Bearer alice-token", "POST", "/metrics"),
            R"(403 forbidden: User "alice" cannot post path "/metrics")");
  EXPECT_EQ(check("Bearer bob-token", "GET", "/metrics"), R"(403 forbidden: User "bob" cannot get path "/metrics")");
  EXPECT_EQ(check("Bearer nobody", "GET", "/metrics"), "401 Unauthorized");
  EXPECT_EQ(check("Basic YWxpY2U6cHc=", "GET", "/metrics"), "401 Unauthorized");
  EXPECT_EQ(check("Bearer ", "GET", "/metrics"), "401 Unauthorized");
}

// Answers are cached for their TTL: a binding removed meanwhile takes effect once it expires.
TEST_F(DelegatedAuthTest, AnswersAreCachedForTheirTtl) {
  DelegatedAuthOptions cached;
  cached.authorized_cache_ttl = std::chrono::hours(1);
  DelegatedAuth slow(rest_.get(), rest_.get(), cached);
  DelegatedAuthOptions uncached;
  uncached.token_cache_ttl = uncached.authorized_cache_ttl = uncached.unauthorized_cache_ttl =
      std::chrono::milliseconds(0);
  DelegatedAuth fresh(rest_.get(), rest_.get(), uncached);
  EXPECT_EQ(slow.Check("Bearer alice-token", "GET", "/metrics").status, 0);
  EXPECT_EQ(fresh.Check("Bearer alice-token", "GET", "/metrics").status, 0);
  store::Store& s = bed_.store();
  ASSERT_TRUE(s.Delete(*s.FindResource("rbac.authorization.k8s.io", "clusterrolebindings"), "", "alice-reads", {}));
  EXPECT_EQ(slow.Check("Bearer alice-token", "GET", "/metrics").status, 0);
  EXPECT_EQ(fresh.Check("Bearer alice-token", "GET", "/metrics").status, 403);
}

// Without kubeconfigs outside a cluster (no clients), as upstream: a token is not looked up, so
// the request is anonymous, and nothing but the always-allowed paths is allowed.
TEST_F(DelegatedAuthTest, WithoutReviewersOnlyTheAlwaysAllowedPathsAreServed) {
  DelegatedAuth none(nullptr, nullptr);
  EXPECT_EQ(none.Check("Bearer alice-token", "GET", "/metrics").message,
            R"(forbidden: User "system:anonymous" cannot get path "/metrics")");
  EXPECT_EQ(none.Check("", "GET", "/healthz").status, 0);
  DelegatedAuthOptions prefixes;
  prefixes.always_allow_paths = {"/metrics*"};
  EXPECT_EQ(DelegatedAuth(nullptr, nullptr, prefixes).Check("", "GET", "/metrics/resources").status, 0);
}

// A reviewer that cannot be reached: the request is refused (401 for a token, 500 for access).
TEST(DelegatedAuthUnreachable, ReviewsThatFailRefuseTheRequest) {
  RestConfig config;
  config.server = "http://127.0.0.1:1";
  config.timeout = std::chrono::milliseconds(2000);
  auto rest = RestClient::Create(config);
  ASSERT_TRUE(rest.has_value());
  DelegatedAuth auth(rest->get(), rest->get());
  EXPECT_EQ(auth.Check("Bearer t", "GET", "/metrics").status, 401);
  AuthDecision d = auth.Check("", "GET", "/metrics");
  EXPECT_EQ(d.status, 500);
  EXPECT_TRUE(d.message.starts_with("Internal Server Error: ")) << d.message;
}

}  // namespace
}  // namespace kubesched::client
