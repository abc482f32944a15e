// The extender protocol's handler: upstream-shaped bodies (as Go's json.Marshal writes
// ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs) answered by a real scheduler's
// default profile, the routing, and every kind of bad request answered with a 400 and a reason.

#include "extender/extender_handler.h"

#include <httplib.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cluster/store_client.h"
#include "config/load.h"
#include "server/http_server.h"
#include "store/resources.h"
#include "testing/builders.h"
#include "testing/raw_http.h"
#include "testing/scheduler_fixtures.h"

namespace kubesched::extender {

using server::HttpRequest;
using server::HttpResponse;
using server::HttpServer;
using server::HttpServerOptions;
namespace {

using testing::MakeNode;
using testing::MakePod;

// A pod as Go's client sends it: no apiVersion or kind, creationTimestamp null.
std::string PodJson(const std::string& name, const std::string& cpu, int priority = 0) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","uid":")" + name +
         R"(","creationTimestamp":null},"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":")" +
         cpu + R"("}}}],"priority":)" + std::to_string(priority) + R"(},"status":{}})";
}

std::string NodeJson(const std::string& name, const std::string& cpu) {
  return R"({"metadata":{"name":")" + name + R"(","uid":")" + name +
         R"(-uid","creationTimestamp":null,"labels":{"kubernetes.io/hostname":")" + name +
         R"("}},"spec":{},"status":{"capacity":{"cpu":")" + cpu +
         R"(","memory":"8Gi","pods":"110"},"allocatable":{"cpu":")" + cpu + R"(","memory":"8Gi","pods":"110"}}})";
}

HttpRequest Post(std::string path, std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.path = std::move(path);
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

class ExtenderHandlerTest : public ::testing::Test {
 protected:
  ExtenderHandlerTest()
      : clock_(testing::kSchedulerTestStart), store_(store::NewBuiltinStore(clock_)), client_(*store_, clock_) {
    scheduler::SchedulerOptions options;
    options.config = config::DefaultConfiguration(testing::InTreeRegistry());
    options.queue_pods = false;
    auto created = scheduler::Scheduler::Create(options, client_, clock_, testing::InTreeRegistry());
    EXPECT_TRUE(created.has_value()) << created.error();
    sched_ = std::move(*created);
  }

  ExtenderHandler& Handler(ExtenderHandlerOptions options = {}) {
    handler_ = std::make_unique<ExtenderHandler>(*sched_, std::move(options));
    return *handler_;
  }

  void AddNode(const std::string& name, const std::string& cpu) {
    sched_->OnNodeAdd(MakeNode().Name(name).Capacity({{"cpu", cpu}, {"memory", "8Gi"}}).Obj());
  }

  util::VirtualClock clock_;
  std::unique_ptr<store::Store> store_;
  cluster::StoreClient client_;
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::unique_ptr<ExtenderHandler> handler_;
};

TEST_F(ExtenderHandlerTest, FilterWithNodeNamesAnswersNodeNames) {
  AddNode("n1", "4");
  AddNode("n2", "4");
  sched_->OnPodAdd(MakePod().Name("x").UID("x").Node("n2").Req({{"cpu", "3"}}).Obj());
  auto r = Handler().Handle(
      Post("/filter", R"({"Pod":)" + PodJson("p", "2") + R"(,"Nodes":null,"NodeNames":["n1","n2","n3"]})"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["NodeNames"], nlohmann::json::array({"n1"}));
  EXPECT_TRUE(j["Nodes"].is_null());
  EXPECT_EQ(j["FailedNodes"]["n2"], "Insufficient cpu");
  EXPECT_EQ(j["FailedNodes"]["n3"], scheduler::UnknownNodeReason("n3"));
  EXPECT_EQ(j["FailedAndUnresolvableNodes"], nlohmann::json::object());
  EXPECT_EQ(j["Error"], "");
}

TEST_F(ExtenderHandlerTest, FilterWithNodeObjectsLearnsThemAndEchoesThePassedOnesUnchanged) {
  const std::string big = NodeJson("big", "8");
  const std::string small = NodeJson("small", "1");
  const std::string body = R"({"Pod":)" + PodJson("p", "2") + R"(,"Nodes":{"metadata":{},"items":[)" + small + "," +
                           big + R"(]},"NodeNames":null})";
  auto r = Handler({.learn_nodes = true}).Handle(Post("/filter", body));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(big), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find(small), std::string::npos) << r.body;
  auto j = nlohmann::json::parse(r.body);
  ASSERT_EQ(j["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(j["Nodes"]["items"][0]["metadata"]["name"], "big");
  EXPECT_TRUE(j["NodeNames"].is_null());
  EXPECT_TRUE(j["FailedAndUnresolvableNodes"].contains("small"));
}

TEST_F(ExtenderHandlerTest, FilterWithNodeObjectsEvaluatesTheViewsNodesWhenAWatchFeedsIt) {
  AddNode("n", "1");  // the view's version: too small
  const std::string body = R"({"Pod":)" + PodJson("p", "2") + R"(,"Nodes":{"metadata":{},"items":[)" +
                           NodeJson("n", "8") + R"(]},"NodeNames":null})";
  auto r = Handler({.learn_nodes = false}).Handle(Post("/filter", body));
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["Nodes"]["items"].size(), 0u);
  EXPECT_TRUE(j["FailedAndUnresolvableNodes"].contains("n"));
}

TEST_F(ExtenderHandlerTest, PrioritizeAnswersAHostPriorityList) {
  AddNode("busy", "4");
  AddNode("idle", "4");
  sched_->OnPodAdd(MakePod().Name("x").UID("x").Node("busy").Req({{"cpu", "3"}, {"memory", "6Gi"}}).Obj());
  auto r = Handler().Handle(
      Post("/scheduler/prioritize", R"({"Pod":)" + PodJson("p", "500m") + R"(,"NodeNames":["busy","idle"]})"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = nlohmann::json::parse(r.body);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["Host"], "busy");
  EXPECT_LT(j[0]["Score"].get<int64_t>(), 10);
  EXPECT_EQ(j[1], (nlohmann::json{{"Host", "idle"}, {"Score", 10}}));
}

TEST_F(ExtenderHandlerTest, PreemptAnswersItsOwnVictimsOnTheCandidateNodes) {
  AddNode("n1", "2");
  AddNode("n2", "2");
  sched_->OnPodAdd(MakePod().Name("low-a").UID("low-a").Priority(0).Node("n1").Req({{"cpu", "1"}}).Obj());
  sched_->OnPodAdd(MakePod().Name("low-b").UID("low-b").Priority(0).Node("n1").Req({{"cpu", "1"}}).Obj());
  sched_->OnPodAdd(MakePod().Name("high").UID("high").Priority(1000).Node("n2").Req({{"cpu", "2"}}).Obj());
  // The scheduler's own candidates (both low pods on n1) and a node kubesched cannot help on.
  const std::string body =
      R"({"Pod":)" + PodJson("p", "1", 100) +
      R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"low-a"},{"UID":"low-b"}],"NumPDBViolations":0},"n2":{"Pods":[{"UID":"high"}],"NumPDBViolations":0}}})";
  auto r = Handler().Handle(Post("/preempt", body));
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = nlohmann::json::parse(r.body);
  ASSERT_EQ(j["NodeNameToMetaVictims"].size(), 1u) << r.body;
  const auto& n1 = j["NodeNameToMetaVictims"]["n1"];
  ASSERT_EQ(n1["Pods"].size(), 1u);
  const std::string uid = n1["Pods"][0]["UID"];
  EXPECT_TRUE(uid == "low-a" || uid == "low-b") << uid;
  EXPECT_EQ(n1["NumPDBViolations"], 0);
}

TEST_F(ExtenderHandlerTest, BindWithoutAClusterIsTheResultsError) {
  auto r = Handler().Handle(Post("/bind", R"({"PodName":"p","PodNamespace":"default","PodUID":"u","Node":"n1"})"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["Error"], kNoClusterToBind);
}

TEST_F(ExtenderHandlerTest, BindGoesThroughTheBinderAndReportsItsError) {
  std::vector<ExtenderBindingArgs> calls;
  bool fail = false;
  ExtenderHandlerOptions options;
  options.bind = [&](const ExtenderBindingArgs& a) -> std::expected<void, std::string> {
    calls.push_back(a);
    if (fail) return std::unexpected("pods \"p\" is already assigned to node \"n0\"");
    return {};
  };
  ExtenderHandler& h = Handler(std::move(options));
  const std::string body = R"({"podname":"p","PodNamespace":"ns","PodUID":"u","Node":"n1"})";
  auto r = h.Handle(Post("/bind", body));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(nlohmann::json::parse(r.body)["Error"], "");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].pod_name, "p");
  EXPECT_EQ(calls[0].pod_namespace, "ns");
  EXPECT_EQ(calls[0].pod_uid, "u");
  EXPECT_EQ(calls[0].node, "n1");
  fail = true;
  r = h.Handle(Post("/bind", body));
  EXPECT_EQ(nlohmann::json::parse(r.body)["Error"], "pods \"p\" is already assigned to node \"n0\"");
}

TEST_F(ExtenderHandlerTest, RoutesVerbsUnderAnyPrefixAndRefusesOtherPathsAndMethods) {
  AddNode("n1", "4");
  ExtenderHandler& h = Handler();
  const std::string body = R"({"Pod":)" + PodJson("p", "1") + R"(,"NodeNames":["n1"]})";
  EXPECT_EQ(h.Handle(Post("/filter", body)).status, 200);
  EXPECT_EQ(h.Handle(Post("/scheduler/filter", body)).status, 200);
  EXPECT_EQ(h.Handle(Post("/a/b/prioritize", body)).status, 200);
  EXPECT_EQ(h.Handle(Post("/filterx", body)).status, 404);
  EXPECT_EQ(h.Handle(Post("/", body)).status, 404);
  HttpRequest get = Post("/filter", "");
  get.method = "GET";
  EXPECT_EQ(h.Handle(get).status, 405);
  get.path = "/healthz";
  auto health = h.Handle(get);
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  EXPECT_EQ(h.Handle(Post("/healthz", "")).status, 405);
}

TEST_F(ExtenderHandlerTest, BadRequestsAre400sWithTheReason) {
  ExtenderHandler& h = Handler();
  struct Case {
    std::string path, body, reason;
  };
  const std::vector<Case> cases{
      {"/filter", "", "bad request: "},
      {"/filter", "{", "bad request: "},
      {"/filter", "[1,2]", "bad request: "},
      {"/filter", R"({"NodeNames":["n1"]})", "Pod: Required value"},
      {"/filter", R"({"Pod":null,"NodeNames":["n1"]})", "Pod: Required value"},
      {"/filter", R"({"Pod":)" + PodJson("p", "1") + "}", "Nodes, NodeNames: Required value"},
      {"/filter", R"({"Pod":)" + PodJson("p", "1") + R"(,"NodeNames":[1]})", "NodeNames[0]"},
      {"/prioritize", R"({"Pod":"p","NodeNames":[]})", "Pod"},
      {"/preempt", R"({"Pod":)" + PodJson("p", "1") + R"(,"NodeNameToMetaVictims":[]})", "NodeNameToMetaVictims"},
      {"/preempt", R"({"NodeNameToMetaVictims":{}})", "Pod: Required value"},
      {"/bind", R"({"PodName":"p"})", "Node: Required value"},
      {"/bind", R"({"Node":"n"})", "PodName: Required value"},
      {"/bind", R"({"PodName":7,"Node":"n"})", "PodName"},
  };
  for (const Case& c : cases) {
    auto r = h.Handle(Post(c.path, c.body));
    EXPECT_EQ(r.status, 400) << c.path << " " << c.body;
    EXPECT_NE(r.body.find(c.reason), std::string::npos) << c.body << " -> " << r.body;
    EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
  }
}

TEST_F(ExtenderHandlerTest, EveryTruncationOfAValidBodyIsAnswered) {
  AddNode("n1", "4");
  ExtenderHandler& h = Handler();
  const std::string body = R"({"Pod":)" + PodJson("p", "1") + R"(,"Nodes":{"metadata":{},"items":[)" +
                           NodeJson("n1", "4") + R"(]},"NodeNames":null})";
  for (size_t len = 0; len < body.size(); ++len) {
    for (const char* verb : {"/filter", "/prioritize", "/preempt", "/bind"}) {
      auto r = h.Handle(Post(verb, body.substr(0, len)));
      EXPECT_TRUE(r.status == 200 || r.status == 400) << verb << " " << len << ": " << r.status << " " << r.body;
    }
  }
}

TEST_F(ExtenderHandlerTest, ConcurrentRequestsWhileTheViewChangesAreAllAnswered) {
  for (int i = 0; i < 200; ++i) AddNode("n" + std::to_string(i), "8");
  ExtenderHandler& h = Handler();
  std::string names;
  for (int i = 0; i < 200; ++i) names += (i ? ",\"n" : "\"n") + std::to_string(i) + "\"";
  const std::string args = R"({"Pod":)" + PodJson("p", "1", 100) + R"(,"NodeNames":[)" + names + "]}";
  const std::string preempt =
      R"({"Pod":)" + PodJson("p", "1", 100) + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":0}}})";
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < 30; ++i) {
        const int verb = (c + i) % 3;
        auto r = h.Handle(verb == 0   ? Post("/filter", args)
                          : verb == 1 ? Post("/prioritize", args)
                                      : Post("/preempt", preempt));
        if (r.status != 200 || !nlohmann::json::accept(r.body)) wrong.fetch_add(1);
      }
    });
  }
  // The watch keeps delivering meanwhile: pods come and go on the nodes being evaluated.
  for (int i = 0; i < 100; ++i) {
    auto pod = MakePod()
                   .Name("w" + std::to_string(i))
                   .UID("w" + std::to_string(i))
                   .Node("n" + std::to_string(i % 200))
                   .Req({{"cpu", "1"}})
                   .Obj();
    sched_->OnPodAdd(pod);
    if (i % 2) sched_->OnPodDelete(pod);
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(ExtenderHandlerTest, OversizedBodiesAre400s) {
  ExtenderHandler& h = Handler({.max_body_bytes = 1024});
  auto r = h.Handle(Post("/filter", std::string(1025, ' ')));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "bad request: the request body is too large (at most 1024 bytes of application/json)\n");
  // What the HTTP layer refuses itself past the limit (413) is a 400 too.
  EXPECT_EQ(h.Refused(413, "").status, 400);
}

TEST_F(ExtenderHandlerTest, OversizedBodiesOverHttpAre400sAndTheServerStaysUp) {
  AddNode("n1", "4");
  ExtenderHandler& h = Handler({.max_body_bytes = 64 * 1024});
  HttpServerOptions options;
  options.port = 0;
  options.threads = 4;
  auto server = HttpServer::Bind(h, options);
  ASSERT_TRUE(server.has_value()) << server.error();
  std::thread serving([&] { (*server)->Run(); });
  httplib::Client client("127.0.0.1", (*server)->Port());
  // Just past the limit (the handler sees it) and far past it (the HTTP layer refuses it).
  for (size_t size : {64 * 1024 + 1, 4 * 1024 * 1024}) {
    auto res = client.Post("/filter", std::string(size, ' '), "application/json");
    ASSERT_TRUE(res) << size << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 400) << size;
    EXPECT_NE(res->body.find("at most 65536 bytes"), std::string::npos) << res->body;
  }
  // Past the limit with curl's default content type: the answer names the content type, which is
  // the mistake, not the size.
  auto form = client.Post("/filter", std::string(64 * 1024 + 1, 'x'), "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 400);
  EXPECT_EQ(form->body,
            "bad request: the request body is sent as application/x-www-form-urlencoded; extender requests are "
            "application/json (with curl: -H 'Content-Type: application/json')\n");
  auto res = client.Post("/filter", R"({"Pod":)" + PodJson("p", "1") + R"(,"NodeNames":["n1"]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(nlohmann::json::parse(res->body)["NodeNames"], nlohmann::json::array({"n1"}));
  (*server)->Shutdown();
  serving.join();
}

// kube-scheduler sends one request per pod in flight, from every scheduler using the extender:
// 200 filters of 1,000 nodes arriving at once are all answered, none reset.
TEST_F(ExtenderHandlerTest, TwoHundredConcurrentFiltersOfAThousandNodes) {
  std::string names;
  for (int i = 0; i < 1000; ++i) {
    AddNode("n" + std::to_string(i), "8");
    names += (i ? ",\"n" : "\"n") + std::to_string(i) + "\"";
  }
  ExtenderHandler& h = Handler();
  HttpServerOptions options;
  options.port = 0;
  auto server = HttpServer::Bind(h, options);
  ASSERT_TRUE(server.has_value()) << server.error();
  std::thread serving([&] { (*server)->Run(); });
  const std::string body = R"({"Pod":)" + PodJson("p", "1") + R"(,"NodeNames":[)" + names + "]}";
  const std::string request =
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  auto burst = testing::Burst((*server)->Port(), 200, request, std::chrono::seconds(300));
  EXPECT_EQ(burst.answered, 200u) << burst.first_failure;
  EXPECT_EQ(burst.reset, 0u);
  EXPECT_EQ(std::count(burst.statuses.begin(), burst.statuses.end(), 200), 200);
  std::printf("200 concurrent 1,000-node filters: p50 %.0f ms, p99 %.0f ms\n",
              testing::Percentile(burst.latency_ms, 50), testing::Percentile(burst.latency_ms, 99));
  (*server)->Shutdown();
  serving.join();
}

}  // namespace
}  // namespace kubesched::extender
