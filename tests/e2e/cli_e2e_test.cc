// End-to-end tests of the kubesched command line itself: the version, and
// usage errors (one readable line, a hint, exit code 2).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

TEST(CliE2E, Version) {
  const std::string want = "kubesched 0.1.0\nkube-scheduler behaviour: Kubernetes v1.34\n";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"version"}, {"--version"}}) {
    SCOPED_TRACE(args.front());
    RunResult r = RunKubesched(args);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, want);
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliE2E, NoSubcommandPrintsTheUsage) {
  RunResult r = RunKubesched({});
  EXPECT_EQ(r.exit_code, 0);  // as kubectl
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("version"), std::string::npos) << r.out;
}

TEST(CliE2E, UsageErrorsAreOneReadableLine) {
  const std::string cluster = SourcePath("examples/boreas/cluster.yaml");
  struct Case {
    std::vector<std::string> args;
    std::string want_err;  // the whole of stderr
  };
  const std::string simulate_hint = "Run 'kubesched simulate --help' for usage.\n";
  const std::vector<Case> cases = {
      {{"simulate", "-f", cluster, "--seed", "-1"},
       "error: --seed: invalid value \"-1\" (expected a non-negative integer)\n" + simulate_hint},
      {{"-v", "99", "simulate", "-f", cluster},
       "error: -v/--v: invalid value \"99\" (expected an integer from 0 to 10)\n" + simulate_hint},
      {{"--v", "abc", "simulate", "-f", cluster},
       "error: -v/--v: invalid value \"abc\" (expected an integer from 0 to 10)\n" + simulate_hint},
      {{"simulate", "-f", cluster, "-o", "yaml"},
       "error: -o/--output: unsupported value \"yaml\" (expected table, wide or json)\n" + simulate_hint},
      {{"simulate", "-f", cluster, "--seed"},
       "error: --seed: missing value (expected a non-negative integer)\n" + simulate_hint},
      {{"simulate"}, "error: -f/--filename: required flag not set\n" + simulate_hint},
      {{"simulate", "-f", cluster, "--creation-order", "random"},
       "error: --creation-order: unsupported value \"random\" (expected controllers or manifest)\n" + simulate_hint},
      {{"simulate", "-f", cluster, "--colour"},
       "error: --colour: unknown flag (expected -f/--filename, --config, --seed, -o/--output, --creation-order, "
       "--explain, -v/--v or --version)\n" +
           simulate_hint},
      {{"simulte"},
       "error: simulte: unknown command (expected simulate, bench or version)\n"
       "Run 'kubesched --help' for usage.\n"},
      {{"--colour"},
       "error: --colour: unknown flag (expected -v/--v or --version)\nRun 'kubesched --help' for usage.\n"},
      {{"bench", "--nodes", "0"},
       "error: --nodes: invalid value \"0\" (expected a positive integer)\nRun 'kubesched bench --help' for usage.\n"},
  };
  for (const auto& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    RunResult r = RunKubesched(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, c.want_err);
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliE2E, HelpIsStillHelp) {
  RunResult r = RunKubesched({"simulate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("-f,--filename"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--creation-order TEXT:{controllers,manifest}=controllers"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kubesched::e2e
