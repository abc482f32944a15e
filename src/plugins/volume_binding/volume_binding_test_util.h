#pragma once
// Test environment of the VolumeBinding tests (header only, test binaries only): upstream's
// binder_test fixtures (classes, claims, volumes, nodes) as builders, a storage cache to hold
// them, a cluster client that applies PreBind's writes to that cache (with a pluggable PV
// controller), and a handle that serves both over a FakeHandle with a chosen clock.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "cache/storage_cache.h"
#include "framework/handle.h"
#include "plugins/volume_binding/binder.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/storage_builders.h"
#include "util/clock.h"

namespace kubesched::plugins::volume_binding::test_env {

inline constexpr char kProvisioner[] = "test-provisioner";
inline constexpr char kWaitClass[] = "waitClass";
inline constexpr char kImmediateClass[] = "immediateClass";
inline constexpr char kWaitClassWithProvisioner[] = "waitClassWithProvisioner";
inline constexpr char kTopoMismatchClass[] = "topoMismatchClass";
inline constexpr char kNodeLabelKey[] = "nodeKey";
inline constexpr char kNodeLabelValue[] = "node1";
inline constexpr char kNamespace[] = "testns";

// The four classes of upstream's newTestBinder.
inline std::vector<std::shared_ptr<api::StorageClass>> Classes() {
  return {
      testing::MakeStorageClass()
          .Name(kWaitClassWithProvisioner)
          .WaitForFirstConsumer()
          .Provisioner(kProvisioner)
          .AllowedTopology(kNodeLabelKey, {kNodeLabelValue, "reference-value"})
          .Obj(),
      testing::MakeStorageClass().Name(kImmediateClass).Immediate().Obj(),
      testing::MakeStorageClass()
          .Name(kWaitClass)
          .WaitForFirstConsumer()
          .Provisioner("kubernetes.io/no-provisioner")
          .Obj(),
      testing::MakeStorageClass()
          .Name(kTopoMismatchClass)
          .WaitForFirstConsumer()
          .Provisioner(kProvisioner)
          .AllowedTopology(kNodeLabelKey, {"reference-value"})
          .Obj(),
  };
}

enum class ClaimState { kUnbound, kPrebound, kBound, kSelectedNode };

// upstream's makeTestPVC: namespace testns, uid pvc-uid, Filesystem mode.
inline std::shared_ptr<api::PersistentVolumeClaim> MakeTestPVC(std::string name, std::string size, std::string node,
                                                               ClaimState state, std::string pv_name,
                                                               std::string version, std::string class_name) {
  auto b = testing::MakePVC().Name(std::move(name)).Namespace(kNamespace).UID("pvc-uid").Request(std::move(size));
  b.Class(std::move(class_name)).ResourceVersion(std::move(version)).AccessModes({});
  switch (state) {
    case ClaimState::kSelectedNode:
      b.Annotation(std::string(api::kAnnotationSelectedNode), std::move(node));
      break;
    case ClaimState::kBound:
      b.Annotation(std::string(api::kAnnotationBindCompleted), "yes");
      b.VolumeName(std::move(pv_name));
      break;
    case ClaimState::kPrebound:
      b.VolumeName(std::move(pv_name));
      break;
    case ClaimState::kUnbound:
      break;
  }
  return b.Obj();
}

// upstream's makeTestPV: Available, node affinity nodeKey In [node] unless node is "", claimRef
// and bound-by-controller when bound to a claim.
inline std::shared_ptr<api::PersistentVolume> MakeTestPV(std::string name, std::string node, std::string capacity,
                                                         std::string version,
                                                         const std::shared_ptr<api::PersistentVolumeClaim>& bound_to,
                                                         std::string class_name) {
  auto b = testing::MakePV().Name(std::move(name)).Capacity(std::move(capacity)).Class(std::move(class_name));
  b.ResourceVersion(std::move(version)).AccessModes({});
  if (!node.empty()) b.NodeAffinityIn(kNodeLabelKey, {std::move(node)});
  if (bound_to) {
    b.ClaimRef(bound_to->metadata.namespace_, bound_to->metadata.name, bound_to->metadata.uid);
    b.Annotation(std::string(api::kAnnotationBoundByController), "yes");
  }
  return b.Obj();
}

inline std::shared_ptr<api::Node> MakeNode(std::string name, std::vector<std::pair<std::string, std::string>> labels) {
  auto b = testing::MakeNode().Name(std::move(name));
  for (auto& [k, v] : labels) b.Label(k, v);
  return b.Obj();
}

inline std::shared_ptr<api::CSINode> MakeCSINode(std::string node, std::string migrated_plugins) {
  auto n = testing::MakeCSINode(std::move(node), {});
  n->metadata.annotations.Set(std::string(kAnnotationMigratedPlugins), std::move(migrated_plugins));
  return n;
}

// upstream's makeCapacity: nodeTopology matching the node's nodeKey label, or every node when
// `node` is null.
inline std::shared_ptr<api::CSIStorageCapacity> MakeCapacity(std::string name, std::string class_name,
                                                             const api::Node* node, std::string capacity,
                                                             std::string maximum_volume_size) {
  auto c = std::make_shared<api::CSIStorageCapacity>();
  c->metadata.name = std::move(name);
  c->metadata.namespace_ = "kube-system";
  c->metadata.resource_version = "1";
  c->storage_class_name = std::move(class_name);
  c->node_topology.emplace();
  if (node != nullptr) {
    c->node_topology->match_labels.Set(kNodeLabelKey, *node->metadata.labels.Find(kNodeLabelKey));
  }
  if (!capacity.empty()) c->capacity = testing::Q(capacity);
  if (!maximum_volume_size.empty()) c->maximum_volume_size = testing::Q(maximum_volume_size);
  return c;
}

// A pod in testns on node1 with one persistentVolumeClaim volume per claim.
inline std::shared_ptr<api::Pod> MakePodWithClaims(
    const std::vector<std::shared_ptr<api::PersistentVolumeClaim>>& claims) {
  auto b = testing::MakePod().Name("test-pod").Namespace(kNamespace).Node("node1");
  for (const auto& c : claims) b.PVC(c->metadata.name);
  return b.Obj();
}

// A copy with a newer resourceVersion (what an informer delivers after an update).
template <typename T>
std::shared_ptr<T> WithVersion(const std::shared_ptr<T>& object, std::string version) {
  auto copy = std::make_shared<T>(*object);
  copy->metadata.resource_version = std::move(version);
  return copy;
}

inline std::string NextVersion(const std::string& version) {
  return std::to_string(version.empty() ? 1 : std::stoll(version) + 1);
}

// The storage the tests hold their objects in: the scheduler's own cache.
using StorageBackend = cache::StorageCache;

// A cluster client for PreBind: BindVolumeToClaim and SelectNodeForClaim write to the storage
// cache as the API server and informer would (a new resourceVersion), then call the PV
// controller hook, if any, which stands for the simulated controller acting within the write.
class FakeVolumeClient final : public framework::ClusterClient {
 public:
  explicit FakeVolumeClient(StorageBackend& storage) : storage_(storage) {}

  std::function<void(StorageBackend&, const api::PersistentVolume&)> on_volume_bound;
  std::function<void(StorageBackend&, const api::PersistentVolumeClaim&)> on_node_selected;
  //! When set, the writes fail with it (after `fail_after` successful ones).
  std::optional<framework::Status> write_error;
  int fail_after = 0;

  std::vector<std::string> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

  framework::Status BindVolumeToClaim(const api::PersistentVolume& volume,
                                      const api::PersistentVolumeClaim& claim) override {
    if (auto err = Fail()) return *err;
    auto pv = std::make_shared<api::PersistentVolume>(volume);
    pv->claim_ref = api::ObjectReference{claim.metadata.namespace_, claim.metadata.name, claim.metadata.uid};
    pv->metadata.annotations.Set(std::string(api::kAnnotationBoundByController), "yes");
    pv->metadata.resource_version = NextVersion(Current(storage_.ApiVolume(volume.metadata.name)));
    storage_.Apply(std::shared_ptr<const api::PersistentVolume>(pv));
    Record("bind " + volume.metadata.name + " " + claim.Key());
    if (on_volume_bound) on_volume_bound(storage_, *pv);
    return framework::Status();
  }

  framework::Status SelectNodeForClaim(const api::PersistentVolumeClaim& claim, const std::string& node_name) override {
    if (auto err = Fail()) return *err;
    auto pvc = std::make_shared<api::PersistentVolumeClaim>(claim);
    pvc->metadata.annotations.Set(std::string(api::kAnnotationSelectedNode), node_name);
    pvc->metadata.resource_version =
        NextVersion(Current(storage_.ApiClaim(claim.metadata.namespace_, claim.metadata.name)));
    storage_.Apply(std::shared_ptr<const api::PersistentVolumeClaim>(pvc));
    Record("select " + claim.Key() + " " + node_name);
    if (on_node_selected) on_node_selected(storage_, *pvc);
    return framework::Status();
  }

  framework::Status Bind(const api::Pod&, const std::string&) override { return framework::Status(); }
  framework::Status DeletePod(const api::Pod&, std::string_view) override { return framework::Status(); }
  framework::Status SetNominatedNodeName(const api::Pod&, const std::string&) override { return framework::Status(); }
  framework::Status SetPodScheduledCondition(const api::Pod&, const api::PodCondition&) override {
    return framework::Status();
  }
  std::optional<api::Labels> NamespaceLabels(std::string_view) const override { return api::Labels(); }
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override { return {}; }

 private:
  template <typename T>
  static std::string Current(const std::shared_ptr<const T>& object) {
    return object ? object->metadata.resource_version : "0";
  }
  std::optional<framework::Status> Fail() {
    std::lock_guard lock(mu_);
    if (!write_error) return std::nullopt;
    if (fail_after > 0) {
      --fail_after;
      return std::nullopt;
    }
    return write_error;
  }
  void Record(std::string w) {
    std::lock_guard lock(mu_);
    writes_.push_back(std::move(w));
  }

  StorageBackend& storage_;
  mutable std::mutex mu_;
  std::vector<std::string> writes_;  // guarded by mu_
};

// A handle over a FakeHandle whose cluster client is a FakeVolumeClient and whose clock is
// virtual (simulate) or real (run).
class VolumeTestHandle final : public framework::Handle {
 public:
  VolumeTestHandle(const std::vector<std::shared_ptr<api::Node>>& nodes, bool real_clock = false)
      : fake_(nodes, {}), client_(storage_), real_clock_(real_clock) {
    fake_.set_storage(&storage_);
  }

  StorageBackend& storage() { return storage_; }
  FakeVolumeClient& volume_client() { return client_; }
  testing::FakeHandle& fake() { return fake_; }

  //! Adds objects to the storage cache (as the informers would).
  template <typename T>
  void Add(const std::vector<std::shared_ptr<T>>& objects) {
    for (const auto& o : objects) storage_.Apply(std::shared_ptr<const T>(o));
  }
  template <typename T>
  void Add(const std::shared_ptr<T>& object) {
    storage_.Apply(std::shared_ptr<const T>(object));
  }

  // framework::PluginsRunner
  std::pair<framework::PreFilterResult, framework::Status> RunPreFilterPlugins(framework::CycleState& state,
                                                                               const framework::PodInfo& pod) override {
    return fake_.RunPreFilterPlugins(state, pod);
  }
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState& state, const framework::PodInfo& pod,
                                                const framework::PodInfo& add,
                                                const framework::NodeInfo& node) override {
    return fake_.RunPreFilterExtensionAddPod(state, pod, add, node);
  }
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState& state, const framework::PodInfo& pod,
                                                   const framework::PodInfo& remove,
                                                   const framework::NodeInfo& node) override {
    return fake_.RunPreFilterExtensionRemovePod(state, pod, remove, node);
  }
  framework::Status RunFilterPlugins(const framework::CycleState& state, const framework::PodInfo& pod,
                                     const framework::NodeInfo& node) override {
    return fake_.RunFilterPlugins(state, pod, node);
  }
  framework::Status RunFilterPluginsWithNominatedPods(framework::CycleState& state, const framework::PodInfo& pod,
                                                      const framework::NodeInfo& node) override {
    return fake_.RunFilterPluginsWithNominatedPods(state, pod, node);
  }

  // framework::Handle
  const framework::NodeInfoLister& SnapshotSharedLister() const override { return fake_.SnapshotSharedLister(); }
  void IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>& fn) override {
    fake_.IterateOverWaitingPods(fn);
  }
  std::shared_ptr<framework::WaitingPod> GetWaitingPod(std::string_view uid) override {
    return fake_.GetWaitingPod(uid);
  }
  bool RejectWaitingPod(std::string_view uid) override { return fake_.RejectWaitingPod(uid); }
  framework::ClusterClient& client() override { return client_; }
  framework::PodNominator& nominator() override { return fake_.nominator(); }
  const util::Clock& clock() const override {
    if (real_clock_) return real_;
    return fake_.clock();
  }
  util::Parallelizer& parallelizer() override { return fake_.parallelizer(); }
  std::string_view profile_name() const override { return fake_.profile_name(); }
  framework::StorageLister& Storage() const override { return storage_; }

 private:
  mutable StorageBackend storage_;
  testing::FakeHandle fake_;
  FakeVolumeClient client_;
  bool real_clock_;
  util::RealClock real_;
};

}  // namespace kubesched::plugins::volume_binding::test_env
