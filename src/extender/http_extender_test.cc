#include "extender/http_extender.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "server/http_server.h"
#include "server/tls.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "util/base64.h"

namespace kubesched::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

struct Recorded {
  std::string method;
  std::string path;
  std::string content_type;
  std::string body;
};

server::HttpResponse Response(int status, std::string body, std::string content_type = "application/json") {
  server::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

// An extender's configuration with its URL alone (no verbs).
config::Extender At(std::string url) {
  config::Extender c;
  c.url_prefix = std::move(url);
  return c;
}

// An extender on a free loopback port: it records every request and answers each path with what
// the test set (404 for a path it did not).
class FakeExtenderServer final : public server::Handler {
 public:
  using Reply = std::function<server::HttpResponse(const server::HttpRequest&)>;

  explicit FakeExtenderServer(std::shared_ptr<const server::TlsIdentity> tls = nullptr) {
    auto bound =
        server::HttpServer::Bind(*this, {.host = "127.0.0.1", .port = 0, .threads = 16, .tls = std::move(tls)});
    EXPECT_TRUE(bound.has_value()) << bound.error();
    server_ = std::move(*bound);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~FakeExtenderServer() override {
    Release();
    server_->Shutdown();
    thread_.join();
  }

  std::string Url() const { return server_->Url(); }

  void On(const std::string& path, Reply reply) {
    std::lock_guard lock(mu_);
    replies_[path] = std::move(reply);
  }
  void Answer(const std::string& path, std::string body, int status = 200) {
    On(path, [body = std::move(body), status](const server::HttpRequest&) { return Response(status, body); });
  }
  //! Holds every request to `path` until Release (or 30 s).
  void Hang(const std::string& path) {
    On(path, [this](const server::HttpRequest&) {
      std::unique_lock lock(mu_);
      released_cv_.wait_for(lock, std::chrono::seconds(30), [this] { return released_; });
      return Response(200, "{}");
    });
  }
  //! Forgets the answers, requests and release of the test before.
  void Reset() {
    std::lock_guard lock(mu_);
    replies_.clear();
    requests_.clear();
    released_ = false;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

  std::vector<Recorded> Requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

  server::HttpResponse Handle(const server::HttpRequest& request) override {
    Reply reply;
    {
      std::lock_guard lock(mu_);
      requests_.push_back({request.method, request.path, request.content_type, request.body});
      auto it = replies_.find(request.path);
      if (it == replies_.end()) return Response(404, "no such verb");
      reply = it->second;
    }
    return reply(request);
  }
  server::HttpResponse Refused(int status, std::string_view detail) const override {
    return Response(status, std::string(detail), "text/plain");
  }
  size_t MaxBodyBytes() const override { return 64 << 20; }
  void Stop() override { Release(); }

 private:
  mutable std::mutex mu_;
  std::condition_variable released_cv_;
  bool released_ = false;
  std::map<std::string, Reply> replies_;
  std::vector<Recorded> requests_;
  std::unique_ptr<server::HttpServer> server_;
  std::thread thread_;
};

// Kept JSON for exact request bodies: what the client splices in.
template <typename T>
std::shared_ptr<T> Kept(std::shared_ptr<T> object, std::string json) {
  object->json = std::make_shared<const std::string>(std::move(json));
  return object;
}

std::string NodeJson(const std::string& name) { return R"({"metadata":{"name":")" + name + R"("}})"; }
std::string PodJson(const std::string& name, const std::string& uid) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c"}]}})";
}

std::unique_ptr<HttpExtender> MustCreate(const config::Extender& config) {
  auto created = HttpExtender::Create(config);
  EXPECT_TRUE(created.has_value()) << created.error();
  return created ? std::move(*created) : nullptr;
}

// One server for the suite (a server's shutdown takes half a second), reset before each test.
class HttpExtenderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new FakeExtenderServer(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  HttpExtenderTest() : server_(*shared_) {
    server_.Reset();
    std::vector<std::shared_ptr<api::Node>> nodes;
    for (const char* name : {"n1", "n2", "n3"}) {
      nodes.push_back(Kept(testing::MakeNode().Name(name).Capacity({{"cpu", "4"}}).Obj(), NodeJson(name)));
    }
    std::vector<std::shared_ptr<api::Pod>> pods = {
        Kept(testing::MakePod().Name("a").Namespace("ns").UID("uid-a").Node("n1").Obj(), PodJson("a", "uid-a")),
        Kept(testing::MakePod().Name("b").Namespace("ns").UID("uid-b").Node("n1").Obj(), PodJson("b", "uid-b")),
        Kept(testing::MakePod().Name("c").Namespace("ns").UID("uid-c").Node("n2").Obj(), PodJson("c", "uid-c")),
    };
    snapshot_.Reset(nodes, pods);
    pod_ = Kept(testing::MakePod().Name("p").Namespace("ns").UID("uid-p").Obj(), PodJson("p", "uid-p"));
  }

  config::Extender Config() const { return At(server_.Url()); }
  std::span<const framework::NodeInfo* const> Nodes() const { return snapshot_.List(); }
  const framework::NodeInfo* Info(std::string_view name) const { return snapshot_.Get(name); }
  framework::PodInfoPtr PodOn(std::string_view node, std::string_view name) const {
    for (const auto& p : Info(node)->pods()) {
      if (p->pod().metadata.name == name) return p;
    }
    return nullptr;
  }
  std::string ArgsBody(const std::string& nodes_and_names) const {
    return R"({"Pod":)" + PodJson("p", "uid-p") + "," + nodes_and_names + "}";
  }
  static std::string AllNodesList() {
    return R"("Nodes":{"metadata":{},"items":[)" + NodeJson("n1") + "," + NodeJson("n2") + "," + NodeJson("n3") +
           R"(]},"NodeNames":null)";
  }

  static inline FakeExtenderServer* shared_ = nullptr;
  FakeExtenderServer& server_;
  testing::FakeSnapshot snapshot_;
  std::shared_ptr<api::Pod> pod_;
};

// ---------------------------------------------------------------------------------------------
// Filter

TEST_F(HttpExtenderTest, FilterSendsNodesAndMapsTheAnswerBackToThem) {
  server_.Answer("/filter", R"({"Nodes":{"metadata":{},"items":[)" + NodeJson("n3") + "," + NodeJson("n1") +
                                R"(]},"FailedNodes":{"n2":"too hot"},"FailedAndUnresolvableNodes":{"n4":"gone"}})");
  config::Extender config = Config();
  config.filter_verb = "filter";
  auto ext = MustCreate(config);
  auto result = ext->Filter(*pod_, Nodes());
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_THAT(result->feasible, ElementsAre(Info("n3"), Info("n1")));
  EXPECT_THAT(result->failed, ElementsAre(Pair("n2", "too hot")));
  EXPECT_THAT(result->failed_and_unresolvable, ElementsAre(Pair("n4", "gone")));

  const auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/filter");
  EXPECT_EQ(requests[0].content_type, "application/json");
  EXPECT_EQ(requests[0].body, ArgsBody(AllNodesList()));
}

TEST_F(HttpExtenderTest, FilterWithNodeCacheSendsNames) {
  server_.Answer("/filter", R"({"NodeNames":["n2","n3"],"FailedNodes":{"n1":"no"}})");
  config::Extender config = Config();
  config.filter_verb = "filter";
  config.node_cache_capable = true;
  auto ext = MustCreate(config);
  auto result = ext->Filter(*pod_, Nodes());
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_THAT(result->feasible, ElementsAre(Info("n2"), Info("n3")));
  EXPECT_THAT(result->failed, ElementsAre(Pair("n1", "no")));
  EXPECT_THAT(result->failed_and_unresolvable, IsEmpty());
  const auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].body, ArgsBody(R"("Nodes":null,"NodeNames":["n1","n2","n3"])"));
}

// As upstream: a cache-capable extender that answers with Nodes rather than NodeNames is read
// by its Nodes; one without a node cache is read by its Nodes alone.
TEST_F(HttpExtenderTest, FilterReadsTheAnswerAsUpstreamDoes) {
  config::Extender config = Config();
  config.filter_verb = "filter";
  config.node_cache_capable = true;
  server_.Answer("/filter", R"({"Nodes":{"items":[)" + NodeJson("n2") + "]}}");
  auto cached = MustCreate(config)->Filter(*pod_, Nodes());
  ASSERT_TRUE(cached.has_value()) << cached.error();
  EXPECT_THAT(cached->feasible, ElementsAre(Info("n2")));

  config.node_cache_capable = false;
  server_.Answer("/filter", R"({"NodeNames":["n1"]})");
  auto uncached = MustCreate(config)->Filter(*pod_, Nodes());
  ASSERT_TRUE(uncached.has_value()) << uncached.error();
  EXPECT_THAT(uncached->feasible, IsEmpty());
}

TEST_F(HttpExtenderTest, FilterWithoutVerbPassesEveryNode) {
  auto ext = MustCreate(Config());
  auto result = ext->Filter(*pod_, Nodes());
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_THAT(result->feasible, ElementsAre(Info("n1"), Info("n2"), Info("n3")));
  EXPECT_THAT(server_.Requests(), IsEmpty());
}

TEST_F(HttpExtenderTest, FilterAnswerNamingAnUnknownNodeIsAnError) {
  for (bool cache : {false, true}) {
    SCOPED_TRACE(cache ? "nodeCacheCapable" : "nodes");
    config::Extender config = Config();
    config.filter_verb = "filter";
    config.node_cache_capable = cache;
    server_.Answer("/filter", cache ? R"({"NodeNames":["n1","n9"]})"
                                    : R"({"Nodes":{"items":[)" + NodeJson("n1") + "," + NodeJson("n9") + "]}}");
    auto result = MustCreate(config)->Filter(*pod_, Nodes());
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(), "extender \"" + server_.Url() +
                                  "\" claims a filtered node \"n9\" which is not found in the input node list");
  }
}

TEST_F(HttpExtenderTest, ErrorInTheResultIsTheError) {
  server_.Answer("/filter", R"({"NodeNames":["n1"],"Error":"quota service unavailable"})");
  config::Extender config = Config();
  config.filter_verb = "filter";
  config.node_cache_capable = true;
  auto result = MustCreate(config)->Filter(*pod_, Nodes());
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), "quota service unavailable");
}

TEST_F(HttpExtenderTest, NonOkStatusIsTheUpstreamError) {
  server_.Answer("/ext/filter", R"({"NodeNames":["n1"]})", 503);
  config::Extender config = Config();
  config.url_prefix = server_.Url() + "/ext//";  // trailing slashes are trimmed
  config.filter_verb = "filter";
  auto result = MustCreate(config)->Filter(*pod_, Nodes());
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), "failed filter with extender at URL " + server_.Url() + "/ext/filter, code 503");
  ASSERT_EQ(server_.Requests().size(), 1u);
  EXPECT_EQ(server_.Requests()[0].path, "/ext/filter");
}

TEST_F(HttpExtenderTest, MalformedAnswerIsAnError) {
  server_.Answer("/filter", R"({"NodeNames":"n1"})");
  config::Extender config = Config();
  config.filter_verb = "filter";
  config.node_cache_capable = true;
  auto result = MustCreate(config)->Filter(*pod_, Nodes());
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("NodeNames: expected an array, got string"));
}

TEST_F(HttpExtenderTest, UnreachableExtenderIsAnError) {
  std::string url;
  {
    FakeExtenderServer gone;
    url = gone.Url();
  }
  config::Extender config = At(url);
  config.filter_verb = "filter";
  auto result = MustCreate(config)->Filter(*pod_, Nodes());
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr(url + "/filter"));
}

TEST_F(HttpExtenderTest, SlowExtenderTimesOut) {
  server_.Hang("/filter");
  config::Extender config = Config();
  config.filter_verb = "filter";
  config.http_timeout_ns = 200'000'000;
  auto ext = MustCreate(config);
  const auto start = std::chrono::steady_clock::now();
  auto result = ext->Filter(*pod_, Nodes());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  server_.Release();
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr(server_.Url() + "/filter"));
  // The server holds the request for 30 s; the timeout ends the call long before.
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

// ---------------------------------------------------------------------------------------------
// Prioritize

TEST_F(HttpExtenderTest, PrioritizeSendsNodesOrNamesAndPassesTheWeight) {
  server_.Answer("/prioritize", R"([{"Host":"n1","Score":3},{"Host":"n3","Score":10}])");
  for (bool cache : {false, true}) {
    SCOPED_TRACE(cache ? "nodeCacheCapable" : "nodes");
    config::Extender config = Config();
    config.prioritize_verb = "prioritize";
    config.weight = 7;
    config.node_cache_capable = cache;
    auto result = MustCreate(config)->Prioritize(*pod_, Nodes());
    ASSERT_TRUE(result.has_value()) << result.error();
    EXPECT_EQ(result->weight, 7);
    EXPECT_THAT(result->priorities, ElementsAre(framework::HostPriority{"n1", 3}, framework::HostPriority{"n3", 10}));
    const auto requests = server_.Requests();
    ASSERT_FALSE(requests.empty());
    EXPECT_EQ(requests.back().path, "/prioritize");
    EXPECT_EQ(requests.back().body, ArgsBody(cache ? R"("Nodes":null,"NodeNames":["n1","n2","n3"])" : AllNodesList()));
  }
}

TEST_F(HttpExtenderTest, PrioritizeWithoutVerbScoresZeroWithWeightZero) {
  config::Extender config = Config();
  config.weight = 5;
  auto result = MustCreate(config)->Prioritize(*pod_, Nodes());
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->weight, 0);
  EXPECT_THAT(result->priorities, ElementsAre(framework::HostPriority{"n1", 0}, framework::HostPriority{"n2", 0},
                                              framework::HostPriority{"n3", 0}));
  EXPECT_THAT(server_.Requests(), IsEmpty());
}

TEST_F(HttpExtenderTest, PrioritizeFromManyThreads) {
  server_.Answer("/prioritize", R"([{"Host":"n2","Score":1}])");
  config::Extender config = Config();
  config.prioritize_verb = "prioritize";
  config.weight = 1;
  config.node_cache_capable = true;
  auto ext = MustCreate(config);
  std::atomic<int> ok = 0;
  std::vector<std::thread> threads;
  // Four threads: more connecting at once overflow httplib's listen backlog of 5, and a dropped
  // SYN costs a second.
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto result = ext->Prioritize(*pod_, Nodes());
        if (result && result->priorities.size() == 1) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
  EXPECT_EQ(server_.Requests().size(), 80u);
}

// ---------------------------------------------------------------------------------------------
// ProcessPreemption

TEST_F(HttpExtenderTest, PreemptionWithNodeCacheSendsAndResolvesUids) {
  server_.Answer("/preempt", R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-b"}],"NumPDBViolations":1},)"
                             R"("n2":{"Pods":[{"UID":"uid-c"}],"NumPDBViolations":0}}})");
  config::Extender config = Config();
  config.preempt_verb = "preempt";
  config.node_cache_capable = true;
  framework::NodeToVictims candidates{
      {"n1", {.pods = {PodOn("n1", "a"), PodOn("n1", "b")}, .num_pdb_violations = 2}},
      {"n2", {.pods = {PodOn("n2", "c")}, .num_pdb_violations = 0}},
  };
  auto result = MustCreate(config)->ProcessPreemption(*pod_, candidates, snapshot_);
  ASSERT_TRUE(result.has_value()) << result.error();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_THAT(result->at("n1").pods, ElementsAre(PodOn("n1", "b")));
  EXPECT_EQ(result->at("n1").num_pdb_violations, 1);
  EXPECT_THAT(result->at("n2").pods, ElementsAre(PodOn("n2", "c")));

  const auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/preempt");
  EXPECT_EQ(requests[0].body, R"({"Pod":)" + PodJson("p", "uid-p") +
                                  R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{)"
                                  R"("n1":{"Pods":[{"UID":"uid-a"},{"UID":"uid-b"}],"NumPDBViolations":2},)"
                                  R"("n2":{"Pods":[{"UID":"uid-c"}],"NumPDBViolations":0}}})");
}

TEST_F(HttpExtenderTest, PreemptionWithoutNodeCacheSendsFullPods) {
  server_.Answer("/preempt", R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-a"},{"UID":"uid-b"}]}}})");
  config::Extender config = Config();
  config.preempt_verb = "preempt";
  framework::NodeToVictims candidates{{"n1", {.pods = {PodOn("n1", "a"), PodOn("n1", "b")}, .num_pdb_violations = 0}}};
  auto result = MustCreate(config)->ProcessPreemption(*pod_, candidates, snapshot_);
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_THAT(result->at("n1").pods, ElementsAre(PodOn("n1", "a"), PodOn("n1", "b")));
  const auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].body, R"({"Pod":)" + PodJson("p", "uid-p") + R"(,"NodeNameToVictims":{"n1":{"Pods":[)" +
                                  PodJson("a", "uid-a") + "," + PodJson("b", "uid-b") +
                                  R"(],"NumPDBViolations":0}},"NodeNameToMetaVictims":null})");
}

TEST_F(HttpExtenderTest, PreemptionAnswerThatDisagreesWithTheSnapshotIsAnError) {
  config::Extender config = Config();
  config.preempt_verb = "preempt";
  config.node_cache_capable = true;
  auto ext = MustCreate(config);
  const framework::NodeToVictims candidates{{"n1", {.pods = {PodOn("n1", "a")}, .num_pdb_violations = 0}}};

  server_.Answer("/preempt", R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-c"}]}}})");
  auto wrong_node = ext->ProcessPreemption(*pod_, candidates, snapshot_);
  ASSERT_FALSE(wrong_node.has_value());
  EXPECT_EQ(wrong_node.error(), "extender: " + server_.Url() +
                                    " claims to preempt pod (UID: uid-c) on node: n1, but the pod is not found on "
                                    "that node");

  server_.Answer("/preempt", R"({"NodeNameToMetaVictims":{"n7":{"Pods":[]}}})");
  auto unknown_node = ext->ProcessPreemption(*pod_, candidates, snapshot_);
  ASSERT_FALSE(unknown_node.has_value());
  EXPECT_EQ(unknown_node.error(), "nodeinfo not found for node name \"n7\"");

  server_.Answer("/preempt", R"({"NodeNameToMetaVictims":null})");
  auto none = ext->ProcessPreemption(*pod_, candidates, snapshot_);
  ASSERT_TRUE(none.has_value()) << none.error();
  EXPECT_THAT(*none, IsEmpty());

  auto no_verb = MustCreate(Config())->ProcessPreemption(*pod_, candidates, snapshot_);
  ASSERT_FALSE(no_verb.has_value());
  EXPECT_THAT(no_verb.error(), HasSubstr("preempt verb is not defined"));
}

// ---------------------------------------------------------------------------------------------
// Bind

TEST_F(HttpExtenderTest, BindSendsThePodAndNode) {
  server_.Answer("/bind", R"({"Error":""})");
  config::Extender config = Config();
  config.bind_verb = "bind";
  auto ext = MustCreate(config);
  EXPECT_TRUE(ext->IsBinder());
  auto result = ext->Bind(*pod_, "n2");
  ASSERT_TRUE(result.has_value()) << result.error();
  const auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/bind");
  EXPECT_EQ(requests[0].body, R"({"PodName":"p","PodNamespace":"ns","PodUID":"uid-p","Node":"n2"})");

  server_.Answer("/bind", R"({"Error":"node n2 is draining"})");
  auto refused = ext->Bind(*pod_, "n2");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), "node n2 is draining");

  auto not_binder = MustCreate(Config());
  EXPECT_FALSE(not_binder->IsBinder());
  EXPECT_FALSE(not_binder->Bind(*pod_, "n2").has_value());
}

// ---------------------------------------------------------------------------------------------
// IsInterested, configuration

TEST(HttpExtender, IsInterestedInPodsUsingAManagedResource) {
  auto all = MustCreate(At("http://127.0.0.1:1"));
  EXPECT_TRUE(all->IsInterested(*testing::MakePod().Name("plain").Obj()));

  config::Extender config = At("http://127.0.0.1:1");
  config.managed_resources = {{.name = "example.com/gpu"}, {.name = "example.com/fpga", .ignored_by_scheduler = true}};
  auto ext = MustCreate(config);
  EXPECT_FALSE(ext->IsInterested(*testing::MakePod().Name("plain").Req({{"cpu", "1"}}).Obj()));
  EXPECT_TRUE(ext->IsInterested(*testing::MakePod().Req({{"cpu", "1"}}).Req({{"example.com/gpu", "1"}}).Obj()));
  EXPECT_TRUE(ext->IsInterested(*testing::MakePod().InitReq({{"example.com/fpga", "1"}}).Obj()));

  // Limited without a request (the typed pod as a decoder that did not default it would give).
  auto limited = testing::MakePod().Req({{"cpu", "1"}}).Obj();
  limited->spec.containers[0].resources.limits.emplace("example.com/gpu", api::Quantity());
  EXPECT_TRUE(ext->IsInterested(*limited));
  auto init_limited = testing::MakePod().InitReq({{"cpu", "1"}}).Obj();
  init_limited->spec.init_containers[0].resources.limits.emplace("example.com/fpga", api::Quantity());
  EXPECT_TRUE(ext->IsInterested(*init_limited));
  auto other = testing::MakePod().InitReq({{"example.com/other", "1"}}).Obj();
  EXPECT_FALSE(ext->IsInterested(*other));
}

TEST(HttpExtender, ReportsItsConfiguration) {
  config::Extender config = At("http://127.0.0.1:1/x");
  config.preempt_verb = "p";
  config.ignorable = true;
  auto ext = MustCreate(config);
  EXPECT_EQ(ext->Name(), "http://127.0.0.1:1/x");
  EXPECT_TRUE(ext->IsIgnorable());
  EXPECT_TRUE(ext->SupportsPreemption());
  EXPECT_FALSE(ext->IsBinder());
}

TEST(HttpExtender, BuildExtendersPutsIgnorableOnesLast) {
  std::vector<config::Extender> configs;
  for (const char* name : {"a", "b", "c", "d"}) configs.push_back(At(std::string("http://127.0.0.1:1/") + name));
  configs[0].ignorable = configs[2].ignorable = true;
  auto built = BuildExtenders(configs);
  ASSERT_TRUE(built.has_value()) << built.error();
  std::vector<std::string> names;
  for (const auto& e : *built) names.push_back(e->Name());
  EXPECT_THAT(names, ElementsAre("http://127.0.0.1:1/b", "http://127.0.0.1:1/d", "http://127.0.0.1:1/a",
                                 "http://127.0.0.1:1/c"));
  EXPECT_THAT(*BuildExtenders({}), IsEmpty());

  configs[2].url_prefix = "ftp://127.0.0.1/c";
  auto bad = BuildExtenders(configs);
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error(), ::testing::StartsWith("extenders[2]: "));
  EXPECT_THAT(bad.error(), HasSubstr("scheme"));
}

TEST(HttpExtender, TlsConfigErrors) {
  config::Extender config = At("https://127.0.0.1:1");
  config.tls_config.emplace().ca_data = "not base64!";
  auto bad_base64 = HttpExtender::Create(config);
  ASSERT_FALSE(bad_base64.has_value());
  EXPECT_EQ(bad_base64.error(), "tlsConfig.caData: invalid base64");

  config.tls_config.emplace().ca_file = "/nonexistent/ca.crt";
  auto missing = HttpExtender::Create(config);
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error(), ::testing::StartsWith("tlsConfig.caFile: "));

  auto identity = server::GenerateSelfSignedIdentity();
  ASSERT_TRUE(identity.has_value()) << identity.error();
  config.tls_config.emplace().insecure = true;
  config.tls_config->ca_data = util::Base64Encode(identity->certificate_pem);
  auto both = HttpExtender::Create(config);
  ASSERT_FALSE(both.has_value());
  EXPECT_THAT(both.error(), HasSubstr("insecure"));

  config.tls_config.emplace().cert_data = util::Base64Encode(identity->certificate_pem);
  EXPECT_FALSE(HttpExtender::Create(config).has_value());  // a certificate without its key
}

// ---------------------------------------------------------------------------------------------
// HTTPS

class HttpsExtenderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    identity_ = Identity();
    shared_ = new FakeExtenderServer(identity_);
  }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
    identity_ = nullptr;
  }
  HttpsExtenderTest() : server_(*shared_) { server_.Reset(); }

  static std::shared_ptr<const server::TlsIdentity> Identity() {
    auto identity = server::GenerateSelfSignedIdentity();
    EXPECT_TRUE(identity.has_value()) << identity.error();
    return std::make_shared<const server::TlsIdentity>(std::move(*identity));
  }

  // Binds n1 through the extender built from `config` (its url_prefix set here).
  std::expected<void, std::string> BindThrough(config::Extender config) {
    config.url_prefix = server_.Url();
    config.bind_verb = "bind";
    auto ext = HttpExtender::Create(config);
    if (!ext) return std::unexpected(ext.error());
    return (*ext)->Bind(*testing::MakePod().Name("p").Obj(), "n1");
  }

  static inline std::shared_ptr<const server::TlsIdentity> identity_;
  static inline FakeExtenderServer* shared_ = nullptr;
  FakeExtenderServer& server_;
};

TEST_F(HttpsExtenderTest, VerifiesTheServerWithCaData) {
  server_.Answer("/bind", "{}");
  ASSERT_THAT(server_.Url(), ::testing::StartsWith("https://"));
  config::Extender config;
  config.enable_https = true;
  config.tls_config.emplace().ca_data = util::Base64Encode(identity_->certificate_pem);
  auto bound = BindThrough(config);
  EXPECT_TRUE(bound.has_value()) << bound.error();
  EXPECT_EQ(server_.Requests().size(), 1u);
}

TEST_F(HttpsExtenderTest, VerifiesTheServerWithCaFile) {
  server_.Answer("/bind", "{}");
  const std::string file = ::testing::TempDir() + "/http_extender_test_ca.crt";
  std::ofstream(file) << identity_->certificate_pem;
  config::Extender config;
  config.enable_https = true;
  config.tls_config.emplace().ca_file = file;
  auto bound = BindThrough(config);
  std::filesystem::remove(file);
  EXPECT_TRUE(bound.has_value()) << bound.error();
}

TEST_F(HttpsExtenderTest, ChecksTheServerNameAndSendsAClientCertificate) {
  server_.Answer("/bind", "{}");
  config::Extender config;
  auto& tls = config.tls_config.emplace();
  tls.ca_data = util::Base64Encode(identity_->certificate_pem);
  tls.cert_data = util::Base64Encode(identity_->certificate_pem);
  tls.key_data = util::Base64Encode(identity_->private_key_pem);
  tls.server_name = "localhost";  // the certificate names 127.0.0.1 and localhost
  auto bound = BindThrough(config);
  EXPECT_TRUE(bound.has_value()) << bound.error();

  config.tls_config->server_name = "extender.example.com";
  auto wrong_name = BindThrough(config);
  ASSERT_FALSE(wrong_name.has_value());
  EXPECT_THAT(wrong_name.error(), HasSubstr("TLS"));
  EXPECT_EQ(server_.Requests().size(), 1u);
}

TEST_F(HttpsExtenderTest, RefusesAServerItsCaDidNotSign) {
  server_.Answer("/bind", "{}");
  auto other = Identity();
  config::Extender config;
  config.enable_https = true;
  config.tls_config.emplace().ca_data = util::Base64Encode(other->certificate_pem);
  auto bound = BindThrough(config);
  ASSERT_FALSE(bound.has_value());
  EXPECT_THAT(bound.error(), HasSubstr("TLS"));
  EXPECT_THAT(server_.Requests(), IsEmpty());
}

TEST_F(HttpsExtenderTest, InsecureSkipsVerification) {
  server_.Answer("/bind", "{}");
  config::Extender insecure;
  insecure.tls_config.emplace().insecure = true;
  auto bound = BindThrough(insecure);
  EXPECT_TRUE(bound.has_value()) << bound.error();
  // enableHTTPS without a CA: upstream's makeTransport does not verify either.
  config::Extender https_only_config;
  https_only_config.enable_https = true;
  auto https_only = BindThrough(https_only_config);
  EXPECT_TRUE(https_only.has_value()) << https_only.error();
  EXPECT_EQ(server_.Requests().size(), 2u);
}

}  // namespace
}  // namespace kubesched::extender
