#include "store/controllers/node_lifecycle.h"

#include <algorithm>

#include <fmt/format.h>

#include "api/time_format.h"
#include "api/types.h"
#include "store/controllers/object_util.h"
#include "store/meta.h"
#include "util/duration.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

constexpr std::string_view kKubeletConditions[] = {"Initialized", "Ready", "ContainersReady", "PodScheduled"};

bool IsKubeletCondition(std::string_view type) {
  return std::find(std::begin(kKubeletConditions), std::end(kKubeletConditions), type) != std::end(kKubeletConditions);
}

// What a started pod's status reports besides the kubelet's own conditions: its containers
// (name, image) and the conditions others set (DisruptionTarget, ...), encoded as they are. The
// typed view has them unless another condition is there, whose JSON the view does not keep whole.
struct StartFacts {
  std::vector<std::pair<std::string, std::string>> containers;
  std::vector<std::string> other_conditions;
};

StartFacts FactsOf(const Object& pod) {
  StartFacts facts;
  if (auto view = pod.View<api::Pod>()) {
    const auto& conditions = view->status.conditions;
    if (std::all_of(conditions.begin(), conditions.end(),
                    [](const api::PodCondition& c) { return IsKubeletCondition(c.type); })) {
      for (const api::Container& c : view->spec.containers) facts.containers.emplace_back(c.name, c.image);
      return facts;
    }
  }
  const json::Document doc = ParseObject(pod);
  if (const json::Value* cs = At(doc, {"spec", "containers"}); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      facts.containers.emplace_back(json::GetString(c, "name"), json::GetString(c, "image"));
    }
  }
  if (const json::Value* conds = At(doc, {"status", "conditions"}); conds && conds->IsArray()) {
    for (const auto& c : conds->GetArray()) {
      if (!IsKubeletCondition(json::GetString(c, "type"))) facts.other_conditions.push_back(json::Encode(c));
    }
  }
  return facts;
}

}  // namespace

NodeLifecycle::NodeLifecycle(const ControllerContext& ctx, NodeLifecycleOptions options)
    : ctx_(ctx),
      options_(options),
      pods_(*ctx.store.FindResource("", "pods")),
      nodes_(*ctx.store.FindResource("", "nodes")) {}

void NodeLifecycle::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  const ResourceType* type = event.object->type;
  if (type == &pods_) {
    if (event.type == EventType::kDeleted) {
      std::lock_guard lock(mu_);
      Forget(removals_, removal_at_, event.object->uid);
      Forget(completions_, completion_at_, event.object->uid);
      return;
    }
    if (const PodFactsPtr& pod = ctx_.pods.Current()) OnPod(*pod);
  } else if (type == &nodes_) {
    if (event.type == EventType::kDeleted) {
      RemovePodsOf(event.object->name);
    } else if (event.type == EventType::kAdded) {
      StartPodsOn(event.object->name);
    }
  }
}

void NodeLifecycle::Forget(std::multimap<int64_t, Removal>& timers, std::unordered_map<std::string, int64_t>& at,
                           const std::string& uid) {
  auto it = at.find(uid);
  if (it == at.end()) return;
  auto [b, e] = timers.equal_range(it->second);
  for (auto r = b; r != e; ++r) {
    if (r->second.uid == uid) {
      timers.erase(r);
      break;
    }
  }
  at.erase(it);
}

void NodeLifecycle::Resync() {
  const int64_t now = ctx_.clock.NowNs();
  for (const ObjectPtr& pod : ListAll(ctx_.store, pods_, "")) {
    PodFactsPtr info = ctx_.pods.Get(pod->uid);
    if (!info) continue;
    if (options_.leave_overdue_terminating_pods && info->deletion_ns && *info->deletion_ns <= now) {
      std::lock_guard lock(mu_);
      left_terminating_.insert(info->uid());
      continue;
    }
    OnPod(*info);
  }
}

void NodeLifecycle::OnPod(const PodFacts& pod) {
  if (pod.deletion_ns) {
    {
      std::lock_guard lock(mu_);
      if (left_terminating_.contains(pod.uid())) return;
    }
    const int64_t at = *pod.deletion_ns;
    std::lock_guard lock(mu_);
    if (auto it = removal_at_.find(pod.uid()); it != removal_at_.end()) {
      if (it->second <= at) return;
      // The deletion was brought forward: drop the later entry.
      auto [b, e] = removals_.equal_range(it->second);
      for (auto r = b; r != e; ++r) {
        if (r->second.uid == pod.uid()) {
          removals_.erase(r);
          break;
        }
      }
    }
    removals_.emplace(at, Removal{pod.namespace_(), pod.name(), pod.uid()});
    removal_at_[pod.uid()] = at;
    return;
  }
  if (pod.phase == "Running") {
    ScheduleCompletion(pod);
    return;
  }
  if (pod.node_name.empty() || (!pod.phase.empty() && pod.phase != "Pending")) return;
  NodeFactsPtr node = ctx_.nodes.Get(pod.node_name);
  if (!node) return;  // it starts when its node appears
  StartPod(pod, *node);
}

void NodeLifecycle::ScheduleCompletion(const PodFacts& pod) {
  {
    std::lock_guard lock(mu_);
    if (completion_at_.contains(pod.uid())) return;
  }
  auto view = pod.object->View<api::Pod>();
  if (!view) return;
  const std::string* run_for = view->metadata.annotations.Find(api::kAnnotationRunFor);
  if (run_for == nullptr) return;
  auto duration = util::ParseDuration(*run_for);
  if (!duration || *duration < 0) return;  // not a duration: the pod runs on (the loader refuses it)
  // A container restarted Always never leaves the pod finished.
  const json::Document doc = ParseObject(*pod.object);
  const std::string_view restart = json::GetString(doc["spec"], "restartPolicy");
  if (restart != "Never" && restart != "OnFailure") return;
  const int64_t at = view->status.start_time_ns.value_or(ctx_.clock.NowNs()) + *duration;
  std::lock_guard lock(mu_);
  completions_.emplace(at, Removal{pod.namespace_(), pod.name(), pod.uid()});
  completion_at_[pod.uid()] = at;
}

void NodeLifecycle::CompletePod(const PodFacts& pod) {
  auto view = pod.object->View<api::Pod>();
  const int64_t now = ctx_.clock.NowNs();
  WriteKubeletStatus(pod, view && view->status.start_time_ns ? *view->status.start_time_ns : now, now, nullptr);
}

void NodeLifecycle::WriteKubeletStatus(const PodFacts& pod, int64_t started_ns, std::optional<int64_t> finished_ns,
                                       const std::function<void(json::Value&, json::Allocator&)>& running_status) {
  const bool completed = finished_ns.has_value();
  const std::string started = api::FormatRFC3339(started_ns);
  const std::string finished = completed ? api::FormatRFC3339(*finished_ns) : std::string();
  const StartFacts facts = FactsOf(*pod.object);
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value& status = json::Child(patch, "status", a);
  json::Set(status, "phase", json::MakeString(completed ? "Succeeded" : "Running", a), a);
  if (running_status) running_status(status, a);
  // The conditions the kubelet reports; others (DisruptionTarget, ...) stay. A completed pod is
  // no longer Ready (reason PodCompleted, since it finished).
  json::Value conditions(rapidjson::kArrayType);
  for (const std::string& c : facts.other_conditions) {
    json::Document d;
    if (json::Parse(c, d)) conditions.PushBack(json::Value(d, a), a);
  }
  for (std::string_view t : kKubeletConditions) {
    const bool not_ready = completed && (t == "Ready" || t == "ContainersReady");
    json::Value c(rapidjson::kObjectType);
    json::Set(c, "type", json::MakeString(t, a), a);
    json::Set(c, "status", json::MakeString(not_ready ? "False" : "True", a), a);
    json::Set(c, "lastProbeTime", json::Value(), a);
    json::Set(c, "lastTransitionTime", json::MakeString(not_ready ? finished : started, a), a);
    if (not_ready) json::Set(c, "reason", json::MakeString("PodCompleted", a), a);
    conditions.PushBack(c, a);
  }
  json::Set(status, "conditions", std::move(conditions), a);
  json::Value statuses(rapidjson::kArrayType);
  for (const auto& [name, image] : facts.containers) {
    json::Value s(rapidjson::kObjectType);
    json::Set(s, "name", json::MakeString(name, a), a);
    json::Set(s, "image", json::MakeString(image, a), a);
    json::Set(s, "imageID", json::MakeString("", a), a);
    json::Set(s, "ready", json::Value(!completed), a);
    json::Set(s, "started", json::Value(!completed), a);
    json::Set(s, "restartCount", json::Value(0), a);
    json::Value& state = json::Child(json::Child(s, "state", a), completed ? "terminated" : "running", a);
    if (completed) {
      json::Set(state, "exitCode", json::Value(0), a);
      json::Set(state, "reason", json::MakeString("Completed", a), a);
    }
    json::Set(state, "startedAt", json::MakeString(started, a), a);
    if (completed) json::Set(state, "finishedAt", json::MakeString(finished, a), a);
    statuses.PushBack(s, a);
  }
  json::Set(status, "containerStatuses", std::move(statuses), a);
  // Only while the pod is still this version: a pod deleted or changed meanwhile is seen again.
  json::Set(json::Child(patch, "metadata", a), "resourceVersion",
            json::MakeString(std::to_string(pod.object->resource_version), a), a);
  (void)ctx_.store.MergePatch(pods_, pod.namespace_(), pod.name(), patch, "status");
}

void NodeLifecycle::StartPodsOn(const std::string& node_name) {
  std::vector<PodFactsPtr> pods;
  for (const auto& [seq, pod] : ctx_.pods.OnNode(node_name)) pods.push_back(pod);
  for (const PodFactsPtr& pod : pods) OnPod(*pod);
}

std::string NodeLifecycle::NextPodIP(const std::string& node_name) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = node_ordinal_.try_emplace(node_name, static_cast<uint32_t>(node_ordinal_.size()));
  const uint32_t host = next_host_[node_name]++;
  // 10.244.0.0/16 split into one /24 per node as the default pod CIDR allocator does; a node
  // with more than 253 pods borrows the next octet, still unique for the run.
  const uint32_t n = it->second * 253 + host % 253;
  return fmt::format("10.{}.{}.{}", 244 + n / (256 * 253), (n / 253) % 256, 2 + n % 253);
}

void NodeLifecycle::StartPod(const PodFacts& pod, const NodeFacts& node) {
  const std::string& host_ip = node.internal_ip;
  const std::string pod_ip = pod.host_network && !host_ip.empty() ? host_ip : NextPodIP(node.name());
  const int64_t now_ns = ctx_.clock.NowNs();
  const std::string now = api::FormatRFC3339(now_ns);
  auto ip_list = [](std::string_view ip, json::Allocator& a) {
    json::Value ips(rapidjson::kArrayType);
    json::Value entry(rapidjson::kObjectType);
    json::Set(entry, "ip", json::MakeString(ip, a), a);
    ips.PushBack(entry, a);
    return ips;
  };
  WriteKubeletStatus(pod, now_ns, std::nullopt, [&](json::Value& status, json::Allocator& a) {
    json::Set(status, "startTime", json::MakeString(now, a), a);
    if (!host_ip.empty()) {
      json::Set(status, "hostIP", json::MakeString(host_ip, a), a);
      json::Set(status, "hostIPs", ip_list(host_ip, a), a);
    }
    json::Set(status, "podIP", json::MakeString(pod_ip, a), a);
    json::Set(status, "podIPs", ip_list(pod_ip, a), a);
  });
}

void NodeLifecycle::RemovePodsOf(const std::string& node_name) {
  // In creation order, as SimulatedCluster removed them (their controllers' replacements draw
  // their names in this order).
  std::vector<PodFactsPtr> pods;
  for (const auto& [seq, pod] : ctx_.pods.OnNode(node_name)) pods.push_back(pod);
  for (const PodFactsPtr& pod : pods) {
    DeleteOptions d;
    d.grace_period_seconds = 0;
    d.precondition_uid = pod->uid();
    (void)ctx_.store.Delete(pods_, pod->namespace_(), pod->name(), d);
  }
}

std::optional<int64_t> NodeLifecycle::NextEventNs() const {
  std::lock_guard lock(mu_);
  std::optional<int64_t> next;
  if (!removals_.empty()) next = removals_.begin()->first;
  if (!completions_.empty() && (!next || completions_.begin()->first < *next)) next = completions_.begin()->first;
  return next;
}

void NodeLifecycle::FireEvents(int64_t now_ns) {
  std::vector<Removal> due, done;
  {
    std::lock_guard lock(mu_);
    while (!completions_.empty() && completions_.begin()->first <= now_ns) {
      done.push_back(std::move(completions_.begin()->second));
      completion_at_.erase(done.back().uid);
      completions_.erase(completions_.begin());
    }
    while (!removals_.empty() && removals_.begin()->first <= now_ns) {
      due.push_back(std::move(removals_.begin()->second));
      removal_at_.erase(due.back().uid);
      removals_.erase(removals_.begin());
    }
  }
  for (const Removal& r : done) {
    // Still running, and still that pod (a terminating pod goes as it was deleted).
    PodFactsPtr pod = ctx_.pods.Get(r.uid);
    if (pod && pod->phase == "Running" && !pod->Terminating()) CompletePod(*pod);
  }
  for (const Removal& r : due) {
    DeleteOptions d;
    d.grace_period_seconds = 0;
    d.precondition_uid = r.uid;
    (void)ctx_.store.Delete(pods_, r.namespace_, r.name, d);
  }
}

}  // namespace kubesched::store::controllers
