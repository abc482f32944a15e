// The HTTP layer under load and abuse, on loopback: slow and idle connections, hundreds of open
// watches, bursts of connections, smuggling and pipelining, header limits, connection limits,
// shutdown with a slow peer. Each test bounds its waits generously: what it checks is that an
// answer comes and what it says, not how fast a loaded machine gives it (the figures are printed).

#include "server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "server/api_handler.h"
#include "server/healthz_handler.h"
#include "store/resources.h"
#include "testing/raw_http.h"
#include "util/clock.h"

namespace kubesched::server {
namespace {

using kubesched::testing::Burst;
using kubesched::testing::Percentile;
using kubesched::testing::RawConnection;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// Answers every request with its method, path and body, and counts them.
class EchoHandler final : public Handler {
 public:
  HttpResponse Handle(const HttpRequest& request) override {
    ++calls;
    {
      std::lock_guard lock(mu);
      paths.push_back(request.path);
    }
    std::string query;
    for (const auto& [k, v] : request.query) query += fmt::format("[{}={}]", k, v);
    return TextResponse(200, fmt::format("{} {}{} body={}", request.method, request.path, query, request.body));
  }
  HttpResponse Refused(int status, std::string_view detail) const override {
    return TextResponse(status, fmt::format("refused {}: {}", status, detail));
  }
  size_t MaxBodyBytes() const override { return 1024; }
  void Stop() override {}

  std::atomic<int> calls{0};
  std::mutex mu;
  std::vector<std::string> paths;
};

// A server on a free loopback port, served on its own thread until the end of the test.
class Serving {
 public:
  Serving(Handler& handler, HttpServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    auto bound = HttpServer::Bind(handler, options);
    if (!bound) throw std::runtime_error(bound.error());
    server_ = std::move(*bound);
    done_ = std::async(std::launch::async, [s = server_.get()] { return s->Run(); });
  }
  ~Serving() { Stop(); }
  //! Shuts down and waits for Run to return; how long that took.
  milliseconds Stop() {
    if (!done_.valid()) return milliseconds(0);
    const auto start = Clock::now();
    server_->Shutdown();
    done_.get();
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }
  int Port() const { return server_->Port(); }
  HttpServer& Server() { return *server_; }

 private:
  std::unique_ptr<HttpServer> server_;
  std::future<bool> done_;
};

RawConnection Connect(int port) {
  auto c = RawConnection::Connect(port);
  if (!c) throw std::runtime_error("cannot connect");
  return std::move(*c);
}

// Waits (up to a minute) until the server has `n` open connections: a connection counts once
// it is accepted, so a test does not race the accept loop.
void AwaitConnections(HttpServer& server, size_t n) {
  const auto give_up = Clock::now() + seconds(60);
  while (server.Connections() < n && Clock::now() < give_up) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_GE(server.Connections(), n);
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  EchoHandler handler;
  Serving serving(handler, {});
  RawConnection c = Connect(serving.Port());
  ASSERT_TRUE(
      c.Send("GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two?a=1&b=x%20y+z HTTP/1.1\r\nHost: x\r\n\r\n"
             "POST /three HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"));
  ASSERT_TRUE(c.ReadUntil("HTTP/1.1 200", 3, seconds(60))) << c.Received();
  const std::string got = c.Take();
  const size_t one = got.find("GET /one body=");
  const size_t two = got.find("GET /two[a=1][b=x y z] body=");
  const size_t three = got.find("POST /three body=abc");
  ASSERT_NE(one, std::string::npos) << got;
  ASSERT_NE(two, std::string::npos) << got;
  ASSERT_NE(three, std::string::npos) << got;
  EXPECT_LT(one, two);
  EXPECT_LT(two, three);
  EXPECT_FALSE(c.Closed());  // kept alive
}

// RFC 9112 §6.1 and §6.3: a request with both Content-Length and Transfer-Encoding, with
// conflicting lengths, or with a transfer coding that does not end in chunked cannot be framed:
// 400, and the connection closes, so the bytes behind it are never read as a request.
TEST(HttpServer, AmbiguousFramingIsRefusedAndNothingIsSmuggled) {
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"length and chunked",
       "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
       "0\r\n\r\n" +
           smuggled},
      {"chunked and length",
       "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
       "0\r\n\r\n" +
           smuggled},
      {"two lengths", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
      {"a list of lengths", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0, 3\r\n\r\nabc" + smuggled},
      {"gzip not chunked", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n" + smuggled},
      {"chunked twice",
       "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n" + smuggled},
      {"a bad length", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc" + smuggled},
  };
  EchoHandler handler;
  Serving serving(handler, {});
  for (const auto& [name, bytes] : cases) {
    RawConnection c = Connect(serving.Port());
    ASSERT_TRUE(c.Send(bytes)) << name;
    EXPECT_TRUE(c.ReadToClose(seconds(60))) << name;
    const std::string got = c.Take();
    EXPECT_TRUE(got.starts_with("HTTP/1.1 400 ")) << name << ": " << got;
    EXPECT_NE(got.find("Connection: close"), std::string::npos) << name << ": " << got;
    EXPECT_EQ(got.find("HTTP/1.1", 1), std::string::npos) << name << ": a second response: " << got;
  }
  EXPECT_EQ(handler.calls.load(), 0);

  // The same length twice is one length (RFC 9110 §8.6 allows it): answered, and what follows
  // the body is the next request.
  RawConnection c = Connect(serving.Port());
  ASSERT_TRUE(c.Send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc" + smuggled));
  ASSERT_TRUE(c.ReadUntil("HTTP/1.1 200", 2, seconds(60))) << c.Received();
  EXPECT_NE(c.Received().find("POST /b body=abc"), std::string::npos);
  EXPECT_NE(c.Received().find("GET /smuggled body="), std::string::npos);
}

TEST(HttpServer, ChunkedBodiesAndExpectContinue) {
  EchoHandler handler;
  Serving serving(handler, {});
  RawConnection c = Connect(serving.Port());
  ASSERT_TRUE(
      c.Send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"));
  ASSERT_TRUE(c.ReadUntil("body=abcde", 1, seconds(60))) << c.Received();
  c.Take();
  // curl waits for 100 Continue before it sends a large body.
  ASSERT_TRUE(c.Send("PUT /d HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"));
  ASSERT_TRUE(c.ReadUntil("HTTP/1.1 100 Continue\r\n\r\n", 1, seconds(60))) << c.Received();
  ASSERT_TRUE(c.Send("hi"));
  ASSERT_TRUE(c.ReadUntil("PUT /d body=hi", 1, seconds(60))) << c.Received();
  c.Take();
  // Past the handler's limit: 413 from the declared length, without reading the body.
  ASSERT_TRUE(c.Send("PUT /e HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nContent-Type: text/x\r\n\r\n"));
  ASSERT_TRUE(c.ReadToClose(seconds(60)));
  EXPECT_TRUE(c.Received().starts_with("HTTP/1.1 413 ")) << c.Received();
  EXPECT_NE(c.Received().find("refused 413: text/x"), std::string::npos) << c.Received();
  // A chunked body past the limit is cut where it passes it.
  RawConnection d = Connect(serving.Port());
  ASSERT_TRUE(d.Send("POST /f HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" +
                     std::string(2048, 'x') + "\r\n"));
  ASSERT_TRUE(d.ReadToClose(seconds(60)));
  EXPECT_TRUE(d.Received().starts_with("HTTP/1.1 413 ")) << d.Received();
}

TEST(HttpServer, HeaderLimits) {
  EchoHandler handler;
  HttpServerOptions options;
  options.max_header_bytes = 4096;
  options.max_header_fields = 20;
  Serving serving(handler, options);
  RawConnection big = Connect(serving.Port());
  ASSERT_TRUE(big.Send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8192, 'a') + "\r\n\r\n"));
  ASSERT_TRUE(big.ReadToClose(seconds(60)));
  EXPECT_TRUE(big.Received().starts_with("HTTP/1.1 431 ")) << big.Received();

  std::string fields;
  for (int i = 0; i < 21; ++i) fields += fmt::format("X-F{}: v\r\n", i);
  RawConnection many = Connect(serving.Port());
  ASSERT_TRUE(many.Send("GET / HTTP/1.1\r\n" + fields + "\r\n"));
  ASSERT_TRUE(many.ReadToClose(seconds(60)));
  EXPECT_TRUE(many.Received().starts_with("HTTP/1.1 400 ")) << many.Received();
  EXPECT_NE(many.Received().find("21 header fields (at most 20)"), std::string::npos) << many.Received();
  EXPECT_EQ(handler.calls.load(), 0);
}

// A connection that sends its header too slowly, or sits idle between requests, is closed at the
// header deadline; the time it is given does not hold a thread.
TEST(HttpServer, HeaderDeadlineClosesSlowAndIdleConnections) {
  EchoHandler handler;
  HttpServerOptions options;
  options.header_timeout = milliseconds(300);
  Serving serving(handler, options);
  RawConnection slow = Connect(serving.Port());
  ASSERT_TRUE(slow.Send("GET / HTTP/1.1\r\nHo"));
  RawConnection idle = Connect(serving.Port());
  ASSERT_TRUE(idle.Send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(idle.ReadUntil("GET /x", 1, seconds(60)));
  EXPECT_TRUE(slow.ReadToClose(seconds(60)));
  EXPECT_EQ(slow.Received(), "");
  EXPECT_TRUE(idle.ReadToClose(seconds(60)));
}

TEST(HttpServer, ConnectionsPastTheLimitsAreAnswered429Or503) {
  EchoHandler handler;
  HttpServerOptions options;
  options.max_connections_per_client = 2;
  Serving per_client(handler, options);
  std::vector<RawConnection> held;
  for (int i = 0; i < 2; ++i) held.push_back(Connect(per_client.Port()));
  AwaitConnections(per_client.Server(), 2);
  RawConnection third = Connect(per_client.Port());
  ASSERT_TRUE(third.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(third.ReadToClose(seconds(60)));
  EXPECT_TRUE(third.Received().starts_with("HTTP/1.1 429 ")) << third.Received();
  EXPECT_NE(third.Received().find("Retry-After: 1"), std::string::npos) << third.Received();
  EXPECT_NE(third.Received().find("too many open connections from 127.0.0.1 (at most 2)"), std::string::npos);
  // Once one goes, a new one is served.
  held.pop_back();
  const auto give_up = Clock::now() + seconds(60);
  while (per_client.Server().Connections() > 1 && Clock::now() < give_up) std::this_thread::sleep_for(milliseconds(5));
  RawConnection next = Connect(per_client.Port());
  ASSERT_TRUE(next.Send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(next.ReadUntil("GET /ok", 1, seconds(60))) << next.Received();

  HttpServerOptions total_options;
  total_options.max_connections = 1;
  Serving total(handler, total_options);
  RawConnection first = Connect(total.Port());
  AwaitConnections(total.Server(), 1);
  RawConnection second = Connect(total.Port());
  ASSERT_TRUE(second.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(second.ReadToClose(seconds(60)));
  EXPECT_TRUE(second.Received().starts_with("HTTP/1.1 503 ")) << second.Received();
}

// 500 clients connect at once: none is reset (the listen backlog holds them) and each is served.
TEST(HttpServer, FiveHundredConcurrentConnections) {
  util::SystemClock clock;
  auto store = store::NewBuiltinStore(clock, store::StoreOptions{});
  ApiHandler api(*store, ApiHandlerOptions{});
  Serving serving(api, {});
  auto burst =
      Burst(serving.Port(), 500, "GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            seconds(120));
  EXPECT_EQ(burst.answered, 500u) << burst.first_failure;
  EXPECT_EQ(burst.reset, 0u);
  EXPECT_EQ(burst.refused, 0u);
  EXPECT_EQ(std::count(burst.statuses.begin(), burst.statuses.end(), 200), 500);
  std::printf("500 concurrent connections: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", Percentile(burst.latency_ms, 50),
              Percentile(burst.latency_ms, 99), Percentile(burst.latency_ms, 100));
}

// 300 connections trickling a request that never ends and 300 open watches hold no thread: a
// normal request is answered meanwhile, on a server with two threads, and every watch sees an
// event as it happens.
TEST(HttpServer, SlowConnectionsAndOpenWatchesHoldNoThread) {
  util::SystemClock clock;
  auto store = store::NewBuiltinStore(clock, store::StoreOptions{});
  ApiHandler api(*store, ApiHandlerOptions{});
  HttpServerOptions options;
  options.threads = 2;
  Serving serving(api, options);

  std::vector<RawConnection> slow;
  for (int i = 0; i < 300; ++i) {
    slow.push_back(Connect(serving.Port()));
    ASSERT_TRUE(slow.back().Send("GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  }
  std::vector<RawConnection> watches;
  for (int i = 0; i < 300; ++i) {
    watches.push_back(Connect(serving.Port()));
    ASSERT_TRUE(watches.back().Send("GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  for (auto& w : watches) ASSERT_TRUE(w.ReadUntil("\r\n\r\n", 1, seconds(60))) << w.Received();
  AwaitConnections(serving.Server(), 600);
  for (auto& s : slow) ASSERT_TRUE(s.Send("a"));  // still trickling

  const auto start = Clock::now();
  RawConnection normal = Connect(serving.Port());
  ASSERT_TRUE(normal.Send("GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(normal.ReadUntil("\"kind\":\"PodList\"", 1, seconds(30))) << normal.Received();
  const double normal_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::printf("GET beside 300 slow connections and 300 watches: %.1f ms\n", normal_ms);

  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"i"}]}})";
  ASSERT_TRUE(normal.Send(
      fmt::format("POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: {}\r\n\r\n{}",
                  pod.size(), pod)));
  for (auto& w : watches) EXPECT_TRUE(w.ReadUntil("\"type\":\"ADDED\"", 1, seconds(60))) << w.Received();
}

TEST(HttpServer, ShutdownDoesNotWaitForSlowClients) {
  util::SystemClock clock;
  auto store = store::NewBuiltinStore(clock, store::StoreOptions{});
  ApiHandler api(*store, ApiHandlerOptions{});
  HttpServerOptions options;
  // What a slow peer could hold shutdown for, if it waited on one: the test fails long before.
  options.header_timeout = seconds(600);
  options.shutdown_grace = seconds(600);
  Serving serving(api, options);
  RawConnection slow = Connect(serving.Port());
  ASSERT_TRUE(slow.Send("GET /api/v1/namespaces HTTP/1.1\r\nHo"));
  RawConnection watch = Connect(serving.Port());
  ASSERT_TRUE(watch.Send("GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(watch.ReadUntil("\r\n\r\n", 1, seconds(60)));
  AwaitConnections(serving.Server(), 2);
  const milliseconds took = serving.Stop();
  std::printf("shutdown with a slow client and a watch: %lld ms\n", static_cast<long long>(took.count()));
  EXPECT_LT(took, seconds(60));
  // The watch ended with its last chunk, cleanly.
  EXPECT_TRUE(watch.ReadToClose(seconds(60)));
  EXPECT_NE(watch.Received().find("\r\n0\r\n\r\n"), std::string::npos) << watch.Received();
  EXPECT_FALSE(watch.Reset());
}

// The secure port's probes are answered while 16 connections hold TLS handshakes open.
TEST(HttpServer, HealthzAnswersBesideSlowTlsHandshakes) {
  auto identity = GenerateSelfSignedIdentity();
  ASSERT_TRUE(identity.has_value()) << identity.error();
  HealthzHandler healthz(HealthzOptions{});
  HttpServerOptions options;
  options.threads = 2;
  options.tls = std::make_shared<const TlsIdentity>(std::move(*identity));
  Serving serving(healthz, options);
  std::vector<RawConnection> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(Connect(serving.Port()));
    ASSERT_TRUE(slow.back().Send(std::string("\x16\x03\x01\x02\x00", 5)));  // a ClientHello's record header, no more
  }
  AwaitConnections(serving.Server(), 16);
  httplib::SSLClient client("127.0.0.1", serving.Port());
  client.enable_server_certificate_verification(false);
  client.set_connection_timeout(seconds(30));
  client.set_read_timeout(seconds(30));
  const auto start = Clock::now();
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok");
  std::printf("/healthz over TLS beside 16 stalled handshakes: %.1f ms\n",
              std::chrono::duration<double, std::milli>(Clock::now() - start).count());
}

}  // namespace
}  // namespace kubesched::server
