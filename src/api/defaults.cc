// The loader's last stage: the API server's defaulting (and what admission and the naming stage
// decided) written into each object's DOM, for the fields kubesched models, so the JSON each
// object keeps shows what the API server would have stored: metadata (name, namespace, uid,
// creationTimestamp, added labels), spec.schedulerName, terminationGracePeriodSeconds, requests
// from limits, host ports of host-network pods, priority and preemptionPolicy, status.phase;
// a node's pods capacity and allocatable; a workload's replicas and its template's pod defaults.
// The typed objects already carry the same values (the decoders default them), so this changes
// only the JSON.

#include "api/encode.h"
#include "api/loader_internal.h"
#include "api/time_format.h"

namespace kubesched::api::loader {
namespace {

using json::Allocator;
using json::Value;

bool Has(const Value& obj, std::string_view key) {
  const Value* v = json::Find(obj, key);
  return v != nullptr && !v->IsNull();
}

void SetString(Value& obj, std::string_view key, std::string_view s, Allocator& a) {
  json::Set(obj, key, json::MakeString(s, a), a);
}

void SetLabel(Value& meta, std::string_view key, std::string_view value, Allocator& a) {
  Value& labels = json::Child(meta, "labels", a);
  SetString(labels, key, value, a);
}

std::string_view PreemptionName(PreemptionPolicy p) {
  return p == PreemptionPolicy::kNever ? "Never" : "PreemptLowerPriority";
}

void DefaultMetadata(Value& object, const ObjectMeta& meta, bool namespaced, Allocator& a) {
  Value& m = json::Child(object, "metadata", a);
  SetString(m, "name", meta.name, a);
  if (namespaced) {
    SetString(m, "namespace", meta.namespace_, a);
  } else {
    json::Remove(m, "namespace");
  }
  SetString(m, "uid", meta.uid, a);
  if (!Has(m, "creationTimestamp")) SetString(m, "creationTimestamp", FormatRFC3339(meta.creation_timestamp_ns), a);
}

// Requests from limits, per resource, for each container (the API server's defaulting).
void DefaultContainers(Value& spec, std::string_view key, const std::vector<Container>& typed, bool host_network,
                       Allocator& a) {
  Value* list = json::Find(spec, key);
  if (list == nullptr || !list->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < list->Size() && i < typed.size(); ++i) {
    Value& c = (*list)[i];
    if (!c.IsObject()) continue;
    if (Value* resources = json::Find(c, "resources"); resources != nullptr && resources->IsObject()) {
      if (Value* limits = json::Find(*resources, "limits"); limits != nullptr && limits->IsObject()) {
        Value& requests = json::Child(*resources, "requests", a);
        for (auto it = limits->MemberBegin(); it != limits->MemberEnd(); ++it) {
          if (!Has(requests, json::View(it->name))) {
            json::Set(requests, json::View(it->name), Value(it->value, a), a);
          }
        }
      }
    }
    if (!host_network) continue;
    if (Value* ports = json::Find(c, "ports"); ports != nullptr && ports->IsArray()) {
      for (rapidjson::SizeType p = 0; p < ports->Size() && p < typed[i].ports.size(); ++p) {
        if ((*ports)[p].IsObject() && !Has((*ports)[p], "hostPort")) {
          json::Set((*ports)[p], "hostPort", Value(typed[i].ports[p].host_port), a);
        }
      }
    }
  }
}

void DefaultPodSpec(Value& spec, const PodSpec& typed, Allocator& a) {
  if (!spec.IsObject()) return;
  if (!Has(spec, "schedulerName")) SetString(spec, "schedulerName", typed.scheduler_name, a);
  if (!Has(spec, "terminationGracePeriodSeconds")) {
    json::Set(spec, "terminationGracePeriodSeconds", Value(typed.TerminationGracePeriodSeconds()), a);
  }
  DefaultContainers(spec, "initContainers", typed.init_containers, typed.host_network, a);
  DefaultContainers(spec, "containers", typed.containers, typed.host_network, a);
  // Admission's decisions.
  if (typed.priority) json::Set(spec, "priority", Value(*typed.priority), a);
  if (typed.preemption_policy) SetString(spec, "preemptionPolicy", PreemptionName(*typed.preemption_policy), a);
  // The API server rewrites selectors for matchLabelKeys (ApplyMatchLabelKeys did it typed).
  if (typed.affinity) {
    bool label_keys = false;
    for (const auto* pa : {&typed.affinity->pod_affinity, &typed.affinity->pod_anti_affinity}) {
      if (!*pa) continue;
      for (const auto& t : (*pa)->required) label_keys |= !t.match_label_keys.empty() || !t.mismatch_label_keys.empty();
      for (const auto& w : (*pa)->preferred) {
        label_keys |= !w.term.match_label_keys.empty() || !w.term.mismatch_label_keys.empty();
      }
    }
    if (label_keys) json::Set(spec, "affinity", AffinityToValue(*typed.affinity, a), a);
  }
}

void DefaultPod(Value& object, const Pod& pod, Allocator& a) {
  Value& spec = json::Child(object, "spec", a);
  DefaultPodSpec(spec, pod.spec, a);
  Value& status = json::Child(object, "status", a);
  if (!Has(status, "phase")) SetString(status, "phase", ToString(pod.status.phase), a);
}

void DefaultNode(Value& object, const Node& node, Allocator& a) {
  SetLabel(json::Child(object, "metadata", a), kLabelHostname, *node.metadata.labels.Find(kLabelHostname), a);
  Value& status = json::Child(object, "status", a);
  Value& capacity = json::Child(status, "capacity", a);
  const std::string pods = node.status.capacity.at(std::string(kResourcePods)).text();
  if (!Has(capacity, kResourcePods)) SetString(capacity, kResourcePods, pods, a);
  if (!Has(status, "allocatable")) {
    json::Set(status, "allocatable", Value(capacity, a), a);
  } else {
    Value& allocatable = json::Child(status, "allocatable", a);
    if (!Has(allocatable, kResourcePods)) SetString(allocatable, kResourcePods, pods, a);
  }
}

void DefaultWorkload(Value& object, const Workload& w, Allocator& a) {
  if (w.kind == "CronJob") return;  // its template is only used when a schedule fires
  Value& spec = json::Child(object, "spec", a);
  if (w.kind == "Job") {
    // batch/v1: neither set → 1 and 1; parallelism alone is a work queue (completions stay unset).
    const bool had_parallelism = Has(spec, "parallelism");
    if (!had_parallelism) json::Set(spec, "parallelism", Value(1), a);
    if (!had_parallelism && !Has(spec, "completions")) json::Set(spec, "completions", Value(1), a);
  } else if (w.kind != "DaemonSet" && !Has(spec, "replicas")) {
    json::Set(spec, "replicas", Value(w.replicas), a);
  }
  Value& tmpl = json::Child(spec, "template", a);
  Value& tmpl_meta = json::Child(tmpl, "metadata", a);
  if (w.kind == "Job" || w.kind == "ReplicationController") {
    // The labels the Job strategy adds; a ReplicationController's selector from its template.
    for (const auto& [k, v] : w.template_.metadata.labels) SetLabel(tmpl_meta, k, v, a);
    if (w.selector && (w.kind == "ReplicationController" ? !Has(spec, "selector") : true)) {
      if (w.kind == "ReplicationController") {
        Value sel(rapidjson::kObjectType);
        for (const auto& [k, v] : w.selector->match_labels) SetString(sel, k, v, a);
        json::Set(spec, "selector", std::move(sel), a);
      } else if (!Has(spec, "selector")) {
        Value sel(rapidjson::kObjectType);
        Value& ml = json::Child(sel, "matchLabels", a);
        for (const auto& [k, v] : w.selector->match_labels) SetString(ml, k, v, a);
        json::Set(spec, "selector", std::move(sel), a);
      }
    }
  }
  DefaultPodSpec(json::Child(tmpl, "spec", a), w.template_.spec, a);
}

ObjectJson Keep(const Value& v) { return std::make_shared<const std::string>(json::Encode(v)); }

// A pod a controller created from its workload's template: the template (already defaulted), with
// the metadata the controller sets and, for DaemonSet pods, the node affinity and tolerations
// the DaemonSet controller adds.
ObjectJson ExpandedPodJson(const Pod& pod, const Entry& workload) {
  json::Document doc;
  Allocator& a = doc.GetAllocator();
  doc.SetObject();
  doc.AddMember("apiVersion", "v1", a);
  doc.AddMember("kind", "Pod", a);
  doc.AddMember("metadata", MetadataToValue(pod.metadata, true, a), a);
  const Value* tmpl_spec = nullptr;
  if (const Value* spec = json::Find(*workload.dom, "spec")) {
    if (const Value* tmpl = json::Find(*spec, "template")) tmpl_spec = json::Find(*tmpl, "spec");
  }
  Value spec = tmpl_spec != nullptr ? Value(*tmpl_spec, a) : Value(rapidjson::kObjectType);
  if (pod.spec.affinity) json::Set(spec, "affinity", AffinityToValue(*pod.spec.affinity, a), a);
  if (!pod.spec.tolerations.empty()) json::Set(spec, "tolerations", TolerationsToValue(pod.spec.tolerations, a), a);
  // A StatefulSet's claims (volumeClaimTemplates), in place of template volumes of their names.
  for (const Volume& v : pod.spec.volumes) {
    if (v.claim_name.empty()) continue;
    Value* volumes = json::Find(spec, "volumes");
    if (volumes == nullptr || !volumes->IsArray())
      volumes = &json::Set(spec, "volumes", Value(rapidjson::kArrayType), a);
    Value volume(rapidjson::kObjectType);
    volume.AddMember("name", json::MakeString(v.name, a), a);
    Value claim(rapidjson::kObjectType);
    claim.AddMember("claimName", json::MakeString(v.claim_name, a), a);
    if (v.claim_read_only) claim.AddMember("readOnly", true, a);
    volume.AddMember("persistentVolumeClaim", std::move(claim), a);
    bool replaced = false;
    for (Value& existing : volumes->GetArray()) {
      if (json::GetString(existing, "name") == v.name) {
        existing = std::move(volume);
        replaced = true;
        break;
      }
    }
    if (!replaced) volumes->PushBack(std::move(volume), a);
  }
  doc.AddMember("spec", std::move(spec), a);
  Value status(rapidjson::kObjectType);
  status.AddMember("phase", json::MakeString(ToString(pod.status.phase), a), a);
  doc.AddMember("status", std::move(status), a);
  return Keep(doc);
}

}  // namespace

void DefaultAndEncode(State& state, ClusterObjects& out) {
  for (Entry& e : state.entries) {
    Value& v = *e.dom;
    Allocator& a = e.origin.source->dom.GetAllocator();
    DefaultMetadata(v, *e.meta, e.kind->namespaced, a);
    std::visit(
        [&](auto& obj) {
          using T = std::decay_t<decltype(*obj)>;
          if constexpr (std::is_same_v<T, Pod>) {
            DefaultPod(v, *obj, a);
          } else if constexpr (std::is_same_v<T, Node>) {
            DefaultNode(v, *obj, a);
          } else if constexpr (std::is_same_v<T, Namespace>) {
            SetLabel(json::Child(v, "metadata", a), kLabelMetadataName, obj->metadata.name, a);
          } else if constexpr (std::is_same_v<T, PriorityClass>) {
            if (!Has(v, "preemptionPolicy") && obj->preemption_policy) {
              SetString(v, "preemptionPolicy", PreemptionName(*obj->preemption_policy), a);
            }
          } else if constexpr (std::is_same_v<T, Workload>) {
            DefaultWorkload(v, *obj, a);
          }
          obj->json = Keep(v);
        },
        e.object);
  }
  for (const auto& [pod, entry] : state.expanded) pod->json = ExpandedPodJson(*pod, state.entries[entry]);
  // Namespaces objects use without declaring them, as the cluster that accepted the objects has them.
  for (const auto& ns : out.namespaces) {
    if (ns->json) continue;
    json::Document doc;
    Allocator& a = doc.GetAllocator();
    doc.SetObject();
    doc.AddMember("apiVersion", "v1", a);
    doc.AddMember("kind", "Namespace", a);
    doc.AddMember("metadata", MetadataToValue(ns->metadata, false, a), a);
    Value spec(rapidjson::kObjectType);
    Value finalizers(rapidjson::kArrayType);
    finalizers.PushBack("kubernetes", a);
    spec.AddMember("finalizers", std::move(finalizers), a);
    doc.AddMember("spec", std::move(spec), a);
    Value status(rapidjson::kObjectType);
    status.AddMember("phase", "Active", a);
    doc.AddMember("status", std::move(status), a);
    ns->json = Keep(doc);
  }
}

}  // namespace kubesched::api::loader
