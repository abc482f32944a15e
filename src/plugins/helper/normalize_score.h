#pragma once
// Score normalization shared by score plugins, as upstream's helper.DefaultNormalizeScore.

#include <cstdint>

#include "framework/interface.h"
#include "framework/status.h"

namespace kubesched::plugins::helper {

//! Rescales scores so the highest becomes max_priority (integer division, as upstream:
//! score * max_priority / max). With reverse, each score becomes max_priority - scaled, so the
//! lowest raw score ranks best. When every score is 0 they stay 0, or all become max_priority
//! with reverse. Always returns Success.
framework::Status DefaultNormalizeScore(int64_t max_priority, bool reverse, framework::NodeScoreList& scores);

}  // namespace kubesched::plugins::helper
