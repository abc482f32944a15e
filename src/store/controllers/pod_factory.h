#pragma once
// How controllers make pods from their templates (upstream's controller.GetPodFromTemplate and
// the API server's generateName): the template's metadata.labels, annotations and finalizers and
// its whole spec copied as JSON (every field kept), the workload's namespace, and a controller
// ownerReference (controller and blockOwnerDeletion true). Names come from the manager's Rng as
// the loader draws them (api::GenerateName), so simulate's names do not depend on who made a pod.

#include <string_view>

#include "api/json.h"
#include "api/workloads.h"
#include "store/store.h"

namespace kubesched::store::controllers {

struct PodOwner {
  std::string_view api_version;  //!< "apps/v1"
  std::string_view kind;         //!< "ReplicaSet"
  std::string_view name;
  std::string_view uid;
};

//! A pod from `pod_template` (a PodTemplateSpec), without a name.
api::json::Document PodFromTemplate(const api::json::Value& pod_template, std::string_view namespace_,
                                    const PodOwner& owner);

//! Creates `pod` named `name` (and with generateName `generate_name` when not empty).
Result<ObjectPtr> CreateNamedPod(Store& store, const ResourceType& pods, api::json::Document pod, std::string_view name,
                                 std::string_view generate_name);

//! Creates `pod` with generateName `base`, its name drawn as api::GenerateName(base, rng) (one
//! draw per pod; a name that is taken is drawn again, as a controller retries a clash).
Result<ObjectPtr> CreateGeneratedPod(Store& store, const ResourceType& pods, api::json::Document pod,
                                     std::string_view base, api::Rng& rng);

//! Sets metadata.labels[key] (or annotations) on a pod document.
void SetLabel(api::json::Document& pod, std::string_view key, std::string_view value);
void SetAnnotation(api::json::Document& pod, std::string_view key, std::string_view value);

}  // namespace kubesched::store::controllers
