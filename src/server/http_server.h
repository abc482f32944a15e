#pragma once
// Serves a Handler (the API, or the scheduler's health and metrics) over HTTP or HTTPS with
// cpp-httplib: one thread per connection from a fixed pool sized for many concurrent watches,
// bodies up to the handler's limit (413 beyond), watch responses chunked. The only file that
// knows the HTTP library.

#include <expected>
#include <memory>
#include <string>

#include "server/http_types.h"
#include "server/tls.h"

namespace kubesched::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  //!< 0: any free port (Port() says which)
  //! Connection threads. Every open watch holds one for its lifetime; requests need the rest.
  size_t threads = 256;
  //! When set, HTTPS with this identity.
  std::shared_ptr<const TlsIdentity> tls;
};

class HttpServer {
 public:
  ~HttpServer();

  //! Binds the listening socket (so Port() is known before Run); an error when it cannot.
  //! `handler` must outlive the server.
  static std::expected<std::unique_ptr<HttpServer>, std::string> Bind(Handler& handler,
                                                                      const HttpServerOptions& options);

  int Port() const { return port_; }
  //! "http://127.0.0.1:41234".
  std::string Url() const;

  //! Serves until Shutdown; returns false when serving failed.
  bool Run();
  //! Graceful: the handler ends its watch streams, then the socket closes and Run returns once
  //! the connections' threads are done. Thread-safe; callable from any thread (not a signal
  //! handler).
  void Shutdown();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl, int port, bool tls, std::string host);
  std::unique_ptr<Impl> impl_;
  int port_;
  bool tls_;
  std::string host_;
};

}  // namespace kubesched::server
