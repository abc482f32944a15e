#include "client/reflector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "server/http_server.h"
#include "server/http_types.h"
#include "store/resources.h"

namespace kubesched::client {
namespace {

using namespace std::chrono_literals;

// A server whose history goes back, as one restored from an old backup does: the first list is
// at resourceVersion 100, and the watch from there delivers an object at 50. Later lists are at
// 60; later watches end at once with nothing.
class GoneBackHandler final : public server::Handler {
 public:
  server::HttpResponse Handle(const server::HttpRequest& request) override {
    server::HttpResponse r;
    if (!request.HasQuery("watch")) {
      const int n = ++lists;
      const std::string rv = n == 1 ? "100" : "60";
      r.body = fmt::format(R"({{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{}"}},"items":[)"
                           R"({{"metadata":{{"name":"p{}","namespace":"default","resourceVersion":"{}"}}}}]}})",
                           rv, n, rv);
      return r;
    }
    {
      std::lock_guard lock(mu);
      watched_from.emplace_back(request.Query("resourceVersion"));
    }
    std::string events;
    if (++watches == 1) {
      events = R"({"type":"ADDED","object":{"metadata":{"name":"stale","namespace":"default","resourceVersion":"50"}}})"
               "\n";
    }
    r.stream = std::make_unique<Lines>(std::move(events));
    return r;
  }
  server::HttpResponse Refused(int status, std::string_view detail) const override {
    return server::TextResponse(status, std::string(detail));
  }
  size_t MaxBodyBytes() const override { return 1 << 20; }
  void Stop() override {}

  std::atomic<int> lists{0};
  std::atomic<int> watches{0};
  std::mutex mu;
  std::vector<std::string> watched_from;

 private:
  // A stream of fixed text that then ends.
  class Lines final : public server::ResponseStream {
   public:
    explicit Lines(std::string text) : text_(std::move(text)) {}
    std::optional<std::string> Next(std::chrono::milliseconds) override {
      if (sent_) return std::nullopt;
      sent_ = true;
      return text_;
    }

   private:
    std::string text_;
    bool sent_ = false;
  };
};

class RecordingSink final : public ReflectorSink {
 public:
  void Replace(const store::ResourceType&, std::vector<api::json::Document> items) override {
    std::lock_guard lock(mu);
    replaced.push_back(items.size());
  }
  void Apply(const store::ResourceType&, store::EventType, api::json::Document object) override {
    std::lock_guard lock(mu);
    applied.emplace_back(api::json::GetString(*api::json::Find(object, "metadata"), "name"));
  }
  std::mutex mu;
  std::vector<size_t> replaced;
  std::vector<std::string> applied;
};

TEST(ReflectorTest, AWatchEventOlderThanWhatWasSeenMeansARelist) {
  GoneBackHandler handler;
  server::HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  auto bound = server::HttpServer::Bind(handler, options);
  ASSERT_TRUE(bound.has_value()) << bound.error();
  std::unique_ptr<server::HttpServer> http = std::move(*bound);
  auto serving = std::async(std::launch::async, [&] { return http->Run(); });

  RestConfig config;
  config.server = http->Url();
  config.qps = -1;
  auto rest = RestClient::Create(config);
  ASSERT_TRUE(rest.has_value()) << rest.error();
  RecordingSink sink;
  ReflectorOptions reflector_options;
  reflector_options.initial_backoff = 1ms;
  reflector_options.max_backoff = 10ms;
  const store::ResourceType* pods = nullptr;
  for (const store::ResourceType* type : store::BuiltinResources()) {
    if (type->group.empty() && type->resource == "pods") pods = type;
  }
  ASSERT_NE(pods, nullptr);
  Reflector reflector(**rest, *pods, sink, reflector_options);
  {
    std::jthread running([&](std::stop_token stop) { reflector.Run(stop); });
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (reflector.Lists() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
  }
  http->Shutdown();
  serving.get();

  EXPECT_GE(reflector.Lists(), 2);
  std::lock_guard lock(sink.mu);
  EXPECT_TRUE(sink.applied.empty()) << "the stale event was applied";
  ASSERT_GE(sink.replaced.size(), 2u);
  std::lock_guard watched(handler.mu);
  ASSERT_FALSE(handler.watched_from.empty());
  EXPECT_EQ(handler.watched_from.front(), "100");
  // After the relist the reflector follows the server's new history.
  if (handler.watched_from.size() > 1) EXPECT_EQ(handler.watched_from[1], "60");
}

// A server that does not serve the resource at first (404, an alpha API turned off) and then does.
class LateApiHandler final : public server::Handler {
 public:
  server::HttpResponse Handle(const server::HttpRequest& request) override {
    if (request.HasQuery("watch")) {
      ++watches;
      server::HttpResponse r;
      r.stream = std::make_unique<Empty>();
      return r;
    }
    const int n = ++lists;
    // Not served, then not allowed (a role without the resource), then served.
    if (n == 1) return server::TextResponse(404, "404 page not found");
    if (n == 2) {
      return server::TextResponse(
          403, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,)"
               R"("message":"podgroups.scheduling.k8s.io is forbidden: User "kubesched" cannot list resource"})");
    }
    if (n == 3) watches_before_served = watches.load();
    server::HttpResponse r;
    r.body = R"({"kind":"PodGroupList","apiVersion":"scheduling.k8s.io/v1alpha2","metadata":{"resourceVersion":"7"},)"
             R"("items":[{"metadata":{"name":"g","namespace":"default","resourceVersion":"7"}}]})";
    return r;
  }
  server::HttpResponse Refused(int status, std::string_view detail) const override {
    return server::TextResponse(status, std::string(detail));
  }
  size_t MaxBodyBytes() const override { return 1 << 20; }
  void Stop() override {}

  std::atomic<int> lists{0};
  std::atomic<int> watches{0};
  std::atomic<int> watches_before_served{-1};

 private:
  class Empty final : public server::ResponseStream {
   public:
    std::optional<std::string> Next(std::chrono::milliseconds) override { return std::nullopt; }
  };
};

TEST(ReflectorTest, AResourceTheServerDoesNotServeIsEmptyUntilItDoes) {
  LateApiHandler handler;
  server::HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  auto bound = server::HttpServer::Bind(handler, options);
  ASSERT_TRUE(bound.has_value()) << bound.error();
  std::unique_ptr<server::HttpServer> http = std::move(*bound);
  auto serving = std::async(std::launch::async, [&] { return http->Run(); });

  RestConfig config;
  config.server = http->Url();
  config.qps = -1;
  auto rest = RestClient::Create(config);
  ASSERT_TRUE(rest.has_value()) << rest.error();
  RecordingSink sink;
  ReflectorOptions reflector_options;
  reflector_options.initial_backoff = 1ms;
  reflector_options.max_backoff = 10ms;
  reflector_options.absent_is_empty = true;
  const store::ResourceType* groups = nullptr;
  for (const store::ResourceType* type : store::BuiltinResources()) {
    if (type->group == "scheduling.k8s.io" && type->resource == "podgroups") groups = type;
  }
  ASSERT_NE(groups, nullptr);
  Reflector reflector(**rest, *groups, sink, reflector_options);
  {
    std::jthread running([&](std::stop_token stop) { reflector.Run(stop); });
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (!reflector.HasSynced() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(reflector.HasSynced()) << "a 404 (and a 403) counts as an empty list";
    while (true) {
      {
        std::lock_guard lock(sink.mu);
        if (sink.replaced.size() >= 3 && sink.replaced.back() == 1) break;
      }
      if (std::chrono::steady_clock::now() >= give_up) break;
      std::this_thread::sleep_for(1ms);
    }
  }
  http->Shutdown();
  serving.get();

  EXPECT_EQ(handler.watches_before_served.load(), 0)
      << "nothing is watched while the resource is not served or not allowed";
  std::lock_guard lock(sink.mu);
  ASSERT_GE(sink.replaced.size(), 3u);
  EXPECT_EQ(sink.replaced[0], 0u);
  EXPECT_EQ(sink.replaced[1], 0u);
  EXPECT_EQ(sink.replaced[2], 1u) << "the resource is picked up once served";
}

}  // namespace
}  // namespace kubesched::client
