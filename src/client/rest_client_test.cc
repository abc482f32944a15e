#include "client/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "api/json.h"
#include "server/api_handler.h"
#include "server/http_server.h"
#include "server/tls.h"
#include "store/resources.h"
#include "testing/api_test_bed.h"
#include "util/clock.h"

namespace kubesched::client {

using kubesched::testing::ApiTestBed;
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string PodJson(std::string_view name) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}"}},"spec":{{"containers":[{{"name":"c","image":"busybox"}}]}}}})",
      name);
}

api::json::Document Decode(std::string_view text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

std::unique_ptr<RestClient> MustCreate(const RestConfig& config) {
  auto client = RestClient::Create(config);
  EXPECT_TRUE(client.has_value()) << client.error();
  return client ? std::move(*client) : nullptr;
}

// A self-signed CA certificate under another name than the test bed's (OpenSSL tells same-named
// CAs without authority key identifiers apart poorly, as `openssl verify` shows).
std::string OtherCaPem(const std::string& common_name) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
  EXPECT_TRUE(key != nullptr && cert != nullptr);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 7);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  EXPECT_GT(X509_sign(cert.get(), key.get(), EVP_sha256()), 0);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  PEM_write_bio_X509(bio.get(), cert.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

std::shared_ptr<const server::TlsIdentity> NewIdentity() {
  auto identity = server::GenerateSelfSignedIdentity();
  EXPECT_TRUE(identity.has_value()) << identity.error();
  return std::make_shared<const server::TlsIdentity>(std::move(*identity));
}

TEST(RestClientTest, GetVersionAndListPods) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url()});
  ASSERT_NE(client, nullptr);
  auto version = client->Do("GET", "/version");
  ASSERT_TRUE(version.has_value()) << version.error();
  EXPECT_EQ(version->status, 200);
  EXPECT_THAT(version->content_type, StartsWith("application/json"));
  EXPECT_EQ(api::json::GetString(Decode(version->body), "major"), "1");

  auto list = client->Do("GET", "/api/v1/namespaces/default/pods?limit=500");
  ASSERT_TRUE(list.has_value()) << list.error();
  EXPECT_EQ(list->status, 200);
  EXPECT_EQ(api::json::GetString(Decode(list->body), "kind"), "PodList");
}

TEST(RestClientTest, CreateThenReadBack) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url()});
  ASSERT_NE(client, nullptr);
  auto created = client->Do("POST", "/api/v1/namespaces/default/pods", PodJson("p1"));
  ASSERT_TRUE(created.has_value()) << created.error();
  ASSERT_EQ(created->status, 201) << created->body;
  auto got = client->Do("GET", "/api/v1/namespaces/default/pods/p1");
  ASSERT_TRUE(got.has_value()) << got.error();
  ASSERT_EQ(got->status, 200);
  api::json::Document pod = Decode(got->body);
  EXPECT_EQ(api::json::GetString(pod["metadata"], "name"), "p1");
  EXPECT_EQ(api::json::GetString(pod["spec"]["containers"][0], "image"), "busybox");
}

TEST(RestClientTest, HttpErrorIsAResponseWithAStatus) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url()});
  ASSERT_NE(client, nullptr);
  auto missing = client->Do("GET", "/api/v1/namespaces/default/pods/nope");
  ASSERT_TRUE(missing.has_value()) << missing.error();
  EXPECT_EQ(missing->status, 404);
  api::json::Document status = Decode(missing->body);
  EXPECT_EQ(api::json::GetString(status, "kind"), "Status");
  EXPECT_EQ(api::json::GetString(status, "reason"), "NotFound");
}

TEST(RestClientTest, ConcurrentRequestsFromManyThreads) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url(), .qps = -1});
  ASSERT_NE(client, nullptr);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 10;
  std::atomic<int> created{0};
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = client->Do("POST", "/api/v1/namespaces/default/pods", PodJson(fmt::format("p-{}-{}", t, i)));
        if (!r) {
          failures[t] = r.error();
        } else if (r->status != 201) {
          failures[t] = r->body;
        } else {
          created.fetch_add(1);
        }
        if (auto g = client->Do("GET", fmt::format("/api/v1/namespaces/default/pods/p-{}-{}", t, i));
            !g || g->status != 200) {
          failures[t] = g ? g->body : g.error();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
  EXPECT_EQ(created.load(), kThreads * kPerThread);
  auto list = client->Do("GET", "/api/v1/namespaces/default/pods");
  ASSERT_TRUE(list.has_value()) << list.error();
  EXPECT_EQ(Decode(list->body)["items"].Size(), static_cast<rapidjson::SizeType>(kThreads * kPerThread));
}

TEST(RestClientTest, Tls) {
  auto identity = NewIdentity();
  auto other = NewIdentity();
  ApiTestBed bed(identity);
  const std::string url = bed.Url();
  ASSERT_THAT(url, StartsWith("https://127.0.0.1:"));
  struct Case {
    std::string name;
    TlsConfig tls;
    std::string error = {};  // empty: GET /version succeeds; else a part of the error
  };
  const std::vector<Case> cases = {
      {"verified with the server's CA", {.ca_pem = identity->certificate_pem}},
      {"CA bundle with the right CA second", {.ca_pem = OtherCaPem("another-ca") + identity->certificate_pem}},
      {"tls-server-name the certificate names", {.ca_pem = identity->certificate_pem, .server_name = "localhost"}},
      {"wrong CA", {.ca_pem = other->certificate_pem}, "TLS verification of the server's certificate failed"},
      {"system CAs do not know the test bed", {}, "TLS verification of the server's certificate failed"},
      {"tls-server-name the certificate does not name",
       {.ca_pem = identity->certificate_pem, .server_name = "kubernetes.example"},
       "TLS verification of the server's certificate failed: hostname mismatch"},
      {"insecure", {.insecure = true}},
      {"insecure with a certificate that would not verify", {.insecure = true, .server_name = "kubernetes.example"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto client = MustCreate({.server = url, .tls = c.tls});
    ASSERT_NE(client, nullptr);
    auto version = client->Do("GET", "/version");
    if (c.error.empty()) {
      ASSERT_TRUE(version.has_value()) << version.error();
      EXPECT_EQ(version->status, 200);
    } else {
      ASSERT_FALSE(version.has_value());
      EXPECT_THAT(version.error(), StartsWith("GET " + url + "/version: "));
      EXPECT_THAT(version.error(), HasSubstr(c.error));
    }
  }
}

TEST(RestClientTest, CreateChecksTlsMaterial) {
  auto a = NewIdentity();
  auto b = NewIdentity();
  struct Case {
    std::string name;
    TlsConfig tls;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"CA that is not PEM", {.ca_pem = "not a certificate"}, "certificate authority: no PEM certificate found"},
      {"client certificate that is not PEM",
       {.client_cert_pem = "junk", .client_key_pem = a->private_key_pem},
       "client certificate: "},
      {"client key that is not PEM", {.client_cert_pem = a->certificate_pem, .client_key_pem = "junk"}, "client key: "},
      {"key of another certificate",
       {.client_cert_pem = a->certificate_pem, .client_key_pem = b->private_key_pem},
       "cannot set up TLS for https://127.0.0.1:1: "},
      {"certificate without key", {.client_cert_pem = a->certificate_pem}, "a client certificate needs its key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto client = RestClient::Create({.server = "https://127.0.0.1:1", .tls = c.tls});
    ASSERT_FALSE(client.has_value());
    EXPECT_THAT(client.error(), StartsWith(c.error));
  }
  auto good =
      RestClient::Create({.server = "https://127.0.0.1:1",
                          .tls = {.client_cert_pem = a->certificate_pem, .client_key_pem = a->private_key_pem}});
  EXPECT_TRUE(good.has_value()) << good.error();
  for (std::string server : {"ftp://h", "https://", "https://h:99999", "https://[::1"}) {
    SCOPED_TRACE(server);
    auto bad = RestClient::Create({.server = server});
    ASSERT_FALSE(bad.has_value());
    EXPECT_THAT(bad.error(), StartsWith(fmt::format("server \"{}\": ", server)));
  }
}

TEST(RestClientTest, ConnectionRefusedNamesTheServer) {
  // A port that was free a moment ago: nothing listens on it.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  const std::string url = fmt::format("http://127.0.0.1:{}", port);
  auto client = MustCreate({.server = url});
  ASSERT_NE(client, nullptr);
  auto r = client->Do("GET", "/version");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), "GET " + url + "/version: cannot connect");
  auto watch = client->Stream("/api/v1/pods?watch=1", [](std::string_view) { return true; }, {});
  ASSERT_FALSE(watch.has_value());
  EXPECT_EQ(watch.error(), "GET " + url + "/api/v1/pods?watch=1: cannot connect");
}

// Collects a watch's lines from the thread that runs it.
struct Lines {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> lines;  // guarded by mu

  void Add(std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
    cv.notify_all();
  }
  //! Waits (at most 20 s, far beyond need) until `n` lines came; the lines then.
  std::vector<std::string> WaitFor(size_t n) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return lines.size() >= n; });
    return lines;
  }
};

TEST(RestClientTest, WatchSeesPodsCreatedMeanwhile) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url()});
  ASSERT_NE(client, nullptr);
  auto list = client->Do("GET", "/api/v1/namespaces/default/pods");
  ASSERT_TRUE(list.has_value()) << list.error();
  const std::string rv(api::json::GetString(Decode(list->body)["metadata"], "resourceVersion"));

  Lines lines;
  std::expected<Response, std::string> result;
  std::thread watcher([&] {
    result = client->Stream("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv,
                            [&](std::string_view line) {
                              lines.Add(line);
                              return lines.WaitFor(0).size() < 3;  // the third event ends the watch
                            },
                            {});
  });
  for (int i = 0; i < 3; ++i) {
    auto created = client->Do("POST", "/api/v1/namespaces/default/pods", PodJson(fmt::format("w{}", i)));
    ASSERT_TRUE(created.has_value()) << created.error();
    ASSERT_EQ(created->status, 201);
  }
  watcher.join();
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->status, 200);
  const std::vector<std::string> events = lines.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    api::json::Document event = Decode(events[i]);
    EXPECT_EQ(api::json::GetString(event, "type"), "ADDED");
    EXPECT_EQ(api::json::GetString(event["object"]["metadata"], "name"), fmt::format("w{}", i));
  }
}

TEST(RestClientTest, StopEndsAWatchPromptly) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url()});
  ASSERT_NE(client, nullptr);
  std::stop_source stop;
  Lines lines;
  std::expected<Response, std::string> result;
  std::thread watcher([&] {
    result = client->Stream(
        "/api/v1/namespaces/default/pods?watch=1",
        [&](std::string_view line) {
          lines.Add(line);
          return true;
        },
        stop.get_token());
  });
  // Once an event came through, the watch is established and idle.
  auto created = client->Do("POST", "/api/v1/namespaces/default/pods", PodJson("p"));
  ASSERT_TRUE(created.has_value()) << created.error();
  ASSERT_EQ(lines.WaitFor(1).size(), 1u);
  const auto start = std::chrono::steady_clock::now();
  stop.request_stop();
  watcher.join();
  // The idle timeout is 5 minutes and the server sends nothing more: only the stop ends it.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->status, 200);

  // Stopped before it starts: nothing is sent.
  auto late = client->Stream(
      "/api/v1/pods?watch=1", [](std::string_view) { return true; }, stop.get_token());
  ASSERT_FALSE(late.has_value());
  EXPECT_THAT(late.error(), HasSubstr("stopped before it started"));
}

TEST(RestClientTest, WatchErrorStatusComesBackWhole) {
  ApiTestBed bed;
  auto client = MustCreate({.server = bed.Url()});
  ASSERT_NE(client, nullptr);
  bool called = false;
  auto result = client->Stream("/api/v1/namespaces/default/nothings?watch=1",
                               [&](std::string_view) {
                                 called = true;
                                 return true;
                               },
                               {});
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->status, 404);
  EXPECT_EQ(api::json::GetString(Decode(result->body), "kind"), "Status");
  EXPECT_FALSE(called);
}

// A plain cpp-httplib server recording what the client sends (the test bed ignores credentials).
class RecordingServer {
 public:
  struct Seen {
    std::string path, field_manager, authorization, user_agent, accept, content_type, body;
  };
  RecordingServer() {
    auto record = [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      seen_.push_back({req.path, req.get_param_value("fieldManager"), req.get_header_value("Authorization"),
                       req.get_header_value("User-Agent"), req.get_header_value("Accept"),
                       req.get_header_value("Content-Type"), req.body});
      if (req.path.ends_with("/watch")) {
        // Events split across chunks, with blank lines in between.
        res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
          for (std::string_view part : {"{\"type\":\"ADD", "ED\"}\n\n{\"type\":", "\"DELETED\"}\r\n", "{\"last\":1}"}) {
            sink.write(part.data(), part.size());
          }
          sink.done();
          return true;
        });
        return;
      }
      res.set_content("{}", "application/json");
    };
    server_.Get(".*", record);
    server_.Post(".*", httplib::Server::Handler(record));
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~RecordingServer() {
    server_.stop();
    thread_.join();
  }
  std::string Url() const { return fmt::format("http://127.0.0.1:{}", port_); }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Seen> seen_;  // guarded by mu_
};

TEST(RestClientTest, SendsCredentialsAndHeaders) {
  RecordingServer server;
  const std::string token_file = ::testing::TempDir() + "/rest_client_test_token";
  std::ofstream(token_file) << "first-token\n";
  struct Case {
    std::string name;
    RestConfig config;
    std::string want_authorization;
  };
  const std::vector<Case> cases = {
      {"bearer token", {.bearer_token = "abc"}, "Bearer abc"},
      {"token file wins over the token",
       {.bearer_token = "abc", .bearer_token_file = token_file},
       "Bearer first-token"},
      {"basic auth", {.username = "admin", .password = "secret"}, "Basic YWRtaW46c2VjcmV0"},
      {"no credentials", {}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RestConfig config = c.config;
    config.server = server.Url() + "/prefix/";
    config.user_agent = "kubesched/test";
    auto client = MustCreate(config);
    ASSERT_NE(client, nullptr);
    auto r = client->Do("POST", "/api/v1/namespaces/default/pods?fieldManager=a+b", "{\"x\":1}");
    ASSERT_TRUE(r.has_value()) << r.error();
    EXPECT_EQ(r->status, 200);
    const RecordingServer::Seen seen = server.seen().back();
    EXPECT_EQ(seen.path, "/prefix/api/v1/namespaces/default/pods");
    // The path went as given: a '+' re-encoded as %2B would arrive as "a+b".
    EXPECT_EQ(seen.field_manager, "a b");
    EXPECT_EQ(seen.authorization, c.want_authorization);
    EXPECT_EQ(seen.user_agent, "kubesched/test");
    EXPECT_EQ(seen.accept, "application/json");
    EXPECT_EQ(seen.content_type, "application/json");
    EXPECT_EQ(seen.body, "{\"x\":1}");
  }

  // A rotated token file is read again.
  auto client = MustCreate({.server = server.Url(), .bearer_token_file = token_file});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Do("GET", "/a").has_value());
  EXPECT_EQ(server.seen().back().authorization, "Bearer first-token");
  std::ofstream(token_file) << "second-token";
  // Another modification time, whatever the file system's timestamp resolution.
  std::filesystem::last_write_time(token_file, std::filesystem::last_write_time(token_file) + std::chrono::seconds(10));
  ASSERT_TRUE(client->Do("GET", "/b").has_value());
  EXPECT_EQ(server.seen().back().authorization, "Bearer second-token");
  std::filesystem::remove(token_file);
}

TEST(RestClientTest, StreamJoinsLinesSplitAcrossChunks) {
  RecordingServer server;
  auto client = MustCreate({.server = server.Url()});
  ASSERT_NE(client, nullptr);
  std::vector<std::string> lines;
  auto result = client->Stream("/watch",
                               [&](std::string_view line) {
                                 lines.emplace_back(line);
                                 return true;
                               },
                               {});
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->status, 200);
  EXPECT_THAT(lines, ::testing::ElementsAre("{\"type\":\"ADDED\"}", "{\"type\":\"DELETED\"}", "{\"last\":1}"));
}

TEST(RestClientTest, RateLimited) {
  RecordingServer server;
  // Burst 1 at 4 qps: the fourth request cannot start before 750 ms (a lower bound only).
  auto client = MustCreate({.server = server.Url(), .qps = 4, .burst = 1});
  ASSERT_NE(client, nullptr);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(client->Do("GET", "/x").has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(750));
}

}  // namespace
}  // namespace kubesched::client
