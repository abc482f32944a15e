// The DynamicResources plugin through its extension points, replaying upstream's
// dynamicresources_test.go (TestPlugin's table, TestIsSchedulableAfterClaimChange and
// TestIsSchedulableAfterTargetPodUpdate; resource.k8s.io/v1, structured parameters) against a real
// cache::DraCache fed as the informers feed it, with a cluster client that writes claim statuses
// back into it as the API server and informer would.
//
// Where kubesched deliberately differs from upstream, the case says so (`differs`):
// - no finalizer: upstream's PreBind adds resource.kubernetes.io/delete-protection before writing
//   the allocation; kubesched writes the status only (and so registers claim deletes).
// - Reserve assumes the allocated claim in the DRA cache with the pod already in reservedFor
//   (upstream keeps an in-flight claim with the allocation alone); PreBind writes both.
// - no allocationTimestamp, binding conditions, extended resources, PodGroup claims,
//   prioritized-list scoring, filter timeout or feature gates (every feature on): upstream's
//   cases for those are not ported.
// - a write conflict in PreBind is not retried: the pod is retried.
// - messages follow v1.34 (kubesched's release): "(pod is not owner)" where upstream's master
//   says "(Pod is not owner)".

#include "plugins/dynamic_resources/dynamic_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "plugins/dynamic_resources/dra_test_util.h"
#include "plugins/dynamic_resources/dynamic_resources_test_util.h"
#include "testing/builders.h"
#include "testing/printers.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

namespace kt = kubesched::testing;
namespace dt = kubesched::plugins::dynamic_resources::testing;
using ClaimPtr = std::shared_ptr<api::ResourceClaim>;
using ClassPtr = std::shared_ptr<api::DeviceClass>;
using SlicePtr = std::shared_ptr<api::ResourceSlice>;
using PodPtr = std::shared_ptr<api::Pod>;
using NodePtr = std::shared_ptr<api::Node>;
using framework::Code;
using framework::QueueingHint;
using framework::Status;

// upstream's test fixtures.
constexpr char kNodeName[] = "worker";
constexpr char kNode2Name[] = "worker-2";
constexpr char kNode3Name[] = "worker-3";
constexpr char kDriver[] = "some-driver";
constexpr char kPodName[] = "my-pod";
constexpr char kPodUID[] = "1234";
constexpr char kResourceName[] = "my-resource";
constexpr char kResourceName2[] = "my-resource-2";
constexpr char kClaimName[] = "my-pod-my-resource";
constexpr char kClaimName2[] = "my-pod-my-resource-2";
constexpr char kClassName[] = "my-resource-class";
constexpr char kNamespace[] = "default";
constexpr char kAttrName[] = "healthy";  // a device attribute only the non-default nodes have
constexpr char kFinalizer[] = "resource.kubernetes.io/delete-protection";

// --- Pods ---------------------------------------------------------------------------------------

PodPtr MakeMyPod() { return kt::MakePod().Name(kPodName).Namespace(kNamespace).UID(kPodUID).Obj(); }

api::PodResourceClaim ByName(std::string name, std::string claim) {
  return {std::move(name), std::move(claim), std::nullopt};
}
api::PodResourceClaim ByTemplate(std::string name, std::string tmpl) {
  return {std::move(name), std::nullopt, std::move(tmpl)};
}

PodPtr PodWithClaimName() {
  auto pod = MakeMyPod();
  pod->spec.resource_claims = {ByName(kResourceName, kClaimName)};
  return pod;
}
PodPtr PodWithClaimTemplate() {
  auto pod = MakeMyPod();
  pod->spec.resource_claims = {ByTemplate(kResourceName, kClaimName)};
  return pod;
}
PodPtr PodWithClaimTemplateInStatus() {
  auto pod = PodWithClaimTemplate();
  pod->status.resource_claim_statuses = {{kResourceName, kClaimName}};
  return pod;
}
PodPtr PodWithTwoClaimTemplates() {
  auto pod = MakeMyPod();
  pod->spec.resource_claims = {ByTemplate(kResourceName, kClaimName), ByTemplate(kResourceName2, kClaimName)};
  return pod;
}
PodPtr PodWithTwoClaimNames() {
  auto pod = MakeMyPod();
  pod->spec.resource_claims = {ByName(kResourceName, kClaimName), ByName(kResourceName2, kClaimName2)};
  return pod;
}

// --- Nodes, slices and classes ------------------------------------------------------------------

NodePtr WorkerNode() { return kt::MakeNode().Name(kNodeName).Obj(); }  // kubernetes.io/hostname: worker
NodePtr WorkerNode2() { return kt::MakeNode().Name(kNode2Name).Obj(); }
NodePtr WorkerNode3() { return kt::MakeNode().Name(kNode3Name).Obj(); }

// upstream's st.MakeResourceSlice(node, driver): one pool named after the node.
dt::SliceBuilder NodeSlice(const std::string& node) {
  dt::SliceBuilder b(node + "-" + kDriver, kDriver, node);
  b.Node(node);
  return b;
}
SlicePtr WorkerNodeSlice() { return NodeSlice(kNodeName).Device(dt::MakeDevice("instance-1")).Obj(); }
SlicePtr LargeWorkerNodeSlice() {
  return NodeSlice(kNodeName)
      .Device(dt::MakeDevice("instance-1"))
      .Device(dt::MakeDevice("instance-2"))
      .Device(dt::MakeDevice("instance-3"))
      .Device(dt::MakeDevice("instance-4"))
      .Obj();
}
SlicePtr HealthySlice(const std::string& node) {
  return NodeSlice(node).Device(dt::MakeDevice("instance-1").Attr(kAttrName, true)).Obj();
}
SlicePtr TaintDevices(SlicePtr slice) {
  for (auto& d : slice->devices) d.taints.push_back({"taint-key", "taint-value", api::DeviceTaintEffect::kNoSchedule});
  return slice;
}

ClassPtr DeviceClass() { return dt::MakeOpenClass(kClassName).Obj(); }

// upstream's brokenSelector: an attribute that the worker node's device does not have.
const std::string kBrokenSelector = std::string("device.attributes[\"") + kDriver + "\"]." + kAttrName;

ClassPtr BreakCELInClass(ClassPtr c) {
  c->selectors = {dt::Cel(kBrokenSelector)};
  return c;
}

// --- Claims -------------------------------------------------------------------------------------

api::OwnerReference PodOwner() { return {"v1", "Pod", kPodName, kPodUID, true}; }

ClaimPtr MakeClaim(std::string name = kClaimName) {
  return dt::ClaimBuilder(std::move(name), kNamespace).Request(dt::RequestBuilder("req-1", kClassName, 1)).Obj();
}
ClaimPtr Owned(ClaimPtr c) {
  c->metadata.owner_references.push_back(PodOwner());
  return c;
}
ClaimPtr PendingClaim() { return Owned(MakeClaim()); }
ClaimPtr PendingClaim2() { return Owned(MakeClaim(kClaimName2)); }
ClaimPtr PendingClaimWithPrioritizedList() {
  return Owned(dt::ClaimBuilder(kClaimName, kNamespace)
                   .Request(dt::FirstAvailable("req-1", {dt::SubRequestBuilder("subreq-1", kClassName, 1)}))
                   .Obj());
}

// upstream's allocationResult: instance-1 of the worker's pool, usable on the worker only.
api::AllocationResult MakeAllocation(std::string request = "req-1", std::string device = "instance-1") {
  api::AllocationResult a;
  api::DeviceRequestAllocationResult r;
  r.request = std::move(request);
  r.driver = kDriver;
  r.pool = kNodeName;
  r.device = std::move(device);
  a.devices.push_back(std::move(r));
  a.node_selector = dt::LocalSelector(kNodeName);
  return a;
}
ClaimPtr WithAllocation(ClaimPtr c, std::optional<api::AllocationResult> a) {
  c->allocation = std::move(a);
  return c;
}
ClaimPtr AllocatedClaim() { return WithAllocation(PendingClaim(), MakeAllocation()); }
ClaimPtr ReserveFor(ClaimPtr c, const std::string& pod_name = kPodName, const std::string& uid = kPodUID) {
  c->reserved_for.push_back({"", "pods", pod_name, uid});
  return c;
}
ClaimPtr InUseClaim() { return ReserveFor(AllocatedClaim()); }
ClaimPtr AllocatedClaimWithPrioritizedList() {
  return WithAllocation(PendingClaimWithPrioritizedList(), MakeAllocation("req-1/subreq-1"));
}
ClaimPtr AllocatedClaimWithWrongTopology() {
  api::AllocationResult a;
  a.node_selector = dt::LabelSelector("no-such-label", {"no-such-value"});
  return WithAllocation(PendingClaim(), a);
}
ClaimPtr AllocatedClaimWithGoodTopology() {
  api::AllocationResult a;
  a.node_selector = dt::LabelSelector("kubernetes.io/hostname", {kNodeName});
  return WithAllocation(PendingClaim(), a);
}
ClaimPtr OtherClaim() { return MakeClaim("not-my-claim"); }
ClaimPtr OtherAllocatedClaim() { return WithAllocation(OtherClaim(), MakeAllocation()); }
ClaimPtr OtherAllocatedClaimOtherDevice() {
  return WithAllocation(OtherClaim(), MakeAllocation("req-1", "instance-1-other"));
}
ClaimPtr AdminAccess(ClaimPtr c) {
  for (auto& r : c->spec.requests) {
    if (r.exactly) r.exactly->admin_access = true;
  }
  if (c->allocation) {
    for (auto& d : c->allocation->devices) d.admin_access = true;
  }
  return c;
}
ClaimPtr BreakCELInClaim(ClaimPtr c) {
  for (auto& r : c->spec.requests) {
    if (r.exactly) r.exactly->selectors = {dt::Cel(kBrokenSelector)};
  }
  return c;
}
ClaimPtr UpdateDeviceClassName(ClaimPtr c, const std::string& class_name) {
  for (auto& r : c->spec.requests) {
    if (r.exactly) r.exactly->device_class_name = class_name;
    for (auto& s : r.first_available) s.device_class_name = class_name;
  }
  return c;
}
ClaimPtr WithFinalizer(ClaimPtr c) {
  c->metadata.finalizers = {kFinalizer};
  return c;
}

// --- Rendering: what the comparisons look at (UID and resourceVersion ignored, as upstream) ------

std::string Render(const api::NodeSelector& s) {
  std::ostringstream os;
  for (const auto& term : s.terms) {
    os << "{";
    for (const auto& r : term.match_expressions) {
      os << r.key << " " << api::ToString(r.op) << " " << ::testing::PrintToString(r.values) << ";";
    }
    for (const auto& r : term.match_fields) {
      os << "field " << r.key << " " << api::ToString(r.op) << " " << ::testing::PrintToString(r.values) << ";";
    }
    os << "}";
  }
  return os.str();
}

std::string Render(const api::ResourceClaim& c) {
  std::ostringstream os;
  os << c.Key();
  if (c.metadata.deletion_timestamp_ns) os << " deleting";
  if (!c.metadata.finalizers.empty()) os << " finalizers=" << ::testing::PrintToString(c.metadata.finalizers);
  if (c.allocation) {
    os << " allocated{";
    for (const auto& d : c.allocation->devices) {
      os << d.request << "=" << d.driver << "/" << d.pool << "/" << d.device;
      if (d.admin_access) os << "(admin)";
      if (d.share_id) os << "(shared)";
      os << " ";
    }
    if (c.allocation->node_selector) os << "on " << Render(*c.allocation->node_selector);
    os << "}";
  }
  os << " reservedFor=[";
  for (const auto& r : c.reserved_for) os << r.resource << "/" << r.name << "/" << r.uid << " ";
  os << "]";
  return os.str();
}

// --- The table ----------------------------------------------------------------------------------

// The expected outcome of one step: its status and the claims afterwards (upstream's result).
struct Result {
  Status status{};
  //! The informer's claims that the step changed, as they should be after it (by name).
  std::vector<ClaimPtr> changes{};
  //! The claims assumed in the DRA cache after the step (upstream's in-flight and assumed
  //! claims); nullopt: as before the step.
  std::optional<std::vector<ClaimPtr>> assumed{};
};

struct Want {
  Result preenqueue{};
  Result prefilter{};
  std::map<std::string, Result> filter{};  // by node; absent: Success
  Result reserve{};
  Result unreserve{};
  Result prebind{};
  Result postfilter{};
  //! Unreserve after PreBind, as if Bind had failed.
  std::optional<Result> unreserve_after_bind_failure{};
  //! Unreserve before PreBind, as if another PreBind plugin had failed.
  std::optional<Result> unreserve_before_prebind{};
};

using Change = std::function<void(api::ResourceClaim&)>;

struct Case {
  std::string name{};
  std::string differs{};         // how kubesched deliberately differs from upstream's case, if it does
  std::vector<NodePtr> nodes{};  // default: the worker
  PodPtr pod{};
  std::vector<ClaimPtr> claims{};
  std::vector<ClassPtr> classes{};
  std::vector<SlicePtr> slices{};
  //! Claims assumed before the cycle (another pod's Reserve; upstream's inFlightClaims).
  std::vector<ClaimPtr> in_flight{};
  //! Someone else's changes to claims (by name) right before PreBind / PostFilter (upstream's
  //! prepare).
  std::map<std::string, Change> prepare_reserve{};
  std::map<std::string, Change> prepare_prebind{};
  std::map<std::string, Change> prepare_postfilter{};
  //! The API server's answer to claim status writes (upstream's reactors): to those of the
  //! claims in fail_only, or to every one.
  std::optional<Status> write_error{};
  std::set<std::string> fail_only{};
  Want want{};
};

// The claims the test knows, as the informer has them and as assumed.
struct Snapshot {
  std::map<std::string, std::string> api;
  std::map<std::string, std::string> assumed;
};

class Runner {
 public:
  explicit Runner(const Case& c) : c_(c), handle_(c.nodes.empty() ? std::vector<NodePtr>{WorkerNode()} : c.nodes) {
    for (const auto& claim : c.claims) {
      names_.push_back(claim->metadata.name);
      handle_.Add(std::make_shared<api::ResourceClaim>(*claim));
    }
    for (const auto& cls : c.classes) handle_.Add(std::make_shared<api::DeviceClass>(*cls));
    for (const auto& slice : c.slices) handle_.Add(std::make_shared<api::ResourceSlice>(*slice));
    for (const auto& claim : c.in_flight) {
      auto api_claim = handle_.dra().ApiClaim(claim->metadata.namespace_, claim->metadata.name);
      auto assumed = std::make_shared<api::ResourceClaim>(*claim);
      assumed->metadata.resource_version = api_claim->metadata.resource_version;
      assumed->metadata.uid = api_claim->metadata.uid;
      EXPECT_TRUE(handle_.dra().AssumeClaim(assumed).IsSuccess());
    }
    handle_.claim_client().write_error = c.write_error;
    handle_.claim_client().fail_only = c.fail_only;
    for (const auto& node : handle_.fake().snapshot().List()) nodes_.push_back(node);
    auto plugin = New(framework::ArgsView(), handle_);
    EXPECT_TRUE(plugin.has_value());
    owner_ = std::move(*plugin);
    plugin_ = dynamic_cast<DynamicResources*>(owner_.get());
  }

  // upstream's testPlugin: PreEnqueue, PreFilter, Filter on each node; then Reserve on the first
  // node that fits, and PreBind (or Unreserve) there; PostFilter when no node fits.
  void Run() {
    const auto pod_info = framework::PodInfo::Create(c_.pod);
    framework::CycleState state;

    Snapshot before = Take();
    Status status = plugin_->PreEnqueue(*c_.pod);
    Verify("PreEnqueue", c_.want.preenqueue, before, status);
    if (!status.IsSuccess()) return;

    before = Take();
    status = plugin_->PreFilter(state, *pod_info, nodes_).second;
    Verify("PreFilter", c_.want.prefilter, before, status);
    bool unschedulable = status.IsRejected();
    const bool skip_filter = status.IsSkip();  // the framework then skips this plugin's Filter

    std::vector<std::string> potential_nodes;
    if (!unschedulable) {
      for (const framework::NodeInfo* node_info : nodes_) {
        const std::string& node_name = node_info->node()->metadata.name;
        if (skip_filter) {
          potential_nodes.push_back(node_name);
          continue;
        }
        before = Take();
        status = plugin_->Filter(state, *pod_info, *node_info);
        auto want = c_.want.filter.find(node_name);
        Verify("Filter/" + node_name, want == c_.want.filter.end() ? Result{} : want->second, before, status);
        if (status.IsSuccess()) potential_nodes.push_back(node_name);
        if (status.IsError()) return;  // an error aborts scheduling
      }
      if (potential_nodes.empty()) unschedulable = true;
    }

    if (potential_nodes.empty()) {
      Prepare(c_.prepare_postfilter);
      before = Take();
      status = plugin_->PostFilter(state, *pod_info, framework::NodeToStatus()).second;
      Verify("PostFilter", c_.want.postfilter, before, status);
      return;
    }
    const std::string& selected = potential_nodes.front();
    Prepare(c_.prepare_reserve);
    before = Take();
    status = plugin_->Reserve(state, *pod_info, selected);
    Verify("Reserve", c_.want.reserve, before, status);
    if (!status.IsSuccess()) {
      before = Take();
      plugin_->Unreserve(state, *pod_info, selected);
      Verify("Unreserve", c_.want.unreserve, before, Status());
      return;
    }
    if (c_.want.unreserve_before_prebind) {
      before = Take();
      plugin_->Unreserve(state, *pod_info, selected);
      Verify("UnreserveBeforePreBind", *c_.want.unreserve_before_prebind, before, Status());
      return;
    }
    Prepare(c_.prepare_prebind);
    before = Take();
    status = plugin_->PreBind(state, *pod_info, selected);
    Verify("PreBind", c_.want.prebind, before, status);
    if (c_.want.unreserve_after_bind_failure) {
      before = Take();
      plugin_->Unreserve(state, *pod_info, selected);
      Verify("UnreserveAfterBindFailure", *c_.want.unreserve_after_bind_failure, before, Status());
    }
  }

 private:
  void Prepare(const std::map<std::string, Change>& changes) {
    for (const auto& [name, change] : changes) {
      ASSERT_NE(handle_.claim_client().Update(kNamespace, name, change), nullptr) << name;
    }
  }

  Snapshot Take() {
    Snapshot s;
    for (const auto& name : names_) {
      auto api_claim = handle_.dra().ApiClaim(kNamespace, name);
      auto latest = handle_.dra().Claim(kNamespace, name);
      if (api_claim) s.api[name] = Render(*api_claim);
      if (latest && latest != api_claim) s.assumed[name] = Render(*latest);
    }
    return s;
  }

  void Verify(const std::string& step, const Result& want, const Snapshot& before, const Status& got) {
    SCOPED_TRACE(step);
    EXPECT_EQ(got, want.status);
    const Snapshot after = Take();
    std::map<std::string, std::string> want_api = before.api;
    for (const auto& claim : want.changes) want_api[claim->metadata.name] = Render(*claim);
    EXPECT_EQ(after.api, want_api) << "the claims as the informer has them";
    std::map<std::string, std::string> want_assumed = before.assumed;
    if (want.assumed) {
      want_assumed.clear();
      for (const auto& claim : *want.assumed) want_assumed[claim->metadata.name] = Render(*claim);
    }
    EXPECT_EQ(after.assumed, want_assumed) << "the assumed claims";
  }

  const Case& c_;
  dt::DraTestHandle handle_;
  std::vector<std::string> names_;
  std::vector<const framework::NodeInfo*> nodes_;
  std::unique_ptr<framework::Plugin> owner_;
  DynamicResources* plugin_ = nullptr;
};

Status Unresolvable(std::string reason) { return Status::UnschedulableAndUnresolvable(std::move(reason)); }
Status Unschedulable(std::string reason) { return Status::Unschedulable(std::move(reason)); }

std::vector<Case> PluginCases() {
  const Status kCannotAllocate = Unresolvable("cannot allocate all claims");
  const Status kNotAvailable = Unresolvable("resourceclaim not available on the node");
  // Upstream's table says `no new claims to deallocate` for a PreFilter that failed before it
  // recorded the claims; its code (1.34) answers those with a reasonless Unschedulable (the
  // fast path for no claims), which is what kubesched does, so pending pods' messages carry no
  // DynamicResources text there. differs (from the table, not from the code).
  const Status kNoNewClaims = Status(Code::kUnschedulable);
  const Status kStillNotSchedulable = Unschedulable("still not schedulable");
  const Status kDeallocated = Unschedulable("deallocation of ResourceClaim completed");
  const auto pod = PodWithClaimName();
  auto no_allocation = [](api::ResourceClaim& c) { c.allocation.reset(); };

  std::vector<Case> cases;
  cases.push_back({
      .name = "empty",
      .pod = kt::MakePod().Name("foo").Namespace(kNamespace).Obj(),
      .want = {.prefilter = {.status = Status::Skip()}},
  });
  cases.push_back({
      .name = "claim-reference",
      .differs = "no allocationTimestamp",
      .pod = pod,
      .claims = {AllocatedClaim(), OtherClaim()},
      .want = {.prebind = {.changes = {InUseClaim()}}},
  });
  cases.push_back({
      .name = "claim-template",
      .differs = "no allocationTimestamp",
      .pod = PodWithClaimTemplateInStatus(),
      .claims = {AllocatedClaim(), OtherClaim()},
      .want = {.prebind = {.changes = {InUseClaim()}}},
  });
  cases.push_back({
      .name = "missing-claim",
      .pod = PodWithClaimTemplate(),  // status not set
      .claims = {AllocatedClaim(), OtherClaim()},
      .want = {.preenqueue = {.status = Unresolvable(R"(pod "default/my-pod": ResourceClaim not created yet)")}},
  });
  {
    auto deleted = AllocatedClaim();
    deleted->metadata.deletion_timestamp_ns = 1;
    cases.push_back({
        .name = "deleted-claim",
        .pod = PodWithClaimTemplateInStatus(),
        .claims = {deleted},
        .want = {.preenqueue = {.status = Unresolvable(R"(resourceclaim "my-pod-my-resource" is being deleted)")}},
    });
  }
  {
    auto wrong = AllocatedClaim();
    wrong->metadata.owner_references[0].uid += "123";
    cases.push_back({
        .name = "wrong-claim",
        .differs = "v1.34's wording: upstream's master says \"for Pod\" and \"(Pod is not owner)\"",
        .pod = PodWithClaimTemplateInStatus(),
        .claims = {wrong},
        .want = {.preenqueue = {.status = Unresolvable("ResourceClaim default/my-pod-my-resource was not created for "
                                                       "pod default/my-pod (pod is not owner)")}},
    });
  }
  cases.push_back({
      .name = "no-resources",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .want = {.filter = {{kNodeName, {.status = kCannotAllocate}}}, .postfilter = {.status = kStillNotSchedulable}},
  });
  cases.push_back({
      .name = "with-resources",
      .differs = "no finalizer; the assumed claim lists the pod in reservedFor",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .prebind = {.changes = {InUseClaim()}, .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "with-resources-has-finalizer",
      .differs = "the finalizer is kept, never added",
      .pod = pod,
      .claims = {WithFinalizer(PendingClaim())},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.reserve = {.assumed = std::vector{WithFinalizer(InUseClaim())}},
               .prebind = {.changes = {WithFinalizer(InUseClaim())}, .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "with-resources-finalizer-gets-removed",
      .differs = "upstream adds its finalizer back; kubesched writes none",
      .pod = pod,
      .claims = {WithFinalizer(PendingClaim())},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .prepare_prebind = {{kClaimName, [](api::ResourceClaim& c) { c.metadata.finalizers.clear(); }}},
      // The informer's newer version (no allocation yet) leaves the assumed allocation in place.
      .want = {.reserve = {.assumed = std::vector{WithFinalizer(InUseClaim())}},
               .prebind = {.changes = {InUseClaim()}, .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "with-resources-finalizer-gets-added",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .prepare_prebind = {{kClaimName, [](api::ResourceClaim& c) { c.metadata.finalizers = {kFinalizer}; }}},
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .prebind = {.changes = {WithFinalizer(InUseClaim())}, .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "skip-bind",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .unreserve_before_prebind = Result{.assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "exhausted-resources-in-informer-cache",
      .pod = pod,
      .claims = {PendingClaim(), OtherAllocatedClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.filter = {{kNodeName, {.status = kCannotAllocate}}}, .postfilter = {.status = kStillNotSchedulable}},
  });
  cases.push_back({
      .name = "exhausted-resources-in-flight-claim",
      .pod = pod,
      .claims = {PendingClaim(), OtherClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .in_flight = {OtherAllocatedClaim()},
      .want = {.filter = {{kNodeName, {.status = kCannotAllocate}}}, .postfilter = {.status = kStillNotSchedulable}},
  });
  cases.push_back({
      .name = "other-resources-in-flight-claim",
      .pod = pod,
      .claims = {PendingClaim(), OtherClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .in_flight = {OtherAllocatedClaimOtherDevice()},
      .want = {.reserve = {.assumed = std::vector{InUseClaim(), OtherAllocatedClaimOtherDevice()}},
               .prebind = {.changes = {InUseClaim()}, .assumed = std::vector{OtherAllocatedClaimOtherDevice()}}},
  });
  cases.push_back({
      .name = "tainted-device-enabled",
      .differs = "DRADeviceTaints is always on (no -disabled case)",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {TaintDevices(WorkerNodeSlice())},
      .want = {.filter = {{kNodeName, {.status = kCannotAllocate}}}, .postfilter = {.status = kStillNotSchedulable}},
  });
  cases.push_back({
      // Admin access does not need the device to be free.
      .name = "request-admin-access-with-DRAAdminAccess-featuregate",
      .pod = pod,
      .claims = {AdminAccess(PendingClaim()), OtherAllocatedClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.reserve = {.assumed = std::vector{AdminAccess(InUseClaim())}},
               .prebind = {.changes = {AdminAccess(InUseClaim())}, .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      // The allocated claim uses admin access, so a second claim may use the same device.
      .name = "structured-ignore-allocated-admin-access",
      .pod = pod,
      .claims = {PendingClaim(), AdminAccess(OtherAllocatedClaim())},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .prebind = {.changes = {InUseClaim()}, .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "missing-class",
      .pod = pod,
      .claims = {PendingClaim()},
      .want = {.prefilter = {.status = Unresolvable("request req-1: device class my-resource-class does not exist")},
               .postfilter = {.status = kNoNewClaims}},
  });
  cases.push_back({
      // PostFilter tries to get the pod schedulable by deallocating the claim.
      .name = "wrong-topology",
      .pod = pod,
      .claims = {AllocatedClaimWithWrongTopology()},
      .want = {.filter = {{kNodeName, {.status = kNotAvailable}}},
               .postfilter = {.status = kDeallocated, .changes = {PendingClaim()}}},
  });
  cases.push_back({
      .name = "good-topology",
      .pod = pod,
      .claims = {AllocatedClaimWithGoodTopology()},
      .want = {.prebind = {.changes = {ReserveFor(AllocatedClaimWithGoodTopology())}}},
  });
  cases.push_back({
      .name = "bind-failure",
      .pod = pod,
      .claims = {AllocatedClaimWithGoodTopology()},
      .want = {.prebind = {.changes = {ReserveFor(AllocatedClaimWithGoodTopology())}},
               .unreserve_after_bind_failure = Result{.changes = {AllocatedClaimWithGoodTopology()}}},
  });
  cases.push_back({
      .name = "bind-failure-preserves-inflight-until-unreserve",
      .differs = "the write is a status update without retries; the error names the claim",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .write_error = Status::Error("claim bind error"),
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .prebind = {.status = Status::Error("add allocation and reservation to claim "
                                                   "default/my-pod-my-resource: claim bind error")},
               .unreserve_after_bind_failure = Result{.assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "reserved-okay",
      .pod = pod,
      .claims = {InUseClaim()},
  });
  cases.push_back({
      .name = "claim-with-request-with-unknown-device-class",
      .pod = pod,
      .claims = {UpdateDeviceClassName(MakeClaim(), "does-not-exist")},
      .want = {.prefilter = {.status = Unresolvable("request req-1: device class does-not-exist does not exist")},
               .postfilter = {.status = kNoNewClaims}},
  });
  cases.push_back({
      .name = "claim-with-prioritized-list-unknown-device-class",
      .pod = pod,
      .claims = {UpdateDeviceClassName(PendingClaimWithPrioritizedList(), "does-not-exist")},
      .want = {.prefilter = {.status =
                                 Unresolvable("request req-1/subreq-1: device class does-not-exist does not exist")},
               .postfilter = {.status = kNoNewClaims}},
  });
  cases.push_back({
      .name = "claim-with-prioritized-list",
      .pod = pod,
      .claims = {PendingClaimWithPrioritizedList()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .want = {.reserve = {.assumed = std::vector{ReserveFor(AllocatedClaimWithPrioritizedList())}},
               .prebind = {.changes = {ReserveFor(AllocatedClaimWithPrioritizedList())},
                           .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      // Deallocation before PreBind runs.
      .name = "add-allocation-timestamp-failure",
      .pod = pod,
      .claims = {AllocatedClaim()},
      .prepare_prebind = {{kClaimName, no_allocation}},
      .want = {.prebind = {.status = Status::Error(
                               "claim default/my-pod-my-resource got deallocated elsewhere in the meantime")}},
  });

  // kubesched's cases: what upstream's table covers in other tests or not at all.
  {
    // A claim may be shared by at most 256 consumers (upstream's "in-use-by-other", from before
    // claims could be shared).
    auto full = AllocatedClaim();
    for (int i = 0; i < 256; ++i) ReserveFor(full, "other-" + std::to_string(i), "uid-other-" + std::to_string(i));
    cases.push_back({
        .name = "in-use-by-256-pods",
        .pod = pod,
        .claims = {full},
        .want = {.prefilter = {.status = Unresolvable("resourceclaim in use")}, .postfilter = {.status = kNoNewClaims}},
    });
    auto shared = AllocatedClaim();
    for (int i = 0; i < 255; ++i) ReserveFor(shared, "other-" + std::to_string(i), "uid-other-" + std::to_string(i));
    cases.push_back({
        .name = "shared-by-255-pods",
        .pod = pod,
        .claims = {shared},
        .want = {.prebind = {.changes = {ReserveFor(std::make_shared<api::ResourceClaim>(*shared))}}},
    });
    auto mine = std::make_shared<api::ResourceClaim>(*full);
    mine->reserved_for.back() = {"", "pods", kPodName, kPodUID};
    cases.push_back({
        // Reserved for the pod itself: nothing to write.
        .name = "in-use-by-256-pods-including-this-one",
        .pod = pod,
        .claims = {mine},
    });
  }
  cases.push_back({
      // Allocated on the worker, checked on another node first.
      .name = "already-allocated-on-another-node",
      .nodes = {WorkerNode2(), WorkerNode()},
      .pod = pod,
      .claims = {AllocatedClaim()},
      .want = {.filter = {{kNode2Name, {.status = kNotAvailable}}}, .prebind = {.changes = {InUseClaim()}}},
  });
  cases.push_back({
      .name = "already-allocated-on-another-node-only",
      .nodes = {WorkerNode2(), WorkerNode3()},
      .pod = pod,
      .claims = {AllocatedClaim()},
      .want = {.filter = {{kNode2Name, {.status = kNotAvailable}}, {kNode3Name, {.status = kNotAvailable}}},
               .postfilter = {.status = kDeallocated, .changes = {PendingClaim()}}},
  });
  cases.push_back({
      // Upstream's PostFilter also frees a claim reserved for nobody but the pod itself.
      .name = "wrong-topology-reserved-for-this-pod",
      .pod = pod,
      .claims = {ReserveFor(AllocatedClaimWithWrongTopology())},
      .want = {.filter = {{kNodeName, {.status = kNotAvailable}}},
               .postfilter = {.status = kDeallocated, .changes = {PendingClaim()}}},
  });
  {
    auto shared = ReserveFor(AllocatedClaimWithWrongTopology(), "other", "uid-other");
    cases.push_back({
        // Another pod uses it: not freed.
        .name = "wrong-topology-in-use-by-other-pod",
        .pod = pod,
        .claims = {shared},
        .want = {.filter = {{kNodeName, {.status = kNotAvailable}}}, .postfilter = {.status = kStillNotSchedulable}},
    });
  }
  cases.push_back({
      // The deallocation is written at the version the cycle saw.
      .name = "wrong-topology-changed-before-postfilter",
      .pod = pod,
      .claims = {AllocatedClaimWithWrongTopology()},
      .prepare_postfilter = {{kClaimName, [](api::ResourceClaim& c) { c.metadata.labels.Set("a", "b"); }}},
      .want = {.filter = {{kNodeName, {.status = kNotAvailable}}},
               .postfilter = {.status = Status::Error(
                                  "Operation cannot be fulfilled on resourceclaims.resource.k8s.io "
                                  "\"my-pod-my-resource\": the object has been modified; please apply your changes "
                                  "to the latest version and try again")}},
  });
  cases.push_back({
      .name = "allocated-elsewhere-in-the-meantime",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {LargeWorkerNodeSlice()},
      .prepare_prebind = {{kClaimName,
                           [](api::ResourceClaim& c) { c.allocation = MakeAllocation("req-1", "instance-4"); }}},
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .prebind = {.status = Status::Error(
                               "claim default/my-pod-my-resource got allocated elsewhere in the meantime"),
                           .assumed = std::vector<ClaimPtr>{}}},
  });
  cases.push_back({
      .name = "deleted-in-the-meantime",
      .pod = pod,
      .claims = {PendingClaim()},
      .classes = {DeviceClass()},
      .slices = {WorkerNodeSlice()},
      .prepare_prebind = {{kClaimName, [](api::ResourceClaim& c) { c.metadata.deletion_timestamp_ns = 1; }}},
      .want = {.reserve = {.assumed = std::vector{InUseClaim()}},
               .prebind = {.status = Status::Error("claim default/my-pod-my-resource got deleted in the meantime")}},
  });
  cases.push_back({
      .name = "two-claims",
      .pod = PodWithTwoClaimNames(),
      .claims = {PendingClaim(), PendingClaim2()},
      .classes = {DeviceClass()},
      .slices = {LargeWorkerNodeSlice()},
      .want = {.reserve = {.assumed =
                               std::vector{InUseClaim(), ReserveFor(WithAllocation(
                                                             PendingClaim2(), MakeAllocation("req-1", "instance-2")))}},
               .prebind = {.changes = {InUseClaim(), ReserveFor(WithAllocation(PendingClaim2(),
                                                                               MakeAllocation("req-1", "instance-2")))},
                           .assumed = std::vector<ClaimPtr>{}}},
  });
  {
    auto allocated2 = ReserveFor(WithAllocation(PendingClaim2(), MakeAllocation("req-1", "instance-2")));
    auto unreserved = AllocatedClaim();
    cases.push_back({
        // The first claim is written, the second is not: Unreserve takes the pod out of the
        // first's reservedFor (its allocation stays: the resourceclaim controller frees claims
        // nobody uses) and restores the second.
        .name = "bind-failure-of-second-claim",
        .pod = PodWithTwoClaimNames(),
        .claims = {PendingClaim(), PendingClaim2()},
        .classes = {DeviceClass()},
        .slices = {LargeWorkerNodeSlice()},
        .write_error = Status::Error("claim bind error"),
        .fail_only = {kClaimName2},
        .want = {.reserve = {.assumed = std::vector{InUseClaim(), allocated2}},
                 .prebind = {.status = Status::Error("add allocation and reservation to claim "
                                                     "default/my-pod-my-resource-2: claim bind error"),
                             .changes = {InUseClaim()},
                             .assumed = std::vector{allocated2}},
                 .unreserve_after_bind_failure = Result{.changes = {unreserved}, .assumed = std::vector<ClaimPtr>{}}},
    });
  }
  cases.push_back({
      // Someone changed the second claim after Filter: its allocation cannot be assumed over the
      // newer version, Reserve fails and takes back what it assumed (kubesched's; upstream's
      // Reserve only records the allocation in flight).
      .name = "reserve-claim-changed-since-filter",
      .pod = PodWithTwoClaimNames(),
      .claims = {PendingClaim(), PendingClaim2()},
      .classes = {DeviceClass()},
      .slices = {LargeWorkerNodeSlice()},
      .prepare_reserve = {{kClaimName2, [](api::ResourceClaim& c) { c.metadata.labels.Set("a", "b"); }}},
      .want = {.reserve = {.status = Status::Error("ResourceClaim \"default/my-pod-my-resource-2\": out of sync "
                                                   "(cached version 103, assumed from 102)"),
                           .assumed = std::vector<ClaimPtr>{}}},
  });
  return cases;
}

TEST(DynamicResourcesTest, Plugin) {
  for (const Case& c : PluginCases()) {
    SCOPED_TRACE(c.name + (c.differs.empty() ? "" : " (differs from upstream: " + c.differs + ")"));
    Runner(c).Run();
  }
}

// upstream's CEL runtime error cases. Upstream's master words the error
// `... selector #0 on device some-driver/worker/instance-1: CEL runtime error: no such key: healthy.
// consider using CEL optional chaining ...`; kubesched's allocator and CEL library (not under test
// here) leave out the device and the hint, so only the stable parts are compared.
TEST(DynamicResourcesTest, CELRuntimeErrors) {
  struct ErrorCase {
    std::string name;
    std::vector<NodePtr> nodes;
    std::vector<ClaimPtr> claims;
    std::vector<ClassPtr> classes;
    std::vector<SlicePtr> slices;
    std::string want_prefix;
  };
  const std::string no_such_key = std::string("CEL runtime error: no such key: ") + kAttrName;
  const std::vector<ErrorCase> cases = {
      {"claim-parameters-CEL-runtime-error",
       {WorkerNode()},
       {BreakCELInClaim(PendingClaim())},
       {DeviceClass()},
       {WorkerNodeSlice()},
       "claim default/my-pod-my-resource: selector #0"},
      {"class-parameters-CEL-runtime-error",
       {WorkerNode()},
       {PendingClaim()},
       {BreakCELInClass(DeviceClass())},
       {WorkerNodeSlice()},
       "class my-resource-class: selector #0"},
      // Not scheduled on worker-2 although its device has the attribute: something is wrong with
      // the pod's claim, and scheduling it would hide that.
      {"CEL-runtime-error-for-one-of-two-nodes",
       {WorkerNode(), WorkerNode2()},
       {BreakCELInClaim(PendingClaim())},
       {DeviceClass()},
       {WorkerNodeSlice(), HealthySlice(kNode2Name)},
       "claim default/my-pod-my-resource: selector #0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    dt::DraTestHandle handle(c.nodes);
    for (const auto& claim : c.claims) handle.Add(std::make_shared<api::ResourceClaim>(*claim));
    for (const auto& cls : c.classes) handle.Add(std::make_shared<api::DeviceClass>(*cls));
    for (const auto& slice : c.slices) handle.Add(std::make_shared<api::ResourceSlice>(*slice));
    DynamicResources plugin(DynamicResourcesArgs{}, handle);
    framework::CycleState state;
    auto pod_info = framework::PodInfo::Create(PodWithClaimName());
    ASSERT_TRUE(plugin.PreFilter(state, *pod_info, handle.fake().snapshot().List()).second.IsSuccess());
    // Filter on the first node: an Error, which aborts the pod's scheduling cycle.
    const Status status = plugin.Filter(state, *pod_info, *handle.fake().snapshot().List().front());
    EXPECT_EQ(status.code(), Code::kError);
    EXPECT_THAT(status.Message(), ::testing::StartsWith(c.want_prefix));
    EXPECT_THAT(status.Message(), ::testing::HasSubstr(no_such_key));
  }
}

// PostFilter without anything PreFilter recorded: Unschedulable without a reason, as upstream's
// fast path for pods without claims (state.claims.empty()), so that every other pending pod's
// message stays as upstream prints it (no DynamicResources text).
TEST(DynamicResourcesTest, PostFilterWithoutClaims) {
  dt::DraTestHandle handle({WorkerNode()});
  DynamicResources plugin(DynamicResourcesArgs{}, handle);
  framework::CycleState state;
  auto pod_info = kt::MakePod().Name("foo").Info();
  EXPECT_TRUE(plugin.PreFilter(state, *pod_info, handle.fake().snapshot().List()).second.IsSkip());
  const Status post = plugin.PostFilter(state, *pod_info, framework::NodeToStatus()).second;
  EXPECT_EQ(post.code(), Code::kUnschedulable);
  EXPECT_EQ(post.Message(), "");
  // Reserve, Unreserve and PreBind have nothing to do either.
  EXPECT_TRUE(plugin.Reserve(state, *pod_info, kNodeName).IsSuccess());
  plugin.Unreserve(state, *pod_info, kNodeName);
  EXPECT_TRUE(plugin.PreBind(state, *pod_info, kNodeName).IsSuccess());
  EXPECT_TRUE(handle.claim_client().writes().empty());
}

// The claim a pod's Reserve allocated stays taken until the informer delivers the allocated
// version (upstream's postbind assumedClaim), also across a newer version that only changed the
// claim's metadata (upstream: the allocation stays in flight until PreBind or Unreserve).
TEST(DynamicResourcesTest, AssumedAllocationUntilInformerCatchesUp) {
  dt::DraTestHandle handle({WorkerNode()});
  handle.Add(PendingClaim());
  auto other_pending = Owned(MakeClaim("other-claim"));
  handle.Add(other_pending);
  handle.Add(DeviceClass());
  handle.Add(WorkerNodeSlice());
  handle.claim_client().deliver_writes = false;
  DynamicResources plugin(DynamicResourcesArgs{}, handle);
  const auto nodes = handle.fake().snapshot().List();

  framework::CycleState state;
  auto pod_info = framework::PodInfo::Create(PodWithClaimName());
  ASSERT_TRUE(plugin.PreFilter(state, *pod_info, nodes).second.IsSuccess());
  ASSERT_TRUE(plugin.Filter(state, *pod_info, *nodes[0]).IsSuccess());
  ASSERT_TRUE(plugin.Reserve(state, *pod_info, kNodeName).IsSuccess());

  // A label changed by someone else before PreBind: instance-1 stays taken.
  handle.claim_client().Update(kNamespace, kClaimName, [](api::ResourceClaim& c) { c.metadata.labels.Set("a", "b"); });
  EXPECT_EQ(handle.dra().Allocated()->allocated_devices.size(), 1u);
  auto other_pod = kt::MakePod().Name("other").Namespace(kNamespace).Obj();
  other_pod->spec.resource_claims = {ByName(kResourceName, "other-claim")};
  auto other_info = framework::PodInfo::Create(other_pod);
  {
    framework::CycleState other_state;
    ASSERT_TRUE(plugin.PreFilter(other_state, *other_info, nodes).second.IsSuccess());
    EXPECT_EQ(plugin.Filter(other_state, *other_info, *nodes[0]), Unresolvable("cannot allocate all claims"));
  }

  // PreBind writes; the informer has not delivered the write yet: still assumed.
  ASSERT_TRUE(plugin.PreBind(state, *pod_info, kNodeName).IsSuccess());
  ASSERT_EQ(handle.claim_client().writes().size(), 1u);
  EXPECT_NE(handle.dra().Claim(kNamespace, kClaimName), handle.dra().ApiClaim(kNamespace, kClaimName));
  EXPECT_EQ(handle.dra().Allocated()->allocated_devices.size(), 1u);

  // Delivered: the informer's version is the claim, with the same device allocated.
  handle.claim_client().Deliver();
  EXPECT_EQ(handle.dra().Claim(kNamespace, kClaimName), handle.dra().ApiClaim(kNamespace, kClaimName));
  EXPECT_EQ(Render(*handle.dra().Claim(kNamespace, kClaimName)), Render(*InUseClaim()));
  EXPECT_EQ(handle.dra().Allocated()->allocated_devices.size(), 1u);
}

// Two pods sharing one claim in consecutive cycles: the second uses the allocation the first's
// Reserve assumed, whichever PreBind writes first.
TEST(DynamicResourcesTest, SharedClaimAllocatedOnce) {
  dt::DraTestHandle handle({WorkerNode()});
  handle.Add(MakeClaim());  // a claim that pods refer to by name, owned by none
  handle.Add(DeviceClass());
  handle.Add(LargeWorkerNodeSlice());
  DynamicResources plugin(DynamicResourcesArgs{}, handle);
  const auto nodes = handle.fake().snapshot().List();
  auto pod_a = PodWithClaimName();
  auto pod_b = kt::MakePod().Name("pod-b").Namespace(kNamespace).UID("5678").Obj();
  pod_b->spec.resource_claims = {ByName(kResourceName, kClaimName)};
  auto info_a = framework::PodInfo::Create(pod_a);
  auto info_b = framework::PodInfo::Create(pod_b);

  framework::CycleState state_a;
  ASSERT_TRUE(plugin.PreFilter(state_a, *info_a, nodes).second.IsSuccess());
  ASSERT_TRUE(plugin.Filter(state_a, *info_a, *nodes[0]).IsSuccess());
  ASSERT_TRUE(plugin.Reserve(state_a, *info_a, kNodeName).IsSuccess());

  framework::CycleState state_b;
  ASSERT_TRUE(plugin.PreFilter(state_b, *info_b, nodes).second.IsSuccess());
  ASSERT_TRUE(plugin.Filter(state_b, *info_b, *nodes[0]).IsSuccess());
  ASSERT_TRUE(plugin.Reserve(state_b, *info_b, kNodeName).IsSuccess());
  ASSERT_TRUE(plugin.PreBind(state_b, *info_b, kNodeName).IsSuccess());  // writes A's allocation
  ASSERT_TRUE(plugin.PreBind(state_a, *info_a, kNodeName).IsSuccess());  // adds A's reservation

  auto want = WithAllocation(MakeClaim(), MakeAllocation());
  ReserveFor(want, "pod-b", "5678");
  ReserveFor(want);
  EXPECT_EQ(Render(*handle.dra().ApiClaim(kNamespace, kClaimName)), Render(*want));
  EXPECT_EQ(handle.dra().Claim(kNamespace, kClaimName), handle.dra().ApiClaim(kNamespace, kClaimName));
  EXPECT_EQ(handle.dra().Allocated()->allocated_devices.size(), 1u);
}

// --- Queueing hints -----------------------------------------------------------------------------

api::ResourceObject AsObject(const ClaimPtr& c) { return std::shared_ptr<const api::ResourceClaim>(c); }

// upstream's TestIsSchedulableAfterClaimChange. As the scheduler does, the change is applied to
// the DRA cache before the hint is asked.
TEST(DynamicResourcesHints, IsSchedulableAfterClaimChange) {
  struct HintCase {
    std::string name;
    PodPtr pod;
    std::vector<ClaimPtr> claims;  // in the cache before the change
    std::optional<api::ResourceObject> old_obj;
    std::optional<api::ResourceObject> new_obj;
    QueueingHint want;
  };
  auto wrong_owner = AllocatedClaim();
  wrong_owner->metadata.owner_references[0].uid += "123";
  auto unrelated = AllocatedClaim();
  unrelated->metadata.name += "-foo";
  auto with_finalizer = WithFinalizer(PendingClaim());
  auto status_changed = WithAllocation(PendingClaim(), api::AllocationResult{});
  const api::ResourceObject not_a_claim = std::shared_ptr<const api::DeviceClass>(DeviceClass());
  const std::vector<HintCase> cases = {
      // upstream never asks for deletes; kubesched does (no finalizer), and this pod waits for
      // its own claim to be created anyway.
      {"skip-deletes", PodWithClaimTemplate(), {}, AsObject(AllocatedClaim()), std::nullopt, QueueingHint::kSkip},
      {"backoff-wrong-new-object", PodWithClaimTemplate(), {}, std::nullopt, not_a_claim, QueueingHint::kQueue},
      {"skip-wrong-claim", PodWithClaimTemplate(), {}, std::nullopt, AsObject(wrong_owner), QueueingHint::kSkip},
      {"skip-unrelated-claim",
       PodWithClaimTemplate(),
       {AllocatedClaim()},
       std::nullopt,
       AsObject(unrelated),
       QueueingHint::kSkip},
      {"queue-on-add", PodWithClaimName(), {}, std::nullopt, AsObject(PendingClaim()), QueueingHint::kQueue},
      {"backoff-wrong-old-object",
       PodWithClaimName(),
       {PendingClaim()},
       not_a_claim,
       AsObject(PendingClaim()),
       QueueingHint::kQueue},
      {"skip-adding-finalizer",
       PodWithClaimName(),
       {PendingClaim()},
       AsObject(PendingClaim()),
       AsObject(with_finalizer),
       QueueingHint::kSkip},
      {"queue-on-status-change",
       PodWithClaimName(),
       {PendingClaim()},
       AsObject(PendingClaim()),
       AsObject(status_changed),
       QueueingHint::kQueue},
      {"claim-deallocate",
       PodWithClaimName(),
       {PendingClaim(), OtherAllocatedClaim()},
       AsObject(OtherAllocatedClaim()),
       AsObject(OtherClaim()),
       QueueingHint::kQueue},
      // kubesched's: claim deletes.
      {"queue-on-delete-of-allocated-claim",
       PodWithClaimName(),
       {PendingClaim(), OtherAllocatedClaim()},
       AsObject(OtherAllocatedClaim()),
       std::nullopt,
       QueueingHint::kQueue},
      {"skip-delete-of-unallocated-claim",
       PodWithClaimName(),
       {PendingClaim(), OtherClaim()},
       AsObject(OtherClaim()),
       std::nullopt,
       QueueingHint::kSkip},
      {"skip-delete-of-own-claim",
       PodWithClaimName(),
       {AllocatedClaim()},
       AsObject(AllocatedClaim()),
       std::nullopt,
       QueueingHint::kSkip},
      {"skip-unrelated-reservation",
       PodWithClaimName(),
       {PendingClaim(), OtherAllocatedClaim()},
       AsObject(OtherAllocatedClaim()),
       AsObject(ReserveFor(OtherAllocatedClaim(), "other", "uid-other")),
       QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    dt::DraTestHandle handle;
    for (const auto& claim : c.claims) handle.Add(std::make_shared<api::ResourceClaim>(*claim));
    // The scheduler's informer handler: the cache first, then the queue's hints.
    if (c.new_obj) {
      handle.dra().Apply(*c.new_obj);
    } else if (c.old_obj) {
      handle.dra().Remove(*c.old_obj);
    }
    framework::EventObjects event;
    event.old_resource = c.old_obj ? &*c.old_obj : nullptr;
    event.new_resource = c.new_obj ? &*c.new_obj : nullptr;
    EXPECT_EQ(IsSchedulableAfterClaimChange(*c.pod, event, handle.dra()), c.want);
  }
}

// upstream's TestIsSchedulableAfterTargetPodUpdate.
TEST(DynamicResourcesHints, IsSchedulableAfterPodChange) {
  struct HintCase {
    std::string name;
    std::vector<ClaimPtr> claims;
    PodPtr pod;
    PodPtr new_pod;
    QueueingHint want;
  };
  auto incomplete = PodWithTwoClaimTemplates();
  incomplete->status.resource_claim_statuses = {{kResourceName, kClaimName}};  // one of two claims created
  auto other = PodWithClaimTemplateInStatus();
  other->metadata.uid = "other-uid";
  const std::vector<HintCase> cases = {
      {"backoff-wrong-new-object", {}, PodWithClaimTemplate(), nullptr, QueueingHint::kQueue},
      {"complete", {PendingClaim()}, PodWithClaimTemplate(), PodWithClaimTemplateInStatus(), QueueingHint::kQueue},
      {"missing-claim", {}, PodWithClaimTemplate(), PodWithClaimTemplateInStatus(), QueueingHint::kSkip},
      {"incomplete", {PendingClaim()}, PodWithTwoClaimTemplates(), incomplete, QueueingHint::kSkip},
      // kubesched's: its event is any update of an unscheduled pod.
      {"another-pod", {PendingClaim()}, PodWithClaimTemplate(), other, QueueingHint::kSkip},
      {"statuses-unchanged",
       {PendingClaim()},
       PodWithClaimTemplateInStatus(),
       PodWithClaimTemplateInStatus(),
       QueueingHint::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    dt::DraTestHandle handle;
    for (const auto& claim : c.claims) handle.Add(std::make_shared<api::ResourceClaim>(*claim));
    framework::EventObjects event;
    event.old_pod = c.pod.get();
    event.new_pod = c.new_pod.get();
    EXPECT_EQ(IsSchedulableAfterPodChange(*c.pod, event, handle.dra()), c.want);
  }
}

TEST(DynamicResourcesHints, EventsToRegister) {
  dt::DraTestHandle handle;
  handle.Add(PendingClaim());
  DynamicResources plugin(DynamicResourcesArgs{}, handle);
  const auto events = plugin.EventsToRegister();
  std::map<framework::EventResource, framework::ActionType> registered;
  for (const auto& e : events) registered[e.event.resource] |= e.event.action;
  namespace action = framework::action;
  using framework::EventResource;
  EXPECT_EQ(registered.size(), 5u);
  EXPECT_EQ(registered[EventResource::kResourceClaim], action::kAdd | action::kUpdate | action::kDelete);
  EXPECT_EQ(registered[EventResource::kResourceSlice], action::kAdd | action::kUpdate);
  EXPECT_EQ(registered[EventResource::kDeviceClass], action::kAdd | action::kUpdate);
  EXPECT_EQ(registered[EventResource::kNode], action::kAdd | action::kUpdateNodeLabel);
  EXPECT_EQ(registered[EventResource::kUnscheduledPod], action::kUpdatePodOther);
  // The registered hints read the plugin's DRA lister: the pod's claim was created.
  for (const auto& e : events) {
    if (e.event.resource != EventResource::kResourceClaim) continue;
    const api::ResourceObject added =
        std::shared_ptr<const api::ResourceClaim>(handle.dra().ApiClaim(kNamespace, kClaimName));
    framework::EventObjects event;
    event.new_resource = &added;
    EXPECT_EQ(e.hint(*PodWithClaimName(), event), QueueingHint::kQueue);
  }
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources
