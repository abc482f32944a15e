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

void AppendHex(fmt::memory_buffer& out, std::string_view prefix, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.append(prefix.data(), prefix.data() + prefix.size());
  for (int i = digits - 1; i >= 0; --i) out.push_back(kHex[(value >> (4 * i)) & 0xF]);
}

// Length of the valid UTF-8 sequence (2 to 4 bytes) starting at s[i], or 0 when it is not one.
// Overlong forms, surrogates and code points above U+10FFFF are invalid, as in Go.
size_t Utf8Length(std::string_view s, size_t i, unsigned& code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  size_t n = 0;
  unsigned min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, code_point = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, code_point = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, code_point = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (b(i + k) & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
  return n;
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

void AppendQuoted(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      unsigned cp = 0;
      const size_t n = Utf8Length(s, i, cp);
      if (n == 0) {
        AppendHex(out, "\\x", c, 2);  // not UTF-8: the byte itself
        ++i;
      } else if (cp < 0xA0) {
        AppendHex(out, "\\u", cp, 4);  // C1 control characters are not printable
        i += n;
      } else {
        out.append(s.data() + i, s.data() + i + n);
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\a':
        out.append(std::string_view("\\a"));
        break;
      case '\b':
        out.append(std::string_view("\\b"));
        break;
      case '\f':
        out.append(std::string_view("\\f"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      case '\v':
        out.append(std::string_view("\\v"));
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          AppendHex(out, "\\x", c, 2);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

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
