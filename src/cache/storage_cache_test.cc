#include "cache/storage_cache.h"

#include <gtest/gtest.h>

#include "testing/storage_builders.h"

namespace kubesched::cache {
namespace {

using testing::MakePV;
using testing::MakePVC;

TEST(StorageCacheTest, EveryKindIsStoredAndRemoved) {
  StorageCache cache;
  EXPECT_TRUE(cache.Empty());
  cache.Apply(api::StorageObject(std::shared_ptr<const api::PersistentVolumeClaim>(MakePVC().Name("c").Obj())));
  cache.Apply(api::StorageObject(std::shared_ptr<const api::PersistentVolume>(MakePV().Name("v").Class("fast").Obj())));
  cache.Apply(api::StorageObject(
      std::shared_ptr<const api::StorageClass>(testing::MakeStorageClass().Name("fast").Provisioner("p").Obj())));
  cache.Apply(api::StorageObject(std::shared_ptr<const api::CSINode>(testing::MakeCSINode("n1", {{"d", 2}}))));
  cache.Apply(api::StorageObject(std::shared_ptr<const api::CSIDriver>(testing::MakeCSIDriver("d", true))));
  cache.Apply(api::StorageObject(
      std::shared_ptr<const api::CSIStorageCapacity>(testing::MakeCapacity("cap", "fast", "zone", "a", "1Gi"))));
  EXPECT_FALSE(cache.Empty());
  EXPECT_NE(cache.Claim("default", "c"), nullptr);
  EXPECT_EQ(cache.Claim("other", "c"), nullptr);
  EXPECT_NE(cache.Volume("v"), nullptr);
  EXPECT_EQ(cache.VolumesOfClass("fast").size(), 1u);
  EXPECT_TRUE(cache.VolumesOfClass("").empty());
  EXPECT_NE(cache.Class("fast"), nullptr);
  EXPECT_NE(cache.CSINodeOf("n1"), nullptr);
  EXPECT_NE(cache.Driver("d"), nullptr);
  EXPECT_EQ(cache.CapacitiesOfClass("fast").size(), 1u);
  cache.Remove(api::StorageObject(std::shared_ptr<const api::PersistentVolumeClaim>(MakePVC().Name("c").Obj())));
  EXPECT_EQ(cache.Claim("default", "c"), nullptr);
}

// Upstream's AssumeCache: an assumed version stands until the informer catches up or it is
// restored; one made from an older version than the latest is refused.
TEST(StorageCacheTest, AssumedVolumesStandUntilTheInformerCatchesUp) {
  StorageCache cache;
  cache.Apply(
      api::StorageObject(std::shared_ptr<const api::PersistentVolume>(MakePV().Name("v").ResourceVersion("5").Obj())));
  auto assumed = MakePV().Name("v").ResourceVersion("5").ClaimRef("ns", "c").Obj();
  ASSERT_TRUE(cache.AssumeVolume(assumed).IsSuccess());
  EXPECT_TRUE(cache.Volume("v")->claim_ref.has_value());
  EXPECT_FALSE(cache.ApiVolume("v")->claim_ref.has_value());
  cache.RestoreVolume("v");
  EXPECT_FALSE(cache.Volume("v")->claim_ref.has_value());

  ASSERT_TRUE(cache.AssumeVolume(assumed).IsSuccess());
  // An older informer version leaves the assumption in place; a newer one replaces it.
  cache.Apply(
      api::StorageObject(std::shared_ptr<const api::PersistentVolume>(MakePV().Name("v").ResourceVersion("4").Obj())));
  EXPECT_TRUE(cache.Volume("v")->claim_ref.has_value());
  cache.Apply(
      api::StorageObject(std::shared_ptr<const api::PersistentVolume>(MakePV().Name("v").ResourceVersion("6").Obj())));
  EXPECT_FALSE(cache.Volume("v")->claim_ref.has_value());
  // Assuming from version 5 now that 6 is known: out of sync.
  const framework::Status stale = cache.AssumeVolume(assumed);
  EXPECT_FALSE(stale.IsSuccess());
  EXPECT_NE(stale.Message().find("out of sync"), std::string::npos) << stale.Message();
  EXPECT_FALSE(cache.AssumeClaim(MakePVC().Name("missing").Obj()).IsSuccess());
}

TEST(StorageCacheTest, VersionsCompareAsNumbers) {
  EXPECT_TRUE(OlderVersion("9", "10"));
  EXPECT_FALSE(OlderVersion("10", "9"));
  EXPECT_FALSE(OlderVersion("7", "7"));
}

}  // namespace
}  // namespace kubesched::cache
