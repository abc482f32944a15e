#pragma once
// The order in which a cluster's pending pods come into existence when a manifest is applied.
// kubectl creates the pods a manifest lists itself, in order. Pods of workloads are created by
// their controllers, concurrently: each ReplicaSet, Job or DaemonSet controller creates its
// replicas in slow-start batches (1, 2, 4, ... pods, the next batch after the previous one), so
// the batches of different workloads interleave in an order no one controls. The simulator draws
// that interleaving from its seed, which is what makes outcomes that hinge on it (a pod with
// affinity to another workload's pods arriving before or after them) vary across seeds as they
// vary across runs on a real cluster.

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace kubesched::cluster {

struct PendingPodOrigin {
  //! The owning controller ("<kind>/<namespace>/<name>"), or "" for a pod listed directly.
  std::string controller;
};

enum class CreationOrder {
  //! Manifest order: pods listed directly, and each workload's pods at the workload's position.
  kManifest,
  //! Pods listed directly in manifest order, then the workloads' slow-start batches interleaved
  //! at random (seeded).
  kControllers,
};

//! Slow-start batch sizes for n pods: 1, 2, 4, ... with the last batch holding the rest.
std::vector<size_t> SlowStartBatches(size_t n);

//! A permutation of [0, pods.size()): the order in which the pods are created.
std::vector<size_t> PodCreationOrder(const std::vector<PendingPodOrigin>& pods, CreationOrder order,
                                     std::mt19937_64& rng);

}  // namespace kubesched::cluster
