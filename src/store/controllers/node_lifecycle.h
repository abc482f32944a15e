#pragma once
// The node side of a cluster, for a store without kubelets: a pod bound to an existing node
// starts at once (phase Running; Initialized, Ready, ContainersReady and PodScheduled True;
// startTime; hostIP from the node's InternalIP; a podIP from the node's range; running container
// statuses), a terminating pod is removed when its deletionTimestamp comes (the kubelet's final
// delete with grace 0), and the pods of a deleted node are removed (the pod garbage collector). A
// pod annotated simulate.kubesched.io/run-for succeeds that long after it started (its containers
// exit 0), which is how a Job completes without a kubelet.
// This is what SimulatedCluster did for simulate, now through the store. It reads pods and nodes
// from the shared informers: a node's pods through their node index, in creation order.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

class NodeLifecycle final : public Controller {
 public:
  explicit NodeLifecycle(const ControllerContext& ctx, NodeLifecycleOptions options = {});
  std::string_view Name() const override { return "node-lifecycle"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  std::optional<int64_t> NextEventNs() const override;
  void FireEvents(int64_t now_ns) override;

 private:
  struct Removal {
    std::string namespace_;
    std::string name;
    std::string uid;
  };
  void OnPod(const PodFacts& pod);
  //! A running pod with kAnnotationRunFor (and restartPolicy Never or OnFailure): when it succeeds.
  void ScheduleCompletion(const PodFacts& pod);
  //! Its containers exit 0: phase Succeeded, Ready and ContainersReady False (PodCompleted).
  void CompletePod(const PodFacts& pod);
  void Forget(std::multimap<int64_t, Removal>& timers, std::unordered_map<std::string, int64_t>& at,
              const std::string& uid);
  void StartPod(const PodFacts& pod, const NodeFacts& node);
  //! The status the kubelet writes for a pod that started at `started_ns` and runs (phase
  //! Running, its conditions True, containers running; `running_status` adds the start time and
  //! IPs) or, with `finished_ns`, that ran to completion (Succeeded, not Ready for PodCompleted,
  //! containers terminated with exit code 0). Written only while the pod is still this version.
  void WriteKubeletStatus(const PodFacts& pod, int64_t started_ns, std::optional<int64_t> finished_ns,
                          const std::function<void(api::json::Value&, api::json::Allocator&)>& running_status);
  void RemovePodsOf(const std::string& node_name);
  void StartPodsOn(const std::string& node_name);
  std::string NextPodIP(const std::string& node_name);

  ControllerContext ctx_;
  const NodeLifecycleOptions options_;
  const ResourceType& pods_;
  const ResourceType& nodes_;

  mutable std::mutex mu_;  // guards the members below
  //! Terminating pods by the time they go; the kubelet deletes each then.
  std::multimap<int64_t, Removal> removals_;
  std::unordered_map<std::string, int64_t> removal_at_;  //!< by pod uid: its entry in removals_
  //! Running pods by the time they succeed (kAnnotationRunFor).
  std::multimap<int64_t, Removal> completions_;
  std::unordered_map<std::string, int64_t> completion_at_;  //!< by pod uid: its entry in completions_
  std::unordered_map<std::string, uint32_t> node_ordinal_;  //!< the /24 each node's pod IPs come from
  std::unordered_map<std::string, uint32_t> next_host_;     //!< the next host number per node
  //! Pods left terminating (NodeLifecycleOptions::leave_overdue_terminating_pods), by uid.
  std::unordered_set<std::string> left_terminating_;
};

}  // namespace kubesched::store::controllers
