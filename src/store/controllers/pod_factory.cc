#include "store/controllers/pod_factory.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

// Retries of a generated name that is taken; 27^5 names make a second clash unlikely.
constexpr int kNameAttempts = 8;

void SetMetaMapEntry(json::Document& pod, std::string_view map, std::string_view key, std::string_view value) {
  auto& a = pod.GetAllocator();
  json::Value& m = json::Child(json::Child(pod, "metadata", a), map, a);
  json::Set(m, key, json::MakeString(value, a), a);
}

}  // namespace

json::Document PodFromTemplate(const json::Value& pod_template, std::string_view namespace_, const PodOwner& owner) {
  json::Document pod;
  pod.SetObject();
  auto& a = pod.GetAllocator();
  json::Set(pod, "apiVersion", json::MakeString("v1", a), a);
  json::Set(pod, "kind", json::MakeString("Pod", a), a);
  json::Value& meta = json::Child(pod, "metadata", a);
  json::Set(meta, "namespace", json::MakeString(namespace_, a), a);
  if (const json::Value* tm = json::Find(pod_template, "metadata")) {
    for (std::string_view k : {"labels", "annotations", "finalizers"}) {
      if (const json::Value* v = json::Find(*tm, k)) json::Set(meta, k, json::Value(*v, a), a);
    }
  }
  json::Value refs(rapidjson::kArrayType);
  json::Value ref(rapidjson::kObjectType);
  json::Set(ref, "apiVersion", json::MakeString(owner.api_version, a), a);
  json::Set(ref, "kind", json::MakeString(owner.kind, a), a);
  json::Set(ref, "name", json::MakeString(owner.name, a), a);
  json::Set(ref, "uid", json::MakeString(owner.uid, a), a);
  json::Set(ref, "controller", json::Value(true), a);
  json::Set(ref, "blockOwnerDeletion", json::Value(true), a);
  refs.PushBack(ref, a);
  json::Set(meta, "ownerReferences", std::move(refs), a);
  if (const json::Value* spec = json::Find(pod_template, "spec")) {
    json::Set(pod, "spec", json::Value(*spec, a), a);
  } else {
    json::Set(pod, "spec", json::Value(rapidjson::kObjectType), a);
  }
  return pod;
}

Result<ObjectPtr> CreateNamedPod(Store& store, const ResourceType& pods, json::Document pod, std::string_view name,
                                 std::string_view generate_name) {
  auto& a = pod.GetAllocator();
  json::Value& meta = json::Child(pod, "metadata", a);
  json::Set(meta, "name", json::MakeString(name, a), a);
  if (!generate_name.empty()) json::Set(meta, "generateName", json::MakeString(generate_name, a), a);
  const std::string namespace_(json::GetString(meta, "namespace"));
  return store.Create(pods, namespace_, std::move(pod));
}

Result<ObjectPtr> CreateGeneratedPod(Store& store, const ResourceType& pods, json::Document pod, std::string_view base,
                                     api::Rng& rng) {
  Result<ObjectPtr> out;
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    json::Document copy;
    if (attempt + 1 < kNameAttempts) {
      copy.CopyFrom(pod, copy.GetAllocator());
    } else {
      copy.Swap(pod);
    }
    out = CreateNamedPod(store, pods, std::move(copy), api::GenerateName(base, rng), base);
    if (out || out.error().reason != Error::Reason::kAlreadyExists) break;
  }
  return out;
}

void SetLabel(json::Document& pod, std::string_view key, std::string_view value) {
  SetMetaMapEntry(pod, "labels", key, value);
}

void SetAnnotation(json::Document& pod, std::string_view key, std::string_view value) {
  SetMetaMapEntry(pod, "annotations", key, value);
}

}  // namespace kubesched::store::controllers
