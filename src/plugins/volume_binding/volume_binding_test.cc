// The VolumeBinding plugin through its extension points, replaying upstream's
// volume_binding_test.go (TestVolumeBinding and the queueing hint tests), plus Reserve, PreBind
// and Unreserve end to end against a storage cache and a simulated PV controller.

#include "plugins/volume_binding/volume_binding.h"

#include <gtest/gtest.h>

#include "plugins/volume_binding/volume_binding_test_util.h"
#include "testing/args.h"
#include "testing/printers.h"

namespace kubesched::plugins::volume_binding {
namespace {

using test_env::VolumeTestHandle;
using Claim = std::shared_ptr<api::PersistentVolumeClaim>;
using Volume = std::shared_ptr<api::PersistentVolume>;
using framework::Code;
using framework::Status;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";

// upstream's volume_binding_test classes: none has a provisioner.
std::vector<std::shared_ptr<api::StorageClass>> TestClasses() {
  return {testing::MakeStorageClass().Name("immediate-sc").Immediate().Obj(),
          testing::MakeStorageClass().Name("wait-sc").WaitForFirstConsumer().Obj(),
          testing::MakeStorageClass().Name("wait-hdd-sc").WaitForFirstConsumer().Obj()};
}

// upstream's test_utils makePVC / makePV (namespace default, no access modes).
Claim MakePVC(std::string name, std::string class_name, std::string request = "0") {
  return testing::MakePVC()
      .Name(std::move(name))
      .Class(std::move(class_name))
      .Request(std::move(request))
      .AccessModes({})
      .Obj();
}
Claim BoundPVC(std::string name, std::string class_name, std::string pv) {
  auto c = MakePVC(std::move(name), std::move(class_name));
  c->volume_name = std::move(pv);
  c->metadata.annotations.Set(std::string(api::kAnnotationBindCompleted), "yes");
  return c;
}
Volume MakePV(std::string name, std::string class_name, std::string capacity = "0",
              std::vector<std::pair<std::string, std::string>> affinity = {}) {
  auto b = testing::MakePV().Name(std::move(name)).Class(std::move(class_name)).Capacity(std::move(capacity));
  b.AccessModes({});
  auto pv = b.Obj();
  if (!affinity.empty()) {
    api::NodeSelectorTerm term;
    for (auto& [k, v] : affinity) term.match_expressions.push_back({k, api::SelectorOperator::kIn, {v}});
    pv->node_affinity = api::NodeSelector{{std::move(term)}};
  }
  return pv;
}
std::shared_ptr<api::Node> MakeNode(std::string name, std::vector<std::pair<std::string, std::string>> labels = {}) {
  auto b = testing::MakeNode().Name(std::move(name));
  for (auto& [k, v] : labels) b.Label(k, v);
  return b.Obj();
}
std::shared_ptr<api::Node> ZoneNode(std::string name, std::string zone, std::string region) {
  return MakeNode(std::move(name), {{kRegion, std::move(region)}, {kZone, std::move(zone)}});
}
std::shared_ptr<api::Pod> PodWithClaims(std::vector<std::string> claims) {
  auto b = testing::MakePod().Name("pod-a");
  for (auto& c : claims) b.PVC(std::move(c));
  return b.Obj();
}

const Features kScoringOff{};
const Features kScoringOn{.storage_capacity_scoring = true};

Status Unresolvable(std::vector<std::string> reasons) {
  return Status(Code::kUnschedulableAndUnresolvable, std::move(reasons));
}

struct Case {
  std::string name{};
  std::shared_ptr<api::Pod> pod{};
  std::vector<std::shared_ptr<api::Node>> nodes{};
  std::vector<Claim> pvcs{};
  std::vector<Volume> pvs{};
  Features features{};
  std::string args = "null";
  // Extra storage objects (provisioning with capacity).
  std::vector<std::shared_ptr<api::StorageClass>> classes{};
  std::vector<std::shared_ptr<api::CSIDriver>> drivers{};
  std::vector<std::shared_ptr<api::CSIStorageCapacity>> capacities{};
  Status want_pre_filter{};
  std::vector<Status> want_filter{};
  Status want_pre_score{};
  std::vector<int64_t> want_scores{};
};

void RunCase(const Case& c) {
  VolumeTestHandle handle(c.nodes);
  handle.Add(TestClasses());
  handle.Add(c.classes);
  handle.Add(c.drivers);
  handle.Add(c.capacities);
  handle.Add(c.pvcs);
  handle.Add(c.pvs);
  auto plugin = NewWithFeatures(testing::ArgsJson(c.args).View(), handle, c.features);
  ASSERT_TRUE(plugin.has_value()) << plugin.error();
  auto* p = dynamic_cast<VolumeBinding*>(plugin->get());
  ASSERT_NE(p, nullptr);
  auto pod = framework::PodInfo::Create(c.pod);
  auto nodes = handle.SnapshotSharedLister().List();
  framework::CycleState state;

  auto [result, pre_filter] = p->PreFilter(state, *pod, nodes);
  EXPECT_TRUE(result.AllNodes());
  EXPECT_EQ(pre_filter, c.want_pre_filter);
  // The framework runs no Filter after a failed or skipping PreFilter.
  if (!pre_filter.IsSuccess()) return;

  ASSERT_EQ(nodes.size(), c.want_filter.size());
  std::vector<const framework::NodeInfo*> feasible;
  for (size_t i = 0; i < nodes.size(); ++i) {
    SCOPED_TRACE(nodes[i]->name());
    Status st = p->Filter(state, *pod, *nodes[i]);
    EXPECT_EQ(st, c.want_filter[i]);
  }

  Status pre_score = p->PreScore(state, *pod, nodes);
  EXPECT_EQ(pre_score, c.want_pre_score);
  if (!pre_score.IsSuccess()) return;
  ASSERT_EQ(nodes.size(), c.want_scores.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    SCOPED_TRACE(nodes[i]->name());
    auto [score, st] = p->Score(state, *pod, *nodes[i]);
    EXPECT_TRUE(st.IsSuccess());
    EXPECT_EQ(score, c.want_scores[i]);
  }
}

// upstream's TestVolumeBinding. Upstream's StorageCapacityScoring cases ran with the shape
// {0: 0, 100: 10} (the most used capacity preferred); the "close capacity" ones do here too.
TEST(VolumeBindingTest, PreFilterFilterScore) {
  const Status ok;
  const Status skip = Status::Skip();
  const std::string most_used = R"({"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]})";
  const Status bind_conflict = Unresolvable({std::string(kErrReasonBindConflict)});

  auto local_pvs = [](std::vector<std::tuple<std::string, std::string, std::string, std::string>> specs) {
    std::vector<Volume> out;
    for (auto& [name, cls, cap, host] : specs) out.push_back(MakePV(name, cls, cap, {{kHostname, host}}));
    return out;
  };
  auto zonal_pvs = [] {
    std::vector<Volume> out;
    for (auto [name, cap, zone, region] : std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
             {"pv-a-0", "200Gi", "zone-a", "region-a"},
             {"pv-a-1", "200Gi", "zone-a", "region-a"},
             {"pv-b-0", "100Gi", "zone-b", "region-b"},
             {"pv-b-1", "100Gi", "zone-b", "region-b"}}) {
      out.push_back(MakePV(name, "wait-sc", cap, {{kRegion, region}, {kZone, zone}}));
    }
    return out;
  };
  auto zonal_nodes = [] {
    return std::vector<std::shared_ptr<api::Node>>{
        ZoneNode("zone-a-node-a", "zone-a", "region-a"), ZoneNode("zone-a-node-b", "zone-a", "region-a"),
        ZoneNode("zone-b-node-a", "zone-b", "region-b"), ZoneNode("zone-b-node-b", "zone-b", "region-b"),
        ZoneNode("zone-c-node-a", "zone-c", "region-c"), ZoneNode("zone-c-node-b", "zone-c", "region-c")};
  };

  const std::vector<Case> cases = {
      {.name = "pod has not pvcs",
       .pod = testing::MakePod().Name("pod-a").Obj(),
       .nodes = {MakeNode("node-a")},
       .want_pre_filter = skip},
      {.name = "all bound",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {BoundPVC("pvc-a", "wait-sc", "pv-a")},
       .pvs = {MakePV("pv-a", "wait-sc")},
       .want_filter = {ok},
       .want_pre_score = skip},
      {.name = "all bound with local volumes",
       .pod = PodWithClaims({"pvc-a", "pvc-b"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {BoundPVC("pvc-a", "wait-sc", "pv-a"), BoundPVC("pvc-b", "wait-sc", "pv-b")},
       .pvs = {MakePV("pv-a", "wait-sc", "0", {{kHostname, "node-a"}}),
               MakePV("pv-b", "wait-sc", "0", {{kHostname, "node-a"}})},
       .want_filter = {ok},
       .want_pre_score = skip},
      {.name = "PVC does not exist",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .want_pre_filter = Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"pvc-a\" not found")},
      {.name = "Part of PVCs do not exist",
       .pod = PodWithClaims({"pvc-a", "pvc-b"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {BoundPVC("pvc-a", "wait-sc", "pv-a")},
       .want_pre_filter = Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"pvc-b\" not found")},
      {.name = "immediate claims not bound",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {MakePVC("pvc-a", "immediate-sc")},
       .want_pre_filter = Status::UnschedulableAndUnresolvable("pod has unbound immediate PersistentVolumeClaims")},
      {.name = "unbound claims no matches",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {MakePVC("pvc-a", "wait-sc")},
       .want_filter = {bind_conflict},
       .want_pre_score = skip},
      {.name = "bound and unbound unsatisfied",
       .pod = PodWithClaims({"pvc-a", "pvc-b"}),
       .nodes = {MakeNode("node-a", {{"foo", "barbar"}})},
       .pvcs = {BoundPVC("pvc-a", "wait-sc", "pv-a"), MakePVC("pvc-b", "wait-sc")},
       .pvs = {MakePV("pv-a", "wait-sc", "0", {{"foo", "bar"}})},
       .want_filter = {Unresolvable({std::string(kErrReasonNodeConflict), std::string(kErrReasonBindConflict)})},
       .want_pre_score = skip},
      {.name = "pvc not found",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .want_pre_filter = Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"pvc-a\" not found")},
      {.name = "pv not found",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {BoundPVC("pvc-a", "wait-sc", "pv-a")},
       .want_filter = {Unresolvable({std::string(kErrReasonPVNotExist)})},
       .want_pre_score = skip},
      {.name = "pv not found claim lost",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {[] {
         auto c = BoundPVC("pvc-a", "wait-sc", "pv-a");
         c->phase = api::PersistentVolumeClaimPhase::kLost;
         return c;
       }()},
       .want_pre_filter = Status::UnschedulableAndUnresolvable(
           "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\"")},
      {.name = "local volumes with close capacity are preferred",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a"), MakeNode("node-b"), MakeNode("node-c")},
       .pvcs = {MakePVC("pvc-a", "wait-sc", "50Gi")},
       .pvs = local_pvs({{"pv-a-0", "wait-sc", "200Gi", "node-a"},
                         {"pv-a-1", "wait-sc", "200Gi", "node-a"},
                         {"pv-b-0", "wait-sc", "100Gi", "node-b"},
                         {"pv-b-1", "wait-sc", "100Gi", "node-b"}}),
       .features = kScoringOn,
       .args = most_used,
       .want_filter = {ok, ok, bind_conflict},
       .want_scores = {25, 50, 0}},
      {.name = "local volumes with close capacity are preferred (multiple pvcs)",
       .pod = PodWithClaims({"pvc-0", "pvc-1"}),
       .nodes = {MakeNode("node-a"), MakeNode("node-b"), MakeNode("node-c")},
       .pvcs = {MakePVC("pvc-0", "wait-sc", "50Gi"), MakePVC("pvc-1", "wait-hdd-sc", "100Gi")},
       .pvs = local_pvs({{"pv-a-0", "wait-sc", "200Gi", "node-a"},
                         {"pv-a-1", "wait-sc", "200Gi", "node-a"},
                         {"pv-a-2", "wait-hdd-sc", "200Gi", "node-a"},
                         {"pv-a-3", "wait-hdd-sc", "200Gi", "node-a"},
                         {"pv-b-0", "wait-sc", "100Gi", "node-b"},
                         {"pv-b-1", "wait-sc", "100Gi", "node-b"},
                         {"pv-b-2", "wait-hdd-sc", "100Gi", "node-b"},
                         {"pv-b-3", "wait-hdd-sc", "100Gi", "node-b"}}),
       .features = kScoringOn,
       .args = most_used,
       .want_filter = {ok, ok, bind_conflict},
       .want_scores = {38, 75, 0}},
      {.name = "zonal volumes with close capacity are preferred",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = zonal_nodes(),
       .pvcs = {MakePVC("pvc-a", "wait-sc", "50Gi")},
       .pvs = zonal_pvs(),
       .features = kScoringOn,
       .args = most_used,
       .want_filter = {ok, ok, ok, ok, bind_conflict, bind_conflict},
       .want_scores = {25, 25, 50, 50, 0, 0}},
      {.name = "zonal volumes with close capacity are preferred (custom shape)",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = zonal_nodes(),
       .pvcs = {MakePVC("pvc-a", "wait-sc", "50Gi")},
       .pvs = zonal_pvs(),
       .features = kScoringOn,
       .args = R"({"bindTimeoutSeconds": 300, "shape": [{"utilization": 0, "score": 0},
                   {"utilization": 50, "score": 3}, {"utilization": 100, "score": 5}]})",
       .want_filter = {ok, ok, ok, ok, bind_conflict, bind_conflict},
       .want_scores = {15, 15, 30, 30, 0, 0}},
      // StorageCapacityScoring's dynamic provisioning: the node's CSIStorageCapacity for the class
      // against the claims' requests, with the default shape (the most free capacity preferred).
      {.name = "dynamic provisioning scored by the node's storage capacity",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a"), MakeNode("node-b"), MakeNode("node-c")},
       .pvcs = {MakePVC("pvc-a", "csi-sc", "50Gi")},
       .features = kScoringOn,
       .classes =
           {testing::MakeStorageClass().Name("csi-sc").WaitForFirstConsumer().Provisioner("csi.example.com").Obj()},
       .drivers = {testing::MakeCSIDriver("csi.example.com", true)},
       .capacities = {testing::MakeCapacity("cap-a", "csi-sc", kHostname, "node-a", "100Gi"),
                      testing::MakeCapacity("cap-b", "csi-sc", kHostname, "node-b", "200Gi")},
       .want_filter = {ok, ok, Unresolvable({std::string(kErrReasonNotEnoughSpace)})},
       .want_scores = {50, 75, 0}},
      {.name = "dynamic provisioning: claims of one class share the node's capacity",
       .pod = PodWithClaims({"pvc-a", "pvc-b"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {MakePVC("pvc-a", "csi-sc", "50Gi"), MakePVC("pvc-b", "csi-sc", "50Gi")},
       .features = kScoringOn,
       .classes =
           {testing::MakeStorageClass().Name("csi-sc").WaitForFirstConsumer().Provisioner("csi.example.com").Obj()},
       .drivers = {testing::MakeCSIDriver("csi.example.com", true)},
       .capacities = {testing::MakeCapacity("cap-a", "csi-sc", kHostname, "node-a", "400Gi")},
       .want_filter = {ok},
       .want_scores = {75}},
      {.name = "static bindings win over provisioning in the score",
       .pod = PodWithClaims({"pvc-a", "pvc-b"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {MakePVC("pvc-a", "wait-sc", "50Gi"), MakePVC("pvc-b", "csi-sc", "50Gi")},
       .pvs = local_pvs({{"pv-a-0", "wait-sc", "100Gi", "node-a"}}),
       .features = kScoringOn,
       .classes =
           {testing::MakeStorageClass().Name("csi-sc").WaitForFirstConsumer().Provisioner("csi.example.com").Obj()},
       .drivers = {testing::MakeCSIDriver("csi.example.com", true)},
       .capacities = {testing::MakeCapacity("cap-a", "csi-sc", kHostname, "node-a", "400Gi")},
       .want_filter = {ok},
       .want_scores = {50}},
      {.name = "scoring off: no score even with static bindings",
       .pod = PodWithClaims({"pvc-a"}),
       .nodes = {MakeNode("node-a")},
       .pvcs = {MakePVC("pvc-a", "wait-sc", "50Gi")},
       .pvs = local_pvs({{"pv-a-0", "wait-sc", "200Gi", "node-a"}}),
       .want_filter = {ok},
       .want_pre_score = skip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RunCase(c);
  }
}

// podHasPVCs' rejections of the claims themselves.
TEST(VolumeBindingTest, PreFilterClaimChecks) {
  auto pod = testing::MakePod().Name("pod-a").EphemeralVolume("eph").Obj();
  auto owned = [&](Claim c) {
    c->metadata.owner_references.push_back({"v1", "Pod", "pod-a", pod->metadata.uid, true});
    return c;
  };
  auto deleting = BoundPVC("pvc-a", "wait-sc", "pv-a");
  deleting->metadata.deletion_timestamp_ns = 5;
  struct PCase {
    std::string name{};
    std::shared_ptr<api::Pod> pod{};
    std::vector<Claim> pvcs{};
    Status want{};
  };
  const std::vector<PCase> cases = {
      {"ephemeral claim not created yet",
       pod,
       {},
       Status::UnschedulableAndUnresolvable(
           "waiting for ephemeral volume controller to create the persistentvolumeclaim \"pod-a-eph\"")},
      {"ephemeral claim of another pod",
       pod,
       {BoundPVC("pod-a-eph", "wait-sc", "pv-a")},
       Status::UnschedulableAndUnresolvable(
           "PVC default/pod-a-eph was not created for pod default/pod-a (pod is not owner)")},
      {"ephemeral claim owned by the pod", pod, {owned(MakePVC("pod-a-eph", "wait-sc"))}, Status()},
      {"claim being deleted",
       PodWithClaims({"pvc-a"}),
       {deleting},
       Status::UnschedulableAndUnresolvable("persistentvolumeclaim \"pvc-a\" is being deleted")},
      {"claim without class is immediate",
       PodWithClaims({"pvc-a"}),
       {MakePVC("pvc-a", "")},
       Status::UnschedulableAndUnresolvable("pod has unbound immediate PersistentVolumeClaims")},
      {"claim of a missing class is immediate",
       PodWithClaims({"pvc-a"}),
       {MakePVC("pvc-a", "no-such-sc")},
       Status::UnschedulableAndUnresolvable("pod has unbound immediate PersistentVolumeClaims")},
      {"pre-bound claim of a delayed class is the controller's",
       PodWithClaims({"pvc-a"}),
       {[] {
         auto c = MakePVC("pvc-a", "wait-sc");
         c->volume_name = "pv-a";
         return c;
       }()},
       Status::UnschedulableAndUnresolvable("pod has unbound immediate PersistentVolumeClaims")},
      {"claim bound in phase only (a manifest's)",
       PodWithClaims({"pvc-a"}),
       {testing::MakePVC().Name("pvc-a").Class("immediate-sc").Bound("pv-a").Obj()},
       Status()},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    VolumeTestHandle handle({MakeNode("node-a")});
    handle.Add(TestClasses());
    handle.Add(c.pvcs);
    auto plugin = New(testing::ArgsJson("null").View(), handle);
    ASSERT_TRUE(plugin.has_value());
    auto* p = dynamic_cast<VolumeBinding*>(plugin->get());
    framework::CycleState state;
    EXPECT_EQ(p->PreFilter(state, *framework::PodInfo::Create(c.pod), {}).second, c.want);
  }
}

// Reserve assumes the node's choice for the next pods' cycles, PreBind writes it and waits for
// the (simulated) PV controller, Unreserve reverts.
TEST(VolumeBindingTest, ReservePreBindUnreserve) {
  auto node_a = MakeNode("node-a");
  auto node_b = MakeNode("node-b");
  VolumeTestHandle handle({node_a, node_b});
  handle.Add(TestClasses());
  handle.Add(testing::MakeStorageClass().Name("csi-sc").WaitForFirstConsumer().Provisioner("csi.example.com").Obj());
  handle.Add(std::vector<Claim>{MakePVC("pvc-a", "wait-sc", "1Gi"), MakePVC("pvc-b", "csi-sc", "1Gi")});
  handle.Add(std::vector<Volume>{MakePV("pv-a", "wait-sc", "5Gi", {{kHostname, "node-a"}})});
  // The controller binds what PreBind writes, within the write (as in simulate).
  auto& client = handle.volume_client();
  client.on_volume_bound = [](test_env::StorageBackend& storage, const api::PersistentVolume& pv) {
    auto claim =
        std::make_shared<api::PersistentVolumeClaim>(*storage.ApiClaim(pv.claim_ref->namespace_, pv.claim_ref->name));
    claim->volume_name = pv.metadata.name;
    claim->phase = api::PersistentVolumeClaimPhase::kBound;
    claim->metadata.resource_version = test_env::NextVersion(claim->metadata.resource_version);
    storage.Apply(std::shared_ptr<const api::PersistentVolumeClaim>(claim));
  };
  client.on_node_selected = [](test_env::StorageBackend& storage, const api::PersistentVolumeClaim& selected) {
    auto pv = MakePV("pvc-b-volume", "csi-sc", "1Gi", {{kHostname, "node-a"}});
    pv->claim_ref = api::ObjectReference{selected.metadata.namespace_, selected.metadata.name, selected.metadata.uid};
    storage.Apply(std::shared_ptr<const api::PersistentVolume>(pv));
    auto claim = std::make_shared<api::PersistentVolumeClaim>(selected);
    claim->volume_name = pv->metadata.name;
    claim->metadata.annotations.Set(std::string(api::kAnnotationBindCompleted), "yes");
    claim->metadata.resource_version = test_env::NextVersion(claim->metadata.resource_version);
    storage.Apply(std::shared_ptr<const api::PersistentVolumeClaim>(claim));
  };
  auto plugin = New(testing::ArgsJson("null").View(), handle);
  ASSERT_TRUE(plugin.has_value());
  auto* p = dynamic_cast<VolumeBinding*>(plugin->get());
  auto pod = framework::PodInfo::Create(PodWithClaims({"pvc-a", "pvc-b"}));
  auto nodes = handle.SnapshotSharedLister().List();

  framework::CycleState state;
  ASSERT_TRUE(p->PreFilter(state, *pod, nodes).second.IsSuccess());
  EXPECT_TRUE(p->Filter(state, *pod, *nodes[0]).IsSuccess());
  EXPECT_EQ(p->Filter(state, *pod, *nodes[1]), Unresolvable({std::string(kErrReasonBindConflict)}));

  // Reserve then Unreserve: the assumed volume and claim are back to the informer's.
  ASSERT_TRUE(p->Reserve(state, *pod, "node-a").IsSuccess());
  test_env::StorageBackend& storage = handle.storage();
  ASSERT_TRUE(storage.Volume("pv-a")->claim_ref.has_value());
  EXPECT_EQ(storage.Volume("pv-a")->claim_ref->name, "pvc-a");
  EXPECT_EQ(*storage.Claim("default", "pvc-b")->metadata.annotations.Find(api::kAnnotationSelectedNode), "node-a");
  // Another pod's claim sees the volume taken.
  handle.Add(MakePVC("pvc-other", "wait-sc", "1Gi"));
  {
    framework::CycleState other_state;
    auto other = framework::PodInfo::Create(PodWithClaims({"pvc-other"}));
    ASSERT_TRUE(p->PreFilter(other_state, *other, nodes).second.IsSuccess());
    EXPECT_EQ(p->Filter(other_state, *other, *nodes[0]), Unresolvable({std::string(kErrReasonBindConflict)}));
  }
  p->Unreserve(state, *pod, "node-a");
  EXPECT_FALSE(storage.Volume("pv-a")->claim_ref.has_value());
  EXPECT_FALSE(storage.Claim("default", "pvc-b")->metadata.annotations.Has(api::kAnnotationSelectedNode));
  p->Unreserve(state, *pod, "node-a");  // idempotent

  // Reserve again, then PreBind: both writes made, both claims bound by the controller.
  ASSERT_TRUE(p->Reserve(state, *pod, "node-a").IsSuccess());
  Status st = p->PreBind(state, *pod, "node-a");
  EXPECT_TRUE(st.IsSuccess()) << st.Message();
  EXPECT_EQ(client.writes(), (std::vector<std::string>{"bind pv-a default/pvc-a", "select default/pvc-b node-a"}));
  EXPECT_EQ(storage.ApiClaim("default", "pvc-a")->volume_name, "pv-a");
  EXPECT_EQ(storage.ApiClaim("default", "pvc-b")->volume_name, "pvc-b-volume");

  // The next cycle of a pod with these claims: all bound, nothing to write.
  framework::CycleState again;
  ASSERT_TRUE(p->PreFilter(again, *pod, nodes).second.IsSuccess());
  EXPECT_TRUE(p->Filter(again, *pod, *nodes[0]).IsSuccess());
  ASSERT_TRUE(p->Reserve(again, *pod, "node-a").IsSuccess());
  EXPECT_TRUE(p->PreBind(again, *pod, "node-a").IsSuccess());
  EXPECT_EQ(client.writes().size(), 2u);
}

TEST(VolumeBindingTest, PreBindFailsWhenNothingBindsInSimulation) {
  VolumeTestHandle handle({MakeNode("node-a")});
  handle.Add(TestClasses());
  handle.Add(MakePVC("pvc-a", "wait-sc", "1Gi"));
  handle.Add(MakePV("pv-a", "wait-sc", "5Gi"));
  auto plugin = New(testing::ArgsJson(R"({"bindTimeoutSeconds": 30})").View(), handle);
  ASSERT_TRUE(plugin.has_value());
  auto* p = dynamic_cast<VolumeBinding*>(plugin->get());
  auto pod = framework::PodInfo::Create(PodWithClaims({"pvc-a"}));
  auto nodes = handle.SnapshotSharedLister().List();
  framework::CycleState state;
  ASSERT_TRUE(p->PreFilter(state, *pod, nodes).second.IsSuccess());
  ASSERT_TRUE(p->Filter(state, *pod, *nodes[0]).IsSuccess());
  ASSERT_TRUE(p->Reserve(state, *pod, "node-a").IsSuccess());
  // No PV controller: the claim stays unbound, and on a virtual clock it never will be.
  EXPECT_EQ(p->PreBind(state, *pod, "node-a"), Status::Error("binding volumes: context deadline exceeded"));
}

TEST(VolumeBindingTest, MissingStateIsAnError) {
  VolumeTestHandle handle({MakeNode("node-a")});
  auto plugin = New(testing::ArgsJson("null").View(), handle);
  ASSERT_TRUE(plugin.has_value());
  auto* p = dynamic_cast<VolumeBinding*>(plugin->get());
  auto pod = framework::PodInfo::Create(PodWithClaims({"pvc-a"}));
  framework::CycleState state;
  const Status want = Status::Error("reading \"VolumeBinding\" from cycleState: not found");
  EXPECT_EQ(p->Filter(state, *pod, *handle.SnapshotSharedLister().List()[0]), want);
  EXPECT_EQ(p->Reserve(state, *pod, "node-a"), want);
  EXPECT_EQ(p->PreBind(state, *pod, "node-a"), want);
  p->Unreserve(state, *pod, "node-a");

  // A pod without claims: PreFilter skips, Reserve and PreBind have nothing to do.
  auto plain = framework::PodInfo::Create(testing::MakePod().Obj());
  EXPECT_TRUE(p->PreFilter(state, *plain, {}).second.IsSkip());
  EXPECT_TRUE(p->Reserve(state, *plain, "node-a").IsSuccess());
  EXPECT_TRUE(p->PreBind(state, *plain, "node-a").IsSuccess());
}

TEST(VolumeBindingTest, NewRejectsInvalidArgs) {
  VolumeTestHandle handle(std::vector<std::shared_ptr<api::Node>>{});
  auto plugin = New(testing::ArgsJson(R"({"bindTimeoutSeconds": -1})").View(), handle);
  ASSERT_FALSE(plugin.has_value());
  EXPECT_EQ(plugin.error(),
            "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value");
  // StorageCapacityScoring is off by default (v1.34): a shape is refused.
  EXPECT_FALSE(New(testing::ArgsJson(R"({"shape": [{"utilization": 0, "score": 0}]})").View(), handle).has_value());
}

TEST(VolumeBindingTest, EventsToRegister) {
  VolumeTestHandle handle(std::vector<std::shared_ptr<api::Node>>{});
  VolumeBinding p(VolumeBindingArgs{}, Features{}, handle);
  std::vector<std::string> labels;
  for (const auto& e : p.EventsToRegister()) labels.push_back(e.event.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"StorageClassAdd|Update", "PersistentVolumeClaimAdd|Update",
                                              "PersistentVolumeAdd|Update", "NodeAdd|UpdateNodeLabel",
                                              "CSINodeAdd|Update", "CSIDriverUpdate", "CSIStorageCapacityAdd|Update"}));
}

// --- Queueing hints (upstream's TestIsSchedulableAfter* tables, with its newest hints) ------

framework::EventObjects Storage(const api::StorageObject* old_object, const api::StorageObject* new_object) {
  framework::EventObjects e;
  e.old_storage = old_object;
  e.new_storage = new_object;
  return e;
}

TEST(VolumeBindingTest, IsSchedulableAfterPersistentVolumeClaimChange) {
  auto claims_pod = PodWithClaims({"pvc-a", "pvc-b"});
  auto ephemeral_pod = testing::MakePod().Name("pod-a").EphemeralVolume("ephemeral-a").Obj();
  auto other_ns = MakePVC("pvc-b", "sc-a");
  other_ns->metadata.namespace_ = "other";
  const api::StorageObject pvc_b = std::shared_ptr<const api::PersistentVolumeClaim>(MakePVC("pvc-b", "sc-b"));
  const api::StorageObject pvc_c = std::shared_ptr<const api::PersistentVolumeClaim>(MakePVC("pvc-c", "sc-b"));
  const api::StorageObject eph =
      std::shared_ptr<const api::PersistentVolumeClaim>(MakePVC("pod-a-ephemeral-a", "sc-a"));
  const api::StorageObject other = std::shared_ptr<const api::PersistentVolumeClaim>(other_ns);
  const api::StorageObject wrong_type =
      std::shared_ptr<const api::StorageClass>(testing::MakeStorageClass().Name("x").Obj());
  struct HCase {
    std::string name{};
    std::shared_ptr<api::Pod> pod{};
    const api::StorageObject* old_object{};
    const api::StorageObject* new_object{};
    framework::QueueingHint want{};
  };
  using framework::QueueingHint;
  const std::vector<HCase> cases = {
      {"pod has no pvcs", testing::MakePod().Name("pod-a").Obj(), &pvc_b, &pvc_b, QueueingHint::kSkip},
      {"pod has pvcs, another claim changed", claims_pod, &pvc_c, &pvc_c, QueueingHint::kSkip},
      {"pod has a newly added pvc", claims_pod, nullptr, &pvc_b, QueueingHint::kQueue},
      {"pod has pvcs with changes", claims_pod, &pvc_b, &pvc_b, QueueingHint::kQueue},
      {"pod has ephemeral volume with changes", ephemeral_pod, &eph, &eph, QueueingHint::kQueue},
      {"claim of another namespace", claims_pod, &other, &other, QueueingHint::kSkip},
      {"type conversion error", claims_pod, &wrong_type, &wrong_type, QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsSchedulableAfterPersistentVolumeClaimChange(*c.pod, Storage(c.old_object, c.new_object)), c.want);
  }
}

TEST(VolumeBindingTest, IsSchedulableAfterStorageClassChange) {
  auto pod = PodWithClaims({"pvc-a"});
  auto make = [](std::vector<std::string> hosts) {
    auto b = testing::MakeStorageClass().Name("sc-a");
    if (!hosts.empty()) b.AllowedTopology(kHostname, std::move(hosts));
    return api::StorageObject(std::shared_ptr<const api::StorageClass>(b.Obj()));
  };
  const auto plain = make({});
  const auto node12 = make({"node1", "node2"});
  const auto node13 = make({"node1", "node3"});
  using framework::QueueingHint;
  EXPECT_EQ(IsSchedulableAfterStorageClassChange(*pod, Storage(nullptr, &plain)), QueueingHint::kQueue);
  EXPECT_EQ(IsSchedulableAfterStorageClassChange(*pod, Storage(&plain, &plain)), QueueingHint::kSkip);
  EXPECT_EQ(IsSchedulableAfterStorageClassChange(*pod, Storage(&node12, &node13)), QueueingHint::kQueue);
  EXPECT_EQ(IsSchedulableAfterStorageClassChange(*pod, Storage(&node12, &node12)), QueueingHint::kSkip);
}

TEST(VolumeBindingTest, IsSchedulableAfterCSINodeChange) {
  auto pod = PodWithClaims({"pvc-a"});
  auto make = [](std::string migrated) {
    auto n = testing::MakeCSINode("node-a", {});
    if (!migrated.empty()) n->metadata.annotations.Set(std::string(kAnnotationMigratedPlugins), std::move(migrated));
    return api::StorageObject(std::shared_ptr<const api::CSINode>(n));
  };
  const auto none = make("");
  const auto gce = make("kubernetes.io/gce-pd");
  const auto gce_ebs = make("kubernetes.io/gce-pd,kubernetes.io/aws-ebs");
  using framework::QueueingHint;
  EXPECT_EQ(IsSchedulableAfterCSINodeChange(*pod, Storage(nullptr, &none)), QueueingHint::kQueue);
  EXPECT_EQ(IsSchedulableAfterCSINodeChange(*pod, Storage(&none, &gce)), QueueingHint::kQueue);
  EXPECT_EQ(IsSchedulableAfterCSINodeChange(*pod, Storage(&gce, &gce_ebs)), QueueingHint::kQueue);
  EXPECT_EQ(IsSchedulableAfterCSINodeChange(*pod, Storage(&gce, &gce)), QueueingHint::kSkip);
}

TEST(VolumeBindingTest, IsSchedulableAfterCSIStorageCapacityChange) {
  auto pod = PodWithClaims({"pvc-a"});
  auto make = [](std::string capacity, std::string max_size) {
    auto c = std::make_shared<api::CSIStorageCapacity>();
    c->metadata.name = "cap-a";
    c->storage_class_name = "sc-a";
    if (!capacity.empty()) c->capacity = testing::Q(capacity);
    if (!max_size.empty()) c->maximum_volume_size = testing::Q(max_size);
    return api::StorageObject(std::shared_ptr<const api::CSIStorageCapacity>(c));
  };
  const auto empty = make("", "");
  const auto cap1 = make("1Gi", "");
  const auto cap2 = make("2Gi", "");
  const auto max1 = make("10Gi", "1Gi");
  const auto max2 = make("5Gi", "2Gi");
  using framework::QueueingHint;
  struct HCase {
    std::string name{};
    const api::StorageObject* old_object{};
    const api::StorageObject* new_object{};
    QueueingHint want{};
  };
  const std::vector<HCase> cases = {
      {"newly added CSIStorageCapacity", nullptr, &cap1, QueueingHint::kQueue},
      {"no changes", &cap1, &cap1, QueueingHint::kSkip},
      {"capacity increased", &cap1, &cap2, QueueingHint::kQueue},
      {"capacity decreased", &cap2, &cap1, QueueingHint::kSkip},
      {"maximumVolumeSize increased (capacity decreased)", &max1, &max2, QueueingHint::kQueue},
      {"maximumVolumeSize decreased", &max2, &max1, QueueingHint::kSkip},
      {"a limit appeared", &empty, &cap1, QueueingHint::kQueue},
      {"the limit vanished", &cap1, &empty, QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsSchedulableAfterCSIStorageCapacityChange(*pod, Storage(c.old_object, c.new_object)), c.want);
  }
}

TEST(VolumeBindingTest, IsSchedulableAfterCSIDriverChange) {
  api::Volume inline_csi;
  inline_csi.name = "v";
  inline_csi.csi_driver = "test-driver";
  auto csi_pod = testing::MakePod().Name("pod-a").Volume(inline_csi).Obj();
  auto other_pod = PodWithClaims({"pvc-a"});
  const api::StorageObject tracking =
      std::shared_ptr<const api::CSIDriver>(testing::MakeCSIDriver("test-driver", true));
  const api::StorageObject not_tracking =
      std::shared_ptr<const api::CSIDriver>(testing::MakeCSIDriver("test-driver", false));
  using framework::QueueingHint;
  EXPECT_EQ(IsSchedulableAfterCSIDriverChange(*csi_pod, Storage(&tracking, &not_tracking)), QueueingHint::kQueue);
  EXPECT_EQ(IsSchedulableAfterCSIDriverChange(*csi_pod, Storage(&not_tracking, &tracking)), QueueingHint::kSkip);
  EXPECT_EQ(IsSchedulableAfterCSIDriverChange(*csi_pod, Storage(&tracking, &tracking)), QueueingHint::kSkip);
  EXPECT_EQ(IsSchedulableAfterCSIDriverChange(*other_pod, Storage(&tracking, &not_tracking)), QueueingHint::kSkip);
}

}  // namespace
}  // namespace kubesched::plugins::volume_binding
