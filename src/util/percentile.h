#pragma once
// Percentiles of measured samples (latencies, decision times), nearest-rank as the benchmarks and
// `simulate` report them.

#include <span>

namespace kubesched::util {

//! The nearest-rank q-quantile (q in [0, 1]) of samples sorted ascending; 0 when empty.
double PercentileOfSorted(std::span<const double> sorted, double q);

}  // namespace kubesched::util
