// End-to-end tests of the kubesched command line itself: `kubesched plugins`, the version, and
// usage errors (one readable line, a hint, exit code 2).

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;

// The table line of a plugin, e.g. "NodeResourcesFit   PreFilter, Filter, ...".
std::string LineOf(const std::string& out, const std::string& name) {
  size_t pos = out.find("\n" + name + " ");
  if (pos == std::string::npos) return "";
  size_t end = out.find('\n', pos + 1);
  return out.substr(pos + 1, end - pos - 1);
}

TEST(CliE2E, PluginsTable) {
  RunResult r = RunKubesched({"plugins"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("NAME ")) << r.out;
  std::string fit = LineOf(r.out, "NodeResourcesFit");
  EXPECT_NE(fit.find("PreFilter, Filter, PreScore, Score, EnqueueExtensions"), std::string::npos) << fit;
  EXPECT_NE(fit.find(" yes "), std::string::npos) << fit;
  EXPECT_NE(fit.find("NodeResourcesFitArgs"), std::string::npos) << fit;
  EXPECT_NE(LineOf(r.out, "PrioritySort").find("QueueSort"), std::string::npos) << r.out;
  EXPECT_NE(LineOf(r.out, "DefaultBinder").find("Bind"), std::string::npos) << r.out;
  EXPECT_NE(LineOf(r.out, "TaintToleration").find(" 3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  NodeResourcesFitArgs: ignoredResources=[], ignoredResourceGroups=[], "
                       "scoringStrategy.type=LeastAllocated, scoringStrategy.resources=[{name: cpu, weight: 1}, "
                       "{name: memory, weight: 1}]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  DefaultPreemptionArgs: minCandidateNodesPercentage=10, minCandidateNodesAbsolute=100\n"),
            std::string::npos)
      << r.out;
}

TEST(CliE2E, PluginsJson) {
  RunResult r = RunKubesched({"plugins", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_TRUE(j["plugins"].is_array());
  std::vector<std::string> names;
  for (const auto& p : j["plugins"]) names.push_back(p["name"]);
  // The default profile's plugins, in upstream's order, then kubesched's own.
  EXPECT_EQ(names.front(), "SchedulingGates");
  ASSERT_EQ(names.size(), 25u);
  // The volume plugins at upstream's place, after NodeResourcesFit.
  EXPECT_EQ(std::vector<std::string>(names.begin() + 8, names.begin() + 12),
            (std::vector<std::string>{"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}));
  // DynamicResources before DefaultPreemption, as upstream's applyFeatureGates puts it.
  EXPECT_EQ(names[14], "DynamicResources");
  EXPECT_EQ(names[15], "DefaultPreemption");
  EXPECT_EQ(names[18], "DefaultBinder");
  // NodeDeclaredFeatures (GA in 1.37) and GangScheduling are defaults that upstream's
  // applyFeatureGates appends, with their gates on.
  EXPECT_EQ(names[19], "NodeDeclaredFeatures");
  EXPECT_EQ(names[20], "GangScheduling");
  EXPECT_EQ(names[21], "BatchPlacement");
  EXPECT_EQ(names[22], "Coscheduling");  // scheduler-plugins', not a default
  EXPECT_EQ(names[23], "CrossNodePreemption");
  EXPECT_EQ(names.back(), "DeviceFragmentation");
  for (const auto& p : j["plugins"]) {
    SCOPED_TRACE(p.dump());
    EXPECT_EQ(p["defaultProfile"].get<bool>(), p["name"] != "BatchPlacement" && p["name"] != "CrossNodePreemption" &&
                                                   p["name"] != "Coscheduling" && p["name"] != "DeviceFragmentation");
    EXPECT_FALSE(p["extensionPoints"].empty());
    if (p["name"] != "NodeResourcesFit") continue;
    EXPECT_EQ(p["extensionPoints"], json({"PreFilter", "Filter", "PreScore", "Score", "EnqueueExtensions"}));
    EXPECT_EQ(p["weight"], 1);
    EXPECT_EQ(p["args"]["kind"], "NodeResourcesFitArgs");
    EXPECT_EQ(p["args"]["defaults"]["scoringStrategy"]["type"], "LeastAllocated");
    EXPECT_EQ(p["args"]["defaults"]["scoringStrategy"]["resources"],
              json::parse(R"([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}])"));
  }
  auto find = [&](const std::string& name) {
    for (const auto& p : j["plugins"]) {
      if (p["name"] == name) return p;
    }
    return json();
  };
  EXPECT_TRUE(find("PrioritySort")["weight"].is_null());
  EXPECT_TRUE(find("PrioritySort")["args"].is_null());
  EXPECT_EQ(find("PodTopologySpread")["args"]["defaults"]["defaultingType"], "System");
}

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
  EXPECT_NE(r.out.find("plugins"), std::string::npos) << r.out;
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
       "error: --colour: unknown flag (expected -f/--filename, -R/--recursive, -n/--namespace, --validate, --config, "
       "--compare, "
       "--seed, "
       "-o/--output, --creation-order, "
       "--explain, --report, --timeseries, --timeseries-format, --timeseries-interval, --plugin, -v/--v or "
       "--version)\n" +
           simulate_hint},
      {{"simulte"},
       "error: simulte: unknown command (expected simulate, bench, apiserver, run, extender, plugins or version)\n"
       "Run 'kubesched --help' for usage.\n"},
      {{"--colour"},
       "error: --colour: unknown flag (expected -v/--v or --version)\nRun 'kubesched --help' for usage.\n"},
      {{"plugins", "-o", "yaml"},
       "error: -o/--output: unsupported value \"yaml\" (expected table or json)\n"
       "Run 'kubesched plugins --help' for usage.\n"},
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
