#include "client/kubeconfig.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "api/json.h"
#include "api/yaml.h"
#include "util/base64.h"

namespace kubesched::client {
namespace {

namespace json = api::json;
namespace yaml = api::yaml;

std::expected<std::string, std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::unexpected(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  return std::move(out).str();
}

std::string TrimSpace(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// Reads one kubeconfig document; every error names the field it is about.
class KubeconfigReader {
 public:
  KubeconfigReader(const json::Value& root, const yaml::ScalarTexts& texts, std::filesystem::path dir)
      : root_(root), texts_(texts), dir_(std::move(dir)) {}

  // A string field; absent or null is empty. Scalars that YAML resolved to numbers or booleans
  // read as written, as a string field would in Go.
  std::expected<std::string, std::string> String(const json::Value& object, std::string_view key,
                                                 const std::string& path) const {
    const json::Value* v = json::Find(object, key);
    if (v == nullptr || v->IsNull()) return "";
    if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
    if (v->IsNumber() || v->IsBool()) {
      if (auto text = texts_.Find(v)) return std::string(*text);
      return json::Encode(*v);
    }
    return std::unexpected(fmt::format("{}.{}: must be a string", path, key));
  }

  std::expected<bool, std::string> Bool(const json::Value& object, std::string_view key,
                                        const std::string& path) const {
    const json::Value* v = json::Find(object, key);
    if (v == nullptr || v->IsNull()) return false;
    if (!v->IsBool()) return std::unexpected(fmt::format("{}.{}: must be a boolean", path, key));
    return v->GetBool();
  }

  // The entry named `name` of the list `list` ("clusters"), as its inner object (`inner`:
  // "cluster") and that object's field path ("clusters[1].cluster"); nullopt when there is none.
  struct Entry {
    const json::Value* value;
    std::string path;
  };
  std::expected<std::optional<Entry>, std::string> Named(std::string_view list, std::string_view inner,
                                                         const std::string& name) const {
    const json::Value* items = json::Find(root_, list);
    if (items == nullptr || items->IsNull()) return std::nullopt;
    if (!items->IsArray()) return std::unexpected(fmt::format("{}: must be a list", list));
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const json::Value& item = (*items)[i];
      const std::string item_path = fmt::format("{}[{}]", list, i);
      if (!item.IsObject()) return std::unexpected(fmt::format("{}: must be an object", item_path));
      auto item_name = String(item, "name", item_path);
      if (!item_name) return std::unexpected(item_name.error());
      if (*item_name != name) continue;
      const std::string inner_path = fmt::format("{}.{}", item_path, inner);
      const json::Value* value = json::Find(item, inner);
      if (value == nullptr || !value->IsObject()) {
        return std::unexpected(fmt::format("{}: required, an object", inner_path));
      }
      return Entry{value, inner_path};
    }
    return std::nullopt;
  }

  // A file the kubeconfig names, relative to the kubeconfig's directory as client-go resolves it.
  std::string Resolve(const std::string& file) const {
    std::filesystem::path p(file);
    if (p.is_absolute() || dir_.empty()) return file;
    return (dir_ / p).string();
  }

  // PEM from `<key>-data` (base64) or else from the file `<key>` names; empty when neither is set.
  std::expected<std::string, std::string> Pem(const json::Value& object, std::string_view key,
                                              const std::string& path) const {
    const std::string data_key = fmt::format("{}-data", key);
    auto data = String(object, data_key, path);
    if (!data) return std::unexpected(data.error());
    if (!data->empty()) {
      std::optional<std::string> decoded = util::Base64Decode(*data);
      if (!decoded) return std::unexpected(fmt::format("{}.{}: invalid base64", path, data_key));
      return std::move(*decoded);
    }
    auto file = String(object, key, path);
    if (!file) return std::unexpected(file.error());
    if (file->empty()) return "";
    auto content = ReadFile(Resolve(*file));
    if (!content) return std::unexpected(fmt::format("{}.{}: {}", path, key, content.error()));
    return content;
  }

  std::expected<RestConfig, std::string> Read(const std::string& wanted_context) const {
    std::string context_name = wanted_context;
    std::string context_source = "context";
    if (context_name.empty()) {
      auto current = String(root_, "current-context", "");
      if (!current) return std::unexpected(current.error().substr(1));
      if (current->empty()) return std::unexpected("current-context: not set, and no context was given");
      context_name = *current;
      context_source = "current-context: context";
    }
    auto context = Named("contexts", "context", context_name);
    if (!context) return std::unexpected(context.error());
    if (!*context) return std::unexpected(fmt::format("{} \"{}\" not found", context_source, context_name));
    const json::Value& ctx = *(*context)->value;
    const std::string& ctx_path = (*context)->path;

    auto cluster_name = String(ctx, "cluster", ctx_path);
    if (!cluster_name) return std::unexpected(cluster_name.error());
    if (cluster_name->empty()) return std::unexpected(fmt::format("{}.cluster: required", ctx_path));
    auto cluster = Named("clusters", "cluster", *cluster_name);
    if (!cluster) return std::unexpected(cluster.error());
    if (!*cluster) return std::unexpected(fmt::format("{}.cluster: cluster \"{}\" not found", ctx_path, *cluster_name));

    RestConfig config;
    if (auto read = ReadCluster(*(*cluster)->value, (*cluster)->path, config); !read)
      return std::unexpected(read.error());

    auto user_name = String(ctx, "user", ctx_path);
    if (!user_name) return std::unexpected(user_name.error());
    // No user is allowed: the requests go without credentials.
    if (!user_name->empty()) {
      auto user = Named("users", "user", *user_name);
      if (!user) return std::unexpected(user.error());
      if (!*user) return std::unexpected(fmt::format("{}.user: user \"{}\" not found", ctx_path, *user_name));
      if (auto read = ReadUser(*(*user)->value, (*user)->path, config); !read) return std::unexpected(read.error());
    }
    return config;
  }

 private:
  std::expected<void, std::string> ReadCluster(const json::Value& cluster, const std::string& path,
                                               RestConfig& config) const {
    auto server = String(cluster, "server", path);
    if (!server) return std::unexpected(server.error());
    if (server->empty()) return std::unexpected(fmt::format("{}.server: required", path));
    config.server = *server;
    auto proxy = String(cluster, "proxy-url", path);
    if (!proxy) return std::unexpected(proxy.error());
    if (!proxy->empty()) return std::unexpected(fmt::format("{}.proxy-url: not supported", path));
    auto insecure = Bool(cluster, "insecure-skip-tls-verify", path);
    if (!insecure) return std::unexpected(insecure.error());
    config.tls.insecure = *insecure;
    auto ca = Pem(cluster, "certificate-authority", path);
    if (!ca) return std::unexpected(ca.error());
    // client-go's validation: trusting a CA and skipping verification contradict each other.
    if (config.tls.insecure && !ca->empty()) {
      return std::unexpected(
          fmt::format("{}: specifying a root certificates file with insecure-skip-tls-verify is not allowed", path));
    }
    config.tls.ca_pem = std::move(*ca);
    auto server_name = String(cluster, "tls-server-name", path);
    if (!server_name) return std::unexpected(server_name.error());
    config.tls.server_name = std::move(*server_name);
    return {};
  }

  std::expected<void, std::string> ReadUser(const json::Value& user, const std::string& path,
                                            RestConfig& config) const {
    for (std::string_view unsupported : {"exec", "auth-provider"}) {
      const json::Value* v = json::Find(user, unsupported);
      if (v != nullptr && !v->IsNull()) {
        return std::unexpected(
            fmt::format("{}.{}: credential plugins are not supported (use a token, tokenFile or client certificate)",
                        path, unsupported));
      }
    }
    for (std::string_view unsupported : {"as", "as-uid", "as-groups", "as-user-extra"}) {
      const json::Value* v = json::Find(user, unsupported);
      if (v != nullptr && !v->IsNull())
        return std::unexpected(fmt::format("{}.{}: impersonation is not supported", path, unsupported));
    }
    auto cert = Pem(user, "client-certificate", path);
    if (!cert) return std::unexpected(cert.error());
    auto key = Pem(user, "client-key", path);
    if (!key) return std::unexpected(key.error());
    if (cert->empty() != key->empty()) {
      return std::unexpected(fmt::format("{}: client-certificate and client-key must be given together", path));
    }
    config.tls.client_cert_pem = std::move(*cert);
    config.tls.client_key_pem = std::move(*key);

    auto token = String(user, "token", path);
    if (!token) return std::unexpected(token.error());
    config.bearer_token = std::move(*token);
    auto token_file = String(user, "tokenFile", path);
    if (!token_file) return std::unexpected(token_file.error());
    if (!token_file->empty()) {
      config.bearer_token_file = Resolve(*token_file);
      // As client-go: the file must be readable now when it is the only token.
      if (config.bearer_token.empty()) {
        auto content = ReadTokenFile(config.bearer_token_file);
        if (!content) return std::unexpected(fmt::format("{}.tokenFile: {}", path, content.error()));
        config.bearer_token = std::move(*content);
      }
    }
    auto username = String(user, "username", path);
    if (!username) return std::unexpected(username.error());
    auto password = String(user, "password", path);
    if (!password) return std::unexpected(password.error());
    config.username = std::move(*username);
    config.password = std::move(*password);
    return {};
  }

  const json::Value& root_;
  const yaml::ScalarTexts& texts_;
  std::filesystem::path dir_;
};

}  // namespace

std::expected<RestConfig, std::string> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto fail = [&](std::string_view message) {
    return std::unexpected(fmt::format("kubeconfig {}: {}", path, message));
  };
  auto text = ReadFile(path);
  if (!text) return std::unexpected(fmt::format("kubeconfig: {}", text.error()));
  json::Document doc;
  yaml::ScalarTexts texts;
  if (auto parsed = yaml::Parse(*text, doc, &texts); !parsed) {
    const auto& e = parsed.error();
    if (e.line > 0) return fail(fmt::format("line {}, column {}: {}", e.line, e.column, e.message));
    return fail(e.message);
  }
  if (!doc.IsObject()) return fail(doc.IsNull() ? "empty" : "not a mapping");
  KubeconfigReader reader(doc, texts, std::filesystem::path(path).parent_path());
  auto config = reader.Read(context);
  if (!config) return fail(config.error());
  return config;
}

std::expected<std::string, std::string> ReadTokenFile(const std::string& path) {
  auto content = ReadFile(path);
  if (!content) return std::unexpected(content.error());
  return TrimSpace(std::move(*content));
}

std::expected<RestConfig, std::string> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return std::unexpected(
        "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined");
  }
  RestConfig config;
  const std::string_view h(host);
  // net.JoinHostPort: an IPv6 address goes in brackets.
  config.server = h.find(':') != std::string_view::npos ? fmt::format("https://[{}]:{}", h, port)
                                                        : fmt::format("https://{}:{}", h, port);
  config.bearer_token_file = (std::filesystem::path(sa_dir) / "token").string();
  auto token = ReadTokenFile(config.bearer_token_file);
  if (!token) return std::unexpected(fmt::format("in-cluster configuration: {}", token.error()));
  config.bearer_token = std::move(*token);
  if (auto ca = ReadFile((std::filesystem::path(sa_dir) / "ca.crt").string())) config.tls.ca_pem = std::move(*ca);
  return config;
}

std::expected<RestConfig, std::string> ResolveRestConfig(const std::string& kubeconfig_path, const std::string& master,
                                                         const std::string& sa_dir) {
  std::expected<RestConfig, std::string> config;
  if (!kubeconfig_path.empty()) {
    config = LoadKubeconfig(kubeconfig_path);
  } else if (!master.empty()) {
    config = RestConfig{};
  } else {
    config = InClusterConfig(sa_dir);
    if (!config) {
      return std::unexpected(
          fmt::format("no --kubeconfig or --master given, and not running in a cluster: {}", config.error()));
    }
  }
  if (config && !master.empty()) config->server = master;
  return config;
}

}  // namespace kubesched::client
