#pragma once
// NodeAffinityArgs (kubescheduler.config.k8s.io NodeAffinityArgs): a node affinity the scheduler
// adds to every pod of the profile. Decoded from JSON into api types and validated as upstream's
// ValidateNodeAffinityArgs (nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms).

#include <expected>
#include <optional>
#include <string>

#include "api/types.h"
#include "framework/args.h"
#include "framework/args_view.h"

namespace kubesched::plugins::node_affinity {

struct NodeAffinityArgs {
  //! requiredDuringSchedulingIgnoredDuringExecution / preferredDuringSchedulingIgnoredDuringExecution.
  std::optional<api::NodeAffinity> added_affinity;
};

//! Decodes NodeAffinityArgs (null or absent => no added affinity). Unknown fields and wrong JSON
//! types are decoding errors (`unknown field "<path>.addedAffinity.foo"`); then every requirement
//! is validated, errors named under `path`, e.g. `<path>.addedAffinity.requiredDuringScheduling...
//! .nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Foo": supported values:
//! "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"`.
std::expected<NodeAffinityArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                  const std::string& path);
//! DecodeArgs with paths relative to args, the errors joined as upstream's aggregate ("[e1, e2]").
std::expected<NodeAffinityArgs, std::string> ParseArgs(const framework::ArgsView& args);
//! The args as a configuration file spells them.
std::string EncodeArgs(const NodeAffinityArgs& args);

//! Decodes one v1.NodeAffinity object (same rules, paths rooted at `path`, errors aggregated).
std::expected<api::NodeAffinity, std::string> DecodeNodeAffinity(const framework::ArgsView& json,
                                                                 const std::string& path);

}  // namespace kubesched::plugins::node_affinity
