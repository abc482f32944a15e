#pragma once
// VolumeZone: a pod whose claims are bound to volumes labelled with zones or regions may run only
// on nodes in one of them (upstream's volumezone plugin).

#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/storage_types.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::volume_zone {

inline constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

//! The zone and region labels VolumeZone reads on volumes and nodes, beta forms first (upstream's
//! topologyLabels).
inline constexpr std::string_view kTopologyLabels[] = {api::kLabelFailureDomainZone, api::kLabelFailureDomainRegion,
                                                       api::kLabelTopologyZone, api::kLabelTopologyRegion};

//! One topology label of a bound volume: nodes whose label `key` (or its GA form) has one of
//! `values` can use the volume.
struct PVTopology {
  std::string pv_name;
  std::string_view key;             //!< one of kTopologyLabels
  std::vector<std::string> values;  //!< sorted, without repeats
  bool operator==(const PVTopology&) const = default;
};

//! A volume label's zones: "a__b" is {a, b} (upstream's LabelZonesToSet; the delimiter is
//! kubelet's LabelMultiZoneDelimiter), each trimmed of spaces. nullopt when one is empty.
std::optional<std::vector<std::string>> LabelZonesToSet(std::string_view value);

//! The volume's topology labels, in kTopologyLabels order; labels whose value does not parse are
//! ignored, as upstream. spec.nodeAffinity is VolumeBinding's, not read here.
std::vector<PVTopology> GetPVTopologies(const api::PersistentVolume& pv);

class VolumeZone final : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeZone";

  //! Reads claims, volumes and classes through handle.Storage(); the handle outlives the plugin.
  explicit VolumeZone(framework::Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  //! The topology labels of the volumes bound to the pod's claims (unbound claims of a
  //! WaitForFirstConsumer class are left to VolumeBinding). Skip when there are none.
  //! UnschedulableAndUnresolvable when a claim, its class or its volume does not exist, or when a
  //! claim is unbound and its class binds immediately (or it has no class).
  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> nodes) override;
  //! UnschedulableAndUnresolvable kErrReasonConflict when the node has a zone or region label and
  //! some volume's label has no value matching the node's. A node without any topology label
  //! (a single-zone cluster) fits. Computes the topologies itself when PreFilter did not run, as
  //! upstream. Not node-local: the verdict follows claims and volumes, not only the node.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node_info) override;
  //! StorageClass additions (queued for WaitForFirstConsumer classes), node additions and label
  //! updates, claim additions and updates (queued for the pod's claims), volume additions and
  //! updates (queued when new, or when their topology labels changed).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  //! Upstream's getPVbyPod.
  std::expected<std::vector<PVTopology>, framework::Status> PodVolumeTopologies(const api::Pod& pod) const;

  framework::Handle& handle_;
};

framework::QueueingHint IsSchedulableAfterPersistentVolumeClaimChange(const api::Pod& pod,
                                                                      const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterStorageClassAdded(const api::Pod& pod, const framework::EventObjects& event);
framework::QueueingHint IsSchedulableAfterPersistentVolumeChange(const api::Pod& pod,
                                                                 const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::volume_zone
