// Tests of the simulation's output: evictions and cross-node moves counted apart.

#include "cmd/output.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/builders.h"

namespace kubesched::cmd {
namespace {

scheduler::SimulationResult WithEvictions() {
  scheduler::SimulationResult r;
  r.nodes = {testing::MakeNode().Name("n0").Obj(), testing::MakeNode().Name("n1").Obj()};
  auto evicted = testing::MakePod().Name("plain").Node("n0").Obj();
  auto moved = testing::MakePod().Name("mover").Node("n0").Obj();
  auto replacement = testing::MakePod().Name("mover-2").Obj();
  r.pods = {replacement};
  r.evictions.push_back({evicted, "Preempted by pod default/p on node n0", nullptr, ""});
  r.evictions.push_back({moved, "Preempted by pod default/p on node n0", replacement, "n1"});
  r.profiles = {"default-scheduler"};
  return r;
}

TEST(Output, JsonCountsEvictionsAndMovesApart) {
  std::ostringstream out;
  PrintSimulation(WithEvictions(), OutputFormat::kJson, out);
  auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["summary"]["evicted"], 2) << "unchanged: every deletion";
  EXPECT_EQ(j["summary"]["evictions"], 1);
  EXPECT_EQ(j["summary"]["moves"], 1);
  ASSERT_EQ(j["evicted"].size(), 2u);
  EXPECT_FALSE(j["evicted"][0].contains("movedTo"));
  EXPECT_EQ(j["evicted"][1]["movedTo"], "n1");
  EXPECT_EQ(j["evicted"][1]["replacedBy"], "default/mover-2");
}

TEST(Output, TextSummaryAddsMoves) {
  std::ostringstream out;
  PrintSimulation(WithEvictions(), OutputFormat::kTable, out);
  EXPECT_NE(out.str().find(", 1 preempted, 1 moved, "), std::string::npos) << out.str();

  auto only_plain = WithEvictions();
  only_plain.evictions.pop_back();
  std::ostringstream plain;
  PrintSimulation(only_plain, OutputFormat::kTable, plain);
  EXPECT_NE(plain.str().find(", 1 preempted, 0 nodes used (of 2)"), std::string::npos) << plain.str();
  EXPECT_EQ(plain.str().find("moved"), std::string::npos) << plain.str();
}

}  // namespace
}  // namespace kubesched::cmd
