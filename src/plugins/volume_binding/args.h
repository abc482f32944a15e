#pragma once
// VolumeBindingArgs (kubescheduler.config.k8s.io/v1 VolumeBindingArgs): how long PreBind waits for
// the PV controller, and the shape of the storage capacity score. Decoded strictly, defaulted as
// SetDefaults_VolumeBindingArgs and validated as ValidateVolumeBindingArgsWithOptions.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"

namespace kubesched::plugins::volume_binding {

//! Upstream's config.MaxCustomPriorityScore: shape scores are in [0, 10], scaled by 10 to node scores.
inline constexpr int64_t kMaxCustomPriorityScore = 10;
inline constexpr int64_t kDefaultBindTimeoutSeconds = 600;

//! The scheduler feature gates the plugin reads (upstream's feature.Features subset).
struct Features {
  //! StorageCapacityScoring (KEP-4049): alpha and off by default in v1.34, the release kubesched
  //! follows (beta and on from v1.37). Off, the plugin does not score and `shape` is rejected.
  bool storage_capacity_scoring = false;
};

//! A point of the scoring function: storage utilization in [0, 100] → score in [0, 10].
struct UtilizationShapePoint {
  int32_t utilization = 0;
  int32_t score = 0;
  bool operator==(const UtilizationShapePoint&) const = default;
};

struct VolumeBindingArgs {
  //! How long PreBind waits for the claims to be bound (0: fail unless nothing is to be bound).
  int64_t bind_timeout_seconds = kDefaultBindTimeoutSeconds;
  //! Absent unless given or defaulted (StorageCapacityScoring on: [{0, 10}, {100, 0}], nodes with
  //! more free capacity first).
  std::optional<std::vector<UtilizationShapePoint>> shape;
  bool operator==(const VolumeBindingArgs&) const = default;
};

//! Decodes the args strictly (unknown fields and wrong types are decoding errors, paths rooted
//! at `path`), applies the v1 defaults and validates them with `features`.
std::expected<VolumeBindingArgs, framework::ArgsErrors> DecodeArgsWithFeatures(const framework::ArgsView& args,
                                                                               const std::string& path,
                                                                               const Features& features);
//! DecodeArgsWithFeatures with the default features (the registered ArgsType's decode).
std::expected<VolumeBindingArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                   const std::string& path);
//! DecodeArgsWithFeatures with paths relative to args, the errors joined as upstream's aggregate.
std::expected<VolumeBindingArgs, std::string> ParseArgs(const framework::ArgsView& args,
                                                        const Features& features = Features());
//! The args as a configuration file spells them (shape left out when absent, as omitempty).
std::string EncodeArgs(const VolumeBindingArgs& args);

}  // namespace kubesched::plugins::volume_binding
