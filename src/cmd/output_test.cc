// Tests of the simulation's output: evictions and cross-node moves counted apart.

#include "cmd/output.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/builders.h"

namespace kubesched::cmd {
namespace {

sim::SimulationResult WithEvictions() {
  sim::SimulationResult r;
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

// The pods are written without building a JSON tree: the text is what nlohmann's dump(2) of the
// same members gives, escapes of quotes, control characters and UTF-8 included.
TEST(Output, JsonPodsAreLaidOutAsNlohmannDumpsThem) {
  sim::SimulationResult r;
  auto bound = testing::MakePod().Name("bound").Namespace("ns-1").Node("n0").Priority(-7).Obj();
  auto pending = std::const_pointer_cast<api::Pod>(testing::MakePod().Name("pending").Obj());
  api::PodCondition c;
  c.type = "PodScheduled";
  c.status = "False";
  c.message = "0/2 nodes: \"quoted\" \\ back\nline\ttab \x01 caf\xc3\xa9 \xe2\x9c\x93";
  pending->status.conditions.push_back(c);
  pending->status.nominated_node_name = "n1";
  r.pods = {bound, pending};
  r.bound_in_input.insert(bound->metadata.uid);
  r.profiles = {"default-scheduler"};
  std::ostringstream out;
  PrintSimulation(r, OutputFormat::kJson, out);

  nlohmann::ordered_json want;
  want["pods"] = nlohmann::ordered_json::array();
  for (const auto& p : r.pods) {
    nlohmann::ordered_json e;
    e["namespace"] = p->metadata.namespace_;
    e["name"] = p->metadata.name;
    e["node"] = p->spec.node_name.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p->spec.node_name);
    e["status"] = sim::PodStatus(*p);
    e["phase"] = std::string(api::ToString(p->status.phase));
    e["priority"] = p->Priority();
    e["nominatedNodeName"] = p->status.nominated_node_name.empty()
                                 ? nlohmann::ordered_json(nullptr)
                                 : nlohmann::ordered_json(p->status.nominated_node_name);
    e["boundInInput"] = p == bound;
    e["message"] = p == bound ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.message);
    want["pods"].push_back(e);
  }
  const std::string text = out.str();
  const std::string pods = want.dump(2);
  // The same text up to the end of the pods array.
  const size_t end = pods.rfind("\n}");
  ASSERT_GE(text.size(), end);
  EXPECT_EQ(text.substr(0, end), pods.substr(0, end));
  auto parsed = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(parsed["pods"], want["pods"]);
  EXPECT_TRUE(parsed.contains("summary"));

  r.pods.clear();
  std::ostringstream empty;
  PrintSimulation(r, OutputFormat::kJson, empty);
  EXPECT_TRUE(empty.str().starts_with("{\n  \"pods\": [],\n  \"evicted\": []")) << empty.str();
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
