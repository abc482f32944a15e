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
//! The same for a scheduling.k8s.io PodGroup's spec.priorityClassName and spec.priority (KEP-5710).
std::optional<Error> AdmitPodGroupPriority(api::json::Document& group, const ObjectReader& reader);
void PodFields(const api::json::Value& pod, FieldPairs& out);
extern const std::vector<std::string> kPodFieldSelectors;

//! The kubernetes.io/metadata.name label, spec.finalizers ["kubernetes"], status.phase Active.
void DefaultNamespace(api::json::Document& ns);
//! status.nodeInfo's ten strings and status.daemonEndpoints.kubeletEndpoint.Port, empty / 0
//! when absent, as upstream writes every Node.
void DefaultNode(api::json::Document& node);
void NodeFields(const api::json::Value& node, FieldPairs& out);
void EventFields(const api::json::Value& event, FieldPairs& out);
extern const std::vector<std::string> kEventFieldSelectors;

//! spec.replicas 1, revisionHistoryLimit 10, progressDeadlineSeconds 600, RollingUpdate 25%/25%,
//! and the template's pod spec defaults.
void DefaultDeployment(api::json::Document& deployment);
//! spec.replicas 1 and the template's pod spec defaults.
void DefaultReplicaSet(api::json::Document& replica_set);
//! SetDefaults_ReplicationController: spec.replicas 1, spec.selector and metadata.labels from
//! the template's labels when empty, and the template's pod spec defaults.
void DefaultReplicationController(api::json::Document& rc);
//! spec.replicas 1, podManagementPolicy OrderedReady, updateStrategy RollingUpdate (partition 0),
//! revisionHistoryLimit 10, persistentVolumeClaimRetentionPolicy Retain/Retain, template defaults.
void DefaultStatefulSet(api::json::Document& sts);
//! updateStrategy RollingUpdate (maxUnavailable 1, maxSurge 0), revisionHistoryLimit 10,
//! template defaults.
void DefaultDaemonSet(api::json::Document& ds);
//! SetDefaults_Job (parallelism, completions, backoffLimit 6, completionMode NonIndexed, suspend,
//! podReplacementPolicy TerminatingOrFailed) and, unless spec.manualSelector, the strategy's
//! generated selector (batch.kubernetes.io/controller-uid=<uid>) and template labels
//! (controller-uid, job-name, in both forms). Runs after the uid is set.
void DefaultJob(api::json::Document& job);
//! A ReplicationController's plain selector map: required, non-empty, contained in the
//! template's labels; replicas non-negative.
std::vector<Cause> ValidatePlainSelectorWorkload(const api::json::Value& workload, const Object* old);
//! ValidateWorkload, plus a template restartPolicy of OnFailure or Never, non-negative counts,
//! and completions for Indexed Jobs.
std::vector<Cause> ValidateJob(const api::json::Value& job, const Object* old);
//! A Deployment's or ReplicaSet's selector: required, non-empty, and matching the template's
//! labels (apps validation).
std::vector<Cause> ValidateWorkload(const api::json::Value& workload, const Object* old);
//! SetDefaults_Service: type ClusterIP, sessionAffinity None (ClientIP: a 10800 s timeout),
//! ports' protocol TCP and targetPort the port, internalTrafficPolicy Cluster (not for
//! ExternalName), externalTrafficPolicy Cluster for NodePort and LoadBalancer, and
//! allocateLoadBalancerNodePorts true for LoadBalancer.
void DefaultService(api::json::Document& service);
//! What the Service registry allocates on create: a cluster IP from 10.96.0.0/12 (the lowest free
//! one from 10.96.0.2 on; .1 is the kubernetes Service's) with clusterIPs, ipFamilies [IPv4] and
//! ipFamilyPolicy SingleStack, and a node port from 30000-32767 for each port of a NodePort or
//! LoadBalancer Service that names none. A cluster IP or node port given that is taken, or
//! outside its range, is a 422 as upstream words it.
std::optional<Error> AdmitService(api::json::Document& service, const ObjectReader& reader);
//! Upstream's patchAllocatedValues: an update (a `kubectl replace` of the Service as written)
//! that leaves out spec.clusterIP keeps the allocated one (and clusterIPs), and a port without a
//! nodePort keeps the one its port number and protocol had, when both versions need them.
void KeepAllocatedServiceValues(api::json::Document& service, const api::json::Value& old);
//! A PriorityClass's value is required; names starting "system-" may exceed 1e9.
std::vector<Cause> ValidatePriorityClass(const api::json::Value& pc, const Object* old);

}  // namespace kubesched::store
