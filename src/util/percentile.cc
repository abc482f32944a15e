#include "util/percentile.h"

#include <algorithm>
#include <cmath>

namespace kubesched::util {

double PercentileOfSorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace kubesched::util
