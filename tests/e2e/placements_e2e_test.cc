// `kubesched simulate` gives the placements it is expected to give on the examples, the Boreas
// tests and the openb trace: each case's outcome (every pod's node, status, phase and
// nomination; every eviction and its replacement; the summary's counts) against a golden file
// in tests/e2e/golden/. The golden files were written by the simulator that kept its own
// in-memory cluster, before `simulate` moved onto the object store, its controllers and codec;
// they pin those placements down.
//
// After a deliberate change of outcome, rewrite them with KUBESCHED_UPDATE_GOLDEN=1 and review
// the diff.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

struct Case {
  std::string name;
  std::vector<std::string> args;  //!< after `simulate -o json`
  std::string stdin_gz;           //!< a gzipped manifest (source path) to give as `-f -`, or empty
};

std::ostream& operator<<(std::ostream& out, const Case& c) { return out << c.name; }

std::string Value(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}

std::string Field(const nlohmann::json& o, const char* key) { return o.contains(key) ? Value(o[key]) : "-"; }

// The outcome, a line per pod and eviction and one for the summary (timings left out).
std::string Outcome(const std::string& json_text) {
  const nlohmann::json d = nlohmann::json::parse(json_text);
  std::ostringstream out;
  for (const auto& p : d.at("pods")) {
    out << "pod " << p.at("namespace").get<std::string>() << "/" << p.at("name").get<std::string>()
        << " node=" << Field(p, "node") << " status=" << Field(p, "status") << " phase=" << Field(p, "phase")
        << " nominated=" << Field(p, "nominatedNodeName") << " input=" << Field(p, "boundInInput") << "\n";
  }
  if (d.contains("evicted")) {
    for (const auto& e : d.at("evicted")) {
      out << "evicted " << e.at("namespace").get<std::string>() << "/" << e.at("name").get<std::string>()
          << " node=" << Field(e, "node") << " status=" << Field(e, "status") << " by=" << Field(e, "preemptedBy")
          << " replacedBy=" << Field(e, "replacedBy") << " movedTo=" << Field(e, "movedTo") << "\n";
    }
  }
  out << "summary";
  const auto& s = d.at("summary");
  for (const char* k : {"scheduled", "alreadyRunning", "pending", "gated", "finished", "evicted", "evictions", "moves",
                        "nodesUsed", "nodes"}) {
    out << " " << k << "=" << Field(s, k);
  }
  out << "\n";
  return out.str();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string GoldenPath(const Case& c, bool gz) {
  return SourcePath("tests/e2e/golden/" + c.name + (gz ? ".txt.gz" : ".txt"));
}

class Placements : public ::testing::TestWithParam<Case> {};

TEST_P(Placements, MatchTheGoldenOutcome) {
  const Case& c = GetParam();
  const bool gz = !c.stdin_gz.empty();
#if defined(KUBESCHED_SANITIZED)
  if (gz) GTEST_SKIP() << "the openb trace runs in the release build only (an order of magnitude slower here)";
#endif
  std::vector<std::string> args = {"simulate", "-o", "json"};
  for (const auto& a : c.args) args.push_back(a.starts_with("examples/") ? SourcePath(a) : a);
  RunResult r;
  if (gz) {
    const std::string manifest = Gunzip(SourcePath(c.stdin_gz));
    ASSERT_FALSE(manifest.empty()) << "could not decompress " << c.stdin_gz;
    args.insert(args.end(), {"-f", "-"});
    r = RunKubeschedWithInput(args, manifest);
  } else {
    r = RunKubesched(args);
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string outcome = Outcome(r.out);
  if (std::getenv("KUBESCHED_UPDATE_GOLDEN") != nullptr) {
    if (gz) {
      const std::string tmp = WriteTempFile(c.name + ".txt", outcome);
      ASSERT_EQ(std::system(("gzip -9 -n -c '" + tmp + "' > '" + GoldenPath(c, true) + "'").c_str()), 0);
    } else {
      WriteFile(GoldenPath(c, false), outcome);
    }
    GTEST_SKIP() << "golden file rewritten";
  }
  const std::string golden = gz ? Gunzip(GoldenPath(c, true)) : ReadFile(GoldenPath(c, false));
  ASSERT_FALSE(golden.empty()) << "no golden file for " << c.name;
  if (outcome == golden) return;
  // The first lines that differ, rather than two whole outcomes.
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const auto want = lines(golden), got = lines(outcome);
  std::ostringstream diff;
  for (size_t i = 0, shown = 0; i < std::max(want.size(), got.size()) && shown < 10; ++i) {
    const std::string w = i < want.size() ? want[i] : "(none)", g = i < got.size() ? got[i] : "(none)";
    if (w == g) continue;
    diff << "line " << i + 1 << "\n  want: " << w << "\n  got:  " << g << "\n";
    ++shown;
  }
  FAIL() << c.name << ": the outcome differs from tests/e2e/golden/" << c.name << "\n" << diff.str();
}

const std::string kBoreas = "examples/boreas/cluster.yaml";
const std::string kCrossNode = "examples/preemption/config.yaml";

INSTANTIATE_TEST_SUITE_P(
    Examples, Placements,
    ::testing::Values(
        Case{"boreas-verification", {"-f", kBoreas, "-f", "examples/boreas/verification.yaml"}, ""},
        Case{"boreas-test-a", {"-f", kBoreas, "-f", "examples/boreas/test-a.yaml"}, ""},
        Case{"boreas-test-b", {"-f", kBoreas, "-f", "examples/boreas/test-b.yaml"}, ""},
        Case{"boreas-test-c", {"-f", kBoreas, "-f", "examples/boreas/test-c.yaml"}, ""},
        Case{"boreas-test-d", {"-f", kBoreas, "-f", "examples/boreas/test-d.yaml"}, ""},
        Case{"boreas-test-a-optimizer",
             {"--config", "examples/optimizer.yaml", "-f", kBoreas, "-f", "examples/boreas/test-a.yaml"},
             ""},
        Case{"storefront", {"-f", "examples/storefront/cluster.yaml", "-f", "examples/storefront/app.yaml"}, ""},
        Case{"preemption-homeless", {"--config", kCrossNode, "-f", "examples/preemption/homeless.yaml"}, ""},
        Case{"preemption-homeless-default", {"-f", "examples/preemption/homeless.yaml"}, ""},
        Case{"preemption-thesis", {"--config", kCrossNode, "-f", "examples/preemption/thesis.yaml"}, ""},
        Case{"preemption-thesis-default", {"-f", "examples/preemption/thesis.yaml"}, ""},
        Case{"preemption-zone-anti-affinity",
             {"--config", kCrossNode, "-f", "examples/preemption/zone-anti-affinity.yaml"},
             ""},
        Case{"preemption-zone-anti-affinity-default", {"-f", "examples/preemption/zone-anti-affinity.yaml"}, ""},
        Case{"openb", {}, "tests/data/openb.yaml.gz"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.name;
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace kubesched::e2e
