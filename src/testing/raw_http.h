#pragma once
// HTTP as bytes on a socket, for tests of the servers under abuse: requests sent in pieces or
// never finished, pipelined, malformed, or hundreds at once. No HTTP library in between, so a
// test sees exactly what the server wrote, when it closed, and whether it reset.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::testing {

//! One TCP connection to 127.0.0.1.
class RawConnection {
 public:
  //! Connects (blocking); nullopt when the connection is refused.
  static std::optional<RawConnection> Connect(int port);
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection();

  //! Writes all of `bytes`; false when the peer has gone.
  bool Send(std::string_view bytes);
  //! Reads until what was read since the last Take contains `marker` `count` times, the peer
  //! closes, or `timeout` passes; returns whether the marker count was reached.
  bool ReadUntil(std::string_view marker, size_t count, std::chrono::milliseconds timeout);
  //! Reads until the peer closes or `timeout` passes; returns whether it closed.
  bool ReadToClose(std::chrono::milliseconds timeout);
  //! What was read so far (and forgets it).
  std::string Take();
  const std::string& Received() const { return received_; }
  bool Closed() const { return closed_; }
  //! Whether the peer reset the connection (RST) rather than closing it.
  bool Reset() const { return reset_; }
  int fd() const { return fd_; }

 private:
  explicit RawConnection(int fd) : fd_(fd) {}
  //! One read of what is there, waiting up to `timeout`; false once closed or on timeout.
  bool ReadSome(std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::string received_;
  bool closed_ = false;
  bool reset_ = false;
};

//! What a burst of connections got.
struct BurstResult {
  size_t answered = 0;             //!< responses whose status line was read before the server closed
  size_t refused = 0;              //!< connections that failed to connect
  size_t reset = 0;                //!< connections reset by the server
  size_t unanswered = 0;           //!< closed or timed out without a status line
  std::vector<int> statuses;       //!< one per answered connection
  std::vector<double> latency_ms;  //!< connect to the server's close, per answered connection
  std::string first_failure;       //!< what the first failing connection saw
};

//! Opens `connections` connections at once (non-blocking, from one thread), sends `request` on
//! each as soon as it connects, and reads each until the server closes it (send
//! "Connection: close"), for up to `timeout` in all.
BurstResult Burst(int port, size_t connections, std::string_view request, std::chrono::milliseconds timeout);

//! The p-th percentile (0..100) of `values` (nearest rank); 0 when empty.
double Percentile(std::vector<double> values, double p);

}  // namespace kubesched::testing
