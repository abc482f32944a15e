#include "server/api_handler.h"

#include <gtest/gtest.h>

#include <thread>

#include "api/json.h"
#include "store/resources.h"
#include "util/clock.h"

namespace kubesched::server {
namespace {

constexpr std::string_view kTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

std::string PodJson(std::string_view name, std::string_view extra_spec = "", std::string_view labels = "{}") {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" + std::string(name) +
         "\",\"labels\":" + std::string(labels) + "},\"spec\":{" + std::string(extra_spec) +
         "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"env\":[{\"name\":\"A\",\"value\":\"b\"}]}]}}";
}

api::json::Document Decode(std::string_view text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

class ApiHandlerTest : public ::testing::Test {
 protected:
  HttpResponse Call(std::string method, std::string path, std::string body = "", std::string content_type = "",
                    std::string accept = "application/json") {
    HttpRequest r;
    r.method = std::move(method);
    size_t q = path.find('?');
    if (q != std::string::npos) {
      std::string query = path.substr(q + 1);
      path.resize(q);
      size_t i = 0;
      while (i <= query.size()) {
        size_t j = query.find('&', i);
        if (j == std::string::npos) j = query.size();
        std::string kv = query.substr(i, j - i);
        size_t eq = kv.find('=');
        if (!kv.empty()) r.query.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
        i = j + 1;
      }
    }
    r.path = std::move(path);
    r.body = std::move(body);
    r.content_type = content_type.empty() && !r.body.empty() ? "application/json" : std::move(content_type);
    r.accept = std::move(accept);
    return handler_.Handle(r);
  }
  HttpResponse CreatePod(std::string_view name, std::string_view labels = "{}") {
    return Call("POST", "/api/v1/namespaces/default/pods", PodJson(name, "", labels));
  }
  // Drains a stream until `lines` non-empty lines came or it ends.
  std::vector<std::string> ReadEvents(ResponseStream& stream, size_t lines) {
    std::vector<std::string> out;
    for (int i = 0; i < 40 && out.size() < lines; ++i) {
      std::optional<std::string> chunk = stream.Next(std::chrono::milliseconds(50));
      if (!chunk) break;
      if (!chunk->empty() && *chunk != "\n") out.push_back(*chunk);
    }
    return out;
  }

  util::SystemClock clock_;
  std::unique_ptr<store::Store> store_ = store::NewBuiltinStore(clock_, store::StoreOptions{.watch_history = 8});
  ApiHandler handler_{*store_, ApiHandlerOptions{.max_body_bytes = 64 * 1024}};
};

TEST_F(ApiHandlerTest, CreateGetListKeepEveryField) {
  HttpResponse created = CreatePod("p1");
  ASSERT_EQ(created.status, 201) << created.body;
  api::json::Document pod = Decode(created.body);
  EXPECT_FALSE(api::json::GetString(pod["metadata"], "uid").empty());
  EXPECT_FALSE(api::json::GetString(pod["metadata"], "resourceVersion").empty());

  HttpResponse got = Call("GET", "/api/v1/namespaces/default/pods/p1");
  ASSERT_EQ(got.status, 200);
  api::json::Document g = Decode(got.body);
  EXPECT_EQ(api::json::GetString(g["spec"]["containers"][0]["env"][0], "value"), "b") << "unmodelled fields kept";

  HttpResponse list = Call("GET", "/api/v1/pods");
  ASSERT_EQ(list.status, 200);
  api::json::Document l = Decode(list.body);
  EXPECT_EQ(api::json::GetString(l, "kind"), "PodList");
  EXPECT_EQ(l["items"].Size(), 1u);
  EXPECT_FALSE(api::json::GetString(l["metadata"], "resourceVersion").empty());

  HttpResponse table = Call("GET", "/api/v1/namespaces/default/pods", "", "", std::string(kTableAccept));
  ASSERT_EQ(table.status, 200);
  EXPECT_EQ(table.content_type, "application/json;as=Table;v=v1;g=meta.k8s.io");
  api::json::Document t = Decode(table.body);
  EXPECT_EQ(api::json::GetString(t, "kind"), "Table");
  EXPECT_EQ(api::json::GetString(t["rows"][0]["cells"][0], ""), "");
  EXPECT_EQ(api::json::View(t["rows"][0]["cells"][0]), "p1");
  EXPECT_EQ(api::json::View(t["rows"][0]["cells"][2]), "Pending");
}

TEST_F(ApiHandlerTest, ErrorsAreStatusBodiesWithTheRightCodes) {
  ASSERT_EQ(CreatePod("p1").status, 201);
  struct Case {
    std::string name;
    HttpResponse response;
    int code;
    std::string reason;
  };
  std::string big = PodJson("big", "\"hostname\":\"" + std::string(70 * 1024, 'a') + "\",");
  std::vector<Case> cases;
  cases.push_back({"exists", CreatePod("p1"), 409, "AlreadyExists"});
  cases.push_back({"missing object", Call("GET", "/api/v1/namespaces/default/pods/nope"), 404, "NotFound"});
  cases.push_back({"unknown resource", Call("GET", "/api/v1/widgets"), 404, "NotFound"});
  cases.push_back({"unknown version", Call("GET", "/apis/apps/v2/deployments"), 404, "NotFound"});
  cases.push_back(
      {"cluster-scoped under a namespace", Call("GET", "/api/v1/namespaces/default/nodes"), 404, "NotFound"});
  cases.push_back({"create without namespace", Call("POST", "/api/v1/pods", PodJson("x")), 405, "MethodNotAllowed"});
  cases.push_back({"malformed JSON", Call("POST", "/api/v1/namespaces/default/pods", "{\"kind\":"), 400, "BadRequest"});
  cases.push_back(
      {"wrong kind",
       Call("POST", "/api/v1/namespaces/default/pods", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}})"),
       400, "BadRequest"});
  cases.push_back({"yaml body", Call("POST", "/api/v1/namespaces/default/pods", "kind: Pod", "application/yaml"), 415,
                   "UnsupportedMediaType"});
  cases.push_back({"server-side apply",
                   Call("PATCH", "/api/v1/namespaces/default/pods/p1", "{}", "application/apply-patch+yaml"), 415,
                   "UnsupportedMediaType"});
  cases.push_back({"too large", Call("POST", "/api/v1/namespaces/default/pods", big), 413, "RequestEntityTooLarge"});
  cases.push_back(
      {"invalid",
       Call(
           "POST", "/api/v1/namespaces/default/pods",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","image":"x"}]}})"),
       422, "Invalid"});
  cases.push_back(
      {"namespace mismatch",
       Call("POST", "/api/v1/namespaces/default/pods",
            R"({"metadata":{"name":"x","namespace":"other"},"spec":{"containers":[{"name":"c","image":"x"}]}})"),
       400, "BadRequest"});
  cases.push_back(
      {"name mismatch", Call("PUT", "/api/v1/namespaces/default/pods/p1", PodJson("p2")), 400, "BadRequest"});
  cases.push_back({"bad limit", Call("GET", "/api/v1/pods?limit=x"), 400, "BadRequest"});
  cases.push_back({"bad fieldValidation",
                   Call("POST", "/api/v1/namespaces/default/pods?fieldValidation=Loud", PodJson("y")), 400,
                   "BadRequest"});
  cases.push_back(
      {"bad dryRun", Call("POST", "/api/v1/namespaces/default/pods?dryRun=Some", PodJson("y")), 400, "BadRequest"});
  cases.push_back({"not acceptable", Call("GET", "/api/v1/pods", "", "", "application/yaml"), 406, "NotAcceptable"});
  cases.push_back({"binding to nothing", Call("POST", "/api/v1/namespaces/default/pods/p1/binding", R"({"target":{}})"),
                   422, "Invalid"});
  cases.push_back({"binding without a pod name",
                   Call("POST", "/api/v1/namespaces/default/bindings", R"({"target":{"name":"n1"}})"), 422, "Invalid"});
  cases.push_back(
      {"bindings are create-only", Call("GET", "/api/v1/namespaces/default/bindings"), 405, "MethodNotAllowed"});
  cases.push_back(
      {"binding a missing pod",
       Call("POST", "/api/v1/namespaces/default/bindings", R"({"metadata":{"name":"nope"},"target":{"name":"n1"}})"),
       404, "NotFound"});
  cases.push_back(
      {"namespace that does not exist", Call("POST", "/api/v1/namespaces/nope/pods", PodJson("x")), 404, "NotFound"});
  cases.push_back({"unknown subresource", Call("GET", "/api/v1/namespaces/default/pods/p1/logs"), 404, "NotFound"});
  cases.push_back({"verb a subresource lacks", Call("DELETE", "/api/v1/namespaces/default/pods/p1/status"), 405,
                   "MethodNotAllowed"});
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.response.status, c.code) << c.response.body;
    api::json::Document status = Decode(c.response.body);
    EXPECT_EQ(api::json::GetString(status, "kind"), "Status");
    EXPECT_EQ(api::json::GetString(status, "status"), "Failure");
    EXPECT_EQ(api::json::GetString(status, "reason"), c.reason);
    EXPECT_EQ(status["code"].GetInt(), c.code);
    EXPECT_FALSE(api::json::GetString(status, "message").empty());
  }
  // NamespaceLifecycle's message.
  EXPECT_EQ(api::json::GetString(Decode(Call("POST", "/api/v1/namespaces/nope/pods", PodJson("x")).body), "message"),
            "namespaces \"nope\" not found");
  // Nothing half-applied: none of the refused creations exists.
  api::json::Document list = Decode(Call("GET", "/api/v1/pods").body);
  EXPECT_EQ(list["items"].Size(), 1u);
}

// Found by the request fuzz target: the Status for an unknown media type echoes the Content-Type,
// and RapidJSON 1.1.0's SSE2 writer left control characters 0x1A-0x1F in it unescaped.
TEST_F(ApiHandlerTest, StatusEscapesEveryControlCharacterItEchoes) {
  ASSERT_EQ(CreatePod("p").status, 201);
  for (size_t pad = 0; pad < 16; ++pad) {
    const std::string type = "application/json-p" + std::string(pad, 'a') + "atch+\xff\xff``" + std::string(2, '\0') +
                             "\x1b\x1a\x1f\xedjson";
    HttpResponse r = Call("PATCH", "/api/v1/namespaces/default/pods/p", "[]", type);
    ASSERT_EQ(r.status, 415);
    EXPECT_EQ(r.body.find_first_of(std::string("\x1a\x1b\x1f", 3)), std::string::npos) << pad;
    api::json::Document doc = Decode(r.body);
    EXPECT_NE(api::json::GetString(doc, "message").find("\x1b\x1a\x1f"), std::string_view::npos);
  }
}

TEST_F(ApiHandlerTest, StaleUpdateConflicts) {
  ASSERT_EQ(CreatePod("p1").status, 201);
  std::string old = Call("GET", "/api/v1/namespaces/default/pods/p1").body;
  ASSERT_EQ(Call("PATCH", "/api/v1/namespaces/default/pods/p1", R"({"metadata":{"labels":{"x":"y"}}})",
                 "application/merge-patch+json")
                .status,
            200);
  HttpResponse stale = Call("PUT", "/api/v1/namespaces/default/pods/p1", old);
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(api::json::GetString(Decode(stale.body), "reason"), "Conflict");
}

TEST_F(ApiHandlerTest, FieldValidationModes) {
  const std::string body = PodJson("p1", "\"foo\":1,");
  HttpResponse strict = Call("POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", body);
  EXPECT_EQ(strict.status, 400);
  EXPECT_NE(strict.body.find("strict decoding error: unknown field \\\"spec.foo\\\""), std::string::npos)
      << strict.body;

  HttpResponse warn = Call("POST", "/api/v1/namespaces/default/pods?fieldValidation=Warn", body);
  EXPECT_EQ(warn.status, 201);
  ASSERT_EQ(warn.headers.size(), 1u);
  EXPECT_EQ(warn.headers[0].first, "Warning");
  EXPECT_EQ(warn.headers[0].second, "299 - \"unknown field \\\"spec.foo\\\"\"");

  HttpResponse ignore =
      Call("POST", "/api/v1/namespaces/default/pods?fieldValidation=Ignore", PodJson("p2", "\"foo\":1,"));
  EXPECT_EQ(ignore.status, 201);
  EXPECT_TRUE(ignore.headers.empty());
  // As upstream's decoder: the unknown field is dropped, not stored.
  for (const char* name : {"p1", "p2"}) {
    api::json::Document stored = Decode(Call("GET", std::string("/api/v1/namespaces/default/pods/") + name).body);
    EXPECT_FALSE(stored["spec"].HasMember("foo")) << name;
    EXPECT_TRUE(stored["spec"].HasMember("containers")) << name;
  }
  // Of duplicate keys the last one wins, with a warning.
  HttpResponse dup = Call(
      "POST", "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"p3","labels":{"a":"1"},"labels":{"a":"2"}},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  ASSERT_EQ(dup.status, 201) << dup.body;
  ASSERT_EQ(dup.headers.size(), 1u);
  EXPECT_NE(dup.headers[0].second.find("duplicate field"), std::string::npos) << dup.headers[0].second;
  api::json::Document p3 = Decode(Call("GET", "/api/v1/namespaces/default/pods/p3").body);
  EXPECT_EQ(api::json::GetString(p3["metadata"]["labels"], "a"), "2");

  HttpResponse patch = Call("PATCH", "/api/v1/namespaces/default/pods/p2?fieldValidation=Strict",
                            R"({"spec":{"bar":2}})", "application/strategic-merge-patch+json");
  EXPECT_EQ(patch.status, 400);
  EXPECT_NE(patch.body.find("spec.bar"), std::string::npos);
}

// Every write path drops unknown fields as upstream's decoder does (the warning is sent), the
// three patch types included; a value of the wrong type is refused in every mode, on the patched
// object too, and leaves the stored object as it was.
TEST_F(ApiHandlerTest, PatchesDropUnknownFieldsAndEveryWriteRefusesWrongTypes) {
  ASSERT_EQ(CreatePod("p1").status, 201);
  struct Case {
    std::string name, content_type, body;
  };
  const std::vector<Case> patches = {
      {"strategic", "application/strategic-merge-patch+json", R"({"spec":{"nodeSelectr":{"disk":"ssd"}}})"},
      {"merge", "application/merge-patch+json", R"({"spec":{"nodeSelectr":{"disk":"ssd"}}})"},
      {"json", "application/json-patch+json", R"([{"op":"add","path":"/spec/nodeSelectr","value":{"disk":"ssd"}}])"},
  };
  for (const Case& c : patches) {
    SCOPED_TRACE(c.name);
    HttpResponse patched = Call("PATCH", "/api/v1/namespaces/default/pods/p1", c.body, c.content_type);
    ASSERT_EQ(patched.status, 200) << patched.body;
    if (c.name != "json") {
      ASSERT_EQ(patched.headers.size(), 1u);
      EXPECT_EQ(patched.headers[0].second, "299 - \"unknown field \\\"spec.nodeSelectr\\\"\"");
    }
    api::json::Document stored = Decode(Call("GET", "/api/v1/namespaces/default/pods/p1").body);
    EXPECT_FALSE(stored["spec"].HasMember("nodeSelectr"));
    EXPECT_TRUE(stored["spec"].HasMember("containers"));
  }

  // Wrong types: refused with upstream's prefix whatever fieldValidation says.
  for (const char* mode : {"Strict", "Warn", "Ignore"}) {
    SCOPED_TRACE(mode);
    HttpResponse created = Call("POST", std::string("/api/v1/namespaces/default/pods?fieldValidation=") + mode,
                                PodJson("p2", "\"terminationGracePeriodSeconds\":\"1800\","));
    EXPECT_EQ(created.status, 400);
    EXPECT_NE(created.body.find("Pod in version \\\"v1\\\" cannot be handled as a Pod: "
                                "spec.terminationGracePeriodSeconds: expected an integer, got the string \\\"1800\\\""),
              std::string::npos)
        << created.body;
    HttpResponse patched = Call("PATCH", std::string("/api/v1/namespaces/default/pods/p1?fieldValidation=") + mode,
                                R"({"spec":{"containers":[{"name":"c","command":["sleep",10]}]}})",
                                "application/strategic-merge-patch+json");
    EXPECT_EQ(patched.status, 400) << patched.body;
    EXPECT_NE(patched.body.find("spec.containers[0].command[1]: expected a string, got the number 10"),
              std::string::npos)
        << patched.body;
  }
  api::json::Document stored = Decode(Call("GET", "/api/v1/namespaces/default/pods/p1").body);
  EXPECT_FALSE(stored["spec"]["containers"][0].HasMember("command"));
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods/p2").status, 404);
}

TEST_F(ApiHandlerTest, DryRunPersistsNothing) {
  HttpResponse created = Call("POST", "/api/v1/namespaces/default/pods?dryRun=All", PodJson("p1"));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(api::json::GetString(Decode(created.body)["spec"], "schedulerName"), "default-scheduler")
      << "the dry run defaults as a creation does";
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods/p1").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/namespaces/default/pods?dryRun=All",
                 R"({"metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","image":"x"}]}})")
                .status,
            422);

  ASSERT_EQ(CreatePod("p2").status, 201);
  HttpResponse patched = Call("PATCH", "/api/v1/namespaces/default/pods/p2?dryRun=All",
                              R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(api::json::GetString(Decode(patched.body)["metadata"]["labels"], "x"), "y");
  EXPECT_FALSE(Decode(Call("GET", "/api/v1/namespaces/default/pods/p2").body)["metadata"].HasMember("labels") &&
               Decode(Call("GET", "/api/v1/namespaces/default/pods/p2").body)["metadata"]["labels"].HasMember("x"));
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/default/pods/p2?dryRun=All").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods/p2").status, 200);
}

TEST_F(ApiHandlerTest, DeleteAndDeleteCollection) {
  ASSERT_EQ(CreatePod("a1", R"({"app":"a"})").status, 201);
  ASSERT_EQ(CreatePod("a2", R"({"app":"a"})").status, 201);
  ASSERT_EQ(CreatePod("b1", R"({"app":"b"})").status, 201);
  HttpResponse gone = Call("DELETE", "/api/v1/namespaces/default/pods/b1",
                           R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(api::json::GetString(Decode(gone.body), "kind"), "Pod");
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/default/pods/b1").status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/default/pods/a1?propagationPolicy=Sideways").status, 400);

  HttpResponse collection = Call("DELETE", "/api/v1/namespaces/default/pods?labelSelector=app=a");
  ASSERT_EQ(collection.status, 200) << collection.body;
  EXPECT_EQ(Decode(collection.body)["items"].Size(), 2u);
  EXPECT_EQ(Decode(Call("GET", "/api/v1/pods").body)["items"].Size(), 0u);

  HttpResponse pc =
      Call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
           R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":10})");
  ASSERT_EQ(pc.status, 201) << pc.body;
  HttpResponse deleted = Call("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/high");
  ASSERT_EQ(deleted.status, 200);
  api::json::Document status = Decode(deleted.body);
  EXPECT_EQ(api::json::GetString(status, "status"), "Success");
  EXPECT_EQ(api::json::GetString(status["details"], "name"), "high");
}

TEST_F(ApiHandlerTest, SelectorsOnLists) {
  ASSERT_EQ(CreatePod("a1", R"({"app":"a"})").status, 201);
  ASSERT_EQ(CreatePod("b1", R"({"app":"b"})").status, 201);
  EXPECT_EQ(Decode(Call("GET", "/api/v1/pods?labelSelector=app=b").body)["items"].Size(), 1u);
  ASSERT_EQ(Call("POST", "/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})").status, 201);
  ASSERT_EQ(
      Call("POST", "/api/v1/namespaces/default/pods/a1/binding",
           R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"a1"},"target":{"kind":"Node","name":"n1"}})")
          .status,
      201);
  // The bindings resource the official Python client posts to: the pod is the Binding's name.
  ASSERT_EQ(
      Call("POST", "/api/v1/namespaces/default/bindings",
           R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"b1"},"target":{"kind":"Node","name":"n1"}})")
          .status,
      201);
  api::json::Document on_n1 = Decode(Call("GET", "/api/v1/pods?fieldSelector=spec.nodeName=n1").body);
  ASSERT_EQ(on_n1["items"].Size(), 2u);
  EXPECT_EQ(api::json::GetString(on_n1["items"][0]["metadata"], "name"), "a1");
  EXPECT_EQ(Call("GET", "/api/v1/pods?fieldSelector=spec.color=red").status, 400);
  // A page, then the rest.
  api::json::Document page = Decode(Call("GET", "/api/v1/pods?limit=1").body);
  ASSERT_EQ(page["items"].Size(), 1u);
  std::string token(api::json::GetString(page["metadata"], "continue"));
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(Decode(Call("GET", "/api/v1/pods?limit=1&continue=" + token).body)["items"].Size(), 1u);
  // Every Node carries status.nodeInfo's strings and the kubelet port, as upstream writes them.
  api::json::Document node = Decode(Call("GET", "/api/v1/nodes/n1").body);
  EXPECT_EQ(api::json::GetString(node["status"]["nodeInfo"], "bootID"), "");
  EXPECT_EQ(node["status"]["nodeInfo"].MemberCount(), 10u);
  EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"].GetInt(), 0);
}

TEST_F(ApiHandlerTest, WatchStreamsEventsAndTables) {
  ASSERT_EQ(CreatePod("p1").status, 201);
  std::string rv(api::json::GetString(Decode(Call("GET", "/api/v1/pods").body)["metadata"], "resourceVersion"));
  HttpResponse watch = Call("GET", "/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + rv);
  ASSERT_EQ(watch.status, 200);
  ASSERT_NE(watch.stream, nullptr);
  HttpResponse table_watch =
      Call("GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv, "", "", std::string(kTableAccept));
  ASSERT_NE(table_watch.stream, nullptr);
  EXPECT_EQ(table_watch.content_type, "application/json;as=Table;v=v1;g=meta.k8s.io");

  ASSERT_EQ(CreatePod("p2").status, 201);
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/default/pods/p2", R"({"gracePeriodSeconds":0})").status, 200);

  std::vector<std::string> events = ReadEvents(*watch.stream, 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].back(), '\n');
  api::json::Document added = Decode(events[0]);
  EXPECT_EQ(api::json::GetString(added, "type"), "ADDED");
  EXPECT_EQ(api::json::GetString(added["object"]["metadata"], "name"), "p2");
  EXPECT_EQ(api::json::GetString(Decode(events[1]), "type"), "DELETED");

  std::vector<std::string> rows = ReadEvents(*table_watch.stream, 2);
  ASSERT_EQ(rows.size(), 2u);
  api::json::Document first = Decode(rows[0]);
  EXPECT_EQ(api::json::GetString(first["object"], "kind"), "Table");
  EXPECT_EQ(first["object"]["columnDefinitions"].Size(), 9u);
  EXPECT_EQ(Decode(rows[1])["object"]["columnDefinitions"].Size(), 0u) << "headers with the first event only";

  // A watch ends when the server stops.
  handler_.Stop();
  EXPECT_FALSE(watch.stream->Next(std::chrono::milliseconds(10)).has_value());
}

TEST_F(ApiHandlerTest, WatchFromACompactedVersionGetsAnExpiredEvent) {
  for (int i = 0; i < 12; ++i) ASSERT_EQ(CreatePod("p" + std::to_string(i)).status, 201);
  HttpResponse watch = Call("GET", "/api/v1/pods?watch=true&resourceVersion=2");
  ASSERT_EQ(watch.status, 200) << watch.body;
  ASSERT_NE(watch.stream, nullptr);
  std::vector<std::string> events = ReadEvents(*watch.stream, 1);
  ASSERT_EQ(events.size(), 1u);
  api::json::Document e = Decode(events[0]);
  EXPECT_EQ(api::json::GetString(e, "type"), "ERROR");
  EXPECT_EQ(e["object"]["code"].GetInt(), 410);
  EXPECT_EQ(api::json::GetString(e["object"], "reason"), "Expired");
  EXPECT_FALSE(watch.stream->Next(std::chrono::milliseconds(10)).has_value());
}

TEST_F(ApiHandlerTest, ScaleSubresource) {
  const std::string deployment =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
          "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
          "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})";
  ASSERT_EQ(Call("POST", "/apis/apps/v1/namespaces/default/deployments", deployment).status, 201);
  api::json::Document scale = Decode(Call("GET", "/apis/apps/v1/namespaces/default/deployments/web/scale").body);
  EXPECT_EQ(api::json::GetString(scale, "kind"), "Scale");
  EXPECT_EQ(scale["spec"]["replicas"].GetInt(), 2);
  EXPECT_EQ(api::json::GetString(scale["status"], "selector"), "app=web");

  HttpResponse patched = Call("PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
                              R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Decode(patched.body)["spec"]["replicas"].GetInt(), 5);
  EXPECT_EQ(Decode(Call("GET", "/apis/apps/v1/namespaces/default/deployments/web").body)["spec"]["replicas"].GetInt(),
            5);
  EXPECT_EQ(
      Call(
          "PUT", "/apis/apps/v1/namespaces/default/deployments/web/scale",
          R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","resourceVersion":"1"},"spec":{"replicas":1}})")
          .status,
      409);
  EXPECT_EQ(Call("PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale", R"({"spec":{"replicas":-1}})",
                 "application/merge-patch+json")
                .status,
            422);
}

TEST_F(ApiHandlerTest, DiscoveryAndNonResourcePaths) {
  HttpResponse aggregated = Call(
      "GET", "/apis", "", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json");
  ASSERT_EQ(aggregated.status, 200);
  EXPECT_EQ(aggregated.content_type, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(api::json::GetString(Decode(Call("GET", "/api").body), "kind"), "APIVersions");
  EXPECT_EQ(api::json::GetString(Decode(Call("GET", "/apis/apps/v1").body), "kind"), "APIResourceList");
  api::json::Document version = Decode(Call("GET", "/version").body);
  EXPECT_EQ(api::json::GetString(version, "major"), "1");
  EXPECT_EQ(api::json::GetString(version, "minor"), "32");
  EXPECT_EQ(Call("GET", "/healthz").body, "ok");
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  EXPECT_EQ(Call("GET", "/openapi/v3").status, 200);
  EXPECT_EQ(Call("GET", "/openapi/v3/api/v1").status, 200);
  EXPECT_EQ(Call("GET", "/openapi/v2").status, 404);
  EXPECT_EQ(Call("GET", "/nothing/here").status, 404);
}

}  // namespace
}  // namespace kubesched::server

namespace kubesched::server {
namespace {

TEST(WatchStreamTest, EndsWhenTheStoreDropsASlowWatcher) {
  util::SystemClock clock;
  std::unique_ptr<store::Store> store = store::NewBuiltinStore(clock, store::StoreOptions{.watcher_capacity = 2});
  ApiHandler handler(*store, ApiHandlerOptions{});
  HttpRequest watch_request;
  watch_request.method = "GET";
  watch_request.path = "/api/v1/namespaces/default/pods";
  watch_request.query.emplace("watch", "true");
  watch_request.query.emplace("resourceVersion", std::to_string(store->ResourceVersion()));
  HttpResponse watch = handler.Handle(watch_request);
  ASSERT_NE(watch.stream, nullptr);
  for (int i = 0; i < 5; ++i) {
    HttpRequest create;
    create.method = "POST";
    create.path = "/api/v1/namespaces/default/pods";
    create.content_type = "application/json";
    create.body = PodJson("p" + std::to_string(i));
    ASSERT_EQ(handler.Handle(create).status, 201);
  }
  // Whatever was queued before the store gave up may still come; then the stream ends.
  int chunks = 0;
  std::optional<std::string> chunk;
  while ((chunk = watch.stream->Next(std::chrono::milliseconds(20))) && chunks < 20) ++chunks;
  EXPECT_FALSE(chunk.has_value());
  EXPECT_LE(chunks, 3);
}

}  // namespace
}  // namespace kubesched::server

namespace kubesched::server {
namespace {

TEST(WatchStreamTest, TableAgesAreTakenAtEachEvent) {
  util::SystemClock clock;
  std::unique_ptr<store::Store> store = store::NewBuiltinStore(clock);
  ApiHandler handler(*store, ApiHandlerOptions{});
  HttpRequest watch_request;
  watch_request.method = "GET";
  watch_request.path = "/api/v1/namespaces/default/pods";
  watch_request.accept = std::string(kTableAccept);
  watch_request.query.emplace("watch", "true");
  watch_request.query.emplace("resourceVersion", std::to_string(store->ResourceVersion()));
  HttpResponse watch = handler.Handle(watch_request);
  ASSERT_NE(watch.stream, nullptr);
  // Long enough after the watch began that an age computed then would be negative ("<invalid>").
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));
  HttpRequest create;
  create.method = "POST";
  create.path = "/api/v1/namespaces/default/pods";
  create.content_type = "application/json";
  create.body = PodJson("late");
  ASSERT_EQ(handler.Handle(create).status, 201);
  std::optional<std::string> line;
  for (int i = 0; i < 20 && (!line || line->empty() || *line == "\n"); ++i) {
    line = watch.stream->Next(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(line && !line->empty());
  api::json::Document event = Decode(*line);
  const std::string_view age = api::json::View(event["object"]["rows"][0]["cells"][4]);
  EXPECT_TRUE(age == "0s" || age == "1s") << age;
}

}  // namespace
}  // namespace kubesched::server
