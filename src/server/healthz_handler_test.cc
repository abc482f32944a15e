// The secure port's endpoints without sockets: each path's status and body as upstream's healthz
// package writes them, before and after readiness.

#include "server/healthz_handler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace kubesched::server {
namespace {

HttpRequest Get(std::string path, std::multimap<std::string, std::string> query = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = std::move(path);
  r.query = std::move(query);
  return r;
}

class HealthzHandlerTest : public ::testing::Test {
 protected:
  HealthzHandlerTest()
      : handler_([this] {
          HealthzOptions o;
          o.readyz.push_back({"sched-handler-sync", [this]() -> std::expected<void, std::string> {
                                if (synced_.load()) return {};
                                return std::unexpected("waiting for handlers to sync");
                              }});
          o.metrics = [] { return std::string("# TYPE x counter\nx 1\n"); };
          return o;
        }()) {}

  std::atomic<bool> synced_{false};
  HealthzHandler handler_;
};

TEST_F(HealthzHandlerTest, EachPathBeforeAndAfterReadiness) {
  struct Case {
    std::string name;
    HttpRequest request;
    bool synced;
    int status;
    std::string body;
  };
  const Case cases[] = {
      {"healthz", Get("/healthz"), false, 200, "ok"},
      {"livez", Get("/livez"), false, 200, "ok"},
      {"healthz verbose", Get("/healthz", {{"verbose", ""}}), false, 200, "[+]ping ok\nhealthz check passed\n"},
      {"readyz before sync", Get("/readyz"), false, 500,
       "[+]ping ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n"},
      {"readyz's check alone before sync", Get("/readyz/sched-handler-sync"), false, 500,
       "internal server error: waiting for handlers to sync\n"},
      {"readyz excluding the failing check", Get("/readyz", {{"exclude", "sched-handler-sync"}}), false, 200, "ok"},
      {"readyz after sync", Get("/readyz"), true, 200, "ok"},
      {"readyz verbose after sync", Get("/readyz", {{"verbose", "1"}}), true, 200,
       "[+]ping ok\n[+]sched-handler-sync ok\nreadyz check passed\n"},
      {"readyz's check alone after sync", Get("/readyz/sched-handler-sync"), true, 200, "ok"},
      {"ping alone", Get("/livez/ping"), false, 200, "ok"},
      {"metrics", Get("/metrics"), false, 200, "# TYPE x counter\nx 1\n"},
      {"unknown check", Get("/readyz/nope"), true, 404, "404 page not found\n"},
      {"unknown path", Get("/healthzz"), true, 404, "404 page not found\n"},
      {"root", Get("/"), true, 404, "404 page not found\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    synced_.store(c.synced);
    HttpResponse r = handler_.Handle(c.request);
    EXPECT_EQ(r.status, c.status);
    EXPECT_EQ(r.body, c.body);
  }
}

TEST_F(HealthzHandlerTest, MetricsIsPrometheusTextAndOtherMethodsAreRefused) {
  HttpResponse metrics = handler_.Handle(Get("/metrics"));
  EXPECT_EQ(metrics.content_type, kMetricsContentType);
  HttpRequest post = Get("/healthz");
  post.method = "POST";
  EXPECT_EQ(handler_.Handle(post).status, 405);
}

TEST(HealthzHandler, WithoutMetricsThereIsNoMetricsPath) {
  HealthzHandler handler(HealthzOptions{});
  EXPECT_EQ(handler.Handle(Get("/metrics")).status, 404);
  EXPECT_EQ(handler.Handle(Get("/readyz")).body, "ok");
}

}  // namespace
}  // namespace kubesched::server
