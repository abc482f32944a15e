#include "api/taints.h"

#include <algorithm>

namespace kubesched::api {

bool ToleratesTaint(const Toleration& toleration, const Taint& taint) {
  if (toleration.effect && *toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case TolerationOperator::kEqual:
      return toleration.value == taint.value;
    case TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return ToleratesTaint(t, taint); });
}

bool DoNotScheduleTaintsFilter(const Taint& taint) {
  return taint.effect == TaintEffect::kNoSchedule || taint.effect == TaintEffect::kNoExecute;
}

const Taint* FindMatchingUntoleratedTaint(std::span<const Taint> taints, std::span<const Toleration> tolerations,
                                          TaintFilter filter) {
  for (const auto& taint : taints) {
    if (filter != nullptr && !filter(taint)) continue;
    if (!TolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

}  // namespace kubesched::api
