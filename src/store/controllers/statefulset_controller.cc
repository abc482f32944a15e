#include "store/controllers/statefulset_controller.h"

#include <algorithm>
#include <map>

#include "api/storage_types.h"
#include "api/workloads.h"
#include "store/controllers/deployment_controller.h"
#include "store/controllers/pod_factory.h"
#include "store/controllers/replicaset_controller.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

bool Healthy(const PodFacts& p) { return p.phase == "Running" && p.ready && !p.Terminating(); }

}  // namespace

StatefulSetController::StatefulSetController(const ControllerContext& ctx)
    : ctx_(ctx),
      pods_(*ctx.store.FindResource("", "pods")),
      sets_(*ctx.store.FindResource("apps", "statefulsets")),
      claims_(ctx.store.FindResource("", "persistentvolumeclaims")) {}

void StatefulSetController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &sets_) {
    OnSet(event);
  } else if (event.object->type == &pods_) {
    OnPod(event);
  }
}

void StatefulSetController::Resync() {
  for (const ObjectPtr& s : ListAll(ctx_.store, sets_, "")) {
    if (!by_uid_.contains(s->uid)) OnSet(WatchEvent{EventType::kAdded, s, nullptr});
  }
}

void StatefulSetController::OnSet(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  if (event.type == EventType::kDeleted) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end() && it->second.claims.delete_when_deleted && claims_) {
      // whenDeleted: Delete: the claims the set owns go with it (the garbage collector's part).
      for (const ObjectPtr& claim : ListAll(ctx_.store, *claims_, event.object->namespace_)) {
        auto view = claim->View<api::PersistentVolumeClaim>();
        if (!view) continue;
        for (const api::OwnerReference& ref : view->metadata.owner_references) {
          if (ref.uid != uid) continue;
          DeleteOptions options;
          options.precondition_uid = claim->uid;
          (void)ctx_.store.Delete(*claims_, claim->namespace_, claim->name, options);
          break;
        }
      }
    }
    by_uid_.erase(uid);
    expectations_.Forget(uid);
    std::vector<PodFactsPtr> pods;
    for (const auto& [seq, p] : ctx_.pods.OwnedBy(uid)) pods.push_back(p);
    DeletePods(ctx_.store, pods_, pods);
    return;
  }
  auto it = by_uid_.find(uid);
  if (it != by_uid_.end() && it->second.info.object->resource_version >= event.object->resource_version) return;
  json::Document scratch;
  const json::Value& doc = ParsedObject(event, scratch);
  Set s;
  s.info = ParseWorkload(event.object, doc);
  s.claims = StatefulSetClaims::Of(doc);
  if (const json::Value* spec = json::Find(doc, "spec")) {
    s.parallel = json::GetString(*spec, "podManagementPolicy") == "Parallel";
    s.service_name = std::string(json::GetString(*spec, "serviceName"));
    if (const json::Value* tmpl = json::Find(*spec, "template")) {
      s.revision = s.info.name() + "-" + PodTemplateHash(*tmpl);
    }
  }
  if (const json::Value* rev = At(doc, {"status", "updateRevision"}); rev && !json::View(*rev).empty()) {
    s.revision = std::string(json::View(*rev));
  }
  Set& stored = by_uid_.insert_or_assign(uid, std::move(s)).first->second;
  Manage(stored);
  dirty_.push_back(uid);
}

void StatefulSetController::OnPod(const WatchEvent& event) {
  const PodFactsPtr& before = ctx_.pods.Previous();
  const PodFactsPtr& after = ctx_.pods.Current();
  const PodFacts* any = after ? after.get() : before.get();
  if (any == nullptr || !any->controller || any->controller->kind != "StatefulSet") return;
  auto it = by_uid_.find(any->controller->uid);
  if (it == by_uid_.end()) return;
  if (event.type == EventType::kAdded) expectations_.CreationObserved(it->first);
  if (!after || after->Terminating()) expectations_.DeletionObserved(it->first, any->uid());
  Manage(it->second);
  dirty_.push_back(it->first);
}

void StatefulSetController::Manage(const Set& set) {
  const WorkloadInfo& w = set.info;
  if (w.deleting || w.template_json.empty() || !expectations_.Satisfied(w.uid())) return;
  const int64_t replicas = w.replicas.value_or(1);
  // Pods by ordinal; a pod without one (not made by a StatefulSet) is surplus.
  std::map<int64_t, PodFactsPtr> by_ordinal;
  std::vector<PodFactsPtr> condemned;
  for (const auto& [seq, p] : ctx_.pods.OwnedBy(w.uid())) {
    if (p->ordinal && *p->ordinal < replicas && !by_ordinal.contains(*p->ordinal)) {
      by_ordinal[*p->ordinal] = p;
    } else {
      condemned.push_back(p);
    }
  }
  std::vector<int64_t> to_create;
  std::vector<PodFactsPtr> to_delete;
  bool blocked = false;  // OrderedReady: a lower ordinal is not healthy yet
  for (int64_t i = 0; i < replicas && !blocked; ++i) {
    auto it = by_ordinal.find(i);
    if (it == by_ordinal.end()) {
      to_create.push_back(i);
      blocked = !set.parallel;
      continue;
    }
    const PodFacts& p = *it->second;
    if (p.phase == "Failed" && !p.Terminating()) {
      // Deleted, then recreated under the same name once it is gone.
      to_delete.push_back(it->second);
      blocked = !set.parallel;
    } else if (!Healthy(p)) {
      blocked = !set.parallel;
    }
  }
  // Surplus pods: highest ordinal first; OrderedReady one at a time, once the rest is healthy.
  std::sort(condemned.begin(), condemned.end(), [](const PodFactsPtr& a, const PodFactsPtr& b) {
    return a->ordinal.value_or(-1) > b->ordinal.value_or(-1);
  });
  for (const PodFactsPtr& p : condemned) {
    if (!set.parallel && (blocked || !to_create.empty() || !to_delete.empty())) break;
    if (p->Terminating()) {
      if (!set.parallel) break;
      continue;
    }
    to_delete.push_back(p);
    if (!set.parallel) break;
  }

  if (claims_ != nullptr && !set.claims.empty()) {
    // Every pod's claims exist before it (upstream's createPersistentVolumeClaims), also for
    // pods made elsewhere (a manifest's StatefulSet pods, expanded by the loader).
    for (const auto& [ordinal, p] : by_ordinal) {
      CreateStatefulSetClaims(ctx_.store, *claims_, set.claims, w.namespace_(), w.name(), w.uid(), ordinal);
    }
    for (int64_t ordinal : to_create) {
      CreateStatefulSetClaims(ctx_.store, *claims_, set.claims, w.namespace_(), w.name(), w.uid(), ordinal);
    }
  }
  if (!to_create.empty()) {
    json::Document tmpl;
    if (!json::Parse(w.template_json, tmpl)) return;
    expectations_.ExpectCreations(w.uid(), static_cast<int64_t>(to_create.size()));
    for (size_t k = 0; k < to_create.size(); ++k) {
      const std::string name = w.name() + "-" + std::to_string(to_create[k]);
      json::Document pod = PodFromTemplate(tmpl, w.namespace_(), PodOwner{"apps/v1", "StatefulSet", w.name(), w.uid()});
      SetLabel(pod, api::kLabelStatefulSetPodName, name);
      SetLabel(pod, api::kLabelPodIndex, std::to_string(to_create[k]));
      SetLabel(pod, api::kLabelControllerRevisionHash, set.revision);
      auto& a = pod.GetAllocator();
      json::Value& spec = json::Child(pod, "spec", a);
      json::Set(spec, "hostname", json::MakeString(name, a), a);
      if (!set.service_name.empty()) json::Set(spec, "subdomain", json::MakeString(set.service_name, a), a);
      UseStatefulSetClaims(pod, set.claims, w.name(), to_create[k]);
      if (!CreateNamedPod(ctx_.store, pods_, std::move(pod), name, "")) {
        for (size_t j = k; j < to_create.size(); ++j) expectations_.CreationObserved(w.uid());
        break;
      }
    }
  }
  for (const PodFactsPtr& p : to_delete) expectations_.ExpectDeletion(w.uid(), p->uid());
  for (const PodFactsPtr& p : to_delete) {
    DeleteOptions options;
    options.precondition_uid = p->uid();
    if (!ctx_.store.Delete(pods_, p->namespace_(), p->name(), options))
      expectations_.DeletionObserved(w.uid(), p->uid());
    // whenScaled: Delete: an ordinal scaled away loses its claims (a failed pod's are kept).
    if (claims_ != nullptr && set.claims.delete_when_scaled && p->ordinal && *p->ordinal >= replicas) {
      DeleteStatefulSetClaims(ctx_.store, *claims_, set.claims, w.namespace_(), w.name(), *p->ordinal);
    }
  }
}

void StatefulSetController::Flush() {
  std::vector<std::string> dirty;
  dirty.swap(dirty_);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const std::string& uid : dirty) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) WriteStatus(it->second);
  }
}

void StatefulSetController::WriteStatus(const Set& set) {
  if (set.info.deleting) return;
  int64_t replicas = 0, ready = 0, updated = 0;
  for (const auto& [seq, p] : ctx_.pods.OwnedBy(set.info.uid())) {
    if (!p->Active()) continue;
    ++replicas;
    if (p->ready) ++ready;
    auto rev = std::lower_bound(p->object->labels().begin(), p->object->labels().end(),
                                std::string_view(api::kLabelControllerRevisionHash),
                                [](const auto& pair, std::string_view k) { return pair.first < k; });
    if (rev != p->object->labels().end() && rev->first == api::kLabelControllerRevisionHash &&
        rev->second == set.revision) {
      ++updated;
    }
  }
  json::Document status;
  status.SetObject();
  auto& a = status.GetAllocator();
  json::Set(status, "observedGeneration", json::Value(set.info.generation), a);
  json::Set(status, "replicas", json::Value(replicas), a);
  json::Set(status, "readyReplicas", json::Value(ready), a);
  json::Set(status, "currentReplicas", json::Value(updated), a);
  json::Set(status, "updatedReplicas", json::Value(updated), a);
  // minReadySeconds is not modelled: a ready pod is available.
  json::Set(status, "availableReplicas", json::Value(ready), a);
  json::Set(status, "currentRevision", json::MakeString(set.revision, a), a);
  json::Set(status, "updateRevision", json::MakeString(set.revision, a), a);
  PatchStatusIfChanged(ctx_.store, sets_, set.info, status);
}

}  // namespace kubesched::store::controllers
