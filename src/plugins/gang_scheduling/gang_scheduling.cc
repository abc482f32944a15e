#include "plugins/gang_scheduling/gang_scheduling.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "optimizer/placement.h"
#include "plugins/gang_scheduling/group_preemption.h"
#include "plugins/helper/placement_input.h"
#include "util/go_quote.h"
#include "util/log.h"

namespace kubesched::plugins::gang_scheduling {

using framework::Code;
using framework::PodInfoPtr;
using framework::QueueingHint;
using framework::Status;

namespace {

// The nodes of each domain of `key` (value -> nodes, in snapshot order); nodes without the label
// belong to none.
std::map<std::string, std::vector<const framework::NodeInfo*>> DomainsOf(
    std::span<const framework::NodeInfo* const> nodes, const std::string& key) {
  std::map<std::string, std::vector<const framework::NodeInfo*>> out;
  for (const framework::NodeInfo* n : nodes) {
    if (const std::string* value = n->node()->metadata.labels.Find(key)) out[*value].push_back(n);
  }
  return out;
}

// Free room in a set of nodes, or the room some pods need, in the dimensions every pod uses.
struct Room {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t pods = 0;
};

// What the `needed` smallest members request in all (each dimension on its own: a lower bound).
Room NeededRoom(const std::vector<PodInfoPtr>& members, int32_t needed) {
  std::vector<int64_t> cpu, memory;
  for (const auto& p : members) {
    cpu.push_back(p->requests.milli_cpu);
    memory.push_back(p->requests.memory);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(memory.begin(), memory.end());
  Room r;
  r.pods = needed;
  for (int32_t i = 0; i < needed && i < static_cast<int32_t>(cpu.size()); ++i) {
    r.milli_cpu += cpu[i];
    r.memory += memory[i];
  }
  return r;
}

// A domain's room: what is free (less what the nominator promises there to pods other than
// the group's members), and its cpu and memory in all and in use (promises included), for
// upstream's MostAllocated placement score.
struct DomainRoom {
  Room free;
  int64_t cpu_capacity = 0, cpu_used = 0;
  int64_t memory_capacity = 0, memory_used = 0;
};

DomainRoom RoomOf(framework::Handle& handle, const std::vector<const framework::NodeInfo*>& nodes,
                  const std::vector<PodInfoPtr>& members) {
  DomainRoom r;
  for (const framework::NodeInfo* n : nodes) {
    Room used{n->requested().milli_cpu, n->requested().memory, static_cast<int64_t>(n->pods().size())};
    for (const auto& p : handle.nominator().NominatedPodsForNode(n->name())) {
      const bool own = std::any_of(members.begin(), members.end(),
                                   [&](const PodInfoPtr& m) { return m->pod().metadata.uid == p->pod().metadata.uid; });
      if (own) continue;
      used.milli_cpu += p->requests.milli_cpu;
      used.memory += p->requests.memory;
      used.pods += 1;
    }
    const auto& a = n->allocatable();
    r.free.milli_cpu += std::max<int64_t>(0, a.milli_cpu - used.milli_cpu);
    r.free.memory += std::max<int64_t>(0, a.memory - used.memory);
    r.free.pods += std::max<int64_t>(0, a.allowed_pod_number - used.pods);
    r.cpu_capacity += a.milli_cpu;
    r.cpu_used += used.milli_cpu;
    r.memory_capacity += a.memory;
    r.memory_used += used.memory;
  }
  return r;
}

// Upstream's MostAllocated score of a placement (NodeResourcesFit as a placement scorer): the
// utilisation of cpu and memory over all the domain's nodes once `placed` (what the group's
// placed members request) is added, 0..100 each, weights 1.
int64_t MostAllocatedScore(const DomainRoom& room, const Room& placed) {
  auto share = [](int64_t requested, int64_t capacity) -> int64_t {
    if (capacity <= 0) return 0;
    return std::min(requested, capacity) * framework::kMaxNodeScore / capacity;
  };
  return (share(room.cpu_used + placed.milli_cpu, room.cpu_capacity) +
          share(room.memory_used + placed.memory, room.memory_capacity)) /
         2;
}

// What the placed members of a placement request in all.
Room PlacedRequests(const optimizer::PlacementResult& r) {
  Room out;
  for (const auto& p : r.plan) {
    if (p.node.empty()) continue;
    out.milli_cpu += p.pod->requests.milli_cpu;
    out.memory += p.pod->requests.memory;
    out.pods += 1;
  }
  return out;
}

// The dimensions ("cpu", "memory", "pods") in which `free` is short of `need`; "" when none.
std::string ShortOf(const Room& free, const Room& need) {
  std::vector<std::string_view> short_of;
  if (free.milli_cpu < need.milli_cpu) short_of.push_back("cpu");
  if (free.memory < need.memory) short_of.push_back("memory");
  if (free.pods < need.pods) short_of.push_back("pods");
  return fmt::format("{}", fmt::join(short_of, ", "));
}

// Why the placement takes fewer members than the group needs: the first reason the optimizer
// gave for a member it left out.
std::string ShortfallReason(const optimizer::PlacementResult& r) {
  if (r.unplaced_reasons.empty()) return "";
  std::string reason = r.unplaced_reasons.front().second;
  // The FitError that carries the group's message ends it with its own period.
  while (!reason.empty() && reason.back() == '.') reason.pop_back();
  return reason;
}

std::string UnschedulableMessage(const api::PodGroup& group, const GroupDecision& d, size_t pending,
                                 const std::vector<DomainPlacement>& tried, size_t num_domains,
                                 std::vector<std::string> per_domain) {
  const int32_t needed = d.needed;
  const std::string verdict = d.optimal ? "" : " (not proved optimal)";
  std::string why;
  if (group.topology_key.empty() && !tried.empty()) {
    const auto& r = tried.front().result;
    why = fmt::format("pod group {} needs {} pods placed together and at most {} of its {} pending pods fit{}",
                      util::GoQuote(group.metadata.name), needed, r.placed, pending, verdict);
    if (const std::string reason = ShortfallReason(r); !reason.empty()) why += ": " + reason;
  } else if (num_domains == 0) {
    why = fmt::format("pod group {} needs {} pods placed together in one domain of {} and no node has that label",
                      util::GoQuote(group.metadata.name), needed, util::GoQuote(group.topology_key));
  } else {
    // Upstream's count of placements first ("0/3 placements are available"), then each domain
    // (the first few: a cluster may have a thousand racks).
    constexpr size_t kDomainsListed = 8;
    std::sort(per_domain.begin(), per_domain.end());
    std::string listed = fmt::format(
        "{}", fmt::join(per_domain.begin(), per_domain.begin() + std::min(per_domain.size(), kDomainsListed), ", "));
    if (per_domain.size() > kDomainsListed) listed += fmt::format(" and {} more", per_domain.size() - kDomainsListed);
    why = fmt::format(
        "0/{} placements are available: pod group {} needs {} pods placed together in one domain of {} and no "
        "domain has room{}: {}",
        num_domains, util::GoQuote(group.metadata.name), needed, util::GoQuote(group.topology_key), verdict, listed);
  }
  return why;
}

}  // namespace

Status GangScheduling::PreEnqueue(const api::Pod& pod) {
  const std::string_view name = GroupName(pod);
  framework::PodGroupTracker* groups = Groups();
  if (name.empty() || groups == nullptr) return Status::Success();
  const auto group = groups->Group(pod.metadata.namespace_, name);
  if (group == nullptr) {
    // Upstream's wording, "pods's" included.
    return Status::UnschedulableAndUnresolvable(
        fmt::format("waiting for pods's pod group {} to appear in scheduling queue", util::GoQuote(name)));
  }
  if (group->policy != api::PodGroupPolicy::kGang) return Status::Success();
  if (groups->Members(pod.metadata.namespace_, name).all < static_cast<size_t>(group->min_count)) {
    return Status::UnschedulableAndUnresolvable("waiting for minCount pods from a gang to appear in scheduling queue");
  }
  return Status::Success();
}

std::pair<framework::PreFilterResult, Status> GangScheduling::PreFilter(framework::CycleState& /*state*/,
                                                                        const framework::PodInfo& pod,
                                                                        std::span<const framework::NodeInfo* const>) {
  if (GroupName(pod.pod()).empty()) return {{}, Status()};
  std::lock_guard lock(mu_);
  // The group's own placement runs the profile's PreFilter on its members: they pass there.
  if (ticking_) return {{}, Status()};
  auto it = verdict_.find(pod.pod().metadata.uid);
  if (it == verdict_.end() || it->second.reject.empty()) return {{}, Status()};
  return {{}, Status(Code::kUnschedulableAndUnresolvable, it->second.reject)};
}

Status GangScheduling::Reserve(framework::CycleState& /*state*/, const framework::PodInfo& pod,
                               const std::string& /*node_name*/) {
  if (GroupName(pod.pod()).empty()) return Status::Success();
  {
    std::lock_guard lock(mu_);
    verdict_.erase(pod.pod().metadata.uid);
  }
  if (framework::PodGroupTracker* groups = Groups()) groups->Assume(pod.pod());
  return Status::Success();
}

void GangScheduling::Unreserve(framework::CycleState& /*state*/, const framework::PodInfo& pod,
                               const std::string& /*node_name*/) {
  if (GroupName(pod.pod()).empty()) return;
  if (framework::PodGroupTracker* groups = Groups()) groups->Forget(pod.pod());
}

std::pair<Status, std::chrono::nanoseconds> GangScheduling::Permit(framework::CycleState& /*state*/,
                                                                   const framework::PodInfo& pod_info,
                                                                   const std::string& /*node_name*/) {
  const api::Pod& pod = pod_info.pod();
  const std::string_view name = GroupName(pod);
  framework::PodGroupTracker* groups = Groups();
  if (name.empty() || groups == nullptr) return {Status::Success(), {}};
  const auto group = groups->Group(pod.metadata.namespace_, name);
  if (group == nullptr) {
    return {Status::Error(fmt::format("failed to get podGroup {}/{}: not found", pod.metadata.namespace_, name)), {}};
  }
  if (group->policy != api::PodGroupPolicy::kGang) return {Status::Success(), {}};
  if (groups->Members(pod.metadata.namespace_, name).Scheduled() < static_cast<size_t>(group->min_count)) {
    // The rest of the gang is wanted now, not after its backoff.
    handle_.Activate(groups->UnscheduledMembers(pod.metadata.namespace_, name));
    return {Status::Wait("waiting for minCount pods from a gang to be waiting on permit"), PermitTimeout(*group)};
  }
  // Quorum: every member waiting at Permit goes on to binding with this one. The waiting pods
  // are collected first and allowed after, outside the iteration. The group is scheduled (as
  // upstream reports it: at least minCount members placed).
  WriteCondition(*group, {"PodGroupScheduled", "True", "Scheduled", ""});
  for (const std::string& uid : WaitingMembers(pod.metadata.namespace_, name)) {
    if (auto wp = handle_.GetWaitingPod(uid)) wp->Allow(Name());
  }
  return {Status::Success(), {}};
}

bool GangScheduling::LeftOutOfPlacedGroup(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  auto it = verdict_.find(pod.metadata.uid);
  if (it == verdict_.end() || it->second.reject.empty()) return false;
  auto d = decisions_.find(it->second.group);
  return d != decisions_.end() && d->second.placed;
}

std::vector<std::string> GangScheduling::WaitingMembers(std::string_view namespace_, std::string_view name) {
  std::vector<std::string> waiting;
  handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
    const api::Pod& p = wp.pod();
    if (p.metadata.namespace_ == namespace_ && GroupName(p) == name) waiting.push_back(p.metadata.uid);
  });
  return waiting;
}

namespace {

QueueingHint SameGroupAdded(api::PodGroupApi api, const api::Pod& pod, const framework::EventObjects& event) {
  const api::Pod* added = event.new_pod;
  if (added == nullptr) return QueueingHint::kQueue;  // malformed event: be safe
  const std::string_view name = api::PodGroupOf(pod, api);
  const bool same =
      !name.empty() && api::PodGroupOf(*added, api) == name && added->metadata.namespace_ == pod.metadata.namespace_;
  return same ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint SameGroupObject(api::PodGroupApi api, const api::Pod& pod, const framework::EventObjects& event) {
  const api::PodGroup* group = event.new_pod_group;
  if (group == nullptr) return QueueingHint::kQueue;
  const bool same = group->api == api && group->metadata.name == api::PodGroupOf(pod, api) &&
                    group->metadata.namespace_ == pod.metadata.namespace_;
  return same ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

QueueingHint IsSchedulableAfterPodAdded(const api::Pod& pod, const framework::EventObjects& event) {
  return SameGroupAdded(api::PodGroupApi::kScheduling, pod, event);
}

QueueingHint IsSchedulableAfterPodGroupAdded(const api::Pod& pod, const framework::EventObjects& event) {
  return SameGroupObject(api::PodGroupApi::kScheduling, pod, event);
}

QueueingHint GangScheduling::SameGroupPodAdded(const api::Pod& pod, const framework::EventObjects& event) const {
  return SameGroupAdded(options_.api, pod, event);
}

QueueingHint GangScheduling::SameGroupChanged(const api::Pod& pod, const framework::EventObjects& event) const {
  return SameGroupObject(options_.api, pod, event);
}

std::vector<framework::ClusterEventWithHint> GangScheduling::EventsToRegister() const {
  using framework::ClusterEvent;
  using framework::EventResource;
  namespace action = framework::action;
  // A PodGroup's policy is immutable: its updates need no requeue. A group the cycle found no
  // room for may fit once room appears: a node added or changed, a pod gone.
  const auto pod_added = [this](const api::Pod& pod, const framework::EventObjects& event) {
    return SameGroupPodAdded(pod, event);
  };
  return {
      {{EventResource::kUnscheduledPod, action::kAdd, "UnscheduledPodAdd"}, pod_added},
      {{EventResource::kAssignedPod, action::kAdd, "AssignedPodAdd"}, pod_added},
      {{EventResource::kPodGroup, action::kAdd, "PodGroupAdd"},
       [this](const api::Pod& pod, const framework::EventObjects& event) { return SameGroupChanged(pod, event); }},
      {ClusterEvent{EventResource::kNode,
                    action::kAdd | action::kUpdateNodeAllocatable | action::kUpdateNodeLabel | action::kUpdateNodeTaint,
                    "NodeAdd|UpdateNodeAllocatable|UpdateNodeLabel|UpdateNodeTaint"},
       nullptr},
      {ClusterEvent{EventResource::kAssignedPod, action::kDelete | action::kUpdatePodScaleDown,
                    "AssignedPodDelete|UpdatePodScaleDown"},
       nullptr},
  };
}

void GangScheduling::PodGroupCycle(const framework::PodInfo& pod_info) {
  const api::Pod& pod = pod_info.pod();
  const std::string_view name = GroupName(pod);
  if (name.empty()) return;
  framework::PodGroupTracker* groups = Groups();
  if (groups == nullptr) return;
  const auto group = groups->Group(pod.metadata.namespace_, name);
  // What must hold before any placement is tried (Coscheduling's sibling count, minResources).
  std::string precheck;
  if (group != nullptr && group->policy == api::PodGroupPolicy::kGang) precheck = Precheck(pod, *group);
  {
    std::lock_guard lock(mu_);
    if (group == nullptr || group->policy != api::PodGroupPolicy::kGang) {
      verdict_.erase(pod.metadata.uid);
      return;
    }
    if (!precheck.empty()) {
      next_verdict_.erase(pod.metadata.uid);
      verdict_[pod.metadata.uid] = Verdict{group->Key(), std::move(precheck)};
      return;
    }
    // The last group cycle decided for this member: this is the cycle it prepared.
    if (auto it = next_verdict_.find(pod.metadata.uid); it != next_verdict_.end()) {
      verdict_[pod.metadata.uid] = std::move(it->second);
      next_verdict_.erase(it);
      return;
    }
  }
  // A new group cycle over every pending member, this one included, in queue order.
  std::vector<PodInfoPtr> members;
  bool self = false;
  for (const auto& p : groups->UnscheduledMembers(pod.metadata.namespace_, name)) {
    if (p->metadata.uid == pod.metadata.uid) {
      members.push_back(framework::PodInfo::Create(pod_info.pod_ptr()));
      self = true;
    } else if (!p->metadata.deletion_timestamp_ns) {
      members.push_back(framework::PodInfo::Create(p));
    }
  }
  if (!self) members.push_back(framework::PodInfo::Create(pod_info.pod_ptr()));
  std::stable_sort(members.begin(), members.end(), [](const PodInfoPtr& a, const PodInfoPtr& b) {
    if (a->pod().Priority() != b->pod().Priority()) return a->pod().Priority() > b->pod().Priority();
    return a->pod().metadata.creation_timestamp_ns < b->pod().metadata.creation_timestamp_ns;
  });
  {
    std::lock_guard lock(mu_);
    ticking_ = true;
    // The group's earlier verdicts are void.
    const std::string key = group->Key();
    std::erase_if(next_verdict_, [&](const auto& kv) { return kv.second.group == key; });
  }
  std::vector<std::shared_ptr<const api::Pod>> order;
  try {
    ScheduleGroup(*group, members, order);
  } catch (...) {
    std::lock_guard lock(mu_);
    ticking_ = false;
    throw;
  }
  {
    std::lock_guard lock(mu_);
    ticking_ = false;
    if (auto it = next_verdict_.find(pod.metadata.uid); it != next_verdict_.end()) {
      verdict_[pod.metadata.uid] = std::move(it->second);
      next_verdict_.erase(it);
    }
  }
  // The other members follow at once, in the plan's order (a rejected group's members each
  // take their rejection now, not after a stale wait).
  std::erase_if(order, [&](const auto& p) { return p->metadata.uid == pod.metadata.uid; });
  handle_.Activate(order);
}

void GangScheduling::SetNextVerdictLocked(const framework::PodInfo& member, const api::PodGroup& group,
                                          std::string reject) {
  next_verdict_[member.pod().metadata.uid] = Verdict{group.Key(), std::move(reject)};
}

GangScheduling::DomainSearch GangScheduling::PlaceInDomains(const api::PodGroup& group,
                                                            const std::vector<PodInfoPtr>& members, int32_t already,
                                                            int32_t needed, GroupDecision& d) {
  DomainSearch out;
  // Candidate domains: one per value of the topology key, or the whole cluster.
  const auto all_nodes = handle_.SnapshotSharedLister().List();
  auto& domains = out.domains;
  if (group.topology_key.empty()) {
    domains.emplace("", std::vector<const framework::NodeInfo*>(all_nodes.begin(), all_nodes.end()));
  } else {
    domains = DomainsOf(all_nodes, group.topology_key);
  }
  // A domain whose free room in total (less what is promised to other pods) is short of the
  // `needed` smallest members' requests cannot take the gang: it is not solved. The others are
  // ranked by upstream's placement score as if they took every member (PodGroupPodsCount, equal
  // then, and MostAllocated, which depends only on the domain and the members' requests in all)
  // and solved in that order until one takes every member: the best by upstream's score.
  const Room need = NeededRoom(members, needed);
  Room all_members;
  for (const auto& p : members) {
    all_members.milli_cpu += p->requests.milli_cpu;
    all_members.memory += p->requests.memory;
  }
  struct Candidate {
    std::string domain;
    const std::vector<const framework::NodeInfo*>* nodes = nullptr;
    DomainRoom room;
    int64_t rank = 0;  // MostAllocated with every member placed
  };
  std::vector<Candidate> candidates;
  auto& per_domain = out.per_domain;
  for (const auto& [value, nodes] : domains) {
    Candidate c{group.topology_key.empty() ? std::string() : group.topology_key + "=" + value, &nodes,
                RoomOf(handle_, nodes, members)};
    if (!group.topology_key.empty()) {
      if (const std::string short_of = ShortOf(c.room.free, need); !short_of.empty()) {
        per_domain.push_back(fmt::format("{}: not enough free {}", c.domain, short_of));
        continue;
      }
    }
    c.rank = MostAllocatedScore(c.room, all_members);
    candidates.push_back(std::move(c));
  }
  // Ties go to the first domain by name (upstream draws one at random).
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank > b.rank; });
  optimizer::PlacementOptions options;
  options.timeout_seconds = kSolverTimeoutSeconds;
  auto& tried = out.tried;
  tried.reserve(candidates.size());
  std::vector<int64_t> most_allocated;  // per tried domain, with what it placed
  for (const Candidate& c : candidates) {
    DomainPlacement dp;
    dp.domain = c.domain;
    dp.free_milli_cpu = c.room.free.milli_cpu;
    optimizer::PlacementInput input = helper::MakePlacementInput(handle_, members, *c.nodes);
    dp.result = optimizer::PlaceBatch(input, options);
    d.optimal = d.optimal && dp.result.optimal;
    d.best_placed = std::max(d.best_placed, dp.result.placed);
    if (!dp.domain.empty()) per_domain.push_back(fmt::format("{}: {} fit", dp.domain, dp.result.placed));
    most_allocated.push_back(MostAllocatedScore(c.room, PlacedRequests(dp.result)));
    const bool all_placed = dp.result.placed == static_cast<int32_t>(members.size());
    tried.push_back(std::move(dp));
    if (all_placed) break;
  }
  d.domains = static_cast<int32_t>(domains.size());
  d.domains_solved = static_cast<int32_t>(tried.size());
  // The placement to use, among those that take `needed` members: upstream's score, the pods
  // count (members already placed included) normalised to 0..100 against the best placement's,
  // plus MostAllocated; the first solved among equals.
  int32_t max_count = 0;
  for (const DomainPlacement& dp : tried) max_count = std::max(max_count, already + dp.result.placed);
  int64_t best_score = -1;
  for (size_t i = 0; i < tried.size(); ++i) {
    if (tried[i].result.placed < needed || max_count == 0) continue;
    const int64_t score =
        static_cast<int64_t>(already + tried[i].result.placed) * framework::kMaxNodeScore / max_count +
        most_allocated[i];
    if (score > best_score) {
      best_score = score;
      out.best = &tried[i];
    }
  }
  return out;
}

void GangScheduling::ScheduleGroup(const api::PodGroup& group, const std::vector<PodInfoPtr>& members,
                                   std::vector<std::shared_ptr<const api::Pod>>& order) {
  const auto start = std::chrono::steady_clock::now();
  framework::PodGroupTracker* groups = Groups();
  const auto counts = groups->Members(group.metadata.namespace_, group.metadata.name);
  const int32_t already = static_cast<int32_t>(counts.Scheduled());

  GroupDecision d;
  d.min_count = group.min_count;
  d.members = static_cast<int32_t>(members.size());
  d.needed = std::max<int32_t>(0, group.min_count - already);
  d.optimal = true;
  if (d.needed == 0) {
    // minCount members are placed already (a recreated member of a placed gang): each remaining
    // member joins through its own cycle.
    d.placed = true;
    std::lock_guard lock(mu_);
    for (const auto& p : members) {
      SetNextVerdictLocked(*p, group, "");
      order.push_back(p->pod_ptr());
    }
    decisions_[group.Key()] = d;
    return;
  }

  DomainSearch search = PlaceInDomains(group, members, already, d.needed, d);
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (search.best == nullptr) {
    // No room for the gang: none of it is placed or held, and every member says why, unless the
    // group preempts (or waits for its preemption to finish).
    d.message = UnschedulableMessage(group, d, members.size(), search.tried, search.domains.size(),
                                     std::move(search.per_domain));
    if (options_.preempt && PreemptForGroup(group, members, d, search.tried.size(), order)) return;
    WriteCondition(group, {"PodGroupScheduled", "False", "Unschedulable", d.message});
    std::lock_guard lock(mu_);
    for (const auto& p : members) {
      SetNextVerdictLocked(*p, group, d.message);
      order.push_back(p->pod_ptr());
    }
    RecordLocked(group, d, search.tried.size(), 0);
    KS_LOG_V(2).InfoS("Pod group unschedulable", "podGroup", group.Key(), "members", members.size(), "needed", d.needed,
                      "bestPlaced", d.best_placed, "optimal", d.optimal, "seconds", d.seconds);
    return;
  }

  // The plan: the nominator holds each placed member's node (every later placement and cycle
  // sees the room taken); the members' cycles run in the plan's order. A preemption made for the
  // group has done its work.
  {
    std::lock_guard lock(mu_);
    EndPreemptionLocked(group.Key());
  }
  const optimizer::PlacementResult& plan = search.best->result;
  d.placed = true;
  d.domain = search.best->domain;
  int64_t planned = 0;
  for (const auto& p : plan.plan) {
    if (p.node.empty()) continue;
    handle_.nominator().AddPlannedPod(p.pod, p.node);
    ++planned;
  }
  std::lock_guard lock(mu_);
  std::unordered_map<std::string, std::string> left_out(plan.unplaced_reasons.begin(), plan.unplaced_reasons.end());
  for (const auto& p : plan.plan) {
    std::string reject;
    if (auto it = left_out.find(p.pod->pod().metadata.uid); it != left_out.end()) {
      std::string why = it->second;
      while (!why.empty() && why.back() == '.') why.pop_back();  // the FitError adds its own
      reject = fmt::format("pod group {} is placed without this pod: {}", util::GoQuote(group.metadata.name), why);
    }
    SetNextVerdictLocked(*p.pod, group, std::move(reject));
    order.push_back(p.pod->pod_ptr());
  }
  RecordLocked(group, d, search.tried.size(), planned);
  KS_LOG_V(2).InfoS("Pod group placed", "podGroup", group.Key(), "members", members.size(), "planned", planned,
                    "domain", d.domain, "optimal", d.optimal, "seconds", d.seconds);
}

bool GangScheduling::PreemptForGroup(const api::PodGroup& group, const std::vector<PodInfoPtr>& members,
                                     GroupDecision& d, size_t domains_solved,
                                     std::vector<std::shared_ptr<const api::Pod>>& order) {
  const std::string key = group.Key();
  const int64_t now_ns = handle_.clock().NowNs();
  auto wait = [&](std::string message) {
    d.message = std::move(message);
    WriteCondition(group, {"PodGroupScheduled", "False", "Unschedulable", d.message});
    std::lock_guard lock(mu_);
    for (const auto& p : members) {
      SetNextVerdictLocked(*p, group, std::string(kWaitingForGroupPreemption));
      order.push_back(p->pod_ptr());
    }
    RecordLocked(group, d, domains_solved, 0);
  };
  {
    // A preemption in progress: its victims are still leaving their nodes (upstream's PreEnqueue
    // holds the members meanwhile).
    std::unique_lock lock(mu_);
    if (auto it = preemptions_.find(key); it != preemptions_.end()) {
      const auto& lister = handle_.SnapshotSharedLister();
      const bool leaving =
          now_ns < it->second.deadline_ns &&
          std::any_of(it->second.victims.begin(), it->second.victims.end(), [&](const auto& victim) {
            const framework::NodeInfo* node = lister.Get(victim.second);
            return node != nullptr && std::any_of(node->pods().begin(), node->pods().end(), [&](const PodInfoPtr& p) {
                     return p->pod().metadata.uid == victim.first;
                   });
          });
      if (leaving) {
        lock.unlock();
        wait(std::string(kWaitingForGroupPreemption));
        return true;
      }
      EndPreemptionLocked(key);
    }
  }
  GroupPreemptor preemptor(handle_, Name());
  GroupPreemptionResult plan = preemptor.Plan(group, members, d.needed);
  if (!plan.preempted) {
    const std::string why =
        plan.message.starts_with("pod group preemption:") ? plan.message : "pod group preemption: " + plan.message;
    d.message = fmt::format("{}; {}", d.message, why);
    return false;
  }
  const Status applied = preemptor.Apply(group, plan);
  if (!applied.IsSuccess()) {
    KS_LOG.ErrorS(applied.Message(), "Pod group preemption failed", "podGroup", key);
  }
  Preemption record;
  int64_t grace_seconds = 0;
  for (const VictimUnit& u : plan.victims) {
    for (size_t i = 0; i < u.pods.size(); ++i) {
      record.victims.emplace_back(u.pods[i]->pod().metadata.uid, u.nodes[i]);
      grace_seconds = std::max(grace_seconds, u.pods[i]->pod().spec.TerminationGracePeriodSeconds());
    }
  }
  record.placeholders = std::move(plan.placeholders);
  record.deadline_ns = now_ns + (grace_seconds + kPreemptionSlackSeconds) * 1'000'000'000;
  d.preempted_pods = plan.evicted_pods;
  d.moved_pods = static_cast<int32_t>(plan.moves.size());
  d.optimal = d.optimal && plan.optimal;
  {
    std::lock_guard lock(mu_);
    preemptions_[key] = std::move(record);
    stats_.preemptions += 1;
    stats_.preempted_pods += plan.evicted_pods;
    stats_.moved_pods += d.moved_pods;
  }
  KS_LOG_V(2).InfoS("Pod group preempted", "podGroup", key, "evicted", plan.evicted_pods, "moved", d.moved_pods,
                    "candidates", plan.candidates, "solves", plan.solves);
  wait(
      fmt::format("{}: pod group {} preempted {} pods of lower priority ({} of them moved) to place {} of its {} "
                  "pending pods",
                  kWaitingForGroupPreemption, util::GoQuote(group.metadata.name), plan.evicted_pods, d.moved_pods,
                  plan.placement.placed, members.size()));
  return true;
}

void GangScheduling::EndPreemptionLocked(const std::string& group_key) {
  auto it = preemptions_.find(group_key);
  if (it == preemptions_.end()) return;
  // A move's hold that no replacement took is dropped; one a replacement took stays its own.
  for (const auto& placeholder : it->second.placeholders)
    handle_.nominator().DeleteNominatedPodIfExists(placeholder->pod());
  preemptions_.erase(it);
}

void GangScheduling::RecordLocked(const api::PodGroup& group, const GroupDecision& d, size_t domains_solved,
                                  int64_t planned) {
  stats_.cycles += 1;
  (d.placed ? stats_.placed : stats_.unschedulable) += 1;
  stats_.pods_planned += planned;
  stats_.domains_tried += static_cast<int64_t>(domains_solved);
  stats_.all_optimal = stats_.all_optimal && d.optimal;
  stats_.seconds += d.seconds;
  stats_.max_seconds = std::max(stats_.max_seconds, d.seconds);
  GroupDecision& kept = decisions_[group.Key()];
  // What the group preempted stays in its record once it is placed (the report says so).
  const int32_t preempted = kept.preempted_pods + d.preempted_pods;
  const int32_t moved = kept.moved_pods + d.moved_pods;
  kept = d;
  kept.preempted_pods = preempted;
  kept.moved_pods = moved;
}

std::string GangScheduling::ExplainPod(const api::Pod& pod) const {
  const std::string_view name = GroupName(pod);
  if (name.empty()) return "";
  std::lock_guard lock(mu_);
  auto it = decisions_.find(fmt::format("{}/{}", pod.metadata.namespace_, name));
  if (it == decisions_.end()) return "";
  const GroupDecision& d = it->second;
  const std::string proof = d.optimal ? "proved optimal" : "not proved optimal";
  if (!d.placed) {
    return fmt::format("The group cycle of pod group {} placed none of its {} pending members: {}.",
                       util::GoQuote(name), d.members, d.message);
  }
  if (d.needed == 0) {
    return fmt::format("Pod group {} had minCount ({}) members placed already; this member joins it on its own.",
                       util::GoQuote(name), d.min_count);
  }
  return fmt::format("The group cycle of pod group {} placed its {} pending members jointly (minCount {}{}), {}.",
                     util::GoQuote(name), d.members, d.min_count,
                     d.domain.empty() ? std::string() : ", all in " + d.domain, proof);
}

void GangScheduling::WriteCondition(const api::PodGroup& group, const api::PodCondition& condition) {
  if (!options_.write_conditions) return;
  const std::string written = condition.status + "\n" + condition.reason + "\n" + condition.message;
  {
    std::lock_guard lock(mu_);
    auto [it, inserted] = conditions_written_.try_emplace(group.Key(), written);
    if (!inserted) {
      if (it->second == written) return;  // said already: no write per retry
      it->second = written;
    }
  }
  if (Status s = handle_.client().SetPodGroupCondition(group, condition); !s.IsSuccess()) {
    KS_LOG.ErrorS(s.Message(), "Error updating pod group status", "podGroup", group.Key());
  }
}

GangStats GangScheduling::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::any GangScheduling::Statistics() const {
  std::lock_guard lock(mu_);
  GangReport report{stats_, {decisions_.begin(), decisions_.end()}};
  return report;
}

std::optional<GroupDecision> GangScheduling::Decision(const std::string& group_key) const {
  std::lock_guard lock(mu_);
  auto it = decisions_.find(group_key);
  if (it == decisions_.end()) return std::nullopt;
  return it->second;
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& handle) {
  return std::make_unique<GangScheduling>(handle);
}

}  // namespace kubesched::plugins::gang_scheduling
