#pragma once
// Validation and the typed view of pods and nodes, through the codec's typed decoders
// (api::DecodePod / api::DecodeNode): what the scheduler relies on, checked as for manifests.

#include <memory>
#include <vector>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store {

//! api::Pod as the scheduler reads it; null when the pod does not decode.
std::shared_ptr<const void> PodView(const api::json::Value& pod);
std::vector<Cause> ValidateNode(const api::json::Value& node, const Object* old);
//! api::Node; null when the node does not decode.
std::shared_ptr<const void> NodeView(const api::json::Value& node);

//! ResourceType::decode and complete_view for pods and nodes: validation and the view from one
//! DecodePod/DecodeNode, the view sharing the stored JSON (no keep_json encoding).
DecodeResult DecodePodChecked(const api::json::Value& pod, const Object* old);
void CompletePodView(void* pod, const Object& stored);
//! ResourceType::decode_status for pods: `old`'s view with the status of `pod` decoded anew
//! (DecodePodStatus); what DecodePodChecked would give, since nothing else changed.
DecodeResult DecodePodStatusChange(const api::json::Value& pod, const Object& old);
//! ResourceType::decode_binding for pods: `old`'s view with spec.nodeName and the status of `pod`.
DecodeResult DecodePodBinding(const api::json::Value& pod, const Object& old);
DecodeResult DecodeNodeChecked(const api::json::Value& node, const Object* old);
void CompleteNodeView(void* node, const Object& stored);
//! The same for PodGroups (api::DecodePodGroup), with upstream's update rule: the template
//! reference and the scheduling policy may not change.
DecodeResult DecodePodGroupChecked(const api::json::Value& pod_group, const Object* old);
void CompletePodGroupView(void* pod_group, const Object& stored);
//! The scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1): its spec may change.
DecodeResult DecodeCoschedulingPodGroupChecked(const api::json::Value& pod_group, const Object* old);
//! ResourceType::view_labels for pods and nodes: the view's metadata.labels entries.
const std::vector<std::pair<std::string, std::string>>* PodViewLabels(const void* pod);
const std::vector<std::pair<std::string, std::string>>* NodeViewLabels(const void* node);

}  // namespace kubesched::store
