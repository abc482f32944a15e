#include "store/controllers/daemonset_controller.h"

#include <algorithm>

#include "store/controllers/deployment_controller.h"
#include "store/controllers/pod_factory.h"
#include "store/controllers/replicaset_controller.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

const std::string* LabelValue(const LabelPairs& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& pair, std::string_view k) { return pair.first < k; });
  return it != labels.end() && it->first == key ? &it->second : nullptr;
}

std::string ExpectationKey(const std::string& daemon_uid, const std::string& node) { return daemon_uid + "/" + node; }

}  // namespace

DaemonSetController::DaemonSetController(const ControllerContext& ctx)
    : ctx_(ctx),
      pods_(*ctx.store.FindResource("", "pods")),
      nodes_(*ctx.store.FindResource("", "nodes")),
      daemons_(*ctx.store.FindResource("apps", "daemonsets")) {}

void DaemonSetController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &daemons_) {
    OnDaemon(event);
  } else if (event.object->type == &pods_) {
    OnPod();
  } else if (event.object->type == &nodes_) {
    OnNode(event);
  }
}

void DaemonSetController::Resync() {
  for (const ObjectPtr& d : ListAll(ctx_.store, daemons_, "")) {
    if (!by_uid_.contains(d->uid)) OnDaemon(WatchEvent{EventType::kAdded, d, nullptr});
  }
}

void DaemonSetController::OnDaemon(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  if (event.type == EventType::kDeleted) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) {
      for (const auto& [node, s] : it->second.nodes) expectations_.Forget(ExpectationKey(uid, node));
      by_uid_.erase(it);
    }
    std::vector<PodFactsPtr> pods;
    for (const auto& [seq, p] : ctx_.pods.OwnedBy(uid)) pods.push_back(p);
    DeletePods(ctx_.store, pods_, pods);
    return;
  }
  auto it = by_uid_.find(uid);
  if (it != by_uid_.end() && it->second.info.object->resource_version >= event.object->resource_version) return;
  json::Document scratch;
  const json::Value& doc = ParsedObject(event, scratch);
  WorkloadInfo info = ParseWorkload(event.object, doc);
  if (it != by_uid_.end() && it->second.info.template_json == info.template_json) {
    it->second.info = std::move(info);
    dirty_.push_back(uid);
    return;
  }
  Daemon& d = by_uid_.insert_or_assign(uid, Daemon{}).first->second;
  d.info = std::move(info);
  const json::Value* tmpl = At(doc, {"spec", "template"});
  if (tmpl != nullptr) {
    d.placement = ParseDaemonPlacement(*tmpl);
    d.revision = d.info.name() + "-" + PodTemplateHash(*tmpl);
  }
  Reevaluate(d);
  std::vector<std::string> nodes;
  for (const auto& [node, s] : d.nodes) nodes.push_back(node);
  std::sort(nodes.begin(), nodes.end());  // a fixed order: pod names are drawn in it
  for (const std::string& node : nodes) ManageNode(d, node);
  dirty_.push_back(uid);
}

void DaemonSetController::Reevaluate(Daemon& d) {
  d.nodes.clear();
  d.counts = {};
  if (d.info.template_json.empty()) return;
  for (const auto& [name, node] : ctx_.nodes.All()) {
    DaemonVerdict v = EvaluateDaemonPlacement(d.placement, *node);
    if (v.should_run) d.nodes[name] = NodeState{v, true, {}};
  }
  for (const auto& [seq, pod] : ctx_.pods.OwnedBy(d.info.uid())) {
    const std::string& node = pod->TargetNode();
    if (node.empty()) continue;
    auto [it, inserted] = d.nodes.try_emplace(node);
    if (inserted) {
      NodeFactsPtr info = ctx_.nodes.Get(node);
      it->second.node_exists = info != nullptr;
      if (info) it->second.verdict = EvaluateDaemonPlacement(d.placement, *info);
    }
    it->second.pods[seq] = pod;
  }
  for (const auto& [node, s] : d.nodes) {
    Counts c = Contribution(d, s);
    d.counts.desired += c.desired;
    d.counts.current += c.current;
    d.counts.misscheduled += c.misscheduled;
    d.counts.ready += c.ready;
    d.counts.updated += c.updated;
  }
}

DaemonSetController::Counts DaemonSetController::Contribution(const Daemon& d, const NodeState& s) const {
  Counts c;
  const bool scheduled = !s.pods.empty();
  if (s.verdict.should_run) {
    c.desired = 1;
    if (scheduled) {
      c.current = 1;
      const PodFacts& oldest = *s.pods.begin()->second;
      c.ready = oldest.ready ? 1 : 0;
      const std::string* rev = LabelValue(oldest.object->labels(), api::kLabelControllerRevisionHash);
      c.updated = rev && *rev == d.revision ? 1 : 0;
    }
  } else if (scheduled) {
    c.misscheduled = 1;
  }
  return c;
}

template <typename F>
void DaemonSetController::Update(Daemon& d, const std::string& node, F&& change) {
  auto [it, inserted] = d.nodes.try_emplace(node);
  NodeState& s = it->second;
  if (inserted) {
    NodeFactsPtr info = ctx_.nodes.Get(node);
    s.node_exists = info != nullptr;
    if (info) s.verdict = EvaluateDaemonPlacement(d.placement, *info);
  }
  // A node without state contributed nothing (every node the daemon should run on has one).
  const Counts before = inserted ? Counts{} : Contribution(d, s);
  change(s);
  const Counts after = Contribution(d, s);
  d.counts.desired += after.desired - before.desired;
  d.counts.current += after.current - before.current;
  d.counts.misscheduled += after.misscheduled - before.misscheduled;
  d.counts.ready += after.ready - before.ready;
  d.counts.updated += after.updated - before.updated;
}

void DaemonSetController::OnPod() {
  const PodFactsPtr& before = ctx_.pods.Previous();
  const PodFactsPtr& after = ctx_.pods.Current();
  const PodFacts* any = after ? after.get() : before.get();
  if (any == nullptr || !any->controller || any->controller->kind != "DaemonSet") return;
  auto it = by_uid_.find(any->controller->uid);
  if (it == by_uid_.end()) return;
  Daemon& d = it->second;
  const std::string before_node = before ? before->TargetNode() : "";
  const std::string after_node = after ? after->TargetNode() : "";
  if (!before_node.empty()) Update(d, before_node, [&](NodeState& s) { s.pods.erase(before->seq); });
  if (!after_node.empty()) Update(d, after_node, [&](NodeState& s) { s.pods[after->seq] = after; });
  if (!before && after) expectations_.CreationObserved(ExpectationKey(d.info.uid(), after_node));
  if (!after || after->Terminating()) {
    expectations_.DeletionObserved(ExpectationKey(d.info.uid(), any->TargetNode()), any->uid());
  }
  for (const std::string& node : {before_node, after_node}) {
    if (node.empty()) continue;
    ManageNode(d, node);
    if (before_node == after_node) break;
  }
  dirty_.push_back(d.info.uid());
}

void DaemonSetController::OnNode(const WatchEvent& event) {
  const std::string& name = event.object->name;
  NodeFactsPtr node = event.type == EventType::kDeleted ? nullptr : ctx_.nodes.Get(name);
  std::vector<std::string> uids;
  for (const auto& [uid, d] : by_uid_) uids.push_back(uid);
  std::sort(uids.begin(), uids.end());  // a fixed order: pod names are drawn in it
  for (const std::string& uid : uids) {
    Daemon& d = by_uid_.at(uid);
    if (d.info.template_json.empty()) continue;
    const DaemonVerdict verdict = node ? EvaluateDaemonPlacement(d.placement, *node) : DaemonVerdict{};
    auto existing = d.nodes.find(name);
    if (existing == d.nodes.end() && !verdict.should_run) continue;
    Update(d, name, [&](NodeState& s) {
      s.verdict = verdict;
      s.node_exists = node != nullptr;
    });
    ManageNode(d, name);
    dirty_.push_back(uid);
  }
}

void DaemonSetController::ManageNode(Daemon& d, const std::string& node) {
  auto it = d.nodes.find(node);
  if (it == d.nodes.end()) return;
  NodeState& s = it->second;
  const std::string key = ExpectationKey(d.info.uid(), node);
  if (d.info.deleting || !expectations_.Satisfied(key)) {
    if (!s.verdict.should_run && s.pods.empty()) d.nodes.erase(it);
    return;
  }
  std::vector<PodFactsPtr> to_delete;
  bool create = false;
  if (!s.node_exists) {
    // Pods bound to a node that is gone are the pod garbage collector's; unscheduled ones pinned
    // to it would wait forever (getUnscheduledPodsWithoutNode).
    for (const auto& [seq, p] : s.pods) {
      if (p->node_name.empty() && !p->Terminating()) to_delete.push_back(p);
    }
  } else if (s.verdict.should_run && s.pods.empty()) {
    create = true;
  } else if (s.verdict.should_continue) {
    // Failed or finished pods go (and are replaced once gone); of several running ones the
    // oldest stays.
    bool kept = false;
    for (const auto& [seq, p] : s.pods) {
      if (p->Terminating()) continue;
      if (p->Finished() || kept) {
        to_delete.push_back(p);
      } else {
        kept = true;
      }
    }
  } else {
    for (const auto& [seq, p] : s.pods) {
      if (!p->Terminating()) to_delete.push_back(p);
    }
  }
  if (create) {
    json::Document tmpl;
    if (json::Parse(d.info.template_json, tmpl)) {
      json::Document pod =
          PodFromTemplate(tmpl, d.info.namespace_(), PodOwner{"apps/v1", "DaemonSet", d.info.name(), d.info.uid()});
      SetLabel(pod, api::kLabelControllerRevisionHash, d.revision);
      SetLabel(pod, "pod-template-generation", std::to_string(d.info.generation));
      json::Value& spec = json::Child(pod, "spec", pod.GetAllocator());
      AddDaemonTolerations(spec, pod.GetAllocator());
      PinToNode(spec, node, pod.GetAllocator());
      expectations_.ExpectCreations(key, 1);
      if (!CreateGeneratedPod(ctx_.store, pods_, std::move(pod), d.info.name() + "-", ctx_.rng)) {
        expectations_.CreationObserved(key);
      }
    }
  }
  for (const PodFactsPtr& p : to_delete) expectations_.ExpectDeletion(key, p->uid());
  for (const PodFactsPtr& p : to_delete) {
    DeleteOptions options;
    options.precondition_uid = p->uid();
    if (!ctx_.store.Delete(pods_, p->namespace_(), p->name(), options)) expectations_.DeletionObserved(key, p->uid());
  }
  // A node that neither wants the daemon nor has its pods needs no state.
  if (auto again = d.nodes.find(node);
      again != d.nodes.end() && !again->second.verdict.should_run && again->second.pods.empty()) {
    d.nodes.erase(again);
  }
}

void DaemonSetController::Flush() {
  std::vector<std::string> dirty;
  dirty.swap(dirty_);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const std::string& uid : dirty) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) WriteStatus(it->second);
  }
}

void DaemonSetController::WriteStatus(const Daemon& d) {
  if (d.info.deleting) return;
  json::Document status;
  status.SetObject();
  auto& a = status.GetAllocator();
  json::Set(status, "desiredNumberScheduled", json::Value(d.counts.desired), a);
  json::Set(status, "currentNumberScheduled", json::Value(d.counts.current), a);
  json::Set(status, "numberMisscheduled", json::Value(d.counts.misscheduled), a);
  json::Set(status, "numberReady", json::Value(d.counts.ready), a);
  // minReadySeconds is not modelled: a ready pod is available.
  json::Set(status, "numberAvailable", json::Value(d.counts.ready), a);
  json::Set(status, "numberUnavailable", json::Value(d.counts.desired - d.counts.ready), a);
  json::Set(status, "updatedNumberScheduled", json::Value(d.counts.updated), a);
  json::Set(status, "observedGeneration", json::Value(d.info.generation), a);
  PatchStatusIfChanged(ctx_.store, daemons_, d.info, status);
}

}  // namespace kubesched::store::controllers
