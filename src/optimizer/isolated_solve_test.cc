#include "optimizer/isolated_solve.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "optimizer/cbc_solver.h"
#include "util/log.h"

namespace kubesched::optimizer {
namespace {

using Status = MipResult::Status;

// What CBC 2.10's C interface prints when CbcMain1 throws (Cbc_C_Interface.cpp, Cbc_solve).
constexpr const char* kCbcError = "Cbc_C_Interface::Cbc_solve():  ERROR: ClpModel::getColumnName, Illegal index";

MipResult Optimal() {
  MipResult r;
  r.status = Status::kOptimal;
  r.x = {1, 2};
  r.message = "fine";
  return r;
}

TEST(SolveIsolated, WhatTheChildPrintsStaysOffThisProcessesOutput) {
  std::vector<std::string> logged;
  log::SetVerbosity(4);
  log::SetOutputForTest([&](std::string_view line) { logged.emplace_back(line); });
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  std::string output;
  MipResult r = SolveIsolated(
      [] {
        std::printf("buffered by stdio\n");
        std::fprintf(stderr, "to stderr\n");
        (void)write(STDOUT_FILENO, "written to fd 1\n", 16);
        std::printf("no newline at the end");
        return Optimal();
      },
      10, 1, "test", &output);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  log::SetOutputForTest({});
  log::SetVerbosity(0);
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  EXPECT_EQ(r.status, Status::kOptimal);
  EXPECT_EQ(r.x, (std::vector<double>{1, 2}));
  EXPECT_EQ(r.message, "fine");
  for (const char* line : {"buffered by stdio", "to stderr", "written to fd 1", "no newline at the end"}) {
    EXPECT_NE(output.find(line), std::string::npos) << line << " in " << output;
  }
  // Each line went to the log at V(4), with the solver's name.
  ASSERT_EQ(logged.size(), 4u);
  for (const std::string& line : logged) {
    EXPECT_NE(line.find("\"Solver output\" solver=\"test\" line="), std::string::npos) << line;
  }
}

TEST(SolveIsolated, TheParentsUnwrittenOutputIsWrittenOnce) {
  testing::internal::CaptureStdout();
  std::printf("parent's line\n");  // stdout is a file here: buffered, not yet written
  SolveIsolated(
      [] {
        std::fflush(stdout);  // as Cbc_deleteModel does
        return Optimal();
      },
      10);
  std::fflush(stdout);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "parent's line\n");
}

TEST(SolveIsolated, ACrashReportsWhatTheChildPrintedLast) {
  testing::internal::CaptureStderr();
  MipResult r = SolveIsolated(
      [] {
        std::printf("first\nCoin0506I Presolve 12 (-3) rows\nabout to fail\n");
        std::fflush(stdout);
        std::abort();
        return Optimal();
      },
      10);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_NE(r.message.find("crashed"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("after printing: first; Coin0506I Presolve 12 (-3) rows; about to fail"), std::string::npos)
      << r.message;
}

TEST(SolveIsolated, OutputBeyondThePipesSizeDoesNotBlockTheChild) {
  std::string output;
  MipResult r = SolveIsolated(
      [] {
        for (int i = 0; i < 20000; ++i) std::printf("line %d of chatter\n", i);
        return Optimal();
      },
      10, 1, "test", &output);
  EXPECT_EQ(r.status, Status::kOptimal);
  EXPECT_LE(output.size(), kMaxSolverOutput);
  EXPECT_NE(output.find("line 19999 of chatter\n"), std::string::npos);
}

TEST(LastLines, JoinsTheLastNonEmptyLines) {
  EXPECT_EQ(LastLines("a\nb\n\nc\nd\n", 3), "b; c; d");
  EXPECT_EQ(LastLines("only", 3), "only");
  EXPECT_EQ(LastLines("", 3), "");
  EXPECT_EQ(LastLines("\n\n", 3), "");
}

TEST(CbcReportedError, FindsTheLineCbcPrintsWhenItCatchesAnError) {
  EXPECT_EQ(CbcReportedError(std::string("Welcome\n") + kCbcError + "\nmore\n"), kCbcError);
  EXPECT_EQ(CbcReportedError(kCbcError), kCbcError);
  EXPECT_EQ(CbcReportedError("Cbc0012I Integer solution of 3\n"), "");
  EXPECT_EQ(CbcReportedError(""), "");
}

}  // namespace
}  // namespace kubesched::optimizer
