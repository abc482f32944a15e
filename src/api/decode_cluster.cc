// Namespaces need nothing beyond metadata; PriorityClasses and PodDisruptionBudgets.

#include <string>

#include "api/decode_internal.h"
#include "api/manifest.h"

namespace kubesched::api::decode {
namespace {

std::optional<std::string> ReadIntOrPercent(const MapView& m, std::string_view key) {
  if (!m.Has(key)) return std::nullopt;
  const json::Value* n = m.Get(key);
  const std::string s = ReadString(n, m.PathOf(key), m.ctx());
  std::string_view digits = s;
  const bool percent = !digits.empty() && digits.back() == '%';
  if (percent) digits.remove_suffix(1);
  auto v = ParseInteger(digits);
  if (!v || *v < 0 || (percent && *v > 100)) {
    Fail(n, m.PathOf(key),
         "expected a non-negative integer or a percentage such as \"50%\", got " + Describe(n, m.ctx()));
  }
  return s;
}

}  // namespace

void ReadPriorityClass(const MapView& obj, PriorityClass& pc) {
  if (!obj.Has("value")) Fail(obj.At("value"), obj.PathOf("value"), "required field is missing", kFieldValueRequired);
  pc.value = ReadInt32(obj.Get("value"), obj.PathOf("value"), obj.ctx());
  if (pc.value > kHighestUserDefinablePriority && !pc.metadata.name.starts_with("system-")) {
    Fail(obj.At("value"), obj.PathOf("value"),
         "must be at most " + std::to_string(kHighestUserDefinablePriority) +
             " for a user-defined PriorityClass (higher values are reserved for system-* classes)");
  }
  pc.global_default = obj.Bool("globalDefault");
  if (obj.Has("preemptionPolicy")) {
    pc.preemption_policy = obj.Enum_("preemptionPolicy", kPreemptionPolicies);
  } else {
    pc.preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  }
}

void ReadPodDisruptionBudget(const MapView& obj, PodDisruptionBudget& pdb) {
  const MapView spec = obj.Map("spec");
  pdb.selector = ReadOptLabelSelector(spec, "selector");
  pdb.min_available = ReadIntOrPercent(spec, "minAvailable");
  pdb.max_unavailable = ReadIntOrPercent(spec, "maxUnavailable");
  if (pdb.min_available && pdb.max_unavailable) {
    Fail(spec.At("maxUnavailable"), spec.PathOf("maxUnavailable"), "minAvailable and maxUnavailable cannot both be set",
         kFieldValueForbidden);
  }
}

}  // namespace kubesched::api::decode
