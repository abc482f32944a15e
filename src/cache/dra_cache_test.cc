// The scheduler's DRA cache: DeviceClasses, ResourceSlices and ResourceClaims as the informers
// deliver them, the claims' assume cache, and the allocated devices kept up to date on every change
// (upstream's DRA manager: its ResourceClaim tracker, allocated-devices tracker and
// TestGatherAllocatedState), with framework::AllocatedState::Apply underneath.

#include "cache/dra_cache.h"

#include <gtest/gtest.h>

#include "plugins/dynamic_resources/dra_test_util.h"

namespace kubesched::cache {
namespace {

namespace dt = kubesched::plugins::dynamic_resources::testing;
using ClaimPtr = std::shared_ptr<api::ResourceClaim>;
using framework::DeviceId;
using framework::SharedDeviceId;

constexpr char kDriver[] = "some-driver";
constexpr char kPool[] = "worker";
constexpr char kNamespace[] = "default";
const api::QualifiedName kCapacity{kDriver, "my-cap"};

api::ResourceObject Obj(const ClaimPtr& c) { return std::shared_ptr<const api::ResourceClaim>(c); }
api::ResourceObject Obj(const std::shared_ptr<api::DeviceClass>& c) {
  return std::shared_ptr<const api::DeviceClass>(c);
}
api::ResourceObject Obj(const std::shared_ptr<api::ResourceSlice>& s) {
  return std::shared_ptr<const api::ResourceSlice>(s);
}

api::DeviceRequestAllocationResult Device(std::string device, std::optional<std::string> share_id = std::nullopt,
                                          std::optional<std::string> consumed = std::nullopt) {
  api::DeviceRequestAllocationResult r;
  r.request = "req-1";
  r.driver = kDriver;
  r.pool = kPool;
  r.device = std::move(device);
  r.share_id = std::move(share_id);
  if (consumed) r.consumed_capacity[kCapacity] = dt::Q(*consumed);
  return r;
}

// A claim at `version`, allocated with `devices` (none: not allocated).
ClaimPtr MakeClaim(std::string name, std::string version,
                   std::vector<api::DeviceRequestAllocationResult> devices = {}) {
  auto c = dt::ClaimBuilder(std::move(name), kNamespace).UID("uid").Request(dt::RequestBuilder("req-1", "c", 1)).Obj();
  c->metadata.resource_version = std::move(version);
  if (!devices.empty()) {
    c->allocation.emplace();
    c->allocation->devices = std::move(devices);
    c->allocation->node_selector = dt::LocalSelector(kPool);
  }
  return c;
}

ClaimPtr Copy(const std::shared_ptr<const api::ResourceClaim>& c) { return std::make_shared<api::ResourceClaim>(*c); }

DeviceId Id(std::string device) { return {kDriver, kPool, std::move(device)}; }

std::set<DeviceId> Ids(std::vector<std::string> devices) {
  std::set<DeviceId> out;
  for (auto& d : devices) out.insert(Id(std::move(d)));
  return out;
}

TEST(DraCacheTest, ClassesAndSlicesAreStoredAndRemoved) {
  DraCache cache;
  EXPECT_TRUE(cache.Empty());
  auto cls = dt::MakeOpenClass("gpu").Obj();
  cache.Apply(Obj(cls));
  EXPECT_FALSE(cache.Empty());
  EXPECT_EQ(cache.Class("gpu").get(), cls.get());
  EXPECT_EQ(cache.Class("other"), nullptr);
  // An update replaces it.
  auto updated = dt::MakeClass("gpu", kDriver).Obj();
  cache.Apply(Obj(updated));
  EXPECT_EQ(cache.Class("gpu").get(), updated.get());
  cache.Remove(Obj(updated));
  EXPECT_EQ(cache.Class("gpu"), nullptr);
  EXPECT_TRUE(cache.Empty());

  auto slice = dt::SliceBuilder("s1", kDriver, kPool).Node(kPool).Device(dt::MakeDevice("d1")).Obj();
  cache.Apply(Obj(slice));
  EXPECT_FALSE(cache.Empty());
  ASSERT_EQ(cache.Slices()->size(), 1u);
  cache.Remove(Obj(slice));
  EXPECT_TRUE(cache.Slices()->empty());
  EXPECT_TRUE(cache.Empty());

  auto claim = MakeClaim("c", "1");
  cache.Apply(Obj(claim));
  EXPECT_FALSE(cache.Empty());
  cache.Remove(Obj(claim));
  EXPECT_TRUE(cache.Empty());
  // Removing what is not there is harmless.
  cache.Remove(Obj(claim));
  cache.Remove(Obj(slice));
  EXPECT_TRUE(cache.Empty());
}

// One snapshot of the slices, shared by every reader until a slice changes; a reader keeps what
// it holds.
TEST(DraCacheTest, SlicesSnapshotIsSharedUntilASliceChanges) {
  DraCache cache;
  auto s1 = dt::SliceBuilder("s1", kDriver, "p1").Node("n1").Device(dt::MakeDevice("d1")).Obj();
  auto s2 = dt::SliceBuilder("s2", kDriver, "p2").Node("n2").Device(dt::MakeDevice("d2")).Obj();
  cache.Apply(Obj(s1));
  auto first = cache.Slices();
  EXPECT_EQ(cache.Slices(), first);
  // Classes and claims leave the slices' snapshot alone.
  cache.Apply(Obj(dt::MakeOpenClass("gpu").Obj()));
  cache.Apply(Obj(MakeClaim("c", "1")));
  EXPECT_EQ(cache.Slices(), first);

  cache.Apply(Obj(s2));
  auto second = cache.Slices();
  EXPECT_NE(second, first);
  ASSERT_EQ(second->size(), 2u);
  EXPECT_EQ(first->size(), 1u);  // the earlier snapshot is unchanged
  EXPECT_EQ(cache.Slices(), second);

  // An update of a slice replaces it (by name).
  auto s1b = dt::SliceBuilder("s1", kDriver, "p1").Generation(2).Node("n1").Device(dt::MakeDevice("d9")).Obj();
  cache.Apply(Obj(s1b));
  auto third = cache.Slices();
  EXPECT_NE(third, second);
  ASSERT_EQ(third->size(), 2u);
  EXPECT_EQ((*third)[0].get(), s1b.get());
  EXPECT_EQ((*second)[0].get(), s1.get());

  cache.Remove(Obj(s2));
  auto fourth = cache.Slices();
  ASSERT_EQ(fourth->size(), 1u);
  EXPECT_EQ((*fourth)[0].get(), s1b.get());
  EXPECT_EQ(third->size(), 2u);
}

TEST(DraCacheTest, ClaimsAreKeyedByNamespaceAndName) {
  DraCache cache;
  auto a = MakeClaim("c", "1");
  auto b = MakeClaim("c", "2");
  b->metadata.namespace_ = "other";
  cache.Apply(Obj(a));
  cache.Apply(Obj(b));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), a.get());
  EXPECT_EQ(cache.ApiClaim(kNamespace, "c").get(), a.get());
  EXPECT_EQ(cache.Claim("other", "c").get(), b.get());
  EXPECT_EQ(cache.Claim(kNamespace, "d"), nullptr);
  EXPECT_EQ(cache.ApiClaim(kNamespace, "d"), nullptr);
  auto a2 = MakeClaim("c", "3");
  cache.Apply(Obj(a2));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), a2.get());
  cache.Remove(Obj(a2));
  EXPECT_EQ(cache.Claim(kNamespace, "c"), nullptr);
  EXPECT_EQ(cache.Claim("other", "c").get(), b.get());
}

// The allocated devices follow every add, update and delete of a claim, without walking the
// claims; the snapshot readers hold is shared until something allocated changes.
TEST(DraCacheTest, AllocatedDevicesFollowClaimChanges) {
  DraCache cache;
  auto empty = cache.Allocated();
  EXPECT_TRUE(empty->allocated_devices.empty());

  cache.Apply(Obj(MakeClaim("a", "1")));  // not allocated: nothing changes
  EXPECT_EQ(cache.Allocated(), empty);

  cache.Apply(Obj(MakeClaim("a", "2", {Device("d1")})));
  auto one = cache.Allocated();
  EXPECT_NE(one, empty);
  EXPECT_EQ(one->allocated_devices, Ids({"d1"}));
  EXPECT_TRUE(empty->allocated_devices.empty());  // a reader's snapshot does not change

  // A change of reservedFor only: the same devices, the same snapshot.
  auto reserved = MakeClaim("a", "3", {Device("d1")});
  reserved->reserved_for.push_back({"", "pods", "p", "uid-p"});
  cache.Apply(Obj(reserved));
  EXPECT_EQ(cache.Allocated(), one);

  cache.Apply(Obj(MakeClaim("b", "4", {Device("d2"), Device("d3")})));
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d1", "d2", "d3"}));

  // Reallocated to another device.
  cache.Apply(Obj(MakeClaim("b", "5", {Device("d4")})));
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d1", "d4"}));

  // Deallocated, then deleted.
  cache.Apply(Obj(MakeClaim("a", "6")));
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d4"}));
  cache.Remove(Obj(MakeClaim("b", "5")));
  EXPECT_TRUE(cache.Allocated()->allocated_devices.empty());
  EXPECT_EQ(one->allocated_devices, Ids({"d1"}));
}

// Admin access does not take the device (upstream's allocated-devices tracker skips it).
TEST(DraCacheTest, AdminAccessDoesNotTakeTheDevice) {
  DraCache cache;
  auto admin = Device("d1");
  admin.admin_access = true;
  cache.Apply(Obj(MakeClaim("a", "1", {admin, Device("d2")})));
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d2"}));
  cache.Remove(Obj(MakeClaim("a", "1")));
  EXPECT_TRUE(cache.Allocated()->allocated_devices.empty());
}

// Devices that allow multiple allocations: one entry per share, and the consumed capacity summed
// over the shares (upstream's TestGatherAllocatedState, consumable capacity on).
TEST(DraCacheTest, SharedDevicesSumTheirConsumedCapacity) {
  DraCache cache;
  const DeviceId shared = Id("shared-instance");
  cache.Apply(Obj(MakeClaim("exclusive", "1", {Device("instance-1")})));
  cache.Apply(Obj(MakeClaim("a", "2", {Device("shared-instance", "share-123", "1")})));
  {
    auto state = cache.Allocated();
    EXPECT_EQ(state->allocated_devices, Ids({"instance-1"}));
    EXPECT_EQ(state->allocated_shared_devices, (std::set<SharedDeviceId>{{shared, "share-123"}}));
    ASSERT_EQ(state->consumed_capacity.count(shared), 1u);
    EXPECT_EQ(state->consumed_capacity.at(shared).at(kCapacity), dt::Q("1"));
  }
  cache.Apply(Obj(MakeClaim("b", "3", {Device("shared-instance", "share-456", "1")})));
  {
    auto state = cache.Allocated();
    EXPECT_EQ(state->allocated_shared_devices,
              (std::set<SharedDeviceId>{{shared, "share-123"}, {shared, "share-456"}}));
    EXPECT_EQ(state->consumed_capacity.at(shared).at(kCapacity), dt::Q("2"));
  }
  // A share without consumed capacity is a share all the same.
  cache.Apply(Obj(MakeClaim("c", "4", {Device("shared-instance", "share-789")})));
  EXPECT_EQ(cache.Allocated()->allocated_shared_devices.size(), 3u);
  EXPECT_EQ(cache.Allocated()->consumed_capacity.at(shared).at(kCapacity), dt::Q("2"));

  cache.Remove(Obj(MakeClaim("a", "2")));
  {
    auto state = cache.Allocated();
    EXPECT_EQ(state->allocated_shared_devices,
              (std::set<SharedDeviceId>{{shared, "share-456"}, {shared, "share-789"}}));
    EXPECT_EQ(state->consumed_capacity.at(shared).at(kCapacity), dt::Q("1"));
  }
  cache.Apply(Obj(MakeClaim("b", "5")));  // deallocated
  cache.Remove(Obj(MakeClaim("c", "4")));
  {
    auto state = cache.Allocated();
    EXPECT_TRUE(state->allocated_shared_devices.empty());
    EXPECT_TRUE(state->consumed_capacity.empty()) << "nothing consumed is no entry";
    EXPECT_EQ(state->allocated_devices, Ids({"instance-1"}));
  }
}

// AllocatedState::Apply itself: adding and removing the same allocation is no change; consumed
// capacity in other units sums exactly.
TEST(DraCacheTest, AllocatedStateApplyIsReversible) {
  api::AllocationResult a;
  a.devices = {Device("d1"), Device("s", "x", "500m"), Device("s", "y", "1500m")};
  framework::AllocatedState state;
  state.Apply(a, +1);
  EXPECT_EQ(state.allocated_devices, Ids({"d1"}));
  EXPECT_EQ(state.allocated_shared_devices.size(), 2u);
  EXPECT_EQ(state.consumed_capacity.at(Id("s")).at(kCapacity), dt::Q("2"));
  state.Apply(a, +1);  // a second claim with the same shares (not realistic, but counted)
  EXPECT_EQ(state.consumed_capacity.at(Id("s")).at(kCapacity), dt::Q("4"));
  state.Apply(a, -1);
  EXPECT_EQ(state.consumed_capacity.at(Id("s")).at(kCapacity), dt::Q("2"));
  state.Apply(a, -1);
  EXPECT_TRUE(state.allocated_devices.empty());
  EXPECT_TRUE(state.allocated_shared_devices.empty());
  EXPECT_TRUE(state.consumed_capacity.empty());
  // Removing what was never added leaves nothing behind.
  state.Apply(a, -1);
  EXPECT_TRUE(state.consumed_capacity.empty());
}

// The assume cache: Reserve's allocation is what readers see (and what is allocated) until the
// informer catches up or it is restored.
TEST(DraCacheTest, AssumeAndRestoreClaims) {
  DraCache cache;
  auto api_claim = MakeClaim("c", "5");
  cache.Apply(Obj(api_claim));
  auto snapshot = cache.Allocated();

  auto assumed = MakeClaim("c", "5", {Device("d1")});
  ASSERT_TRUE(cache.AssumeClaim(assumed).IsSuccess());
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), assumed.get());
  EXPECT_EQ(cache.ApiClaim(kNamespace, "c").get(), api_claim.get());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d1"}));
  EXPECT_TRUE(snapshot->allocated_devices.empty());

  cache.RestoreClaim(kNamespace, "c");
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), api_claim.get());
  EXPECT_TRUE(cache.Allocated()->allocated_devices.empty());
  // Restoring again, or a claim never assumed or unknown, is harmless.
  cache.RestoreClaim(kNamespace, "c");
  cache.RestoreClaim(kNamespace, "unknown");
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), api_claim.get());

  // Assumed again, then the claim is deleted: nothing is left of either.
  ASSERT_TRUE(cache.AssumeClaim(assumed).IsSuccess());
  cache.Remove(Obj(api_claim));
  EXPECT_EQ(cache.Claim(kNamespace, "c"), nullptr);
  EXPECT_TRUE(cache.Allocated()->allocated_devices.empty());
}

// OlderVersion semantics: an informer version older than the assumed one leaves it; one at
// least as new replaces it, unless it lacks the allocation the assumed version has (a change of
// metadata before PreBind wrote): then the assumed allocation stands until the write arrives.
TEST(DraCacheTest, AssumedVersionsStandUntilTheInformerCatchesUp) {
  DraCache cache;
  cache.Apply(Obj(MakeClaim("c", "5")));
  auto assumed = MakeClaim("c", "5", {Device("d1")});
  ASSERT_TRUE(cache.AssumeClaim(assumed).IsSuccess());

  // An older version (a late event): the informer's version changes, the assumed one stands.
  auto older = MakeClaim("c", "4");
  cache.Apply(Obj(older));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), assumed.get());
  EXPECT_EQ(cache.ApiClaim(kNamespace, "c").get(), older.get());

  // The same version again, and a newer one without the allocation (a label changed).
  cache.Apply(Obj(MakeClaim("c", "5")));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), assumed.get());
  auto labelled = MakeClaim("c", "6");
  labelled->metadata.labels.Set("a", "b");
  cache.Apply(Obj(labelled));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), assumed.get());
  EXPECT_EQ(cache.ApiClaim(kNamespace, "c").get(), labelled.get());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d1"})) << "the devices stay taken";

  // PreBind's write arrives: the informer's version is the claim.
  auto written = MakeClaim("c", "7", {Device("d1")});
  written->reserved_for.push_back({"", "pods", "p", "uid-p"});
  cache.Apply(Obj(written));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), written.get());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d1"}));

  // Someone else's allocation replaces the assumed one as well (PreBind then reports it).
  ASSERT_TRUE(cache.AssumeClaim(MakeClaim("c", "7", {Device("d2")})).IsSuccess());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d2"}));
  auto elsewhere = MakeClaim("c", "8", {Device("d3")});
  cache.Apply(Obj(elsewhere));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), elsewhere.get());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d3"}));

  // An assumed version without an allocation goes at the first version at least as new.
  auto reservation = Copy(cache.Claim(kNamespace, "c"));
  reservation->allocation.reset();
  ASSERT_TRUE(cache.AssumeClaim(reservation).IsSuccess());
  EXPECT_TRUE(cache.Allocated()->allocated_devices.empty());
  auto same = MakeClaim("c", "8", {Device("d3")});
  cache.Apply(Obj(same));
  EXPECT_EQ(cache.Claim(kNamespace, "c").get(), same.get());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d3"}));
}

TEST(DraCacheTest, AssumeClaimErrors) {
  DraCache cache;
  // Unknown claim.
  auto unknown = MakeClaim("c", "1", {Device("d1")});
  auto status = cache.AssumeClaim(unknown);
  EXPECT_TRUE(status.IsError());
  EXPECT_EQ(status.Message(), "ResourceClaim \"default/c\" not found");

  // Made from a version older than the cache's.
  cache.Apply(Obj(MakeClaim("c", "5")));
  status = cache.AssumeClaim(MakeClaim("c", "4", {Device("d1")}));
  EXPECT_TRUE(status.IsError());
  EXPECT_EQ(status.Message(), "ResourceClaim \"default/c\": out of sync (cached version 5, assumed from 4)");
  EXPECT_TRUE(cache.Allocated()->allocated_devices.empty());

  // Compared with the latest version, an assumed one included.
  ASSERT_TRUE(cache.AssumeClaim(MakeClaim("c", "6", {Device("d1")})).IsSuccess());
  EXPECT_TRUE(cache.AssumeClaim(MakeClaim("c", "5", {Device("d2")})).IsError());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d1"}));
  // The same version or a newer one may be assumed over it.
  ASSERT_TRUE(cache.AssumeClaim(MakeClaim("c", "6", {Device("d2")})).IsSuccess());
  EXPECT_EQ(cache.Allocated()->allocated_devices, Ids({"d2"}));
}

// The lister without DRA objects (handles of tests of other plugins).
TEST(DraCacheTest, EmptyDraLister) {
  framework::EmptyDraLister empty;
  EXPECT_TRUE(empty.Empty());
  EXPECT_EQ(empty.Claim(kNamespace, "c"), nullptr);
  EXPECT_EQ(empty.Class("c"), nullptr);
  EXPECT_TRUE(empty.Slices()->empty());
  EXPECT_TRUE(empty.Allocated()->allocated_devices.empty());
  EXPECT_TRUE(empty.AssumeClaim(MakeClaim("c", "1")).IsError());
  EXPECT_EQ(empty.ApiClaim(kNamespace, "c"), nullptr);
}

}  // namespace
}  // namespace kubesched::cache
