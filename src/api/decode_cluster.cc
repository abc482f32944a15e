// Namespaces need nothing beyond metadata; PriorityClasses, PodDisruptionBudgets and PodGroups.

#include <algorithm>
#include <string>

#include "api/decode_internal.h"
#include "api/manifest.h"
#include "api/names.h"

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

// scheduling.k8s.io/v1alpha2 PodGroup, checked as upstream's ValidatePodGroup checks it: exactly
// one scheduling policy, a positive gang minCount, a template reference with both names, at most
// one topology constraint naming a label key, a known disruption mode, a priority class name that
// is a DNS subdomain and a priority no higher than user priorities go (KEP-5710).
void ReadPodGroup(const MapView& obj, PodGroup& pg) {
  const std::optional<MapView> spec = obj.OptMap("spec");
  if (!spec) Fail(obj.At("spec"), obj.PathOf("spec"), "required field is missing", kFieldValueRequired);
  const MapView policy = spec->Map("schedulingPolicy");
  const bool basic = policy.Has("basic"), gang = policy.Has("gang");
  if (basic == gang) {
    Fail(spec->At("schedulingPolicy"), spec->PathOf("schedulingPolicy"),
         basic ? "exactly one of `basic`, `gang` is required, but multiple fields are set"
               : "must specify one of: `basic`, `gang`");
  }
  (void)policy.Map("basic");  // an object (empty by definition), checked as one
  if (gang) {
    const MapView g = policy.Map("gang");
    const std::optional<int32_t> min_count = g.OptInt32("minCount");
    if (!min_count || *min_count == 0) {
      Fail(g.At("minCount"), g.PathOf("minCount"), "required field is missing", kFieldValueRequired);
    }
    if (*min_count < 0) {
      Fail(g.At("minCount"), g.PathOf("minCount"), "must be greater than zero, got " + std::to_string(*min_count));
    }
    pg.policy = PodGroupPolicy::kGang;
    pg.min_count = *min_count;
  }
  if (const std::optional<MapView> ref = spec->OptMap("podGroupTemplateRef")) {
    const MapView workload = ref->Map("workload");
    for (const auto& [key, out] : {std::pair<std::string_view, std::string*>{"workloadName", &pg.workload_name},
                                   {"podGroupTemplateName", &pg.template_name}}) {
      *out = workload.RequiredString(key);
      if (const std::vector<std::string> errs = IsDNS1123Label(*out); !errs.empty()) {
        Fail(workload.At(key), workload.PathOf(key), Join(errs));
      }
    }
  }
  if (const std::optional<MapView> constraints = spec->OptMap("schedulingConstraints")) {
    constraints->ForEachMap("topology", [&](const MapView& t, size_t i) {
      if (i > 0) Fail(t.node(), t.path(), "must have at most 1 item", kFieldValueTooMany);
      pg.topology_key = t.RequiredString("key");
      if (const std::vector<std::string> errs = IsQualifiedName(pg.topology_key); !errs.empty()) {
        Fail(t.At("key"), t.PathOf("key"), Join(errs));
      }
    });
  }
  static constexpr std::pair<std::string_view, DisruptionMode> kDisruptionModes[] = {
      {"Pod", DisruptionMode::kPod}, {"PodGroup", DisruptionMode::kPodGroup}};
  pg.disruption_mode = spec->OptEnum("disruptionMode", kDisruptionModes).value_or(DisruptionMode::kPod);
  pg.priority_class_name = spec->String("priorityClassName");
  if (!pg.priority_class_name.empty()) {
    if (const std::vector<std::string> errs = IsDNS1123Subdomain(pg.priority_class_name); !errs.empty()) {
      Fail(spec->At("priorityClassName"), spec->PathOf("priorityClassName"), Join(errs));
    }
  }
  pg.priority = spec->OptInt32("priority", std::numeric_limits<int32_t>::min(), kHighestUserDefinablePriority);
}

// scheduling.x-k8s.io/v1alpha1 PodGroup (scheduler-plugins), checked as its CRD's schema checks
// it: minMember and scheduleTimeoutSeconds 32-bit integers (no bounds: the CRD sets none),
// minResources quantities. Its members are placed as a gang of minMember; a minMember below 1
// asks for nothing (upstream's plugin lets every member pass), as 0 does.
void ReadCoschedulingPodGroup(const MapView& obj, PodGroup& pg) {
  pg.api = PodGroupApi::kCoscheduling;
  pg.policy = PodGroupPolicy::kGang;
  const MapView spec = obj.Map("spec");
  pg.min_count = std::max(0, spec.OptInt32("minMember").value_or(0));
  pg.schedule_timeout_seconds = spec.OptInt32("scheduleTimeoutSeconds");
  pg.min_resources = ReadResourceList(spec, "minResources");
}

}  // namespace kubesched::api::decode
