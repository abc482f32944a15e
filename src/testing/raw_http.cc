#include "testing/raw_http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

namespace kubesched::testing {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

int MillisLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000));
}

int StatusOf(const std::string& response) {
  // "HTTP/1.1 200 OK"
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return 0;
  const size_t space = response.find(' ');
  if (space == std::string::npos) return 0;
  return std::atoi(response.c_str() + space + 1);
}

}  // namespace

std::optional<RawConnection> RawConnection::Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr = Loopback(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return RawConnection(fd);
}

RawConnection::RawConnection(RawConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      received_(std::move(other.received_)),
      closed_(other.closed_),
      reset_(other.reset_) {}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    received_ = std::move(other.received_);
    closed_ = other.closed_;
    reset_ = other.reset_;
  }
  return *this;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawConnection::ReadSome(std::chrono::milliseconds timeout) {
  if (closed_) return false;
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (ready <= 0) return false;
  char buf[16384];
  const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
  if (n > 0) {
    received_.append(buf, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && errno == EINTR) return true;
  closed_ = true;
  reset_ = n < 0 && errno == ECONNRESET;
  return false;
}

bool RawConnection::ReadUntil(std::string_view marker, size_t count, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto occurrences = [&] {
    size_t found = 0;
    for (size_t at = received_.find(marker); at != std::string::npos; at = received_.find(marker, at + marker.size())) {
      ++found;
    }
    return found;
  };
  while (occurrences() < count) {
    if (closed_ || Clock::now() >= deadline) return false;
    ReadSome(std::chrono::milliseconds(std::max(1, MillisLeft(deadline))));
  }
  return true;
}

bool RawConnection::ReadToClose(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!closed_ && Clock::now() < deadline) ReadSome(std::chrono::milliseconds(std::max(1, MillisLeft(deadline))));
  return closed_;
}

std::string RawConnection::Take() { return std::exchange(received_, {}); }

BurstResult Burst(int port, size_t connections, std::string_view request, std::chrono::milliseconds timeout) {
  struct Conn {
    int fd = -1;
    size_t sent = 0;
    std::string received;
    Clock::time_point start;
    bool done = false;
  };
  BurstResult result;
  std::vector<Conn> conns(connections);
  const sockaddr_in addr = Loopback(port);
  for (Conn& c : conns) {
    c.start = Clock::now();
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0 ||
        (::connect(c.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 && errno != EINPROGRESS)) {
      ++result.refused;
      if (result.first_failure.empty()) result.first_failure = std::string("connect: ") + std::strerror(errno);
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
      c.done = true;
    }
  }
  auto finish = [&](Conn& c, bool reset, const char* why) {
    const int status = StatusOf(c.received);
    if (reset) {
      ++result.reset;
    } else if (status == 0) {
      ++result.unanswered;
    } else {
      ++result.answered;
      result.statuses.push_back(status);
      result.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - c.start).count());
    }
    if ((reset || status == 0) && result.first_failure.empty()) {
      result.first_failure = std::string(why) + ": " + c.received.substr(0, 200);
    }
    ::close(c.fd);
    c.fd = -1;
    c.done = true;
  };
  const auto deadline = Clock::now() + timeout;
  std::vector<pollfd> polls;
  std::vector<size_t> index;
  while (Clock::now() < deadline) {
    polls.clear();
    index.clear();
    for (size_t i = 0; i < conns.size(); ++i) {
      if (conns[i].done) continue;
      const short events = conns[i].sent < request.size() ? POLLOUT : POLLIN;
      polls.push_back(pollfd{.fd = conns[i].fd, .events = events, .revents = 0});
      index.push_back(i);
    }
    if (polls.empty()) break;
    if (::poll(polls.data(), polls.size(), std::min(100, MillisLeft(deadline))) < 0 && errno != EINTR) break;
    for (size_t k = 0; k < polls.size(); ++k) {
      Conn& c = conns[index[k]];
      const short revents = polls[k].revents;
      if (revents == 0) continue;
      if (c.sent < request.size()) {
        if (revents & (POLLERR | POLLHUP)) {
          int err = 0;
          socklen_t len = sizeof(err);
          ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
          finish(c, err == ECONNRESET || err == ECONNREFUSED, "connect");
          continue;
        }
        const ssize_t n = ::send(c.fd, request.data() + c.sent, request.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) {
          c.sent += static_cast<size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          finish(c, errno == ECONNRESET || errno == EPIPE, "send");
        }
        continue;
      }
      char buf[16384];
      const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
      if (n > 0) {
        c.received.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        finish(c, false, "closed");
      } else if (errno != EAGAIN && errno != EINTR) {
        finish(c, errno == ECONNRESET, "recv");
      }
    }
  }
  for (Conn& c : conns) {
    if (!c.done) finish(c, false, "timed out");
  }
  return result;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[i];
}

}  // namespace kubesched::testing
