#pragma once
// The scheduler-extender wire format: upstream's k8s.io/kube-scheduler/extender/v1 types as Go's
// encoding/json writes and reads them. Those structs have no json tags, so the keys are the Go
// field names ("Pod", "NodeNames", "NumPDBViolations"); a nil pointer, slice or map is `null`;
// map keys come out sorted. Both directions of every type are here: the client (HttpExtender)
// encodes arguments and decodes results, a server decodes arguments and encodes results.
//
// Decoding reads keys as Go does: a key names a field when it equals the field's name ignoring
// ASCII case (the last such key wins), unknown keys are ignored, and `null` stands for an absent
// pointer, list or map. Pods and nodes are encoded from their kept JSON (api::Pod::json), else
// from their typed fields; they are decoded by api/decode.h (apiVersion and kind may be
// left out, as Go's client leaves them out of informer objects) and keep their JSON as given, so
// a server can echo nodes back unchanged. Errors name the field: "Nodes.items[3].metadata.name:
// Required value".

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "framework/extender.h"

namespace kubesched::extender {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using framework::FailedNodesMap;
using framework::HostPriority;
//! upstream's HostPriorityList. Encoded as an array even when empty.
using HostPriorityList = std::vector<HostPriority>;

//! The arguments of filter and prioritize. Exactly one of nodes (extenders without a node cache)
//! and node_names (nodeCacheCapable ones) is normally set; unset is `null`.
struct ExtenderArgs {
  PodPtr pod{};  //!< null: `null`
  //! `Nodes`, a v1.NodeList: {"metadata":{},"items":[...]}.
  std::optional<std::vector<NodePtr>> nodes{};
  std::optional<std::vector<std::string>> node_names{};
};

struct ExtenderFilterResult {
  //! The nodes that pass, for extenders without a node cache.
  std::optional<std::vector<NodePtr>> nodes{};
  //! The names of the nodes that pass, for nodeCacheCapable extenders.
  std::optional<std::vector<std::string>> node_names{};
  std::optional<FailedNodesMap> failed_nodes{};
  //! Nodes preemption cannot help; they take precedence over failed_nodes.
  std::optional<FailedNodesMap> failed_and_unresolvable_nodes{};
  std::string error{};  //!< non-empty: the call failed
};

//! The pods to evict on one node and the PodDisruptionBudgets that evicting them violates.
//! `Pods` is encoded as an array even when empty (as upstream fills it); `null` decodes as none.
struct Victims {
  std::vector<PodPtr> pods{};
  int64_t num_pdb_violations = 0;
};

//! Victims by pod UID (`"Pods":[{"UID":"..."}]`), for extenders that keep their own cache.
struct MetaVictims {
  std::vector<std::string> pod_uids{};
  int64_t num_pdb_violations = 0;
};

using NodeNameToVictims = std::map<std::string, Victims, std::less<>>;
using NodeNameToMetaVictims = std::map<std::string, MetaVictims, std::less<>>;

//! A `null` map value (a nil *Victims) decodes as no victims.
struct ExtenderPreemptionArgs {
  PodPtr pod{};
  //! Set for extenders without a node cache.
  std::optional<NodeNameToVictims> node_name_to_victims{};
  //! Set for nodeCacheCapable extenders.
  std::optional<NodeNameToMetaVictims> node_name_to_meta_victims{};
};

struct ExtenderPreemptionResult {
  std::optional<NodeNameToMetaVictims> node_name_to_meta_victims{};
};

struct ExtenderBindingArgs {
  std::string pod_name{};
  std::string pod_namespace{};
  std::string pod_uid{};
  std::string node{};
};

struct ExtenderBindingResult {
  std::string error{};  //!< non-empty: the bind failed
};

//! Compact JSON, byte for byte what Go's json.Marshal writes for the same values (its escapes
//! included), except that pods and nodes are their kept JSON as it is.
std::string EncodeExtenderArgs(const ExtenderArgs& args);
std::string EncodeFilterResult(const ExtenderFilterResult& result);
std::string EncodeHostPriorityList(const HostPriorityList& list);
std::string EncodePreemptionArgs(const ExtenderPreemptionArgs& args);
std::string EncodePreemptionResult(const ExtenderPreemptionResult& result);
std::string EncodeBindingArgs(const ExtenderBindingArgs& args);
std::string EncodeBindingResult(const ExtenderBindingResult& result);

//! A body as Go's json.Unmarshal reads it into the type; `null` is the zero value. The error
//! names the field and says what is wrong ("NodeNames[2]: expected a string, got number").
//! Finds a node the caller already holds: given an item's metadata name, uid and (non-empty)
//! resourceVersion, the node when it holds that very version, else null (the item is decoded).
using NodeReuse =
    std::function<NodePtr(std::string_view name, std::string_view uid, std::string_view resource_version)>;
//! `reuse`, when set, spares decoding the nodes the caller already has (an extender sent the same
//! 1,000 Node objects request after request decodes only those that changed).
std::expected<ExtenderArgs, std::string> DecodeExtenderArgs(std::string_view body, const NodeReuse& reuse = {});
std::expected<ExtenderFilterResult, std::string> DecodeFilterResult(std::string_view body);
std::expected<HostPriorityList, std::string> DecodeHostPriorityList(std::string_view body);
std::expected<ExtenderPreemptionArgs, std::string> DecodePreemptionArgs(std::string_view body);
std::expected<ExtenderPreemptionResult, std::string> DecodePreemptionResult(std::string_view body);
std::expected<ExtenderBindingArgs, std::string> DecodeBindingArgs(std::string_view body);
std::expected<ExtenderBindingResult, std::string> DecodeBindingResult(std::string_view body);

}  // namespace kubesched::extender
