#pragma once
// PodTopologySpreadArgs: the cluster-level default spreading constraints, as upstream's
// config.PodTopologySpreadArgs, with its defaulting and ValidatePodTopologySpreadArgs.

#include <expected>
#include <string>
#include <vector>

#include "api/types.h"
#include "framework/args.h"
#include "framework/args_view.h"

namespace kubesched::plugins::pod_topology_spread {

inline constexpr std::string_view kSystemDefaulting = "System";
inline constexpr std::string_view kListDefaulting = "List";

struct PodTopologySpreadArgs {
  //! Constraints applied to pods that define none of their own. Their labelSelector is always
  //! absent (validation forbids it): the selector is deduced per pod from its controller.
  std::vector<api::TopologySpreadConstraint> default_constraints;
  //! "System" (upstream's built-in defaults; default_constraints must be empty) or "List".
  std::string defaulting_type = std::string(kSystemDefaulting);
};

//! Upstream's system defaults: hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway.
const std::vector<api::TopologySpreadConstraint>& SystemDefaultConstraints();

//! Decodes the args strictly, applies the defaults (null/absent => defaultingType System) and
//! validates them; every error names its field under `path` in upstream's field.Error wording.
std::expected<PodTopologySpreadArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                       const std::string& path);
//! DecodeArgs with paths relative to args, the errors joined as upstream's aggregate ("[e1, e2]").
std::expected<PodTopologySpreadArgs, std::string> ParseArgs(const framework::ArgsView& args);
//! The args as a configuration file spells them.
std::string EncodeArgs(const PodTopologySpreadArgs& args);

}  // namespace kubesched::plugins::pod_topology_spread
