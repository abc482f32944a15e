#include "store/controllers/workload_info.h"

#include <algorithm>
#include <charconv>

#include "api/time_format.h"

#include "api/workloads.h"
#include "store/meta.h"

namespace kubesched::store::controllers {

namespace json = api::json;

WorkloadInfo ParseWorkload(const ObjectPtr& object, const json::Value& doc, SelectorForm form) {
  WorkloadInfo w;
  w.object = object;
  w.controller = ControllerOf(doc);
  if (const json::Value* meta = json::Find(doc, "metadata")) {
    w.generation = GetInt(*meta, "generation", 1);
    w.deleting = json::Find(*meta, "deletionTimestamp") != nullptr;
    w.created_ns = api::ParseRFC3339(json::GetString(*meta, "creationTimestamp")).value_or(0);
    if (const json::Value* annotations = json::Find(*meta, "annotations"); annotations && annotations->IsObject()) {
      const std::string_view revision = json::GetString(*annotations, kAnnotationDeploymentRevision);
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(revision.data(), revision.data() + revision.size(), n);
      if (ec == std::errc() && end == revision.data() + revision.size() && n > 0) w.revision = n;
    }
  }
  if (const json::Value* spec = json::Find(doc, "spec")) {
    if (const json::Value* r = json::Find(*spec, "replicas"); r && r->IsInt64()) w.replicas = r->GetInt64();
    if (const json::Value* t = json::Find(*spec, "template")) {
      w.template_json = json::Encode(*t);
      if (const json::Value* l = At(*t, {"metadata", "labels"}); l && l->IsObject()) {
        for (const auto& m : l->GetObject()) w.template_labels.emplace_back(json::View(m.name), json::View(m.value));
        std::sort(w.template_labels.begin(), w.template_labels.end());
      }
    }
    const json::Value* sel = json::Find(*spec, "selector");
    if (form == SelectorForm::kPlainMap) {
      // A ReplicationController's selector is a map (defaulted from the template's labels).
      if (sel && sel->IsObject() && sel->MemberCount() > 0) {
        for (const auto& m : sel->GetObject()) {
          w.selector.requirements.push_back(
              {std::string(json::View(m.name)), api::SelectorOperator::kIn, {std::string(json::View(m.value))}});
        }
      } else {
        w.selector.nothing = true;
      }
    } else if (auto parsed = LabelSelectorFromJson(sel)) {
      w.selector = std::move(*parsed);
    } else {
      w.selector.nothing = true;
    }
  } else {
    w.selector.nothing = true;
  }
  const json::Value* status = json::Find(doc, "status");
  w.status_json = status ? json::Encode(*status) : "{}";
  return w;
}

bool MergePatchIsNoop(const json::Value& target, const json::Value& patch) {
  if (!patch.IsObject()) return target == patch;
  if (!target.IsObject()) return false;
  for (const auto& m : patch.GetObject()) {
    const json::Value* have = json::Find(target, json::View(m.name));
    if (m.value.IsNull()) {
      if (have != nullptr) return false;
    } else if (have == nullptr || !MergePatchIsNoop(*have, m.value)) {
      return false;
    }
  }
  return true;
}

void PatchStatusIfChanged(Store& store, const ResourceType& type, const Object& object,
                          std::string_view current_status_json, const json::Value& status) {
  json::Document current;
  if (json::Parse(current_status_json, current) && MergePatchIsNoop(current, status)) return;
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Set(patch, "status", json::Value(status, a), a);
  (void)store.Patch(type, object.namespace_, object.name, PatchType::kMergePatch, json::Encode(patch), "status");
}

namespace {

// Members whose value is null, removed at every depth: a decoded API object has no null field
// (kubectl sends a template's zero creationTimestamp as null; upstream's struct has it as unset).
void RemoveNullMembers(json::Value& v) {
  if (v.IsArray()) {
    for (auto& e : v.GetArray()) RemoveNullMembers(e);
    return;
  }
  if (!v.IsObject()) return;
  for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
    if (it->value.IsNull()) {
      it = v.EraseMember(it);
    } else {
      RemoveNullMembers(it->value);
      ++it;
    }
  }
}

}  // namespace

bool TemplatesEqualIgnoringHash(std::string_view a_json, std::string_view b_json) {
  json::Document a, b;
  if (!json::Parse(a_json, a) || !json::Parse(b_json, b)) return false;
  for (json::Document* d : {&a, &b}) {
    RemoveNullMembers(*d);
    json::Value* labels = At(*d, {"metadata", "labels"}) ? json::Find(*json::Find(*d, "metadata"), "labels") : nullptr;
    if (labels == nullptr || !labels->IsObject()) continue;
    json::Remove(*labels, api::kLabelPodTemplateHash);
    // An empty map and no map are the same template.
    if (labels->MemberCount() == 0) json::Remove(*json::Find(*d, "metadata"), "labels");
  }
  return a == b;
}

}  // namespace kubesched::store::controllers
