#pragma once
// Taint and toleration matching, as k8s.io/component-helpers/scheduling/corev1 (v1 helpers).

#include <span>
#include <string_view>

#include "api/types.h"

namespace kubesched::api {

// Taints the node lifecycle controller sets and DaemonSet pods tolerate.
inline constexpr std::string_view kTaintNodeNotReady = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kTaintNodeUnreachable = "node.kubernetes.io/unreachable";
inline constexpr std::string_view kTaintNodeDiskPressure = "node.kubernetes.io/disk-pressure";
inline constexpr std::string_view kTaintNodeMemoryPressure = "node.kubernetes.io/memory-pressure";
inline constexpr std::string_view kTaintNodePIDPressure = "node.kubernetes.io/pid-pressure";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";
inline constexpr std::string_view kTaintNodeNetworkUnavailable = "node.kubernetes.io/network-unavailable";

//! Toleration.ToleratesTaint: an effect, when set, must equal the taint's; a key, when set, must
//! equal the taint's (an empty key with Exists matches every key); Exists ignores the value and
//! Equal compares it.
bool ToleratesTaint(const Toleration& toleration, const Taint& taint);

//! Whether any toleration tolerates the taint.
bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint);

//! A predicate selecting which taints FindMatchingUntoleratedTaint considers.
using TaintFilter = bool (*)(const Taint&);

//! NoSchedule and NoExecute taints: the ones that keep pods off a node (upstream's
//! DoNotScheduleTaintsFilterFunc).
bool DoNotScheduleTaintsFilter(const Taint& taint);

//! The first taint accepted by `filter` (all taints when null) that no toleration tolerates, or
//! nullptr when every such taint is tolerated.
const Taint* FindMatchingUntoleratedTaint(std::span<const Taint> taints, std::span<const Toleration> tolerations,
                                          TaintFilter filter);

}  // namespace kubesched::api
