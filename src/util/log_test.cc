#include "util/log.h"

#include <unistd.h>

#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "api/types.h"

// A type logged through its fmt formatter.
struct Quantity {
  int gib;
};
template <>
struct fmt::formatter<Quantity> : fmt::formatter<std::string_view> {
  auto format(const Quantity& q, format_context& ctx) const { return fmt::format_to(ctx.out(), "{}Gi", q.gib); }
};

namespace kubesched::log {
namespace {

// Captures every line written while it lives, and restores the verbosity it found.
class Capture {
 public:
  Capture() : saved_verbosity_(Verbosity()) {
    SetOutputForTest([this](std::string_view line) { lines_.emplace_back(line); });
  }
  ~Capture() {
    SetOutputForTest(nullptr);
    SetVerbosity(saved_verbosity_);
  }
  // Guarded by the logger's lock while logging; read only after the logging threads are joined.
  const std::vector<std::string>& lines() const { return lines_; }
  // The line without its header ("file:line] " included), after checking the header's shape.
  std::string Body(size_t i) const {
    static const std::regex kHeader(R"(^[IWE]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} [ \d]{7} log_test\.cc:\d+\] )");
    std::smatch m;
    EXPECT_TRUE(std::regex_search(lines_.at(i), m, kHeader)) << lines_.at(i);
    return m.suffix();
  }

 private:
  int saved_verbosity_;
  std::vector<std::string> lines_;
};

TEST(Log, HeaderIsKlogs) {
  Capture capture;
  const int line = __LINE__ + 1;
  KS_LOG.InfoS("Pod scheduled", "pod", KRef("default", "web-0"));
  ASSERT_EQ(capture.lines().size(), 1u);
  const std::string& l = capture.lines()[0];
  // I + MMDD, space, hh:mm:ss.uuuuuu, space, pid right-aligned in 7 columns, space, base name.
  std::smatch m;
  ASSERT_TRUE(std::regex_match(l, m, std::regex(R"(I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) (.{7}) (.*))"))) << l;
  EXPECT_EQ(m[7].str(), fmt::format("{:>7}", ::getpid()));
  EXPECT_EQ(m[8].str(), fmt::format("log_test.cc:{}] \"Pod scheduled\" pod=\"default/web-0\"", line));
  const int month = std::stoi(m[1].str()), day = std::stoi(m[2].str());
  EXPECT_TRUE(month >= 1 && month <= 12 && day >= 1 && day <= 31) << l;
}

TEST(Log, StructuredValues) {
  struct Case {
    std::string name;
    std::function<void()> log;
    std::string want;  // the line after its header
  };
  const std::string owned = "owned";
  const std::vector<Case> cases = {
      {"no pairs", [] { KS_LOG.InfoS("Starting"); }, R"("Starting")"},
      {"ints, floats, bools bare",
       [] { KS_LOG.InfoS("m", "n", 42, "neg", int64_t{-7}, "u", 3u, "f", 1.5, "ok", true, "no", false); },
       R"("m" n=42 neg=-7 u=3 f=1.5 ok=true no=false)"},
      {"strings quoted", [&] { KS_LOG.InfoS("m", "literal", "a b", "string", owned, "view", std::string_view("v")); },
       R"("m" literal="a b" string="owned" view="v")"},
      {"empty string", [] { KS_LOG.InfoS("m", "s", ""); }, R"("m" s="")"},
      {"char quoted", [] { KS_LOG.InfoS("m", "c", 'x'); }, R"("m" c="x")"},
      {"fmt-formattable quoted", [] { KS_LOG.InfoS("m", "q", Quantity{5}); }, R"("m" q="5Gi")"},
      {"cluster-scoped ref", [] { KS_LOG.InfoS("m", "node", KRef("", "node-1")); }, R"("m" node="node-1")"},
      {"warning", [] { KS_LOG.WarningS("Plan expired", "pod", KRef("ns", "p")); }, R"("Plan expired" pod="ns/p")"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Capture capture;
    c.log();
    ASSERT_EQ(capture.lines().size(), 1u);
    EXPECT_EQ(capture.Body(0), c.want);
  }
}

TEST(Log, GoQuoting) {
  struct Case {
    std::string name;
    std::string in;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"plain", "hello", R"("hello")"},
      {"quote and backslash", R"(say "hi" \o/)", R"("say \"hi\" \\o/")"},
      {"newline and tab", "a\nb\tc", R"("a\nb\tc")"},
      {"other escapes", "\a\b\f\r\v", R"("\a\b\f\r\v")"},
      {"control characters", std::string("\x01\x1f\x7f") + '\0', R"("\x01\x1f\x7f\x00")"},
      {"UTF-8 kept", "caf\xc3\xa9 \xe2\x9c\x93", "\"caf\xc3\xa9 \xe2\x9c\x93\""},
      {"C1 control", "\xc2\x85", R"("\u0085")"},
      {"invalid UTF-8", "\xff\xc3", R"("\xff\xc3")"},
      {"overlong", "\xc0\xaf", R"("\xc0\xaf")"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Capture capture;
    KS_LOG.InfoS(c.in, "v", c.in);
    ASSERT_EQ(capture.lines().size(), 1u);
    EXPECT_EQ(capture.Body(0), c.want + " v=" + c.want);
  }
}

TEST(Log, KObj) {
  api::Pod pod;
  pod.metadata.namespace_ = "kube-system";
  pod.metadata.name = "coredns-1";
  api::Node node;
  node.metadata.name = "node-a";
  auto shared = std::make_shared<const api::Pod>(pod);
  std::shared_ptr<const api::Pod> null_pod;
  struct Accessors {
    std::string_view namespace_() const { return "ns"; }
    std::string_view name() const { return "n"; }
  };

  Capture capture;
  KS_LOG.InfoS("m", "pod", KObj(pod), "node", KObj(node), "shared", KObj(shared), "raw", KObj(&node), "null",
               KObj(null_pod), "accessors", KObj(Accessors{}));
  ASSERT_EQ(capture.lines().size(), 1u);
  EXPECT_EQ(capture.Body(0),
            R"("m" pod="kube-system/coredns-1" node="node-a" shared="kube-system/coredns-1" raw="node-a" null="")"
            R"( accessors="ns/n")");
}

TEST(Log, ErrorSPutsErrBeforeThePairs) {
  Capture capture;
  KS_LOG.ErrorS("connection \"refused\"", "Binding failed", "pod", KRef("ns", "p"), "attempt", 3);
  KS_LOG.ErrorS("", "No error value", "k", "v");  // klog.ErrorS(nil, ...)
  KS_LOG_V(0).ErrorS("e", "Verbose error");
  ASSERT_EQ(capture.lines().size(), 3u);
  EXPECT_EQ(capture.lines()[0][0], 'E');
  EXPECT_EQ(capture.Body(0), R"("Binding failed" err="connection \"refused\"" pod="ns/p" attempt=3)");
  EXPECT_EQ(capture.Body(1), R"("No error value" k="v")");
  EXPECT_EQ(capture.lines()[2][0], 'E');
  EXPECT_EQ(capture.Body(2), R"("Verbose error" err="e")");
}

TEST(Log, FmtStyleIsUnquoted) {
  Capture capture;
  KS_LOG.Info("{} pods in {} \"groups\"", 3, 2);
  KS_LOG.Warning("careful: {}", "x");
  KS_LOG.Error("failed: {:.2f} ms", 2.25);
  KS_LOG.Info("trailing newline dropped\n");
  ASSERT_EQ(capture.lines().size(), 4u);
  EXPECT_EQ(capture.lines()[0][0], 'I');
  EXPECT_EQ(capture.Body(0), R"(3 pods in 2 "groups")");
  EXPECT_EQ(capture.lines()[1][0], 'W');
  EXPECT_EQ(capture.Body(1), "careful: x");
  EXPECT_EQ(capture.lines()[2][0], 'E');
  EXPECT_EQ(capture.Body(2), "failed: 2.25 ms");
  EXPECT_EQ(capture.Body(3), "trailing newline dropped");
}

TEST(Log, VerbosityGatesAndSkipsArguments) {
  Capture capture;
  int evaluated = 0;
  auto counted = [&evaluated] {
    ++evaluated;
    return evaluated;
  };
  SetVerbosity(2);
  EXPECT_EQ(Verbosity(), 2);
  EXPECT_TRUE(V(0));
  EXPECT_TRUE(V(2));
  EXPECT_FALSE(V(3));
  KS_LOG_V(4).InfoS("debug", "n", counted());
  KS_LOG_V(3).Info("debug {}", counted());
  KS_LOG_V(5).ErrorS(std::to_string(counted()), "trace");
  EXPECT_EQ(evaluated, 0);
  EXPECT_TRUE(capture.lines().empty());

  KS_LOG_V(2).InfoS("steady", "n", counted());
  KS_LOG_V(0).Info("always {}", counted());
  EXPECT_EQ(evaluated, 2);
  ASSERT_EQ(capture.lines().size(), 2u);
  EXPECT_EQ(capture.Body(0), R"("steady" n=1)");
  EXPECT_EQ(capture.Body(1), "always 2");

  // The macro is one statement: an else after it belongs to the caller's if.
  bool else_taken = false;
  if (evaluated == 0)
    KS_LOG_V(0).InfoS("unreachable");
  else
    else_taken = true;
  EXPECT_TRUE(else_taken);

  SetVerbosity(0);
  KS_LOG_V(1).InfoS("hidden", "n", counted());
  KS_LOG.InfoS("unguarded info still writes at 0");
  EXPECT_EQ(evaluated, 2);
  EXPECT_EQ(capture.lines().size(), 3u);
}

TEST(Log, LinesStayWholeAcrossThreads) {
  Capture capture;
  constexpr int kThreads = 4;
  constexpr int kLines = 500;
  const std::string padding(200, 'x');  // long lines, so interleaving would show
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &padding] {
      for (int i = 0; i < kLines; ++i) KS_LOG.InfoS("line", "thread", t, "i", i, "padding", padding);
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(capture.lines().size(), static_cast<size_t>(kThreads * kLines));
  const std::regex whole(
      R"(I\d{4} \d\d:\d\d:\d\d\.\d{6} [ \d]{7} log_test\.cc:\d+\] "line" thread=(\d) i=(\d+) padding="x{200}")");
  std::set<std::pair<int, int>> seen;
  for (const std::string& l : capture.lines()) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, whole)) << l;
    seen.emplace(std::stoi(m[1].str()), std::stoi(m[2].str()));
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kLines));
}

TEST(Log, WritesWholeLinesToStderr) {
  testing::internal::CaptureStderr();
  KS_LOG.WarningS("To stderr", "k", 1);
  KS_LOG.Info("second");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(std::regex_match(err, std::regex(R"(W\d{4} [^\n]* log_test\.cc:\d+\] "To stderr" k=1\n)"
                                               R"(I\d{4} [^\n]* log_test\.cc:\d+\] second\n)")))
      << err;
}

// Odd key/value counts and non-string keys are compile errors (static_assert in detail::WriteS and
// detail::AppendPairs); these would not compile:
//   KS_LOG.InfoS("m", "key");
//   KS_LOG.InfoS("m", 1, 2);
}  // namespace
}  // namespace kubesched::log
