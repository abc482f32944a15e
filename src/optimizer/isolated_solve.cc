#include "optimizer/isolated_solve.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace kubesched::optimizer {
namespace {

using Clock = std::chrono::steady_clock;

// The result as bytes: status, objective, bound, seconds, the solution, the message.
std::string Encode(const MipResult& r) {
  std::string out;
  auto put = [&out](const void* p, size_t n) {
    if (n > 0) out.append(static_cast<const char*>(p), n);
  };
  const int32_t status = static_cast<int32_t>(r.status);
  const uint64_t n = r.x.size();
  const uint64_t m = r.message.size();
  put(&status, sizeof status);
  put(&r.objective, sizeof r.objective);
  put(&r.bound, sizeof r.bound);
  put(&r.seconds, sizeof r.seconds);
  put(&n, sizeof n);
  put(r.x.data(), n * sizeof(double));
  put(&m, sizeof m);
  put(r.message.data(), m);
  return out;
}

bool Decode(const std::string& in, MipResult& r) {
  size_t pos = 0;
  auto get = [&](void* p, size_t n) {
    if (pos + n > in.size()) return false;
    if (n > 0) std::memcpy(p, in.data() + pos, n);
    pos += n;
    return true;
  };
  int32_t status = 0;
  uint64_t n = 0, m = 0;
  if (!get(&status, sizeof status) || !get(&r.objective, sizeof r.objective) || !get(&r.bound, sizeof r.bound) ||
      !get(&r.seconds, sizeof r.seconds) || !get(&n, sizeof n) || n > (in.size() - pos) / sizeof(double)) {
    return false;
  }
  r.x.resize(n);
  if (!get(r.x.data(), n * sizeof(double)) || !get(&m, sizeof m) || m > in.size() - pos) return false;
  r.message.assign(in.data() + pos, m);
  pos += m;
  r.status = static_cast<MipResult::Status>(status);
  return pos == in.size();
}

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

}  // namespace

MipResult SolveIsolated(const std::function<MipResult()>& solve, double deadline_seconds, double grace_seconds) {
  int fds[2];
  if (pipe(fds) != 0) return solve();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return solve();
  }
  if (pid == 0) {
    // The child: only this thread exists here; it solves, answers and leaves without running
    // the parent's atexit handlers or destructors.
    close(fds[0]);
    WriteAll(fds[1], Encode(solve()));
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  const auto kill_at =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         std::clamp(deadline_seconds, 0.0, 1e7) + std::clamp(grace_seconds, 0.0, 1e7)));
  std::string data;
  bool killed = false;
  char buf[1 << 16];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now()).count();
    if (left <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child answered (or died)
    data.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  MipResult result;
  if (killed) {
    result.status = MipResult::Status::kNoSolution;
    result.message = fmt::format("the solver did not answer within {:.1f} s and was stopped", deadline_seconds);
    return result;
  }
  if (Decode(data, result)) return result;
  result = MipResult{};
  result.status = MipResult::Status::kError;
  if (WIFSIGNALED(wstatus)) {
    result.message = fmt::format("the solver crashed (signal {})", WTERMSIG(wstatus));
  } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
    // A sanitizer's report of the crash ends the child with an exit code instead of the signal.
    result.message = fmt::format("the solver failed (exit code {})", WEXITSTATUS(wstatus));
  } else {
    result.message = "the solver's answer could not be read";
  }
  return result;
}

}  // namespace kubesched::optimizer
