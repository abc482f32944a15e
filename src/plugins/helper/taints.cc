#include "plugins/helper/taints.h"

#include <algorithm>

namespace kubesched::plugins::helper {

bool ToleratesTaint(const api::Toleration& toleration, const api::Taint& taint) {
  if (toleration.effect && *toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case api::TolerationOperator::kEqual:
      return toleration.value == taint.value;
    case api::TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool TolerationsTolerateTaint(std::span<const api::Toleration> tolerations, const api::Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const api::Toleration& t) { return ToleratesTaint(t, taint); });
}

bool DoNotScheduleTaintsFilter(const api::Taint& taint) {
  return taint.effect == api::TaintEffect::kNoSchedule || taint.effect == api::TaintEffect::kNoExecute;
}

const api::Taint* FindMatchingUntoleratedTaint(std::span<const api::Taint> taints,
                                               std::span<const api::Toleration> tolerations, TaintFilter filter) {
  for (const auto& taint : taints) {
    if (filter != nullptr && !filter(taint)) continue;
    if (!TolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

}  // namespace kubesched::plugins::helper
