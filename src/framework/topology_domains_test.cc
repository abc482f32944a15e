#include "framework/topology_domains.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"

namespace kubesched::framework {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;

std::unique_ptr<testing::FakeSnapshot> ZonedSnapshot() {
  return std::make_unique<testing::FakeSnapshot>(
      std::vector<std::shared_ptr<api::Node>>{
          MakeNode().Name("a").Label("zone", "z1").Obj(), MakeNode().Name("b").Label("zone", "z2").Obj(),
          MakeNode().Name("c").Label("zone", "z1").Obj(), MakeNode().Name("d").Obj()},
      std::vector<std::shared_ptr<api::Pod>>{});
}

TEST(TopologyDomains, InternsEachDistinctValueOnce) {
  auto snapshot = ZonedSnapshot();
  auto zones = snapshot->Domains("zone");
  ASSERT_EQ(zones->size(), 2u);
  const int32_t z1 = zones->DomainOfValue("z1");
  const int32_t z2 = zones->DomainOfValue("z2");
  EXPECT_NE(z1, z2);
  EXPECT_EQ(zones->value(z1), "z1");
  EXPECT_EQ(zones->value(z2), "z2");
  EXPECT_EQ(zones->DomainOfValue("z3"), TopologyDomains::kUnknownDomain);
  EXPECT_EQ(zones->DomainOf(*snapshot->Get("a")), z1);
  EXPECT_EQ(zones->DomainOf(*snapshot->Get("b")), z2);
  EXPECT_EQ(zones->DomainOf(*snapshot->Get("c")), z1);
  EXPECT_EQ(zones->DomainOf(*snapshot->Get("d")), TopologyDomains::kNoDomain);
  auto hosts = snapshot->Domains("kubernetes.io/hostname");
  EXPECT_EQ(hosts->size(), 4u);
  EXPECT_EQ(snapshot->Domains("zone"), zones) << "built once per key";
}

TEST(TopologyDomains, NodeInfosOutsideTheSnapshotAreLookedUpByLabel) {
  auto snapshot = ZonedSnapshot();
  auto zones = snapshot->Domains("zone");
  // A clone keeps its index and node; a NodeInfo built elsewhere falls back to its labels.
  EXPECT_EQ(zones->DomainOf(*snapshot->Get("c")->Clone()), zones->DomainOfValue("z1"));
  auto stranger = MakeNodeInfo(MakeNode().Name("x").Label("zone", "z2").Obj());
  EXPECT_EQ(zones->DomainOf(*stranger), zones->DomainOfValue("z2"));
  auto unknown = MakeNodeInfo(MakeNode().Name("y").Label("zone", "z9").Obj());
  EXPECT_EQ(zones->DomainOf(*unknown), TopologyDomains::kUnknownDomain);
  // Same index as "a" but another node: the index is not trusted.
  auto impostor = MakeNodeInfo(MakeNode().Name("z").Label("zone", "z2").Obj());
  impostor->set_snapshot_index(0);
  EXPECT_EQ(zones->DomainOf(*impostor), zones->DomainOfValue("z2"));
}

}  // namespace
}  // namespace kubesched::framework
