// The bridge from stored JSON to the typed api::Pod and api::Node, through the manifest loader.
// Replace with the codec's decoders (api::DecodePod / api::DecodeNode) when they land.
#include "store/kind_hooks.h"

#include "api/manifest.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

struct Decoded {
  api::ClusterObjects objects;
  std::optional<api::LoadError> error;
};

Decoded Decode(const json::Value& object) {
  // spec.priorityClassName was resolved by the store's admission (spec.priority is set); the
  // loader only knows the built-in classes, so it gets the object without the name, which is
  // restored on the view.
  json::Document copy;
  copy.CopyFrom(object, copy.GetAllocator());
  if (json::Value* spec = json::Find(copy, "spec")) json::Remove(*spec, "priorityClassName");
  api::LoadOptions options;
  options.expand_workloads = false;
  options.field_validation = api::FieldValidation::kIgnore;
  Decoded out;
  auto loaded = api::LoadManifestsFromString(json::Encode(copy), "object", options);
  if (loaded) {
    out.objects = std::move(*loaded);
  } else {
    out.error = std::move(loaded.error());
  }
  return out;
}

std::vector<Cause> Causes(const Decoded& d) {
  if (!d.error) return {};
  return {Cause{"FieldValueInvalid", d.error->message, d.error->field}};
}

}  // namespace

std::vector<Cause> ValidatePod(const json::Value& pod, const Object* /*old*/) { return Causes(Decode(pod)); }

std::shared_ptr<const void> PodView(const json::Value& pod) {
  Decoded d = Decode(pod);
  if (d.error || d.objects.pods.empty()) return nullptr;
  std::shared_ptr<api::Pod> view = d.objects.pods.front();
  if (const json::Value* spec = json::Find(pod, "spec")) {
    view->spec.priority_class_name = std::string(json::GetString(*spec, "priorityClassName"));
  }
  return view;
}

std::vector<Cause> ValidateNode(const json::Value& node, const Object* /*old*/) { return Causes(Decode(node)); }

std::shared_ptr<const void> NodeView(const json::Value& node) {
  Decoded d = Decode(node);
  if (d.error || d.objects.nodes.empty()) return nullptr;
  return d.objects.nodes.front();
}

}  // namespace kubesched::store
