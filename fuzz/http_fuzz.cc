// Fuzz target for the HTTP layer (server/http_server.h) as a client reaches it: the input is the
// bytes a client sends on one connection, whatever they are (pipelined requests, conflicting
// framing, chunked bodies, truncated headers, TLS-looking garbage). They go over loopback to one
// HttpServer that lives for the whole run, serving the API test bed's handler over a store; the
// target then reads until the server closes or a short deadline passes. Never crash, hang or
// leak; whatever the server writes is a sequence of HTTP/1.x responses.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "server/api_handler.h"
#include "server/http_server.h"
#include "store/resources.h"
#include "util/clock.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

struct Server {
  Server() : store(kubesched::store::NewBuiltinStore(clock)), handler(*store, Options()) {
    kubesched::server::HttpServerOptions o;
    o.port = 0;
    o.threads = 2;
    // A request left unfinished by the input is closed quickly instead of waiting 32 s.
    o.header_timeout = std::chrono::milliseconds(200);
    o.body_timeout = std::chrono::milliseconds(200);
    auto bound = kubesched::server::HttpServer::Bind(handler, o);
    Check(bound.has_value());
    server = std::move(*bound);
    thread = std::thread([this] { server->Run(); });
  }
  static kubesched::server::ApiHandlerOptions Options() {
    kubesched::server::ApiHandlerOptions o;
    o.max_body_bytes = 64 * 1024;
    o.default_watch_timeout = std::chrono::seconds(1);
    return o;
  }
  kubesched::util::SystemClock clock;
  std::unique_ptr<kubesched::store::Store> store;
  kubesched::server::ApiHandler handler;
  std::unique_ptr<kubesched::server::HttpServer> server;
  std::thread thread;  // serves until the process ends
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* server = new Server();  // never destroyed: the fuzzer exits the process
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  Check(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->server->Port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    // Out of ephemeral ports (connections in TIME_WAIT after hundreds of thousands of runs): the
    // fuzzer's machine, not the server, so not a finding.
    Check(errno == EADDRNOTAVAIL || errno == EAGAIN);
    ::close(fd);
    return 0;
  }
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed on a refused request
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string received;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[8192];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    received.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  // Whatever arrived is the start of a status line: the 2 s can run out in the middle of one on a
  // loaded machine (a fork-mode run beside builds aborted on "HTT" once; the input replays clean).
  auto starts_right = [&](std::string_view line) {
    return received.size() < line.size() ? line.starts_with(received) : received.starts_with(line);
  };
  Check(starts_right("HTTP/1.1 ") || starts_right("HTTP/1.0 "));
  return 0;
}
