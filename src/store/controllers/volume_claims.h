#pragma once
// The claims controllers make for pods: a StatefulSet's from its volumeClaimTemplates (upstream's
// StatefulSet controller, with persistentVolumeClaimRetentionPolicy) and a pod's generic ephemeral
// volumes' (upstream's ephemeral volume controller, and the garbage collector deleting them with
// their pod).

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/json.h"
#include "store/controllers/controller.h"

namespace kubesched::store::controllers {

//! A StatefulSet's claim templates and retention policy, read once per version of the set.
struct StatefulSetClaims {
  //! Each template (a PersistentVolumeClaim without a name) as JSON.
  std::vector<std::string> templates;
  std::vector<std::string> names;  //!< each template's metadata.name
  //! The set's spec.selector.matchLabels (given to every claim, as upstream).
  std::vector<std::pair<std::string, std::string>> selector_labels;
  bool delete_when_deleted = false;  //!< whenDeleted: Delete
  bool delete_when_scaled = false;   //!< whenScaled: Delete

  static StatefulSetClaims Of(const api::json::Value& statefulset);
  bool empty() const { return templates.empty(); }
};

//! Points the pod's volume named after each template at its claim (replacing a template volume of
//! that name, as upstream's updateStorage), in a pod document made from the set's template.
void UseStatefulSetClaims(api::json::Document& pod, const StatefulSetClaims& claims, std::string_view set,
                          int64_t ordinal);

//! Creates the claims of ordinal `ordinal` that do not exist yet. The set (when whenDeleted is
//! Delete) owns them.
void CreateStatefulSetClaims(Store& store, const ResourceType& claims_type, const StatefulSetClaims& claims,
                             std::string_view namespace_, std::string_view set, std::string_view set_uid,
                             int64_t ordinal);

//! Deletes the claims of ordinal `ordinal` (whenScaled: Delete, for a condemned ordinal).
void DeleteStatefulSetClaims(Store& store, const ResourceType& claims_type, const StatefulSetClaims& claims,
                             std::string_view namespace_, std::string_view set, int64_t ordinal);

//! The ephemeral volume controller: a pod's generic ephemeral volumes get their claims
//! ("<pod>-<volume>", owned by the pod) when the pod is created; the claims go with their pod (the
//! garbage collector's part). A claim of that name the pod does not own is left alone (the
//! scheduler then refuses the pod, as upstream).
class EphemeralVolumeController final : public Controller {
 public:
  explicit EphemeralVolumeController(const ControllerContext& ctx);
  std::string_view Name() const override { return "ephemeral-volume"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;

 private:
  void Sync(const Object& pod);

  ControllerContext ctx_;
  const ResourceType& pods_;
  const ResourceType& claims_;
};

}  // namespace kubesched::store::controllers
