#pragma once
// PodTopologySpreadArgs: the cluster-level default spreading constraints, as upstream's
// config.PodTopologySpreadArgs, with its defaulting and ValidatePodTopologySpreadArgs.

#include <expected>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "api/types.h"

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

//! Reads, defaults and validates the args (null/absent => defaultingType System). The error names
//! the field relative to args in upstream's field.Error wording; several errors are joined as
//! "[e1, e2]" (upstream's aggregate).
std::expected<PodTopologySpreadArgs, std::string> ParseArgs(const nlohmann::json& args);

}  // namespace kubesched::plugins::pod_topology_spread
