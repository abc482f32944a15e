#include "client/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

namespace kubesched::client {
namespace {

using ::testing::HasSubstr;

// A fresh directory under the test's temporary directory, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "/kubeconfig_test.XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string file = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::string path_;
};

// Sets (or, with nullopt, unsets) an environment variable for the test's duration.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// base64 of "CA DATA", "CERT DATA" and "KEY DATA".
constexpr const char* kCaData = "Q0EgREFUQQ==";
constexpr const char* kCertData = "Q0VSVCBEQVRB";
constexpr const char* kKeyData = "S0VZIERBVEE=";

TEST(KubeconfigTest, Load) {
  struct Case {
    std::string name;
    std::string kubeconfig;
    std::string context = {};
    //! Empty: loading succeeds. Otherwise the whole error ({path}: the file, {dir}: its directory),
    //! or its beginning when it ends in a space.
    std::string error = {};
    std::function<void(const RestConfig&, const std::string& dir)> check = {};
  };
  const std::string two_contexts = R"(apiVersion: v1
kind: Config
current-context: one
clusters:
- name: a
  cluster:
    server: https://a.example:6443
    certificate-authority: certs/ca.pem
- name: b
  cluster:
    server: http://b.example:8080
    insecure-skip-tls-verify: true
contexts:
- name: one
  context: {cluster: a, user: alice, namespace: kube-system}
- name: two
  context: {cluster: b, user: bob}
users:
- name: alice
  user:
    token: alice-token
    client-certificate: certs/client.pem
    client-key: /ABS/key.pem
- name: bob
  user:
    username: bob
    password: "0123"
)";
  auto one_context = [](const std::string& cluster, const std::string& user) {
    return "current-context: c\nclusters:\n- name: k\n  cluster:\n" + cluster +
           "contexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user:\n" + user;
  };
  const std::vector<Case> cases = {
      {.name = "current context, relative and absolute files",
       .kubeconfig = two_contexts,
       .check =
           [](const RestConfig& c, const std::string&) {
             EXPECT_EQ(c.server, "https://a.example:6443");
             EXPECT_EQ(c.tls.ca_pem, "CA FILE");
             EXPECT_EQ(c.tls.client_cert_pem, "CERT FILE");
             EXPECT_EQ(c.tls.client_key_pem, "KEY FILE");
             EXPECT_FALSE(c.tls.insecure);
             EXPECT_EQ(c.bearer_token, "alice-token");
             EXPECT_EQ(c.bearer_token_file, "");
           }},
      {.name = "explicit context, insecure, basic auth read as written",
       .kubeconfig = two_contexts,
       .context = "two",
       .check =
           [](const RestConfig& c, const std::string&) {
             EXPECT_EQ(c.server, "http://b.example:8080");
             EXPECT_TRUE(c.tls.insecure);
             EXPECT_EQ(c.tls.ca_pem, "");
             EXPECT_EQ(c.username, "bob");
             EXPECT_EQ(c.password, "0123");
             EXPECT_EQ(c.bearer_token, "");
           }},
      {.name = "explicit context not found",
       .kubeconfig = two_contexts,
       .context = "three",
       .error = "kubeconfig {path}: context \"three\" not found"},
      {.name = "current context not found",
       .kubeconfig = "current-context: gone\ncontexts: []\n",
       .error = "kubeconfig {path}: current-context: context \"gone\" not found"},
      {.name = "no current context",
       .kubeconfig = "clusters: []\n",
       .error = "kubeconfig {path}: current-context: not set, and no context was given"},
      {.name = "cluster not found",
       .kubeconfig =
           "current-context: c\ncontexts:\n- name: x\n  context: {cluster: a}\n- name: c\n  context: {cluster: foo}\n",
       .error = "kubeconfig {path}: contexts[1].context.cluster: cluster \"foo\" not found"},
      {.name = "user not found",
       .kubeconfig = "current-context: c\nclusters:\n- name: k\n  cluster: {server: 'https://k'}\n"
                     "contexts:\n- name: c\n  context: {cluster: k, user: carol}\n",
       .error = "kubeconfig {path}: contexts[0].context.user: user \"carol\" not found"},
      {.name = "no user: no credentials",
       .kubeconfig = "current-context: c\nclusters:\n- name: k\n  cluster: {server: 'https://k'}\n"
                     "contexts:\n- name: c\n  context: {cluster: k}\n",
       .check =
           [](const RestConfig& c, const std::string&) {
             EXPECT_EQ(c.server, "https://k");
             EXPECT_EQ(c.bearer_token, "");
             EXPECT_EQ(c.username, "");
           }},
      {.name = "server required",
       .kubeconfig = one_context("    insecure-skip-tls-verify: true\n", "    token: t\n"),
       .error = "kubeconfig {path}: clusters[0].cluster.server: required"},
      {.name = "data fields are base64 and win over files",
       .kubeconfig = one_context(
           std::string("    server: https://k\n    certificate-authority: missing.pem\n") +
               "    certificate-authority-data: " + kCaData + "\n    tls-server-name: kubernetes\n",
           std::string("    client-certificate-data: ") + kCertData + "\n    client-key-data: " + kKeyData + "\n"),
       .check =
           [](const RestConfig& c, const std::string&) {
             EXPECT_EQ(c.tls.ca_pem, "CA DATA");
             EXPECT_EQ(c.tls.client_cert_pem, "CERT DATA");
             EXPECT_EQ(c.tls.client_key_pem, "KEY DATA");
             EXPECT_EQ(c.tls.server_name, "kubernetes");
           }},
      {.name = "invalid base64",
       .kubeconfig =
           one_context("    server: https://k\n    certificate-authority-data: Q0E*REFUQQ==\n", "    token: t\n"),
       .error = "kubeconfig {path}: clusters[0].cluster.certificate-authority-data: invalid base64"},
      {.name = "missing certificate file names the field and the resolved file",
       .kubeconfig = one_context("    server: https://k\n    certificate-authority: nope.pem\n", "    token: t\n"),
       .error = "kubeconfig {path}: clusters[0].cluster.certificate-authority: cannot read {dir}/nope.pem: No such "
                "file or directory"},
      {.name = "tokenFile alone is read now, relative to the kubeconfig",
       .kubeconfig = one_context("    server: https://k\n", "    tokenFile: token.txt\n"),
       .check =
           [](const RestConfig& c, const std::string& dir) {
             EXPECT_EQ(c.bearer_token, "file-token");
             EXPECT_EQ(c.bearer_token_file, dir + "/token.txt");
           }},
      {.name = "token and tokenFile: both kept (the file wins per request)",
       .kubeconfig = one_context("    server: https://k\n", "    token: inline\n    tokenFile: token.txt\n"),
       .check =
           [](const RestConfig& c, const std::string& dir) {
             EXPECT_EQ(c.bearer_token, "inline");
             EXPECT_EQ(c.bearer_token_file, dir + "/token.txt");
           }},
      {.name = "unreadable tokenFile",
       .kubeconfig = one_context("    server: https://k\n", "    tokenFile: /nonexistent/token\n"),
       .error = "kubeconfig {path}: users[0].user.tokenFile: cannot read /nonexistent/token: No such file or "
                "directory"},
      {.name = "insecure with a CA is refused",
       .kubeconfig = one_context(std::string("    server: https://k\n    insecure-skip-tls-verify: true\n") +
                                     "    certificate-authority-data: " + kCaData + "\n",
                                 "    token: t\n"),
       .error = "kubeconfig {path}: clusters[0].cluster: specifying a root certificates file with "
                "insecure-skip-tls-verify is not allowed"},
      {.name = "insecure must be a boolean",
       .kubeconfig = one_context("    server: https://k\n    insecure-skip-tls-verify: 'true'\n", "    token: t\n"),
       .error = "kubeconfig {path}: clusters[0].cluster.insecure-skip-tls-verify: must be a boolean"},
      {.name = "exec user refused",
       .kubeconfig = one_context("    server: https://k\n",
                                 "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n"),
       .error = "kubeconfig {path}: users[0].user.exec: credential plugins are not supported (use a token, "
                "tokenFile or client certificate)"},
      {.name = "auth-provider user refused",
       .kubeconfig = one_context("    server: https://k\n", "    auth-provider:\n      name: gcp\n"),
       .error = "kubeconfig {path}: users[0].user.auth-provider: credential plugins are not supported (use a "
                "token, tokenFile or client certificate)"},
      {.name = "certificate without key",
       .kubeconfig =
           one_context("    server: https://k\n", std::string("    client-certificate-data: ") + kCertData + "\n"),
       .error = "kubeconfig {path}: users[0].user: client-certificate and client-key must be given together"},
      {.name = "malformed YAML names the file and the line",
       .kubeconfig = "current-context: c\nclusters: [\n",
       .error = "kubeconfig {path}: line "},
      {.name = "not a mapping", .kubeconfig = "- a\n- b\n", .error = "kubeconfig {path}: not a mapping"},
      {.name = "JSON",
       .kubeconfig =
           R"({"current-context": "c", "clusters": [{"name": "k", "cluster": {"server": "https://[::1]:6443"}}],
                        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                        "users": [{"name": "u", "user": {"token": "json-token"}}]})",
       .check =
           [](const RestConfig& c, const std::string&) {
             EXPECT_EQ(c.server, "https://[::1]:6443");
             EXPECT_EQ(c.bearer_token, "json-token");
           }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ScratchDir dir;
    dir.Write("certs/ca.pem", "CA FILE");
    dir.Write("certs/client.pem", "CERT FILE");
    dir.Write("token.txt", "  file-token\n");
    const std::string key = dir.Write("key.pem", "KEY FILE");
    std::string text = c.kubeconfig;
    if (auto at = text.find("/ABS/key.pem"); at != std::string::npos) text.replace(at, 12, key);
    const std::string path = dir.Write("config", text);
    auto config = LoadKubeconfig(path, c.context);
    if (c.error.empty()) {
      ASSERT_TRUE(config.has_value()) << config.error();
      c.check(*config, dir.path());
      continue;
    }
    ASSERT_FALSE(config.has_value());
    std::string want = c.error;
    for (auto [placeholder, value] : {std::pair{"{path}", path}, std::pair{"{dir}", dir.path()}}) {
      if (auto at = want.find(placeholder); at != std::string::npos) want.replace(at, std::strlen(placeholder), value);
    }
    if (want.ends_with(' ')) {
      EXPECT_THAT(config.error(), ::testing::StartsWith(want));
    } else {
      EXPECT_EQ(config.error(), want);
    }
  }
}

TEST(KubeconfigTest, MissingFileNamesIt) {
  auto config = LoadKubeconfig("/nonexistent/kubeconfig");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error(), "kubeconfig: cannot read /nonexistent/kubeconfig: No such file or directory");
}

TEST(InClusterConfigTest, ReadsEnvironmentTokenAndCa) {
  struct Case {
    std::string name;
    std::string host;
    std::string want_server;
  };
  const std::vector<Case> cases = {
      {"IPv4", "10.96.0.1", "https://10.96.0.1:443"},
      {"IPv6 in brackets", "fd00:10:96::1", "https://[fd00:10:96::1]:443"},
      {"DNS name", "kubernetes.default.svc", "https://kubernetes.default.svc:443"},
  };
  ScratchDir dir;
  dir.Write("token", "sa-token\n");
  dir.Write("ca.crt", "CLUSTER CA");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ScopedEnv host("KUBERNETES_SERVICE_HOST", c.host);
    auto config = InClusterConfig(dir.path());
    ASSERT_TRUE(config.has_value()) << config.error();
    EXPECT_EQ(config->server, c.want_server);
    EXPECT_EQ(config->bearer_token, "sa-token");
    EXPECT_EQ(config->bearer_token_file, dir.path() + "/token");
    EXPECT_EQ(config->tls.ca_pem, "CLUSTER CA");
    EXPECT_FALSE(config->tls.insecure);
  }
}

TEST(InClusterConfigTest, Errors) {
  ScratchDir dir;
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto config = InClusterConfig(dir.path());
    ASSERT_FALSE(config.has_value());
    EXPECT_THAT(config.error(), HasSubstr("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"));
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  auto no_token = InClusterConfig(dir.path());
  ASSERT_FALSE(no_token.has_value());
  EXPECT_EQ(no_token.error(),
            "in-cluster configuration: cannot read " + dir.path() + "/token: No such file or directory");
  // Without ca.crt the system's CAs are used, as client-go does.
  dir.Write("token", "t");
  auto no_ca = InClusterConfig(dir.path());
  ASSERT_TRUE(no_ca.has_value()) << no_ca.error();
  EXPECT_EQ(no_ca->tls.ca_pem, "");
}

TEST(ResolveRestConfigTest, Precedence) {
  ScratchDir dir;
  const std::string kubeconfig =
      dir.Write("config",
                "current-context: c\nclusters:\n- name: k\n  cluster: {server: 'https://from-file:6443', "
                "insecure-skip-tls-verify: true}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
                "users:\n- name: u\n  user: {token: file-user}\n");
  ScratchDir sa;
  sa.Write("token", "sa-token");
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");

  struct Case {
    std::string name;
    std::string kubeconfig;
    std::string master;
    std::string want_server;
    std::string want_token;
  };
  const std::vector<Case> cases = {
      {"kubeconfig wins over in-cluster", kubeconfig, "", "https://from-file:6443", "file-user"},
      {"master overrides the kubeconfig's server, credentials kept", kubeconfig, "https://master:443",
       "https://master:443", "file-user"},
      {"master alone: no credentials, no in-cluster", "", "http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
      {"neither: in-cluster", "", "", "https://10.96.0.1:6443", "sa-token"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto config = ResolveRestConfig(c.kubeconfig, c.master, sa.path());
    ASSERT_TRUE(config.has_value()) << config.error();
    EXPECT_EQ(config->server, c.want_server);
    EXPECT_EQ(config->bearer_token, c.want_token);
  }
  // KUBECONFIG is not read (kube-scheduler does not read it).
  ScopedEnv env("KUBECONFIG", kubeconfig);
  auto in_cluster = ResolveRestConfig("", "", sa.path());
  ASSERT_TRUE(in_cluster.has_value()) << in_cluster.error();
  EXPECT_EQ(in_cluster->server, "https://10.96.0.1:6443");
}

TEST(ResolveRestConfigTest, NothingConfigured) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
  ScratchDir sa;
  auto config = ResolveRestConfig("", "", sa.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(),
              ::testing::StartsWith("no --kubeconfig or --master given, and not running in a cluster: "));
  auto bad_file = ResolveRestConfig("/nonexistent/config", "https://m");
  ASSERT_FALSE(bad_file.has_value());
  EXPECT_THAT(bad_file.error(), HasSubstr("/nonexistent/config"));
}

}  // namespace
}  // namespace kubesched::client
