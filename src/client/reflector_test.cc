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

}  // namespace
}  // namespace kubesched::client
