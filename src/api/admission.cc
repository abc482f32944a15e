// The loader's admission stage: the Priority admission plugin. A pod's priorityClassName gives
// its spec.priority and preemptionPolicy (the built-in system classes included); without one the
// globalDefault class does, else priority 0. Workloads' pod templates are admitted the same way,
// so the pods they expand into carry their priority. A scheduling.k8s.io PodGroup's
// priorityClassName gives its spec.priority the same way (KEP-5710: the group's priority).

#include <unordered_map>

#include "api/loader_internal.h"
#include "util/go_quote.h"

namespace kubesched::api::loader {
namespace {

using util::GoQuote;

constexpr int32_t kNoPriority = 0;

struct Priorities {
  std::unordered_map<std::string, const PriorityClass*> by_name;
  const PriorityClass* global_default = nullptr;
};

// What admission reads and writes: a pod spec's fields, or a PodGroup spec's (which has no
// preemption policy).
struct PriorityFields {
  const std::string& class_name;
  std::optional<int32_t>& priority;
  std::optional<PreemptionPolicy>* policy = nullptr;
};

std::optional<LoadError> ResolvePriority(const State& state, const Priorities& classes, size_t entry,
                                         PriorityFields spec, const std::string& spec_path) {
  // The Priority admission plugin: a named class gives its value (and preemption policy);
  // without a name the globalDefault class does, else 0.
  struct Class {
    int32_t value;
    std::optional<PreemptionPolicy> policy;
  };
  std::optional<Class> resolved;
  if (!spec.class_name.empty()) {
    const std::string& name = spec.class_name;
    if (auto it = classes.by_name.find(name); it != classes.by_name.end()) {
      resolved = Class{it->second->value, it->second->preemption_policy};
    } else if (name == kSystemClusterCritical) {
      resolved = Class{kSystemClusterCriticalPriority, PreemptionPolicy::kPreemptLowerPriority};
    } else if (name == kSystemNodeCritical) {
      resolved = Class{kSystemNodeCriticalPriority, PreemptionPolicy::kPreemptLowerPriority};
    } else {
      std::string known;
      for (const Entry& e : state.entries) {
        if (auto* pc = std::get_if<std::shared_ptr<PriorityClass>>(&e.object))
          known += ", " + GoQuote((*pc)->metadata.name);
      }
      return state.ErrorAt(entry, spec_path + ".priorityClassName",
                           "no PriorityClass named " + GoQuote(name) + "; defined: " + GoQuote(kSystemClusterCritical) +
                               ", " + GoQuote(kSystemNodeCritical) + known);
    }
  } else if (!spec.priority) {
    resolved = classes.global_default != nullptr
                   ? Class{classes.global_default->value, classes.global_default->preemption_policy}
                   : Class{kNoPriority, std::nullopt};
  }
  if (resolved) {
    // A pod may restate the priority its class gives, but not contradict it (as upstream).
    if (spec.priority && *spec.priority != resolved->value) {
      return state.ErrorAt(entry, spec_path + ".priority",
                           "priority " + std::to_string(*spec.priority) + " contradicts priorityClassName " +
                               GoQuote(spec.class_name) + " (value " + std::to_string(resolved->value) +
                               "); drop spec.priority");
    }
    spec.priority = resolved->value;
    if (spec.policy != nullptr && !*spec.policy) *spec.policy = resolved->policy;
  }
  // An explicit spec.priority without a class is kept as written: convenient for simulations.
  if (spec.policy != nullptr && !*spec.policy) *spec.policy = PreemptionPolicy::kPreemptLowerPriority;
  return std::nullopt;
}

std::optional<LoadError> ResolvePriority(const State& state, const Priorities& classes, size_t entry, PodSpec& spec,
                                         const std::string& spec_path) {
  return ResolvePriority(state, classes, entry, {spec.priority_class_name, spec.priority, &spec.preemption_policy},
                         spec_path);
}

}  // namespace

std::optional<LoadError> AdmitPriorities(State& state) {
  Priorities classes;
  for (size_t i = 0; i < state.entries.size(); ++i) {
    auto* pc = std::get_if<std::shared_ptr<PriorityClass>>(&state.entries[i].object);
    if (pc == nullptr) continue;
    classes.by_name.emplace((*pc)->metadata.name, pc->get());
    if ((*pc)->global_default) {
      if (classes.global_default != nullptr) {
        return state.ErrorAt(i, "globalDefault", "only one PriorityClass may be marked globalDefault");
      }
      classes.global_default = pc->get();
    }
  }
  for (size_t i = 0; i < state.entries.size(); ++i) {
    std::optional<LoadError> err;
    if (auto* pod = std::get_if<std::shared_ptr<Pod>>(&state.entries[i].object)) {
      err = ResolvePriority(state, classes, i, (*pod)->spec, "spec");
    } else if (auto* w = std::get_if<std::shared_ptr<Workload>>(&state.entries[i].object)) {
      // A CronJob's pods only exist once a schedule fires, which a snapshot never sees.
      if ((*w)->kind != "CronJob") err = ResolvePriority(state, classes, i, (*w)->template_.spec, "spec.template.spec");
    } else if (auto* pg = std::get_if<std::shared_ptr<PodGroup>>(&state.entries[i].object);
               pg != nullptr && (*pg)->api == PodGroupApi::kScheduling) {
      err = ResolvePriority(state, classes, i, {(*pg)->priority_class_name, (*pg)->priority}, "spec");
    }
    if (err) return err;
  }
  return std::nullopt;
}

void AdmitStorageClasses(State& state) {
  // DefaultStorageClass: the newest class marked default (the last in the input, which creates
  // them in order), when there is one.
  const StorageClass* default_class = nullptr;
  for (const Entry& e : state.entries) {
    if (auto* sc = std::get_if<std::shared_ptr<StorageClass>>(&e.object); sc != nullptr && (*sc)->IsDefault()) {
      default_class = sc->get();
    }
  }
  if (default_class == nullptr) return;
  for (Entry& e : state.entries) {
    auto* claim = std::get_if<std::shared_ptr<PersistentVolumeClaim>>(&e.object);
    if (claim != nullptr && !(*claim)->storage_class_name) (*claim)->storage_class_name = default_class->metadata.name;
  }
}

}  // namespace kubesched::api::loader
