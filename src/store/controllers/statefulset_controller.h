#pragma once
// The StatefulSet controller (pkg/controller/statefulset): pods `<sts>-<ordinal>` for ordinals
// 0 … replicas-1, each carrying the statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index
// and controller-revision-hash labels and spec.hostname / spec.subdomain (serviceName) as
// upstream's identity. A pod keeps its name, so a replacement is created only once the old pod is
// gone (a terminating pod still holds the name); failed pods are deleted and so replaced. With
// podManagementPolicy OrderedReady (the default) pods are created one at a time in ordinal order,
// each only when every lower one is Running and Ready, and surplus pods are deleted from the
// highest ordinal down, one at a time, once the others are healthy; with Parallel all at once.
// Status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
// currentRevision, updateRevision, observedGeneration. Each pod's claims from volumeClaimTemplates
// ("<template>-<set>-<ordinal>") are created before it and named in its volumes; with
// persistentVolumeClaimRetentionPolicy Delete they go when the set is deleted (whenDeleted) or the
// ordinal is scaled away (whenScaled). Rolling updates are not modelled (existing
// pods stay, OnDelete-like): new pods take the revision status.updateRevision names when set (so
// pods made by a loader that set it match), else `<sts>-<hash of the template>`.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/controllers/controller.h"
#include "store/controllers/expectations.h"
#include "store/controllers/volume_claims.h"
#include "store/controllers/workload_info.h"

namespace kubesched::store::controllers {

class StatefulSetController final : public Controller {
 public:
  explicit StatefulSetController(const ControllerContext& ctx);
  std::string_view Name() const override { return "statefulset"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  void Flush() override;

 private:
  struct Set {
    WorkloadInfo info;
    bool parallel = false;     //!< podManagementPolicy Parallel
    std::string service_name;  //!< spec.serviceName
    std::string revision;
    StatefulSetClaims claims;  //!< spec.volumeClaimTemplates and the retention policy
  };
  void OnSet(const WatchEvent& event);
  void OnPod(const WatchEvent& event);
  void Manage(const Set& set);
  void WriteStatus(const Set& set);

  ControllerContext ctx_;
  const ResourceType& pods_;
  const ResourceType& sets_;
  const ResourceType* claims_;  // null in a store without claims
  std::unordered_map<std::string, Set> by_uid_;
  Expectations expectations_;
  std::vector<std::string> dirty_;
};

}  // namespace kubesched::store::controllers
