#include "optimizer/isolated_solve.h"

#include <poll.h>
#include <signal.h>
#include <stdio_ext.h>
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

#include "util/log.h"

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

// Keeps the last kMaxSolverOutput bytes the child printed and logs each complete line.
class OutputSink {
 public:
  explicit OutputSink(std::string_view name) : name_(name) {}

  void Append(const char* data, size_t n) {
    pending_.append(data, n);
    size_t start = 0;
    for (size_t nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', start)) {
      Line(std::string_view(pending_).substr(start, nl - start));
      start = nl + 1;
    }
    pending_.erase(0, start);
  }
  //! Logs a last line without its newline; returns what was kept.
  std::string Finish() {
    if (!pending_.empty()) Line(pending_);
    pending_.clear();
    return std::move(kept_);
  }

 private:
  void Line(std::string_view line) {
    KS_LOG_V(4).InfoS("Solver output", "solver", name_, "line", line);
    kept_.append(line);
    kept_.push_back('\n');
    if (kept_.size() > kMaxSolverOutput) kept_.erase(0, kept_.size() - kMaxSolverOutput);
  }
  std::string_view name_;
  std::string pending_;  // an incomplete last line
  std::string kept_;
};

// The child's side: stdio buffers inherited from the parent hold the parent's unwritten output,
// which a library's fflush would write a second time (Cbc_deleteModel flushes stdout), so they are
// dropped; fd 1 and 2 then go to `out`.
void RedirectOutput(int out) {
  __fpurge(stdout);
  __fpurge(stderr);
  dup2(out, STDOUT_FILENO);
  dup2(out, STDERR_FILENO);
  close(out);
}

}  // namespace

std::string LastLines(std::string_view text, size_t max_lines) {
  std::vector<std::string_view> lines;
  size_t end = text.size();
  while (end > 0 && lines.size() < max_lines) {
    const size_t nl = text.rfind('\n', end - 1);
    const size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  std::string out;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!out.empty()) out += "; ";
    out += *it;
  }
  return out;
}

MipResult SolveIsolated(const std::function<MipResult()>& solve, double deadline_seconds, double grace_seconds,
                        std::string_view name, std::string* output) {
  int fds[2];
  int out_fds[2];
  if (pipe(fds) != 0) return solve();
  if (pipe(out_fds) != 0) {
    close(fds[0]);
    close(fds[1]);
    return solve();
  }
  // What the parent has buffered is written now, so that the child has nothing of it to lose.
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], out_fds[0], out_fds[1]}) close(fd);
    return solve();
  }
  if (pid == 0) {
    // The child: only this thread exists here; it solves, answers and leaves without running
    // the parent's atexit handlers or destructors.
    close(fds[0]);
    close(out_fds[0]);
    RedirectOutput(out_fds[1]);
    const std::string answer = Encode(solve());
    fflush(stdout);
    fflush(stderr);
    WriteAll(fds[1], answer);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  close(out_fds[1]);
  const auto kill_at =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         std::clamp(deadline_seconds, 0.0, 1e7) + std::clamp(grace_seconds, 0.0, 1e7)));
  std::string data;
  OutputSink sink(name);
  bool killed = false;
  // Both pipes are read until the child closes them (by exiting): a child that fills the output
  // pipe while the answer is not read yet would otherwise block forever.
  bool answer_open = true, output_open = true;
  char buf[1 << 16];
  while (answer_open || output_open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now()).count();
    if (left <= 0) {
      kill(pid, SIGKILL);
      killed = answer_open;
      break;
    }
    pollfd p[2] = {{answer_open ? fds[0] : -1, POLLIN, 0}, {output_open ? out_fds[0] : -1, POLLIN, 0}};
    const int ready = poll(p, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (p[0].revents != 0) {
      const ssize_t got = read(fds[0], buf, sizeof buf);
      if (got > 0) {
        data.append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        answer_open = false;  // EOF: the child answered (or died)
      }
    }
    if (p[1].revents != 0) {
      const ssize_t got = read(out_fds[0], buf, sizeof buf);
      if (got > 0) {
        sink.Append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        output_open = false;
      }
    }
  }
  close(fds[0]);
  close(out_fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  std::string printed = sink.Finish();
  const std::string last = LastLines(printed);
  if (output != nullptr) *output = std::move(printed);
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
  if (!last.empty()) result.message += fmt::format(" after printing: {}", last);
  return result;
}

}  // namespace kubesched::optimizer
