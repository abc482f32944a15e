#include "client/rest_client.h"

#include <httplib.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "client/rate_limiter.h"
#include "util/base64.h"
#include "util/clock.h"

namespace kubesched::client {
namespace {

constexpr std::chrono::milliseconds kDefaultTimeout{30'000};
// The server sends a bookmark at least every minute or so on a quiet watch; five minutes without
// a byte means the connection is gone.
constexpr std::chrono::minutes kWatchIdleTimeout{5};

// The parts of RestConfig.server.
struct Endpoint {
  bool https = false;
  std::string host;  // without brackets
  int port = 0;
  std::string authority;  // the Host header: host[:port], IPv6 in brackets
  std::string prefix;     // path prefix without a trailing slash ("" or "/k8s")
};

std::expected<Endpoint, std::string> ParseServer(const RestConfig& config) {
  std::string_view s = config.server;
  Endpoint e;
  if (auto scheme_end = s.find("://"); scheme_end != std::string_view::npos) {
    const std::string_view scheme = s.substr(0, scheme_end);
    if (scheme == "https") {
      e.https = true;
    } else if (scheme != "http") {
      return std::unexpected(fmt::format("server \"{}\": the scheme must be http or https", config.server));
    }
    s.remove_prefix(scheme_end + 3);
  } else {
    // client-go's DefaultServerURL: a bare host is https when there is TLS to configure.
    const TlsConfig& tls = config.tls;
    e.https = tls.insecure || !tls.ca_pem.empty() || !tls.client_cert_pem.empty();
  }
  const size_t path_start = s.find('/');
  std::string_view authority = s.substr(0, path_start);
  if (path_start != std::string_view::npos) {
    std::string_view prefix = s.substr(path_start);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    e.prefix = prefix;
  }
  if (authority.empty()) return std::unexpected(fmt::format("server \"{}\": no host", config.server));
  e.authority = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return std::unexpected(fmt::format("server \"{}\": unterminated IPv6 address", config.server));
    }
    e.host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::unexpected(fmt::format("server \"{}\": invalid host", config.server));
      port = rest.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    e.host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  } else {
    e.host = authority;
  }
  e.port = e.https ? 443 : 80;
  if (!port.empty()) {
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), e.port);
    if (ec != std::errc() || end != port.data() + port.size() || e.port < 1 || e.port > 65535) {
      return std::unexpected(fmt::format("server \"{}\": invalid port \"{}\"", config.server, port));
    }
  }
  return e;
}

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

using StorePtr = std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)>;

// A store of every certificate of a PEM bundle (a CA file may hold several: a rotation's old
// and new CA, often under the same name).
std::expected<StorePtr, std::string> ParseCertificates(const std::string& pem) {
  StorePtr store(X509_STORE_new(), &X509_STORE_free);
  BioPtr bio = MemoryBio(pem);
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    const int added = X509_STORE_add_cert(store.get(), cert);
    X509_free(cert);  // the store holds its own reference
    if (added != 1) return std::unexpected(fmt::format("certificate {}: {}", count + 1, OpenSslError()));
    ++count;
  }
  // The loop ends with "no start line" at the end of the input: expected once something was read.
  ERR_clear_error();
  if (count == 0) return std::unexpected("no PEM certificate found");
  return store;
}

// The chain check of a verified connection. With configured CAs it is made against a store of
// those alone: httplib's SSLClient adds the system's default CA paths to any store it is given,
// which would trust every public CA as well. The server's name is checked by OpenSSL itself too
// (on top of httplib's own check), so that a mismatch has a precise reason.
struct VerifyContext {
  X509_STORE* trusted = nullptr;  // null: the SSL context's store (the system's CAs)
  std::string name;               // host name or IP address to check
};

void SetExpectedName(X509_VERIFY_PARAM* param, const std::string& name) {
  if (X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) != 1) {
    ERR_clear_error();  // not an IP address: a DNS name
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  }
}

int VerifyChain(X509_STORE_CTX* ctx, void* arg) {
  const auto* verify = static_cast<const VerifyContext*>(arg);
  if (verify->trusted == nullptr) {
    SetExpectedName(X509_STORE_CTX_get0_param(ctx), verify->name);
    return X509_verify_cert(ctx) == 1 ? 1 : 0;
  }
  // The handshake's context is bound to the SSL context's store; the same check runs in a
  // context over ours, and its outcome (error, verified chain) goes back to the handshake's.
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> own(X509_STORE_CTX_new(), &X509_STORE_CTX_free);
  if (own == nullptr || X509_STORE_CTX_init(own.get(), verify->trusted, X509_STORE_CTX_get0_cert(ctx),
                                            X509_STORE_CTX_get0_untrusted(ctx)) != 1) {
    X509_STORE_CTX_set_error(ctx, X509_V_ERR_OUT_OF_MEM);
    return 0;
  }
  X509_VERIFY_PARAM_set1(X509_STORE_CTX_get0_param(own.get()), X509_STORE_CTX_get0_param(ctx));
  SetExpectedName(X509_STORE_CTX_get0_param(own.get()), verify->name);
  const int ok = X509_verify_cert(own.get()) == 1 ? 1 : 0;
  X509_STORE_CTX_set_error(ctx, X509_STORE_CTX_get_error(own.get()));
  if (ok == 1) X509_STORE_CTX_set0_verified_chain(ctx, X509_STORE_CTX_get1_chain(own.get()));
  return ok;
}

// A literal IP address as is, else the first address the name resolves to (for tls-server-name,
// where httplib is told the name to verify and connects to this address instead).
std::expected<std::string, std::string> NumericAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result); rc != 0) {
    return std::unexpected(fmt::format("cannot resolve {}: {}", host, gai_strerror(rc)));
  }
  char buf[NI_MAXHOST];
  const int rc = getnameinfo(result->ai_addr, result->ai_addrlen, buf, sizeof(buf), nullptr, 0, NI_NUMERICHOST);
  freeaddrinfo(result);
  if (rc != 0) return std::unexpected(fmt::format("cannot resolve {}: {}", host, gai_strerror(rc)));
  return std::string(buf);
}

}  // namespace

struct RestClient::Impl {
  // Set by Create, read-only afterwards.
  RestConfig config;
  Endpoint endpoint;
  std::string base_url;  // scheme://authority, for messages
  // The name httplib connects to, sends as SNI and verifies: tls-server-name when set, with
  // connect_address mapping it to the URL's host.
  std::string tls_name;
  std::map<std::string, std::string> connect_address;
  std::shared_ptr<X509> client_cert;
  std::shared_ptr<EVP_PKEY> client_key;
  StorePtr trusted{nullptr, &X509_STORE_free};
  VerifyContext verify;
  std::chrono::milliseconds timeout{kDefaultTimeout};
  util::RealClock clock;
  std::unique_ptr<RateLimiter> limiter;  // thread-safe itself

  std::mutex pool_mu;
  //! Clients whose connection is free for the next request. Guarded by pool_mu.
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle;

  std::mutex token_mu;
  //! The token last read from bearer_token_file and that file's modification time. Guarded by
  //! token_mu.
  std::string file_token;
  std::filesystem::file_time_type token_mtime{};

  std::unique_ptr<httplib::ClientImpl> NewClient() const {
    std::unique_ptr<httplib::ClientImpl> client;
    if (endpoint.https) {
      auto ssl = client_cert ? std::make_unique<httplib::SSLClient>(tls_name, endpoint.port, client_cert.get(),
                                                                    client_key.get())
                             : std::make_unique<httplib::SSLClient>(tls_name, endpoint.port);
      ssl->enable_server_certificate_verification(!config.tls.insecure);
      // An invalid client (no SSL context: a key that does not match its certificate) fails
      // every request; Create checks for it.
      if (!config.tls.insecure && ssl->is_valid()) {
        SSL_CTX_set_cert_verify_callback(ssl->ssl_context(), &VerifyChain, const_cast<VerifyContext*>(&verify));
      }
      client = std::move(ssl);
    } else {
      client = std::make_unique<httplib::ClientImpl>(endpoint.host, endpoint.port);
    }
    if (!connect_address.empty()) client->set_hostname_addr_map(connect_address);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
    client->set_url_encode(false);  // paths arrive encoded; httplib would re-encode '+' and ','
    client->set_follow_location(false);
    return client;
  }

  std::unique_ptr<httplib::ClientImpl> Acquire() {
    {
      std::lock_guard lock(pool_mu);
      if (!idle.empty()) {
        auto client = std::move(idle.back());
        idle.pop_back();
        return client;
      }
    }
    return NewClient();
  }

  void Release(std::unique_ptr<httplib::ClientImpl> client) {
    std::lock_guard lock(pool_mu);
    idle.push_back(std::move(client));
  }

  // The bearer token for the next request: the token file's content when there is one (re-read
  // when it changed: projected service account tokens rotate), else the configured token. A file
  // that cannot be read keeps the last token read, as client-go's cached file token source does.
  std::string BearerToken() {
    if (config.bearer_token_file.empty()) return config.bearer_token;
    std::lock_guard lock(token_mu);
    std::error_code ec;
    const auto mtime = std::filesystem::last_write_time(config.bearer_token_file, ec);
    if (!ec && (file_token.empty() || mtime != token_mtime)) {
      if (auto token = ReadTokenFile(config.bearer_token_file); token && !token->empty()) {
        file_token = std::move(*token);
        token_mtime = mtime;
      }
    }
    return file_token.empty() ? config.bearer_token : file_token;
  }

  httplib::Headers Headers() {
    httplib::Headers h{
        {"Host", endpoint.authority},
        {"User-Agent", config.user_agent},
        {"Accept", "application/json"},
        // No compression: httplib would otherwise ask for it, and the server's compressor holds
        // small watch events back.
        {"Accept-Encoding", "identity"},
    };
    if (std::string token = BearerToken(); !token.empty()) {
      h.emplace("Authorization", "Bearer " + token);
    } else if (!config.username.empty()) {
      h.emplace("Authorization", "Basic " + util::Base64Encode(config.username + ":" + config.password));
    }
    return h;
  }

  std::string TransportError(std::string_view method, const std::string& path, httplib::Error error,
                             const httplib::ClientImpl& client) const {
    std::string what;
    switch (error) {
      case httplib::Error::Connection:
        what = "cannot connect";
        break;
      case httplib::Error::ConnectionTimeout:
        what = "connection timed out";
        break;
      case httplib::Error::Read:
        what = "reading the response failed (connection closed or timed out)";
        break;
      case httplib::Error::Write:
        what = "sending the request failed";
        break;
      case httplib::Error::SSLConnection:
        what = "TLS handshake failed";
        break;
      case httplib::Error::SSLLoadingCerts:
        what = "cannot load the CA certificates";
        break;
      case httplib::Error::SSLServerVerification: {
        const long result = static_cast<const httplib::SSLClient&>(client).get_openssl_verify_result();
        what = result != X509_V_OK
                   ? fmt::format("TLS verification of the server's certificate failed: {}",
                                 X509_verify_cert_error_string(result))
                   : fmt::format("TLS verification failed: the server's certificate is not valid for {}", tls_name);
        break;
      }
      default:
        what = httplib::to_string(error);
        break;
    }
    return fmt::format("{} {}{}{}: {}", method, base_url, endpoint.prefix, path, what);
  }
};

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

const RestConfig& RestClient::config() const { return impl_->config; }

std::expected<std::unique_ptr<RestClient>, std::string> RestClient::Create(const RestConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  auto endpoint = ParseServer(config);
  if (!endpoint) return std::unexpected(endpoint.error());
  impl->endpoint = std::move(*endpoint);
  const Endpoint& e = impl->endpoint;
  impl->base_url = fmt::format("{}://{}", e.https ? "https" : "http", e.authority);
  if (config.timeout.count() > 0) impl->timeout = config.timeout;
  impl->limiter = std::make_unique<RateLimiter>(config.qps, config.burst, impl->clock);

  const TlsConfig& tls = config.tls;
  impl->tls_name = e.host;
  if (e.https) {
    if (!tls.server_name.empty() && tls.server_name != e.host) {
      auto address = NumericAddress(e.host);
      if (!address) return std::unexpected(fmt::format("server \"{}\": {}", config.server, address.error()));
      impl->tls_name = tls.server_name;
      impl->connect_address.emplace(tls.server_name, *address);
    }
    if (!tls.ca_pem.empty() && !tls.insecure) {
      auto cas = ParseCertificates(tls.ca_pem);
      if (!cas) return std::unexpected(fmt::format("certificate authority: {}", cas.error()));
      impl->trusted = std::move(*cas);
    }
    impl->verify.trusted = impl->trusted.get();
    impl->verify.name = impl->tls_name;
    if (tls.client_cert_pem.empty() != tls.client_key_pem.empty()) {
      return std::unexpected("a client certificate needs its key, and a key its certificate");
    }
    if (!tls.client_cert_pem.empty()) {
      BioPtr cert_bio = MemoryBio(tls.client_cert_pem);
      X509* cert = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
      if (cert == nullptr) return std::unexpected(fmt::format("client certificate: {}", OpenSslError()));
      impl->client_cert.reset(cert, X509_free);
      BioPtr key_bio = MemoryBio(tls.client_key_pem);
      EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
      if (key == nullptr) return std::unexpected(fmt::format("client key: {}", OpenSslError()));
      impl->client_key.reset(key, EVP_PKEY_free);
    }
    // An SSL context that cannot be set up (a key that does not match its certificate) fails
    // here rather than at every request.
    auto probe = impl->NewClient();
    if (!probe->is_valid()) {
      return std::unexpected(fmt::format("cannot set up TLS for {}: {}", impl->base_url, OpenSslError()));
    }
    impl->Release(std::move(probe));
  }
  return std::unique_ptr<RestClient>(new RestClient(std::move(impl)));
}

std::expected<Response, std::string> RestClient::Do(std::string_view method, const std::string& path,
                                                    std::string_view body, std::string_view content_type) {
  Impl& impl = *impl_;
  impl.limiter->Wait();
  std::unique_ptr<httplib::ClientImpl> client = impl.Acquire();
  client->set_connection_timeout(impl.timeout);
  client->set_read_timeout(impl.timeout);
  client->set_write_timeout(impl.timeout);

  httplib::Request req;
  req.method = std::string(method);
  req.path = impl.endpoint.prefix + path;
  req.headers = impl.Headers();
  if (!body.empty()) {
    req.body = std::string(body);
    req.headers.emplace("Content-Type", std::string(content_type));
  }
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client->send(req, res, error)) {
    // The client is dropped with its (closed) connection.
    return std::unexpected(impl.TransportError(method, path, error, *client));
  }
  Response out{.status = res.status, .body = std::move(res.body), .content_type = res.get_header_value("Content-Type")};
  impl.Release(std::move(client));
  return out;
}

namespace {

// The socket of one watch, shut down from another thread when the watch is stopped. httplib's
// Client::stop() does nothing while the connection is still being made, so the watch would go
// on; shutting the socket down works at any point, and is done on a duplicate of the descriptor,
// so that it never reaches a descriptor number httplib has closed and the process reused.
struct StreamSocket {
  std::mutex mu;
  int fd = -1;           // guarded by mu
  bool stopped = false;  // guarded by mu

  void Opened(int sock) {
    std::lock_guard lock(mu);
    if (fd >= 0) ::close(fd);
    fd = ::dup(sock);
    if (stopped) ::shutdown(sock, SHUT_RDWR);
  }
  void Stop() {
    std::lock_guard lock(mu);
    stopped = true;
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
  bool Stopped() {
    std::lock_guard lock(mu);
    return stopped;
  }
  ~StreamSocket() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::expected<Response, std::string> RestClient::Stream(const std::string& path,
                                                        const std::function<bool(std::string_view line)>& on_line,
                                                        std::stop_token stop) {
  Impl& impl = *impl_;
  if (!impl.limiter->Wait(stop)) {
    return std::unexpected(
        fmt::format("GET {}{}{}: stopped before it started", impl.base_url, impl.endpoint.prefix, path));
  }
  // A connection of its own, not from the pool: it lives as long as the watch and is shut down
  // from another thread.
  std::unique_ptr<httplib::ClientImpl> client = impl.NewClient();
  client->set_keep_alive(false);
  client->set_connection_timeout(impl.timeout);
  client->set_write_timeout(impl.timeout);
  client->set_read_timeout(kWatchIdleTimeout);
  StreamSocket socket;
  client->set_socket_options([&socket](socket_t sock) { socket.Opened(sock); });

  Response out;
  bool ended_by_caller = false;
  std::string pending;  // a line not yet complete
  httplib::Request req;
  req.method = "GET";
  req.path = impl.endpoint.prefix + path;
  req.headers = impl.Headers();
  req.response_handler = [&](const httplib::Response& res) {
    out.status = res.status;
    out.content_type = res.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (socket.Stopped()) return false;
    if (out.status < 200 || out.status > 299) {
      out.body.append(data, size);
      return true;
    }
    pending.append(data, size);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      if (!on_line(line)) {
        ended_by_caller = true;
        return false;
      }
    }
    pending.erase(0, start);
    return true;
  };

  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool ok;
  {
    std::stop_callback on_stop(stop, [&socket] { socket.Stop(); });
    ok = client->send(req, res, error);
  }
  if (ended_by_caller || socket.Stopped()) return out;
  if (!ok) return std::unexpected(impl.TransportError("GET", path, error, *client));
  // The server ended the stream: a last line without its newline is a line all the same.
  if (out.status >= 200 && out.status <= 299 && !pending.empty() && pending != "\r") on_line(pending);
  return out;
}

}  // namespace kubesched::client
