#pragma once
// A request and its response as the API handler sees them, apart from any HTTP library: the
// handler is a function from one to the other, so routing, encoding and errors are tested
// without sockets, and server/http_server.cc is the only file that knows the HTTP library.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kubesched::server {

struct HttpRequest {
  std::string method;                             //!< "GET", "POST", ...
  std::string path;                               //!< decoded, without the query
  std::multimap<std::string, std::string> query;  //!< decoded
  std::string accept;
  std::string content_type;
  std::string authorization;  //!< the Authorization header ("Bearer ...")
  std::string body;

  //! The first value of query parameter `key`, or "".
  std::string_view Query(std::string_view key) const {
    auto it = query.find(std::string(key));
    return it == query.end() ? std::string_view() : std::string_view(it->second);
  }
  bool HasQuery(std::string_view key) const { return query.contains(std::string(key)); }
};

//! A response body produced over time (a watch): the HTTP layer sends it chunked.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  //! The next piece of the body, waiting up to `wait`: text to send (possibly empty when nothing
  //! happened, after which the caller checks its connection and asks again), or nullopt when the
  //! body is complete.
  virtual std::optional<std::string> Next(std::chrono::milliseconds wait) = 0;
  //! `wake` is called (from any thread, quickly) when Next has something new to return, so the
  //! HTTP layer asks again at once instead of at its next periodic check. A stream that never
  //! calls it is polled.
  virtual void SetWakeup(std::function<void()> wake) { (void)wake; }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  //!< extra headers (Warning, Retry-After)
  std::unique_ptr<ResponseStream> stream;                    //!< set for a streamed body (then `body` is unused)
};

//! A plain-text response (health checks, the extender's refusals).
inline HttpResponse TextResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

//! What server/http_server.h serves: the API (ApiHandler) or the scheduler's health and
//! metrics endpoints (HealthzHandler).
class Handler {
 public:
  virtual ~Handler() = default;
  //! Serves one request. Thread-safe.
  virtual HttpResponse Handle(const HttpRequest& request) = 0;
  //! The body of a response the HTTP layer gives itself with `status`: 413 past MaxBodyBytes,
  //! with `detail` the request's Content-Type; 400 for a malformed request, 431 for a header too
  //! large, 429/503 for a connection past the limits per client/in all, 500 when Handle threw,
  //! with `detail` saying what.
  virtual HttpResponse Refused(int status, std::string_view detail) const = 0;
  //! Request bodies above this are refused with 413.
  virtual size_t MaxBodyBytes() const = 0;
  //! Ends open streams at their next step and refuses new requests (HttpServer::Shutdown).
  virtual void Stop() = 0;
};

}  // namespace kubesched::server
