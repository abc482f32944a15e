#pragma once
// What the API server does to each kind's JSON besides the generic metadata handling: defaulting
// (pkg/apis/core/v1/defaults.go, apps/v1/defaults.go), the Priority and DefaultTolerationSeconds
// admission plugins, the selectable fields of field selectors, and the workloads' selector
// validation. The loader bridge (validation and views of pods and nodes) is in kind_hooks.h.

#include <string>
#include <utility>
#include <vector>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store {

using FieldPairs = std::vector<std::pair<std::string, std::string>>;

//! A pod spec's defaults (also for workload templates): schedulerName, restartPolicy, dnsPolicy,
//! terminationGracePeriodSeconds, securityContext, containers' terminationMessage*,
//! imagePullPolicy, port protocols, requests from limits.
void DefaultPodSpec(api::json::Value& spec, api::json::Allocator& a);
//! DefaultPodSpec, status.phase Pending, and the not-ready / unreachable NoExecute tolerations
//! (300 s) that DefaultTolerationSeconds adds.
void DefaultPod(api::json::Document& pod);
//! The Priority admission plugin: spec.priority (and preemptionPolicy) from the PriorityClass
//! named, else from the globalDefault class, else 0; 403 when the class does not exist or the
//! pod states a different priority.
std::optional<Error> AdmitPodPriority(api::json::Document& pod, const ObjectReader& reader);
void PodFields(const api::json::Value& pod, FieldPairs& out);
extern const std::vector<std::string> kPodFieldSelectors;

//! The kubernetes.io/metadata.name label, spec.finalizers ["kubernetes"], status.phase Active.
void DefaultNamespace(api::json::Document& ns);
void NodeFields(const api::json::Value& node, FieldPairs& out);
void EventFields(const api::json::Value& event, FieldPairs& out);
extern const std::vector<std::string> kEventFieldSelectors;

//! spec.replicas 1, revisionHistoryLimit 10, progressDeadlineSeconds 600, RollingUpdate 25%/25%,
//! and the template's pod spec defaults.
void DefaultDeployment(api::json::Document& deployment);
//! spec.replicas 1 and the template's pod spec defaults.
void DefaultReplicaSet(api::json::Document& replica_set);
//! A Deployment's or ReplicaSet's selector: required, non-empty, and matching the template's
//! labels (apps validation).
std::vector<Cause> ValidateWorkload(const api::json::Value& workload, const Object* old);
//! A PriorityClass's value is required; names starting "system-" may exceed 1e9.
std::vector<Cause> ValidatePriorityClass(const api::json::Value& pc, const Object* old);

}  // namespace kubesched::store
