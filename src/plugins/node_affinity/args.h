#pragma once
// NodeAffinityArgs (kubescheduler.config.k8s.io NodeAffinityArgs): a node affinity the scheduler
// adds to every pod of the profile. Decoded from JSON into api types and validated as upstream's
// ValidateNodeAffinityArgs (nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms).

#include <expected>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "api/types.h"

namespace kubesched::plugins::node_affinity {

struct NodeAffinityArgs {
  //! requiredDuringSchedulingIgnoredDuringExecution / preferredDuringSchedulingIgnoredDuringExecution.
  std::optional<api::NodeAffinity> added_affinity;
};

//! Reads NodeAffinityArgs (null or absent => no added affinity). Unknown fields and wrong JSON
//! types are decoding errors (`unknown field "addedAffinity.foo"`); then every requirement is
//! validated, errors named relative to args, e.g. `addedAffinity.requiredDuringScheduling...
//! .nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Foo": supported values:
//! "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"`.
//! Several errors are joined as "[e1, e2]".
std::expected<NodeAffinityArgs, std::string> ParseArgs(const nlohmann::json& args);

//! Decodes one v1.NodeAffinity object (same rules, paths rooted at `path`).
std::expected<api::NodeAffinity, std::string> DecodeNodeAffinity(const nlohmann::json& json, const std::string& path);

}  // namespace kubesched::plugins::node_affinity
