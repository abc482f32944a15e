#include "plugins/registry.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "plugins/batch_placement/batch_placement.h"
#include "plugins/coscheduling/coscheduling.h"
#include "plugins/cross_node_preemption/cross_node_preemption.h"
#include "plugins/default_binder/default_binder.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/device_fragmentation/device_fragmentation.h"
#include "plugins/dynamic_resources/args.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/gang_scheduling/gang_scheduling.h"
#include "plugins/image_locality/image_locality.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/names.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_declared_features/node_declared_features.h"
#include "plugins/node_name/node_name.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/node_unschedulable/node_unschedulable.h"
#include "plugins/node_volume_limits/node_volume_limits.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "plugins/queue_sort/queue_sort.h"
#include "plugins/scheduling_gates/scheduling_gates.h"
#include "plugins/taint_toleration/taint_toleration.h"
#include "plugins/volume_binding/args.h"
#include "plugins/volume_binding/volume_binding.h"
#include "plugins/volume_restrictions/volume_restrictions.h"
#include "plugins/volume_zone/volume_zone.h"
#include "util/log.h"

namespace kubesched::plugins {
namespace {

void MustRegister(framework::Registry& registry, std::string_view name, framework::PluginFactory factory,
                  std::optional<framework::ArgsType> args_type = std::nullopt) {
  auto ok = registry.Register(std::string(name), std::move(factory), std::move(args_type));
  if (!ok) {
    KS_LOG.ErrorS(ok.error(), "Registering an in-tree plugin failed", "plugin", name);
    std::abort();
  }
}

// The ArgsType of a plugin whose args decode into `Args` with `decode` and encode back with
// `encode` (kind "<name>Args", as upstream names every in-tree args type).
template <class Args>
framework::ArgsType ArgsTypeOf(std::string_view name,
                               std::expected<Args, framework::ArgsErrors> (*decode)(const framework::ArgsView&,
                                                                                    const std::string&),
                               std::string (*encode)(const Args&)) {
  return {std::string(name) + "Args",
          [decode, encode](const framework::ArgsView& args,
                           const std::string& path) -> std::expected<std::string, framework::ArgsErrors> {
            auto decoded = decode(args, path);
            if (!decoded) return std::unexpected(std::move(decoded.error()));
            return encode(*decoded);
          }};
}

}  // namespace

void RegisterInTreePlugins(framework::Registry& registry) {
  MustRegister(registry, queue_sort::PrioritySort::kName, queue_sort::New);
  MustRegister(registry, scheduling_gates::SchedulingGates::kName, scheduling_gates::New);
  MustRegister(registry, node_name::NodeName::kName, node_name::New);
  MustRegister(registry, node_unschedulable::NodeUnschedulable::kName, node_unschedulable::New);
  MustRegister(registry, node_affinity::NodeAffinity::kName, node_affinity::New,
               ArgsTypeOf(node_affinity::NodeAffinity::kName, node_affinity::DecodeArgs, node_affinity::EncodeArgs));
  MustRegister(registry, taint_toleration::TaintToleration::kName, taint_toleration::New);
  MustRegister(registry, node_ports::NodePorts::kName, node_ports::New);
  MustRegister(registry, default_binder::DefaultBinder::kName, default_binder::New);
  MustRegister(registry, names::kNodeResourcesFit, node_resources_fit::New,
               ArgsTypeOf(names::kNodeResourcesFit, node_resources_fit::DecodeNodeResourcesFitArgs,
                          node_resources_fit::EncodeNodeResourcesFitArgs));
  MustRegister(registry, names::kNodeResourcesBalancedAllocation, node_resources_balanced_allocation::New,
               ArgsTypeOf(names::kNodeResourcesBalancedAllocation, node_resources_balanced_allocation::DecodeArgs,
                          node_resources_balanced_allocation::EncodeArgs));
  MustRegister(registry, names::kInterPodAffinity, inter_pod_affinity::New,
               ArgsTypeOf(names::kInterPodAffinity, inter_pod_affinity::DecodeArgs, inter_pod_affinity::EncodeArgs));
  MustRegister(registry, names::kPodTopologySpread, pod_topology_spread::New,
               ArgsTypeOf(names::kPodTopologySpread, pod_topology_spread::DecodeArgs, pod_topology_spread::EncodeArgs));
  MustRegister(registry, names::kImageLocality, image_locality::New);
  // The volume plugins (storage half of the default profile).
  MustRegister(registry, names::kVolumeRestrictions, volume_restrictions::New);
  MustRegister(registry, names::kNodeVolumeLimits, node_volume_limits::New);
  MustRegister(registry, names::kVolumeBinding, volume_binding::New,
               ArgsTypeOf(names::kVolumeBinding, volume_binding::DecodeArgs, volume_binding::EncodeArgs));
  MustRegister(registry, names::kVolumeZone, volume_zone::New);
  // Dynamic Resource Allocation with structured parameters (resource.k8s.io/v1).
  MustRegister(registry, names::kDynamicResources, dynamic_resources::New,
               ArgsTypeOf(names::kDynamicResources, dynamic_resources::DecodeArgs, dynamic_resources::EncodeArgs));
  // Node features a pod needs (KEP-5328, GA in 1.37).
  MustRegister(registry, names::kNodeDeclaredFeatures, node_declared_features::New);
  // Workload-aware scheduling (alpha upstream, off by default there too): enabled by naming it
  // in a profile.
  MustRegister(registry, names::kGangScheduling, gang_scheduling::New);
  MustRegister(registry, names::kDefaultPreemption, default_preemption::New,
               ArgsTypeOf(names::kDefaultPreemption, default_preemption::DecodeArgs, default_preemption::EncodeArgs));
  // kubernetes-sigs/scheduler-plugins' gang plugin, over its PodGroup CRD (scheduling.x-k8s.io).
  MustRegister(registry, coscheduling::Coscheduling::kName, coscheduling::New,
               ArgsTypeOf(coscheduling::Coscheduling::kName, coscheduling::DecodeArgs, coscheduling::EncodeArgs));
  // kubesched's own.
  MustRegister(
      registry, batch_placement::BatchPlacement::kName, batch_placement::New,
      ArgsTypeOf(batch_placement::BatchPlacement::kName, batch_placement::DecodeArgs, batch_placement::EncodeArgs));
  MustRegister(registry, device_fragmentation::DeviceFragmentation::kName, device_fragmentation::New,
               ArgsTypeOf(device_fragmentation::DeviceFragmentation::kName, device_fragmentation::DecodeArgs,
                          device_fragmentation::EncodeArgs));
  MustRegister(registry, cross_node_preemption::CrossNodePreemption::kName, cross_node_preemption::New,
               ArgsTypeOf(cross_node_preemption::CrossNodePreemption::kName, cross_node_preemption::DecodeArgs,
                          cross_node_preemption::EncodeArgs));
}

}  // namespace kubesched::plugins
