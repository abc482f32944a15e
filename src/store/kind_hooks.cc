// Pods and nodes in the store, through the codec's typed decoders (api/decode.h): the same
// decoding the manifest loader uses, so a pod created over the API is read exactly as one from a
// manifest.
#include "store/kind_hooks.h"

#include <cstdio>
#include <cstdlib>

#include "api/decode.h"
#include "api/encode.h"
#include "store/errors.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

std::vector<Cause> Causes(const api::FieldErrors& errors) {
  std::vector<Cause> causes;
  causes.reserve(errors.size());
  for (const auto& e : errors) causes.push_back(Cause{e.reason, e.message, e.field});
  return causes;
}

// Validation only needs the verdict, not the object's JSON kept on the view.
constexpr api::DecodeOptions kValidateOnly{.texts = nullptr, .keep_json = false};

}  // namespace

std::shared_ptr<const void> PodView(const json::Value& pod) {
  auto decoded = api::DecodePod(pod);
  if (!decoded) return nullptr;
  return std::shared_ptr<const api::Pod>(std::move(*decoded));
}

std::vector<Cause> ValidateNode(const json::Value& node, const Object* /*old*/) {
  auto decoded = api::DecodeNode(node, kValidateOnly);
  return decoded ? std::vector<Cause>{} : Causes(decoded.error());
}

std::shared_ptr<const void> NodeView(const json::Value& node) {
  auto decoded = api::DecodeNode(node);
  if (!decoded) return nullptr;
  return std::shared_ptr<const api::Node>(std::move(*decoded));
}

namespace {

template <typename T, typename DecodeFn>
DecodeResult DecodeChecked(const json::Value& object, DecodeFn decode) {
  auto decoded = decode(object, kValidateOnly);
  if (!decoded) return DecodeResult{Causes(decoded.error()), nullptr};
  return DecodeResult{{}, std::shared_ptr<T>(std::move(*decoded))};
}

template <typename T>
void Complete(void* view, const Object& stored) {
  auto* object = static_cast<T*>(view);
  object->metadata.resource_version = std::to_string(stored.resource_version);
  object->json = stored.json.shared();
}

}  // namespace

DecodeResult DecodePodChecked(const json::Value& pod, const Object* /*old*/) {
  return DecodeChecked<api::Pod>(
      pod, [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodePod(v, o); });
}

void CompletePodView(void* pod, const Object& stored) { Complete<api::Pod>(pod, stored); }

const std::vector<std::pair<std::string, std::string>>* PodViewLabels(const void* pod) {
  return &static_cast<const api::Pod*>(pod)->metadata.labels.entries();
}

namespace {

// The status-only and binding writes: `old`'s view with `edit` applied (the new spec.nodeName)
// and the status decoded anew. A version without a view did not decode: only a full decode says
// why.
template <typename Edit>
DecodeResult DeriveFromOld(const json::Value& pod, const Object& old, Edit edit) {
  auto before = old.View<api::Pod>();
  if (!before) return DecodePodChecked(pod, &old);
  auto status = api::DecodePodStatus(pod);
  if (!status) return DecodeResult{Causes(status.error()), nullptr};
  // A copy of the spec and metadata instead of reading them again from the DOM (no lookups,
  // quantity parsing or name checks); complete_view replaces resourceVersion and json.
  auto view = std::make_shared<api::Pod>(*before);
  view->status = std::move(*status);
  edit(*view);
#ifndef NDEBUG
  // Debug builds check the shortcut against the whole decode it stands for. resourceVersion and the
  // kept JSON are not compared: complete_view sets both on either view once the version is stored
  // (the derived view still carries the old version's, the decoded one none).
  DecodeResult full = DecodePodChecked(pod, &old);
  const auto* full_pod = static_cast<const api::Pod*>(full.view.get());
  bool same = full_pod != nullptr && full_pod->metadata.creation_index == view->metadata.creation_index;
  if (same) {
    api::Pod expected = *full_pod;
    api::Pod derived = *view;
    expected.metadata.resource_version = derived.metadata.resource_version = "";
    expected.json = derived.json = {};
    same = api::EncodePod(expected) == api::EncodePod(derived);
  }
  if (!same) {
    std::fprintf(stderr, "kind_hooks: the derived view differs from a full decode of pod %s\n", old.name.c_str());
    std::abort();
  }
#endif
  return DecodeResult{{}, std::move(view)};
}

}  // namespace

DecodeResult DecodePodStatusChange(const json::Value& pod, const Object& old) {
  return DeriveFromOld(pod, old, [](api::Pod&) {});
}

DecodeResult DecodePodBinding(const json::Value& pod, const Object& old) {
  auto before = old.View<api::Pod>();
  const json::Value* spec = json::Find(pod, "spec");
  const json::Value* node = spec ? json::Find(*spec, "nodeName") : nullptr;
  // A gated pod may not have a node (a decode error), and nodeName must be a string: the full
  // decode reports both.
  if (!before || !before->spec.scheduling_gates.empty() || node == nullptr || !node->IsString()) {
    return DecodePodChecked(pod, &old);
  }
  return DeriveFromOld(pod, old, [&](api::Pod& view) { view.spec.node_name = std::string(json::View(*node)); });
}

DecodeResult DecodeNodeChecked(const json::Value& node, const Object* /*old*/) {
  return DecodeChecked<api::Node>(
      node, [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodeNode(v, o); });
}

void CompleteNodeView(void* node, const Object& stored) { Complete<api::Node>(node, stored); }

DecodeResult DecodePodGroupChecked(const json::Value& pod_group, const Object* old) {
  DecodeResult result = DecodeChecked<api::PodGroup>(
      pod_group, [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodePodGroup(v, o); });
  if (old == nullptr || !result.causes.empty()) return result;
  // ValidatePodGroupUpdate: spec.podGroupTemplateRef and spec.schedulingPolicy are immutable.
  json::Document before;
  if (!json::Parse(old->json, before)) return result;
  const json::Value* spec = json::Find(pod_group, "spec");
  const json::Value* old_spec = json::Find(before, "spec");
  for (std::string_view field : {"podGroupTemplateRef", "schedulingPolicy"}) {
    const json::Value* now = spec != nullptr ? json::Find(*spec, field) : nullptr;
    const json::Value* was = old_spec != nullptr ? json::Find(*old_spec, field) : nullptr;
    const bool same =
        (now == nullptr || now->IsNull()) ? (was == nullptr || was->IsNull()) : (was != nullptr && *now == *was);
    if (!same) {
      result.causes.push_back(InvalidCause("spec." + std::string(field), now != nullptr ? json::Encode(*now) : "null",
                                           "field is immutable"));
    }
  }
  if (!result.causes.empty()) result.view = nullptr;
  return result;
}

DecodeResult DecodeCoschedulingPodGroupChecked(const json::Value& pod_group, const Object* /*old*/) {
  return DecodeChecked<api::PodGroup>(
      pod_group, [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodePodGroup(v, o); });
}

void CompletePodGroupView(void* pod_group, const Object& stored) { Complete<api::PodGroup>(pod_group, stored); }

const std::vector<std::pair<std::string, std::string>>* NodeViewLabels(const void* node) {
  return &static_cast<const api::Node*>(node)->metadata.labels.entries();
}

}  // namespace kubesched::store
