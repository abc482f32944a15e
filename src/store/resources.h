#pragma once
// The resources kubesched serves, with what discovery says about them (short names, categories,
// subresources) and their kinds' hooks: core/v1 namespaces, nodes, pods, events;
// events.k8s.io/v1 events; coordination.k8s.io/v1 leases; scheduling.k8s.io/v1 priorityclasses;
// policy/v1 poddisruptionbudgets; apps/v1 deployments, replicasets, statefulsets and daemonsets;
// core/v1 replicationcontrollers; batch/v1 jobs; and, stored as written for a scheduler's
// deployment, core/v1 serviceaccounts, configmaps and secrets and rbac.authorization.k8s.io/v1
// clusterroles, clusterrolebindings, roles and rolebindings.

#include <memory>
#include <vector>

#include "store/store.h"

namespace kubesched::store {

//! Every served resource, in discovery order. The types live as long as the program.
const std::vector<const ResourceType*>& BuiltinResources();

//! BuiltinResources() and the custom resources the scheduler reads, as a client knows them: the
//! scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1). What `run` and `extender` read
//! from an API server and what `simulate` and `bench` hold.
const std::vector<const ResourceType*>& SchedulerResources();

//! NewMemoryStore over BuiltinResources().
std::unique_ptr<Store> NewBuiltinStore(const util::Clock& clock, StoreOptions options = {});

}  // namespace kubesched::store
