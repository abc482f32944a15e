#pragma once
// Upstream's resourceclaim controller (pkg/controller/resourceclaim), one implementation for
// `simulate` and the API test bed:
// - a pod's spec.resourceClaims entry with resourceClaimTemplateName gets its own ResourceClaim,
//   made from the template (generateName "<pod>-<claim>-", the template's labels and annotations
//   plus resource.kubernetes.io/pod-claim-name, owned by the pod), and the pod's
//   status.resourceClaimStatuses names it;
// - a pod that is gone or done leaves the reservedFor of the claims it used; a claim no pod uses
//   any more is deallocated (status.allocation cleared), and a claim made for a pod goes with it.

#include <map>
#include <string>
#include <tuple>

#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

class ResourceClaimController final : public Controller {
 public:
  explicit ResourceClaimController(const ControllerContext& ctx);
  std::string_view Name() const override { return "resourceclaim"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;

 private:
  //! Creates the pod's missing claims and records them in its status.
  void SyncPod(const Object& pod);
  //! Drops consumers that are gone or done from the claim's reservedFor; deallocates or deletes
  //! the claim when nobody uses it.
  void SyncClaim(const Object& claim);
  void Index(const Object& claim, bool add);

  ControllerContext ctx_;
  const ResourceType& pods_;
  const ResourceType* claims_;
  const ResourceType* templates_;
  //! Claims made for pods: (namespace, owner pod uid, pod-claim-name) -> claim name.
  std::map<std::tuple<std::string, std::string, std::string>, std::string> generated_;
};

}  // namespace kubesched::store::controllers
