#include "store/controllers/replicaset_controller.h"

#include <algorithm>

#include "store/controllers/object_util.h"
#include "store/selectors.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

// controller.ActivePods' order, most deletable first: unassigned before assigned, Pending before
// Running, not ready before ready, then newer before older.
struct Candidate {
  ObjectPtr pod;
  bool assigned;
  bool running;
  bool ready;
  std::string created;
};

}  // namespace

void DeleteDependents(Store& store, const ResourceType& type, std::string_view namespace_, std::string_view owner_uid) {
  for (const ObjectPtr& o : ListAll(store, type, namespace_)) {
    json::Document d = Parse(*o);
    auto owner = ControllerOf(d);
    if (owner && owner->uid == owner_uid) {
      DeleteOptions options;
      options.precondition_uid = o->uid;
      (void)store.Delete(type, o->namespace_, o->name, options);
    }
  }
}

ReplicaSetController::ReplicaSetController(Store& store)
    : store_(store),
      pods_(*store.FindResource("", "pods")),
      replica_sets_(*store.FindResource("apps", "replicasets")) {}

void ReplicaSetController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &replica_sets_) {
    if (event.type == EventType::kDeleted) {
      DeleteDependents(store_, pods_, event.object->namespace_, event.object->uid);
    } else {
      Sync(event.object->namespace_, event.object->name);
    }
  } else if (event.object->type == &pods_) {
    json::Document d = Parse(*event.object);
    if (auto owner = ControllerOf(d); owner && owner->kind == "ReplicaSet") Sync(event.object->namespace_, owner->name);
  }
}

void ReplicaSetController::Resync() {
  for (const ObjectPtr& rs : ListAll(store_, replica_sets_, "")) Sync(rs->namespace_, rs->name);
}

void ReplicaSetController::Sync(std::string_view namespace_, std::string_view name) {
  auto got = store_.Get(replica_sets_, namespace_, name);
  if (!got) return;
  const ObjectPtr rs = *got;
  json::Document doc = Parse(*rs);
  if (IsTerminating(doc)) return;
  const json::Value* spec = json::Find(doc, "spec");
  if (spec == nullptr) return;
  const int64_t replicas = GetInt(*spec, "replicas", 1);
  const json::Value* tmpl = json::Find(*spec, "template");

  std::vector<Candidate> active;
  int64_t fully_labeled = 0, ready = 0;
  LabelSelectorExpr template_labels;
  if (const json::Value* l = tmpl ? At(*tmpl, {"metadata", "labels"}) : nullptr; l && l->IsObject()) {
    for (const auto& m : l->GetObject()) {
      template_labels.requirements.push_back(
          {std::string(json::View(m.name)), LabelRequirement::Op::kIn, {std::string(json::View(m.value))}});
    }
  }
  for (const ObjectPtr& pod : ListAll(store_, pods_, namespace_)) {
    json::Document p = Parse(*pod);
    auto owner = ControllerOf(p);
    if (!owner || owner->uid != rs->uid || !IsPodActive(p)) continue;
    const json::Value* node = At(p, {"spec", "nodeName"});
    const json::Value* phase = At(p, {"status", "phase"});
    const json::Value* created = At(p, {"metadata", "creationTimestamp"});
    const bool is_ready = IsPodReady(p);
    active.push_back(Candidate{pod, node && !json::View(*node).empty(), phase && json::View(*phase) == "Running",
                               is_ready, created ? std::string(json::View(*created)) : ""});
    if (template_labels.Matches(pod->labels)) ++fully_labeled;
    if (is_ready) ++ready;
  }

  const int64_t diff = static_cast<int64_t>(active.size()) - replicas;
  if (diff < 0 && tmpl != nullptr) {
    for (int64_t i = 0; i < -diff; ++i) {
      json::Document pod;
      pod.SetObject();
      auto& a = pod.GetAllocator();
      json::Set(pod, "apiVersion", json::MakeString("v1", a), a);
      json::Set(pod, "kind", json::MakeString("Pod", a), a);
      json::Value& meta = json::Child(pod, "metadata", a);
      json::Set(meta, "generateName", json::MakeString(std::string(name) + "-", a), a);
      json::Set(meta, "namespace", json::MakeString(namespace_, a), a);
      if (const json::Value* tm = json::Find(*tmpl, "metadata")) {
        for (std::string_view k : {"labels", "annotations", "finalizers"}) {
          if (const json::Value* v = json::Find(*tm, k)) json::Set(meta, k, json::Value(*v, a), a);
        }
      }
      json::Value refs(rapidjson::kArrayType);
      json::Value ref(rapidjson::kObjectType);
      json::Set(ref, "apiVersion", json::MakeString("apps/v1", a), a);
      json::Set(ref, "kind", json::MakeString("ReplicaSet", a), a);
      json::Set(ref, "name", json::MakeString(name, a), a);
      json::Set(ref, "uid", json::MakeString(rs->uid, a), a);
      json::Set(ref, "controller", json::Value(true), a);
      json::Set(ref, "blockOwnerDeletion", json::Value(true), a);
      refs.PushBack(ref, a);
      json::Set(meta, "ownerReferences", std::move(refs), a);
      if (const json::Value* ps = json::Find(*tmpl, "spec")) json::Set(pod, "spec", json::Value(*ps, a), a);
      // A pod the API server rejects (quota, admission) is retried on the next change.
      if (!store_.Create(pods_, namespace_, std::move(pod))) break;
    }
  } else if (diff > 0) {
    std::stable_sort(active.begin(), active.end(), [](const Candidate& x, const Candidate& y) {
      if (x.assigned != y.assigned) return !x.assigned;
      if (x.running != y.running) return !x.running;
      if (x.ready != y.ready) return !x.ready;
      return x.created > y.created;
    });
    for (int64_t i = 0; i < diff; ++i) {
      DeleteOptions options;
      options.precondition_uid = active[i].pod->uid;
      (void)store_.Delete(pods_, namespace_, active[i].pod->name, options);
    }
  }

  // Status as the pods stood at this sync: the pods just created or deleted show in the next one,
  // which their own events trigger.
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value& status = json::Child(patch, "status", a);
  json::Set(status, "replicas", json::Value(static_cast<int64_t>(active.size())), a);
  json::Set(status, "fullyLabeledReplicas", json::Value(fully_labeled), a);
  json::Set(status, "readyReplicas", json::Value(ready), a);
  json::Set(status, "availableReplicas", json::Value(ready), a);
  json::Set(status, "observedGeneration", json::Value(GetInt(*json::Find(doc, "metadata"), "generation", 1)), a);
  (void)store_.Patch(replica_sets_, namespace_, name, PatchType::kMergePatch, json::Encode(patch), "status");
}

}  // namespace kubesched::store::controllers
