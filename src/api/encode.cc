#include "api/encode.h"

#include "api/time_format.h"

namespace kubesched::api {
namespace {

using json::Allocator;
using json::Value;

Value Str(std::string_view s, Allocator& a) { return json::MakeString(s, a); }

void Put(Value& obj, std::string_view key, Value v, Allocator& a) { obj.AddMember(Str(key, a), std::move(v), a); }
void PutString(Value& obj, std::string_view key, std::string_view s, Allocator& a) {
  if (!s.empty()) Put(obj, key, Str(s, a), a);
}

Value StringMap(const Labels& labels, Allocator& a) {
  Value m(rapidjson::kObjectType);
  for (const auto& [k, v] : labels) Put(m, k, Str(v, a), a);
  return m;
}

Value StringList(const std::vector<std::string>& list, Allocator& a) {
  Value arr(rapidjson::kArrayType);
  for (const std::string& s : list) arr.PushBack(Str(s, a), a);
  return arr;
}

Value Resources(const ResourceList& list, Allocator& a) {
  Value m(rapidjson::kObjectType);
  for (const auto& [name, q] : list) Put(m, name, Str(q.text(), a), a);
  return m;
}

Value Requirements(const std::vector<SelectorRequirement>& reqs, Allocator& a) {
  Value arr(rapidjson::kArrayType);
  for (const SelectorRequirement& r : reqs) {
    Value o(rapidjson::kObjectType);
    Put(o, "key", Str(r.key, a), a);
    Put(o, "operator", Str(ToString(r.op), a), a);
    if (!r.values.empty()) Put(o, "values", StringList(r.values, a), a);
    arr.PushBack(std::move(o), a);
  }
  return arr;
}

Value Selector(const LabelSelector& s, Allocator& a) {
  Value o(rapidjson::kObjectType);
  if (!s.match_labels.empty()) Put(o, "matchLabels", StringMap(s.match_labels, a), a);
  if (!s.match_expressions.empty()) Put(o, "matchExpressions", Requirements(s.match_expressions, a), a);
  return o;
}

Value Term(const NodeSelectorTerm& t, Allocator& a) {
  Value o(rapidjson::kObjectType);
  if (!t.match_expressions.empty()) Put(o, "matchExpressions", Requirements(t.match_expressions, a), a);
  if (!t.match_fields.empty()) Put(o, "matchFields", Requirements(t.match_fields, a), a);
  return o;
}

Value PodAffinityTermValue(const PodAffinityTerm& t, Allocator& a) {
  Value o(rapidjson::kObjectType);
  if (t.label_selector) Put(o, "labelSelector", Selector(*t.label_selector, a), a);
  if (!t.namespaces.empty()) Put(o, "namespaces", StringList(t.namespaces, a), a);
  if (t.namespace_selector) Put(o, "namespaceSelector", Selector(*t.namespace_selector, a), a);
  Put(o, "topologyKey", Str(t.topology_key, a), a);
  if (!t.match_label_keys.empty()) Put(o, "matchLabelKeys", StringList(t.match_label_keys, a), a);
  if (!t.mismatch_label_keys.empty()) Put(o, "mismatchLabelKeys", StringList(t.mismatch_label_keys, a), a);
  return o;
}

Value PodAffinityValue(const PodAffinity& pa, Allocator& a) {
  Value o(rapidjson::kObjectType);
  if (!pa.required.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const PodAffinityTerm& t : pa.required) arr.PushBack(PodAffinityTermValue(t, a), a);
    Put(o, "requiredDuringSchedulingIgnoredDuringExecution", std::move(arr), a);
  }
  if (!pa.preferred.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const WeightedPodAffinityTerm& w : pa.preferred) {
      Value item(rapidjson::kObjectType);
      Put(item, "weight", Value(w.weight), a);
      Put(item, "podAffinityTerm", PodAffinityTermValue(w.term, a), a);
      arr.PushBack(std::move(item), a);
    }
    Put(o, "preferredDuringSchedulingIgnoredDuringExecution", std::move(arr), a);
  }
  return o;
}

std::string_view PolicyName(NodeInclusionPolicy p) { return p == NodeInclusionPolicy::kHonor ? "Honor" : "Ignore"; }
std::string_view PreemptionName(PreemptionPolicy p) {
  return p == PreemptionPolicy::kNever ? "Never" : "PreemptLowerPriority";
}

Value ContainerValue(const Container& c, Allocator& a) {
  Value o(rapidjson::kObjectType);
  Put(o, "name", Str(c.name, a), a);
  PutString(o, "image", c.image, a);
  if (!c.ports.empty()) {
    Value ports(rapidjson::kArrayType);
    for (const ContainerPort& p : c.ports) {
      Value po(rapidjson::kObjectType);
      PutString(po, "name", p.name, a);
      Put(po, "containerPort", Value(p.container_port), a);
      if (p.host_port != 0) Put(po, "hostPort", Value(p.host_port), a);
      Put(po, "protocol", Str(p.protocol, a), a);
      PutString(po, "hostIP", p.host_ip, a);
      ports.PushBack(std::move(po), a);
    }
    Put(o, "ports", std::move(ports), a);
  }
  Value res(rapidjson::kObjectType);
  if (!c.resources.limits.empty()) Put(res, "limits", Resources(c.resources.limits, a), a);
  if (!c.resources.requests.empty()) Put(res, "requests", Resources(c.resources.requests, a), a);
  if (!c.resources.claims.empty()) {
    Value claims(rapidjson::kArrayType);
    for (const ResourceClaimUse& use : c.resources.claims) {
      Value u(rapidjson::kObjectType);
      Put(u, "name", Str(use.name, a), a);
      PutString(u, "request", use.request, a);
      claims.PushBack(std::move(u), a);
    }
    Put(res, "claims", std::move(claims), a);
  }
  Put(o, "resources", std::move(res), a);
  if (c.restart_policy) Put(o, "restartPolicy", Str(*c.restart_policy, a), a);
  return o;
}

// The volumes the scheduler models (claims, ephemeral claims, in-tree disks, inline CSI); other
// sources are not kept by the typed pod.
Value VolumesValue(const std::vector<Volume>& volumes, Allocator& a) {
  Value arr(rapidjson::kArrayType);
  for (const Volume& v : volumes) {
    Value o(rapidjson::kObjectType);
    Put(o, "name", Str(v.name, a), a);
    if (!v.claim_name.empty()) {
      Value pvc(rapidjson::kObjectType);
      Put(pvc, "claimName", Str(v.claim_name, a), a);
      if (v.claim_read_only) Put(pvc, "readOnly", Value(true), a);
      Put(o, "persistentVolumeClaim", std::move(pvc), a);
    } else if (v.ephemeral) {
      Value eph(rapidjson::kObjectType);
      json::Document tmpl;
      if (v.claim_template_json && json::Parse(*v.claim_template_json, tmpl)) {
        Put(eph, "volumeClaimTemplate", Value(tmpl, a), a);
      }
      Put(o, "ephemeral", std::move(eph), a);
    } else if (v.disk) {
      const InlineDisk& d = *v.disk;
      Value src(rapidjson::kObjectType);
      std::string_view key;
      switch (d.type) {
        case InlineDiskType::kGCEPersistentDisk:
          key = "gcePersistentDisk";
          Put(src, "pdName", Str(d.id, a), a);
          break;
        case InlineDiskType::kAWSElasticBlockStore:
          key = "awsElasticBlockStore";
          Put(src, "volumeID", Str(d.id, a), a);
          break;
        case InlineDiskType::kAzureDisk:
          key = "azureDisk";
          Put(src, "diskName", Str(d.id, a), a);
          Put(src, "diskURI", Str(d.id, a), a);
          break;
        case InlineDiskType::kCinder:
          key = "cinder";
          Put(src, "volumeID", Str(d.id, a), a);
          break;
        case InlineDiskType::kISCSI:
          key = "iscsi";
          Put(src, "targetPortal", Str("127.0.0.1:3260", a), a);
          Put(src, "iqn", Str(d.id, a), a);
          Put(src, "lun", Value(0), a);
          break;
        case InlineDiskType::kRBD:
          key = "rbd";
          Put(src, "monitors", StringList(d.monitors, a), a);
          Put(src, "image", Str(d.id, a), a);
          Put(src, "pool", Str(d.pool, a), a);
          break;
      }
      if (d.read_only) Put(src, "readOnly", Value(true), a);
      Put(o, key, std::move(src), a);
    } else if (!v.csi_driver.empty()) {
      Value csi(rapidjson::kObjectType);
      Put(csi, "driver", Str(v.csi_driver, a), a);
      Put(o, "csi", std::move(csi), a);
    } else {
      continue;
    }
    arr.PushBack(std::move(o), a);
  }
  return arr;
}

Value PodSpecValue(const PodSpec& s, Allocator& a) {
  Value o(rapidjson::kObjectType);
  if (!s.init_containers.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const Container& c : s.init_containers) arr.PushBack(ContainerValue(c, a), a);
    Put(o, "initContainers", std::move(arr), a);
  }
  Value containers(rapidjson::kArrayType);
  for (const Container& c : s.containers) containers.PushBack(ContainerValue(c, a), a);
  Put(o, "containers", std::move(containers), a);
  if (s.termination_grace_period_seconds) {
    Put(o, "terminationGracePeriodSeconds", Value(*s.termination_grace_period_seconds), a);
  }
  if (!s.node_selector.empty()) Put(o, "nodeSelector", StringMap(s.node_selector, a), a);
  PutString(o, "nodeName", s.node_name, a);
  if (s.host_network) Put(o, "hostNetwork", Value(true), a);
  if (s.affinity) Put(o, "affinity", AffinityToValue(*s.affinity, a), a);
  Put(o, "schedulerName", Str(s.scheduler_name, a), a);
  if (!s.tolerations.empty()) Put(o, "tolerations", TolerationsToValue(s.tolerations, a), a);
  PutString(o, "priorityClassName", s.priority_class_name, a);
  if (s.priority) Put(o, "priority", Value(*s.priority), a);
  if (s.preemption_policy) Put(o, "preemptionPolicy", Str(PreemptionName(*s.preemption_policy), a), a);
  if (!s.overhead.empty()) Put(o, "overhead", Resources(s.overhead, a), a);
  if (!s.topology_spread_constraints.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const TopologySpreadConstraint& c : s.topology_spread_constraints) {
      Value t(rapidjson::kObjectType);
      Put(t, "maxSkew", Value(c.max_skew), a);
      Put(t, "topologyKey", Str(c.topology_key, a), a);
      Put(t, "whenUnsatisfiable",
          Str(c.when_unsatisfiable == UnsatisfiableConstraintAction::kDoNotSchedule ? "DoNotSchedule"
                                                                                    : "ScheduleAnyway",
              a),
          a);
      if (c.label_selector) Put(t, "labelSelector", Selector(*c.label_selector, a), a);
      if (c.min_domains) Put(t, "minDomains", Value(*c.min_domains), a);
      if (c.node_affinity_policy) Put(t, "nodeAffinityPolicy", Str(PolicyName(*c.node_affinity_policy), a), a);
      if (c.node_taints_policy) Put(t, "nodeTaintsPolicy", Str(PolicyName(*c.node_taints_policy), a), a);
      if (!c.match_label_keys.empty()) Put(t, "matchLabelKeys", StringList(c.match_label_keys, a), a);
      arr.PushBack(std::move(t), a);
    }
    Put(o, "topologySpreadConstraints", std::move(arr), a);
  }
  if (!s.scheduling_gates.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const std::string& g : s.scheduling_gates) {
      Value gate(rapidjson::kObjectType);
      Put(gate, "name", Str(g, a), a);
      arr.PushBack(std::move(gate), a);
    }
    Put(o, "schedulingGates", std::move(arr), a);
  }
  if (!s.pod_group.empty()) {
    Value group(rapidjson::kObjectType);
    Put(group, "podGroupName", Str(s.pod_group, a), a);
    Put(o, "schedulingGroup", std::move(group), a);
  }
  if (!s.volumes.empty()) Put(o, "volumes", VolumesValue(s.volumes, a), a);
  if (!s.resource_claims.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const PodResourceClaim& c : s.resource_claims) {
      Value rc(rapidjson::kObjectType);
      Put(rc, "name", Str(c.name, a), a);
      if (c.resource_claim_name) Put(rc, "resourceClaimName", Str(*c.resource_claim_name, a), a);
      if (c.resource_claim_template_name) {
        Put(rc, "resourceClaimTemplateName", Str(*c.resource_claim_template_name, a), a);
      }
      arr.PushBack(std::move(rc), a);
    }
    Put(o, "resourceClaims", std::move(arr), a);
  }
  if (s.resources) {
    Value res(rapidjson::kObjectType);
    if (!s.resources->limits.empty()) Put(res, "limits", Resources(s.resources->limits, a), a);
    if (!s.resources->requests.empty()) Put(res, "requests", Resources(s.resources->requests, a), a);
    Put(o, "resources", std::move(res), a);
  }
  return o;
}

Value PodStatusValue(const PodStatus& st, Allocator& a) {
  Value o(rapidjson::kObjectType);
  Put(o, "phase", Str(ToString(st.phase), a), a);
  if (!st.conditions.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const PodCondition& c : st.conditions) {
      Value co(rapidjson::kObjectType);
      Put(co, "type", Str(c.type, a), a);
      Put(co, "status", Str(c.status, a), a);
      PutString(co, "reason", c.reason, a);
      PutString(co, "message", c.message, a);
      arr.PushBack(std::move(co), a);
    }
    Put(o, "conditions", std::move(arr), a);
  }
  PutString(o, "nominatedNodeName", st.nominated_node_name, a);
  if (st.start_time_ns) Put(o, "startTime", Str(FormatRFC3339(*st.start_time_ns), a), a);
  if (!st.resource_claim_statuses.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const PodResourceClaimStatus& c : st.resource_claim_statuses) {
      Value rc(rapidjson::kObjectType);
      Put(rc, "name", Str(c.name, a), a);
      if (c.resource_claim_name) Put(rc, "resourceClaimName", Str(*c.resource_claim_name, a), a);
      arr.PushBack(std::move(rc), a);
    }
    Put(o, "resourceClaimStatuses", std::move(arr), a);
  }
  return o;
}

void EncodeValueTo(const Value& v, std::string& out) { json::EncodeTo(v, out); }

}  // namespace

json::Value MetadataToValue(const ObjectMeta& meta, bool namespaced, json::Allocator& a) {
  Value o(rapidjson::kObjectType);
  PutString(o, "name", meta.name, a);
  PutString(o, "generateName", meta.generate_name, a);
  if (namespaced) PutString(o, "namespace", meta.namespace_, a);
  PutString(o, "uid", meta.uid, a);
  PutString(o, "resourceVersion", meta.resource_version, a);
  if (meta.generation != 0) Put(o, "generation", Value(meta.generation), a);
  Put(o, "creationTimestamp", Str(FormatRFC3339(meta.creation_timestamp_ns), a), a);
  if (meta.deletion_timestamp_ns) Put(o, "deletionTimestamp", Str(FormatRFC3339(*meta.deletion_timestamp_ns), a), a);
  if (meta.deletion_grace_period_seconds) {
    Put(o, "deletionGracePeriodSeconds", Value(*meta.deletion_grace_period_seconds), a);
  }
  if (!meta.labels.empty()) Put(o, "labels", StringMap(meta.labels, a), a);
  if (!meta.annotations.empty()) Put(o, "annotations", StringMap(meta.annotations, a), a);
  if (!meta.owner_references.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const OwnerReference& r : meta.owner_references) {
      Value ro(rapidjson::kObjectType);
      Put(ro, "apiVersion", Str(r.api_version, a), a);
      Put(ro, "kind", Str(r.kind, a), a);
      Put(ro, "name", Str(r.name, a), a);
      Put(ro, "uid", Str(r.uid, a), a);
      if (r.controller) {
        Put(ro, "controller", Value(true), a);
        Put(ro, "blockOwnerDeletion", Value(true), a);
      }
      arr.PushBack(std::move(ro), a);
    }
    Put(o, "ownerReferences", std::move(arr), a);
  }
  if (!meta.finalizers.empty()) Put(o, "finalizers", StringList(meta.finalizers, a), a);
  return o;
}

json::Value AffinityToValue(const Affinity& affinity, json::Allocator& a) {
  Value o(rapidjson::kObjectType);
  if (affinity.node_affinity) {
    Value na(rapidjson::kObjectType);
    if (affinity.node_affinity->required) {
      Value req(rapidjson::kObjectType);
      Value terms(rapidjson::kArrayType);
      for (const NodeSelectorTerm& t : affinity.node_affinity->required->terms) terms.PushBack(Term(t, a), a);
      Put(req, "nodeSelectorTerms", std::move(terms), a);
      Put(na, "requiredDuringSchedulingIgnoredDuringExecution", std::move(req), a);
    }
    if (!affinity.node_affinity->preferred.empty()) {
      Value arr(rapidjson::kArrayType);
      for (const PreferredSchedulingTerm& p : affinity.node_affinity->preferred) {
        Value item(rapidjson::kObjectType);
        Put(item, "weight", Value(p.weight), a);
        Put(item, "preference", Term(p.preference, a), a);
        arr.PushBack(std::move(item), a);
      }
      Put(na, "preferredDuringSchedulingIgnoredDuringExecution", std::move(arr), a);
    }
    Put(o, "nodeAffinity", std::move(na), a);
  }
  if (affinity.pod_affinity) Put(o, "podAffinity", PodAffinityValue(*affinity.pod_affinity, a), a);
  if (affinity.pod_anti_affinity) Put(o, "podAntiAffinity", PodAffinityValue(*affinity.pod_anti_affinity, a), a);
  return o;
}

json::Value NodeSelectorToValue(const NodeSelector& selector, json::Allocator& a) {
  Value o(rapidjson::kObjectType);
  Value terms(rapidjson::kArrayType);
  for (const NodeSelectorTerm& t : selector.terms) terms.PushBack(Term(t, a), a);
  Put(o, "nodeSelectorTerms", std::move(terms), a);
  return o;
}

json::Value TolerationsToValue(const std::vector<Toleration>& tolerations, json::Allocator& a) {
  Value arr(rapidjson::kArrayType);
  for (const Toleration& t : tolerations) {
    Value o(rapidjson::kObjectType);
    PutString(o, "key", t.key, a);
    Put(o, "operator", Str(t.op == TolerationOperator::kExists ? "Exists" : "Equal", a), a);
    PutString(o, "value", t.value, a);
    if (t.effect) Put(o, "effect", Str(ToString(*t.effect), a), a);
    if (t.toleration_seconds) Put(o, "tolerationSeconds", Value(*t.toleration_seconds), a);
    arr.PushBack(std::move(o), a);
  }
  return arr;
}

json::Value PodToValue(const Pod& pod, json::Allocator& a) {
  Value o(rapidjson::kObjectType);
  Put(o, "apiVersion", Str("v1", a), a);
  Put(o, "kind", Str("Pod", a), a);
  Put(o, "metadata", MetadataToValue(pod.metadata, true, a), a);
  Put(o, "spec", PodSpecValue(pod.spec, a), a);
  Put(o, "status", PodStatusValue(pod.status, a), a);
  return o;
}

json::Value NodeToValue(const Node& node, json::Allocator& a) {
  Value o(rapidjson::kObjectType);
  Put(o, "apiVersion", Str("v1", a), a);
  Put(o, "kind", Str("Node", a), a);
  Put(o, "metadata", MetadataToValue(node.metadata, false, a), a);
  Value spec(rapidjson::kObjectType);
  if (node.spec.unschedulable) Put(spec, "unschedulable", Value(true), a);
  if (!node.spec.taints.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const Taint& t : node.spec.taints) {
      Value to(rapidjson::kObjectType);
      Put(to, "key", Str(t.key, a), a);
      PutString(to, "value", t.value, a);
      Put(to, "effect", Str(ToString(t.effect), a), a);
      arr.PushBack(std::move(to), a);
    }
    Put(spec, "taints", std::move(arr), a);
  }
  Put(o, "spec", std::move(spec), a);
  Value status(rapidjson::kObjectType);
  Put(status, "capacity", Resources(node.status.capacity, a), a);
  Put(status, "allocatable", Resources(node.status.allocatable, a), a);
  if (!node.status.conditions.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const NodeCondition& c : node.status.conditions) {
      Value co(rapidjson::kObjectType);
      Put(co, "type", Str(c.type, a), a);
      Put(co, "status", Str(c.status, a), a);
      arr.PushBack(std::move(co), a);
    }
    Put(status, "conditions", std::move(arr), a);
  }
  if (!node.status.images.empty()) {
    Value arr(rapidjson::kArrayType);
    for (const ContainerImage& i : node.status.images) {
      Value io(rapidjson::kObjectType);
      Put(io, "names", StringList(i.names, a), a);
      Put(io, "sizeBytes", Value(i.size_bytes), a);
      arr.PushBack(std::move(io), a);
    }
    Put(status, "images", std::move(arr), a);
  }
  if (!node.status.declared_features.empty()) {
    Put(status, "declaredFeatures", StringList(node.status.declared_features, a), a);
  }
  Put(o, "status", std::move(status), a);
  return o;
}

void EncodePodTo(const Pod& pod, std::string& out) {
  json::Document doc;
  EncodeValueTo(PodToValue(pod, doc.GetAllocator()), out);
}

void EncodePodSpecTo(const PodSpec& spec, std::string& out) {
  json::Document doc;
  EncodeValueTo(PodSpecValue(spec, doc.GetAllocator()), out);
}

void EncodeNodeTo(const Node& node, std::string& out) {
  json::Document doc;
  EncodeValueTo(NodeToValue(node, doc.GetAllocator()), out);
}

std::string EncodePod(const Pod& pod) {
  std::string out;
  EncodePodTo(pod, out);
  return out;
}

std::string EncodeNode(const Node& node) {
  std::string out;
  EncodeNodeTo(node, out);
  return out;
}

std::string PodJson(const Pod& pod) { return pod.json ? *pod.json : EncodePod(pod); }
std::string NodeJson(const Node& node) { return node.json ? *node.json : EncodeNode(node); }

}  // namespace kubesched::api
