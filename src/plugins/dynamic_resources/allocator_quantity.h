#pragma once
// Exact arithmetic on resource.Quantity for the structured allocator: capacities, counters and
// capacity requests compared and summed the way upstream's Quantity.Add/Sub/Cmp do, without
// floating point, plus the BinarySI quantity upstream's request policy builds when it rounds a
// request up to a step.

#include <cstdint>

#include "api/quantity.h"

namespace kubesched::plugins::dynamic_resources::internal {

//! A quantity in units of 10^-9 (upstream parses every quantity rounded up to a multiple of 10^-9,
//! so this is exact). Saturates at +-kNanoLimit, far past anything a device holds.
using Nano = __int128;
inline constexpr Nano kNanoLimit = static_cast<Nano>(1'000'000'000'000'000'000LL) * 1'000'000'000'000'000'000LL;

//! The value of `q` (read from its text, which Quantity::Parse has validated) in nano units.
Nano ToNano(const api::Quantity& q);

//! The integer value rounded up, as resource.Quantity.Value() (saturating at the int64 limits).
int64_t CeilUnits(Nano n);

//! resource.NewQuantity(value, resource.BinarySI): "1Ki" style when a multiple of 1024 past 1023,
//! plain digits otherwise, as upstream prints it.
api::Quantity BinarySIQuantity(int64_t value);

}  // namespace kubesched::plugins::dynamic_resources::internal
