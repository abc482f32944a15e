#pragma once
// Upstream's in-tree plugin names (pkg/scheduler/framework/plugins/names). Each implemented plugin
// also carries its name as `kName`; these constants let configuration and profile code refer to
// every upstream plugin, including those kubesched does not implement yet.

#include <string_view>

namespace kubesched::plugins::names {

inline constexpr std::string_view kPrioritySort = "PrioritySort";
inline constexpr std::string_view kDefaultBinder = "DefaultBinder";
inline constexpr std::string_view kDefaultPreemption = "DefaultPreemption";
inline constexpr std::string_view kDynamicResources = "DynamicResources";
inline constexpr std::string_view kGangScheduling = "GangScheduling";
inline constexpr std::string_view kImageLocality = "ImageLocality";
inline constexpr std::string_view kInterPodAffinity = "InterPodAffinity";
inline constexpr std::string_view kNodeAffinity = "NodeAffinity";
inline constexpr std::string_view kNodeDeclaredFeatures = "NodeDeclaredFeatures";
inline constexpr std::string_view kNodeName = "NodeName";
inline constexpr std::string_view kNodePorts = "NodePorts";
inline constexpr std::string_view kNodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation";
inline constexpr std::string_view kNodeResourcesFit = "NodeResourcesFit";
inline constexpr std::string_view kNodeUnschedulable = "NodeUnschedulable";
inline constexpr std::string_view kNodeVolumeLimits = "NodeVolumeLimits";
inline constexpr std::string_view kPodTopologySpread = "PodTopologySpread";
inline constexpr std::string_view kSchedulingGates = "SchedulingGates";
inline constexpr std::string_view kTaintToleration = "TaintToleration";
inline constexpr std::string_view kVolumeBinding = "VolumeBinding";
inline constexpr std::string_view kVolumeRestrictions = "VolumeRestrictions";
inline constexpr std::string_view kVolumeZone = "VolumeZone";

}  // namespace kubesched::plugins::names
