#include "api/types.h"

namespace kubesched::api {

std::string_view ToString(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "Unknown";
}

std::optional<TaintEffect> ParseTaintEffect(std::string_view text) {
  for (TaintEffect effect : {TaintEffect::kNoSchedule, TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute}) {
    if (ToString(effect) == text) return effect;
  }
  return std::nullopt;
}

std::string_view ToString(PodPhase phase) {
  switch (phase) {
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
    case PodPhase::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

std::string_view PodGroupOf(const Pod& pod, PodGroupApi api) {
  if (api == PodGroupApi::kScheduling) return pod.spec.pod_group;
  const std::string* name = pod.metadata.labels.Find(kLabelCoschedulingPodGroup);
  return name == nullptr ? std::string_view() : std::string_view(*name);
}

std::string ClaimNameOf(const Pod& pod, const Volume& volume) {
  if (volume.ephemeral) return pod.metadata.name + "-" + volume.name;
  return volume.claim_name;
}

}  // namespace kubesched::api
