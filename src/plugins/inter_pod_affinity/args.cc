#include "plugins/inter_pod_affinity/args.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace kubesched::plugins::inter_pod_affinity {

std::expected<InterPodAffinityArgs, std::string> ParseArgs(const nlohmann::json& args) {
  InterPodAffinityArgs out;
  if (args.is_null()) return out;
  if (!args.is_object()) return std::unexpected("expected an object");
  for (const auto& [key, value] : args.items()) {
    if (value.is_null()) continue;  // an explicit null keeps the default, as a nil pointer does
    if (key == "hardPodAffinityWeight") {
      if (!value.is_number_integer()) {
        return std::unexpected(
            fmt::format("hardPodAffinityWeight: Invalid value: {}: must be an integer", value.dump()));
      }
      int64_t w = value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}
                      ? std::numeric_limits<int64_t>::max()
                      : value.get<int64_t>();
      if (w < kMinHardPodAffinityWeight || w > kMaxHardPodAffinityWeight) {
        return std::unexpected(fmt::format("hardPodAffinityWeight: Invalid value: {}: not in valid range [{}, {}]", w,
                                           kMinHardPodAffinityWeight, kMaxHardPodAffinityWeight));
      }
      out.hard_pod_affinity_weight = static_cast<int32_t>(w);
    } else if (key == "ignorePreferredTermsOfExistingPods") {
      if (!value.is_boolean()) {
        return std::unexpected(
            fmt::format("ignorePreferredTermsOfExistingPods: Invalid value: {}: must be a boolean", value.dump()));
      }
      out.ignore_preferred_terms_of_existing_pods = value.get<bool>();
    } else if (key == "apiVersion" || key == "kind") {
      continue;  // the typed-args envelope
    } else {
      return std::unexpected(fmt::format("unknown field \"{}\"", key));
    }
  }
  return out;
}

}  // namespace kubesched::plugins::inter_pod_affinity
