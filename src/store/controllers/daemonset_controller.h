#pragma once
// The DaemonSet controller (pkg/controller/daemon): one pod per node the template fits
// (DaemonPlacement: nodeName, node selector, required node affinity, and taints against the
// template's tolerations plus those every daemon pod gets), named `<ds>-<5 chars>` from the
// manager's Rng and pinned to its node by a required node affinity on metadata.name (not
// nodeName), as upstream does since the scheduler places daemon pods. A pod is created when a node
// appears or starts to fit; a deleted pod is replaced only once it is gone (a terminating pod still
// holds its node), and not at all when its node is gone. Pods on nodes the template no longer
// tolerates (NoExecute) or selects are deleted, as are failed and surplus ones, and unscheduled
// pods pinned to a node that no longer exists. Status: desired, current, misscheduled, ready,
// available, unavailable, updated counts and observedGeneration. Rolling updates are not modelled
// (existing pods stay, OnDelete-like); a deleted DaemonSet's pods are deleted (garbage collection).
//
// Per DaemonSet it keeps each relevant node's verdict and pods and the status counts as sums of
// per-node contributions, so a pod event costs O(pods on that node) and a node event O(DaemonSets).

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/controllers/controller.h"
#include "store/controllers/daemon_placement.h"
#include "store/controllers/expectations.h"
#include "store/controllers/workload_info.h"

namespace kubesched::store::controllers {

class DaemonSetController final : public Controller {
 public:
  explicit DaemonSetController(const ControllerContext& ctx);
  std::string_view Name() const override { return "daemonset"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  void Flush() override;

 private:
  struct Counts {
    int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, updated = 0;
  };
  struct NodeState {
    DaemonVerdict verdict;
    bool node_exists = false;
    PodsBySeq pods;  //!< the daemon's pods on (or pinned to) the node, oldest first
  };
  struct Daemon {
    WorkloadInfo info;
    DaemonPlacement placement;
    std::string revision;  //!< controller-revision-hash of new pods
    std::unordered_map<std::string, NodeState> nodes;
    Counts counts;
  };

  void OnDaemon(const WatchEvent& event);
  void OnPod();
  void OnNode(const WatchEvent& event);
  //! Re-evaluates every node for `d` (a new or changed template).
  void Reevaluate(Daemon& d);
  Counts Contribution(const Daemon& d, const NodeState& s) const;
  //! Applies `change` to one node's state, keeping the counts, and drops states that matter no more.
  template <typename F>
  void Update(Daemon& d, const std::string& node, F&& change);
  //! Creates or deletes the daemon's pods on one node.
  void ManageNode(Daemon& d, const std::string& node);
  void WriteStatus(const Daemon& d);

  ControllerContext ctx_;
  const ResourceType& pods_;
  const ResourceType& nodes_;
  const ResourceType& daemons_;
  std::unordered_map<std::string, Daemon> by_uid_;
  //! Keyed by `<daemon uid>/<node>`: a create on one node does not hold back the others.
  Expectations expectations_;
  std::vector<std::string> dirty_;
};

}  // namespace kubesched::store::controllers
