#pragma once
// Validation and the typed view of pods and nodes. Until the codec's per-object decoders land,
// both go through the manifest loader (api::LoadManifestsFromString reads JSON), and that bridge
// is kind_hooks.cc alone, so swapping it for api::DecodePod/DecodeNode is a one-file change.

#include <memory>
#include <vector>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store {

//! The loader's checks of a defaulted pod (what the scheduler relies on), as causes for a 422.
std::vector<Cause> ValidatePod(const api::json::Value& pod, const Object* old);
//! api::Pod as the scheduler reads it; null when the pod does not decode.
std::shared_ptr<const void> PodView(const api::json::Value& pod);
std::vector<Cause> ValidateNode(const api::json::Value& node, const Object* old);
//! api::Node; null when the node does not decode.
std::shared_ptr<const void> NodeView(const api::json::Value& node);

}  // namespace kubesched::store
