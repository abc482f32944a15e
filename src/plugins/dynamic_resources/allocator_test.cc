// Tests of the structured allocator, ported from upstream's shared allocator test table
// (k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go):
// the case names are upstream's.

#include "plugins/dynamic_resources/allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "plugins/dynamic_resources/dra_test_util.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

using namespace testing;  // NOLINT: the DRA builders

constexpr char kDriverA[] = "driver-a";
constexpr char kDriverB[] = "driver-b";
constexpr char kClassA[] = "class-a";
constexpr char kClassB[] = "class-b";
constexpr char kNode1[] = "node-1";
constexpr char kNode2[] = "node-2";
constexpr char kRegion1[] = "region-1";
constexpr char kRegion2[] = "region-2";
constexpr char kPool1[] = "pool-1";
constexpr char kPool2[] = "pool-2";
constexpr char kDevice1[] = "device-1";
constexpr char kDevice2[] = "device-2";
constexpr char kReq0[] = "req-0";
constexpr char kReq1[] = "req-1";

// One case: what the allocator is given.
struct Case {
  std::vector<std::shared_ptr<api::ResourceClaim>> claims;
  std::vector<std::shared_ptr<api::DeviceClass>> classes;
  std::vector<std::shared_ptr<api::ResourceSlice>> slices;
  api::Node node = MakeTestNode(kNode1, kRegion1);
  framework::AllocatedState allocated;
};

AllocateOutcome RunCase(const Case& c) {
  std::vector<const api::ResourceSlice*> slices;
  for (const auto& s : c.slices) slices.push_back(s.get());
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& cl : c.claims) claims.push_back(cl.get());
  auto classes = c.classes;
  cel::Cache cache;
  Allocator allocator(
      c.allocated, slices,
      [classes](std::string_view name) -> const api::DeviceClass* {
        for (const auto& cls : classes) {
          if (cls->metadata.name == name) return cls.get();
        }
        return nullptr;
      },
      cache);
  return allocator.Allocate(c.node, claims);
}

std::string NameOf(const api::QualifiedName& n) { return n.domain.empty() ? n.id : n.domain + "/" + n.id; }

void ExpectDevice(const api::DeviceRequestAllocationResult& got, const ExpectedDevice& want) {
  SCOPED_TRACE(want.request + " " + want.driver + "/" + want.pool + "/" + want.device);
  EXPECT_EQ(got.request, want.request);
  EXPECT_EQ(got.driver, want.driver);
  EXPECT_EQ(got.pool, want.pool);
  EXPECT_EQ(got.device, want.device);
  EXPECT_EQ(got.admin_access, want.admin_access);
  EXPECT_EQ(got.share_id.has_value(), want.shared);
  if (got.share_id) EXPECT_EQ(got.share_id->size(), 36u) << *got.share_id;
  std::map<std::string, std::string> consumed;
  for (const auto& [name, q] : got.consumed_capacity) consumed[NameOf(name)] = q.text();
  ASSERT_EQ(consumed.size(), want.consumed.size());
  for (const auto& [name, q] : want.consumed) {
    ASSERT_TRUE(got.consumed_capacity.contains(QName(name))) << name;
    EXPECT_EQ(got.consumed_capacity.at(QName(name)), Q(q)) << name << ": " << consumed[name];
  }
  EXPECT_EQ(got.binding_conditions, want.binding_conditions);
  EXPECT_EQ(got.binding_failure_conditions, want.binding_failure_conditions);
}

void ExpectAllocation(const api::AllocationResult& got, const ExpectedAllocation& want) {
  EXPECT_EQ(got.node_selector, want.node_selector);
  ASSERT_EQ(got.devices.size(), want.devices.size());
  auto key = [](const auto& d) { return std::tie(d.request, d.driver, d.pool, d.device); };
  auto devices = got.devices;
  std::sort(devices.begin(), devices.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  auto expected = want.devices;
  std::sort(expected.begin(), expected.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  for (size_t i = 0; i < devices.size(); ++i) ExpectDevice(devices[i], expected[i]);
  ASSERT_EQ(got.config.size(), want.config.size());
  for (size_t i = 0; i < got.config.size(); ++i) {
    EXPECT_EQ(got.config[i].source, want.config[i].source);
    EXPECT_EQ(got.config[i].requests, want.config[i].requests);
    EXPECT_EQ(got.config[i].opaque.driver, want.config[i].driver);
    EXPECT_EQ(got.config[i].opaque.parameters_json, want.config[i].parameters);
  }
}

void ExpectAllocated(const AllocateOutcome& out, const std::vector<ExpectedAllocation>& want) {
  ASSERT_FALSE(out.error.has_value()) << *out.error;
  ASSERT_FALSE(out.unsatisfiable) << out.reason;
  ASSERT_EQ(out.allocations.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("claim #" + std::to_string(i));
    ExpectAllocation(out.allocations[i], want[i]);
  }
}

void ExpectUnsatisfiable(const AllocateOutcome& out) {
  EXPECT_FALSE(out.error.has_value()) << *out.error;
  EXPECT_TRUE(out.unsatisfiable);
  EXPECT_TRUE(out.allocations.empty());
}

void ExpectError(const AllocateOutcome& out, const std::string& substring) {
  ASSERT_TRUE(out.error.has_value()) << "unsatisfiable=" << out.unsatisfiable;
  EXPECT_NE(out.error->find(substring), std::string::npos) << *out.error;
  EXPECT_TRUE(out.allocations.empty());
}

// upstream's allocationResult(localNodeSelector(node), devices...).
ExpectedAllocation OnNode(const std::string& node, std::vector<ExpectedDevice> devices) {
  return ExpectedAllocation{LocalSelector(node), std::move(devices), {}};
}

// upstream's deviceAllocationResult(request, driver, pool, device, adminAccess).
ExpectedDevice Dev(std::string request, std::string driver, std::string pool, std::string device, bool admin = false) {
  ExpectedDevice d;
  d.request = std::move(request);
  d.driver = std::move(driver);
  d.pool = std::move(pool);
  d.device = std::move(device);
  d.admin_access = admin;
  return d;
}

// upstream's claimWithRequest(name, request, class): one request of one device.
std::shared_ptr<api::ResourceClaim> SimpleClaim(std::string name, std::string request, std::string cls) {
  return ClaimBuilder(std::move(name)).Request(RequestBuilder(std::move(request), std::move(cls), 1)).Obj();
}

// upstream's sliceWithOneDevice(name, node, pool, driver).
std::shared_ptr<api::ResourceSlice> OneDevice(std::string name, std::string node, std::string pool,
                                              std::string driver) {
  return SliceBuilder(std::move(name), std::move(driver), std::move(pool))
      .Node(std::move(node))
      .Device(MakeDevice(kDevice1))
      .Obj();
}

std::string MemSelector(const std::string& size) {
  return std::string("device.capacity[\"") + kDriverA + "\"].memory.compareTo(quantity(\"" + size + "\")) >= 0";
}

// ---------------------------------------------------------------------------------------------
// Basics

TEST(AllocatorTest, empty) {
  Case c;
  ExpectAllocated(RunCase(c), {});
}

TEST(AllocatorTest, simple) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)})});
}

TEST(AllocatorTest, other_node) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverB), OneDevice("slice-2", kNode2, kPool2, kDriverA)};
  c.node = MakeTestNode(kNode2, kRegion2);
  ExpectAllocated(RunCase(c), {OnNode(kNode2, {Dev(kReq0, kDriverA, kPool2, kDevice1)})});
}

Case SmallAndLarge(bool reversed, bool two_claims) {
  Case c;
  auto small = RequestBuilder(kReq0, kClassA, 1).Selector(MemSelector("1Gi"));
  auto large = RequestBuilder(kReq1, kClassA, 1).Selector(MemSelector("2Gi"));
  if (two_claims) {
    c.claims = {ClaimBuilder("claim-0").Request(small).Obj(), ClaimBuilder("claim-1").Request(large).Obj()};
  } else {
    c.claims = {ClaimBuilder("claim-0").Request(small).Request(large).Obj()};
  }
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  auto d1 = MakeDevice(kDevice1).Cap("memory", "1Gi");
  auto d2 = MakeDevice(kDevice2).Cap("memory", "2Gi");
  SliceBuilder s("slice-1", kDriverA, kPool1);
  s.Node(kNode1);
  if (reversed) {
    s.Device(d2).Device(d1);
  } else {
    s.Device(d1).Device(d2);
  }
  c.slices = {s.Obj()};
  return c;
}

TEST(AllocatorTest, small_and_large) {
  ExpectAllocated(RunCase(SmallAndLarge(false, false)),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq1, kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, small_and_large_backtrack_requests) {
  ExpectAllocated(RunCase(SmallAndLarge(true, false)),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq1, kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, small_and_large_backtrack_claims) {
  ExpectAllocated(RunCase(SmallAndLarge(true, true)), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)}),
                                                       OnNode(kNode1, {Dev(kReq1, kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, devices_split_across_different_slices) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 2)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA), OneDevice("slice-2", kNode1, kPool2, kDriverA)};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool2, kDevice1)})});
}

TEST(AllocatorTest, no_slices) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, not_enough_suitable_devices) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA), SimpleClaim("claim-0", kReq1, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, no_classes) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectError(RunCase(c), "could not retrieve device class class-a");
}

TEST(AllocatorTest, unknown_class) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, "unknown-class")};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectError(RunCase(c), "could not retrieve device class unknown-class");
}

TEST(AllocatorTest, empty_class) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, "")};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectError(RunCase(c), "claim claim-0, request req-0: missing device class name (unsupported request type?)");
}

TEST(AllocatorTest, no_claims_to_allocate) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {});
}

// ---------------------------------------------------------------------------------------------
// Pools and allocation mode All

std::shared_ptr<api::ResourceSlice> TwoDevices(std::string name, std::string node, std::string pool,
                                               std::string driver) {
  return SliceBuilder(std::move(name), std::move(driver), std::move(pool))
      .Node(std::move(node))
      .Device(MakeDevice(kDevice1))
      .Device(MakeDevice(kDevice2))
      .Obj();
}

RequestBuilder AllOf(std::string request, std::string cls) {
  return std::move(RequestBuilder(std::move(request), std::move(cls), 1).All());
}

TEST(AllocatorTest, obsolete_slice) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {
      SliceBuilder("slice-1-obsolete", kDriverA, kPool1).Node(kNode1).Count(2).Device(MakeDevice(kDevice1)).Obj(),
      SliceBuilder("slice-1-obsolete", kDriverA, kPool1)
          .Node(kNode1)
          .Count(2)
          .Generation(2)
          .Device(MakeDevice(kDevice2))
          .Obj()};
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, duplicate_slice) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  auto a = OneDevice("slice-1", kNode1, kPool1, kDriverA);
  a->pool.resource_slice_count = 2;
  auto b = std::make_shared<api::ResourceSlice>(*a);
  b->metadata.name += "-2";
  c.slices = {a, b};
  const auto out = RunCase(c);
  // Upstream fails the node with an error; here the node is unsatisfiable with that reason.
  EXPECT_TRUE(out.unsatisfiable);
  EXPECT_NE(out.reason.find("invalid resource pools were encountered"), std::string::npos) << out.reason;
}

TEST(AllocatorTest, all_devices_single) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)})});
}

TEST(AllocatorTest, all_devices_many) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA), OneDevice("slice-1", kNode1, kPool2, kDriverA)};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool2, kDevice1)})});
}

TEST(AllocatorTest, all_devices_of_the_incomplete_pool) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  auto s = OneDevice("slice-1", kNode1, kPool1, kDriverA);
  s->pool.resource_slice_count = 2;
  c.slices = {s};
  ExpectError(RunCase(c),
              "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently "
              "being updated");
}

Case AllPlusAnother(bool reversed, bool many) {
  Case c;
  auto all = ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj();
  auto one = SimpleClaim("claim-1", kReq0, kClassB);
  c.claims = reversed ? std::vector{one, all} : std::vector{all, one};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {many ? TwoDevices("slice-1", kNode1, kPool1, kDriverA) : OneDevice("slice-1", kNode1, kPool1, kDriverA),
              OneDevice("slice-1", kNode1, kPool1, kDriverB)};
  return c;
}

TEST(AllocatorTest, all_devices_plus_another) {
  ExpectAllocated(RunCase(AllPlusAnother(false, false)), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)}),
                                                          OnNode(kNode1, {Dev(kReq0, kDriverB, kPool1, kDevice1)})});
}

TEST(AllocatorTest, all_devices_plus_another_reversed) {
  ExpectAllocated(RunCase(AllPlusAnother(true, false)), {OnNode(kNode1, {Dev(kReq0, kDriverB, kPool1, kDevice1)}),
                                                         OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)})});
}

TEST(AllocatorTest, all_devices_many_plus_another) {
  ExpectAllocated(RunCase(AllPlusAnother(false, true)),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool1, kDevice2)}),
                   OnNode(kNode1, {Dev(kReq0, kDriverB, kPool1, kDevice1)})});
}

TEST(AllocatorTest, all_devices_many_plus_another_reversed) {
  ExpectAllocated(RunCase(AllPlusAnother(true, true)),
                  {OnNode(kNode1, {Dev(kReq0, kDriverB, kPool1, kDevice1)}),
                   OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, all_devices_no_solution) {
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed ? "reversed" : "");
    Case c;
    auto all = ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj();
    auto one = SimpleClaim("claim-1", kReq0, kClassA);
    c.claims = reversed ? std::vector{all, one} : std::vector{one, all};
    c.classes = {MakeClass(kClassA, kDriverA).Obj()};
    c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
    ExpectUnsatisfiable(RunCase(c));
  }
}

TEST(AllocatorTest, all_devices_slice_without_devices) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1).Node(kNode1).Obj()};
  ExpectUnsatisfiable(RunCase(c));
  c.slices.clear();  // all-devices-no-slices
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, all_devices_some_allocated) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, kDevice1)});
  ExpectUnsatisfiable(RunCase(c));
}

// ---------------------------------------------------------------------------------------------
// Admin access

TEST(AllocatorTest, all_devices_some_allocated_admin_access) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(AllOf(kReq0, kClassA).AdminAccess()).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, kDevice1)});
  ExpectAllocated(
      RunCase(c),
      {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1, true), Dev(kReq0, kDriverA, kPool1, kDevice2, true)})});
}

TEST(AllocatorTest, all_devices_some_allocating_admin_access) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1).AdminAccess())
                  .Request(AllOf(kReq1, kClassA).AdminAccess())
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, count_devices_some_allocated_admin_access) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 2).AdminAccess()).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, kDevice1)});
  ExpectAllocated(
      RunCase(c),
      {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1, true), Dev(kReq0, kDriverA, kPool1, kDevice2, true)})});
}

TEST(AllocatorTest, separate_claims_share_device_admin_access) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1).AdminAccess()).Obj(),
              ClaimBuilder("claim-1").Request(RequestBuilder(kReq0, kClassA, 1).AdminAccess()).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1, true)}),
                               OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1, true)})});
}

TEST(AllocatorTest, admin_access_claims_device_allocating_for_non_admin_access) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA),
              ClaimBuilder("claim-1").Request(RequestBuilder(kReq0, kClassA, 1).AdminAccess()).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)}),
                               OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1, true)})});
}

TEST(AllocatorTest, admin_access_enabled) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1).AdminAccess()).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, kDevice1), DevId(kDriverA, kPool1, kDevice2)});
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1, true)})});
}

TEST(AllocatorTest, already_allocated_devices) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, kDevice1), DevId(kDriverA, kPool1, kDevice2)});
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, several_different_drivers) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA), SimpleClaim("claim-0", kReq0, kClassB)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA), OneDevice("slice-1", kNode1, kPool1, kDriverB)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)}),
                               OnNode(kNode1, {Dev(kReq0, kDriverB, kPool1, kDevice1)})});
}

// ---------------------------------------------------------------------------------------------
// Node selection of slices and the result's node selector

std::shared_ptr<api::ResourceSlice> SelectorSlice(std::string pool, api::NodeSelector selector) {
  return SliceBuilder("slice-1", kDriverA, std::move(pool))
      .Selector(std::move(selector))
      .Device(MakeDevice(kDevice1))
      .Obj();
}

TEST(AllocatorTest, network_attached_device) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SelectorSlice(kPool1, LabelSelector("region", {kRegion1}))};
  ExpectAllocated(RunCase(c), {ExpectedAllocation{
                                  LabelSelector("region", {kRegion1}), {Dev(kReq0, kDriverA, kPool1, kDevice1)}, {}}});
}

TEST(AllocatorTest, unsuccessful_allocation_network_attached_device) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SelectorSlice(kPool1, LabelSelector("region", {kRegion1}))};
  c.node = MakeTestNode(kNode2, kRegion2);
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, many_network_attached_devices) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 4)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SelectorSlice(kPool1, LabelSelector("region", {kRegion1})),
              SliceBuilder("slice-1", kDriverA, kPool2).AllNodes().Device(MakeDevice(kDevice1)).Obj(),
              SelectorSlice("pool-3", LabelSelector("planet", {"earth"})),
              SelectorSlice("pool-4", LocalSelector(kNode1))};
  // A union of the individual selectors.
  api::NodeSelector want = LabelSelector("region", {kRegion1});
  want.terms[0].match_expressions.push_back(LabelSelector("planet", {"earth"}).terms[0].match_expressions[0]);
  want.terms[0].match_fields = LocalSelector(kNode1).terms[0].match_fields;
  ExpectAllocated(RunCase(c), {ExpectedAllocation{
                                  want,
                                  {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool2, kDevice1),
                                   Dev(kReq0, kDriverA, "pool-3", kDevice1), Dev(kReq0, kDriverA, "pool-4", kDevice1)},
                                  {}}});
}

TEST(AllocatorTest, local_and_network_attached_devices) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 2)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SelectorSlice(kPool1, LabelSelector("region", {kRegion1})),
              OneDevice("slice-1", kNode1, kPool2, kDriverA)};
  // Once there is any node-local device, the selector is for that node.
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool2, kDevice1)})});
}

// ---------------------------------------------------------------------------------------------
// matchAttribute constraints

constexpr char kIntAttr[] = "driver-a/numa";
constexpr char kVersionAttr[] = "driver-a/driverVersion";
constexpr char kStringAttr[] = "driver-a/stringAttribute";
constexpr char kBoolAttr[] = "driver-a/boolAttribute";

DeviceBuilder FullDevice(std::string name) {
  return std::move(MakeDevice(std::move(name))
                       .Version("driverVersion", "1.0.0")
                       .Attr("numa", int64_t{1})
                       .Attr("stringAttribute", std::string("stringAttributeValue"))
                       .Attr("boolAttribute", true));
}

TEST(AllocatorTest, with_constraint) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1))
                  .Request(RequestBuilder(kReq1, kClassA, 1))
                  .Constraint(MatchAttribute(kIntAttr))
                  .Constraint(MatchAttribute(kVersionAttr))
                  .Constraint(MatchAttribute(kStringAttr))
                  .Constraint(MatchAttribute(kBoolAttr))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(FullDevice(kDevice1))
                  .Device(FullDevice(kDevice2))
                  .Obj()};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq1, kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, with_constraint_non_existent_attribute) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1))
                  .Constraint(MatchAttribute("driver-a/NonExistentAttribute"))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectUnsatisfiable(RunCase(c));
}

// Two devices that differ in `name`; a claim of two devices (or all) that must match in it.
Case NotMatching(const std::string& name, api::DeviceAttributeValue v1, api::DeviceAttributeValue v2,
                 bool all = false) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(all ? AllOf(kReq0, kClassA) : RequestBuilder(kReq0, kClassA, 2))
                  .Constraint(MatchAttribute(std::string(kDriverA) + "/" + name))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).Attr(name, std::move(v1)))
                  .Device(MakeDevice(kDevice2).Attr(name, std::move(v2)))
                  .Obj()};
  return c;
}

TEST(AllocatorTest, with_constraint_not_matching_int_attribute) {
  ExpectUnsatisfiable(RunCase(NotMatching("numa", int64_t{1}, int64_t{2})));
}

TEST(AllocatorTest, with_constraint_not_matching_int_attribute_all_devices) {
  ExpectError(RunCase(NotMatching("numa", int64_t{1}, int64_t{2}, true)),
              "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
              "would not be satisfied");
}

TEST(AllocatorTest, with_constraint_not_matching_string_attribute) {
  ExpectUnsatisfiable(RunCase(
      NotMatching("stringAttribute", std::string("stringAttributeValue"), std::string("stringAttributeValue2"))));
}

TEST(AllocatorTest, with_constraint_not_matching_bool_attribute) {
  ExpectUnsatisfiable(RunCase(NotMatching("boolAttribute", true, false)));
}

TEST(AllocatorTest, with_constraint_not_matching_version_attribute) {
  ExpectUnsatisfiable(
      RunCase(NotMatching("driverVersion", *api::SemVer::Parse("1.0.0"), *api::SemVer::Parse("2.0.0"))));
}

TEST(AllocatorTest, with_constraint_for_request) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1))
                  .Request(RequestBuilder(kReq1, kClassA, 1))
                  .Constraint(MatchAttribute(kVersionAttr, {kReq0}))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).Version("driverVersion", "1.0.0"))
                  .Device(MakeDevice(kDevice2).Version("driverVersion", "2.0.0"))
                  .Obj()};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq1, kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, with_constraint_for_request_retry) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1))
                  .Request(RequestBuilder(kReq1, kClassA, 1))
                  .Constraint(MatchAttribute(kVersionAttr, {kReq0}))
                  .Constraint(MatchAttribute(kStringAttr))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  auto dev = [](std::string name, std::string_view version, std::string s) {
    return MakeDevice(std::move(name)).Version("driverVersion", version).Attr("stringAttribute", std::move(s));
  };
  // device-1 does not satisfy the second constraint: the allocator must backtrack.
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(dev(kDevice1, "1.0.0", "a"))
                  .Device(dev(kDevice2, "2.0.0", "b"))
                  .Device(dev("device-3", "3.0.0", "b"))
                  .Obj()};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice2), Dev(kReq1, kDriverA, kPool1, "device-3")})});
}

// distinctAttribute (upstream: "distinct-attribute" cases): each device a different value.
TEST(AllocatorTest, distinct_attribute) {
  Case c = NotMatching("numa", int64_t{1}, int64_t{1});
  c.claims = {
      ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 2)).Constraint(DistinctAttribute(kIntAttr)).Obj()};
  ExpectUnsatisfiable(RunCase(c));
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).Attr("numa", int64_t{1}))
                  .Device(MakeDevice(kDevice2).Attr("numa", int64_t{1}))
                  .Device(MakeDevice("device-3").Attr("numa", int64_t{2}))
                  .Obj()};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool1, "device-3")})});
}

// ---------------------------------------------------------------------------------------------
// Configuration: class config first, then claim config

ExpectedConfig Cfg(std::string source, std::vector<std::string> requests, std::string driver, const std::string& attr) {
  return {std::move(source), std::move(requests), std::move(driver), "{\"" + attr + "\":\"" + attr + "Value\"}"};
}

TEST(AllocatorTest, with_class_device_config) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Config(kDriverA, "classAttribute").Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {ExpectedAllocation{LocalSelector(kNode1),
                                                  {Dev(kReq0, kDriverA, kPool1, kDevice1)},
                                                  {Cfg("FromClass", {kReq0}, kDriverA, "classAttribute")}}});
}

TEST(AllocatorTest, with_class_device_config_with_multiple_request_and_configs) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1))
                  .Request(RequestBuilder(kReq1, kClassA, 1))
                  .Request(RequestBuilder("req-2", kClassB, 1))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Config(kDriverA, "classAttribute-A").Obj(),
               MakeClass(kClassB, kDriverB).Config(kDriverB, "classAttribute-B").Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice("device-0"))
                  .Device(MakeDevice(kDevice1))
                  .Obj(),
              OneDevice("slice-2", kNode1, kPool1, kDriverB)};
  ExpectAllocated(RunCase(c),
                  {ExpectedAllocation{LocalSelector(kNode1),
                                      {Dev(kReq0, kDriverA, kPool1, "device-0"), Dev(kReq1, kDriverA, kPool1, kDevice1),
                                       Dev("req-2", kDriverB, kPool1, kDevice1)},
                                      {Cfg("FromClass", {kReq0, kReq1}, kDriverA, "classAttribute-A"),
                                       Cfg("FromClass", {"req-2"}, kDriverB, "classAttribute-B")}}});
}

TEST(AllocatorTest, claim_with_device_config) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1)).Config({}, kDriverA, "deviceAttribute").Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {ExpectedAllocation{LocalSelector(kNode1),
                                                  {Dev(kReq0, kDriverA, kPool1, kDevice1)},
                                                  {Cfg("FromClaim", {}, kDriverA, "deviceAttribute")}}});
}

// Not an upstream case: class config, then claim config (upstream's order).
TEST(AllocatorTest, class_config_then_claim_config) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1)).Config({kReq0}, kDriverA, "claimAttr").Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Config(kDriverA, "classAttr").Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {ExpectedAllocation{LocalSelector(kNode1),
                                                  {Dev(kReq0, kDriverA, kPool1, kDevice1)},
                                                  {Cfg("FromClass", {kReq0}, kDriverA, "classAttr"),
                                                   Cfg("FromClaim", {kReq0}, kDriverA, "claimAttr")}}});
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(AllocatorTest, unknown_selector) {
  Case c;
  auto claim = SimpleClaim("claim-0", kReq0, kClassA);
  claim->spec.requests[0].exactly->selectors.push_back(api::DeviceSelector{""});
  c.claims = {claim};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectError(RunCase(c), "CEL expression empty (unsupported selector type?)");
}

TEST(AllocatorTest, unknown_constraint) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1)).Constraint(api::DeviceConstraint{}).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectError(RunCase(c), "empty constraint (unsupported constraint type?)");
}

TEST(AllocatorTest, invalid_CEL_one_device) {
  for (bool all : {false, true}) {  // and invalid-CEL-all-devices
    SCOPED_TRACE(all ? "all" : "one");
    Case c;
    auto r = RequestBuilder(kReq0, kClassA, 1).Selector("noSuchVar");
    if (all) r.All();
    c.claims = {ClaimBuilder("claim-0").Request(r).Obj()};
    c.classes = {MakeClass(kClassA, kDriverA).Obj()};
    c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
    const auto out = RunCase(c);
    ExpectError(out, "undeclared reference");
    ExpectError(out, "claim claim-0: selector #0: CEL compile error: ");
  }
}

TEST(AllocatorTest, invalid_CEL_one_device_class) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeOpenClass(kClassA).Selector("noSuchVar").Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  const auto out = RunCase(c);
  ExpectError(out, "undeclared reference");
  ExpectError(out, "class class-a: selector #0: CEL compile error: ");
}

// upstream's dynamicresources_test "claim-parameters-CEL-runtime-error" / "class-parameters-...".
TEST(AllocatorTest, CEL_runtime_error) {
  Case c;
  const std::string missing = std::string("device.attributes[\"") + kDriverA + "\"].healthy";
  c.claims = {ClaimBuilder("my-claim", "default").Request(RequestBuilder(kReq0, kClassA, 1).Selector(missing)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectError(RunCase(c), "claim default/my-claim: selector #0: CEL runtime error: no such key: healthy");
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Selector(missing).Obj()};
  ExpectError(RunCase(c), "class class-a: selector #1: CEL runtime error: no such key: healthy");
}

TEST(AllocatorTest, too_many_devices_single_request) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 500)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  ExpectError(RunCase(c), "exceeds the claim limit");
}

TEST(AllocatorTest, too_many_devices_total) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, api::kAllocationResultsMaxSize))
                  .Request(RequestBuilder(kReq1, kClassA, 1))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  SliceBuilder s("slice-1", kDriverA, kPool1);
  s.Node(kNode1);
  for (int i = 0; i <= api::kAllocationResultsMaxSize; ++i) s.Device(MakeDevice("device-" + std::to_string(i)));
  c.slices = {s.Obj()};
  ExpectError(RunCase(c), "exceeds the claim limit");
}

TEST(AllocatorTest, many_devices_okay) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, api::kAllocationResultsMaxSize)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  const auto out = RunCase(c);
  EXPECT_FALSE(out.error.has_value()) << *out.error;
  EXPECT_TRUE(out.unsatisfiable);
}

// ---------------------------------------------------------------------------------------------
// Consumable capacity (devices that allow multiple allocations)

ExpectedDevice SharedDev(std::string request, std::string pool, std::string device,
                         std::map<std::string, std::string> consumed) {
  ExpectedDevice d = Dev(std::move(request), kDriverA, std::move(pool), std::move(device));
  d.shared = true;
  d.consumed = std::move(consumed);
  return d;
}

// A claim of one device of class-a asking `value` of capacity `name` (a short name: the
// decoder keeps it with an empty domain).
std::shared_ptr<api::ResourceClaim> CapacityClaim(std::string name, std::string_view capacity, std::string_view value) {
  return ClaimBuilder(std::move(name)).Request(RequestBuilder(kReq0, kClassA, 1).Capacity(capacity, value)).Obj();
}

// The product's case: two GPUs with 500 of 1000 gpuMilli already consumed each.
TEST(AllocatorTest, shared_gpus_partly_consumed) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice("gpu-0").MultiAlloc().Cap("gpuMilli", "1000"))
                  .Device(MakeDevice("gpu-1").MultiAlloc().Cap("gpuMilli", "1000"))
                  .Obj()};
  c.allocated = MakeAllocated({}, {{DevId(kDriverA, kPool1, "gpu-0"), {{"gpuMilli", "500"}}},
                                   {DevId(kDriverA, kPool1, "gpu-1"), {{"gpuMilli", "500"}}}});
  c.claims = {CapacityClaim("claim-0", "gpuMilli", "600")};
  ExpectUnsatisfiable(RunCase(c));
  c.claims = {CapacityClaim("claim-0", "gpuMilli", "500")};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, "gpu-0", {{"driver-a/gpuMilli", "500"}})})});
  // Fully qualified, the name works as well.
  c.claims = {
      ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1).Capacity("driver-a/gpuMilli", "500")).Obj()};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, "gpu-0", {{"driver-a/gpuMilli", "500"}})})});
  // Another driver's capacity of that id is not this one.
  c.claims = {
      ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1).Capacity("driver-b/gpuMilli", "1")).Obj()};
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, shared_device_two_claims) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).MultiAlloc().Cap("memory", "8Gi"))
                  .Obj()};
  c.claims = {CapacityClaim("claim-0", "memory", "4Gi"), CapacityClaim("claim-1", "memory", "4Gi")};
  const auto out = RunCase(c);
  ExpectAllocated(out, {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "4Gi"}})}),
                        OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "4Gi"}})})});
  if (out.allocations.size() == 2) {
    EXPECT_NE(out.allocations[0].devices[0].share_id, out.allocations[1].devices[0].share_id);
  }
  c.claims.push_back(CapacityClaim("claim-2", "memory", "1"));
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, shared_device_without_request_consumes_all) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).MultiAlloc().Cap("memory", "8Gi"))
                  .Obj()};
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "8Gi"}})})});
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA), SimpleClaim("claim-1", kReq0, kClassA)};
  ExpectUnsatisfiable(RunCase(c));
}

// upstream's withCapacityRequestPolicyRange: default 2, min 2, step 2, max 4.
TEST(AllocatorTest, request_policy_valid_range) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).MultiAlloc().CapRange("memory", "8"))
                  .Obj()};
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};  // the default
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "2"}})})});
  c.claims = {CapacityClaim("claim-0", "memory", "3")};  // rounded up to a step
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "4"}})})});
  c.claims = {CapacityClaim("claim-0", "memory", "1")};  // raised to min
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "2"}})})});
  c.claims = {CapacityClaim("claim-0", "memory", "5")};  // above max
  ExpectUnsatisfiable(RunCase(c));
  c.allocated = MakeAllocated({}, {{DevId(kDriverA, kPool1, kDevice1), {{"memory", "6"}}}});
  c.claims = {CapacityClaim("claim-0", "memory", "3")};  // 4 more do not fit in 8
  ExpectUnsatisfiable(RunCase(c));
  c.claims = {CapacityClaim("claim-0", "memory", "2")};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "2"}})})});
}

// upstream's withCapacityRequestPolicyValidValues.
TEST(AllocatorTest, request_policy_valid_values) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).MultiAlloc().CapValues("memory", "10", "1", {"5"}))
                  .Obj()};
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "1"}})})});
  c.claims = {CapacityClaim("claim-0", "memory", "3")};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {SharedDev(kReq0, kPool1, kDevice1, {{"driver-a/memory", "5"}})})});
  c.claims = {CapacityClaim("claim-0", "memory", "6")};
  ExpectUnsatisfiable(RunCase(c));
}

// ---------------------------------------------------------------------------------------------
// firstAvailable subrequests

constexpr char kSub0[] = "subReq-0";
constexpr char kSub1[] = "subReq-1";

TEST(AllocatorTest, prioritized_list_first_unavailable) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0")
          .Request(FirstAvailable(kReq0, {SubRequestBuilder(kSub0, kClassB, 1), SubRequestBuilder(kSub1, kClassA, 1)}))
          .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA)};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev("req-0/subReq-1", kDriverA, kPool1, kDevice1)})});
  // The first one fits when there is a driver-b device.
  c.slices.push_back(OneDevice("slice-2", kNode1, kPool2, kDriverB));
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev("req-0/subReq-0", kDriverB, kPool2, kDevice1)})});
}

TEST(AllocatorTest, prioritized_list_non_available) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0")
          .Request(FirstAvailable(kReq0, {SubRequestBuilder(kSub0, kClassB, 2), SubRequestBuilder(kSub1, kClassA, 2)}))
          .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {OneDevice("slice-1", kNode1, kPool1, kDriverA), OneDevice("slice-2", kNode1, kPool2, kDriverB)};
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, prioritized_list_device_config) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0")
          .Request(FirstAvailable(kReq0, {SubRequestBuilder(kSub0, kClassA, 1), SubRequestBuilder(kSub1, kClassB, 2)}))
          .Config({"req-0/subReq-0"}, kDriverA, "foo")
          .Config({"req-0/subReq-1"}, kDriverB, "bar")
          .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj(), MakeClass(kClassB, kDriverB).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverB)};
  ExpectAllocated(RunCase(c), {ExpectedAllocation{LocalSelector(kNode1),
                                                  {Dev("req-0/subReq-1", kDriverB, kPool1, kDevice1),
                                                   Dev("req-0/subReq-1", kDriverB, kPool1, kDevice2)},
                                                  {Cfg("FromClaim", {"req-0/subReq-1"}, kDriverB, "bar")}}});
}

TEST(AllocatorTest, prioritized_list_class_config) {
  Case c;
  c.claims = {
      ClaimBuilder("claim-0")
          .Request(FirstAvailable(kReq0, {SubRequestBuilder(kSub0, kClassA, 2), SubRequestBuilder(kSub1, kClassB, 2)}))
          .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Config(kDriverA, "foo").Obj(),
               MakeClass(kClassB, kDriverB).Config(kDriverB, "bar").Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverB),
              SliceBuilder("slice-2", kDriverA, kPool2).Node(kNode1).Device(MakeDevice("device-3")).Obj()};
  ExpectAllocated(RunCase(c), {ExpectedAllocation{LocalSelector(kNode1),
                                                  {Dev("req-0/subReq-1", kDriverB, kPool1, kDevice1),
                                                   Dev("req-0/subReq-1", kDriverB, kPool1, kDevice2)},
                                                  {Cfg("FromClass", {"req-0/subReq-1"}, kDriverB, "bar")}}});
}

TEST(AllocatorTest, prioritized_list_subrequests_with_expressions) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(RequestBuilder(kReq0, kClassA, 1).Selector(MemSelector("1Gi")))
                  .Request(FirstAvailable(
                      kReq1, {std::move(SubRequestBuilder(kSub0, kClassA, 1).Selector(MemSelector("4Gi"))),
                              std::move(SubRequestBuilder(kSub1, kClassA, 2).Selector(MemSelector("2Gi")))}))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).Cap("memory", "2Gi"))
                  .Device(MakeDevice(kDevice2).Cap("memory", "2Gi"))
                  .Device(MakeDevice("device-3").Cap("memory", "1Gi"))
                  .Obj()};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, "device-3"),
                                               Dev("req-1/subReq-1", kDriverA, kPool1, kDevice1),
                                               Dev("req-1/subReq-1", kDriverA, kPool1, kDevice2)})});
}

TEST(AllocatorTest, prioritized_list_subrequests_with_allocation_mode_all) {
  Case c;
  c.claims = {ClaimBuilder("claim-0")
                  .Request(FirstAvailable(kReq0, {std::move(SubRequestBuilder(kSub0, kClassA, 1).All()),
                                                  SubRequestBuilder(kSub1, kClassA, 1)}))
                  .Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {TwoDevices("slice-1", kNode1, kPool1, kDriverA)};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, kDevice1)});
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev("req-0/subReq-1", kDriverA, kPool1, kDevice2)})});
}

// ---------------------------------------------------------------------------------------------
// Partitionable devices (shared counters)

// A GPU of 8Gi as one whole device and two halves, all drawing on one counter set.
SliceBuilder PartitionedSlice() {
  SliceBuilder s("slice-1", kDriverA, kPool1);
  s.Node(kNode1)
      .CounterSet("gpu-0-counters", {{"memory", "8Gi"}})
      .Device(MakeDevice("gpu-0").Consumes("gpu-0-counters", {{"memory", "8Gi"}}))
      .Device(MakeDevice("gpu-0-half-0").Consumes("gpu-0-counters", {{"memory", "4Gi"}}))
      .Device(MakeDevice("gpu-0-half-1").Consumes("gpu-0-counters", {{"memory", "4Gi"}}));
  return s;
}

TEST(AllocatorTest, partitionable_devices_backtrack_on_counters) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 2)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {PartitionedSlice().Obj()};
  ExpectAllocated(
      RunCase(c),
      {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, "gpu-0-half-0"), Dev(kReq0, kDriverA, kPool1, "gpu-0-half-1")})});
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 3)).Obj()};  // counters exhausted
  ExpectUnsatisfiable(RunCase(c));
}

TEST(AllocatorTest, partitionable_devices_allocated_device_consumes_counters) {
  Case c;
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {PartitionedSlice().Obj()};
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, "gpu-0")});
  ExpectUnsatisfiable(RunCase(c));
  c.allocated = MakeAllocated({DevId(kDriverA, kPool1, "gpu-0-half-0")});
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, "gpu-0-half-1")})});
}

// ---------------------------------------------------------------------------------------------
// Taints and tolerations

api::DeviceToleration Tolerate(api::DeviceTolerationOperator op, std::string value, api::DeviceTaintEffect effect) {
  api::DeviceToleration t;
  t.key = "taint-key";
  t.op = op;
  t.value = std::move(value);
  t.effect = effect;
  return t;
}

TEST(AllocatorTest, tainted_devices) {
  Case c;
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .Node(kNode1)
                  .Device(MakeDevice(kDevice1).Taint("taint-key", "taint-value", api::DeviceTaintEffect::kNoSchedule))
                  .Device(MakeDevice(kDevice2).Taint("taint-key", "taint-value-2", api::DeviceTaintEffect::kNoExecute))
                  .Obj()};
  c.claims = {SimpleClaim("claim-0", kReq0, kClassA)};
  ExpectUnsatisfiable(RunCase(c));  // upstream's "tainted-two-devices"
  // "tolerations-no-schedule": NoSchedule tolerated (Exists).
  auto no_schedule = Tolerate(api::DeviceTolerationOperator::kExists, "", api::DeviceTaintEffect::kNoSchedule);
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1)).Toleration(no_schedule).Obj()};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1)})});
  // "tolerations-no-execute": NoExecute tolerated (Equal with the value).
  auto no_execute =
      Tolerate(api::DeviceTolerationOperator::kEqual, "taint-value-2", api::DeviceTaintEffect::kNoExecute);
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1)).Toleration(no_execute).Obj()};
  ExpectAllocated(RunCase(c), {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice2)})});
  // A toleration of another key does not help.
  auto other = no_schedule;
  other.key = "key1";
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 1)).Toleration(other).Obj()};
  ExpectUnsatisfiable(RunCase(c));
}

// ---------------------------------------------------------------------------------------------
// Per-device node selection

TEST(AllocatorTest, per_device_node_selection) {
  Case c;
  c.claims = {ClaimBuilder("claim-0").Request(RequestBuilder(kReq0, kClassA, 2)).Obj()};
  c.classes = {MakeClass(kClassA, kDriverA).Obj()};
  c.slices = {SliceBuilder("slice-1", kDriverA, kPool1)
                  .PerDevice()
                  .Device(MakeDevice(kDevice1).NodeName(kNode1))
                  .Device(MakeDevice(kDevice2).NodeSelector(LabelSelector("region", {kRegion1})))
                  .Device(MakeDevice("device-3").NodeName(kNode2))
                  .Obj()};
  ExpectAllocated(RunCase(c),
                  {OnNode(kNode1, {Dev(kReq0, kDriverA, kPool1, kDevice1), Dev(kReq0, kDriverA, kPool1, kDevice2)})});
  c.node = MakeTestNode(kNode2, kRegion2);  // only device-3 is there
  ExpectUnsatisfiable(RunCase(c));
}

// ---------------------------------------------------------------------------------------------
// Timing (printed, not asserted)

std::shared_ptr<api::ResourceSlice> GpuNodeSlice(const std::string& node) {
  SliceBuilder s("slice-" + node, kDriverA, "pool-" + node);
  s.Node(node);
  for (int i = 0; i < 8; ++i) s.Device(MakeDevice("gpu-" + std::to_string(i)).MultiAlloc().Cap("gpuMilli", "1000"));
  return s.Obj();
}

double NsPerAllocate(const std::vector<std::shared_ptr<api::ResourceSlice>>& owned, const api::Node& node) {
  std::vector<const api::ResourceSlice*> slices;
  for (const auto& s : owned) slices.push_back(s.get());
  auto cls = MakeClass(kClassA, kDriverA).Obj();
  auto claim = CapacityClaim("claim-0", "gpuMilli", "600");
  const api::ResourceClaim* claims[] = {claim.get()};
  framework::AllocatedState allocated;
  cel::Cache cache;
  Allocator allocator(
      allocated, slices, [&](std::string_view) { return cls.get(); }, cache);
  EXPECT_EQ(allocator.Allocate(node, claims).allocations.size(), 1u);
  constexpr int kRounds = 20000;
  const auto start = std::chrono::steady_clock::now();
  size_t sink = 0;
  for (int i = 0; i < kRounds; ++i) sink += allocator.Allocate(node, claims).allocations.size();
  const auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(sink, static_cast<size_t>(kRounds));
  return ns / kRounds;
}

TEST(AllocatorTest, timing_shared_gpus) {
  const api::Node node = MakeTestNode("node-0", kRegion1);
  const double one = NsPerAllocate({GpuNodeSlice("node-0")}, node);
  std::vector<std::shared_ptr<api::ResourceSlice>> many;
  for (int n = 0; n < 1500; ++n) many.push_back(GpuNodeSlice("node-" + std::to_string(n)));
  const double all = NsPerAllocate(many, node);
  std::printf("Allocate, 8 shared GPUs, claim of 600 gpuMilli: %.0f ns/call (1 slice), %.0f ns/call (1500 slices)\n",
              one, all);
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources
