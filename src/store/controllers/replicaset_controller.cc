#include "store/controllers/replicaset_controller.h"

#include <algorithm>

#include "store/controllers/pod_factory.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

bool LabelsInclude(const LabelPairs& labels, const LabelPairs& wanted) {
  return std::includes(labels.begin(), labels.end(), wanted.begin(), wanted.end());
}

std::vector<PodFactsPtr> Values(const PodsBySeq& pods) {
  std::vector<PodFactsPtr> out;
  out.reserve(pods.size());
  for (const auto& [seq, p] : pods) out.push_back(p);
  return out;
}

}  // namespace

void DeletePods(Store& store, const ResourceType& pod_type, const std::vector<PodFactsPtr>& pods) {
  for (const PodFactsPtr& p : pods) {
    DeleteOptions options;
    options.precondition_uid = p->uid();
    (void)store.Delete(pod_type, p->namespace_(), p->name(), options);
  }
}

ReplicaSetController::ReplicaSetController(const ControllerContext& ctx, const ReplicaKind& kind)
    : ctx_(ctx),
      kind_(kind),
      pods_(*ctx.store.FindResource("", "pods")),
      owners_(*ctx.store.FindResource(kind.group, kind.resource)) {}

void ReplicaSetController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &owners_) {
    OnOwner(event);
  } else if (event.object->type == &pods_) {
    OnPod(event);
  }
}

void ReplicaSetController::Resync() {
  for (const ObjectPtr& o : ListAll(ctx_.store, owners_, "")) {
    if (by_uid_.contains(o->uid)) continue;
    OnOwner(WatchEvent{EventType::kAdded, o, nullptr});
  }
}

void ReplicaSetController::OnOwner(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  if (event.type == EventType::kDeleted) {
    by_uid_.erase(uid);
    expectations_.Forget(uid);
    DeletePods(ctx_.store, pods_, Values(ctx_.pods.OwnedBy(uid)));
    return;
  }
  auto it = by_uid_.find(uid);
  if (it != by_uid_.end() && it->second.info.object->resource_version >= event.object->resource_version) return;
  json::Document scratch;
  const json::Value& doc = ParsedObject(event, scratch);
  WorkloadInfo info = ParseWorkload(event.object, doc, kind_.selector_form);
  Owner* owner;
  if (it == by_uid_.end()) {
    owner = &by_uid_.emplace(uid, Owner{std::move(info), {}}).first->second;
    Recount(*owner);
  } else {
    owner = &it->second;
    const bool relabeled = owner->info.template_labels != info.template_labels;
    owner->info = std::move(info);
    if (relabeled) Recount(*owner);
  }
  Manage(*owner);
  dirty_.push_back(uid);
}

void ReplicaSetController::OnPod(const WatchEvent& event) {
  const PodFactsPtr& before = ctx_.pods.Previous();
  const PodFactsPtr& after = ctx_.pods.Current();
  const PodFacts* any = after ? after.get() : before.get();
  if (any == nullptr || !any->controller) return;
  auto it = by_uid_.find(any->controller->uid);
  if (it == by_uid_.end()) return;
  Owner& owner = it->second;
  const Tally was = owner.tally;
  if (before) Count(owner, *before, -1);
  if (after) Count(owner, *after, +1);
  if (event.type == EventType::kAdded) expectations_.CreationObserved(owner.info.uid());
  if (event.type == EventType::kDeleted || (after && after->Terminating())) {
    expectations_.DeletionObserved(owner.info.uid(), any->uid());
  }
  const Tally& now = owner.tally;
  if (was.active == now.active && was.ready == now.ready && was.fully_labeled == now.fully_labeled) return;
  if (was.active != now.active) Manage(owner);
  dirty_.push_back(owner.info.uid());
}

void ReplicaSetController::Count(Owner& owner, const PodFacts& pod, int sign) const {
  if (!pod.Active()) return;
  owner.tally.active += sign;
  if (pod.ready) owner.tally.ready += sign;
  if (LabelsInclude(pod.object->labels(), owner.info.template_labels)) owner.tally.fully_labeled += sign;
}

void ReplicaSetController::Recount(Owner& owner) const {
  owner.tally = {};
  for (const auto& [seq, pod] : ctx_.pods.OwnedBy(owner.info.uid())) Count(owner, *pod, +1);
}

void ReplicaSetController::Manage(Owner& owner) {
  const WorkloadInfo& w = owner.info;
  if (w.deleting || !expectations_.Satisfied(w.uid())) return;
  const int64_t replicas = w.replicas.value_or(1);
  const int64_t diff = owner.tally.active - replicas;
  if (diff < 0 && !w.template_json.empty()) {
    json::Document tmpl;
    if (!json::Parse(w.template_json, tmpl)) return;
    const PodOwner pod_owner{kind_.api_version, kind_.kind, w.name(), w.uid()};
    const std::string base = w.name() + "-";
    expectations_.ExpectCreations(w.uid(), -diff);
    for (int64_t i = 0; i < -diff; ++i) {
      auto created =
          CreateGeneratedPod(ctx_.store, pods_, PodFromTemplate(tmpl, w.namespace_(), pod_owner), base, ctx_.rng);
      if (!created) {
        // A pod the API server rejects (quota, admission) is retried on the next change; the
        // ones not attempted are not expected either.
        for (int64_t j = i; j < -diff; ++j) expectations_.CreationObserved(w.uid());
        break;
      }
    }
  } else if (diff > 0) {
    // controller.ActivePods' order, most deletable first: unassigned before assigned, Pending
    // before Running, not ready before ready, then newer before older.
    std::vector<PodFactsPtr> active;
    for (const auto& [seq, p] : ctx_.pods.OwnedBy(w.uid())) {
      if (p->Active()) active.push_back(p);
    }
    std::stable_sort(active.begin(), active.end(), [](const PodFactsPtr& x, const PodFactsPtr& y) {
      if (x->node_name.empty() != y->node_name.empty()) return x->node_name.empty();
      if ((x->phase == "Running") != (y->phase == "Running")) return x->phase != "Running";
      if (x->ready != y->ready) return !x->ready;
      if (x->created_ns != y->created_ns) return x->created_ns > y->created_ns;
      return x->seq > y->seq;
    });
    active.resize(static_cast<size_t>(std::min<int64_t>(diff, static_cast<int64_t>(active.size()))));
    for (const PodFactsPtr& p : active) expectations_.ExpectDeletion(w.uid(), p->uid());
    for (const PodFactsPtr& p : active) {
      DeleteOptions options;
      options.precondition_uid = p->uid();
      if (!ctx_.store.Delete(pods_, p->namespace_(), p->name(), options)) {
        expectations_.DeletionObserved(w.uid(), p->uid());
      }
    }
  }
}

void ReplicaSetController::Flush() {
  std::vector<std::string> dirty;
  dirty.swap(dirty_);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const std::string& uid : dirty) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) WriteStatus(it->second);
  }
}

void ReplicaSetController::WriteStatus(const Owner& owner) {
  if (owner.info.deleting) return;
  json::Document status;
  status.SetObject();
  auto& a = status.GetAllocator();
  json::Set(status, "replicas", json::Value(owner.tally.active), a);
  json::Set(status, "fullyLabeledReplicas", json::Value(owner.tally.fully_labeled), a);
  json::Set(status, "readyReplicas", json::Value(owner.tally.ready), a);
  // minReadySeconds is not modelled: a ready pod is available.
  json::Set(status, "availableReplicas", json::Value(owner.tally.ready), a);
  json::Set(status, "observedGeneration", json::Value(owner.info.generation), a);
  PatchStatusIfChanged(ctx_.store, owners_, owner.info, status);
}

}  // namespace kubesched::store::controllers
