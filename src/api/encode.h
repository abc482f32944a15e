#pragma once
// Typed objects to Kubernetes JSON, for objects that have no kept JSON (built in code by tests and
// `kubesched bench`): the fields kubesched models, in the API's field names and shapes, so
// DecodePod(EncodePod(p)) gives back p. An object read from a manifest or the API keeps its full
// JSON in its `json` member instead; ObjectJsonOf prefers that.

#include <string>

#include "api/json.h"
#include "api/resource_types.h"
#include "api/types.h"

namespace kubesched::api {

//! Appends the compact JSON of the modelled fields.
void EncodePodTo(const Pod& pod, std::string& out);
void EncodeNodeTo(const Node& node, std::string& out);
//! A pod's spec alone, as EncodePodTo writes it under "spec".
void EncodePodSpecTo(const PodSpec& spec, std::string& out);
std::string EncodePod(const Pod& pod);
std::string EncodeNode(const Node& node);

//! The same into a DOM value (allocated from `alloc`), for callers that edit it further.
json::Value PodToValue(const Pod& pod, json::Allocator& alloc);
json::Value NodeToValue(const Node& node, json::Allocator& alloc);

//! Parts of a pod the controllers and admission change, for building a pod's DOM from its
//! template: metadata, spec.affinity, spec.tolerations.
json::Value MetadataToValue(const ObjectMeta& meta, bool namespaced, json::Allocator& alloc);
json::Value AffinityToValue(const Affinity& affinity, json::Allocator& alloc);
json::Value TolerationsToValue(const std::vector<Toleration>& tolerations, json::Allocator& alloc);
json::Value NodeSelectorToValue(const NodeSelector& selector, json::Allocator& alloc);
//! A ResourceClaim's status as the scheduler writes it: allocation (null when none) and
//! reservedFor (encode_resource.cc).
json::Value ResourceClaimStatusToValue(const ResourceClaim& claim, json::Allocator& alloc);

//! The object's kept JSON, else its encoding from the typed fields.
std::string PodJson(const Pod& pod);
std::string NodeJson(const Node& node);

}  // namespace kubesched::api
