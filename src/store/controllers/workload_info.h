#pragma once
// What the workload controllers read from their own objects (ReplicaSets, Deployments,
// StatefulSets, Jobs, DaemonSets, ReplicationControllers), parsed once per stored version into a
// controller's cache, and how they write a status only when it changed (as upstream's
// update*Status functions return early when nothing differs).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/json.h"
#include "store/controllers/object_util.h"
#include "store/selectors.h"
#include "store/store.h"

namespace kubesched::store::controllers {

//! The annotation numbering a Deployment's ReplicaSets in rollout order (and the Deployment's own:
//! its current one's).
inline constexpr std::string_view kAnnotationDeploymentRevision = "deployment.kubernetes.io/revision";

struct WorkloadInfo {
  ObjectPtr object;
  int64_t generation = 1;
  bool deleting = false;   //!< metadata.deletionTimestamp is set
  int64_t created_ns = 0;  //!< metadata.creationTimestamp
  std::optional<OwnerRef> controller;
  std::optional<int64_t> replicas;  //!< spec.replicas
  std::string template_json;        //!< spec.template, encoded ("" when absent)
  LabelPairs template_labels;       //!< spec.template.metadata.labels, sorted
  //! spec.selector: metav1.LabelSelector, or (ReplicationController) a plain map of labels; a
  //! missing or malformed one selects nothing.
  LabelSelectorExpr selector;
  std::string status_json;  //!< status, encoded ("{}" when absent)
  //! metadata.annotations["deployment.kubernetes.io/revision"] (0 when absent or not a number):
  //! a Deployment's rollout history, read by `kubectl rollout history|undo`.
  int64_t revision = 0;

  const std::string& uid() const { return object->uid; }
  const std::string& name() const { return object->name; }
  const std::string& namespace_() const { return object->namespace_; }
};

enum class SelectorForm { kLabelSelector, kPlainMap };

//! Reads `doc` (the parsed JSON of `object`).
WorkloadInfo ParseWorkload(const ObjectPtr& object, const api::json::Value& doc,
                           SelectorForm form = SelectorForm::kLabelSelector);

//! Whether merge-patching `patch` onto `target` would leave it as it is (null members: absent).
bool MergePatchIsNoop(const api::json::Value& target, const api::json::Value& patch);

//! Merge-patches `status` (the fields the controller owns; null removes) onto the object's
//! status subresource, unless that would change nothing in `current_status_json`.
void PatchStatusIfChanged(Store& store, const ResourceType& type, const Object& object,
                          std::string_view current_status_json, const api::json::Value& status);
inline void PatchStatusIfChanged(Store& store, const ResourceType& type, const WorkloadInfo& workload,
                                 const api::json::Value& status) {
  PatchStatusIfChanged(store, type, *workload.object, workload.status_json, status);
}

//! Whether two pod templates are equal once the pod-template-hash label is ignored
//! (upstream's EqualIgnoreHash), a null field being no field (as decoded into the API's types).
bool TemplatesEqualIgnoringHash(std::string_view a_json, std::string_view b_json);

}  // namespace kubesched::store::controllers
