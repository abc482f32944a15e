#include "plugins/dynamic_resources/dynamic_resources.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "plugins/dynamic_resources/allocator.h"
#include "util/go_quote.h"

namespace kubesched::plugins::dynamic_resources {

namespace {

using framework::Status;
using util::GoQuote;

const framework::StateKey kStateKey{"DynamicResources"};

// Where a pod claim's ResourceClaim is named (upstream's resourceclaim.Name): its
// resourceClaimName, or for a template the name the resourceclaim controller recorded in the
// pod's status. nullopt: the template needed no claim (the status entry has no name).
struct ClaimRef {
  std::optional<std::string> name;
  bool must_check_owner = false;
};

std::expected<ClaimRef, std::string> ClaimNameOf(const api::Pod& pod, const api::PodResourceClaim& pc) {
  if (pc.resource_claim_name) return ClaimRef{*pc.resource_claim_name, false};
  for (const api::PodResourceClaimStatus& s : pod.status.resource_claim_statuses) {
    if (s.name == pc.name) return ClaimRef{s.resource_claim_name, true};
  }
  return std::unexpected("pod " + GoQuote(pod.metadata.namespace_ + "/" + pod.metadata.name) +
                         ": ResourceClaim not created yet");
}

// The pod's claims from the DRA cache, in the order of spec.resourceClaims (those that need a
// claim), or upstream's reason why the pod cannot be scheduled yet.
std::expected<std::vector<std::shared_ptr<const api::ResourceClaim>>, std::string> PodClaims(
    const api::Pod& pod, const framework::DraLister& dra) {
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
  for (const api::PodResourceClaim& pc : pod.spec.resource_claims) {
    auto ref = ClaimNameOf(pod, pc);
    if (!ref) return std::unexpected(ref.error());
    if (!ref->name) continue;
    auto claim = dra.Claim(pod.metadata.namespace_, *ref->name);
    if (!claim) return std::unexpected("resourceclaim.resource.k8s.io " + GoQuote(*ref->name) + " not found");
    if (claim->metadata.deletion_timestamp_ns) {
      return std::unexpected("resourceclaim " + GoQuote(claim->metadata.name) + " is being deleted");
    }
    if (ref->must_check_owner) {
      const bool owned =
          std::any_of(claim->metadata.owner_references.begin(), claim->metadata.owner_references.end(),
                      [&](const api::OwnerReference& r) { return r.controller && r.uid == pod.metadata.uid; });
      if (!owned) {
        return std::unexpected("ResourceClaim " + claim->Key() + " was not created for pod " + pod.metadata.namespace_ +
                               "/" + pod.metadata.name + " (pod is not owner)");
      }
    }
    claims.push_back(std::move(claim));
  }
  return claims;
}

// What Filter finds, per node and per claim; shared by the clones of a cycle's state (Filter runs
// concurrently over nodes).
struct NodeAllocations {
  std::mutex mu;
  std::map<std::string, std::vector<api::AllocationResult>, std::less<>> by_node;  // guarded by mu
  //! Indexes into StateData::claims of allocated claims that some node could not use (upstream's
  //! unavailableClaims): what PostFilter may deallocate.
  std::set<size_t> unavailable;  // guarded by mu
};

struct StateData final : framework::StateData {
  //! The pod's claims, in spec order.
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
  //! Indexes into claims of those to allocate.
  std::vector<size_t> to_allocate;
  std::vector<const api::ResourceClaim*> to_allocate_ptrs;
  // What the allocator reads; kept alive here for the cycle.
  std::shared_ptr<const std::vector<std::shared_ptr<const api::ResourceSlice>>> slices;
  std::shared_ptr<const framework::AllocatedState> allocated;
  std::map<std::string, std::shared_ptr<const api::DeviceClass>, std::less<>> classes;
  std::shared_ptr<const Allocator> allocator;
  std::shared_ptr<NodeAllocations> node_allocations = std::make_shared<NodeAllocations>();
  //! Claims Reserve assumed, and those PreBind wrote the pod's reservation into.
  std::vector<std::shared_ptr<const api::ResourceClaim>> assumed;
  std::vector<std::shared_ptr<const api::ResourceClaim>> written;

  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<StateData>(*this); }
};

api::ResourceClaimConsumerReference PodReference(const api::Pod& pod) {
  return api::ResourceClaimConsumerReference{"", "pods", pod.metadata.name, pod.metadata.uid};
}

// Whether two allocations name the same devices for the same nodes (what a pod sharing a claim may
// have written before this pod's PreBind).
bool SameAllocation(const api::AllocationResult& a, const api::AllocationResult& b) {
  return a.devices == b.devices && a.node_selector == b.node_selector;
}

bool SameConfig(const std::vector<api::DeviceAllocationConfiguration>& a,
                const std::vector<api::DeviceAllocationConfiguration>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const api::DeviceAllocationConfiguration& x, const api::DeviceAllocationConfiguration& y) {
                      return x.source == y.source && x.requests == y.requests && x.opaque.driver == y.opaque.driver &&
                             x.opaque.parameters_json == y.opaque.parameters_json;
                    });
}

// Whether a claim's status is unchanged (upstream compares Status with Semantic.DeepEqual).
bool SameStatus(const api::ResourceClaim& a, const api::ResourceClaim& b) {
  if (a.reserved_for != b.reserved_for || a.allocation.has_value() != b.allocation.has_value()) return false;
  return !a.allocation ||
         (SameAllocation(*a.allocation, *b.allocation) && SameConfig(a.allocation->config, b.allocation->config));
}

const api::ResourceClaim* ClaimOf(const api::ResourceObject* o) {
  if (o == nullptr) return nullptr;
  auto* p = std::get_if<std::shared_ptr<const api::ResourceClaim>>(o);
  return p != nullptr ? p->get() : nullptr;
}

// The device class names a claim's requests use.
void CollectClassNames(const api::ResourceClaim& claim, std::vector<std::pair<std::string, std::string>>& out) {
  for (const api::DeviceRequest& r : claim.spec.requests) {
    if (r.exactly) out.emplace_back(r.name, r.exactly->device_class_name);
    for (const api::DeviceSubRequest& s : r.first_available)
      out.emplace_back(r.name + "/" + s.name, s.device_class_name);
  }
}

}  // namespace

DynamicResources::DynamicResources(DynamicResourcesArgs args, framework::Handle& handle)
    : args_(std::move(args)), handle_(handle) {}

Status DynamicResources::PreEnqueue(const api::Pod& pod) {
  if (pod.spec.resource_claims.empty()) return Status::Success();
  auto claims = PodClaims(pod, handle_.Dra());
  if (!claims) return Status::UnschedulableAndUnresolvable(claims.error());
  return Status::Success();
}

std::pair<framework::PreFilterResult, Status> DynamicResources::PreFilter(framework::CycleState& state,
                                                                          const framework::PodInfo& pod_info,
                                                                          std::span<const framework::NodeInfo* const>) {
  const api::Pod& pod = pod_info.pod();
  if (pod.spec.resource_claims.empty()) return {{}, Status::Skip()};
  const framework::DraLister& dra = handle_.Dra();
  auto claims = PodClaims(pod, dra);
  if (!claims) return {{}, Status::UnschedulableAndUnresolvable(claims.error())};
  if (claims->empty()) return {{}, Status::Skip()};

  auto data = std::make_unique<StateData>();
  data->claims = std::move(*claims);
  std::vector<std::pair<std::string, std::string>> class_names;
  for (size_t i = 0; i < data->claims.size(); ++i) {
    const api::ResourceClaim& claim = *data->claims[i];
    if (claim.allocation) {
      // Shared by up to kResourceClaimReservedForMaxSize pods.
      if (!claim.IsReservedFor(pod.metadata.uid) &&
          claim.reserved_for.size() >= api::kResourceClaimReservedForMaxSize) {
        return {{}, Status::UnschedulableAndUnresolvable("resourceclaim in use")};
      }
      continue;
    }
    data->to_allocate.push_back(i);
    data->to_allocate_ptrs.push_back(data->claims[i].get());
    CollectClassNames(claim, class_names);
  }
  if (!data->to_allocate.empty()) {
    // A missing class cannot be fixed by any node: the pod waits for a DeviceClass event.
    for (const auto& [request, class_name] : class_names) {
      if (data->classes.contains(class_name)) continue;
      auto dc = dra.Class(class_name);
      if (!dc) {
        return {{},
                Status::UnschedulableAndUnresolvable("request " + request + ": device class " + class_name +
                                                     " does not exist")};
      }
      data->classes.emplace(class_name, std::move(dc));
    }
    data->slices = dra.Slices();
    std::shared_ptr<const Allocator::Index> index;
    {
      std::lock_guard lock(slice_index_mu_);
      if (indexed_slices_ != data->slices || !slice_index_) {
        std::vector<const api::ResourceSlice*> slice_ptrs;
        slice_ptrs.reserve(data->slices->size());
        for (const auto& s : *data->slices) slice_ptrs.push_back(s.get());
        slice_index_ = Allocator::IndexSlices(slice_ptrs);
        indexed_slices_ = data->slices;
      }
      index = slice_index_;
    }
    data->allocated = dra.Allocated();
    const auto* classes = &data->classes;
    data->allocator = std::make_shared<const Allocator>(
        *data->allocated, std::move(index),
        [classes](std::string_view name) -> const api::DeviceClass* {
          auto it = classes->find(name);
          return it == classes->end() ? nullptr : it->second.get();
        },
        cel_cache_);
  }
  state.Write(kStateKey, std::move(data));
  return {{}, Status::Success()};
}

Status DynamicResources::Filter(const framework::CycleState& state, const framework::PodInfo&,
                                const framework::NodeInfo& node_info) {
  auto* data = state.Get<StateData>(kStateKey);
  if (data == nullptr) return Status::Error("reading \"DynamicResources\" from cycle state: not found");
  const api::Node& node = *node_info.node();
  std::vector<size_t> unavailable;
  for (size_t i = 0; i < data->claims.size(); ++i) {
    const api::ResourceClaim& claim = *data->claims[i];
    if (!claim.allocation || !claim.allocation->node_selector) continue;
    if (!claim.allocation->node_selector->Matches(node.metadata.name, node.metadata.labels)) unavailable.push_back(i);
  }
  AllocateOutcome outcome;
  if (!data->to_allocate.empty()) {
    // As upstream, the allocator runs before the unavailable claims are reported: its errors win.
    outcome = data->allocator->Allocate(node, data->to_allocate_ptrs);
    if (outcome.error) return Status::Error(*outcome.error);
    if (outcome.unsatisfiable || outcome.allocations.size() != data->to_allocate.size()) {
      return Status::UnschedulableAndUnresolvable(outcome.reason.empty() ? std::string(kErrReasonCannotAllocate)
                                                                         : outcome.reason);
    }
  }
  if (unavailable.empty() && data->to_allocate.empty()) return Status::Success();
  std::lock_guard lock(data->node_allocations->mu);
  if (!unavailable.empty()) {
    data->node_allocations->unavailable.insert(unavailable.begin(), unavailable.end());
    return Status::UnschedulableAndUnresolvable(std::string(kErrReasonNotAvailable));
  }
  data->node_allocations->by_node[node.metadata.name] = std::move(outcome.allocations);
  return Status::Success();
}

const std::vector<api::AllocationResult>* FilteredAllocations(const framework::CycleState& state,
                                                              std::string_view node_name) {
  auto* data = state.Get<StateData>(kStateKey);
  if (data == nullptr) return nullptr;
  std::lock_guard lock(data->node_allocations->mu);
  auto it = data->node_allocations->by_node.find(node_name);
  return it == data->node_allocations->by_node.end() ? nullptr : &it->second;
}

std::pair<framework::PostFilterResult, Status> DynamicResources::PostFilter(framework::CycleState& state,
                                                                            const framework::PodInfo& pod_info,
                                                                            const framework::NodeToStatus&) {
  auto* data = state.Get<StateData>(kStateKey);
  // A pod without claims: nothing to free, and no reason to add to its message (as upstream's
  // fast path).
  if (data == nullptr || data->claims.empty()) return {{}, Status(framework::Code::kUnschedulable)};
  std::set<size_t> unavailable;
  {
    std::lock_guard lock(data->node_allocations->mu);
    unavailable = data->node_allocations->unavailable;
  }
  // An allocation that some node could not use and that no other pod uses (left by an attempt
  // that failed after PreBind, or made for a node that is gone) may pin the pod to nodes that do
  // not fit: free it so that the next attempt can allocate anew. Upstream picks one at random;
  // here the first, in spec order.
  const std::string& uid = pod_info.pod().metadata.uid;
  for (size_t i : unavailable) {
    const api::ResourceClaim& claim = *data->claims[i];
    const bool unused =
        claim.reserved_for.empty() || (claim.reserved_for.size() == 1 && claim.reserved_for[0].uid == uid);
    if (!unused) continue;
    api::ResourceClaim freed = claim;
    freed.allocation.reset();
    freed.reserved_for.clear();
    if (Status s = handle_.client().UpdateResourceClaimStatus(freed); !s.IsSuccess()) {
      return {{}, Status::Error(s.Message())};
    }
    return {{}, Status::Unschedulable("deallocation of ResourceClaim completed")};
  }
  return {{}, Status::Unschedulable("still not schedulable")};
}

Status DynamicResources::Reserve(framework::CycleState& state, const framework::PodInfo& pod_info,
                                 const std::string& node_name) {
  auto* data = state.Get<StateData>(kStateKey);
  if (data == nullptr) return Status::Success();  // PreFilter skipped: no claims
  if (data->to_allocate.empty()) return Status::Success();
  std::vector<api::AllocationResult> allocations;
  {
    std::lock_guard lock(data->node_allocations->mu);
    auto it = data->node_allocations->by_node.find(node_name);
    if (it == data->node_allocations->by_node.end()) {
      return Status::Error("no allocation recorded for node " + GoQuote(node_name));
    }
    allocations = it->second;
  }
  framework::DraLister& dra = handle_.Dra();
  for (size_t k = 0; k < data->to_allocate.size(); ++k) {
    auto claim = std::make_shared<api::ResourceClaim>(*data->claims[data->to_allocate[k]]);
    claim->allocation = std::move(allocations[k]);
    claim->reserved_for.push_back(PodReference(pod_info.pod()));
    if (Status s = dra.AssumeClaim(claim); !s.IsSuccess()) {
      Unreserve(state, pod_info, node_name);
      return s;
    }
    data->assumed.push_back(std::move(claim));
  }
  return Status::Success();
}

void DynamicResources::Unreserve(framework::CycleState& state, const framework::PodInfo& pod_info, const std::string&) {
  auto* data = state.Get<StateData>(kStateKey);
  if (data == nullptr) return;
  framework::DraLister& dra = handle_.Dra();
  for (const auto& claim : data->assumed) dra.RestoreClaim(claim->metadata.namespace_, claim->metadata.name);
  data->assumed.clear();
  // A reservation PreBind wrote goes again (the resourceclaim controller then deallocates a claim
  // that nobody uses).
  const std::string& uid = pod_info.pod().metadata.uid;
  for (const auto& written : data->written) {
    auto current = dra.ApiClaim(written->metadata.namespace_, written->metadata.name);
    if (!current || !current->IsReservedFor(uid)) continue;
    api::ResourceClaim updated = *current;
    std::erase_if(updated.reserved_for, [&](const api::ResourceClaimConsumerReference& r) { return r.uid == uid; });
    (void)handle_.client().UpdateResourceClaimStatus(updated);
  }
  data->written.clear();
}

Status DynamicResources::PreBind(framework::CycleState& state, const framework::PodInfo& pod_info, const std::string&) {
  auto* data = state.Get<StateData>(kStateKey);
  if (data == nullptr) return Status::Success();
  const api::Pod& pod = pod_info.pod();
  framework::DraLister& dra = handle_.Dra();
  for (size_t i = 0; i < data->claims.size(); ++i) {
    const api::ResourceClaim& seen = *data->claims[i];
    // Written over the informer's version, at its resourceVersion: a conflict means someone else
    // changed the claim meanwhile, and the pod is retried.
    auto api_claim = dra.ApiClaim(seen.metadata.namespace_, seen.metadata.name);
    if (!api_claim) return Status::Error("resourceclaim.resource.k8s.io " + GoQuote(seen.metadata.name) + " not found");
    if (api_claim->metadata.deletion_timestamp_ns) {
      return Status::Error("claim " + seen.Key() + " got deleted in the meantime");
    }
    api::ResourceClaim updated = *api_claim;
    // The allocation this pod's Reserve made, if it made one.
    const api::AllocationResult* mine = nullptr;
    if (auto it = std::find(data->to_allocate.begin(), data->to_allocate.end(), i); it != data->to_allocate.end()) {
      const auto k = static_cast<size_t>(it - data->to_allocate.begin());
      if (k >= data->assumed.size()) return Status::Error("claim " + seen.Key() + ": no allocation was reserved");
      mine = &*data->assumed[k]->allocation;
    }
    const bool allocating = !updated.allocation;
    if (mine != nullptr && updated.allocation && !SameAllocation(*updated.allocation, *mine)) {
      // Another scheduler (or a controller) allocated it: the node chosen may not fit that.
      return Status::Error("claim " + seen.Key() + " got allocated elsewhere in the meantime");
    }
    if (!updated.allocation) {
      if (mine != nullptr) {
        updated.allocation = *mine;
      } else if (auto latest = dra.Claim(seen.metadata.namespace_, seen.metadata.name); latest && latest->allocation) {
        updated.allocation = latest->allocation;  // allocated by another pod sharing it, not yet written
      } else {
        return Status::Error("claim " + seen.Key() + " got deallocated elsewhere in the meantime");
      }
    }
    if (updated.IsReservedFor(pod.metadata.uid) && !allocating) continue;
    if (!updated.IsReservedFor(pod.metadata.uid)) updated.reserved_for.push_back(PodReference(pod));
    if (Status s = handle_.client().UpdateResourceClaimStatus(updated); !s.IsSuccess()) {
      return Status::Error((allocating ? "add allocation and reservation to claim " : "add reservation to claim ") +
                           seen.Key() + ": " + s.Message());
    }
    data->written.push_back(std::make_shared<api::ResourceClaim>(std::move(updated)));
  }
  return Status::Success();
}

framework::QueueingHint IsSchedulableAfterClaimChange(const api::Pod& pod, const framework::EventObjects& event,
                                                      const framework::DraLister& dra) {
  const api::ResourceClaim* old_claim = ClaimOf(event.old_resource);
  const api::ResourceClaim* new_claim = ClaimOf(event.new_resource);
  if ((event.old_resource != nullptr && old_claim == nullptr) ||
      (event.new_resource != nullptr && new_claim == nullptr) || (old_claim == nullptr && new_claim == nullptr)) {
    return framework::QueueingHint::kQueue;  // not a claim: upstream's error, which queues
  }
  // Until every claim of the pod exists (and is the pod's), only the pod's own events help.
  auto claims = PodClaims(pod, dra);
  if (!claims) return framework::QueueingHint::kSkip;
  // Devices freed by a deallocated (or, kubesched, deleted) claim may be what the pod waits for.
  if (old_claim != nullptr && old_claim->allocation && (new_claim == nullptr || !new_claim->allocation)) {
    return framework::QueueingHint::kQueue;
  }
  if (new_claim == nullptr) return framework::QueueingHint::kSkip;
  const bool uses_claim = std::any_of(claims->begin(), claims->end(), [&](const auto& c) {
    return c->Key() == new_claim->Key() && c->metadata.uid == new_claim->metadata.uid;
  });
  if (!uses_claim) return framework::QueueingHint::kSkip;
  if (old_claim == nullptr) return framework::QueueingHint::kQueue;  // the pod's claim got created
  // A change elsewhere than the status (a finalizer, a label) changes nothing for the pod.
  return SameStatus(*old_claim, *new_claim) ? framework::QueueingHint::kSkip : framework::QueueingHint::kQueue;
}

framework::QueueingHint IsSchedulableAfterPodChange(const api::Pod& pod, const framework::EventObjects& event,
                                                    const framework::DraLister& dra) {
  if (event.new_pod == nullptr) return framework::QueueingHint::kQueue;  // upstream's error path
  if (event.new_pod->metadata.uid != pod.metadata.uid) return framework::QueueingHint::kSkip;
  // Upstream's event (UpdatePodGeneratedResourceClaim) is this change alone.
  if (event.old_pod != nullptr &&
      event.old_pod->status.resource_claim_statuses == event.new_pod->status.resource_claim_statuses) {
    return framework::QueueingHint::kSkip;
  }
  return PodClaims(*event.new_pod, dra) ? framework::QueueingHint::kQueue : framework::QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> DynamicResources::EventsToRegister() const {
  using framework::EventResource;
  namespace action = framework::action;
  return {
      {{EventResource::kResourceClaim, action::kAdd | action::kUpdate | action::kDelete, "ResourceClaimChange"},
       [this](const api::Pod& pod, const framework::EventObjects& event) {
         return IsSchedulableAfterClaimChange(pod, event, handle_.Dra());
       }},
      {{EventResource::kResourceSlice, action::kAdd | action::kUpdate, "ResourceSliceChange"}, nullptr},
      {{EventResource::kDeviceClass, action::kAdd | action::kUpdate, "DeviceClassChange"}, nullptr},
      {{EventResource::kNode, action::kAdd | action::kUpdateNodeLabel, "NodeChange"}, nullptr},
      {{EventResource::kUnscheduledPod, action::kUpdatePodOther, "UnscheduledPodUpdate"},
       [this](const api::Pod& pod, const framework::EventObjects& event) {
         return IsSchedulableAfterPodChange(pod, event, handle_.Dra());
       }},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<DynamicResources>(std::move(*parsed), handle);
}

}  // namespace kubesched::plugins::dynamic_resources
