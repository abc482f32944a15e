#include "plugins/node_resources_fit/node_resources_fit.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "config/validation.h"

namespace kubesched::plugins::node_resources_fit {
namespace {

using framework::Resource;

const framework::StateKey kPreFilterKey{"PreFilterNodeResourcesFit"};
const framework::StateKey kPreScoreKey{"PreScoreNodeResourcesFit"};

// Pods requesting more scalar resources than this build their rejection reasons per node.
constexpr size_t kMaxInternedScalars = 4;

struct PreFilterState final : framework::StateData {
  Resource request;
  //! Rejection reason lists by mask (bits 0-3: the fixed reasons; bit 4 + j: request.scalar[j]),
  //! filled on first use by any Filter thread. They point to interned lists that live as long as
  //! the program, so statuses holding them may outlive the cycle.
  size_t num_masks = 0;
  std::unique_ptr<std::atomic<const framework::StaticReasons*>[]> reasons_by_mask;

  PreFilterState() = default;
  PreFilterState(const PreFilterState& o) : request(o.request), num_masks(o.num_masks) {
    if (num_masks == 0) return;
    reasons_by_mask = std::make_unique<std::atomic<const framework::StaticReasons*>[]>(num_masks);
    for (size_t i = 0; i < num_masks; ++i) reasons_by_mask[i].store(o.reasons_by_mask[i].load());
  }
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
};

struct PreScoreState final : framework::StateData {
  std::vector<int64_t> pod_requests;  // in scoring-resource order
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

constexpr std::string_view kTooManyPods = "Too many pods";
constexpr std::string_view kInsufficientCPU = "Insufficient cpu";
constexpr std::string_view kInsufficientMemory = "Insufficient memory";
constexpr std::string_view kInsufficientEphemeralStorage = "Insufficient ephemeral-storage";

// Calls on_insufficient(name, fixed_reason, requested, used, capacity, unresolvable) for each
// resource the node lacks; fixed_reason is empty for scalar resources ("Insufficient <name>").
// Allocation-free: Filter builds reasons only when something is insufficient.
template <typename OnInsufficient>
void ForEachInsufficient(const Resource& req, const Resource& alloc, const Resource& used, int64_t pod_count,
                         OnInsufficient&& on_insufficient) {
  if (pod_count + 1 > alloc.allowed_pod_number) {
    on_insufficient(api::kResourcePods, kTooManyPods, 1, pod_count, alloc.allowed_pod_number, false);
  }
  if (req.milli_cpu == 0 && req.memory == 0 && req.ephemeral_storage == 0 && req.scalar.empty()) return;
  if (req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
    on_insufficient(api::kResourceCPU, kInsufficientCPU, req.milli_cpu, used.milli_cpu, alloc.milli_cpu,
                    req.milli_cpu > alloc.milli_cpu);
  }
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
    on_insufficient(api::kResourceMemory, kInsufficientMemory, req.memory, used.memory, alloc.memory,
                    req.memory > alloc.memory);
  }
  if (req.ephemeral_storage > 0 && req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
    on_insufficient(api::kResourceEphemeralStorage, kInsufficientEphemeralStorage, req.ephemeral_storage,
                    used.ephemeral_storage, alloc.ephemeral_storage, req.ephemeral_storage > alloc.ephemeral_storage);
  }
  for (const auto& [name, quantity] : req.scalar) {
    if (quantity == 0) continue;
    const int64_t a = alloc.Scalar(name);
    const int64_t u = used.Scalar(name);
    if (quantity > a - u) on_insufficient(std::string_view(name), std::string_view(), quantity, u, a, quantity > a);
  }
}

std::string Reason(std::string_view name, std::string_view fixed_reason) {
  if (!fixed_reason.empty()) return std::string(fixed_reason);
  std::string out = "Insufficient ";
  out += name;
  return out;
}

// The fixed reasons, in the order ForEachInsufficient reports them.
constexpr std::array<std::string_view, 4> kFixedReasons = {kTooManyPods, kInsufficientCPU, kInsufficientMemory,
                                                           kInsufficientEphemeralStorage};

uint32_t FixedReasonBit(std::string_view fixed_reason) {
  for (size_t i = 0; i < kFixedReasons.size(); ++i) {
    if (kFixedReasons[i] == fixed_reason) return 1u << i;
  }
  return 0;
}

// One shared copy of each distinct reason list, for the program's lifetime (bounded by the
// combinations of resource names the cluster's pods request).
const framework::StaticReasons& InternReasons(std::vector<std::string> reasons) {
  static std::mutex mu;
  static std::map<std::vector<std::string>, std::unique_ptr<framework::StaticReasons>> lists;
  std::lock_guard lock(mu);
  auto it = lists.find(reasons);
  if (it == lists.end()) {
    auto list = std::make_unique<framework::StaticReasons>(reasons);
    it = lists.emplace(std::move(reasons), std::move(list)).first;
  }
  return *it->second;
}

// The reason list for a set of fixed reasons, built once per set.
const framework::StaticReasons& FixedReasons(uint32_t mask) {
  static const std::array<std::unique_ptr<framework::StaticReasons>, 16> kLists = [] {
    std::array<std::unique_ptr<framework::StaticReasons>, 16> lists;
    for (uint32_t m = 0; m < 16; ++m) {
      std::vector<std::string> reasons;
      for (size_t i = 0; i < kFixedReasons.size(); ++i) {
        if (m & (1u << i)) reasons.emplace_back(kFixedReasons[i]);
      }
      lists[m] = std::make_unique<framework::StaticReasons>(std::move(reasons));
    }
    return lists;
  }();
  return *kLists[mask & 15];
}

// The reasons the node rejects the request for, in upstream's order.
std::vector<std::string> InsufficientReasons(const Resource& request, const framework::NodeInfo& node) {
  std::vector<std::string> reasons;
  ForEachInsufficient(request, node.allocatable(), node.requested(), static_cast<int64_t>(node.pods().size()),
                      [&](std::string_view name, std::string_view fixed_reason, int64_t, int64_t, int64_t, bool) {
                        reasons.push_back(Reason(name, fixed_reason));
                      });
  return reasons;
}

// Whether the pod fits a node with nothing on it (upstream's isFit).
bool FitsEmptyNode(const Resource& request, const Resource& allocatable) {
  bool fits = true;
  ForEachInsufficient(request, allocatable, Resource{}, 0, [&](auto&&...) { fits = false; });
  return fits;
}

// upstream's haveAnyRequestedResourcesIncreased.
bool HaveAnyRequestedResourcesIncreased(const Resource& request, const Resource& before, const Resource& after) {
  if (after.allowed_pod_number > before.allowed_pod_number) return true;
  if (request.milli_cpu == 0 && request.memory == 0 && request.ephemeral_storage == 0 && request.scalar.empty()) {
    return false;
  }
  if ((request.milli_cpu > 0 && after.milli_cpu > before.milli_cpu) ||
      (request.memory > 0 && after.memory > before.memory) ||
      (request.ephemeral_storage > 0 && after.ephemeral_storage > before.ephemeral_storage)) {
    return true;
  }
  for (const auto& [name, quantity] : request.scalar) {
    if (quantity == 0) continue;
    if (after.Scalar(name) > before.Scalar(name)) return true;
  }
  return false;
}

// upstream's isSchedulableAfterPodScaleDown.
bool IsSchedulableAfterPodScaleDown(const api::Pod& target, const api::Pod& original, const api::Pod& modified) {
  if (modified.metadata.uid == target.metadata.uid) return true;
  // An unscheduled pod holds no resources.
  if (modified.spec.node_name.empty()) return false;
  const Resource before = framework::ComputePodRequests(original.spec);
  const Resource after = framework::ComputePodRequests(modified.spec);
  const Resource wanted = framework::ComputePodRequests(target.spec);
  // Only resources the target pod requests matter.
  if (wanted.milli_cpu != 0 && before.milli_cpu > after.milli_cpu) return true;
  if (wanted.memory != 0 && before.memory > after.memory) return true;
  if (wanted.ephemeral_storage != 0 && before.ephemeral_storage > after.ephemeral_storage) return true;
  for (const auto& [name, quantity] : wanted.scalar) {
    if (quantity != 0 && before.Scalar(name) > after.Scalar(name)) return true;
  }
  return false;
}

// v1helper.IsExtendedResourceName: a fully qualified name outside the kubernetes.io namespace (not
// native), not starting with "requests.", that is valid as the quota name "requests.<name>".
bool IsExtendedResourceName(std::string_view name) {
  if (name.find('/') == std::string_view::npos || name.find("kubernetes.io/") != std::string_view::npos) {
    return false;
  }
  if (name.starts_with("requests.")) return false;
  std::string quota_name = "requests.";
  quota_name += name;
  return api::IsQualifiedName(quota_name).empty();
}

}  // namespace

Resource PruneIgnoredResources(Resource request, std::span<const std::string> ignored_resources,
                               std::span<const std::string> ignored_resource_groups) {
  const bool any_ignored = !ignored_resources.empty() || !ignored_resource_groups.empty();
  std::erase_if(request.scalar, [&](const std::pair<std::string, int64_t>& entry) {
    const auto& [name, quantity] = entry;
    if (quantity == 0) return true;
    // Only extended resources can be ignored; hugepages and kubernetes.io resources never are.
    if (!any_ignored || !IsExtendedResourceName(name)) return false;
    if (std::find(ignored_resources.begin(), ignored_resources.end(), name) != ignored_resources.end()) return true;
    std::string_view group = std::string_view(name).substr(0, name.find('/'));
    return std::find(ignored_resource_groups.begin(), ignored_resource_groups.end(), group) !=
           ignored_resource_groups.end();
  });
  return request;
}

std::vector<InsufficientResource> FitsRequest(const Resource& request, const framework::NodeInfo& node) {
  std::vector<InsufficientResource> out;
  ForEachInsufficient(
      request, node.allocatable(), node.requested(), static_cast<int64_t>(node.pods().size()),
      [&](std::string_view name, std::string_view fixed_reason, int64_t requested, int64_t used, int64_t capacity,
          bool unresolvable) {
        out.push_back({std::string(name), Reason(name, fixed_reason), requested, used, capacity, unresolvable});
      });
  return out;
}

framework::QueueingHint IsSchedulableAfterPodEvent(const api::Pod& pod, const framework::EventObjects& event) {
  using framework::QueueingHint;
  if (event.new_pod == nullptr) {
    if (event.old_pod == nullptr) return QueueingHint::kQueue;
    // Deleting a pod that was neither bound nor nominated frees nothing.
    if (event.old_pod->spec.node_name.empty() && event.old_pod->status.nominated_node_name.empty()) {
      return QueueingHint::kSkip;
    }
    return QueueingHint::kQueue;
  }
  if (event.old_pod == nullptr) return QueueingHint::kQueue;
  return IsSchedulableAfterPodScaleDown(pod, *event.old_pod, *event.new_pod) ? QueueingHint::kQueue
                                                                             : QueueingHint::kSkip;
}

framework::QueueingHint IsSchedulableAfterNodeChange(const api::Pod& pod, const framework::EventObjects& event) {
  using framework::QueueingHint;
  if (event.new_node == nullptr) return QueueingHint::kQueue;
  const Resource request = framework::ComputePodRequests(pod.spec);
  const Resource after = Resource::FromList(event.new_node->status.allocatable);
  // The pod would not fit even on the empty node.
  if (!FitsEmptyNode(request, after)) return QueueingHint::kSkip;
  if (event.old_node == nullptr) return QueueingHint::kQueue;
  const Resource before = Resource::FromList(event.old_node->status.allocatable);
  return HaveAnyRequestedResourcesIncreased(request, before, after) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

namespace {

ResourceAllocationScorer MakeResourceScorer(const ScoringStrategy& s) {
  if (s.type == kMostAllocated) {
    return ResourceAllocationScorer(s.resources, /*use_requested=*/false,
                                    ResourceAllocationScorer::Strategy::kMostAllocated);
  }
  if (s.type == kRequestedToCapacityRatio) {
    return ResourceAllocationScorer(
        s.resources, /*use_requested=*/false,
        RequestedToCapacityRatioScorer(s.resources, s.shape.value_or(std::vector<UtilizationShapePoint>{})));
  }
  return ResourceAllocationScorer(s.resources, /*use_requested=*/false,
                                  ResourceAllocationScorer::Strategy::kLeastAllocated);
}

}  // namespace

Fit::Fit(NodeResourcesFitArgs args) : args_(std::move(args)), scorer_(MakeResourceScorer(args_.scoring_strategy)) {}

std::pair<framework::PreFilterResult, framework::Status> Fit::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod, std::span<const framework::NodeInfo* const> nodes) {
  auto data = std::make_unique<PreFilterState>();
  data->request = PruneIgnoredResources(pod.requests, args_.ignored_resources, args_.ignored_resource_groups);
  if (!data->request.scalar.empty() && data->request.scalar.size() <= kMaxInternedScalars) {
    data->num_masks = size_t{1} << (4 + data->request.scalar.size());
    data->reasons_by_mask = std::make_unique<std::atomic<const framework::StaticReasons*>[]>(data->num_masks);
  }
  state.Write(kPreFilterKey, std::move(data));
  return {framework::PreFilterResult{}, framework::Status()};
}

framework::Status Fit::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::NodeInfo& node_info) {
  const auto* s = state.Get<PreFilterState>(kPreFilterKey);
  if (s == nullptr) {
    return framework::Status::Error("error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
  }
  // The reasons as a bit mask (PreFilterState::reasons_by_mask): rejections then share interned
  // reason lists instead of allocating strings per node.
  const std::vector<std::pair<std::string, int64_t>>& scalars = s->request.scalar;
  uint32_t mask = 0;
  bool unresolvable = false;
  ForEachInsufficient(s->request, node_info.allocatable(), node_info.requested(),
                      static_cast<int64_t>(node_info.pods().size()),
                      [&](std::string_view name, std::string_view fixed_reason, int64_t, int64_t, int64_t, bool unres) {
                        if (fixed_reason.empty()) {
                          for (size_t j = 0; j < scalars.size(); ++j) {
                            if (scalars[j].first.data() == name.data()) mask |= 1u << (4 + std::min(j, size_t{27}));
                          }
                        } else {
                          mask |= FixedReasonBit(fixed_reason);
                        }
                        unresolvable |= unres;
                      });
  if (mask == 0) return framework::Status();
  const framework::Code code =
      unresolvable ? framework::Code::kUnschedulableAndUnresolvable : framework::Code::kUnschedulable;
  if (mask < 16) return framework::Status(code, FixedReasons(mask));
  if (mask < s->num_masks) {
    std::atomic<const framework::StaticReasons*>& slot = s->reasons_by_mask[mask];
    const framework::StaticReasons* list = slot.load(std::memory_order_acquire);
    if (list == nullptr) {
      list = &InternReasons(InsufficientReasons(s->request, node_info));
      slot.store(list, std::memory_order_release);
    }
    return framework::Status(code, *list);
  }
  return framework::Status(code, InsufficientReasons(s->request, node_info));
}

std::vector<framework::ClusterEventWithHint> Fit::EventsToRegister() const {
  using framework::ClusterEvent;
  using framework::EventResource;
  namespace action = framework::action;
  // InPlacePodVerticalScaling and SchedulerQueueingHints are on (upstream's defaults): a pod
  // scale-down can free resources, and node updates other than allocatable need no event.
  return {
      {ClusterEvent{EventResource::kPod, action::kDelete | action::kUpdatePodScaleDown, "PodDelete|UpdatePodScaleDown"},
       IsSchedulableAfterPodEvent},
      {ClusterEvent{EventResource::kNode, action::kAdd | action::kUpdateNodeAllocatable,
                    "NodeAdd|UpdateNodeAllocatable"},
       IsSchedulableAfterNodeChange},
  };
}

framework::Status Fit::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                std::span<const framework::NodeInfo* const> nodes) {
  auto data = std::make_unique<PreScoreState>();
  data->pod_requests = scorer_.PodRequests(pod);
  state.Write(kPreScoreKey, std::move(data));
  return framework::Status();
}

std::pair<int64_t, framework::Status> Fit::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                                 const framework::NodeInfo& node_info) {
  if (const auto* s = state.Get<PreScoreState>(kPreScoreKey)) return scorer_.Score(node_info, s->pod_requests);
  const std::vector<int64_t> pod_requests = scorer_.PodRequests(pod);
  return scorer_.Score(node_info, pod_requests);
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle) {
  auto parsed = ParseNodeResourcesFitArgs(args);
  if (!parsed) return std::unexpected(parsed.error());
  return std::make_unique<Fit>(std::move(*parsed));
}

}  // namespace kubesched::plugins::node_resources_fit
