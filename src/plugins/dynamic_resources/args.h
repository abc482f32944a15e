#pragma once
// DynamicResourcesArgs (kubescheduler.config.k8s.io/v1): filterTimeout and bindingTimeout,
// decoded strictly, defaulted as SetDefaults_DynamicResourcesArgs and validated as
// ValidateDynamicResourcesArgs.

#include <cstdint>
#include <expected>
#include <string>

#include "framework/args.h"
#include "framework/args_view.h"

namespace kubesched::plugins::dynamic_resources {

inline constexpr int64_t kDefaultFilterTimeoutNs = 10'000'000'000;    // 10s
inline constexpr int64_t kDefaultBindingTimeoutNs = 600'000'000'000;  // 10min
//! ValidateDynamicResourcesArgs: bindingTimeout "must be at least 1 second".
inline constexpr int64_t kMinBindingTimeoutNs = 1'000'000'000;

struct DynamicResourcesArgs {
  //! How long Filter may search for devices on one node (0: no limit). kubesched's allocator is
  //! exhaustive and bounded by the claim's limits; the value is kept and validated as upstream's.
  int64_t filter_timeout_ns = kDefaultFilterTimeoutNs;
  //! How long PreBind waits for device binding conditions (DRADeviceBindingConditions).
  int64_t binding_timeout_ns = kDefaultBindingTimeoutNs;
  bool operator==(const DynamicResourcesArgs&) const = default;
};

std::expected<DynamicResourcesArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                      const std::string& path);
//! DecodeArgs with paths relative to args, the errors joined as upstream's aggregate.
std::expected<DynamicResourcesArgs, std::string> ParseArgs(const framework::ArgsView& args);
std::string EncodeArgs(const DynamicResourcesArgs& args);

}  // namespace kubesched::plugins::dynamic_resources
