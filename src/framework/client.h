#pragma once
// ClusterClient: what plugins and the scheduler may ask of the cluster. Implemented by the
// simulated cluster and by the real API client (cluster/).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource_types.h"
#include "api/storage_types.h"
#include "api/types.h"
#include "framework/status.h"

namespace kubesched::framework {

//! The object an Event is about (corev1.ObjectReference), as client-go's reference.GetReference
//! makes it: kind, apiVersion, namespace, name, uid and resourceVersion.
struct EventObjectReference {
  std::string kind;
  std::string api_version;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  bool operator==(const EventObjectReference&) const = default;
  auto operator<=>(const EventObjectReference&) const = default;

  //! A pod's reference (kind Pod, apiVersion v1) at the version the scheduler holds.
  static EventObjectReference ForPod(const api::Pod& pod) {
    return {"Pod", "v1", pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid, pod.metadata.resource_version};
  }
};

//! One occurrence of an events.k8s.io/v1 Event, as upstream's EventRecorder.Eventf takes it
//! (regarding, related, type, reason, action, note), with the profile that reports it.
struct EventRecord {
  EventObjectReference regarding{};
  std::optional<EventObjectReference> related{};  //!< the preemptor, on a victim's Preempted event
  std::string type{};                             //!< "Normal" or "Warning"
  std::string reason{};                           //!< "Scheduled", "FailedScheduling", "Preempted"
  std::string action{};                           //!< "Binding", "Scheduling", "Preempting"
  std::string note{};
  std::string reporting_controller{};  //!< the profile's schedulerName
};

class ClusterClient {
 public:
  virtual ~ClusterClient() = default;
  //! Binds the pod to the node (pods/binding). Error when the pod is gone or already bound.
  virtual Status Bind(const api::Pod& pod, const std::string& node_name) = 0;
  //! Evicts (deletes) a pod, as preemption does.
  virtual Status DeletePod(const api::Pod& pod, std::string_view reason) = 0;
  //! Evicts a pod that a controller will recreate, for cross-node preemption to place its
  //! replacement on `destination_node` (the simulated cluster records the move).
  virtual Status DeletePodForMove(const api::Pod& pod, const std::string& destination_node, std::string_view reason) {
    return DeletePod(pod, reason);
  }
  //! A scheduler extender's bind verb bound the pod. A cluster the scheduler watches reports the
  //! binding through its watch, so nothing is written by default; the simulated cluster, which
  //! nothing outside the process writes to, records the pod as bound there.
  virtual Status BoundByExtender(const api::Pod& /*pod*/, const std::string& /*node_name*/) { return Status(); }
  //! Sets (or, with "", clears) status.nominatedNodeName.
  virtual Status SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) = 0;
  //! Records the PodScheduled condition (reason Unschedulable / SchedulerError and a message).
  virtual Status SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) = 0;
  //! Records a condition in a PodGroup's status (PodGroupScheduled), merged with the others by
  //! type. A no-op by default (a cluster without PodGroups).
  virtual Status SetPodGroupCondition(const api::PodGroup& /*group*/, const api::PodCondition& /*condition*/) {
    return Status();
  }
  //! VolumeBinding's PreBind, static binding: sets the volume's spec.claimRef to the claim (with
  //! pv.kubernetes.io/bound-by-controller: "yes"), as upstream's binder does; the PV controller then
  //! binds the claim. Unsupported by default.
  virtual Status BindVolumeToClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
    return Status::Error("this cluster client cannot bind PersistentVolumes (" + volume.metadata.name + " to " +
                         claim.Key() + ")");
  }
  //! VolumeBinding's PreBind, dynamic provisioning: annotates the claim with
  //! volume.kubernetes.io/selected-node, which its provisioner waits for. Unsupported by default.
  virtual Status SelectNodeForClaim(const api::PersistentVolumeClaim& claim, const std::string& node_name) {
    return Status::Error("this cluster client cannot annotate PersistentVolumeClaims (" + claim.Key() + " on " +
                         node_name + ")");
  }
  //! DynamicResources' PreBind: writes the claim's status.allocation and status.reservedFor as
  //! `claim` has them, at the resourceVersion `claim` was made from (a conflict when the claim
  //! changed since). Unsupported by default.
  virtual Status UpdateResourceClaimStatus(const api::ResourceClaim& claim) {
    return Status::Error("this cluster client cannot write ResourceClaims (" + claim.Key() + ")");
  }
  //! The labels of a namespace, or nullopt when it does not exist.
  virtual std::optional<api::Labels> NamespaceLabels(std::string_view name) const = 0;
  virtual std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const = 0;
  //! The label selector of the workload controlling `pod` (its controller owner reference of kind
  //! ReplicaSet, StatefulSet or ReplicationController, looked up in the pod's namespace), or
  //! nullopt when the pod has no such controller or it no longer exists. PodTopologySpread builds
  //! its default constraints' selector from it (upstream's helper.DefaultSelector); other
  //! controller kinds (Job, DaemonSet) yield nullopt as upstream.
  virtual std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const { return std::nullopt; }
  //! Whether RecordEvent writes anything: callers skip building a record when it does not
  //! (simulate records no Events, and must not pay for their notes).
  virtual bool RecordsEvents() const { return false; }
  //! Hands an Event to the recorder. Never blocks on the API and never fails the caller: the
  //! write happens later (or is dropped with a warning, as client-go's broadcaster drops when
  //! its queue is full). A no-op by default.
  virtual void RecordEvent(const EventRecord& /*event*/) {}
};

}  // namespace kubesched::framework
