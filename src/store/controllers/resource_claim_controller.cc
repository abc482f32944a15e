#include "store/controllers/resource_claim_controller.h"

#include <algorithm>

#include "api/resource_types.h"
#include "store/controllers/object_util.h"
#include "store/controllers/pod_informer.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

json::Value Str(std::string_view s, json::Allocator& a) { return json::MakeString(s, a); }

bool PodDone(const api::Pod& pod) {
  return pod.metadata.deletion_timestamp_ns.has_value() || pod.status.phase == api::PodPhase::kSucceeded ||
         pod.status.phase == api::PodPhase::kFailed;
}

// The claim's owner pod uid (a controller reference to a Pod), or "".
std::string OwnerPodUid(const api::ResourceClaim& claim) {
  for (const api::OwnerReference& r : claim.metadata.owner_references) {
    if (r.kind == "Pod" && r.controller) return r.uid;
  }
  return "";
}

}  // namespace

ResourceClaimController::ResourceClaimController(const ControllerContext& ctx)
    : ctx_(ctx),
      pods_(*ctx.store.FindResource("", "pods")),
      claims_(ctx.store.FindResource(api::kResourceApiGroup, "resourceclaims")),
      templates_(ctx.store.FindResource(api::kResourceApiGroup, "resourceclaimtemplates")) {}

void ResourceClaimController::Index(const Object& object, bool add) {
  auto claim = object.View<api::ResourceClaim>();
  if (!claim) return;
  const std::string owner = OwnerPodUid(*claim);
  const std::string* pod_claim = claim->metadata.annotations.Find(api::kAnnotationPodClaimName);
  if (owner.empty() || pod_claim == nullptr) return;
  auto key = std::make_tuple(claim->metadata.namespace_, owner, *pod_claim);
  if (add) {
    generated_[key] = claim->metadata.name;
  } else if (auto g = generated_.find(key); g != generated_.end() && g->second == claim->metadata.name) {
    generated_.erase(g);
  }
}

void ResourceClaimController::OnEvent(const WatchEvent& event) {
  if (claims_ == nullptr || !event.object) return;
  if (event.object->type == claims_) {
    Index(*event.object, event.type != EventType::kDeleted);
    if (event.type != EventType::kDeleted) SyncClaim(*event.object);
    return;
  }
  if (event.object->type != &pods_) return;
  auto pod = event.object->View<api::Pod>();
  if (!pod || pod->spec.resource_claims.empty()) return;
  if (event.type != EventType::kDeleted && !PodDone(*pod)) {
    SyncPod(*event.object);
    return;
  }
  // Gone or done: the claims it used may now be free.
  for (const api::PodResourceClaim& pc : pod->spec.resource_claims) {
    std::string name;
    if (pc.resource_claim_name) {
      name = *pc.resource_claim_name;
    } else if (auto g = generated_.find({pod->metadata.namespace_, pod->metadata.uid, pc.name});
               g != generated_.end()) {
      name = g->second;
    }
    if (name.empty()) continue;
    if (auto claim = ctx_.store.Get(*claims_, pod->metadata.namespace_, name)) SyncClaim(**claim);
  }
}

void ResourceClaimController::Resync() {
  if (claims_ == nullptr) return;
  generated_.clear();
  const auto claims = ListAll(ctx_.store, *claims_, "");
  for (const ObjectPtr& claim : claims) Index(*claim, true);
  for (const ObjectPtr& pod : ListAll(ctx_.store, pods_, "")) {
    auto view = pod->View<api::Pod>();
    if (view && !view->spec.resource_claims.empty() && !PodDone(*view)) SyncPod(*pod);
  }
  for (const ObjectPtr& claim : claims) SyncClaim(*claim);
}

void ResourceClaimController::SyncPod(const Object& object) {
  auto pod = object.View<api::Pod>();
  if (!pod) return;
  const std::string& ns = pod->metadata.namespace_;
  std::vector<api::PodResourceClaimStatus> statuses = pod->status.resource_claim_statuses;
  bool changed = false;
  for (const api::PodResourceClaim& pc : pod->spec.resource_claims) {
    if (!pc.resource_claim_template_name) continue;
    auto recorded = std::find_if(statuses.begin(), statuses.end(),
                                 [&](const api::PodResourceClaimStatus& s) { return s.name == pc.name; });
    if (recorded != statuses.end() && recorded->resource_claim_name) continue;
    std::string claim_name;
    if (auto g = generated_.find({ns, pod->metadata.uid, pc.name}); g != generated_.end()) {
      claim_name = g->second;
    } else {
      // Made from the template; a missing template leaves the pod waiting (the scheduler reports
      // it), and a later sync retries.
      auto tmpl_object = ctx_.store.Get(*templates_, ns, *pc.resource_claim_template_name);
      if (!tmpl_object) continue;
      json::Document tmpl = Parse(**tmpl_object);
      json::Document claim(rapidjson::kObjectType);
      auto& a = claim.GetAllocator();
      json::Set(claim, "apiVersion", Str("resource.k8s.io/v1", a), a);
      json::Set(claim, "kind", Str("ResourceClaim", a), a);
      json::Value& meta = json::Child(claim, "metadata", a);
      const json::Value* tmpl_meta = At(tmpl, {"spec", "metadata"});
      for (std::string_view key : {"labels", "annotations"}) {
        const json::Value* v = tmpl_meta != nullptr ? json::Find(*tmpl_meta, key) : nullptr;
        if (v != nullptr && v->IsObject()) json::Set(meta, key, json::Value(*v, a), a);
      }
      json::Set(json::Child(meta, "annotations", a), api::kAnnotationPodClaimName, Str(pc.name, a), a);
      json::Set(meta, "generateName", Str(api::ResourceClaimGenerateName(pod->metadata.name, pc.name), a), a);
      json::Set(meta, "namespace", Str(ns, a), a);
      json::Value refs(rapidjson::kArrayType);
      json::Value ref(rapidjson::kObjectType);
      json::Set(ref, "apiVersion", Str("v1", a), a);
      json::Set(ref, "kind", Str("Pod", a), a);
      json::Set(ref, "name", Str(pod->metadata.name, a), a);
      json::Set(ref, "uid", Str(pod->metadata.uid, a), a);
      json::Set(ref, "controller", json::Value(true), a);
      json::Set(ref, "blockOwnerDeletion", json::Value(true), a);
      refs.PushBack(std::move(ref), a);
      json::Set(meta, "ownerReferences", std::move(refs), a);
      if (const json::Value* spec = At(tmpl, {"spec", "spec"}); spec != nullptr && spec->IsObject()) {
        json::Set(claim, "spec", json::Value(*spec, a), a);
      } else {
        json::Child(claim, "spec", a);
      }
      auto created = ctx_.store.Create(*claims_, ns, std::move(claim));
      if (!created) continue;
      claim_name = (*created)->name;
      Index(**created, true);
    }
    if (recorded != statuses.end()) {
      recorded->resource_claim_name = claim_name;
    } else {
      statuses.push_back({pc.name, claim_name});
    }
    changed = true;
  }
  if (!changed) return;
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const auto& s : statuses) {
    json::Value item(rapidjson::kObjectType);
    json::Set(item, "name", Str(s.name, a), a);
    if (s.resource_claim_name) json::Set(item, "resourceClaimName", Str(*s.resource_claim_name, a), a);
    list.PushBack(std::move(item), a);
  }
  json::Set(json::Child(patch, "status", a), "resourceClaimStatuses", std::move(list), a);
  (void)ctx_.store.MergePatch(pods_, ns, pod->metadata.name, patch, "status");
}

void ResourceClaimController::SyncClaim(const Object& object) {
  auto claim = object.View<api::ResourceClaim>();
  if (!claim || claim->metadata.deletion_timestamp_ns) return;
  const std::string& ns = claim->metadata.namespace_;
  // Consumers still there and not done (upstream checks each pod reference by name and uid).
  std::vector<api::ResourceClaimConsumerReference> valid;
  for (const auto& ref : claim->reserved_for) {
    if (ref.resource != "pods" || !ref.api_group.empty()) {
      valid.push_back(ref);  // someone else's consumer: kept as upstream does
      continue;
    }
    auto pod_object = ctx_.store.Get(pods_, ns, ref.name);
    auto pod = pod_object ? (*pod_object)->View<api::Pod>() : nullptr;
    if (pod && pod->metadata.uid == ref.uid && !PodDone(*pod)) valid.push_back(ref);
  }
  const std::string owner = OwnerPodUid(*claim);
  // A claim made for a pod goes once that pod is gone or done and nothing uses the claim.
  bool owner_done = false;
  if (!owner.empty()) {
    const PodFactsPtr facts = ctx_.pods.Get(owner);
    owner_done = !facts || !facts->Active();
  }
  if (valid.empty() && !owner.empty() && owner_done) {
    DeleteOptions options;
    options.precondition_uid = object.uid;
    (void)ctx_.store.Delete(*claims_, ns, claim->metadata.name, options);
    return;
  }
  if (valid.size() == claim->reserved_for.size() && !(valid.empty() && claim->allocation)) return;
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value& status = json::Child(patch, "status", a);
  json::Value list(rapidjson::kArrayType);
  for (const auto& ref : valid) {
    json::Value item(rapidjson::kObjectType);
    if (!ref.api_group.empty()) json::Set(item, "apiGroup", Str(ref.api_group, a), a);
    json::Set(item, "resource", Str(ref.resource, a), a);
    json::Set(item, "name", Str(ref.name, a), a);
    json::Set(item, "uid", Str(ref.uid, a), a);
    list.PushBack(std::move(item), a);
  }
  if (valid.empty()) {
    // Deallocated: the devices are free for other claims (structured parameters need no driver).
    json::Set(status, "reservedFor", json::Value(rapidjson::kNullType), a);
    json::Set(status, "allocation", json::Value(rapidjson::kNullType), a);
  } else {
    json::Set(status, "reservedFor", std::move(list), a);
  }
  (void)ctx_.store.MergePatch(*claims_, ns, claim->metadata.name, patch, "status");
}

}  // namespace kubesched::store::controllers
