#pragma once
// Taint and toleration matching, as k8s.io/component-helpers/scheduling/corev1 (v1 helpers).

#include <span>

#include "api/types.h"

namespace kubesched::plugins::helper {

inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

//! Toleration.ToleratesTaint: an effect, when set, must equal the taint's; a key, when set, must
//! equal the taint's (an empty key with Exists matches every key); Exists ignores the value and
//! Equal compares it.
bool ToleratesTaint(const api::Toleration& toleration, const api::Taint& taint);

//! Whether any toleration tolerates the taint.
bool TolerationsTolerateTaint(std::span<const api::Toleration> tolerations, const api::Taint& taint);

//! A predicate selecting which taints FindMatchingUntoleratedTaint considers.
using TaintFilter = bool (*)(const api::Taint&);

//! NoSchedule and NoExecute taints: the ones that keep pods off a node (upstream's
//! DoNotScheduleTaintsFilterFunc).
bool DoNotScheduleTaintsFilter(const api::Taint& taint);

//! The first taint accepted by `filter` (all taints when null) that no toleration tolerates, or
//! nullptr when every such taint is tolerated.
const api::Taint* FindMatchingUntoleratedTaint(std::span<const api::Taint> taints,
                                               std::span<const api::Toleration> tolerations, TaintFilter filter);

}  // namespace kubesched::plugins::helper
