#include "server/http_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace kubesched::server {
namespace {

// How long one step of a watch stream waits for an event before the connection is checked.
constexpr std::chrono::milliseconds kStreamStep{250};

HttpRequest ToRequest(const httplib::Request& req) {
  HttpRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.params) r.query.emplace(k, v);
  r.accept = req.get_header_value("Accept");
  r.content_type = req.get_header_value("Content-Type");
  r.body = req.body;
  return r;
}

void ToResponse(HttpResponse response, httplib::Response& res) {
  res.status = response.status;
  for (auto& [k, v] : response.headers) res.set_header(k.c_str(), v);
  if (response.stream == nullptr) {
    res.set_content(std::move(response.body), response.content_type.c_str());
    return;
  }
  std::shared_ptr<ResponseStream> stream(std::move(response.stream));
  // httplib gzips a chunked body of exactly "application/json" for clients that accept it (Go's
  // do), and zlib holds small writes back until it has a block: watch events would sit in its
  // buffer. Any parameter turns that off; "stream=watch" names what the body is, and clients
  // read the media type without its parameters.
  std::string content_type = response.content_type;
  if (content_type == "application/json") content_type += ";stream=watch";
  res.set_chunked_content_provider(content_type, [stream](size_t, httplib::DataSink& sink) {
    std::optional<std::string> chunk = stream->Next(kStreamStep);
    if (!chunk) {
      sink.done();
      return true;
    }
    // A failed write means the client went away: returning false ends the response.
    if (!chunk->empty() && !sink.write(chunk->data(), chunk->size())) return false;
    return true;
  });
}

}  // namespace

struct HttpServer::Impl {
  std::unique_ptr<httplib::Server> server;
  Handler* handler = nullptr;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl, int port, bool tls, std::string host)
    : impl_(std::move(impl)), port_(port), tls_(tls), host_(std::move(host)) {}

HttpServer::~HttpServer() = default;

std::expected<std::unique_ptr<HttpServer>, std::string> HttpServer::Bind(Handler& handler,
                                                                         const HttpServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->handler = &handler;
  if (options.tls) {
    impl->server = std::make_unique<httplib::SSLServer>(options.tls->certificate.get(), options.tls->private_key.get());
  } else {
    impl->server = std::make_unique<httplib::Server>();
  }
  httplib::Server& svr = *impl->server;
  if (!svr.is_valid()) return std::unexpected("cannot set up the TLS context");

  const size_t threads = options.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // The body limit is the handler's; one more byte lets the handler see that it was exceeded
  // and answer with its own Status (httplib's own 413 has no body).
  svr.set_payload_max_length(handler.MaxBodyBytes() + 1);
  // An idle kept-alive connection holds its thread until this runs out, and shutdown waits for
  // every thread: short, so SIGTERM ends the server promptly (kubectl reconnects at no cost).
  // Responses go out as headers then body: without TCP_NODELAY, Nagle and the client's delayed
  // ACK hold every small write back ~40 ms.
  svr.set_tcp_nodelay(true);
  svr.set_keep_alive_timeout(2);
  svr.set_read_timeout(10);
  svr.set_write_timeout(30);

  auto serve = [&handler](const httplib::Request& req, httplib::Response& res) {
    ToResponse(handler.Handle(ToRequest(req)), res);
  };
  svr.Get(".*", serve);
  svr.Post(".*", httplib::Server::Handler(serve));
  svr.Put(".*", httplib::Server::Handler(serve));
  svr.Patch(".*", httplib::Server::Handler(serve));
  svr.Delete(".*", httplib::Server::Handler(serve));
  svr.Options(".*", serve);  // refused by the handler (405), with a Status
  // What httplib answers itself (a body over the limit, a malformed request) gets the handler's
  // body too, and its status: the extender protocol answers an oversized body with 400 where the
  // API answers 413.
  svr.set_error_handler(
      httplib::Server::HandlerWithResponse([&handler](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty() || res.is_chunked_content_provider_) return httplib::Server::HandlerResponse::Unhandled;
        const std::string content_type = res.status == 413 ? req.get_header_value("Content-Type") : std::string();
        HttpResponse refused = handler.Refused(res.status, content_type);
        res.status = refused.status;
        res.set_content(std::move(refused.body), refused.content_type.c_str());
        return httplib::Server::HandlerResponse::Handled;
      }));
  svr.set_exception_handler([&handler](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unexpected exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    res.status = 500;
    HttpResponse refused = handler.Refused(500, what);
    res.set_content(std::move(refused.body), refused.content_type.c_str());
  });

  int port = options.port;
  if (port == 0) {
    port = svr.bind_to_any_port(options.host);
    if (port < 0) return std::unexpected(fmt::format("cannot listen on {}: no free port", options.host));
  } else if (!svr.bind_to_port(options.host, port)) {
    return std::unexpected(
        fmt::format("cannot listen on {}:{} (in use, or not an address of this host)", options.host, port));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), port, options.tls != nullptr, options.host));
}

std::string HttpServer::Url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", tls_ ? "https" : "http", v6 ? "[" : "", host_, v6 ? "]" : "", port_);
}

bool HttpServer::Run() { return impl_->server->listen_after_bind(); }

void HttpServer::Shutdown() {
  impl_->handler->Stop();
  // Let the streams notice (each checks at every step) and send their last chunk, so watchers
  // see a clean end of stream rather than a cut connection.
  std::this_thread::sleep_for(kStreamStep * 2);
  impl_->server->stop();
}

}  // namespace kubesched::server
