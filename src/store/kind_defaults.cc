#include "store/kind_defaults.h"

#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "api/manifest.h"
#include "api/workloads.h"
#include "store/errors.h"
#include "store/selectors.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

void SetIfAbsent(json::Value& object, std::string_view key, json::Value value, json::Allocator& a) {
  if (json::Find(object, key) == nullptr) json::Set(object, key, std::move(value), a);
}

json::Value Str(std::string_view s, json::Allocator& a) { return json::MakeString(s, a); }

// SetDefaults_HTTPGetAction: path "/", scheme HTTP.
void DefaultHttpGet(json::Value& handler, json::Allocator& a) {
  json::Value* get = json::Find(handler, "httpGet");
  if (get == nullptr || !get->IsObject()) return;
  SetIfAbsent(*get, "path", Str("/", a), a);
  SetIfAbsent(*get, "scheme", Str("HTTP", a), a);
}

// SetDefaults_Probe: timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold 3.
void DefaultProbe(json::Value& probe, json::Allocator& a) {
  if (!probe.IsObject()) return;
  SetIfAbsent(probe, "timeoutSeconds", json::Value(1), a);
  SetIfAbsent(probe, "periodSeconds", json::Value(10), a);
  SetIfAbsent(probe, "successThreshold", json::Value(1), a);
  SetIfAbsent(probe, "failureThreshold", json::Value(3), a);
  DefaultHttpGet(probe, a);
}

void DefaultContainer(json::Value& c, json::Allocator& a) {
  if (!c.IsObject()) return;
  for (std::string_view key : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    if (json::Value* probe = json::Find(c, key)) DefaultProbe(*probe, a);
  }
  if (json::Value* lifecycle = json::Find(c, "lifecycle"); lifecycle != nullptr && lifecycle->IsObject()) {
    for (std::string_view key : {"postStart", "preStop"}) {
      if (json::Value* handler = json::Find(*lifecycle, key); handler != nullptr && handler->IsObject()) {
        DefaultHttpGet(*handler, a);
      }
    }
  }
  SetIfAbsent(c, "terminationMessagePath", Str("/dev/termination-log", a), a);
  SetIfAbsent(c, "terminationMessagePolicy", Str("File", a), a);
  if (json::Find(c, "imagePullPolicy") == nullptr) {
    // An image without a tag, or tagged :latest, is pulled always (defaults.go).
    std::string_view image = json::GetString(c, "image");
    if (size_t at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
    const size_t slash = image.rfind('/');
    const size_t colon = image.rfind(':');
    const bool tagged = colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
    const bool latest = !tagged || image.substr(colon + 1) == "latest";
    json::Set(
        c, "imagePullPolicy",
        Str(latest && json::GetString(c, "image").find('@') == std::string_view::npos ? "Always" : "IfNotPresent", a),
        a);
  }
  if (json::Value* ports = json::Find(c, "ports"); ports && ports->IsArray()) {
    for (auto& p : ports->GetArray()) {
      if (p.IsObject()) SetIfAbsent(p, "protocol", Str("TCP", a), a);
    }
  }
  // Requests default to limits, resource by resource.
  if (json::Value* res = json::Find(c, "resources"); res && res->IsObject()) {
    if (const json::Value* limits = json::Find(*res, "limits"); limits && limits->IsObject()) {
      json::Value copy(*limits, a);
      json::Value& requests = json::Child(*res, "requests", a);
      for (auto& m : copy.GetObject()) {
        if (!json::Find(requests, json::View(m.name)))
          json::Set(requests, json::View(m.name), json::Value(m.value, a), a);
      }
    }
  }
}

void AddTolerationIfAbsent(json::Value& spec, std::string_view key, json::Allocator& a) {
  json::Value* tolerations = json::Find(spec, "tolerations");
  if (tolerations == nullptr || !tolerations->IsArray()) {
    tolerations = &json::Set(spec, "tolerations", json::Value(rapidjson::kArrayType), a);
  }
  for (const auto& t : tolerations->GetArray()) {
    // admission/defaulttolerationseconds: any toleration of the key for NoExecute (or for every
    // effect) counts.
    const std::string_view effect = json::GetString(t, "effect");
    if ((json::GetString(t, "key") == key ||
         (json::GetString(t, "key").empty() && json::GetString(t, "operator") == "Exists")) &&
        (effect.empty() || effect == "NoExecute")) {
      return;
    }
  }
  json::Value t(rapidjson::kObjectType);
  json::Set(t, "key", Str(key, a), a);
  json::Set(t, "operator", Str("Exists", a), a);
  json::Set(t, "effect", Str("NoExecute", a), a);
  json::Set(t, "tolerationSeconds", json::Value(int64_t{300}), a);
  tolerations->PushBack(t, a);
}

std::string Scalar(const json::Value* v) {
  if (v == nullptr || v->IsNull()) return "";
  if (v->IsString()) return std::string(json::View(*v));
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  return json::Encode(*v);
}

const json::Value* Path(const json::Value& root, std::initializer_list<std::string_view> keys) {
  const json::Value* v = &root;
  for (auto k : keys) {
    v = json::Find(*v, k);
    if (v == nullptr) return nullptr;
  }
  return v;
}

void DefaultTemplate(json::Document& doc, bool replicas = true) {
  auto& a = doc.GetAllocator();
  json::Value& spec = json::Child(doc, "spec", a);
  if (replicas) SetIfAbsent(spec, "replicas", json::Value(1), a);
  json::Value& tmpl = json::Child(spec, "template", a);
  DefaultPodSpec(json::Child(tmpl, "spec", a), a);
}

// A copy of the template's labels (or an empty object when it has none).
json::Value TemplateLabels(json::Document& doc) {
  auto& a = doc.GetAllocator();
  const json::Value* labels = Path(doc, {"spec", "template", "metadata", "labels"});
  json::Value out(rapidjson::kObjectType);
  if (labels && labels->IsObject()) out.CopyFrom(*labels, a);
  return out;
}

}  // namespace

void DefaultPodSpec(json::Value& spec, json::Allocator& a) {
  SetIfAbsent(spec, "schedulerName", Str("default-scheduler", a), a);
  SetIfAbsent(spec, "restartPolicy", Str("Always", a), a);
  SetIfAbsent(spec, "dnsPolicy", Str("ClusterFirst", a), a);
  SetIfAbsent(spec, "terminationGracePeriodSeconds", json::Value(int64_t{30}), a);
  SetIfAbsent(spec, "securityContext", json::Value(rapidjson::kObjectType), a);
  SetIfAbsent(spec, "enableServiceLinks", json::Value(true), a);
  for (std::string_view list : {"containers", "initContainers"}) {
    if (json::Value* cs = json::Find(spec, list); cs && cs->IsArray()) {
      for (auto& c : cs->GetArray()) DefaultContainer(c, a);
    }
  }
}

void DefaultPod(json::Document& pod) {
  auto& a = pod.GetAllocator();
  json::Value& spec = json::Child(pod, "spec", a);
  DefaultPodSpec(spec, a);
  AddTolerationIfAbsent(spec, "node.kubernetes.io/not-ready", a);
  AddTolerationIfAbsent(spec, "node.kubernetes.io/unreachable", a);
  json::Value& status = json::Child(pod, "status", a);
  SetIfAbsent(status, "phase", Str("Pending", a), a);
}

namespace {

// The Priority admission plugin over an object's spec: a pod's, or a scheduling.k8s.io PodGroup's
// (KEP-5710, which has no preemption policy). `resource` names the object in messages ("pods").
std::optional<Error> AdmitPriority(json::Document& pod, const ObjectReader& reader, std::string_view resource,
                                   bool with_policy) {
  auto& a = pod.GetAllocator();
  json::Value& spec = json::Child(pod, "spec", a);
  const std::string class_name(json::GetString(spec, "priorityClassName"));
  ObjectPtr pc;
  if (!class_name.empty()) {
    pc = reader.Get("scheduling.k8s.io", "priorityclasses", "", class_name);
    if (!pc) {
      return Error{Error::Reason::kForbidden,
                   fmt::format("{} \"{}\" is forbidden: no PriorityClass with name {} was found", resource,
                               json::GetString(*json::Find(pod, "metadata"), "name"), class_name),
                   {}};
    }
  } else {
    for (const ObjectPtr& o : reader.List("scheduling.k8s.io", "priorityclasses", "")) {
      // The store's compact JSON says `"globalDefault":true` wherever a member is true (a string
      // holding those characters has its quotes escaped): only such a class needs parsing.
      if (o->json.find("\"globalDefault\":true") == std::string::npos) continue;
      json::Document d;
      if (json::Parse(o->json, d) && json::Find(d, "globalDefault") && json::Find(d, "globalDefault")->IsTrue()) {
        pc = o;
        break;
      }
    }
  }
  int64_t value = 0;
  std::string policy = "PreemptLowerPriority";
  if (pc) {
    json::Document d;
    (void)json::Parse(pc->json, d);
    if (const json::Value* v = json::Find(d, "value"); v && v->IsInt64()) value = v->GetInt64();
    if (std::string_view p = json::GetString(d, "preemptionPolicy"); !p.empty()) policy = p;
    if (class_name.empty()) json::Set(spec, "priorityClassName", Str(pc->name, a), a);
  }
  if (const json::Value* given = json::Find(spec, "priority"); given && !given->IsNull()) {
    if (!given->IsInt64() || given->GetInt64() != value) {
      return Error{Error::Reason::kForbidden,
                   fmt::format("{} \"{}\" is forbidden: the integer value of priority ({}) must not be provided in "
                               "{} spec; priority admission controller computed {} from the given PriorityClass name",
                               resource, json::GetString(*json::Find(pod, "metadata"), "name"), json::Encode(*given),
                               resource == "pods" ? "pod" : "podgroup", value),
                   {}};
    }
  }
  json::Set(spec, "priority", json::Value(value), a);
  if (with_policy) SetIfAbsent(spec, "preemptionPolicy", Str(policy, a), a);
  return std::nullopt;
}

}  // namespace

std::optional<Error> AdmitPodPriority(json::Document& pod, const ObjectReader& reader) {
  return AdmitPriority(pod, reader, "pods", true);
}

std::optional<Error> AdmitPodGroupPriority(json::Document& group, const ObjectReader& reader) {
  return AdmitPriority(group, reader, "podgroups", false);
}

const std::vector<std::string> kPodFieldSelectors = {
    "spec.nodeName",           "spec.schedulerName", "status.phase",       "status.nominatedNodeName",
    "spec.serviceAccountName", "spec.hostNetwork",   "spec.restartPolicy", "status.podIP"};

void PodFields(const json::Value& pod, FieldPairs& out) {
  const json::Value* spec = json::Find(pod, "spec");
  const json::Value* status = json::Find(pod, "status");
  auto field = [](const json::Value* parent, std::string_view key) {
    return parent ? Scalar(json::Find(*parent, key)) : std::string();
  };
  out.emplace_back("spec.nodeName", field(spec, "nodeName"));
  out.emplace_back("spec.schedulerName", field(spec, "schedulerName"));
  out.emplace_back("status.phase", field(status, "phase"));
  out.emplace_back("status.nominatedNodeName", field(status, "nominatedNodeName"));
  out.emplace_back("spec.serviceAccountName", field(spec, "serviceAccountName"));
  // pod.ToSelectableFields: hostNetwork is "true" or "false", never empty.
  std::string host_network = field(spec, "hostNetwork");
  out.emplace_back("spec.hostNetwork", host_network == "true" ? "true" : "false");
  out.emplace_back("spec.restartPolicy", field(spec, "restartPolicy"));
  out.emplace_back("status.podIP", field(status, "podIP"));
}

void DefaultNamespace(json::Document& ns) {
  auto& a = ns.GetAllocator();
  json::Value& meta = json::Child(ns, "metadata", a);
  const std::string name(json::GetString(meta, "name"));
  json::Set(json::Child(meta, "labels", a), api::kLabelMetadataName, Str(name, a), a);
  json::Value& spec = json::Child(ns, "spec", a);
  if (json::Find(spec, "finalizers") == nullptr) {
    json::Value f(rapidjson::kArrayType);
    f.PushBack(Str("kubernetes", a), a);
    json::Set(spec, "finalizers", std::move(f), a);
  }
  SetIfAbsent(json::Child(ns, "status", a), "phase", Str("Active", a), a);
}

void DefaultNode(json::Document& node) {
  auto& a = node.GetAllocator();
  json::Value& status = json::Child(node, "status", a);
  // NodeSystemInfo's fields and the kubelet endpoint's port have no omitempty upstream: every
  // Node it serves carries them, and clients (the official Python one) require them.
  json::Value& info = json::Child(status, "nodeInfo", a);
  for (std::string_view key :
       {"machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion", "kubeletVersion",
        "kubeProxyVersion", "operatingSystem", "architecture"}) {
    SetIfAbsent(info, key, Str("", a), a);
  }
  json::Value& endpoint = json::Child(json::Child(status, "daemonEndpoints", a), "kubeletEndpoint", a);
  SetIfAbsent(endpoint, "Port", json::Value(0), a);
}

void NodeFields(const json::Value& node, FieldPairs& out) {
  const json::Value* v = Path(node, {"spec", "unschedulable"});
  out.emplace_back("spec.unschedulable", v && v->IsTrue() ? "true" : "false");
}

const std::vector<std::string> kEventFieldSelectors = {"involvedObject.kind",
                                                       "involvedObject.namespace",
                                                       "involvedObject.name",
                                                       "involvedObject.uid",
                                                       "involvedObject.apiVersion",
                                                       "involvedObject.resourceVersion",
                                                       "involvedObject.fieldPath",
                                                       "reason",
                                                       "reportingComponent",
                                                       "source",
                                                       "type"};

void EventFields(const json::Value& event, FieldPairs& out) {
  const json::Value* io = json::Find(event, "involvedObject");
  for (std::string_view k : {"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"}) {
    out.emplace_back(fmt::format("involvedObject.{}", k), io ? Scalar(json::Find(*io, k)) : "");
  }
  out.emplace_back("reason", Scalar(json::Find(event, "reason")));
  out.emplace_back("reportingComponent", Scalar(json::Find(event, "reportingComponent")));
  out.emplace_back("source", Scalar(Path(event, {"source", "component"})));
  out.emplace_back("type", Scalar(json::Find(event, "type")));
}

void DefaultDeployment(json::Document& d) {
  DefaultTemplate(d);
  auto& a = d.GetAllocator();
  json::Value& spec = json::Child(d, "spec", a);
  SetIfAbsent(spec, "revisionHistoryLimit", json::Value(10), a);
  SetIfAbsent(spec, "progressDeadlineSeconds", json::Value(600), a);
  json::Value& strategy = json::Child(spec, "strategy", a);
  SetIfAbsent(strategy, "type", Str("RollingUpdate", a), a);
  if (json::GetString(strategy, "type") == "RollingUpdate") {
    json::Value& ru = json::Child(strategy, "rollingUpdate", a);
    SetIfAbsent(ru, "maxUnavailable", Str("25%", a), a);
    SetIfAbsent(ru, "maxSurge", Str("25%", a), a);
  }
}

void DefaultReplicaSet(json::Document& rs) { DefaultTemplate(rs); }

void DefaultReplicationController(json::Document& rc) {
  DefaultTemplate(rc);
  auto& a = rc.GetAllocator();
  json::Value& spec = json::Child(rc, "spec", a);
  // SetDefaults_ReplicationController: selector and labels from the template's labels.
  if (const json::Value* sel = json::Find(spec, "selector");
      sel == nullptr || !sel->IsObject() || sel->MemberCount() == 0) {
    json::Set(spec, "selector", TemplateLabels(rc), a);
  }
  json::Value& meta = json::Child(rc, "metadata", a);
  if (const json::Value* l = json::Find(meta, "labels"); l == nullptr || !l->IsObject() || l->MemberCount() == 0) {
    json::Set(meta, "labels", TemplateLabels(rc), a);
  }
}

void DefaultStatefulSet(json::Document& sts) {
  DefaultTemplate(sts);
  auto& a = sts.GetAllocator();
  json::Value& spec = json::Child(sts, "spec", a);
  SetIfAbsent(spec, "podManagementPolicy", Str("OrderedReady", a), a);
  SetIfAbsent(spec, "revisionHistoryLimit", json::Value(10), a);
  json::Value& strategy = json::Child(spec, "updateStrategy", a);
  SetIfAbsent(strategy, "type", Str("RollingUpdate", a), a);
  if (json::GetString(strategy, "type") == "RollingUpdate") {
    SetIfAbsent(json::Child(strategy, "rollingUpdate", a), "partition", json::Value(0), a);
  }
  json::Value& retention = json::Child(spec, "persistentVolumeClaimRetentionPolicy", a);
  SetIfAbsent(retention, "whenDeleted", Str("Retain", a), a);
  SetIfAbsent(retention, "whenScaled", Str("Retain", a), a);
}

void DefaultDaemonSet(json::Document& ds) {
  DefaultTemplate(ds, /*replicas=*/false);
  auto& a = ds.GetAllocator();
  json::Value& spec = json::Child(ds, "spec", a);
  SetIfAbsent(spec, "revisionHistoryLimit", json::Value(10), a);
  json::Value& strategy = json::Child(spec, "updateStrategy", a);
  SetIfAbsent(strategy, "type", Str("RollingUpdate", a), a);
  if (json::GetString(strategy, "type") == "RollingUpdate") {
    json::Value& ru = json::Child(strategy, "rollingUpdate", a);
    SetIfAbsent(ru, "maxUnavailable", json::Value(1), a);
    SetIfAbsent(ru, "maxSurge", json::Value(0), a);
  }
}

void DefaultJob(json::Document& job) {
  DefaultTemplate(job, /*replicas=*/false);
  auto& a = job.GetAllocator();
  json::Value& spec = json::Child(job, "spec", a);
  // SetDefaults_Job: both counts 1 when neither is given; parallelism 1 when only it is missing.
  if (json::Find(spec, "completions") == nullptr && json::Find(spec, "parallelism") == nullptr) {
    json::Set(spec, "completions", json::Value(1), a);
  }
  SetIfAbsent(spec, "parallelism", json::Value(1), a);
  SetIfAbsent(spec, "backoffLimit", json::Value(6), a);
  SetIfAbsent(spec, "completionMode", Str("NonIndexed", a), a);
  SetIfAbsent(spec, "suspend", json::Value(false), a);
  if (json::Find(spec, "podFailurePolicy") == nullptr) {
    SetIfAbsent(spec, "podReplacementPolicy", Str("TerminatingOrFailed", a), a);
  }
  // The Job strategy's generateSelector (without manualSelector): the selector is the Job's uid,
  // and the template carries it with the job-name labels, in the old and batch.kubernetes.io forms.
  const json::Value* manual = json::Find(spec, "manualSelector");
  if (manual && manual->IsTrue()) return;
  const json::Value& meta = *json::Find(job, "metadata");
  const std::string uid(json::GetString(meta, "uid"));
  const std::string name(json::GetString(meta, "name"));
  json::Value& labels = json::Child(json::Child(json::Child(spec, "template", a), "metadata", a), "labels", a);
  for (auto [key, value] : {std::pair{api::kLabelControllerUID, std::string_view(uid)},
                            std::pair{api::kLabelBatchControllerUID, std::string_view(uid)},
                            std::pair{api::kLabelJobName, std::string_view(name)},
                            std::pair{api::kLabelBatchJobName, std::string_view(name)}}) {
    json::Set(labels, key, Str(value, a), a);
  }
  if (json::Find(spec, "selector") == nullptr) {
    json::Value selector(rapidjson::kObjectType);
    json::Set(json::Child(selector, "matchLabels", a), api::kLabelBatchControllerUID, Str(uid, a), a);
    json::Set(spec, "selector", std::move(selector), a);
  }
}

std::vector<Cause> ValidateWorkload(const json::Value& w, const Object* /*old*/) {
  std::vector<Cause> causes;
  const json::Value* selector = Path(w, {"spec", "selector"});
  if (selector == nullptr || !selector->IsObject() || selector->MemberCount() == 0) {
    causes.push_back(RequiredCause("spec.selector"));
    return causes;
  }
  auto sel = LabelSelectorFromJson(selector);
  if (!sel) {
    causes.push_back(InvalidCause("spec.selector", json::Encode(*selector), sel.error().message));
    return causes;
  }
  if (sel->Empty()) {
    causes.push_back(
        InvalidCause("spec.selector", json::Encode(*selector), "empty selector is invalid for deployment"));
  }
  LabelPairs labels;
  if (const json::Value* l = Path(w, {"spec", "template", "metadata", "labels"}); l && l->IsObject()) {
    for (const auto& m : l->GetObject()) labels.emplace_back(json::View(m.name), json::View(m.value));
  }
  std::sort(labels.begin(), labels.end());
  if (!sel->Matches(labels)) {
    std::string shown;
    for (const auto& [k, v] : labels) shown += (shown.empty() ? "" : ",") + k + "=" + v;
    causes.push_back(InvalidCause("spec.template.metadata.labels", fmt::format("map[{}]", shown),
                                  "`selector` does not match template `labels`"));
  }
  if (const json::Value* r = Path(w, {"spec", "replicas"}); r && (!r->IsInt64() || r->GetInt64() < 0)) {
    causes.push_back(InvalidCause("spec.replicas", json::Encode(*r), "must be greater than or equal to 0"));
  }
  return causes;
}

std::vector<Cause> ValidatePlainSelectorWorkload(const json::Value& w, const Object* /*old*/) {
  std::vector<Cause> causes;
  const json::Value* selector = Path(w, {"spec", "selector"});
  if (selector == nullptr || !selector->IsObject() || selector->MemberCount() == 0) {
    causes.push_back(RequiredCause("spec.selector"));
    return causes;
  }
  const json::Value* labels = Path(w, {"spec", "template", "metadata", "labels"});
  for (const auto& m : selector->GetObject()) {
    const json::Value* have = labels ? json::Find(*labels, json::View(m.name)) : nullptr;
    if (!m.value.IsString() || have == nullptr || *have != m.value) {
      causes.push_back(InvalidCause("spec.template.metadata.labels", labels ? json::Encode(*labels) : "null",
                                    "`selector` does not match template `labels`"));
      break;
    }
  }
  if (const json::Value* r = Path(w, {"spec", "replicas"}); r && (!r->IsInt64() || r->GetInt64() < 0)) {
    causes.push_back(InvalidCause("spec.replicas", json::Encode(*r), "must be greater than or equal to 0"));
  }
  return causes;
}

std::vector<Cause> ValidateJob(const json::Value& job, const Object* old) {
  std::vector<Cause> causes = ValidateWorkload(job, old);
  const std::string_view restart = [&] {
    const json::Value* v = Path(job, {"spec", "template", "spec", "restartPolicy"});
    return v ? json::View(*v) : std::string_view();
  }();
  if (restart != "OnFailure" && restart != "Never") {
    causes.push_back(
        Cause{"FieldValueNotSupported",
              fmt::format("Unsupported value: \"{}\": supported values: \"OnFailure\", \"Never\"", restart),
              "spec.template.spec.restartPolicy"});
  }
  for (std::string_view key : {"parallelism", "completions", "backoffLimit"}) {
    if (const json::Value* v = Path(job, {"spec", key}); v && !v->IsNull() && (!v->IsInt64() || v->GetInt64() < 0)) {
      causes.push_back(
          InvalidCause(fmt::format("spec.{}", key), json::Encode(*v), "must be greater than or equal to 0"));
    }
  }
  const json::Value* mode = Path(job, {"spec", "completionMode"});
  const json::Value* completions = Path(job, {"spec", "completions"});
  if (mode && json::View(*mode) == "Indexed" && (completions == nullptr || completions->IsNull())) {
    causes.push_back(RequiredCause("spec.completions", "when completion mode is Indexed"));
  }
  return causes;
}

std::vector<Cause> ValidatePriorityClass(const json::Value& pc, const Object* old) {
  std::vector<Cause> causes;
  const json::Value* v = json::Find(pc, "value");
  if (v == nullptr || !v->IsInt()) {
    causes.push_back(RequiredCause("value"));
    return causes;
  }
  const std::string_view name = json::GetString(*json::Find(pc, "metadata"), "name");
  if (v->GetInt() > api::kHighestUserDefinablePriority && !name.starts_with("system-")) {
    causes.push_back(InvalidCause(
        "value", std::to_string(v->GetInt()),
        fmt::format("maximum allowed value of a user defined priority is {}", api::kHighestUserDefinablePriority)));
  }
  if (old) {
    json::Document before;
    (void)json::Parse(old->json, before);
    if (const json::Value* ov = json::Find(before, "value"); ov && *ov != *v) {
      causes.push_back(ForbiddenCause("value", "may not be changed in an update."));
    }
  }
  return causes;
}

}  // namespace kubesched::store

// --- Services ----------------------------------------------------------------------------------

namespace kubesched::store {
namespace {

bool AllocatesNodePorts(std::string_view type) { return type == "NodePort" || type == "LoadBalancer"; }

// 10.96.0.0/12, as kube-apiserver's default --service-cluster-ip-range.
constexpr uint32_t kServiceRangeBase = (10u << 24) | (96u << 16);
constexpr uint32_t kServiceRangeSize = 1u << 20;
constexpr int64_t kNodePortMin = 30000;
constexpr int64_t kNodePortMax = 32767;

std::optional<uint32_t> ParseIPv4(std::string_view text) {
  uint32_t out = 0;
  int parts = 0;
  while (parts < 4) {
    size_t dot = text.find('.');
    std::string_view part = text.substr(0, dot);
    if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    const int v = std::stoi(std::string(part));
    if (v > 255 || (part.size() > 1 && part[0] == '0')) return std::nullopt;
    out = (out << 8) | static_cast<uint32_t>(v);
    ++parts;
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  if (parts != 4 || text.find('.') != std::string_view::npos) return std::nullopt;
  return out;
}

std::string FormatIPv4(uint32_t ip) {
  return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

Error InvalidService(const json::Value& service, std::string field, std::string value, std::string detail) {
  const std::string name(json::GetString(*json::Find(service, "metadata"), "name"));
  std::string message = fmt::format("Invalid value: {}: {}", value, detail);
  Error e{Error::Reason::kInvalid, fmt::format("Service \"{}\" is invalid: {}: {}", name, field, message), {}};
  e.causes.push_back(Cause{"FieldValueInvalid", std::move(message), std::move(field)});
  return e;
}

}  // namespace

void DefaultService(json::Document& service) {
  auto& a = service.GetAllocator();
  json::Value& spec = json::Child(service, "spec", a);
  SetIfAbsent(spec, "type", Str("ClusterIP", a), a);
  const std::string type(json::GetString(spec, "type"));
  SetIfAbsent(spec, "sessionAffinity", Str("None", a), a);
  if (json::GetString(spec, "sessionAffinity") == "ClientIP") {
    json::Value& client_ip = json::Child(json::Child(spec, "sessionAffinityConfig", a), "clientIP", a);
    SetIfAbsent(client_ip, "timeoutSeconds", json::Value(10800), a);
  }
  if (json::Value* ports = json::Find(spec, "ports"); ports != nullptr && ports->IsArray()) {
    for (json::Value& port : ports->GetArray()) {
      if (!port.IsObject()) continue;
      SetIfAbsent(port, "protocol", Str("TCP", a), a);
      const json::Value* target = json::Find(port, "targetPort");
      const bool unset = target == nullptr || (target->IsInt64() && target->GetInt64() == 0) ||
                         (target->IsString() && target->GetStringLength() == 0);
      if (unset) {
        if (const json::Value* number = json::Find(port, "port"); number != nullptr && number->IsInt64()) {
          json::Set(port, "targetPort", json::Value(number->GetInt64()), a);
        }
      }
    }
  }
  if (type != "ExternalName") SetIfAbsent(spec, "internalTrafficPolicy", Str("Cluster", a), a);
  if (AllocatesNodePorts(type)) SetIfAbsent(spec, "externalTrafficPolicy", Str("Cluster", a), a);
  if (type == "LoadBalancer") SetIfAbsent(spec, "allocateLoadBalancerNodePorts", json::Value(true), a);
}

void KeepAllocatedServiceValues(json::Document& service, const json::Value& old) {
  auto& a = service.GetAllocator();
  const json::Value* old_spec = json::Find(old, "spec");
  json::Value* spec = json::Find(service, "spec");
  if (old_spec == nullptr || spec == nullptr || !spec->IsObject()) return;
  const std::string_view type = json::GetString(*spec, "type");
  const std::string_view old_type = json::GetString(*old_spec, "type");
  if (type != "ExternalName" && old_type != "ExternalName" && json::GetString(*spec, "clusterIP").empty()) {
    for (const char* field : {"clusterIP", "clusterIPs"}) {
      if (const json::Value* v = json::Find(*old_spec, field)) json::Set(*spec, field, json::Value(*v, a), a);
    }
  }
  // Node ports: a port that names none keeps the one the same port and protocol had.
  const bool wants_node_ports = type == "NodePort" || type == "LoadBalancer";
  json::Value* ports = json::Find(*spec, "ports");
  const json::Value* old_ports = json::Find(*old_spec, "ports");
  if (!wants_node_ports || ports == nullptr || !ports->IsArray() || old_ports == nullptr || !old_ports->IsArray()) {
    return;
  }
  for (json::Value& port : ports->GetArray()) {
    if (!port.IsObject() || json::Find(port, "nodePort") != nullptr) continue;
    const json::Value* number = json::Find(port, "port");
    if (number == nullptr || !number->IsInt64()) continue;
    std::string_view protocol = json::GetString(port, "protocol");
    if (protocol.empty()) protocol = "TCP";
    for (const json::Value& was : old_ports->GetArray()) {
      const json::Value* was_number = json::Find(was, "port");
      std::string_view was_protocol = json::GetString(was, "protocol");
      if (was_protocol.empty()) was_protocol = "TCP";
      const json::Value* node_port = json::Find(was, "nodePort");
      if (was_number != nullptr && was_number->IsInt64() && was_number->GetInt64() == number->GetInt64() &&
          was_protocol == protocol && node_port != nullptr) {
        json::Set(port, "nodePort", json::Value(*node_port, a), a);
        break;
      }
    }
  }
}

std::optional<Error> AdmitService(json::Document& service, const ObjectReader& reader) {
  auto& a = service.GetAllocator();
  json::Value& spec = json::Child(service, "spec", a);
  const std::string type(json::GetString(spec, "type"));
  // What the other Services hold.
  std::unordered_set<uint32_t> taken_ips;
  std::unordered_set<int64_t> taken_ports;
  for (const ObjectPtr& other : reader.List("", "services", "")) {
    json::Document d;
    if (!json::Parse(other->json, d) || !d.IsObject()) continue;
    const json::Value* other_spec = json::Find(d, "spec");
    if (other_spec == nullptr) continue;
    if (auto ip = ParseIPv4(json::GetString(*other_spec, "clusterIP"))) taken_ips.insert(*ip);
    if (const json::Value* ports = json::Find(*other_spec, "ports"); ports != nullptr && ports->IsArray()) {
      for (const json::Value& port : ports->GetArray()) {
        if (const json::Value* n = json::Find(port, "nodePort"); n != nullptr && n->IsInt64()) {
          taken_ports.insert(n->GetInt64());
        }
      }
    }
  }
  if (type != "ExternalName") {
    std::string ip(json::GetString(spec, "clusterIP"));
    if (ip.empty()) {
      for (uint32_t offset = 2; offset + 1 < kServiceRangeSize; ++offset) {
        if (!taken_ips.contains(kServiceRangeBase + offset)) {
          ip = FormatIPv4(kServiceRangeBase + offset);
          break;
        }
      }
      if (ip.empty()) {
        return Error{Error::Reason::kInternal, "failed to allocate a serviceIP: range is full", {}};
      }
      json::Set(spec, "clusterIP", Str(ip, a), a);
    } else if (ip != "None") {
      const auto parsed = ParseIPv4(ip);
      if (!parsed || *parsed < kServiceRangeBase || *parsed >= kServiceRangeBase + kServiceRangeSize) {
        return InvalidService(service, "spec.clusterIPs", fmt::format("[]string{{\"{}\"}}", ip),
                              fmt::format("failed to allocate IP {}: the provided IP ({}) is not in the valid range. "
                                          "The range of valid IPs is 10.96.0.0/12",
                                          ip, ip));
      }
      if (taken_ips.contains(*parsed)) {
        return InvalidService(service, "spec.clusterIPs", fmt::format("[]string{{\"{}\"}}", ip),
                              fmt::format("failed to allocate IP {}: provided IP is already allocated", ip));
      }
    }
    if (json::Find(spec, "clusterIPs") == nullptr) {
      json::Value ips(rapidjson::kArrayType);
      ips.PushBack(Str(ip, a), a);
      json::Set(spec, "clusterIPs", std::move(ips), a);
    }
    if (json::Find(spec, "ipFamilies") == nullptr) {
      json::Value families(rapidjson::kArrayType);
      families.PushBack(Str("IPv4", a), a);
      json::Set(spec, "ipFamilies", std::move(families), a);
    }
    SetIfAbsent(spec, "ipFamilyPolicy", Str("SingleStack", a), a);
  }
  const json::Value* allocate = json::Find(spec, "allocateLoadBalancerNodePorts");
  const bool node_ports =
      type == "NodePort" || (type == "LoadBalancer" && (allocate == nullptr || !allocate->IsFalse()));
  json::Value* ports = json::Find(spec, "ports");
  if (ports == nullptr || !ports->IsArray()) return std::nullopt;
  // The node ports given first (as the registry does), then one for each port that names none.
  for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
    const json::Value* given = (*ports)[i].IsObject() ? json::Find((*ports)[i], "nodePort") : nullptr;
    if (given == nullptr || !given->IsInt64() || given->GetInt64() == 0) continue;
    const int64_t n = given->GetInt64();
    const std::string field = fmt::format("spec.ports[{}].nodePort", i);
    if (n < kNodePortMin || n > kNodePortMax) {
      return InvalidService(service, field, std::to_string(n),
                            "provided port is not in the valid range. The range of valid ports is 30000-32767");
    }
    if (!taken_ports.insert(n).second) {
      return InvalidService(service, field, std::to_string(n), "provided port is already allocated");
    }
  }
  if (!node_ports) return std::nullopt;
  int64_t next = kNodePortMin;
  for (json::Value& port : ports->GetArray()) {
    if (!port.IsObject()) continue;
    const json::Value* given = json::Find(port, "nodePort");
    if (given != nullptr && given->IsInt64() && given->GetInt64() != 0) continue;
    while (next <= kNodePortMax && taken_ports.contains(next)) ++next;
    if (next > kNodePortMax) return Error{Error::Reason::kInternal, "failed to allocate a nodePort: range is full", {}};
    json::Set(port, "nodePort", json::Value(next), a);
    taken_ports.insert(next);
  }
  return std::nullopt;
}

}  // namespace kubesched::store
