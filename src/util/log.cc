#include "util/log.h"

#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace kubesched::log {

namespace detail {
// Starts at 0 as kube-scheduler's -v does: only V(0) lines, warnings and errors.
std::atomic<int> verbosity{0};
}  // namespace detail

namespace {

// The sink: spdlog's plain stderr sink with the pattern "%v", so spdlog writes each line exactly
// as formatted here (and flushes it: stderr is where a crash's last lines must be). Lines are
// serialised by `mu`, which also guards the test hook, so the sink can be the unlocked variant.
struct Output {
  std::mutex mu;
  std::shared_ptr<spdlog::logger> stderr_logger;         // guarded by mu
  std::function<void(std::string_view line)> test_hook;  // guarded by mu

  Output() {
    stderr_logger = std::make_shared<spdlog::logger>("kubesched", std::make_shared<spdlog::sinks::stderr_sink_st>());
    stderr_logger->set_pattern("%v");
    stderr_logger->set_level(spdlog::level::trace);
    stderr_logger->flush_on(spdlog::level::trace);
  }
};

Output& TheOutput() {
  // Leaked on purpose: lines logged from other threads or static destructors at exit still find it.
  static Output* output = new Output();
  return *output;
}

constexpr char kSeverityChar[] = {'I', 'W', 'E'};

std::string_view BaseName(const char* file) {
  const char* slash = std::strrchr(file, '/');
  return slash != nullptr ? std::string_view(slash + 1) : std::string_view(file);
}

}  // namespace

void SetVerbosity(int v) { detail::verbosity.store(v, std::memory_order_relaxed); }

int Verbosity() { return detail::verbosity.load(std::memory_order_relaxed); }

void SetOutputForTest(std::function<void(std::string_view line)> output) {
  Output& o = TheOutput();
  std::lock_guard lock(o.mu);
  o.test_hook = std::move(output);
}

namespace detail {

void Write(Severity severity, const char* file, int line, std::string_view body) {
  // klog's header: Lmmdd hh:mm:ss.uuuuuu pid file:line] (local time, as klog's time.Now()).
  static const int pid = static_cast<int>(::getpid());
  timeval now{};
  ::gettimeofday(&now, nullptr);
  tm local{};
  ::localtime_r(&now.tv_sec, &local);
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {}:{}] ",
                 kSeverityChar[static_cast<int>(severity)], local.tm_mon + 1, local.tm_mday, local.tm_hour,
                 local.tm_min, local.tm_sec, static_cast<long>(now.tv_usec), pid, BaseName(file), line);
  // klog ends every line with one newline, adding it when the text lacks it (Infof("...\n")).
  if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  out.append(body.data(), body.data() + body.size());
  const std::string_view text(out.data(), out.size());

  Output& o = TheOutput();
  std::lock_guard lock(o.mu);
  if (o.test_hook) {
    o.test_hook(text);
  } else {
    o.stderr_logger->log(spdlog::level::info, spdlog::string_view_t(text.data(), text.size()));
  }
}

}  // namespace detail

}  // namespace kubesched::log
