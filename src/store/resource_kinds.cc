#include "store/resource_kinds.h"

#include "api/decode.h"
#include "api/resource_types.h"
#include "store/typed_view.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

ResourceType Make(std::string resource, std::string kind, std::string singular, bool namespaced) {
  ResourceType t;
  t.group = std::string(api::kResourceApiGroup);
  t.version = "v1";
  t.resource = std::move(resource);
  t.kind = std::move(kind);
  t.singular = std::move(singular);
  t.namespaced = namespaced;
  return t;
}

void SetIfAbsent(json::Value& object, std::string_view key, json::Value value, json::Allocator& a) {
  if (json::Find(object, key) == nullptr) json::Set(object, key, std::move(value), a);
}

// A request's defaults (SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest):
// allocationMode ExactCount with count 1, tolerations' operator Equal.
void DefaultRequest(json::Value& request, json::Allocator& a) {
  if (!request.IsObject()) return;
  SetIfAbsent(request, "allocationMode", json::MakeString("ExactCount", a), a);
  if (json::GetString(request, "allocationMode") == "ExactCount") SetIfAbsent(request, "count", json::Value(1), a);
  if (json::Value* tolerations = json::Find(request, "tolerations"); tolerations && tolerations->IsArray()) {
    for (auto& t : tolerations->GetArray()) {
      if (t.IsObject()) SetIfAbsent(t, "operator", json::MakeString("Equal", a), a);
    }
  }
}

// spec.devices.requests of a claim's spec (a claim's own, or a template's spec.spec).
void DefaultClaimSpec(json::Value* spec, json::Allocator& a) {
  if (spec == nullptr || !spec->IsObject()) return;
  json::Value* devices = json::Find(*spec, "devices");
  if (devices == nullptr || !devices->IsObject()) return;
  json::Value* requests = json::Find(*devices, "requests");
  if (requests == nullptr || !requests->IsArray()) return;
  for (auto& r : requests->GetArray()) {
    if (!r.IsObject()) continue;
    if (json::Value* exactly = json::Find(r, "exactly")) DefaultRequest(*exactly, a);
    if (json::Value* first = json::Find(r, "firstAvailable"); first && first->IsArray()) {
      for (auto& s : first->GetArray()) DefaultRequest(s, a);
    }
  }
}

}  // namespace

ResourceType DeviceClasses() {
  ResourceType t = Make("deviceclasses", "DeviceClass", "deviceclass", false);
  SetTypedView<api::DeviceClass, api::DecodeDeviceClass>(t);
  return t;
}

ResourceType ResourceSlices() {
  ResourceType t = Make("resourceslices", "ResourceSlice", "resourceslice", false);
  SetTypedView<api::ResourceSlice, api::DecodeResourceSlice>(t);
  return t;
}

ResourceType ResourceClaims() {
  ResourceType t = Make("resourceclaims", "ResourceClaim", "resourceclaim", true);
  t.subresources = {"status"};
  t.default_fields = [](json::Document& claim) { DefaultClaimSpec(json::Find(claim, "spec"), claim.GetAllocator()); };
  SetTypedView<api::ResourceClaim, api::DecodeResourceClaim>(t);
  return t;
}

ResourceType ResourceClaimTemplates() {
  ResourceType t = Make("resourceclaimtemplates", "ResourceClaimTemplate", "resourceclaimtemplate", true);
  t.default_fields = [](json::Document& tmpl) {
    json::Value* spec = json::Find(tmpl, "spec");
    if (spec != nullptr && spec->IsObject()) DefaultClaimSpec(json::Find(*spec, "spec"), tmpl.GetAllocator());
  };
  SetTypedView<api::ResourceClaimTemplate, api::DecodeResourceClaimTemplate>(t);
  return t;
}

}  // namespace kubesched::store
