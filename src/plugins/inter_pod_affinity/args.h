#pragma once
// InterPodAffinityArgs, as upstream's config.InterPodAffinityArgs with its v1 defaulting and
// ValidateInterPodAffinityArgs.

#include <cstdint>
#include <expected>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kubesched::plugins::inter_pod_affinity {

inline constexpr int32_t kDefaultHardPodAffinityWeight = 1;
inline constexpr int32_t kMinHardPodAffinityWeight = 0;
inline constexpr int32_t kMaxHardPodAffinityWeight = 100;

struct InterPodAffinityArgs {
  //! Score weight given to nodes in the topology of an existing pod whose *required* affinity
  //! matches the incoming pod (the symmetric side of hard affinity). 0 disables it.
  int32_t hard_pod_affinity_weight = kDefaultHardPodAffinityWeight;
  //! When the incoming pod has no preferred (anti-)affinity terms, skip scoring entirely instead
  //! of scoring existing pods' preferred terms.
  bool ignore_preferred_terms_of_existing_pods = false;
};

//! Reads, defaults and validates the args (null/absent fields => upstream defaults). Errors name
//! the field relative to args in upstream's field.Error wording, e.g.
//! `hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]`.
std::expected<InterPodAffinityArgs, std::string> ParseArgs(const nlohmann::json& args);

}  // namespace kubesched::plugins::inter_pod_affinity
