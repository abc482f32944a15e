#pragma once
// The scheduler's profiles, as upstream's pkg/scheduler/profile: one framework per
// KubeSchedulerProfile, found by the schedulerName a pod asks for.

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/types.h"
#include "framework/registry.h"
#include "framework/runtime/framework.h"

namespace kubesched::profile {

//! Frameworks by scheduler name.
using Map = std::map<std::string, std::unique_ptr<framework::runtime::Framework>, std::less<>>;

//! Builds every profile's framework with the same dependencies (upstream's profile.NewMap). Refuses
//! no profile, two profiles with one scheduler name, and profiles whose QueueSort plugins differ
//! (all profiles share one scheduling queue); the configuration loader refuses these first, with
//! field paths, so here they guard configurations built in code. The first error is returned.
std::expected<Map, std::string> NewMap(const std::vector<config::Profile>& profiles,
                                       const framework::Registry& registry,
                                       const framework::runtime::FrameworkDeps& deps);

}  // namespace kubesched::profile
