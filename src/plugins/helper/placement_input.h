#pragma once
// The optimizer's view of a profile, shared by the plugins that place pods jointly (BatchPlacement's
// batches, GangScheduling's pod groups): the profile's own plugins judge what does not couple pods,
// the optimizer decides what does.

#include <span>
#include <vector>

#include "framework/handle.h"
#include "framework/pod_info.h"
#include "optimizer/model.h"

namespace kubesched::plugins::helper {

//! The pod without what the model decides itself (required pod affinity, DoNotSchedule spread):
//! the profile's filters then judge only what does not couple pods.
framework::PodInfoPtr RelaxedForPlacement(const framework::PodInfo& pod);

//! The placement input for `pods` on `nodes` (which must outlive it): the profile's PreFilter and
//! Filter plugins on each relaxed pod (static_fit), its Score plugins' totals (the tie-break), the
//! spread constraints' node policies, namespace labels from the client, and the room the nominator
//! promises to pods outside `pods` (preemption's nominations, earlier plans).
optimizer::PlacementInput MakePlacementInput(framework::Handle& handle, const std::vector<framework::PodInfoPtr>& pods,
                                             std::span<const framework::NodeInfo* const> nodes);

}  // namespace kubesched::plugins::helper
