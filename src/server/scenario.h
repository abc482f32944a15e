#pragma once
// GET /ui/scenario of `kubesched apiserver --ui`: the test bed saved as a scenario, one
// multi-document YAML file that `kubesched simulate -f scenario.yaml` replays.
//
// What it holds, in order: a comment saying how to run it; the Namespaces and PriorityClasses the
// user made (not the built-in ones); StorageClasses, CSIDrivers and DeviceClasses; the Nodes
// (labels, annotations, taints, unschedulable, capacity and allocatable); CSINodes,
// CSIStorageCapacities and ResourceSlices; PersistentVolumes (not those a provisioner made) and
// PersistentVolumeClaims (not a pod's ephemeral ones) without the binding the PV controller made
// (claimRef, volumeName and the binding annotations, unless a user pre-bound them);
// ResourceClaimTemplates and the ResourceClaims no pod owns (not allocated: status is left out);
// PodDisruptionBudgets, Workloads and PodGroups; the workloads (Deployments, ReplicaSets no
// Deployment owns, StatefulSets, DaemonSets, Jobs); the Pods no controller owns, in creation order, each annotated
// simulate.kubesched.io/create-after with its arrival after the first pod's; and last the
// scheduler's configuration, when `kubesched run --record-plugin-results` published a --config
// file in ConfigMap kube-system/kubesched-scheduler-config. Every object is cleaned of what the
// server set (uid, resourceVersion, creationTimestamp, managedFields, ownerReferences, status,
// generated Job selectors, ...), so that simulate --validate=strict loads it.
//
// A pod the scheduler placed comes back pending (no spec.nodeName), so simulate decides again; a
// pod created on a node keeps its spec.nodeName. The scheduler placed a pod when its
// schedulerName is one of the published profiles (default-scheduler when none are published)
// and an Event with reason Scheduled regards its uid: the store keeps no trace of whether
// spec.nodeName came with the create, and the PodScheduled condition does not tell (the node
// lifecycle sets it on every started pod, as the kubelet does).

#include <string>

#include "store/store.h"

namespace kubesched::server {

//! The Content-Disposition file name of GET /ui/scenario.
inline constexpr std::string_view kScenarioFileName = "scenario.yaml";

//! The objects of `store` as a scenario (see above). Reads the store's current state.
std::string BuildScenario(const store::Store& store);

//! `value` (a JSON object) as one YAML document, starting with "---\n": block style, strings
//! plain only where go-yaml v2 (kubectl's and kubesched's reader) reads them back as the same
//! string, else double-quoted. Exposed for tests.
std::string YamlDocument(const api::json::Value& value);

}  // namespace kubesched::server
