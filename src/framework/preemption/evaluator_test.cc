#include "framework/preemption/evaluator.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::framework::preemption {
namespace {

using testing::MakeNode;
using testing::MakePod;

std::shared_ptr<const api::PodDisruptionBudget> Pdb(std::string ns, api::LabelSelector selector,
                                                    std::optional<std::string> min_available,
                                                    std::optional<std::string> max_unavailable = std::nullopt) {
  auto pdb = std::make_shared<api::PodDisruptionBudget>();
  pdb->metadata.name = "pdb";
  pdb->metadata.namespace_ = std::move(ns);
  pdb->selector = std::move(selector);
  pdb->min_available = std::move(min_available);
  pdb->max_unavailable = std::move(max_unavailable);
  return pdb;
}

api::LabelSelector Labels(std::initializer_list<std::pair<std::string, std::string>> kv) {
  api::LabelSelector s;
  for (const auto& [k, v] : kv) s.match_labels.Set(k, v);
  return s;
}

// The index finds exactly the PDBs a full scan of PdbSelects finds, in index order.
TEST(PdbIndexTest, AgreesWithAScan) {
  api::LabelSelector exists;
  exists.match_expressions.push_back({"tier", api::SelectorOperator::kExists, {}});
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {
      Pdb("a", Labels({{"app", "web"}}), "1"),
      Pdb("a", Labels({{"app", "web"}, {"tier", "front"}}), "1"),
      Pdb("b", Labels({{"app", "web"}}), "1"),  // other namespace
      Pdb("a", exists, "1"),                    // expressions only
      Pdb("a", api::LabelSelector{}, "1"),      // empty selector: matches nothing
      Pdb("a", Labels({{"app", "db"}}), "1"),
  };
  const PdbIndex index(pdbs);
  const std::vector<std::shared_ptr<api::Pod>> pods = {
      MakePod().Name("p1").Namespace("a").Label("app", "web").Obj(),
      MakePod().Name("p2").Namespace("a").Label("app", "web").Label("tier", "front").Obj(),
      MakePod().Name("p3").Namespace("b").Label("app", "web").Obj(),
      MakePod().Name("p4").Namespace("a").Label("tier", "back").Obj(),
      MakePod().Name("p5").Namespace("a").Obj(),
  };
  std::vector<int> got;
  for (const auto& pod : pods) {
    SCOPED_TRACE(pod->metadata.name);
    std::vector<int> want;
    for (size_t i = 0; i < pdbs.size(); ++i) {
      if (PdbSelects(*pdbs[i], *pod)) want.push_back(static_cast<int>(i));
    }
    index.Selecting(*pod, got);
    EXPECT_EQ(got, want);
  }
  index.Selecting(*pods[1], got);
  EXPECT_EQ(got, (std::vector<int>{0, 1, 3}));
}

TEST(PdbIndexTest, BudgetsCountHealthyPodsOnce) {
  auto node = std::make_unique<NodeInfo>(MakeNode().Name("n").Obj());
  for (int i = 0; i < 3; ++i) {
    node->AddPod(MakePod().Name("w" + std::to_string(i)).Namespace("a").Label("app", "web").Node("n").Info());
  }
  auto terminating = MakePod().Name("w3").Namespace("a").Label("app", "web").Node("n").Obj();
  terminating->metadata.deletion_timestamp_ns = 1;
  node->AddPod(PodInfo::Create(terminating));
  const NodeInfo* nodes[] = {node.get()};
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {
      Pdb("a", Labels({{"app", "web"}}), "2"),                // 3 healthy - 2
      Pdb("a", Labels({{"app", "web"}}), std::nullopt, "1"),  // maxUnavailable 1
      Pdb("a", Labels({{"app", "web"}}), "100%"),             // none
      Pdb("b", Labels({{"app", "web"}}), "0"),                // selects nothing here
  };
  const auto budgets = ComputePdbBudgets(pdbs, nodes);
  ASSERT_EQ(budgets.size(), 4u);
  EXPECT_EQ(budgets[0].disruptions_allowed, 1);
  EXPECT_EQ(budgets[1].disruptions_allowed, 1);
  EXPECT_EQ(budgets[2].disruptions_allowed, 0);
  EXPECT_EQ(budgets[3].disruptions_allowed, 0);
}

}  // namespace
}  // namespace kubesched::framework::preemption
