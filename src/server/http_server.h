#pragma once
// Serves a Handler (the API, the scheduler's health and metrics, or the extender) over HTTP/1.1
// or HTTPS with Boost.Beast on Asio: event-driven, so an open watch or a slow client holds a
// socket and a buffer, not a thread. Built for long-lived and hostile connections: deadlines on
// the TLS handshake, on each request's header (which bounds idle keep-alive too) and body, and on
// each write; limits on header size and field count; RFC 9112 framing (a request with both
// Content-Length and Transfer-Encoding, conflicting lengths, or a transfer coding other than
// chunked last is refused with 400 and the connection closed; pipelined requests are answered in
// order); bounds on connections in all and per client address, answered 503/429. The only file
// that knows the HTTP library.

#include <chrono>
#include <cstddef>
#include <expected>
#include <memory>
#include <string>

#include "server/http_types.h"
#include "server/tls.h"

namespace kubesched::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  //!< 0: any free port (Port() says which)
  //! Threads that run the handler and the connections' I/O. Handlers run to completion on them,
  //! so this is how many requests are computed at once; waiting connections hold none.
  size_t threads = 4;
  //! When set, HTTPS with this identity.
  std::shared_ptr<const TlsIdentity> tls;
  //! Open connections past which a new one is answered 503 (in all) or 429 (from one address),
  //! with Retry-After, and closed.
  size_t max_connections = 8192;
  size_t max_connections_per_client = 2048;
  //! The TLS handshake, and each request's header (between requests on a kept-alive connection:
  //! the wait for the next one), must complete within this: 32 s, as the API server sets Go's
  //! ReadHeaderTimeout.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(32)};
  //! A request's body must arrive within this after its header.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(60)};
  //! Each write (a response, or one piece of a watch) must be taken by the client within this.
  std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};
  //! On Shutdown, how long responses being written get before their connections are cut.
  std::chrono::milliseconds shutdown_grace{std::chrono::milliseconds(1000)};
  //! A request's header: at most this many bytes (Go's http.DefaultMaxHeaderBytes, 1 MiB, past
  //! which the answer is 431) and fields (400).
  size_t max_header_bytes = 1 << 20;
  size_t max_header_fields = 512;
};

class HttpServer {
 public:
  ~HttpServer();

  //! Binds the listening socket with a backlog of 4096, as Go's servers have it (so Port() is
  //! known before Run); an error when it cannot. `handler` must outlive the server. Raises this
  //! process's open-file limit to its hard limit, as Go's runtime does: every connection is a
  //! descriptor.
  static std::expected<std::unique_ptr<HttpServer>, std::string> Bind(Handler& handler,
                                                                      const HttpServerOptions& options);

  int Port() const { return port_; }
  //! "http://127.0.0.1:41234".
  std::string Url() const;

  //! Serves until Shutdown; returns false when serving failed.
  bool Run();
  //! Graceful: refuses new connections, ends open watch streams with their last chunk and lets
  //! responses being written finish within shutdown_grace, then cuts what is left; Run returns
  //! then, whatever the peers do. Thread-safe; callable from any thread (not a signal handler),
  //! before or during Run.
  void Shutdown();

  //! Open connections now (for tests and metrics).
  size_t Connections() const;

 private:
  struct Impl;
  explicit HttpServer(std::shared_ptr<Impl> impl, int port, bool tls, std::string host);
  std::shared_ptr<Impl> impl_;
  int port_;
  bool tls_;
  std::string host_;
};

}  // namespace kubesched::server
