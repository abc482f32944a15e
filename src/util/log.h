#pragma once
// Logging as kube-scheduler users know it: klog's levels, calls and text format, for the scheduler
// and for out-of-tree plugins (the plugin SDK installs this header, so it includes only <fmt/format.h>
// and the standard library; the sink lives in log.cc).
//
//   KS_LOG.InfoS("Scheduling pod", "pod", log::KObj(pod));           // klog.InfoS      (always)
//   KS_LOG_V(4).InfoS("PreFilter called", "pod", log::KObj(pod));     // klog.V(4).InfoS
//   KS_LOG_V(2).Info("{} pods in {} groups", n, g);                   // klog.V(2).Infof
//   KS_LOG.WarningS("Plan expired", "pod", log::KObj(pod));            // W-line, always
//   KS_LOG.ErrorS(status.Message(), "Binding failed", "pod", ...);    // klog.ErrorS(err, msg, kv...)
//   if (log::V(5)) { ...expensive dump... }                            // klog.V(5).Enabled()
//
// One line per call on stderr, in klog's text format:
//   I1124 20:32:12.123456   12345 file.cc:42] "message" key="value" n=42 ok=true
// severity letter (I, W, E), local month and day, local time with microseconds, the process id
// right-aligned in 7 columns (klog writes the pid there, not a thread id), the source file's base
// name and line, "] ", then:
//   - the structured calls (InfoS, WarningS, ErrorS): the message quoted as Go's strconv.Quote
//     does, ErrorS's `err="..."`, then ` key=value` per pair. Integers, floats and bools are
//     written bare; strings, ObjectRefs and anything else fmt can format are formatted and then
//     quoted, so a value never breaks the line (klog writes values holding a newline as an
//     indented `key=<` block instead; one line per call keeps the output greppable).
//   - the fmt-style calls (Info, Warning, Error): the formatted text as is (klog's Infof).
//
// Verbosity (kube-scheduler's -v): V(n) is enabled when n <= Verbosity(). Unguarded calls (KS_LOG)
// always write, as klog's Info (V(0)), Warning and Error do; upstream's convention is V(2) for
// useful steady-state information, V(4) for debugging, V(5) and above for tracing.
//
// The macros evaluate their arguments only when the line is written, so a disabled V(n) call costs
// one relaxed atomic load and a compare, and is safe on hot paths.

#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "util/go_quote.h"

namespace kubesched::log {

namespace detail {
//! The process-wide verbosity (defined in log.cc, so that everything linked in shares it).
extern std::atomic<int> verbosity;
}  // namespace detail

//! Sets the verbosity (`-v N`); V(n) is enabled for n <= v. Thread-safe.
void SetVerbosity(int v);
//! The current verbosity.
int Verbosity();
//! Whether V(level) lines are written: level <= Verbosity(). One relaxed atomic load.
inline bool V(int level) { return level <= detail::verbosity.load(std::memory_order_relaxed); }

//! Where lines go instead of stderr, for tests: called once per line, with the whole line
//! (header included, no trailing newline), under the logger's lock, so lines never interleave.
//! An empty function restores stderr.
void SetOutputForTest(std::function<void(std::string_view line)> output);

//! A reference to a Kubernetes object, logged as "namespace/name" (just "name" when the object is
//! cluster-scoped), as klog's ObjectRef. Views: the object must outlive the log call.
struct ObjectRef {
  std::string_view ns;
  std::string_view name;
};

//! klog.KRef(namespace, name).
constexpr ObjectRef KRef(std::string_view ns, std::string_view name) { return {ns, name}; }

//! klog.KObj(obj): an ObjectRef for anything with Kubernetes object metadata (`obj.metadata.name`
//! and `obj.metadata.namespace_`, as api::Pod and api::Node), or with `name()` (and optionally
//! `namespace_()`) accessors. Pointers (raw or smart) are followed; a null one gives an empty ref.
template <typename T>
ObjectRef KObj(const T& obj) {
  if constexpr (requires {
                  obj.metadata.name;
                  obj.metadata.namespace_;
                }) {
    return {obj.metadata.namespace_, obj.metadata.name};
  } else if constexpr (requires {
                         obj.name();
                         obj.namespace_();
                       }) {
    return {obj.namespace_(), obj.name()};
  } else if constexpr (requires { obj.name(); }) {
    return {{}, obj.name()};
  } else if constexpr (requires {
                         obj == nullptr;
                         *obj;
                       }) {
    if (obj == nullptr) return {};
    return KObj(*obj);
  } else {
    static_assert(sizeof(T) == 0, "log::KObj: the type has neither .metadata nor name()");
    return {};
  }
}

enum class Severity : uint8_t { kInfo, kWarning, kError };

namespace detail {

//! Writes one line: klog's header for (severity, file's base name, line), then body.
void Write(Severity severity, const char* file, int line, std::string_view body);

template <typename T>
void AppendValue(fmt::memory_buffer& out, const T& v) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    fmt::format_to(std::back_inserter(out), "{}", v ? "true" : "false");
  } else if constexpr (std::is_same_v<U, char>) {
    util::AppendGoQuoted(out, std::string_view(&v, 1));
  } else if constexpr (std::is_arithmetic_v<U>) {
    fmt::format_to(std::back_inserter(out), "{}", v);
  } else if constexpr (std::is_same_v<U, ObjectRef>) {
    if (v.ns.empty()) {
      util::AppendGoQuoted(out, v.name);
    } else {
      util::AppendGoQuoted(out, fmt::format("{}/{}", v.ns, v.name));
    }
  } else if constexpr (std::is_convertible_v<const U&, std::string_view>) {
    util::AppendGoQuoted(out, std::string_view(v));
  } else {
    static_assert(fmt::is_formattable<U>::value, "log: a value must be a number, bool, string or fmt-formattable");
    util::AppendGoQuoted(out, fmt::format("{}", v));
  }
}

inline void AppendPairs(fmt::memory_buffer&) {}

template <typename K, typename V, typename... Rest>
void AppendPairs(fmt::memory_buffer& out, const K& key, const V& value, const Rest&... rest) {
  static_assert(std::is_convertible_v<const K&, std::string_view>, "log: keys must be strings");
  out.push_back(' ');
  const std::string_view k(key);
  out.append(k.data(), k.data() + k.size());
  out.push_back('=');
  AppendValue(out, value);
  AppendPairs(out, rest...);
}

template <typename... KV>
void WriteS(Severity severity, const char* file, int line, std::string_view err, std::string_view msg,
            const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "log: key/value arguments must come in pairs");
  fmt::memory_buffer out;
  util::AppendGoQuoted(out, msg);
  if (!err.empty()) {
    static constexpr std::string_view kErr = " err=";
    out.append(kErr.data(), kErr.data() + kErr.size());
    util::AppendGoQuoted(out, err);
  }
  if constexpr (sizeof...(KV) % 2 == 0) AppendPairs(out, kv...);  // else only the assertion's error
  Write(severity, file, line, std::string_view(out.data(), out.size()));
}

template <typename... Args>
void WriteF(Severity severity, const char* file, int line, fmt::format_string<Args...> format, Args&&... args) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
  Write(severity, file, line, std::string_view(out.data(), out.size()));
}

}  // namespace detail

//! What KS_LOG_V(n) gives: klog's Verbose. The line is written at info severity, or at error
//! severity for Error/ErrorS (klog.V(n).ErrorS), when V(n) is enabled (checked by the macro).
class Verbose {
 public:
  constexpr Verbose(const char* file, int line) : file_(file), line_(line) {}

  //! klog.InfoS: `"msg" key=value...`. An odd number of key/value arguments does not compile.
  template <typename... KV>
  void InfoS(std::string_view msg, const KV&... kv) const {
    detail::WriteS(Severity::kInfo, file_, line_, {}, msg, kv...);
  }
  //! klog.Infof: fmt-style, the text written unquoted.
  template <typename... Args>
  void Info(fmt::format_string<Args...> format, Args&&... args) const {
    detail::WriteF(Severity::kInfo, file_, line_, format, std::forward<Args>(args)...);
  }
  //! klog.ErrorS(err, msg, kv...): `"msg" err="..." key=value...` at error severity. `err` is the
  //! error's message; an empty one stands for klog's nil error (no err= pair).
  template <typename... KV>
  void ErrorS(std::string_view err, std::string_view msg, const KV&... kv) const {
    detail::WriteS(Severity::kError, file_, line_, err, msg, kv...);
  }
  //! klog.Errorf: fmt-style at error severity.
  template <typename... Args>
  void Error(fmt::format_string<Args...> format, Args&&... args) const {
    detail::WriteF(Severity::kError, file_, line_, format, std::forward<Args>(args)...);
  }

 protected:
  const char* file_;
  int line_;
};

//! What KS_LOG gives: klog's package-level calls, which always write. Adds warnings.
class Logger : public Verbose {
 public:
  using Verbose::Verbose;

  //! Structured warning: `"msg" key=value...` at warning severity. (klog has only Warningf;
  //! kubesched adds the structured form so warnings can carry KObj refs like the rest.)
  template <typename... KV>
  void WarningS(std::string_view msg, const KV&... kv) const {
    detail::WriteS(Severity::kWarning, file_, line_, {}, msg, kv...);
  }
  //! klog.Warningf: fmt-style at warning severity.
  template <typename... Args>
  void Warning(fmt::format_string<Args...> format, Args&&... args) const {
    detail::WriteF(Severity::kWarning, file_, line_, format, std::forward<Args>(args)...);
  }
};

}  // namespace kubesched::log

//! klog's package-level logger at this file and line: KS_LOG.InfoS(...), .Info(...),
//! .WarningS(...), .Warning(...), .ErrorS(err, ...), .Error(...). Always writes.
#define KS_LOG (::kubesched::log::Logger(__FILE__, __LINE__))

//! klog.V(level) at this file and line: KS_LOG_V(4).InfoS(...), .Info(...), .ErrorS(...),
//! .Error(...). The call becomes the third operand of a conditional expression, so its arguments
//! are evaluated only when V(level) is enabled; being an expression rather than an if/else, it
//! cannot capture a caller's `else` nor draw GCC's -Wdangling-else under a brace-less `if`.
#define KS_LOG_V(level) !::kubesched::log::V(level) ? (void)0 : ::kubesched::log::Verbose(__FILE__, __LINE__)
