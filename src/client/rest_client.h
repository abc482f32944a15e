#pragma once
// kubesched's HTTP client for a real API server (`kubesched run`): requests and watch streams
// over HTTP or HTTPS, with the kubeconfig's credentials and client-go's client-side rate limit.
// cpp-httplib stays in rest_client.cc.

#include <expected>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "client/kubeconfig.h"

namespace kubesched::client {

struct Response {
  int status = 0;
  std::string body{};
  std::string content_type{};
};

class RestClient {
 public:
  //! Checks the server URL and the TLS material (PEM that does not parse is an error here, not at
  //! the first request). Connects to nothing yet.
  static std::expected<std::unique_ptr<RestClient>, std::string> Create(const RestConfig& config);
  ~RestClient();

  //! One request; any HTTP status is a Response, a transport failure (refused, TLS verification,
  //! timeout) an error naming the server. `path` is the API path with its query, already
  //! percent-encoded ("/api/v1/namespaces/default/pods?limit=500"), appended to the server URL's
  //! path. Thread-safe: each concurrent request has a connection of its own, kept alive for the
  //! next. Waits for the shared rate limiter first.
  std::expected<Response, std::string> Do(std::string_view method, const std::string& path, std::string_view body = {},
                                          std::string_view content_type = "application/json");

  //! A streamed GET (a watch): `on_line` gets each non-empty line of a 2xx body as it arrives
  //! (without its newline), until the server ends the response, `on_line` returns false or `stop`
  //! is requested; each of those ends is the Response (its body empty). A non-2xx response comes
  //! back whole in Response.body, without calling `on_line`. A connection that breaks or stays
  //! idle for 5 minutes is an error. Rate-limited like Do; an error when `stop` is requested
  //! before the request starts. Thread-safe.
  std::expected<Response, std::string> Stream(const std::string& path,
                                              const std::function<bool(std::string_view line)>& on_line,
                                              std::stop_token stop);

  const RestConfig& config() const;

 private:
  struct Impl;
  explicit RestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubesched::client
