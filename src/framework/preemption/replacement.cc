#include "framework/preemption/replacement.h"

#include <fmt/format.h>

#include "util/clock.h"

namespace kubesched::framework::preemption {

const api::OwnerReference* ControllerOf(const api::Pod& pod) {
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

bool Recreates(const api::OwnerReference& ref) {
  return ref.kind == "ReplicaSet" || ref.kind == "StatefulSet" || ref.kind == "Job" ||
         ref.kind == "ReplicationController";
}

std::string TemplateKey(const PodInfo& pi) {
  const api::Pod& pod = pi.pod();
  const api::OwnerReference* ref = ControllerOf(pod);
  if (!ref) return {};
  std::string key = fmt::format("{}/{}/{}/{}", pod.metadata.namespace_, ref->kind, ref->name, ref->uid);
  if (ref->kind == "StatefulSet") key += "/" + pod.metadata.name;
  for (const auto& [k, v] : pod.metadata.labels) {
    if (k == "pod-template-hash" || k == "controller-revision-hash") continue;
    key += fmt::format("|{}={}", k, v);
  }
  key += fmt::format("|{}|{}|{}", pi.requests.milli_cpu, pi.requests.memory, pod.Priority());
  return key;
}

int64_t FloorToSecond(int64_t ns) { return ns / util::kNanosPerSecond * util::kNanosPerSecond; }

PodInfoPtr ReplacementPlaceholder(const PodInfo& victim) {
  auto holder = std::make_shared<api::Pod>(victim.pod());
  holder->metadata.uid = victim.pod().metadata.uid + "-move";
  holder->spec.node_name.clear();
  holder->status = api::PodStatus{};
  return victim.WithPod(std::move(holder));
}

void HoldForReplacement(PodNominator& nominator, PodInfoPtr placeholder, const std::string& destination,
                        const std::string& victim_uid, int64_t since_ns) {
  std::string key = TemplateKey(*placeholder);
  nominator.ExpectReplacement(
      std::move(placeholder), destination,
      [key = std::move(key), since = FloorToSecond(since_ns), uid = victim_uid](const PodInfo& pi) {
        const api::Pod& candidate = pi.pod();
        return candidate.metadata.uid != uid && candidate.metadata.creation_timestamp_ns >= since &&
               TemplateKey(pi) == key;
      });
}

}  // namespace kubesched::framework::preemption
