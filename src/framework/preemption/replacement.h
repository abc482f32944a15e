#pragma once
// A preemption that moves a pod rather than evicting it: the pod's controller recreates it, and
// the room planned for it elsewhere is held for the replacement (PodNominator::ExpectReplacement)
// until the replacement takes it. Shared by CrossNodePreemption's plans and GangScheduling's group
// preemption.

#include <cstdint>
#include <string>

#include "api/types.h"
#include "framework/handle.h"
#include "framework/pod_info.h"

namespace kubesched::framework::preemption {

//! The pod's controller (the owner reference with controller: true), or null.
const api::OwnerReference* ControllerOf(const api::Pod& pod);

//! Whether the controller recreates a deleted pod elsewhere (a DaemonSet's pod belongs to its node).
bool Recreates(const api::OwnerReference& ref);

//! What a recreated pod shares with the pod it replaces: its controller and its template (labels
//! and requests; a StatefulSet's pod also keeps its name). Name and uid are new. Empty for a pod
//! without a controller.
std::string TemplateKey(const PodInfo& pi);

//! `ns` rounded down to the second (creation timestamps have second precision).
int64_t FloorToSecond(int64_t ns);

//! A stand-in for the replacement the victim's controller will create: the victim unbound, under
//! the uid "<victim uid>-move".
PodInfoPtr ReplacementPlaceholder(const PodInfo& victim);

//! Holds `destination` for the replacement of the victim `placeholder` stands for (made by
//! ReplacementPlaceholder): the first pod of the same controller and template created from
//! `since_ns` on, other than the victim `victim_uid`, takes the hold.
void HoldForReplacement(PodNominator& nominator, PodInfoPtr placeholder, const std::string& destination,
                        const std::string& victim_uid, int64_t since_ns);

}  // namespace kubesched::framework::preemption
