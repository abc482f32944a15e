#include "server/http_server.h"

#include <sys/resource.h>

#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace kubesched::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr int kListenBacklog = 4096;
// An idle watch stream is looked at this often when no wakeup comes: its deadline, its
// keep-alive line, the server stopping.
constexpr std::chrono::milliseconds kStreamTick{1000};
// A watch's events go out in pieces of up to this many bytes.
constexpr size_t kMaxChunkBytes = 64 * 1024;
// After the response that ends a connection, what the client still sends is read and dropped
// for this long before the socket closes, so that closing does not reset the connection under
// the response (RFC 9112 §9.6).
constexpr std::chrono::milliseconds kLingerTimeout{2000};
// A connection past the limits is told so after its request's header, which must come within
// this; at most this many are being told at once (past that they are closed at once).
constexpr std::chrono::milliseconds kRefusalTimeout{5000};
constexpr size_t kMaxRefusing = 256;
// A connection's read buffer is given back when a request left it larger than this.
constexpr size_t kKeptBufferBytes = 64 * 1024;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes decoded (a malformed one is kept as it is); in a query, '+' is a space.
std::string PercentDecode(std::string_view s, bool plus_as_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      const int hi = HexDigit(s[i + 1]);
      const int lo = HexDigit(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_as_space && c == '+' ? ' ' : c);
  }
  return out;
}

// The request target's path (decoded) and query parameters (decoded, in order).
void ParseTarget(std::string_view target, HttpRequest& request) {
  const size_t mark = target.find('?');
  request.path = PercentDecode(target.substr(0, mark), false);
  if (mark == std::string_view::npos) return;
  std::string_view query = target.substr(mark + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    request.query.emplace(PercentDecode(pair.substr(0, eq), true),
                          eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true));
  }
}

// Go's runtime raises the soft limit on open files to the hard limit at start-up; so do we, once:
// every connection, watch or not, is a descriptor.
void RaiseOpenFileLimit() {
  static std::once_flag once;
  std::call_once(once, [] {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  });
}

bool IsHttpError(const ErrorCode& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

class Connection {
 public:
  virtual ~Connection() = default;
  //! The server is stopping: end at the next step that allows it (thread-safe).
  virtual void Stop() = 0;
  //! The grace period is over: close now (thread-safe).
  virtual void Cut() = 0;
};

// What connections share with the server, kept alive by each of them: a connection's last
// handler can run while the server's io_context is being destroyed.
struct Shared {
  Shared(Handler& h, HttpServerOptions o) : handler(h), options(std::move(o)) {}
  Handler& handler;
  const HttpServerOptions options;
  std::atomic<bool> stopping{false};

  std::mutex mu;  // guards the members below
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;
  std::unordered_map<std::string, size_t> per_client;
  size_t refusing = 0;
  //! False once the io_context is going: wakeups from store threads must not post to it then.
  bool io_alive = true;
  asio::io_context* ioc = nullptr;  //!< the server's, while io_alive

  //! 0 when `c` is admitted; else the status it is refused with (503: too many in all; 429: too
  //! many from its address), or -1 when it is to be closed without an answer.
  int Admit(Connection* c, const std::weak_ptr<Connection>& weak, const std::string& client) {
    std::lock_guard lock(mu);
    int status = 0;
    if (connections.size() >= options.max_connections) {
      status = 503;
    } else if (auto it = per_client.find(client);
               it != per_client.end() && it->second >= options.max_connections_per_client) {
      status = 429;
    }
    if (status != 0) {
      if (refusing >= kMaxRefusing) return -1;
      ++refusing;
      return status;
    }
    ++per_client[client];
    connections.emplace(c, weak);
    return 0;
  }

  void Leave(Connection* c, const std::string& client, int admitted) {
    std::lock_guard lock(mu);
    if (admitted > 0) {
      --refusing;
      return;
    }
    if (admitted < 0) return;
    connections.erase(c);
    if (auto it = per_client.find(client); it != per_client.end() && --it->second == 0) per_client.erase(it);
  }

  std::vector<std::shared_ptr<Connection>> Snapshot() {
    std::lock_guard lock(mu);
    std::vector<std::shared_ptr<Connection>> out;
    out.reserve(connections.size());
    for (auto& [raw, weak] : connections) {
      if (auto c = weak.lock()) out.push_back(std::move(c));
    }
    return out;
  }

  size_t Count() {
    std::lock_guard lock(mu);
    return connections.size();
  }
};

template <class Stream>
class Session final : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Session(std::shared_ptr<Shared> shared, tcp::socket socket, asio::ssl::context* ssl, std::string client)
      : shared_(std::move(shared)),
        stream_(MakeStream(std::move(socket), ssl)),
        client_(std::move(client)),
        buffer_(shared_->options.max_header_bytes + kKeptBufferBytes),
        timer_(stream_.get_executor()) {}

  ~Session() override { shared_->Leave(this, client_, admitted_); }

  //! Admits the connection and starts serving it on its strand.
  void Start() {
    admitted_ = shared_->Admit(this, this->weak_from_this(), client_);
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->Begin(); });
  }

  void Stop() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] { self->OnStop(); });
  }
  void Cut() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] { self->CloseNow(); });
  }

 private:
  enum class Phase { kHandshake, kReadHeader, kReadBody, kHandling, kWriting, kStreaming, kClosing };

  static Stream MakeStream(tcp::socket socket, asio::ssl::context* ssl) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *ssl);
    } else {
      (void)ssl;
      return Stream(std::move(socket));
    }
  }

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  const HttpServerOptions& Options() const { return shared_->options; }
  Handler& TheHandler() { return shared_->handler; }

  void Begin() {
    if (admitted_ < 0 || shared_->stopping) return CloseNow();
    const auto timeout = admitted_ > 0 ? std::min(kRefusalTimeout, Options().header_timeout) : Options().header_timeout;
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      Lowest().expires_after(timeout);
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](ErrorCode ec) {
        if (ec) return self->CloseNow();
        self->ReadHeader();
      });
    } else {
      ReadHeader();
    }
  }

  void OnStop() {
    switch (phase_) {
      case Phase::kHandshake:
      case Phase::kReadHeader:
      case Phase::kReadBody:
      case Phase::kClosing:
        CloseNow();
        break;
      case Phase::kStreaming:
        timer_.cancel();  // Pump finds the stream ended and sends the last chunk
        break;
      case Phase::kHandling:
      case Phase::kWriting:
        break;  // the response in hand is written, then the connection closes
    }
  }

  void ReadHeader() {
    if (closed_) return;
    if (shared_->stopping) return CloseNow();
    phase_ = Phase::kReadHeader;
    if (buffer_.size() == 0 && buffer_.capacity() > kKeptBufferBytes) buffer_.shrink_to_fit();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(Options().max_header_bytes));
    // Compared with the handler's limit once the header is in. (Not boost::none: Beast 1.74 compares
    // a Content-Length with the optional itself, and any length is greater than none.)
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    Lowest().expires_after(admitted_ > 0 ? std::min(kRefusalTimeout, Options().header_timeout)
                                         : Options().header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](ErrorCode ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(ErrorCode ec) {
    if (ec) return OnReadError(ec);
    const auto& request = parser_->get();
    version_ = request.version();
    if (admitted_ == 503) {
      return Refuse(503,
                    fmt::format("the server has too many open connections (at most {})", Options().max_connections));
    }
    if (admitted_ == 429) {
      return Refuse(429, fmt::format("too many open connections from {} (at most {})", client_,
                                     Options().max_connections_per_client));
    }
    const size_t fields = static_cast<size_t>(std::distance(request.begin(), request.end()));
    if (fields > Options().max_header_fields) {
      return Refuse(400,
                    fmt::format("the request has {} header fields (at most {})", fields, Options().max_header_fields));
    }
    // A transfer coding other than chunked, last, leaves the body's length unknown: RFC 9112 §6.3
    // says to answer 400 and close, since the bytes after the header cannot be framed.
    if (request.find(http::field::transfer_encoding) != request.end() && !parser_->chunked()) {
      return Refuse(400, "the request's Transfer-Encoding does not end in chunked");
    }
    const std::string content_type(request[http::field::content_type]);
    const size_t limit = TheHandler().MaxBodyBytes();
    if (auto length = parser_->content_length(); length && *length > limit) return Refuse(413, content_type);
    if (parser_->is_done()) return Dispatch();
    parser_->body_limit(limit);
    if (beast::iequals(request[http::field::expect], "100-continue")) {
      auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_, version_);
      phase_ = Phase::kWriting;
      Lowest().expires_after(Options().write_timeout);
      http::async_write(stream_, *interim, [self = this->shared_from_this(), interim](ErrorCode e, size_t) {
        if (e) return self->CloseNow();
        self->ReadBody();
      });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    if (closed_) return;
    phase_ = Phase::kReadBody;
    Lowest().expires_after(Options().body_timeout);
    http::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](ErrorCode ec, size_t) {
      if (ec) return self->OnReadError(ec);
      self->Dispatch();
    });
  }

  void OnReadError(ErrorCode ec) {
    if (ec == http::error::header_limit) {
      return Refuse(431, fmt::format("the request's header is larger than {} bytes", Options().max_header_bytes));
    }
    if (ec == http::error::body_limit) {
      return Refuse(413, parser_ ? std::string(parser_->get()[http::field::content_type]) : std::string());
    }
    // A malformed request (conflicting or duplicate framing, a bad method or version) gets its
    // 400; a client that went away or ran out of time is just closed.
    if (IsHttpError(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return Refuse(400, fmt::format("malformed HTTP request: {}", ec.message()));
    }
    CloseNow();
  }

  void Dispatch() {
    phase_ = Phase::kHandling;
    auto& message = parser_->get();
    HttpRequest request;
    request.method = std::string(message.method_string());
    ParseTarget(std::string_view(message.target().data(), message.target().size()), request);
    request.accept = std::string(message[http::field::accept]);
    request.content_type = std::string(message[http::field::content_type]);
    request.authorization = std::string(message[http::field::authorization]);
    request.body = std::move(message.body());
    keep_alive_ = message.keep_alive() && !shared_->stopping;
    const bool head = request.method == "HEAD";
    parser_.reset();
    HttpResponse response;
    try {
      response = TheHandler().Handle(request);
    } catch (const std::exception& e) {
      response = TheHandler().Refused(500, e.what());
    } catch (...) {
      response = TheHandler().Refused(500, "unexpected exception");
    }
    if (response.stream != nullptr && !head) return StartStream(std::move(response));
    Write(std::move(response), head);
  }

  // Answers `status` with the handler's body for it and closes the connection.
  void Refuse(int status, std::string detail) {
    parser_.reset();
    HttpResponse response = TheHandler().Refused(status, detail);
    if (status == 429 || status == 503) response.headers.emplace_back("Retry-After", "1");
    keep_alive_ = false;
    Write(std::move(response), false);
  }

  void Write(HttpResponse response, bool head) {
    if (closed_) return;
    phase_ = Phase::kWriting;
    auto message =
        std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), version_);
    message->set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) message->insert(name, value);
    message->keep_alive(keep_alive_);
    if (head) {
      message->content_length(response.body.size());  // the header a GET would have, no body
    } else {
      message->body() = std::move(response.body);
      message->prepare_payload();
    }
    Lowest().expires_after(Options().write_timeout);
    http::async_write(stream_, *message, [self = this->shared_from_this(), message](ErrorCode ec, size_t) {
      if (ec) return self->CloseNow();
      self->AfterResponse();
    });
  }

  void AfterResponse() {
    if (!keep_alive_ || shared_->stopping) return Close();
    ReadHeader();
  }

  void StartStream(HttpResponse response) {
    phase_ = Phase::kStreaming;
    body_stream_ = std::move(response.stream);
    auto header =
        std::make_shared<http::response<http::empty_body>>(static_cast<http::status>(response.status), version_);
    header->set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) header->insert(name, value);
    header->keep_alive(keep_alive_);
    header->chunked(true);
    // The stream's events arrive on the store's threads: they post a wakeup to this
    // connection's strand, never run its code (nor release its last reference) there.
    // The callback holds no strand: the store may keep it after the io_context is gone, and a
    // strand must not outlive its io_context (ASan caught that). It posts to the io_context
    // (alive while io_alive holds, under the lock), and from there to this connection's strand.
    body_stream_->SetWakeup([shared = shared_, weak = this->weak_from_this()] {
      std::lock_guard lock(shared->mu);
      if (!shared->io_alive || shared->ioc == nullptr) return;
      asio::post(*shared->ioc, [weak] {
        if (auto self = weak.lock()) {
          asio::post(self->stream_.get_executor(), [self] { self->timer_.cancel(); });
        }
      });
    });
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*header);
    Lowest().expires_after(Options().write_timeout);
    http::async_write_header(stream_, *serializer,
                             [self = this->shared_from_this(), header, serializer](ErrorCode ec, size_t) {
                               if (ec) return self->CloseNow();
                               self->Pump();
                             });
  }

  // Sends what the stream has now; waits for a wakeup (or the next tick) when it has nothing.
  void Pump() {
    if (closed_ || body_stream_ == nullptr) return;
    std::string out;
    bool end = false;
    while (out.size() < kMaxChunkBytes) {
      std::optional<std::string> piece = body_stream_->Next(std::chrono::milliseconds(0));
      if (!piece) {
        end = true;
        break;
      }
      if (piece->empty()) break;
      out += *piece;
    }
    if (!out.empty()) {
      chunk_ = std::move(out);
      Lowest().expires_after(Options().write_timeout);
      asio::async_write(stream_, http::make_chunk(asio::buffer(chunk_)),
                        [self = this->shared_from_this(), end](ErrorCode ec, size_t) {
                          if (ec) return self->CloseNow();
                          if (end) return self->EndStream();
                          self->Pump();
                        });
      return;
    }
    if (end) return EndStream();
    timer_.expires_after(kStreamTick);
    timer_.async_wait([self = this->shared_from_this()](ErrorCode) { self->Pump(); });
  }

  void EndStream() {
    body_stream_.reset();
    chunk_.clear();
    chunk_.shrink_to_fit();
    Lowest().expires_after(Options().write_timeout);
    asio::async_write(stream_, http::make_chunk_last(), [self = this->shared_from_this()](ErrorCode ec, size_t) {
      if (ec) return self->CloseNow();
      self->AfterResponse();
    });
  }

  // After the last response: stop sending, read and drop what the client still sends for a
  // while, then close (an immediate close with unread input would reset the connection).
  void Close() {
    if (closed_) return;
    if (shared_->stopping) return CloseNow();
    phase_ = Phase::kClosing;
    ErrorCode ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    drain_ = std::make_unique<std::array<char, 4096>>();
    Lowest().expires_after(kLingerTimeout);
    Drain();
  }

  void Drain() {
    Lowest().async_read_some(asio::buffer(*drain_), [self = this->shared_from_this()](ErrorCode ec, size_t) {
      if (ec) return self->CloseNow();
      self->Drain();
    });
  }

  void CloseNow() {
    if (closed_) return;
    closed_ = true;
    phase_ = Phase::kClosing;
    timer_.cancel();
    ErrorCode ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().close();
    body_stream_.reset();
  }

  std::shared_ptr<Shared> shared_;
  Stream stream_;
  std::string client_;
  int admitted_ = -1;  // Shared::Admit's answer
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  Phase phase_ = Phase::kReadHeader;
  bool closed_ = false;
  std::unique_ptr<ResponseStream> body_stream_;
  std::string chunk_;
  asio::steady_timer timer_;
  std::unique_ptr<std::array<char, 4096>> drain_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(Handler& handler, const HttpServerOptions& options)
      : shared(std::make_shared<Shared>(handler, options)), acceptor(ioc), retry_accept(ioc), drain_timer(ioc) {
    shared->ioc = &ioc;
  }

  ~Impl() {
    std::lock_guard lock(shared->mu);
    shared->io_alive = false;
  }

  void Accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](ErrorCode ec, tcp::socket socket) {
      if (shared->stopping || !acceptor.is_open()) return;
      if (ec) {
        if (ec == asio::error::operation_aborted) return;
        // Out of descriptors, or a connection gone before it was accepted: try again shortly
        // rather than spin.
        retry_accept.expires_after(std::chrono::milliseconds(50));
        retry_accept.async_wait([this](ErrorCode e) {
          if (!e) Accept();
        });
        return;
      }
      Serve(std::move(socket));
      Accept();
    });
  }

  void Serve(tcp::socket socket) {
    ErrorCode ec;
    const tcp::endpoint remote = socket.remote_endpoint(ec);
    if (ec) return;
    // Responses go out as header then body: without TCP_NODELAY, Nagle and the client's delayed
    // ACK hold small writes back ~40 ms.
    socket.set_option(tcp::no_delay(true), ec);
    std::string client = remote.address().to_string();
    if (ssl) {
      std::make_shared<Session<TlsStream>>(shared, std::move(socket), &*ssl, std::move(client))->Start();
    } else {
      std::make_shared<Session<PlainStream>>(shared, std::move(socket), nullptr, std::move(client))->Start();
    }
  }

  void BeginShutdown() {
    ErrorCode ignored;
    acceptor.close(ignored);
    retry_accept.cancel();
    for (auto& c : shared->Snapshot()) c->Stop();
    shutdown_deadline = std::chrono::steady_clock::now() + shared->options.shutdown_grace;
    CheckDrained();
  }

  // Ends the serving once every connection is closed or the grace period is over.
  void CheckDrained() {
    if (shared->Count() == 0 || std::chrono::steady_clock::now() >= shutdown_deadline) {
      for (auto& c : shared->Snapshot()) c->Cut();
      ioc.stop();
      return;
    }
    drain_timer.expires_after(std::chrono::milliseconds(10));
    drain_timer.async_wait([this](ErrorCode) { CheckDrained(); });
  }

  std::shared_ptr<Shared> shared;
  std::optional<asio::ssl::context> ssl;  // destroyed after the io_context's connections
  asio::io_context ioc;
  tcp::acceptor acceptor;
  asio::steady_timer retry_accept;
  asio::steady_timer drain_timer;
  std::chrono::steady_clock::time_point shutdown_deadline;
};

HttpServer::HttpServer(std::shared_ptr<Impl> impl, int port, bool tls, std::string host)
    : impl_(std::move(impl)), port_(port), tls_(tls), host_(std::move(host)) {}

HttpServer::~HttpServer() = default;

std::expected<std::unique_ptr<HttpServer>, std::string> HttpServer::Bind(Handler& handler,
                                                                         const HttpServerOptions& options) {
  RaiseOpenFileLimit();
  auto impl = std::make_shared<Impl>(handler, options);
  if (options.tls) {
    impl->ssl.emplace(asio::ssl::context::tls_server);
    SSL_CTX* ctx = impl->ssl->native_handle();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate(ctx, options.tls->certificate.get()) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, options.tls->private_key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
      return std::unexpected("cannot set up the TLS context with the serving certificate and key");
    }
  }

  ErrorCode ec;
  std::vector<tcp::endpoint> endpoints;
  const auto address = asio::ip::make_address(options.host, ec);
  if (!ec) {
    endpoints.emplace_back(address, static_cast<unsigned short>(options.port));
  } else {
    tcp::resolver resolver(impl->ioc);
    auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
    if (!ec) {
      for (const auto& r : results) endpoints.push_back(r.endpoint());
    }
  }
  if (endpoints.empty())
    return std::unexpected(fmt::format("cannot listen on {}: not an address or a known host name", options.host));

  std::string failure;
  for (const tcp::endpoint& endpoint : endpoints) {
    ErrorCode e;
    tcp::acceptor& acceptor = impl->acceptor;
    if (acceptor.is_open()) acceptor.close(e);
    acceptor.open(endpoint.protocol(), e);
    if (!e) acceptor.set_option(asio::socket_base::reuse_address(true), e);
    if (!e) acceptor.bind(endpoint, e);
    if (!e) acceptor.listen(kListenBacklog, e);
    if (!e) {
      failure.clear();
      break;
    }
    failure = e.message();
  }
  if (!failure.empty() || !impl->acceptor.is_open()) {
    if (options.port == 0) return std::unexpected(fmt::format("cannot listen on {}: {}", options.host, failure));
    return std::unexpected(fmt::format("cannot listen on {}:{} ({}: in use, or not an address of this host)",
                                       options.host, options.port, failure));
  }
  const int port = impl->acceptor.local_endpoint(ec).port();
  impl->Accept();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), port, options.tls != nullptr, options.host));
}

std::string HttpServer::Url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", tls_ ? "https" : "http", v6 ? "[" : "", host_, v6 ? "]" : "", port_);
}

bool HttpServer::Run() {
  Impl& impl = *impl_;
  std::atomic<bool> failed{false};
  auto serve = [&] {
    try {
      impl.ioc.run();
    } catch (const std::exception&) {
      failed = true;
      impl.ioc.stop();
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < std::max<size_t>(1, impl.shared->options.threads); ++i) threads.emplace_back(serve);
  serve();
  for (auto& t : threads) t.join();
  return !failed;
}

void HttpServer::Shutdown() {
  if (impl_->shared->stopping.exchange(true)) return;
  impl_->shared->handler.Stop();
  asio::post(impl_->ioc, [impl = impl_.get()] { impl->BeginShutdown(); });
}

size_t HttpServer::Connections() const { return impl_->shared->Count(); }

}  // namespace kubesched::server
