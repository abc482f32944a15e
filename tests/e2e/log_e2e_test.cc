// End-to-end test of the log: `-v` decides what kubesched writes to stderr, in klog's text format,
// and the default run (-v 0) writes nothing there, as before the klog-style logger.

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

RunResult SimulateBoreas(const std::string& verbosity) {
  return RunKubesched({"simulate", "-f", SourcePath("examples/boreas/cluster.yaml"), "-f",
                       SourcePath("examples/boreas/verification.yaml"), "--v", verbosity});
}

TEST(LogE2E, VerboseRunWritesKlogLines) {
  RunResult r = SimulateBoreas("4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Lmmdd hh:mm:ss.uuuuuu, the pid in 7 columns, file:line] "message" key="value"...
  const std::regex klog_line(R"([IWE]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} [ \d]{7} [\w.]+\.cc:\d+\] "[^"]*"( \w+=\S+)*)");
  std::istringstream lines(r.err);
  std::string line;
  int count = 0, bound = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_TRUE(std::regex_match(line, klog_line)) << line;
    if (line.find("] \"Successfully bound pod to node\" pod=\"default/") != std::string::npos) ++bound;
  }
  EXPECT_GT(count, 0) << r.err;
  EXPECT_GT(bound, 0) << r.err;  // upstream's V(2) line, once per bound pod
}

TEST(LogE2E, DefaultRunWritesNothingToStderr) {
  RunResult r = SimulateBoreas("0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // The verbosity changes the log only: stdout is the same.
  EXPECT_EQ(r.out, SimulateBoreas("4").out);
}

}  // namespace
}  // namespace kubesched::e2e
