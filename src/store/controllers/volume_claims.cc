#include "store/controllers/volume_claims.h"

#include "api/storage_types.h"
#include "api/types.h"
#include "api/workloads.h"
#include "store/controllers/object_util.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

json::Value Str(std::string_view s, json::Allocator& a) { return json::MakeString(s, a); }

json::Value OwnerReference(std::string_view api_version, std::string_view kind, std::string_view name,
                           std::string_view uid, bool controller, json::Allocator& a) {
  json::Value ref(rapidjson::kObjectType);
  json::Set(ref, "apiVersion", Str(api_version, a), a);
  json::Set(ref, "kind", Str(kind, a), a);
  json::Set(ref, "name", Str(name, a), a);
  json::Set(ref, "uid", Str(uid, a), a);
  if (controller) json::Set(ref, "controller", json::Value(true), a);
  json::Set(ref, "blockOwnerDeletion", json::Value(true), a);
  return ref;
}

// A claim document from a template (metadata and spec), named and placed.
json::Document ClaimFromTemplate(std::string_view template_json, std::string_view name, std::string_view namespace_) {
  json::Document claim(rapidjson::kObjectType);
  json::Document tmpl;
  if (!json::Parse(template_json, tmpl) || !tmpl.IsObject()) tmpl.SetObject();
  auto& a = claim.GetAllocator();
  json::Set(claim, "apiVersion", Str("v1", a), a);
  json::Set(claim, "kind", Str("PersistentVolumeClaim", a), a);
  json::Value& meta = json::Child(claim, "metadata", a);
  if (const json::Value* m = json::Find(tmpl, "metadata"); m != nullptr && m->IsObject()) {
    for (std::string_view key : {"labels", "annotations"}) {
      if (const json::Value* v = json::Find(*m, key); v != nullptr && v->IsObject()) {
        json::Set(meta, key, json::Value(*v, a), a);
      }
    }
  }
  json::Set(meta, "name", Str(name, a), a);
  json::Set(meta, "namespace", Str(namespace_, a), a);
  if (const json::Value* spec = json::Find(tmpl, "spec"); spec != nullptr && spec->IsObject()) {
    json::Set(claim, "spec", json::Value(*spec, a), a);
  }
  return claim;
}

}  // namespace

StatefulSetClaims StatefulSetClaims::Of(const json::Value& statefulset) {
  StatefulSetClaims out;
  const json::Value* spec = json::Find(statefulset, "spec");
  if (spec == nullptr) return out;
  if (const json::Value* templates = json::Find(*spec, "volumeClaimTemplates"); templates && templates->IsArray()) {
    for (const json::Value& t : templates->GetArray()) {
      const json::Value* meta = json::Find(t, "metadata");
      std::string_view name = meta != nullptr ? json::GetString(*meta, "name") : std::string_view();
      if (name.empty()) continue;
      out.names.emplace_back(name);
      out.templates.push_back(json::Encode(t));
    }
  }
  if (const json::Value* labels = At(*spec, {"selector", "matchLabels"}); labels && labels->IsObject()) {
    for (auto it = labels->MemberBegin(); it != labels->MemberEnd(); ++it) {
      out.selector_labels.emplace_back(json::View(it->name), json::View(it->value));
    }
  }
  if (const json::Value* policy = json::Find(*spec, "persistentVolumeClaimRetentionPolicy")) {
    out.delete_when_deleted = json::GetString(*policy, "whenDeleted") == "Delete";
    out.delete_when_scaled = json::GetString(*policy, "whenScaled") == "Delete";
  }
  return out;
}

void UseStatefulSetClaims(json::Document& pod, const StatefulSetClaims& claims, std::string_view set, int64_t ordinal) {
  if (claims.empty()) return;
  auto& a = pod.GetAllocator();
  json::Value& spec = json::Child(pod, "spec", a);
  json::Value* volumes = json::Find(spec, "volumes");
  if (volumes == nullptr || !volumes->IsArray())
    volumes = &json::Set(spec, "volumes", json::Value(rapidjson::kArrayType), a);
  for (const std::string& name : claims.names) {
    json::Value volume(rapidjson::kObjectType);
    json::Set(volume, "name", Str(name, a), a);
    json::Set(json::Child(volume, "persistentVolumeClaim", a), "claimName",
              Str(api::StatefulSetClaimName(name, set, ordinal), a), a);
    bool replaced = false;
    for (json::Value& v : volumes->GetArray()) {
      if (json::GetString(v, "name") == name) {
        v = std::move(volume);
        replaced = true;
        break;
      }
    }
    if (!replaced) volumes->PushBack(std::move(volume), a);
  }
}

void CreateStatefulSetClaims(Store& store, const ResourceType& claims_type, const StatefulSetClaims& claims,
                             std::string_view namespace_, std::string_view set, std::string_view set_uid,
                             int64_t ordinal) {
  for (size_t i = 0; i < claims.templates.size(); ++i) {
    const std::string name = api::StatefulSetClaimName(claims.names[i], set, ordinal);
    if (store.Get(claims_type, namespace_, name)) continue;
    json::Document claim = ClaimFromTemplate(claims.templates[i], name, namespace_);
    auto& a = claim.GetAllocator();
    json::Value& meta = json::Child(claim, "metadata", a);
    json::Value& labels = json::Child(meta, "labels", a);
    for (const auto& [k, v] : claims.selector_labels) json::Set(labels, k, Str(v, a), a);
    if (claims.delete_when_deleted) {
      json::Value refs(rapidjson::kArrayType);
      refs.PushBack(OwnerReference("apps/v1", "StatefulSet", set, set_uid, false, a), a);
      json::Set(meta, "ownerReferences", std::move(refs), a);
    }
    (void)store.Create(claims_type, namespace_, std::move(claim));
  }
}

void DeleteStatefulSetClaims(Store& store, const ResourceType& claims_type, const StatefulSetClaims& claims,
                             std::string_view namespace_, std::string_view set, int64_t ordinal) {
  for (const std::string& name : claims.names) {
    (void)store.Delete(claims_type, namespace_, api::StatefulSetClaimName(name, set, ordinal), DeleteOptions{});
  }
}

EphemeralVolumeController::EphemeralVolumeController(const ControllerContext& ctx)
    : ctx_(ctx),
      pods_(*ctx.store.FindResource("", "pods")),
      claims_(*ctx.store.FindResource("", "persistentvolumeclaims")) {}

void EphemeralVolumeController::OnEvent(const WatchEvent& event) {
  if (!event.object || event.object->type != &pods_) return;
  if (event.type == EventType::kAdded) {
    Sync(*event.object);
  } else if (event.type == EventType::kDeleted) {
    auto pod = event.object->View<api::Pod>();
    if (!pod) return;
    for (const api::Volume& v : pod->spec.volumes) {
      if (!v.ephemeral) continue;
      const std::string name = api::ClaimNameOf(*pod, v);
      auto claim = ctx_.store.Get(claims_, pod->metadata.namespace_, name);
      if (!claim) continue;
      auto view = (*claim)->View<api::PersistentVolumeClaim>();
      const bool owned =
          view && std::any_of(view->metadata.owner_references.begin(), view->metadata.owner_references.end(),
                              [&](const api::OwnerReference& r) { return r.uid == pod->metadata.uid; });
      if (!owned) continue;
      DeleteOptions options;
      options.precondition_uid = (*claim)->uid;
      (void)ctx_.store.Delete(claims_, pod->metadata.namespace_, name, options);
    }
  }
}

void EphemeralVolumeController::Resync() {
  for (const ObjectPtr& pod : ListAll(ctx_.store, pods_, "")) Sync(*pod);
}

void EphemeralVolumeController::Sync(const Object& object) {
  auto pod = object.View<api::Pod>();
  if (!pod || pod->metadata.deletion_timestamp_ns) return;
  for (const api::Volume& v : pod->spec.volumes) {
    if (!v.ephemeral || !v.claim_template_json) continue;
    const std::string name = api::ClaimNameOf(*pod, v);
    if (ctx_.store.Get(claims_, pod->metadata.namespace_, name)) continue;
    json::Document claim = ClaimFromTemplate(*v.claim_template_json, name, pod->metadata.namespace_);
    auto& a = claim.GetAllocator();
    json::Value refs(rapidjson::kArrayType);
    refs.PushBack(OwnerReference("v1", "Pod", pod->metadata.name, pod->metadata.uid, true, a), a);
    json::Set(json::Child(claim, "metadata", a), "ownerReferences", std::move(refs), a);
    (void)ctx_.store.Create(claims_, pod->metadata.namespace_, std::move(claim));
  }
}

}  // namespace kubesched::store::controllers
