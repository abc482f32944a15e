#pragma once
// InterPodAffinityArgs, as upstream's config.InterPodAffinityArgs with its v1 defaulting and
// ValidateInterPodAffinityArgs.

#include <cstdint>
#include <expected>
#include <string>

#include "framework/args.h"
#include "framework/args_view.h"

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

//! Decodes the args strictly, applies the defaults (null/absent fields) and validates them. Every
//! error names its field under `path` in upstream's field.Error wording, e.g.
//! `<path>.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]`.
std::expected<InterPodAffinityArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                      const std::string& path);
//! DecodeArgs with paths relative to args, the errors joined as upstream's aggregate ("[e1, e2]").
std::expected<InterPodAffinityArgs, std::string> ParseArgs(const framework::ArgsView& args);
//! The args as a configuration file spells them.
std::string EncodeArgs(const InterPodAffinityArgs& args);

}  // namespace kubesched::plugins::inter_pod_affinity
