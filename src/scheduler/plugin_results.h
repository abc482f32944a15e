#pragma once
// What `kubesched run --record-plugin-results` publishes, as kube-scheduler-simulator publishes
// its results: each pod's last attempt per node and plugin as a pod annotation, and the
// scheduler's profiles in a ConfigMap. The JSON shapes here are what the web UI reads; change
// them only together with it (README, "kubesched run").

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "profile/profile_config.h"
#include "scheduler/scheduler.h"

namespace kubesched::scheduler {

//! The pod annotation that holds EncodePluginResults' value.
inline constexpr std::string_view kPluginResultsAnnotation = "scheduler.kubesched.io/plugin-results";
//! The largest value EncodePluginResults writes by default: far below the API's 256 KiB for all
//! of a pod's annotations together.
inline constexpr size_t kMaxPluginResultsBytes = 200 * 1024;

//! One attempt as compact JSON:
//!   {"profile","time","result":"Scheduled"|"Unschedulable"|"Error","selectedNode","message",
//!    "preFilter","filterPlugins":[name],"scorePlugins":[{"name","weight"}],
//!    "nodes":[{"name","feasible","excluded","filter":{plugin:text},
//!              "score":{plugin:{"raw","normalized","weighted"}},"total"}],
//!    "truncatedNodes":N,"notes":[{"plugin","text"}]}
//! Empty strings, lists and maps are left out (truncatedNodes is always there). A node's `filter`
//! holds only the plugins whose verdict was neither Success nor Skip, each with its status
//! message and, in brackets, the detail (as simulate --explain prints them); `total` only when
//! the node was scored. `profile` gives filterPlugins and scorePlugins (null: left out). When
//! the value would exceed `max_bytes`, nodes are left out and counted in truncatedNodes: the
//! selected node stays, then the best-scoring feasible nodes fill up to half of the room left,
//! then the rejected nodes, then more feasible nodes; the kept ones stay in their order.
std::string EncodePluginResults(const AttemptExplanation& explanation, const profile::ProfileConfig* profile,
                                size_t max_bytes = kMaxPluginResultsBytes);

//! The profiles as `run --record-plugin-results` publishes them (ConfigMap data key
//! profiles.json):
//!   {"profiles":[{"schedulerName","plugins":{"<extension point>":[name, in order]},
//!                 "scorePlugins":[{"name","weight"}],"pluginConfig":[{"name","args"}],
//!                 "percentageOfNodesToScore"}]}
//! with pluginConfig left out when empty and percentageOfNodesToScore when adaptive.
std::string EncodeProfileConfigs(std::span<const profile::ProfileConfig> profiles);

}  // namespace kubesched::scheduler
