#include "server/scenario.h"

#include <libfyaml.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "api/manifest.h"
#include "api/resource_types.h"
#include "api/storage_types.h"
#include "api/time_format.h"
#include "api/types.h"
#include "api/yaml.h"

namespace kubesched::server {
namespace {

namespace json = api::json;

// The ConfigMap `kubesched run --record-plugin-results` publishes (cmd/plugin_results_publisher.h).
constexpr std::string_view kConfigNamespace = "kube-system";
constexpr std::string_view kConfigName = "kubesched-scheduler-config";

// ---- YAML ----

// Whether `s`, written plain, reads back as the same string: a conservative character set (no
// indicator may start it, no ": " or " #" inside, no quotes or flow characters), and go-yaml v2's
// resolution (api::yaml::ResolvePlain) gives a string ("1", "true", "yes", "0644" and "~" do not).
bool PlainSafe(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) && s.front() != '.' && s.front() != '/' && s.front() != '_') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (alnum(c) || c == '.' || c == '_' || c == '/' || c == '-' || c == '=' || c == '+' || c == '@') continue;
    if ((c == ':' || c == ' ') && i + 1 < s.size() && s[i + 1] != ' ' && s[i + 1] != ':') continue;
    return false;
  }
  json::Document scratch;
  const json::Value resolved = api::yaml::ResolvePlain(s, scratch.GetAllocator());
  return resolved.IsString() && json::View(resolved) == s;
}

struct FyDocumentDeleter {
  void operator()(fy_document* d) const { fy_document_destroy(d); }
};

fy_node* FyString(fy_document* d, std::string_view s) {
  if (PlainSafe(s)) return fy_node_create_scalar_copy(d, s.data(), s.size());
  // JSON's string escapes are YAML's double-quoted ones. The node points into its source text,
  // which the document frees with it (a malloc'ed copy).
  json::Value v(rapidjson::StringRef(s.data(), s.size()));
  const std::string quoted = json::Encode(v);
  char* text = static_cast<char*>(std::malloc(quoted.size()));
  if (text == nullptr) return nullptr;
  std::memcpy(text, quoted.data(), quoted.size());
  fy_node* node = fy_node_build_from_malloc_string(d, text, quoted.size());
  if (node == nullptr) std::free(text);
  return node;
}

fy_node* FyNode(fy_document* d, const json::Value& v) {
  if (v.IsString()) return FyString(d, json::View(v));
  if (v.IsObject()) {
    fy_node* m = fy_node_create_mapping(d);
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      fy_node_mapping_append(m, FyString(d, json::View(it->name)), FyNode(d, it->value));
    }
    return m;
  }
  if (v.IsArray()) {
    fy_node* s = fy_node_create_sequence(d);
    for (const json::Value& e : v.GetArray()) fy_node_sequence_append(s, FyNode(d, e));
    return s;
  }
  const std::string text = json::Encode(v);  // a number, true, false or null
  return fy_node_create_scalar_copy(d, text.data(), text.size());
}

// ---- reading the store ----

std::vector<json::Document> ListObjects(const store::Store& store, std::string_view group, std::string_view resource,
                                        std::string_view namespace_ = "") {
  std::vector<json::Document> out;
  const store::ResourceType* type = store.FindResource(group, resource);
  if (type == nullptr) return out;
  auto list = store.List(*type, namespace_, store::ListOptions{});
  if (!list) return out;
  for (const store::ObjectPtr& o : list->items) {
    json::Document doc;
    if (json::Parse(o->json.str(), doc) && doc.IsObject()) out.push_back(std::move(doc));
  }
  return out;
}

std::string_view MetaString(const json::Value& obj, std::string_view key) {
  const json::Value* meta = json::Find(obj, "metadata");
  return meta != nullptr ? json::GetString(*meta, key) : std::string_view();
}

bool ControllerOwned(const json::Value& obj) {
  const json::Value* meta = json::Find(obj, "metadata");
  const json::Value* refs = meta != nullptr ? json::Find(*meta, "ownerReferences") : nullptr;
  if (refs == nullptr || !refs->IsArray()) return false;
  for (const json::Value& r : refs->GetArray()) {
    const json::Value* controller = json::Find(r, "controller");
    if (controller != nullptr && controller->IsBool() && controller->GetBool()) return true;
  }
  return false;
}

// The published configuration: the profiles' scheduler names and the --config file's text.
struct SchedulerConfig {
  std::set<std::string, std::less<>> scheduler_names;
  std::string config_yaml;
};

SchedulerConfig ReadSchedulerConfig(const store::Store& store) {
  SchedulerConfig out;
  for (json::Document& cm : ListObjects(store, "", "configmaps", kConfigNamespace)) {
    if (MetaString(cm, "name") != kConfigName) continue;
    const json::Value* data = json::Find(cm, "data");
    if (data == nullptr) break;
    out.config_yaml = std::string(json::GetString(*data, "config.yaml"));
    json::Document profiles;
    const json::Value* list = nullptr;
    if (json::Parse(json::GetString(*data, "profiles.json"), profiles) && profiles.IsObject()) {
      list = json::Find(profiles, "profiles");
    }
    if (list != nullptr && list->IsArray()) {
      for (const json::Value& p : list->GetArray()) out.scheduler_names.emplace(json::GetString(p, "schedulerName"));
    }
  }
  if (out.scheduler_names.empty()) out.scheduler_names.emplace(api::kDefaultSchedulerName);
  return out;
}

// When the scheduler bound each pod, by uid: the Events with reason Scheduled (events.k8s.io's
// regarding and eventTime, or core's involvedObject and timestamps).
std::map<std::string, int64_t, std::less<>> ScheduledPods(const store::Store& store) {
  std::map<std::string, int64_t, std::less<>> out;
  for (std::string_view group : {"events.k8s.io", ""}) {
    for (const json::Document& e : ListObjects(store, group, "events")) {
      if (json::GetString(e, "reason") != "Scheduled") continue;
      const json::Value* about = json::Find(e, "regarding");
      if (about == nullptr) about = json::Find(e, "involvedObject");
      if (about == nullptr || json::GetString(*about, "uid").empty()) continue;
      std::optional<int64_t> at;
      for (std::string_view key : {"eventTime", "firstTimestamp", "lastTimestamp"}) {
        if (!at) at = api::ParseRFC3339(json::GetString(e, key));
      }
      const int64_t t = at.value_or(std::numeric_limits<int64_t>::max());
      auto [it, added] = out.emplace(std::string(json::GetString(*about, "uid")), t);
      if (!added) it->second = std::min(it->second, t);
    }
  }
  return out;
}

// ---- cleaning ----

// Annotations the server, the controllers or the scheduler wrote, not the user.
bool ServerAnnotation(std::string_view key) {
  return key == "kubectl.kubernetes.io/last-applied-configuration" || key.starts_with("scheduler.kubesched.io/") ||
         key.starts_with("deployment.kubernetes.io/") || key == "deprecated.daemonset.template.generation" ||
         // The volume binding the PV controller and the scheduler did: simulate does it again.
         key == api::kAnnotationBindCompleted || key == api::kAnnotationBoundByController ||
         key == api::kAnnotationSelectedNode || key == api::kAnnotationStorageProvisioner ||
         key == api::kAnnotationBetaStorageProvisioner;
}

bool BoundByController(const json::Value& obj) {
  const json::Value* meta = json::Find(obj, "metadata");
  const json::Value* annotations = meta != nullptr ? json::Find(*meta, "annotations") : nullptr;
  return annotations != nullptr && json::GetString(*annotations, api::kAnnotationBoundByController) == "yes";
}

// The object with only name, namespace, labels and annotations in its metadata (labels in
// `drop_labels` left out), and without status.
json::Document Cleaned(const json::Value& obj, std::initializer_list<std::string_view> drop_labels = {}) {
  json::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    const std::string_view key = json::View(it->name);
    if (key == "status") continue;
    if (key != "metadata") {
      json::Set(out, key, json::Value(it->value, a), a);
      continue;
    }
    json::Value meta(rapidjson::kObjectType);
    for (std::string_view k : {"name", "namespace", "labels", "annotations"}) {
      const json::Value* v = json::Find(it->value, k);
      if (v == nullptr || (v->IsObject() && v->MemberCount() == 0)) continue;
      json::Value copy(rapidjson::kObjectType);
      if (v->IsObject()) {
        for (auto m = v->MemberBegin(); m != v->MemberEnd(); ++m) {
          const std::string_view name = json::View(m->name);
          if (k == "annotations" && ServerAnnotation(name)) continue;
          if (k == "labels" && std::find(drop_labels.begin(), drop_labels.end(), name) != drop_labels.end()) continue;
          json::Set(copy, name, json::Value(m->value, a), a);
        }
        if (copy.MemberCount() == 0) continue;
      } else {
        copy.CopyFrom(*v, a);
      }
      json::Set(meta, k, std::move(copy), a);
    }
    json::Set(out, "metadata", std::move(meta), a);
  }
  return out;
}

// A workload's pod template without what the server set: its creationTimestamp, and a Job's
// generated selector and the labels that go with it (a Job given them back is refused, as
// upstream refuses a selector that was not generated without manualSelector).
json::Document CleanedWorkload(const json::Value& obj) {
  const bool job = json::GetString(obj, "kind") == "Job";
  const std::initializer_list<std::string_view> kJobLabels = {"controller-uid", "batch.kubernetes.io/controller-uid",
                                                              "job-name", "batch.kubernetes.io/job-name"};
  json::Document out = Cleaned(obj, job ? kJobLabels : std::initializer_list<std::string_view>{});
  json::Value* spec = json::Find(out, "spec");
  if (spec == nullptr || !spec->IsObject()) return out;
  json::Value* templ = json::Find(*spec, "template");
  if (json::Value* meta = templ != nullptr ? json::Find(*templ, "metadata") : nullptr; meta != nullptr) {
    json::Remove(*meta, "creationTimestamp");
    json::Value* labels = json::Find(*meta, "labels");
    if (job && labels != nullptr && labels->IsObject()) {
      for (std::string_view k : kJobLabels) json::Remove(*labels, k);
    }
  }
  const json::Value* manual = json::Find(*spec, "manualSelector");
  if (job && !(manual != nullptr && manual->IsBool() && manual->GetBool())) json::Remove(*spec, "selector");
  return out;
}

// A Node as the scheduler sees it: metadata, taints, unschedulable, capacity and allocatable.
json::Document CleanedNode(const json::Value& obj) {
  json::Document out = Cleaned(obj);
  auto& a = out.GetAllocator();
  json::Value spec(rapidjson::kObjectType);
  if (const json::Value* s = json::Find(obj, "spec")) {
    for (std::string_view k : {"taints", "unschedulable"}) {
      if (const json::Value* v = json::Find(*s, k)) json::Set(spec, k, json::Value(*v, a), a);
    }
  }
  json::Remove(out, "spec");
  if (spec.MemberCount() > 0) json::Set(out, "spec", std::move(spec), a);
  json::Value status(rapidjson::kObjectType);
  if (const json::Value* s = json::Find(obj, "status")) {
    for (std::string_view k : {"capacity", "allocatable"}) {
      if (const json::Value* v = json::Find(*s, k)) json::Set(status, k, json::Value(*v, a), a);
    }
  }
  if (status.MemberCount() > 0) json::Set(out, "status", std::move(status), a);
  return out;
}

// A PersistentVolume or PersistentVolumeClaim without the binding the PV controller made (a
// user's pre-binding, without the bound-by-controller annotation, stays), so that simulate binds
// them again as the test bed did. Nullopt for a volume a provisioner made: simulate provisions it
// again.
std::optional<json::Document> CleanedVolumeObject(const json::Value& obj) {
  const bool volume = json::GetString(obj, "kind") == "PersistentVolume";
  if (volume) {
    const json::Value* meta = json::Find(obj, "metadata");
    const json::Value* annotations = meta != nullptr ? json::Find(*meta, "annotations") : nullptr;
    if (annotations != nullptr && json::Find(*annotations, api::kAnnotationProvisionedBy) != nullptr) {
      return std::nullopt;
    }
  }
  json::Document out = Cleaned(obj);
  if (json::Value* spec = json::Find(out, "spec"); spec != nullptr && BoundByController(obj)) {
    json::Remove(*spec, volume ? "claimRef" : "volumeName");
  }
  return out;
}

struct ScenarioPod {
  json::Document doc;
  int64_t created_ns = 0;
  int64_t scheduled_ns = std::numeric_limits<int64_t>::max();
  std::string key;  // namespace/name
};

// The pods no controller owns, cleaned, in creation order (then in the order the scheduler bound
// them: creationTimestamp has whole seconds), each with its create-after.
std::vector<ScenarioPod> Pods(const store::Store& store, const SchedulerConfig& config) {
  const auto scheduled = ScheduledPods(store);
  std::vector<ScenarioPod> pods;
  for (json::Document& p : ListObjects(store, "", "pods")) {
    const json::Value* meta = json::Find(p, "metadata");
    if (ControllerOwned(p) || meta == nullptr || json::Find(*meta, "deletionTimestamp") != nullptr) continue;
    ScenarioPod out;
    out.created_ns = api::ParseRFC3339(json::GetString(*meta, "creationTimestamp")).value_or(0);
    out.key = fmt::format("{}/{}", json::GetString(*meta, "namespace"), json::GetString(*meta, "name"));
    auto bound = scheduled.find(json::GetString(*meta, "uid"));
    const json::Value* spec = json::Find(p, "spec");
    const bool by_scheduler = bound != scheduled.end() && spec != nullptr &&
                              config.scheduler_names.contains(json::GetString(*spec, "schedulerName"));
    if (bound != scheduled.end()) out.scheduled_ns = bound->second;
    out.doc = Cleaned(p);
    if (json::Value* s = json::Find(out.doc, "spec"); s != nullptr && by_scheduler) json::Remove(*s, "nodeName");
    pods.push_back(std::move(out));
  }
  std::stable_sort(pods.begin(), pods.end(), [](const ScenarioPod& a, const ScenarioPod& b) {
    return std::tie(a.created_ns, a.scheduled_ns, a.key) < std::tie(b.created_ns, b.scheduled_ns, b.key);
  });
  for (ScenarioPod& p : pods) {
    auto& a = p.doc.GetAllocator();
    json::Value& meta = json::Child(p.doc, "metadata", a);
    json::Value* annotations = json::Find(meta, "annotations");
    if (annotations != nullptr) json::Remove(*annotations, api::kAnnotationCreateAfter);
    const int64_t after_s = (p.created_ns - pods.front().created_ns) / 1'000'000'000;
    if (after_s > 0) {
      json::Set(json::Child(meta, "annotations", a), api::kAnnotationCreateAfter,
                json::MakeString(fmt::format("{}s", after_s), a), a);
    } else if (annotations != nullptr && annotations->MemberCount() == 0) {
      json::Remove(meta, "annotations");
    }
  }
  return pods;
}

bool BuiltinNamespace(std::string_view name) {
  return name == "default" || name == "kube-system" || name == "kube-public" || name == "kube-node-lease";
}

constexpr std::string_view kHeader =
    "# A kubesched scenario: the objects of a `kubesched apiserver` test bed (saved from its web UI,\n"
    "# GET /ui/scenario) as manifests that `kubesched simulate` replays. Run it with:\n"
    "#\n"
    "#   kubesched simulate -f scenario.yaml\n"
    "#\n"
    "# Namespaces, PriorityClasses, Nodes and workloads first; then the pods no controller owns, in\n"
    "# the order they were created, each arriving (simulate.kubesched.io/create-after) as long after\n"
    "# the first one as it did in the test bed. Pods the scheduler placed are pending again (simulate\n"
    "# places them); pods created on a node keep spec.nodeName. The last document, when there is one,\n"
    "# is the configuration `kubesched run --config` scheduled with: simulate uses it unless given\n"
    "# --config.\n";

}  // namespace

std::string YamlDocument(const json::Value& value) {
  std::unique_ptr<fy_document, FyDocumentDeleter> d(fy_document_create(nullptr));
  if (!d) return "---\n";
  fy_document_set_root(d.get(), FyNode(d.get(), value));
  const auto flags =
      static_cast<fy_emitter_cfg_flags>(FYECF_MODE_BLOCK | FYECF_INDENT_2 | FYECF_WIDTH_INF | FYECF_DOC_START_MARK_ON);
  char* text = fy_emit_document_to_string(d.get(), flags);
  if (text == nullptr) return "---\n";
  std::string out(text);
  std::free(text);
  if (!out.ends_with('\n')) out += '\n';
  return out;
}

std::string BuildScenario(const store::Store& store) {
  std::string out(kHeader);
  const SchedulerConfig config = ReadSchedulerConfig(store);
  for (const json::Document& ns : ListObjects(store, "", "namespaces")) {
    if (BuiltinNamespace(MetaString(ns, "name"))) continue;
    out += YamlDocument(Cleaned(ns, {api::kLabelMetadataName}));
  }
  for (const json::Document& pc : ListObjects(store, "scheduling.k8s.io", "priorityclasses")) {
    if (MetaString(pc, "name").starts_with("system-")) continue;
    out += YamlDocument(Cleaned(pc));
  }
  // Classes before the objects that name them, nodes before what is published for them.
  for (auto [group, resource] :
       {std::pair{"storage.k8s.io", "storageclasses"}, std::pair{"storage.k8s.io", "csidrivers"},
        std::pair{api::kResourceApiGroup.data(), "deviceclasses"}}) {
    for (const json::Document& o : ListObjects(store, group, resource)) out += YamlDocument(Cleaned(o));
  }
  for (const json::Document& n : ListObjects(store, "", "nodes")) out += YamlDocument(CleanedNode(n));
  for (auto [group, resource] :
       {std::pair{"storage.k8s.io", "csinodes"}, std::pair{"storage.k8s.io", "csistoragecapacities"},
        std::pair{api::kResourceApiGroup.data(), "resourceslices"}}) {
    for (const json::Document& o : ListObjects(store, group, resource)) out += YamlDocument(Cleaned(o));
  }
  for (const char* resource : {"persistentvolumes", "persistentvolumeclaims"}) {
    for (const json::Document& o : ListObjects(store, "", resource)) {
      if (ControllerOwned(o)) continue;  // a pod's ephemeral volume: made again with the pod
      if (std::optional<json::Document> cleaned = CleanedVolumeObject(o)) out += YamlDocument(*cleaned);
    }
  }
  // Claims made from a template are owned by their pod and made again with it.
  for (auto [group, resource] :
       {std::pair{api::kResourceApiGroup.data(), "resourceclaimtemplates"},
        std::pair{api::kResourceApiGroup.data(), "resourceclaims"}, std::pair{"policy", "poddisruptionbudgets"},
        std::pair{"scheduling.k8s.io", "workloads"}, std::pair{"scheduling.k8s.io", "podgroups"},
        std::pair{"scheduling.x-k8s.io", "podgroups"}}) {
    for (const json::Document& o : ListObjects(store, group, resource)) {
      if (!ControllerOwned(o)) out += YamlDocument(Cleaned(o));
    }
  }
  for (auto [group, resource] :
       {std::pair{"apps", "deployments"}, std::pair{"apps", "replicasets"}, std::pair{"apps", "statefulsets"},
        std::pair{"apps", "daemonsets"}, std::pair{"batch", "jobs"}}) {
    for (const json::Document& w : ListObjects(store, group, resource)) {
      if (ControllerOwned(w)) continue;  // a Deployment's ReplicaSet, a CronJob's Job
      out += YamlDocument(CleanedWorkload(w));
    }
  }
  for (const ScenarioPod& p : Pods(store, config)) out += YamlDocument(p.doc);
  if (!config.config_yaml.empty()) {
    out += "---\n# The scheduler's configuration (kubesched run --config).\n";
    out += config.config_yaml;
    if (!out.ends_with('\n')) out += '\n';
  }
  return out;
}

}  // namespace kubesched::server
